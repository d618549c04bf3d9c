package arm64

// Advanced SIMD and FP extensions after Armv8.0 (decode/a64simdext.go):
// FEAT_RDM (HWCAP_ASIMDRDM: SQRDMLAH, SQRDMLSH), FEAT_DotProd
// (HWCAP_ASIMDDP: SDOT, UDOT), FEAT_FRINTTS (HWCAP2_FRINT: FRINT32/64) and
// FEAT_JSCVT (HWCAP_JSCVT: FJCVTZS), FEAT_FCMA (HWCAP_FCMA: FCMLA,
// FCADD of halves, singles and doubles) and FEAT_FHM (HWCAP_ASIMDFHM:
// FMLAL, FMLAL2, FMLSL, FMLSL2), after the Arm ARM pseudocode.

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// execSIMDExt executes the ops of decode/a64simdext.go.
func (r *Regs) execSIMDExt(in *decode.A64) simdResult {
	switch in.Op {
	case decode.A64VFCMLA, decode.A64VFCADD:
		r.fcma(in)
		return simdOK
	case decode.A64VFMLAL, decode.A64VFMLSL:
		r.fmlal(in)
		return simdOK
	}
	a, b, d := r.V[in.Rn], r.V[in.Rm], r.V[in.Rd]
	sz := in.Size
	if in.Flags&decode.SIMDByElem != 0 {
		b = dupElem(elem(&r.V[in.Rm], int(in.Imm), sz), sz)
	}
	var res [2]uint64
	n := nElems(in, sz)
	switch in.Op {
	case decode.A64VSQRDMLAH, decode.A64VSQRDMLSH:
		esize := uint(8) << sz
		for i := 0; i < n; i++ {
			// (e3 << esize ± 2*e1*e2 + 1<<(esize-1)) >> esize, computed
			// without overflow as e3 + ((±e1*e2 + 1<<(esize-2)) >> (esize-1)).
			p := sext(elem(&a, i, sz), sz) * sext(elem(&b, i, sz), sz)
			if in.Op == decode.A64VSQRDMLSH {
				p = -p
			}
			v := sext(elem(&d, i, sz), sz) + (p+1<<(esize-2))>>(esize-1)
			setElem(&res, i, sz, r.satS(v, sz))
		}
	case decode.A64VSDOT, decode.A64VUDOT:
		for i := 0; i < n; i++ {
			acc := uint32(elem(&d, i, 2))
			for k := 0; k < 4; k++ {
				x, y := elem(&a, 4*i+k, 0), elem(&b, 4*i+k, 0)
				if in.Op == decode.A64VSDOT {
					acc += uint32(int32(int8(x)) * int32(int8(y)))
				} else {
					acc += uint32(x * y)
				}
			}
			setElem(&res, i, 2, uint64(acc))
		}
	case decode.A64FRINTTS:
		r.setFP(in.Rd, r.frintN(r.fp(in.Rn, sz), sz, in.Imm2))
		return simdOK
	case decode.A64VFRINTTS:
		for i := 0; i < n; i++ {
			setElem(&res, i, sz, r.frintN(elem(&a, i, sz), sz, in.Imm2))
		}
	case decode.A64FJCVTZS:
		v, z := r.fjcvtzs(r.V[in.Rn][0])
		if in.Rd < 31 {
			r.X[in.Rd] = uint64(v)
		}
		r.NZCV = z << 28
		return simdOK
	default:
		return simdUndefined
	}
	r.setVec(in.Rd, res, in.Q)
	return simdOK
}

// frintN is FPRoundIntN (FRINT32Z/X, FRINT64Z/X) of an S or D value: sel
// bit 0 selects the FPCR rounding mode (X) over rounding toward zero (Z),
// bit 1 the 64-bit integer range. Out-of-range values, infinities and NaNs
// give the most negative integer of the range and signal Invalid
// Operation; inexact results signal Inexact in both variants.
func (r *Regs) frintN(x uint64, sz uint8, sel uint64) uint64 {
	rm := rmZero
	if sel&1 != 0 {
		rm = fpRMode(r.FPCR)
	}
	intsize := 32 << (sel >> 1 & 1)
	var fl uint32
	v := fpUnpack(x, sz, r.FPCR, &fl)
	// -2^(intsize-1): sign, exponent bias+intsize-1, zero fraction.
	minInt := uint64(1)<<31 | uint64(127+intsize-1)<<23
	if sz == 3 {
		minInt = uint64(1)<<63 | uint64(1023+intsize-1)<<52
	}
	var res uint64
	switch v.cls {
	case fpQNaN, fpSNaN, fpInf:
		fl |= fpsrIOC
		res = minInt
	case fpZero:
		res = fpZeroBits(v.sign, sz)
	default:
		var dummy uint32
		res = fpRoundIntSoft(x, sz, rm, false, r.FPCR, &dummy)
		// The rounded value is integral: compare its magnitude with 2^(intsize-1).
		rv := fpUnpack(res, sz, 0, &dummy)
		over := false
		if rv.cls == fpFinite {
			e := rv.exp + bits.Len64(rv.mant) - 1 // floor(log2 |value|)
			over = e > intsize-1 || e == intsize-1 && (v.sign == 0 || rv.mant&(rv.mant-1) != 0)
		}
		if over {
			fl |= fpsrIOC
			res = minInt
		} else if !sameValue(res, x, sz) {
			fl |= fpsrIXC
		}
	}
	r.FPSR |= fl
	return res
}

// sameValue reports whether two encodings of the same format are equal
// (x may be a subnormal flushed to zero, which is never integral-equal).
func sameValue(a, b uint64, sz uint8) bool { return a&esizeMask(sz) == b&esizeMask(sz) }

// fjcvtzs is FPToFixedJS: Dn truncated toward zero, modulo 2^32, and the
// Z flag (1 when the conversion was exact and in range, and the input was
// not -0.0 or a flushed subnormal).
func (r *Regs) fjcvtzs(x uint64) (uint32, uint64) {
	var fl uint32
	v := fpUnpack(x, 3, r.FPCR, &fl)
	z := uint64(1)
	var res uint32
	switch v.cls {
	case fpQNaN, fpSNaN, fpInf:
		fl |= fpsrIOC
		z = 0
	case fpZero:
		if v.sign != 0 || x&(1<<52-1) != 0 {
			z = 0
		}
	default:
		var mag uint64 // |value| truncated, modulo 2^64 (enough for the low 32 bits and the range check below)
		inexact, big := false, false
		if v.exp >= 0 {
			if v.exp < 64 {
				mag = v.mant << uint(v.exp)
			}
			big = v.exp+bits.Len64(v.mant) > 32
		} else if -v.exp < 64 {
			mag = v.mant >> uint(-v.exp)
			inexact = v.mant&(1<<uint(-v.exp)-1) != 0
		} else {
			inexact = true
		}
		lo := uint32(mag)
		if v.sign != 0 {
			lo = -lo
		}
		res = lo
		switch {
		case big || v.sign == 0 && mag > 1<<31-1 || v.sign != 0 && mag > 1<<31:
			fl |= fpsrIOC
			z = 0
		case inexact:
			fl |= fpsrIXC
			z = 0
		}
	}
	r.FPSR |= fl
	return res, z << 2
}

// fcma is FCMLA (vector and by element) and FCADD: complex numbers are
// (real, imaginary) element pairs; Imm2 is the rotation in units of 90
// degrees. FCMLA accumulates with fused multiply-adds, FCADD adds.
func (r *Regs) fcma(in *decode.A64) {
	sz := in.Size
	n1, m2, d3 := r.V[in.Rn], r.V[in.Rm], r.V[in.Rd]
	pairs := nElems(in, sz) / 2
	var res [2]uint64
	for e := 0; e < pairs; e++ {
		re, im := 2*e, 2*e+1
		if in.Flags&decode.SIMDByElem != 0 { // the pair Imm of Vm for every e
			re, im = 2*int(in.Imm), 2*int(in.Imm)+1
		}
		mre, mim := elem(&m2, re, sz), elem(&m2, im, sz)
		if in.Op == decode.A64VFCADD {
			e1, e3 := fpNegBits(mim, sz), mre // #90
			if in.Imm2 == 3 {                 // #270
				e1, e3 = mim, fpNegBits(mre, sz)
			}
			setElem(&res, 2*e, sz, r.fadd(elem(&n1, 2*e, sz), e1, sz, false))
			setElem(&res, 2*e+1, sz, r.fadd(elem(&n1, 2*e+1, sz), e3, sz, false))
			continue
		}
		var e1, e2, e3, e4 uint64
		switch in.Imm2 {
		case 0:
			e1, e2, e3, e4 = mre, elem(&n1, 2*e, sz), mim, elem(&n1, 2*e, sz)
		case 1:
			e1, e2, e3, e4 = fpNegBits(mim, sz), elem(&n1, 2*e+1, sz), mre, elem(&n1, 2*e+1, sz)
		case 2:
			e1, e2, e3, e4 = fpNegBits(mre, sz), elem(&n1, 2*e, sz), fpNegBits(mim, sz), elem(&n1, 2*e, sz)
		default:
			e1, e2, e3, e4 = mim, elem(&n1, 2*e+1, sz), fpNegBits(mre, sz), elem(&n1, 2*e+1, sz)
		}
		setElem(&res, 2*e, sz, r.fmuladd(elem(&d3, 2*e, sz), e2, e1, sz))
		setElem(&res, 2*e+1, sz, r.fmuladd(elem(&d3, 2*e+1, sz), e4, e3, sz))
	}
	r.setVec(in.Rd, res, in.Q)
}

// fmlal is FMLAL, FMLAL2, FMLSL and FMLSL2 (vector and by element): each
// single lane i of Vd accumulates the product of the halves i+Imm2 of Vn
// and of Vm (or the half Imm of Vm, by element), FMLSL negating Vn's, with
// FPMulAddH: the halves are widened to single exactly (the product of two
// halves is exact in single), then added with one rounding to single.
// The halves are unpacked with FPCR.FZ16, the addend and the result with
// FZ.
func (r *Regs) fmlal(in *decode.A64) {
	n1, m2, d3 := r.V[in.Rn], r.V[in.Rm], r.V[in.Rd]
	var neg uint64
	if in.Op == decode.A64VFMLSL {
		neg = 1 << 15
	}
	var res [2]uint64
	for e := 0; e < nElems(in, 2); e++ {
		k := e + int(in.Imm2)
		h2 := elem(&m2, k, 1)
		if in.Flags&decode.SIMDByElem != 0 {
			h2 = elem(&m2, int(in.Imm), 1)
		}
		w1 := fpWidenHalf(elem(&n1, k, 1)^neg, r.FPCR)
		w2 := fpWidenHalf(h2, r.FPCR)
		setElem(&res, e, 2, r.fmuladd(elem(&d3, e, 2), w1, w2, 2))
	}
	r.setVec(in.Rd, res, in.Q)
}

// fpWidenHalf is the exact single-precision value of the IEEE half h as
// FPUnpack sees it (FPCR.FZ16 flushes a denormal to a zero of its sign,
// without IDC; FPCR.AHP does not apply): NaNs keep their sign, quiet bit
// and payload (FPConvertNaN), so that the single-precision FPMulAdd
// processes them as FPProcessNaNs3H does the halves. Every half
// denormal is a normal single, which FPCR.FZ does not flush.
func fpWidenHalf(h uint64, fpcr uint32) uint64 {
	sign := h >> 15 & 1 << 31
	e := h >> 10 & 0x1f
	frac := h & 0x3ff
	switch {
	case e == 0x1f:
		return sign | 0xff<<23 | frac<<13
	case e != 0:
		return sign | (e-15+127)<<23 | frac<<13
	case frac == 0 || fpFlush16(fpcr):
		return sign
	}
	n := bits.Len64(frac) // the value frac * 2^-24 has its leading one at 2^(n-25)
	return sign | uint64(n-25+127)<<23 | frac<<(24-n)&(1<<23-1)
}
