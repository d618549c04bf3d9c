// Command sortstr exercises sort, slices, strings, strconv and
// strings.Builder.
package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

type person struct {
	name string
	age  int
}

func main() {
	text := "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness"
	words := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' })
	sort.Strings(words)
	fmt.Println(strings.Join(slices.Compact(words), " "))

	ints := []int{5, -3, 99, 0, 42, 7, 7, -100, 12}
	sort.Sort(sort.Reverse(sort.IntSlice(ints)))
	fmt.Println(ints, sort.SearchInts([]int{1, 3, 5, 7}, 5))

	people := []person{{"alice", 30}, {"bob", 25}, {"carol", 30}, {"dave", 25}, {"eve", 35}}
	sort.SliceStable(people, func(i, j int) bool { return people[i].age < people[j].age })
	fmt.Println(people)
	slices.SortFunc(people, func(a, b person) int { return strings.Compare(b.name, a.name) })
	fmt.Println(people)

	// A large pseudo-random sort.
	r := uint32(1)
	big := make([]string, 5000)
	for i := range big {
		r = r*1664525 + 1013904223
		big[i] = strconv.FormatUint(uint64(r>>8), 36)
	}
	sort.Strings(big)
	fmt.Println(len(big), big[0], big[2500], big[4999], sort.StringsAreSorted(big))

	fmt.Println(strings.ToUpper("mixed Case ßtraße"), strings.ToLower("ÀÉÎ ABC"), strings.Title("go is fun"))
	fmt.Println(strings.Repeat("ab", 5), strings.Replace("aaaa", "a", "b", 2), strings.ReplaceAll("x-y-z", "-", "+"))
	fmt.Println(strings.Index("chicken", "ken"), strings.LastIndex("go gopher", "go"), strings.Contains("seafood", "foo"), strings.Count("cheese", "e"))
	fmt.Printf("%q\n", strings.Split("a,b,,c", ","))
	fmt.Printf("%q %q\n", strings.TrimSpace("  \t hi there \n"), strings.Trim("xxhixx", "x"))
	fmt.Println(strings.HasPrefix("prefix", "pre"), strings.HasSuffix("suffix", "fix"), strings.EqualFold("Go", "GO"))
	fmt.Println(strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) {
			return -1
		}
		return unicode.ToUpper(r)
	}, "a1b2c3 héllo"))

	var b strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "%d:%s;", i, strconv.Itoa(i*i))
	}
	fmt.Println(b.String(), b.Len())

	for _, s := range []string{"123", "-42", "0x1F", "9223372036854775808", "abc", " 1"} {
		v, err := strconv.Atoi(s)
		i64, err2 := strconv.ParseInt(s, 0, 64)
		fmt.Println(s, v, err != nil, i64, err2 != nil)
	}
	fmt.Println(strconv.FormatInt(-255, 16), strconv.FormatInt(255, 2), strconv.Quote("tab\there \"q\" ü"), strconv.QuoteToASCII("日本"))
	u, _ := strconv.ParseUint("18446744073709551615", 10, 64)
	bv, _ := strconv.ParseBool("true")
	fmt.Println(u, bv, strconv.AppendInt([]byte("n="), 77, 10))
	runes := []rune("héllo, 世界")
	slices.Reverse(runes)
	fmt.Println(string(runes), len("héllo, 世界"), len(runes))
}
