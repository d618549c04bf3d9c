// Command maps exercises Go maps: insert, update, delete, lookup, growth,
// struct and string keys, iteration (printed in sorted order) and clear.
package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

type point struct{ x, y int }

func main() {
	m := map[string]int{}
	words := strings.Fields("the quick brown fox jumps over the lazy dog the end fox")
	for _, w := range words {
		m[w]++
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		fmt.Printf("%s=%d ", k, m[k])
	}
	fmt.Println()

	big := make(map[int]int)
	for i := 0; i < 30000; i++ {
		big[i*7919%100003] = i
	}
	for i := 0; i < 30000; i += 3 {
		delete(big, i*7919%100003)
	}
	sum := 0
	for k, v := range big {
		sum += k ^ v
	}
	v, ok := big[7919]
	_, ok2 := big[0]
	fmt.Printf("big: len=%d xorsum=%d big[7919]=%d,%v big[0] present=%v\n", len(big), sum, v, ok, ok2)

	pm := map[point]string{}
	for x := -3; x <= 3; x++ {
		for y := -3; y <= 3; y++ {
			if x*x+y*y <= 9 {
				pm[point{x, y}] = fmt.Sprintf("%d", x*y)
			}
		}
	}
	pts := slices.SortedFunc(maps.Keys(pm), func(a, b point) int {
		if a.x != b.x {
			return a.x - b.x
		}
		return a.y - b.y
	})
	fmt.Print("points in circle: ", len(pts), ":")
	for _, p := range pts[:10] {
		fmt.Printf(" (%d,%d)=%s", p.x, p.y, pm[p])
	}
	fmt.Println()

	fm := map[float64]int{0.5: 1, 1.5: 2, -2.25: 3}
	fkeys := slices.Sorted(maps.Keys(fm))
	fmt.Println("float keys:", fkeys, fm[1.5])

	nested := map[string]map[string]int{}
	for i, w := range words {
		if nested[w] == nil {
			nested[w] = map[string]int{}
		}
		if i+1 < len(words) {
			nested[w][words[i+1]]++
		}
	}
	fmt.Println("followers of 'the':", nested["the"])

	clone := maps.Clone(m)
	clear(m)
	fmt.Println("after clear:", len(m), "clone:", len(clone))
	fmt.Println(map[string]bool{"b": true, "a": false, "c": true})
}
