package arm64

// Floating-point operations on bit patterns with FPCR/FPSR semantics, as
// used by the scalar FP instructions and, per element, by the vector ones.
//
// Fast path: when FPCR selects round-to-nearest without flush-to-zero, the
// host's IEEE 754 arithmetic (Go float64/float32 operations and math.FMA,
// which are correctly rounded on every Go port) produces exactly the
// Arm result whenever that result is a normal number and no operand is a
// NaN. The only flag such an operation can raise is IXC; it is computed
// with error-free transformations (TwoSum, FMA residual) or skipped when
// IXC is already set (it is cumulative). Everything else - NaNs,
// infinities, zeros, subnormal results, other rounding modes, FZ - goes to
// the exact soft-float code in simdsoftfp.go.

import "math"

// isNormal64 reports whether b is a finite double of magnitude at least
// 2^-1021. (A result of magnitude 2^-1022 may have been rounded up from a
// tiny value, which raises UFC; such results take the slow path.)
func isNormal64(b uint64) bool {
	e := b >> 52 & 0x7ff
	return e > 1 && e != 0x7ff
}

// isNormal32 is isNormal64 for singles (magnitude at least 2^-125).
func isNormal32(b uint32) bool {
	e := b >> 23 & 0xff
	return e > 1 && e != 0xff
}

// fpFast reports whether the fast path may be used.
func (r *Regs) fpFast() bool { return r.FPCR&(fpcrFZ|fpcrRMode) == 0 }

// twoSumErr returns the rounding error of z = x + y (exact, Knuth's
// TwoSum).
func twoSumErr(x, y, z float64) float64 {
	bb := z - x
	return (x - (z - bb)) + (y - bb)
}

// fadd is FPAdd / FPSub.
func (r *Regs) fadd(a, b uint64, sz uint8, sub bool) uint64 {
	if r.fpFast() {
		switch sz {
		case 3:
			x, y := math.Float64frombits(a), math.Float64frombits(b)
			if sub {
				y = -y
			}
			z := x + y
			if zb := math.Float64bits(z); isNormal64(zb) {
				if r.FPSR&fpsrIXC == 0 && twoSumErr(x, y, z) != 0 {
					r.FPSR |= fpsrIXC
				}
				return zb
			}
		case 2:
			x, y := math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b))
			if sub {
				y = -y
			}
			z := x + y
			if zb := math.Float32bits(z); isNormal32(zb) {
				if r.FPSR&fpsrIXC == 0 {
					xd, yd := float64(x), float64(y)
					s := xd + yd
					if twoSumErr(xd, yd, s) != 0 || float64(z) != s {
						r.FPSR |= fpsrIXC
					}
				}
				return uint64(zb)
			}
		}
	}
	var fl uint32
	res := fpAddSoft(a, b, sz, sub, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

// fmul is FPMul (mulx: FPMulX).
func (r *Regs) fmul(a, b uint64, sz uint8, mulx bool) uint64 {
	if r.fpFast() {
		switch sz {
		case 3:
			x, y := math.Float64frombits(a), math.Float64frombits(b)
			z := x * y
			if zb := math.Float64bits(z); isNormal64(zb) {
				if r.FPSR&fpsrIXC == 0 {
					// The FMA residual is exact when z is well above the
					// subnormal range.
					if zb>>52&0x7ff < 64 {
						break
					}
					if math.FMA(x, y, -z) != 0 {
						r.FPSR |= fpsrIXC
					}
				}
				return zb
			}
		case 2:
			x, y := math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b))
			z := x * y
			if zb := math.Float32bits(z); isNormal32(zb) {
				if r.FPSR&fpsrIXC == 0 && float64(z) != float64(x)*float64(y) {
					r.FPSR |= fpsrIXC
				}
				return uint64(zb)
			}
		}
	}
	var fl uint32
	res := fpMulSoft(a, b, sz, mulx, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

// fdiv is FPDiv.
func (r *Regs) fdiv(a, b uint64, sz uint8) uint64 {
	if r.fpFast() && r.FPSR&fpsrIXC != 0 {
		switch sz {
		case 3:
			z := math.Float64frombits(a) / math.Float64frombits(b)
			if zb := math.Float64bits(z); isNormal64(zb) {
				return zb
			}
		case 2:
			z := math.Float32frombits(uint32(a)) / math.Float32frombits(uint32(b))
			if zb := math.Float32bits(z); isNormal32(zb) {
				return uint64(zb)
			}
		}
	}
	var fl uint32
	res := fpDivSoft(a, b, sz, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

// fsqrt is FPSqrt.
func (r *Regs) fsqrt(a uint64, sz uint8) uint64 {
	if r.fpFast() && r.FPSR&fpsrIXC != 0 {
		switch sz {
		case 3:
			if x := math.Float64frombits(a); x > 0 && x <= math.MaxFloat64 {
				return math.Float64bits(math.Sqrt(x))
			}
		case 2:
			if x := math.Float32frombits(uint32(a)); x > 0 && x <= math.MaxFloat32 {
				// sqrt in double then to single is correctly rounded
				// (53 >= 2*24+2).
				return uint64(math.Float32bits(float32(math.Sqrt(float64(x)))))
			}
		}
	}
	var fl uint32
	res := fpSqrtSoft(a, sz, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

// fmuladd is FPMulAdd: addend + op1*op2, fused.
func (r *Regs) fmuladd(addend, op1, op2 uint64, sz uint8) uint64 {
	if r.fpFast() && r.FPSR&fpsrIXC != 0 {
		switch sz {
		case 3:
			z := math.FMA(math.Float64frombits(op1), math.Float64frombits(op2), math.Float64frombits(addend))
			if zb := math.Float64bits(z); isNormal64(zb) {
				return zb
			}
		case 2:
			// The product is exact in double; the double sum rounded to
			// odd, then to single, is the correctly rounded fused result.
			x := math.Float32frombits(uint32(op1))
			y := math.Float32frombits(uint32(op2))
			w := float64(math.Float32frombits(uint32(addend)))
			p := float64(float64(x) * float64(y))
			s := p + w
			if e := twoSumErr(p, w, s); e != 0 {
				sb := math.Float64bits(s)
				if sb&1 == 0 {
					// move one ulp towards the exact value
					if (e > 0) == (s > 0) {
						sb++
					} else {
						sb--
					}
					s = math.Float64frombits(sb)
				}
			}
			z := float32(s)
			if zb := math.Float32bits(z); isNormal32(zb) && !math.IsInf(s, 0) && !math.IsNaN(s) {
				return uint64(zb)
			}
		}
	}
	var fl uint32
	res := fpMulAddSoft(addend, op1, op2, sz, 0, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

func fpNegBits(x uint64, sz uint8) uint64 { return x ^ 1<<fpSignShift(sz) }

func fpAbsBits(x uint64, sz uint8) uint64 { return x &^ (1 << fpSignShift(sz)) }

// fmaxmin is FPMax/FPMin (num: FPMaxNum/FPMinNum).
func (r *Regs) fmaxmin(a, b uint64, sz uint8, max, num bool) uint64 {
	if r.FPCR&fpcrFZ == 0 && sz == 3 {
		x, y := math.Float64frombits(a), math.Float64frombits(b)
		if x == x && y == y && (x != 0 || y != 0) {
			if max == (x > y) {
				return a
			}
			if x != y {
				return b
			}
		}
	}
	var fl uint32
	res := fpMaxMinSoft(a, b, sz, max, num, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

// fcmp is FPCompare, returning NZCV in bits 3..0.
func (r *Regs) fcmp(a, b uint64, sz uint8, signal bool) uint64 {
	if r.FPCR&fpcrFZ == 0 {
		var x, y float64
		switch sz {
		case 3:
			x, y = math.Float64frombits(a), math.Float64frombits(b)
		case 2:
			// exact for every non-NaN single
			x, y = float64(math.Float32frombits(uint32(a))), float64(math.Float32frombits(uint32(b)))
		}
		switch {
		case x < y:
			return 0b1000
		case x == y && sz != 1:
			return 0b0110
		case x > y:
			return 0b0010
		}
	}
	var fl uint32
	res := fpCompareSoft(a, b, sz, signal, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

// fcmpCond evaluates FPCompareEQ/GE/GT (cond 0/1/2) as a bool; EQ is quiet,
// GE and GT signal on any NaN.
func (r *Regs) fcmpCond(a, b uint64, sz uint8, cond int) bool {
	nzcv := r.fcmp(a, b, sz, cond != 0)
	switch cond {
	case 0:
		return nzcv == 0b0110
	case 1:
		return nzcv == 0b0110 || nzcv == 0b0010
	}
	return nzcv == 0b0010
}

// fcvtToInt is FPToFixed for FCVT*{S,U} / FCVTZ{S,U} (fixed): rm is an
// rm* rounding mode; the result is zero-extended from width (16, 32 or
// 64) bits.
func (r *Regs) fcvtToInt(x uint64, sz uint8, fbits int, unsigned bool, width uint, rm int) uint64 {
	is64 := width == 64
	if width >= 32 && sz == 3 && fbits == 0 && rm == rmZero && r.FPCR&fpcrFZ == 0 {
		f := math.Float64frombits(x)
		switch {
		case !unsigned && is64 && f >= -9223372036854775808.0 && f < 9223372036854775808.0:
			i := int64(f)
			if r.FPSR&fpsrIXC == 0 && float64(i) != f {
				r.FPSR |= fpsrIXC
			}
			return uint64(i)
		case !unsigned && !is64 && f > -2147483649.0 && f < 2147483648.0:
			i := int64(f)
			if r.FPSR&fpsrIXC == 0 && float64(i) != f {
				r.FPSR |= fpsrIXC
			}
			return uint64(uint32(i))
		case unsigned && f >= 0 && (is64 && f < 18446744073709551616.0 || !is64 && f < 4294967296.0):
			u := uint64(f)
			if r.FPSR&fpsrIXC == 0 && float64(u) != f {
				r.FPSR |= fpsrIXC
			}
			return u
		}
	}
	var fl uint32
	res := fpToFixedSoft(x, sz, fbits, unsigned, width, rm, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

// icvtf is FixedToFP (SCVTF/UCVTF) with FPCR rounding.
func (r *Regs) icvtf(v uint64, is64, unsigned bool, fbits int, sz uint8) uint64 {
	if fbits == 0 && r.FPCR&fpcrRMode == 0 && is64 {
		switch {
		case sz == 3 && !unsigned:
			i := int64(v)
			if i >= -1<<53 && i <= 1<<53 || r.FPSR&fpsrIXC != 0 {
				return math.Float64bits(float64(i))
			}
		case sz == 3 && unsigned:
			if v <= 1<<53 || r.FPSR&fpsrIXC != 0 {
				return math.Float64bits(float64(v))
			}
		}
	}
	var fl uint32
	res := fixedToFPSoft(v, is64, unsigned, fbits, sz, r.FPCR, fpRMode(r.FPCR), &fl)
	r.FPSR |= fl
	return res
}

// fcvt is FPConvert between formats (FCVT), with FPCR rounding.
func (r *Regs) fcvt(x uint64, from, to uint8) uint64 {
	if r.fpFast() {
		switch {
		case from == 2 && to == 3 && isNormal32(uint32(x)):
			return math.Float64bits(float64(math.Float32frombits(uint32(x))))
		case from == 3 && to == 2 && isNormal64(x):
			f := math.Float64frombits(x)
			z := float32(f)
			if zb := math.Float32bits(z); isNormal32(zb) {
				if r.FPSR&fpsrIXC == 0 && float64(z) != f {
					r.FPSR |= fpsrIXC
				}
				return uint64(zb)
			}
		}
	}
	var fl uint32
	res := fpConvertSoft(x, from, to, r.FPCR, fpRMode(r.FPCR), &fl)
	r.FPSR |= fl
	return res
}

// frint is FPRoundInt for FRINT{N,P,M,Z,A,X,I} (sel: decode.FPRound*).
func (r *Regs) frint(x uint64, sz uint8, sel uint64) uint64 {
	rm, exact := int(sel), false
	switch sel {
	case 4: // FPRoundA
		rm = rmAway
	case 5: // FPRoundX
		rm, exact = fpRMode(r.FPCR), true
	case 6: // FPRoundI
		rm = fpRMode(r.FPCR)
	}
	if sz == 3 && r.FPCR&fpcrFZ == 0 {
		f := math.Float64frombits(x)
		if f-f == 0 { // finite
			var z float64
			switch rm {
			case rmNearest:
				z = math.RoundToEven(f)
			case rmPlusInf:
				z = math.Ceil(f)
			case rmMinusInf:
				z = math.Floor(f)
			case rmZero:
				z = math.Trunc(f)
			default:
				z = math.Round(f)
			}
			if exact && z != f {
				r.FPSR |= fpsrIXC
			}
			return math.Float64bits(z)
		}
	}
	var fl uint32
	res := fpRoundIntSoft(x, sz, rm, exact, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

// frecpStep is FPRecipStepFused (rsqrt: FPRSqrtStepFused).
func (r *Regs) frecpStep(a, b uint64, sz uint8, rsqrt bool) uint64 {
	var fl uint32
	a = fpNegBits(a, sz)
	fpcr := r.FPCR
	va := fpUnpack(a, sz, fpcr, &fl)
	vb := fpUnpack(b, sz, fpcr, &fl)
	res, done := fpProcessNaNs(va, vb, a, b, sz, fpcr, &fl)
	if !done {
		switch {
		case va.cls == fpInf && vb.cls == fpZero, va.cls == fpZero && vb.cls == fpInf:
			if rsqrt {
				res = fpOnePointFive(sz)
			} else {
				res = fpTwo(0, sz)
			}
		case va.cls == fpInf || vb.cls == fpInf:
			res = fpInfBits(va.sign^vb.sign, sz)
		default:
			// FPUnpack already flushed denormal inputs; pass the
			// flushed values on so that IDC is not counted twice.
			if va.cls == fpZero {
				a = fpZeroBits(va.sign, sz)
			}
			if vb.cls == fpZero {
				b = fpZeroBits(vb.sign, sz)
			}
			scale, addend := 0, fpTwo(0, sz)
			if rsqrt {
				scale, addend = -1, fpThree(sz)
			}
			res = fpMulAddSoft(addend, a, b, sz, scale, fpcr, &fl)
		}
	}
	r.FPSR |= fl
	return res
}

func fpOnePointFive(sz uint8) uint64 {
	f := &fpFormats[sz]
	return uint64(f.bias)<<f.frac | 1<<(f.frac-1)
}

func fpThree(sz uint8) uint64 {
	f := &fpFormats[sz]
	return uint64(f.bias+1)<<f.frac | 1<<(f.frac-1)
}
