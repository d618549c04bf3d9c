package amd64

import (
	"math"
	"math/rand"
	"testing"
)

// randF64 returns bit patterns biased towards interesting values.
func randF64(rng *rand.Rand) uint64 {
	switch rng.Intn(12) {
	case 0:
		return uint64(rng.Intn(4)) << 62 >> 1 // zeros, specials
	case 1:
		return rng.Uint64() & (1<<52 - 1) // denormal
	case 2:
		return rng.Uint64()&(1<<63|1<<52-1) | 0x7FF<<52 // inf/NaN
	case 3:
		return rng.Uint64()&(1<<63|1<<52-1) | uint64(rng.Intn(3)+1)<<52 // tiny normals
	case 4:
		return rng.Uint64()&(1<<63|1<<52-1) | uint64(0x7FE-rng.Intn(3))<<52 // huge
	case 5:
		return math.Float64bits(float64(rng.Intn(2000) - 1000))
	}
	e := uint64(1023 + rng.Intn(120) - 60)
	return rng.Uint64()&(1<<63|1<<52-1) | e<<52
}

func randF32(rng *rand.Rand) uint32 {
	switch rng.Intn(12) {
	case 0:
		return uint32(rng.Intn(4)) << 30 >> 1
	case 1:
		return rng.Uint32() & (1<<23 - 1)
	case 2:
		return rng.Uint32()&(1<<31|1<<23-1) | 0xFF<<23
	case 3:
		return rng.Uint32()&(1<<31|1<<23-1) | uint32(rng.Intn(3)+1)<<23
	case 4:
		return rng.Uint32()&(1<<31|1<<23-1) | uint32(0xFE-rng.Intn(3))<<23
	case 5:
		return math.Float32bits(float32(rng.Intn(2000) - 1000))
	}
	e := uint32(127 + rng.Intn(60) - 30)
	return rng.Uint32()&(1<<31|1<<23-1) | e<<23
}

// TestSoftFloatMatchesHost checks the soft-float core against the host's
// IEEE arithmetic in round-to-nearest for non-NaN results.
func TestSoftFloatMatchesHost(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 100000; i++ {
		a, b := randF64(rng), randF64(rng)
		x, y := math.Float64frombits(a), math.Float64frombits(b)
		for op := fopAdd; op <= fopSqrt; op++ {
			var want float64
			switch op {
			case fopAdd:
				want = x + y
			case fopSub:
				want = x - y
			case fopMul:
				want = float64(x * y)
			case fopDiv:
				want = x / y
			case fopMin:
				want = y
				if x < y {
					want = x
				}
			case fopMax:
				want = y
				if x > y {
					want = x
				}
			case fopSqrt:
				want = math.Sqrt(y)
			}
			r := Regs{MXCSR: MXCSRDefault}
			got := r.arith64Slow(op, a, b)
			if math.IsNaN(want) {
				if !math.IsNaN(math.Float64frombits(got)) {
					t.Fatalf("op %d %#x %#x: got %#x want NaN", op, a, b, got)
				}
				continue
			}
			if got != math.Float64bits(want) {
				t.Fatalf("op %d %#x %#x: got %#x want %#x", op, a, b, got, math.Float64bits(want))
			}
		}
		c, d := randF32(rng), randF32(rng)
		p, q := math.Float32frombits(c), math.Float32frombits(d)
		for op := fopAdd; op <= fopSqrt; op++ {
			var want float32
			switch op {
			case fopAdd:
				want = p + q
			case fopSub:
				want = p - q
			case fopMul:
				want = float32(p * q)
			case fopDiv:
				want = p / q
			case fopMin:
				want = q
				if p < q {
					want = p
				}
			case fopMax:
				want = q
				if p > q {
					want = p
				}
			case fopSqrt:
				want = float32(math.Sqrt(float64(q)))
			}
			r := Regs{MXCSR: MXCSRDefault}
			got := r.arith32Slow(op, c, d)
			if want != want {
				if g := math.Float32frombits(got); g == g {
					t.Fatalf("op32 %d %#x %#x: got %#x want NaN", op, c, d, got)
				}
				continue
			}
			if got != math.Float32bits(want) {
				t.Fatalf("op32 %d %#x %#x: got %#x want %#x", op, c, d, got, math.Float32bits(want))
			}
		}
		// conversions
		r := Regs{MXCSR: MXCSRDefault}
		if got, want := r.cvtF64ToF32(a), math.Float32bits(float32(x)); x == x && got != want {
			t.Fatalf("cvtsd2ss %#x: got %#x want %#x", a, got, want)
		}
		if got, want := r.cvtF32ToF64(c), math.Float64bits(float64(p)); p == p && got != want {
			t.Fatalf("cvtss2sd %#x: got %#x want %#x", c, got, want)
		}
		v := int64(rng.Uint64()) >> uint(rng.Intn(64))
		env := r.sseEnv()
		if got, want := packF64(env.fromInt(v, &fmtF64)), math.Float64bits(float64(v)); got != want {
			t.Fatalf("cvtsi2sd %d: got %#x want %#x", v, got, want)
		}
		if x == x && math.Abs(x) < 1<<62 {
			if got, want := env.toInt(env.unpackF64(a), 64, rcZero), int64(x); got != want {
				t.Fatalf("cvttsd2si %v: got %d want %d", x, got, want)
			}
			if got, want := env.toInt(env.unpackF64(a), 64, rcNearest), int64(math.RoundToEven(x)); got != want {
				t.Fatalf("cvtsd2si %v: got %d want %d", x, got, want)
			}
		}
	}
}
