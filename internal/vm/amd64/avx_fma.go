package amd64

import (
	"math"
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// FMA3 and F16C.

// avxFMA executes VFMADD/VFMSUB/VFNMADD/VFNMSUB/VFMADDSUB/VFMSUBADD
// 132/213/231 PS/PD/SS/SD: one rounding per element.
func (c *CPU) avxFMA(in *decode.X86) sseResult {
	r := &c.regs
	s, res := c.avxSrc(in, &in.Args[2])
	if res != sseOK {
		return res
	}
	d := c.getY(in.Args[0].Reg)
	h := c.getY(in.Args[1].Reg)
	order := in.Aux & decode.AVXFMAOrderMask
	kind := (in.Aux & decode.AVXFMAKindMask) >> decode.AVXFMAKindShift
	size := 4
	if in.Aux&decode.AVXFMADouble != 0 {
		size = 8
	}
	n := int(in.Width) / size
	if in.Aux&decode.AVXFMAScalar != 0 {
		n = 1
	}
	old := r.MXCSR
	out := d
	if in.Aux&decode.AVXFMAScalar == 0 && in.Width == 16 {
		out[1] = vec{}
	}
	for i := range n {
		k, j := i*size/16, i%(16/size)
		x1, x2, x3 := lane(d[k], size, j), lane(h[k], size, j), lane(s[k], size, j)
		var a, b, cc uint64
		switch order {
		case 0: // 132: dst = dst*src3 + src2
			a, b, cc = x1, x3, x2
		case 1: // 213: dst = src2*dst + src3
			a, b, cc = x2, x1, x3
		default: // 231: dst = src2*src3 + dst
			a, b, cc = x2, x3, x1
		}
		negP, negC := false, false
		switch kind {
		case decode.AVXFMAMsub:
			negC = true
		case decode.AVXFMANmadd:
			negP = true
		case decode.AVXFMANmsub:
			negP, negC = true, true
		case decode.AVXFMAMaddsub:
			negC = i&1 == 0
		case decode.AVXFMAMsubadd:
			negC = i&1 != 0
		}
		var z uint64
		if size == 8 {
			z = r.fma64(a, b, cc, negP, negC)
		} else {
			z = uint64(r.fma32(uint32(a), uint32(b), uint32(cc), negP, negC))
		}
		setLane(&out[k], size, j, z)
	}
	if unmaskedFPE(old, r.MXCSR) {
		return sseFPE
	}
	w := in.Width
	if in.Aux&decode.AVXFMAScalar != 0 {
		w = 16
		out[1] = vec{}
	}
	c.setY(in.Args[0].Reg, out, w)
	return sseOK
}

// fma64 computes ±(a×b) ± c on doubles with one rounding.
func (r *Regs) fma64(a, b, c uint64, negP, negC bool) uint64 {
	if r.fast() && ok64(a) && ok64(b) && ok64(c) {
		x, y, z := math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(c)
		if negP {
			x = -x
		}
		if negC {
			z = -z
		}
		if zb := math.Float64bits(math.FMA(x, y, z)); ok64(zb) && zb<<1 != 0 {
			return zb
		}
	}
	env := r.sseEnv()
	u := env.fma(env.unpackF64(a), env.unpackF64(b), env.unpackF64(c), negP, negC, &fmtF64)
	env.priority()
	r.MXCSR |= env.flags
	return packF64(u)
}

// fma32 is fma64 for singles. The fast path forms the exact product in
// double precision, adds with the error term (TwoSum) and rounds the sum
// to odd, so that the final rounding to single is the correctly rounded
// result (53 >= 2×24+2).
func (r *Regs) fma32(a, b, c uint32, negP, negC bool) uint32 {
	if r.fast() && ok32(a) && ok32(b) && ok32(c) {
		x := float64(math.Float32frombits(a))
		y := float64(math.Float32frombits(b))
		z := float64(math.Float32frombits(c))
		if negP {
			x = -x
		}
		if negC {
			z = -z
		}
		p := x * y // exact: 48 significant bits
		s := p + z
		bb := s - p
		e := (p - (s - bb)) + (z - bb)
		if sb := math.Float64bits(s); e != 0 && sb&1 == 0 {
			if (e > 0) == (s > 0) {
				sb++
			} else {
				sb--
			}
			s = math.Float64frombits(sb)
		}
		if zb := math.Float32bits(float32(s)); ok32(zb) && zb<<1 != 0 {
			return zb
		}
	}
	env := r.sseEnv()
	u := env.fma(env.unpackF32(a), env.unpackF32(b), env.unpackF32(c), negP, negC, &fmtF32)
	env.priority()
	r.MXCSR |= env.flags
	return packF32(u)
}

// fma is the soft-float fused multiply-add: ±(a×b) ± c rounded once to f.
// NaN operands: an SNaN raises IE; the result is the first NaN of a, b,
// c made quiet. 0×∞ is invalid (default NaN) even when c is a QNaN.
func (env *fpEnv) fma(a, b, c ufp, negP, negC bool, f *fpFormat) ufp {
	if negC {
		c.neg = !c.neg
	}
	pneg := a.neg != b.neg != negP
	if a.isNaN() || b.isNaN() || c.isNaN() {
		env.flags &^= fpDE
		if a.cls == clsSNaN || b.cls == clsSNaN || c.cls == clsSNaN {
			env.flags |= fpIE
		}
		if (a.cls == clsInf && b.cls == clsZero) || (a.cls == clsZero && b.cls == clsInf) {
			env.flags |= fpIE
		}
		switch {
		case a.isNaN():
			return a.quiet()
		case b.isNaN():
			return b.quiet()
		}
		if negC {
			c.neg = !c.neg // the NaN keeps its own sign
		}
		return c.quiet()
	}
	switch {
	case a.cls == clsInf || b.cls == clsInf:
		if a.cls == clsZero || b.cls == clsZero {
			env.flags |= fpIE
			return defaultNaN
		}
		if c.cls == clsInf && c.neg != pneg {
			env.flags |= fpIE
			return defaultNaN
		}
		return ufp{cls: clsInf, neg: pneg}
	case c.cls == clsInf:
		return c
	case a.cls == clsZero || b.cls == clsZero:
		if c.cls == clsZero {
			if c.neg == pneg {
				return c
			}
			return ufp{cls: clsZero, neg: env.rc == rcDown}
		}
		return env.round(c, f)
	}
	phi, plo := bits.Mul64(a.mant, b.mant)
	pe := a.exp + b.exp + 1
	if phi>>63 == 0 {
		phi = phi<<1 | plo>>63
		plo <<= 1
		pe--
	}
	if c.cls == clsZero {
		return env.roundPack(pneg, pe, phi, plo, f)
	}
	chi, clo, ce := c.mant, uint64(0), c.exp
	// Order by magnitude: (xhi:xlo, xe) is the larger.
	xhi, xlo, xe, xneg := phi, plo, pe, pneg
	yhi, ylo, ye, yneg := chi, clo, ce, c.neg
	if ye > xe || (ye == xe && (yhi > xhi || yhi == xhi && ylo > xlo)) {
		xhi, xlo, xe, xneg, yhi, ylo, ye, yneg = yhi, ylo, ye, yneg, xhi, xlo, xe, xneg
	}
	yhi, ylo = shiftRightJam128(yhi, ylo, xe-ye)
	if xneg == yneg {
		lo, carry := bits.Add64(xlo, ylo, 0)
		hi, carry2 := bits.Add64(xhi, yhi, carry)
		e := xe
		if carry2 != 0 {
			sticky := lo & 1
			lo = lo>>1 | hi<<63 | sticky
			hi = hi>>1 | 1<<63
			e++
		}
		return env.roundPack(xneg, e, hi, lo, f)
	}
	lo, bw := bits.Sub64(xlo, ylo, 0)
	hi, _ := bits.Sub64(xhi, yhi, bw)
	if hi == 0 && lo == 0 {
		return ufp{cls: clsZero, neg: env.rc == rcDown}
	}
	return env.normRound(xneg, xe, hi, lo, f)
}

// ---- F16C ----

var fmtF16 = fpFormat{11, -14, 15}

// avxF16C executes VCVTPH2PS and VCVTPS2PH.
func (c *CPU) avxF16C(in *decode.X86) sseResult {
	r := &c.regs
	old := r.MXCSR
	if in.Op == decode.AVXCvtph2ps {
		s, res := c.avxSrc(in, &in.Args[2])
		if res != sseOK {
			return res
		}
		var d ymm
		for i := range int(in.Width) / 4 {
			h := uint16(lane(s[0], 2, i))
			setLane(&d[i/4], 4, i%4, uint64(r.cvtF16ToF32(h)))
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.setY(in.Args[0].Reg, d, in.Width)
		return sseOK
	}
	src := c.getY(in.Args[2].Reg)
	rc := uint8(in.Imm & 3)
	if in.Imm&4 != 0 {
		rc = uint8(r.MXCSR>>mxRCShift) & 3
	}
	var d vec
	for i := range int(in.Width) / 4 {
		x := uint32(lane(src[i/4], 4, i%4))
		setLane(&d, 2, i, uint64(r.cvtF32ToF16(x, rc)))
	}
	if unmaskedFPE(old, r.MXCSR) {
		return sseFPE
	}
	a0 := &in.Args[0]
	if a0.Kind == decode.ArgMem {
		return c.writeMem(in, c.ea(in, a0), d, int(a0.Size))
	}
	c.setY(a0.Reg, ymm{d}, 16)
	return sseOK
}

// cvtF16ToF32 widens a half (exact; an SNaN raises IE and is quieted).
func (r *Regs) cvtF16ToF32(h uint16) uint32 {
	sign := uint32(h>>15) << 31
	e := uint32(h>>10) & 0x1F
	m := uint32(h & 0x3FF)
	switch {
	case e == 0x1F && m != 0:
		if m&0x200 == 0 {
			r.MXCSR |= fpIE
		}
		return sign | 0x7FC00000 | m<<13
	case e == 0x1F:
		return sign | 0x7F800000
	case e == 0 && m == 0:
		return sign
	case e == 0: // denormal half: a normal single (DAZ does not apply)
		p := uint32(31 - bits.LeadingZeros32(m))
		return sign | (p+127-24)<<23 | (m<<(23-p))&0x7FFFFF
	}
	return sign | (e+127-15)<<23 | m<<13
}

// cvtF32ToF16 narrows a single to a half with rounding control rc.
func (r *Regs) cvtF32ToF16(x uint32, rc uint8) uint16 {
	env := r.sseEnv()
	env.rc = rc
	env.ftz = false
	u := env.unpackF32(x)
	switch {
	case u.isNaN():
		if u.cls == clsSNaN {
			env.flags |= fpIE
		}
		env.flags &^= fpDE
		u = u.quiet()
	default:
		u = env.round(u, &fmtF16)
	}
	r.MXCSR |= env.flags
	return packF16(u)
}

func packF16(u ufp) uint16 {
	var s uint16
	if u.neg {
		s = 1 << 15
	}
	switch u.cls {
	case clsZero:
		return s
	case clsInf:
		return s | 0x1F<<10
	case clsQNaN, clsSNaN:
		return s | 0x1F<<10 | uint16(u.mant>>54)
	}
	if u.mant>>63 == 0 || u.exp < -14 {
		return s | uint16(denorm(u, -14)>>53)
	}
	return s | uint16(u.exp+15)<<10 | uint16(u.mant>>53)&0x3FF
}
