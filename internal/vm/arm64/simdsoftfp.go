package arm64

// Exact IEEE 754 arithmetic for the A64 floating-point unit, written after
// the Arm ARM pseudocode (FPUnpack, FPRound, FPProcessNaNs, FPAdd, FPMul,
// FPDiv, FPSqrt, FPMulAdd, FPToFixed, FixedToFP, FPConvert, FPRoundInt,
// FPCompare, FPMax/FPMin/FPMaxNum/FPMinNum). Values are handled as bit
// patterns of half (sz 1), single (sz 2) or double (sz 3) precision; every
// rounding mode of FPCR.RMode, FPCR.FZ (flush-to-zero of single/double
// inputs and outputs) and FPCR.DN (default NaN) are honoured, and the
// cumulative FPSR flags IOC, DZC, OFC, UFC, IXC and IDC are computed
// exactly (underflow is detected before rounding, as with FPCR.AH = 0).
// FPCR.AHP selects the alternative half-precision format for conversions
// to and from half precision (fpConvertSoft); FPCR.FZ16 flushes
// half-precision denormal inputs (without IDC) and tiny outputs (UFC) of
// every other operation (FEAT_FP16), as the pseudocode's FPUnpack/FPRound
// do while FPUnpackCV/FPRoundCV ignore FZ16 and honour AHP. Floating-point exception trapping is not implemented (FPCR trap enable
// bits read as written but never trap, as on most Armv8 cores).
//
// simdfp.go puts a fast path in front of these functions that uses the
// host's IEEE arithmetic when it provably gives the same result and flags.

import (
	"math"
	"math/bits"
)

// FPSR and FPCR bits.
const (
	fpsrIOC = 1 << 0
	fpsrDZC = 1 << 1
	fpsrOFC = 1 << 2
	fpsrUFC = 1 << 3
	fpsrIXC = 1 << 4
	fpsrIDC = 1 << 7
	fpsrQC  = 1 << 27

	fpcrFZ16       = 1 << 19
	fpcrFZ         = 1 << 24
	fpcrDN         = 1 << 25
	fpcrAHP        = 1 << 26
	fpcrRModeShift = 22
	fpcrRMode      = 3 << fpcrRModeShift
	// fpcrCV is not an FPCR bit (bit 31 is RES0 and MSR masks it):
	// fpConvertSoft sets it in its copy of FPCR to select the pseudocode's
	// FPUnpackCV/FPRoundCV behaviour for half precision (AHP honoured,
	// FZ16 ignored).
	fpcrCV = 1 << 31
)

// fpFlush16 reports whether half-precision denormals are flushed.
func fpFlush16(fpcr uint32) bool { return fpcr&(fpcrFZ16|fpcrCV) == fpcrFZ16 }

// fpAHP reports whether half precision is the alternative format.
func fpAHP(fpcr uint32) bool { return fpcr&(fpcrAHP|fpcrCV) == fpcrAHP|fpcrCV }

// Rounding modes (FPCR.RMode values, plus ties-away and round-to-odd).
const (
	rmNearest  = 0
	rmPlusInf  = 1
	rmMinusInf = 2
	rmZero     = 3
	rmAway     = 4
	rmOdd      = 5
)

type fpFormat struct {
	frac uint // fraction bits
	exp  uint // exponent bits
	bias int
}

var fpFormats = [4]fpFormat{1: {10, 5, 15}, 2: {23, 8, 127}, 3: {52, 11, 1023}}

// FP value classes.
const (
	fpZero = iota
	fpFinite
	fpInf
	fpQNaN
	fpSNaN
)

// fpVal is an unpacked value: (-1)^sign * mant * 2^exp for fpFinite.
type fpVal struct {
	cls  uint8
	sign uint64
	exp  int
	mant uint64
}

func (v fpVal) isNaN() bool { return v.cls >= fpQNaN }

// fpUnpack is FPUnpack: classifies x and flushes single/double denormals to
// zero (setting IDC) when FPCR.FZ is set.
func fpUnpack(x uint64, sz uint8, fpcr uint32, fl *uint32) fpVal {
	f := &fpFormats[sz]
	expMask := uint64(1)<<f.exp - 1
	sign := x >> (f.frac + f.exp) & 1
	e := x >> f.frac & expMask
	frac := x & (uint64(1)<<f.frac - 1)
	switch e {
	case 0:
		if frac == 0 {
			return fpVal{cls: fpZero, sign: sign}
		}
		if sz != 1 && fpcr&fpcrFZ != 0 {
			*fl |= fpsrIDC
			return fpVal{cls: fpZero, sign: sign}
		}
		if sz == 1 && fpFlush16(fpcr) {
			return fpVal{cls: fpZero, sign: sign}
		}
		return fpVal{cls: fpFinite, sign: sign, exp: 1 - f.bias - int(f.frac), mant: frac}
	case expMask:
		if sz == 1 && fpAHP(fpcr) {
			break // alternative half precision: no infinities or NaNs
		}
		if frac == 0 {
			return fpVal{cls: fpInf, sign: sign}
		}
		if frac>>(f.frac-1) != 0 {
			return fpVal{cls: fpQNaN, sign: sign}
		}
		return fpVal{cls: fpSNaN, sign: sign}
	}
	return fpVal{cls: fpFinite, sign: sign, exp: int(e) - f.bias - int(f.frac), mant: frac | 1<<f.frac}
}

func fpSignShift(sz uint8) uint { return fpFormats[sz].frac + fpFormats[sz].exp }

func fpZeroBits(sign uint64, sz uint8) uint64 { return sign << fpSignShift(sz) }

func fpInfBits(sign uint64, sz uint8) uint64 {
	f := &fpFormats[sz]
	return sign<<(f.frac+f.exp) | (uint64(1)<<f.exp-1)<<f.frac
}

func fpMaxNormalBits(sign uint64, sz uint8) uint64 {
	f := &fpFormats[sz]
	return sign<<(f.frac+f.exp) | (uint64(1)<<f.exp-2)<<f.frac | (uint64(1)<<f.frac - 1)
}

func fpDefaultNaN(sz uint8) uint64 {
	f := &fpFormats[sz]
	return (uint64(1)<<f.exp-1)<<f.frac | 1<<(f.frac-1)
}

// fpProcessNaN is FPProcessNaN: quiets a signalling NaN (IOC) and applies
// FPCR.DN.
func fpProcessNaN(cls uint8, x uint64, sz uint8, fpcr uint32, fl *uint32) uint64 {
	if cls == fpSNaN {
		*fl |= fpsrIOC
		x |= 1 << (fpFormats[sz].frac - 1)
	}
	if fpcr&fpcrDN != 0 {
		return fpDefaultNaN(sz)
	}
	return x
}

// fpProcessNaNs is FPProcessNaNs: done is true when an operand is a NaN.
func fpProcessNaNs(va, vb fpVal, a, b uint64, sz uint8, fpcr uint32, fl *uint32) (uint64, bool) {
	switch {
	case va.cls == fpSNaN:
		return fpProcessNaN(va.cls, a, sz, fpcr, fl), true
	case vb.cls == fpSNaN:
		return fpProcessNaN(vb.cls, b, sz, fpcr, fl), true
	case va.cls == fpQNaN:
		return fpProcessNaN(va.cls, a, sz, fpcr, fl), true
	case vb.cls == fpQNaN:
		return fpProcessNaN(vb.cls, b, sz, fpcr, fl), true
	}
	return 0, false
}

// fpProcessNaNs3 is FPProcessNaNs3.
func fpProcessNaNs3(va, vb, vc fpVal, a, b, c uint64, sz uint8, fpcr uint32, fl *uint32) (uint64, bool) {
	switch {
	case va.cls == fpSNaN:
		return fpProcessNaN(va.cls, a, sz, fpcr, fl), true
	case vb.cls == fpSNaN:
		return fpProcessNaN(vb.cls, b, sz, fpcr, fl), true
	case vc.cls == fpSNaN:
		return fpProcessNaN(vc.cls, c, sz, fpcr, fl), true
	case va.cls == fpQNaN:
		return fpProcessNaN(va.cls, a, sz, fpcr, fl), true
	case vb.cls == fpQNaN:
		return fpProcessNaN(vb.cls, b, sz, fpcr, fl), true
	case vc.cls == fpQNaN:
		return fpProcessNaN(vc.cls, c, sz, fpcr, fl), true
	}
	return 0, false
}

// fpRound is FPRound for the value (-1)^sign * mant * 2^exp, mant != 0.
// The lowest bit of mant may be a "sticky" bit standing for discarded
// non-zero bits (round-to-odd jamming); callers guarantee that such a bit
// lies at least two places below the rounding position.
func fpRound(sign uint64, exp int, mant uint64, sz uint8, fpcr uint32, rm int, fl *uint32) uint64 {
	f := &fpFormats[sz]
	lz := bits.LeadingZeros64(mant)
	mant <<= uint(lz)
	e := exp - lz + 63 // exponent of the leading one
	emin := 1 - f.bias
	if (sz != 1 && fpcr&fpcrFZ != 0 || sz == 1 && fpFlush16(fpcr)) && e < emin {
		*fl |= fpsrUFC
		return fpZeroBits(sign, sz)
	}
	emax := f.bias
	ahp := sz == 1 && fpAHP(fpcr)
	if ahp {
		emax++ // the all-ones exponent holds normal numbers
	}
	if e > emax {
		if ahp {
			*fl |= fpsrIOC
			return sign<<15 | 0x7fff
		}
		return fpOverflow(sign, sz, rm, fl)
	}
	shift := 63 - int(f.frac)
	tiny := e < emin
	if tiny {
		shift += emin - e
	}
	var kept uint64
	var round, sticky bool
	switch {
	case shift < 64:
		kept = mant >> uint(shift)
		round = mant>>uint(shift-1)&1 != 0
		sticky = mant&(uint64(1)<<uint(shift-1)-1) != 0
	case shift == 64:
		round = true // bit 63 is set after normalisation
		sticky = mant<<1 != 0
	default:
		sticky = true
	}
	inexact := round || sticky
	var up bool
	switch rm {
	case rmNearest:
		up = round && (sticky || kept&1 != 0)
	case rmPlusInf:
		up = inexact && sign == 0
	case rmMinusInf:
		up = inexact && sign == 1
	case rmAway:
		up = round
	case rmOdd:
		if inexact {
			kept |= 1
		}
	}
	if up {
		kept++
	}
	var res uint64
	if tiny {
		// denormal: kept is the fraction; a carry into bit frac makes the
		// smallest normal number, which this encoding produces naturally.
		res = kept
		if inexact {
			*fl |= fpsrUFC
		}
	} else {
		res = uint64(e+f.bias-1)<<f.frac + kept
		switch {
		case ahp:
			if res>>f.frac >= uint64(1)<<f.exp {
				*fl |= fpsrIOC
				return sign<<15 | 0x7fff
			}
		case res>>f.frac >= uint64(1)<<f.exp-1:
			return fpOverflow(sign, sz, rm, fl)
		}
	}
	if inexact {
		*fl |= fpsrIXC
	}
	return sign<<(f.frac+f.exp) | res
}

func fpOverflow(sign uint64, sz uint8, rm int, fl *uint32) uint64 {
	*fl |= fpsrOFC | fpsrIXC
	switch {
	case rm == rmNearest || rm == rmAway,
		rm == rmPlusInf && sign == 0,
		rm == rmMinusInf && sign == 1:
		return fpInfBits(sign, sz)
	}
	return fpMaxNormalBits(sign, sz)
}

func fpRMode(fpcr uint32) int { return int(fpcr >> fpcrRModeShift & 3) }

// exactZero is the sign of an exact zero sum of non-zero operands.
func exactZero(sz uint8, fpcr uint32) uint64 {
	if fpRMode(fpcr) == rmMinusInf {
		return fpZeroBits(1, sz)
	}
	return fpZeroBits(0, sz)
}

// ---- 128-bit helpers ----

func shrJam(x uint64, d int) uint64 {
	switch {
	case d == 0:
		return x
	case d < 64:
		r := x >> uint(d)
		if x<<uint(64-d) != 0 {
			r |= 1
		}
		return r
	}
	if x != 0 {
		return 1
	}
	return 0
}

func shl128(h, l uint64, s int) (uint64, uint64) {
	switch {
	case s == 0:
		return h, l
	case s < 64:
		return h<<uint(s) | l>>uint(64-s), l << uint(s)
	}
	return l << uint(s-64), 0
}

func shr128Jam(h, l uint64, d int) (uint64, uint64) {
	switch {
	case d == 0:
		return h, l
	case d < 64:
		st := l<<uint(64-d) != 0
		l = l>>uint(d) | h<<uint(64-d)
		h >>= uint(d)
		if st {
			l |= 1
		}
		return h, l
	case d < 128:
		st := l != 0 || h<<uint(128-d) != 0
		l = h >> uint(d-64)
		if st {
			l |= 1
		}
		return 0, l
	}
	if h|l != 0 {
		return 0, 1
	}
	return 0, 0
}

func len128(h, l uint64) int {
	if h != 0 {
		return 64 + bits.Len64(h)
	}
	return bits.Len64(l)
}

// norm128 compresses a 128-bit value to 64 bits with a jammed sticky bit:
// value = m * 2^e (approximately, m odd when bits were dropped).
func norm128(h, l uint64) (m uint64, e int) {
	if h == 0 {
		return l, 0
	}
	lz := bits.LeadingZeros64(h)
	m = h<<uint(lz) | l>>uint(64-lz)
	if lz == 0 {
		m = h
	}
	if l<<uint(lz) != 0 {
		m |= 1
	}
	return m, 64 - lz
}

// ---- arithmetic ----

// fpAddSoft is FPAdd (sub = false) or FPSub (sub = true).
func fpAddSoft(a, b uint64, sz uint8, sub bool, fpcr uint32, fl *uint32) uint64 {
	va := fpUnpack(a, sz, fpcr, fl)
	vb := fpUnpack(b, sz, fpcr, fl)
	if r, done := fpProcessNaNs(va, vb, a, b, sz, fpcr, fl); done {
		return r
	}
	if sub {
		vb.sign ^= 1
	}
	switch {
	case va.cls == fpInf && vb.cls == fpInf && va.sign != vb.sign:
		*fl |= fpsrIOC
		return fpDefaultNaN(sz)
	case va.cls == fpInf:
		return fpInfBits(va.sign, sz)
	case vb.cls == fpInf:
		return fpInfBits(vb.sign, sz)
	case va.cls == fpZero && vb.cls == fpZero:
		if va.sign == vb.sign {
			return fpZeroBits(va.sign, sz)
		}
		return exactZero(sz, fpcr)
	case va.cls == fpZero:
		return fpRound(vb.sign, vb.exp, vb.mant, sz, fpcr, fpRMode(fpcr), fl)
	case vb.cls == fpZero:
		return fpRound(va.sign, va.exp, va.mant, sz, fpcr, fpRMode(fpcr), fl)
	}
	return fpAddFinite(va, vb, sz, fpcr, fl)
}

func fpAddFinite(va, vb fpVal, sz uint8, fpcr uint32, fl *uint32) uint64 {
	s := bits.LeadingZeros64(va.mant) - 1
	ma, ea := va.mant<<uint(s), va.exp-s
	s = bits.LeadingZeros64(vb.mant) - 1
	mb, eb := vb.mant<<uint(s), vb.exp-s
	sa, sb := va.sign, vb.sign
	if ea < eb || (ea == eb && ma < mb) {
		ma, mb, ea, eb, sa, sb = mb, ma, eb, ea, sb, sa
	}
	mb = shrJam(mb, ea-eb)
	var m uint64
	if sa == sb {
		m = ma + mb
	} else {
		m = ma - mb
	}
	if m == 0 {
		return exactZero(sz, fpcr)
	}
	return fpRound(sa, ea, m, sz, fpcr, fpRMode(fpcr), fl)
}

// fpMulSoft is FPMul (mulx = false) or FPMulX (0 * Inf = ±2).
func fpMulSoft(a, b uint64, sz uint8, mulx bool, fpcr uint32, fl *uint32) uint64 {
	va := fpUnpack(a, sz, fpcr, fl)
	vb := fpUnpack(b, sz, fpcr, fl)
	if r, done := fpProcessNaNs(va, vb, a, b, sz, fpcr, fl); done {
		return r
	}
	sign := va.sign ^ vb.sign
	switch {
	case va.cls == fpInf && vb.cls == fpZero, va.cls == fpZero && vb.cls == fpInf:
		if mulx {
			return fpTwo(sign, sz)
		}
		*fl |= fpsrIOC
		return fpDefaultNaN(sz)
	case va.cls == fpInf || vb.cls == fpInf:
		return fpInfBits(sign, sz)
	case va.cls == fpZero || vb.cls == fpZero:
		return fpZeroBits(sign, sz)
	}
	h, l := bits.Mul64(va.mant, vb.mant)
	m, e := norm128(h, l)
	return fpRound(sign, va.exp+vb.exp+e, m, sz, fpcr, fpRMode(fpcr), fl)
}

func fpTwo(sign uint64, sz uint8) uint64 {
	f := &fpFormats[sz]
	return sign<<(f.frac+f.exp) | uint64(f.bias+1)<<f.frac
}

// fpDivSoft is FPDiv.
func fpDivSoft(a, b uint64, sz uint8, fpcr uint32, fl *uint32) uint64 {
	va := fpUnpack(a, sz, fpcr, fl)
	vb := fpUnpack(b, sz, fpcr, fl)
	if r, done := fpProcessNaNs(va, vb, a, b, sz, fpcr, fl); done {
		return r
	}
	sign := va.sign ^ vb.sign
	switch {
	case va.cls == fpInf && vb.cls == fpInf, va.cls == fpZero && vb.cls == fpZero:
		*fl |= fpsrIOC
		return fpDefaultNaN(sz)
	case va.cls == fpInf:
		return fpInfBits(sign, sz)
	case vb.cls == fpZero:
		*fl |= fpsrDZC
		return fpInfBits(sign, sz)
	case va.cls == fpZero || vb.cls == fpInf:
		return fpZeroBits(sign, sz)
	}
	sa := 62 - (bits.Len64(va.mant) - 1)
	sb := 63 - (bits.Len64(vb.mant) - 1)
	A := va.mant << uint(sa)
	B := vb.mant << uint(sb)
	q, r := bits.Div64(A, 0, B)
	if r != 0 {
		q |= 1
	}
	return fpRound(sign, (va.exp-sa)-(vb.exp-sb)-64, q, sz, fpcr, fpRMode(fpcr), fl)
}

// isqrt128 returns floor(sqrt(hi * 2^64)) and whether it is exact, for
// hi >= 2^62 with its low 8 bits zero.
func isqrt128(hi uint64) (uint64, bool) {
	f := math.Sqrt(float64(hi)) * (1 << 32)
	var s uint64
	if f >= 1<<64 {
		s = math.MaxUint64
	} else {
		s = uint64(f)
	}
	for i := 0; i < 2; i++ {
		if s <= hi {
			s = hi + 1
		}
		q, _ := bits.Div64(hi, 0, s)
		s = s>>1 + q>>1 + (s & q & 1)
	}
	// fix up to the exact floor
	for {
		h, l := bits.Mul64(s, s)
		if h > hi || (h == hi && l > 0) {
			s--
			continue
		}
		break
	}
	for s != math.MaxUint64 {
		h, l := bits.Mul64(s+1, s+1)
		if h < hi || (h == hi && l == 0) {
			s++
			continue
		}
		break
	}
	h, l := bits.Mul64(s, s)
	return s, h == hi && l == 0
}

// fpSqrtSoft is FPSqrt.
func fpSqrtSoft(a uint64, sz uint8, fpcr uint32, fl *uint32) uint64 {
	va := fpUnpack(a, sz, fpcr, fl)
	switch {
	case va.isNaN():
		return fpProcessNaN(va.cls, a, sz, fpcr, fl)
	case va.cls == fpZero:
		return fpZeroBits(va.sign, sz)
	case va.sign == 1:
		*fl |= fpsrIOC
		return fpDefaultNaN(sz)
	case va.cls == fpInf:
		return fpInfBits(0, sz)
	}
	lz := bits.LeadingZeros64(va.mant)
	m := va.mant << uint(lz)
	e := va.exp - lz
	if e&1 != 0 {
		m >>= 1
		e++
	}
	s, exact := isqrt128(m)
	if !exact {
		s |= 1
	}
	return fpRound(0, (e-64)/2, s, sz, fpcr, fpRMode(fpcr), fl)
}

// fpMulAddSoft is FPMulAdd: addend + op1*op2 with a single rounding. The
// exact result is scaled by 2^scale before rounding (FRSQRTS uses -1).
func fpMulAddSoft(addend, op1, op2 uint64, sz uint8, scale int, fpcr uint32, fl *uint32) uint64 {
	va := fpUnpack(addend, sz, fpcr, fl)
	v1 := fpUnpack(op1, sz, fpcr, fl)
	v2 := fpUnpack(op2, sz, fpcr, fl)
	r, done := fpProcessNaNs3(va, v1, v2, addend, op1, op2, sz, fpcr, fl)
	inf1, inf2 := v1.cls == fpInf, v2.cls == fpInf
	zero1, zero2 := v1.cls == fpZero, v2.cls == fpZero
	if va.cls == fpQNaN && (inf1 && zero2 || zero1 && inf2) {
		*fl |= fpsrIOC
		return fpDefaultNaN(sz)
	}
	if done {
		return r
	}
	infA, zeroA := va.cls == fpInf, va.cls == fpZero
	infP, zeroP := inf1 || inf2, zero1 || zero2
	signP := v1.sign ^ v2.sign
	switch {
	case inf1 && zero2 || zero1 && inf2 || infA && infP && va.sign != signP:
		*fl |= fpsrIOC
		return fpDefaultNaN(sz)
	case infA && va.sign == 0 || infP && signP == 0:
		return fpInfBits(0, sz)
	case infA && va.sign == 1 || infP && signP == 1:
		return fpInfBits(1, sz)
	case zeroA && zeroP:
		if va.sign == signP {
			return fpZeroBits(va.sign, sz)
		}
		return exactZero(sz, fpcr)
	case zeroP:
		return fpRound(va.sign, va.exp+scale, va.mant, sz, fpcr, fpRMode(fpcr), fl)
	}
	ph, pl := bits.Mul64(v1.mant, v2.mant)
	ep := v1.exp + v2.exp
	if zeroA {
		m, e := norm128(ph, pl)
		return fpRound(signP, ep+e+scale, m, sz, fpcr, fpRMode(fpcr), fl)
	}
	// align both to a leading one at bit 125
	s := 126 - len128(ph, pl)
	ph, pl = shl128(ph, pl, s)
	ep -= s
	s = 126 - bits.Len64(va.mant)
	ch, cl := shl128(0, va.mant, s)
	ec := va.exp - s
	sp, sc := signP, va.sign
	if ec > ep || (ec == ep && (ch > ph || ch == ph && cl > pl)) {
		ph, pl, ch, cl, ep, ec, sp, sc = ch, cl, ph, pl, ec, ep, sc, sp
	}
	ch, cl = shr128Jam(ch, cl, ep-ec)
	var rh, rl uint64
	if sp == sc {
		var carry uint64
		rl, carry = bits.Add64(pl, cl, 0)
		rh, _ = bits.Add64(ph, ch, carry)
	} else {
		var borrow uint64
		rl, borrow = bits.Sub64(pl, cl, 0)
		rh, _ = bits.Sub64(ph, ch, borrow)
	}
	if rh == 0 && rl == 0 {
		return exactZero(sz, fpcr)
	}
	m, e := norm128(rh, rl)
	return fpRound(sp, ep+e+scale, m, sz, fpcr, fpRMode(fpcr), fl)
}

// ---- conversions ----

// fpToFixedSoft is FPToFixed: x scaled by 2^fbits, rounded with rm, to a
// signed or unsigned integer of width 16, 32 or 64 bits (saturating, IOC
// on NaN and overflow, IXC when inexact). The result is zero-extended from
// its width.
func fpToFixedSoft(x uint64, sz uint8, fbits int, unsigned bool, width uint, rm int, fpcr uint32, fl *uint32) uint64 {
	v := fpUnpack(x, sz, fpcr, fl)
	var mag uint64
	// frac: the scaled value has a non-zero fraction; gtHalf/eqHalf: the
	// fraction is above/exactly one half.
	var frac, gtHalf, eqHalf bool
	overflow := false
	switch v.cls {
	case fpQNaN, fpSNaN:
		*fl |= fpsrIOC
		return 0
	case fpInf:
		overflow = true
	case fpZero:
		return 0
	default:
		e := v.exp + fbits
		if e >= 0 {
			if e >= 64 || bits.Len64(v.mant)+e > 64 {
				overflow = true
			} else {
				mag = v.mant << uint(e)
			}
		} else {
			s := -e
			var rem uint64
			var hb uint64 // the bit worth 1/2
			if s >= 64 {
				mag = 0
				if s == 64 {
					hb = v.mant >> 63
					rem = v.mant << 1
				} else {
					rem = v.mant
				}
			} else {
				mag = v.mant >> uint(s)
				hb = v.mant >> uint(s-1) & 1
				rem = v.mant & (uint64(1)<<uint(s-1) - 1)
			}
			frac = hb != 0 || rem != 0
			gtHalf = hb != 0 && rem != 0
			eqHalf = hb != 0 && rem == 0
		}
	}
	if !overflow {
		var up bool
		switch rm {
		case rmNearest:
			up = gtHalf || eqHalf && mag&1 != 0
		case rmAway:
			up = gtHalf || eqHalf
		case rmPlusInf:
			up = frac && v.sign == 0
		case rmMinusInf:
			up = frac && v.sign == 1
		}
		if up {
			mag++
			if mag == 0 {
				overflow = true
			}
		}
	}
	var res uint64
	switch {
	case unsigned:
		max := uint64(math.MaxUint64) >> (64 - width)
		switch {
		case v.sign == 1 && (overflow || mag != 0):
			overflow, res = true, 0
		case overflow || mag > max:
			overflow, res = true, max
		default:
			res = mag
		}
	case v.sign == 0:
		max := uint64(1)<<(width-1) - 1
		if overflow || mag > max {
			overflow, res = true, max
		} else {
			res = mag
		}
	default:
		lim := uint64(1) << (width - 1)
		if overflow || mag > lim {
			overflow, res = true, lim
		} else {
			res = -mag
		}
		res &= uint64(math.MaxUint64) >> (64 - width)
	}
	if overflow {
		*fl |= fpsrIOC
	} else if frac {
		*fl |= fpsrIXC
	}
	return res
}

// fixedToFPSoft is FixedToFP: the integer v (signed when !unsigned, of 32
// or 64 bits) divided by 2^fbits, rounded to format sz.
func fixedToFPSoft(v uint64, is64, unsigned bool, fbits int, sz uint8, fpcr uint32, rm int, fl *uint32) uint64 {
	if !is64 {
		if unsigned {
			v = uint64(uint32(v))
		} else {
			v = uint64(int64(int32(v)))
		}
	}
	var sign uint64
	if !unsigned && int64(v) < 0 {
		sign, v = 1, -v
	}
	if v == 0 {
		return 0
	}
	return fpRound(sign, -fbits, v, sz, fpcr, rm, fl)
}

// fpConvertSoft is FPConvert from format from to format to.
func fpConvertSoft(x uint64, from, to uint8, fpcr uint32, rm int, fl *uint32) uint64 {
	fpcr |= fpcrCV
	v := fpUnpack(x, from, fpcr, fl)
	if to == 1 && fpcr&fpcrAHP != 0 {
		// alternative half precision has no NaN or infinity
		switch v.cls {
		case fpQNaN, fpSNaN:
			*fl |= fpsrIOC
			return fpZeroBits(v.sign, to)
		case fpInf:
			*fl |= fpsrIOC
			return v.sign<<15 | 0x7fff
		}
	}
	switch v.cls {
	case fpQNaN, fpSNaN:
		if v.cls == fpSNaN {
			*fl |= fpsrIOC
		}
		if fpcr&fpcrDN != 0 {
			return fpDefaultNaN(to)
		}
		// FPConvertNaN: keep sign and the top bits of the payload.
		ff, ft := &fpFormats[from], &fpFormats[to]
		payload := x & (uint64(1)<<(ff.frac-1) - 1) // below the quiet bit
		if ft.frac > ff.frac {
			payload <<= ft.frac - ff.frac
		} else {
			payload >>= ff.frac - ft.frac
		}
		return v.sign<<(ft.frac+ft.exp) | (uint64(1)<<ft.exp-1)<<ft.frac | 1<<(ft.frac-1) | payload
	case fpInf:
		return fpInfBits(v.sign, to)
	case fpZero:
		return fpZeroBits(v.sign, to)
	}
	return fpRound(v.sign, v.exp, v.mant, to, fpcr, rm, fl)
}

// fpRoundIntSoft is FPRoundInt: round to an integral value in the same
// format; exact selects FRINTX behaviour (IXC when the value changes).
func fpRoundIntSoft(x uint64, sz uint8, rm int, exact bool, fpcr uint32, fl *uint32) uint64 {
	v := fpUnpack(x, sz, fpcr, fl)
	switch v.cls {
	case fpQNaN, fpSNaN:
		return fpProcessNaN(v.cls, x, sz, fpcr, fl)
	case fpInf:
		return fpInfBits(v.sign, sz)
	case fpZero:
		return fpZeroBits(v.sign, sz)
	}
	if v.exp >= 0 {
		return x // already integral
	}
	s := -v.exp
	var mag, hb, rem uint64
	if s >= 64 {
		rem = v.mant
	} else {
		mag = v.mant >> uint(s)
		hb = v.mant >> uint(s-1) & 1
		rem = v.mant & (uint64(1)<<uint(s-1) - 1)
	}
	frac := hb != 0 || rem != 0
	var up bool
	switch rm {
	case rmNearest:
		up = hb != 0 && (rem != 0 || mag&1 != 0)
	case rmAway:
		up = hb != 0
	case rmPlusInf:
		up = frac && v.sign == 0
	case rmMinusInf:
		up = frac && v.sign == 1
	}
	if up {
		mag++
	}
	if exact && frac {
		*fl |= fpsrIXC
	}
	if mag == 0 {
		return fpZeroBits(v.sign, sz)
	}
	var dummy uint32
	return fpRound(v.sign, 0, mag, sz, 0, rmNearest, &dummy)
}

// fpCompareSoft is FPCompare: the NZCV nibble (unordered 0011, equal 0110,
// less 1000, greater 0010). signal: FCMPE (IOC on any NaN).
func fpCompareSoft(a, b uint64, sz uint8, signal bool, fpcr uint32, fl *uint32) uint64 {
	va := fpUnpack(a, sz, fpcr, fl)
	vb := fpUnpack(b, sz, fpcr, fl)
	if va.isNaN() || vb.isNaN() {
		if signal || va.cls == fpSNaN || vb.cls == fpSNaN {
			*fl |= fpsrIOC
		}
		return 0b0011
	}
	switch c := fpCmpVal(va, vb); {
	case c == 0:
		return 0b0110
	case c < 0:
		return 0b1000
	}
	return 0b0010
}

// fpCmpVal compares two non-NaN unpacked values.
func fpCmpVal(a, b fpVal) int {
	ka, kb := fpKey(a), fpKey(b)
	switch {
	case ka.hi != kb.hi:
		if ka.hi < kb.hi {
			return -1
		}
		return 1
	case ka.lo != kb.lo:
		if ka.lo < kb.lo {
			return -1
		}
		return 1
	}
	return 0
}

type cmpKey struct {
	hi int64
	lo int64
}

// fpKey maps a non-NaN value to a totally ordered key (zeros equal).
func fpKey(v fpVal) cmpKey {
	var k cmpKey
	switch v.cls {
	case fpZero:
		return k
	case fpInf:
		k = cmpKey{math.MaxInt64, 0}
	default:
		l := bits.Len64(v.mant)
		// magnitude order: exponent of the leading one, then mantissa
		// normalised to a leading one at bit 62
		k = cmpKey{int64(v.exp+l) + 1<<20, int64(v.mant << uint(63-l))}
	}
	if v.sign == 1 {
		k.hi, k.lo = -k.hi, -k.lo
	}
	return k
}

// fpMaxMinSoft is FPMax/FPMin, or FPMaxNum/FPMinNum when num is set.
func fpMaxMinSoft(a, b uint64, sz uint8, max, num bool, fpcr uint32, fl *uint32) uint64 {
	va := fpUnpack(a, sz, fpcr, fl)
	vb := fpUnpack(b, sz, fpcr, fl)
	if num {
		inf := fpInfBits(0, sz)
		if max {
			inf = fpInfBits(1, sz)
		}
		if va.cls == fpQNaN && vb.cls != fpQNaN {
			a = inf
			va = fpUnpack(a, sz, fpcr, fl)
		} else if va.cls != fpQNaN && vb.cls == fpQNaN {
			b = inf
			vb = fpUnpack(b, sz, fpcr, fl)
		}
	}
	if r, done := fpProcessNaNs(va, vb, a, b, sz, fpcr, fl); done {
		return r
	}
	c := fpCmpVal(va, vb)
	pick := vb
	if max && c > 0 || !max && c < 0 {
		pick = va
	}
	switch pick.cls {
	case fpInf:
		return fpInfBits(pick.sign, sz)
	case fpZero:
		if va.cls == fpZero && vb.cls == fpZero {
			if max {
				return fpZeroBits(va.sign&vb.sign, sz)
			}
			return fpZeroBits(va.sign|vb.sign, sz)
		}
		return fpZeroBits(pick.sign, sz)
	}
	return fpRound(pick.sign, pick.exp, pick.mant, sz, fpcr, fpRMode(fpcr), fl)
}
