// Command floats exercises float formatting and parsing (fmt, strconv) and
// the math package. Results of transcendental functions are printed with
// %.12g so that legitimate last-bit differences between implementations
// (Go uses assembly on some architectures, and arm64 fuses a*b+c into one
// instruction) do not show.
package main

import (
	"fmt"
	"math"
	"strconv"
)

func main() {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.0 / 3, 2.5, -123456.789,
		1e21, 1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Pi,
		math.Inf(1), math.Inf(-1), math.NaN()}
	for _, v := range vals {
		fmt.Printf("%v|%g|%e|%.3f|%8.2f|%G|%x|%s|%s\n", v, v, v, v, v, v, v,
			strconv.FormatFloat(v, 'f', -1, 64),
			strconv.FormatFloat(v, 'g', 5, 64))
	}
	f32 := []float32{0.1, 1.0 / 3, 16777217, math.MaxFloat32}
	for _, v := range f32 {
		fmt.Println(v, strconv.FormatFloat(float64(v), 'g', -1, 32), float64(v))
	}

	for _, s := range []string{"3.14159", "-0", "1e308", "1e309", "4.9e-324", "0x1p-2",
		"inf", "-Inf", "NaN", "1_000.5", "abc", "2.2250738585072011e-308", ".5", "1e"} {
		v, err := strconv.ParseFloat(s, 64)
		es := "nil"
		if err != nil {
			es = err.(*strconv.NumError).Err.Error()
		}
		v32, _ := strconv.ParseFloat(s, 32)
		fmt.Printf("ParseFloat(%q) = %v err=%s as32=%v\n", s, v, es, v32)
	}

	in := []float64{0, 0.5, 1, 2, 3.7, 10, -2.5, 100.25, 1e-3}
	for _, x := range in {
		fmt.Printf("x=%v sqrt=%.12g sin=%.12g cos=%.12g exp=%.12g log=%.12g pow(x,1.5)=%.12g floor=%v ceil=%v trunc=%v round=%v\n",
			x, math.Sqrt(x), math.Sin(x), math.Cos(x), math.Exp(x), math.Log(x),
			math.Pow(x, 1.5), math.Floor(x), math.Ceil(x), math.Trunc(x), math.Round(x))
	}
	fmt.Printf("pow: %v %v %v %v %v\n", math.Pow(2, 10), math.Pow(2, -3), math.Pow(-8, 1.0/3), math.Pow(0, 0), math.Pow(10, 22))
	fmt.Printf("atan2=%.12g hypot=%v mod=%v abs=%v max=%v min=%v\n",
		math.Atan2(1, -1), math.Hypot(3, 4), math.Mod(10.5, 3), math.Abs(-2), math.Max(3, math.NaN()), math.Min(-0.0, 0))
	fmt.Printf("bits: %#016x %v %v\n", math.Float64bits(1.5), math.Float64frombits(0x4009_21fb_5444_2d18), math.Float32bits(-1))
	fr, ex := math.Frexp(1234.5)
	fmt.Printf("frexp: %v %d ldexp: %v modf:", fr, ex, math.Ldexp(0.75, 5))
	ip, fp := math.Modf(-3.25)
	fmt.Println(ip, fp)

	// Exact arithmetic: sums, conversions and integer<->float.
	s := 0.0
	for i := 1; i <= 1000; i++ {
		s += 1 / float64(i)
	}
	fmt.Printf("harmonic(1000)=%.15g\n", s)
	var acc float32
	for i := 0; i < 1000; i++ {
		acc += 0.1
	}
	fmt.Println("float32 sum of 0.1 x1000:", acc)
	neg, f255 := -2.9, 255.9
	fmt.Println("conversions:", int64(neg), uint8(int(f255)), int32(math.Float32frombits(0x4effffff)), float64(int64(1)<<62), float32(1<<24+1))
	d := 7.0
	fmt.Println("division:", 1/d, -1/d, d/0.25)
}
