// gofp exercises the Go runtime and standard library paths that use SSE:
// math (Floor/Ceil/Trunc use ROUNDSD with SSE4.1), strconv float
// formatting and parsing, float32/float64/int conversions, NaN/Inf
// handling, bytes/strings search (SSE2/SSE4.2 assembly), hashing and
// sorting. Its output must be identical natively and under uvm.
package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

type rng uint64

func (r *rng) next() uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r)
}

func main() {
	r := rng(0x9E3779B97F4A7C15)
	h := sha256.New()
	out := func(format string, a ...any) { fmt.Fprintf(h, format, a...) }
	for i := 0; i < 20000; i++ {
		b := r.next()
		x := math.Float64frombits(b)
		if i%3 == 0 {
			x = float64(int64(b)) / float64(uint64(1)<<(b%62))
		}
		f := float32(x)
		out("%v %g %.17g %x %v %v ", x, f, x, math.Float64bits(float64(f)), strconv.FormatFloat(x, 'e', -1, 64), strconv.FormatFloat(float64(f), 'f', -1, 32))
		out("%v %v %v %v %v ", math.Floor(x), math.Ceil(x), math.Trunc(x), math.Round(x), math.RoundToEven(x))
		fr, fe := math.Frexp(x)
		out("%v %v %v %v %v ", math.Sqrt(math.Abs(x)), math.Mod(x, 7.5), math.Remainder(x, 3), fr, fe)
		out("%v %v %v %v ", math.Exp(x/1e300), math.Log(math.Abs(x)), math.Sin(x/1e10), math.Atan2(x, 3))
		out("%v %v %v ", math.Pow(math.Abs(x), 0.3), math.Hypot(x, 1e-300), math.FMA(x, 1.5, -x))
		if !math.IsNaN(x) && math.Abs(x) < 9e18 {
			out("%d %d %d ", int64(x), int32(int64(x)), uint64(math.Abs(x)))
		}
		y, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', -1, 64), 64)
		out("%v %v ", math.Float64bits(y) == math.Float64bits(x) || math.IsNaN(x), err)
		out("%v %v %v\n", x < 1, x == x, math.Signbit(x))
	}
	fmt.Printf("floats %x\n", h.Sum(nil))

	h.Reset()
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	var sb strings.Builder
	for i := 0; i < 3000; i++ {
		sb.WriteString(words[r.next()%8])
		if r.next()%5 == 0 {
			sb.WriteByte(byte('A' + r.next()%26))
		}
	}
	s := sb.String()
	for i := 0; i < 400; i++ {
		w := words[r.next()%8]
		k := int(r.next() % uint64(len(s)))
		out("%d %d %d %d %d ", strings.Index(s[k:], w), strings.LastIndex(s[:k], w), strings.IndexByte(s[k:], 'Q'),
			strings.Count(s[k:], w[:2]), bytes.IndexAny([]byte(s[k:]), "XYZ"))
		out("%v %v %d\n", strings.EqualFold(s[k:k/2+k/2+1], strings.ToUpper(s[k:k/2+k/2+1])), strings.Contains(s, w+"Q"), strings.Compare(s[k:], s[:k]))
	}
	out("%x %x\n", crc32.ChecksumIEEE([]byte(s)), crc32.Checksum([]byte(s), crc32.MakeTable(crc32.Castagnoli)))
	fields := strings.Fields(strings.ReplaceAll(s, "a", " "))
	slices.Sort(fields)
	out("%d %s %s\n", len(fields), fields[0], fields[len(fields)-1])
	fmt.Printf("strings %x\n", h.Sum(nil))

	h.Reset()
	a := new(big.Int).Exp(big.NewInt(3), big.NewInt(2000), nil)
	b := new(big.Int).Exp(big.NewInt(7), big.NewInt(900), nil)
	q, m := new(big.Int).QuoRem(a, b, new(big.Int))
	bf := new(big.Float).SetPrec(300).SetInt(a)
	bf.Sqrt(bf)
	out("%s %s %s %d %d\n", q.String()[:50], m.String()[:50], bf.Text('g', 60), bits.OnesCount64(r.next()), bits.LeadingZeros64(r.next()))
	fmt.Printf("big %x\n", h.Sum(nil))
}
