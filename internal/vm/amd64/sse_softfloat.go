package amd64

import "math/bits"

// A small IEEE-754 soft-float core shared by SSE (when MXCSR asks for
// anything but the host's default behaviour, or when exception flags must
// be computed) and by the x87 unit (80-bit extended precision with
// precision control). Values are unpacked into a 64-bit normalised
// significand; operations compute a 128-bit intermediate that is exact up
// to a sticky bit and round once (roundPack). It follows the x86 rules:
// tininess is detected after rounding, a masked underflow is flagged only
// when the tiny result is also inexact, the default NaN is the negative
// "real indefinite", FTZ flushes tiny results to a signed zero (flagging
// UE and PE) and DAZ reads denormal operands as signed zeros without DE.

// Exception flag bits, identical in MXCSR (bits 0-5) and the x87 FSW.
const (
	fpIE  = 1 << 0 // invalid operation
	fpDE  = 1 << 1 // denormal operand
	fpZE  = 1 << 2 // divide by zero
	fpOE  = 1 << 3 // overflow
	fpUE  = 1 << 4 // underflow
	fpPE  = 1 << 5 // precision (inexact)
	fpAll = 0x3F
)

// Rounding control values (MXCSR.RC and FCW.RC use the same encoding).
const (
	rcNearest = 0
	rcDown    = 1
	rcUp      = 2
	rcZero    = 3
)

// fpFormat describes a binary floating-point format for rounding: prec is
// the precision in bits including the leading bit (for x87 this is the
// precision-control setting; denormal results then round prec bits below
// 2^emin, as the hardware does), emin/emax the unbiased exponent range of
// normal numbers.
type fpFormat struct {
	prec       int
	emin, emax int32
}

var (
	fmtF32 = fpFormat{24, -126, 127}
	fmtF64 = fpFormat{53, -1022, 1023}
	fmtF80 = fpFormat{64, -16382, 16383}
)

// denorm returns the significand of a finite u aligned to exponent emin
// when u lies below the normal range (u comes from unpacking, so the shift
// loses no bits).
func denorm(u ufp, emin int32) uint64 {
	if u.exp >= emin {
		return u.mant
	}
	if d := emin - u.exp; d < 64 {
		return u.mant >> d
	}
	return 0
}

// Value classes of an unpacked number.
const (
	clsZero   uint8 = iota
	clsFinite       // finite non-zero
	clsInf
	clsQNaN
	clsSNaN // also x87 unsupported encodings (pseudo-NaN, unnormal …)
)

// ufp is an unpacked floating-point value. For clsFinite the value is
// mant × 2^(exp-63); after unpacking mant is normalised (bit 63 set), a
// rounded denormal result has exp == fmt.emin and bit 63 clear. For NaNs
// mant holds the fraction left-aligned: bit 63 is the quiet bit, followed
// by the payload, so conversions between formats keep the top payload bits
// as x86 does.
type ufp struct {
	cls  uint8
	neg  bool
	exp  int32
	mant uint64
}

// fpEnv is the floating-point environment of one operation and the
// exceptions it raised.
type fpEnv struct {
	rc         uint8
	ftz        bool // SSE flush-to-zero
	daz        bool // SSE denormals-are-zero
	ueUnmasked bool // underflow unmasked: flag tiny results even when exact
	// oeBias, ueBias: x87 with OE/UE unmasked and a register destination:
	// an overflowing or tiny result is delivered with its exponent
	// divided by 2^24576 (multiplied for underflow), not infinity or a
	// denormal (SDM vol. 1, 4.9.1.4 and 4.9.1.5).
	oeBias, ueBias bool
	flags          uint32
	up             bool // the last rounding incremented the significand (x87 C1)
}

// priority applies x86's exception priority: an invalid operation or a
// division by zero suppresses the (lower-priority) denormal-operand flag.
func (env *fpEnv) priority() {
	if env.flags&(fpIE|fpZE) != 0 {
		env.flags &^= fpDE
	}
}

// defaultNaN is x86's QNaN "real indefinite".
var defaultNaN = ufp{cls: clsQNaN, neg: true, mant: 1 << 63}

func (u ufp) isNaN() bool { return u.cls >= clsQNaN }

// unsupported reports an x87 unsupported encoding (pseudo-NaN,
// pseudo-infinity, unnormal), unpacked as an SNaN without payload.
func (u ufp) unsupported() bool { return u.cls == clsSNaN && u.mant == 0 }

// quiet returns the NaN u made quiet.
func (u ufp) quiet() ufp {
	u.cls = clsQNaN
	u.mant |= 1 << 63
	return u
}

// shiftRightJam128 shifts hi:lo right by n, ORing every bit shifted out
// into bit 0.
func shiftRightJam128(hi, lo uint64, n int32) (uint64, uint64) {
	switch {
	case n <= 0:
		return hi, lo
	case n < 64:
		sticky := lo << (64 - n)
		lo = lo>>n | hi<<(64-n)
		hi >>= n
		if sticky != 0 {
			lo |= 1
		}
		return hi, lo
	case n < 128:
		sticky := lo | hi<<(128-n)
		if n == 64 {
			sticky = lo
		}
		lo = hi >> (n - 64)
		if sticky != 0 {
			lo |= 1
		}
		return 0, lo
	default:
		if hi|lo != 0 {
			return 0, 1
		}
		return 0, 0
	}
}

// roundPack rounds the value (-1)^neg × hi:lo × 2^(e-127), where hi has
// bit 63 set, to format f under env and returns the result.
func (env *fpEnv) roundPack(neg bool, e int32, hi, lo uint64, f *fpFormat) ufp {
	shift := 128 - f.prec
	tiny := false
	if e < f.emin {
		// Tininess after rounding: the result rounded to f.prec bits
		// with an unbounded exponent is below the smallest normal.
		tiny = true
		if e == f.emin-1 {
			if _, _, _, carry := roundBits(neg, hi, lo, uint(shift), env.rc); carry {
				tiny = false
			}
		}
		if env.ftz {
			env.flags |= fpUE | fpPE
			return ufp{cls: clsZero, neg: neg}
		}
		if tiny && env.ueBias {
			m, inexact, up, carry := roundBits(neg, hi, lo, uint(shift), env.rc)
			env.up = up
			if carry {
				m = 1 << 63
				e++
			}
			env.flags |= fpUE
			if inexact {
				env.flags |= fpPE
			}
			return ufp{cls: clsFinite, neg: neg, exp: e + x87BiasAdjust, mant: m}
		}
		// Denormalise to emin; the rounding position stays prec bits
		// below emin (for x87 with reduced precision control too).
		hi, lo = shiftRightJam128(hi, lo, f.emin-e)
		e = f.emin
	}
	m, inexact, up, carry := roundBits(neg, hi, lo, uint(shift), env.rc)
	env.up = up
	if carry {
		m = 1 << 63
		e++
	}
	if e > f.emax && env.oeBias {
		env.flags |= fpOE
		if inexact {
			env.flags |= fpPE
		}
		return ufp{cls: clsFinite, neg: neg, exp: e - x87BiasAdjust, mant: m}
	}
	if e > f.emax {
		env.flags |= fpOE | fpPE
		toInf := env.rc == rcNearest || (env.rc == rcDown && neg) || (env.rc == rcUp && !neg)
		env.up = toInf
		if toInf {
			return ufp{cls: clsInf, neg: neg}
		}
		return ufp{cls: clsFinite, neg: neg, exp: f.emax, mant: ^uint64(0) << (64 - f.prec)}
	}
	if inexact {
		env.flags |= fpPE
	}
	if tiny && (inexact || env.ueUnmasked) {
		env.flags |= fpUE
	}
	if m == 0 {
		return ufp{cls: clsZero, neg: neg}
	}
	return ufp{cls: clsFinite, neg: neg, exp: e, mant: m}
}

// roundBits rounds hi:lo to its top 128-shift bits (64 <= shift < 128)
// and returns them left-aligned in a uint64, whether bits were lost,
// whether it was incremented, and whether the significand overflowed (the
// caller then uses 1<<63 and increments the exponent).
func roundBits(neg bool, hi, lo uint64, shift uint, rc uint8) (m uint64, inexact, incr, carry bool) {
	sh := shift - 64 // 0..63
	var kept, remHi, halfHi, halfLo uint64
	if sh == 0 {
		kept, halfLo = hi, 1<<63
	} else {
		kept = hi >> sh
		remHi = hi & (1<<sh - 1)
		halfHi = 1 << (sh - 1)
	}
	remLo := lo
	inexact = remHi|remLo != 0
	switch rc {
	case rcNearest:
		if remHi > halfHi || (remHi == halfHi && remLo > halfLo) {
			incr = true
		} else if remHi == halfHi && remLo == halfLo {
			incr = kept&1 == 1
		}
	case rcDown:
		incr = neg && inexact
	case rcUp:
		incr = !neg && inexact
	}
	if incr {
		kept++
		if sh == 0 {
			if kept == 0 {
				return 1 << 63, inexact, true, true
			}
		} else if kept>>(64-sh) != 0 {
			return 1 << 63, inexact, true, true
		}
	}
	return kept << sh, inexact, incr, false
}

// normRound normalises hi:lo (not zero) with leading-bit exponent e and
// rounds it.
func (env *fpEnv) normRound(neg bool, e int32, hi, lo uint64, f *fpFormat) ufp {
	var lz int
	if hi != 0 {
		lz = bits.LeadingZeros64(hi)
	} else {
		lz = 64 + bits.LeadingZeros64(lo)
	}
	switch {
	case lz == 0:
	case lz < 64:
		hi = hi<<lz | lo>>(64-lz)
		lo <<= lz
	default:
		hi = lo << (lz - 64)
		lo = 0
	}
	return env.roundPack(neg, e-int32(lz), hi, lo, f)
}

// round re-rounds a value to format f (narrowing conversions, precision
// control); non-finite values are returned unchanged.
func (env *fpEnv) round(a ufp, f *fpFormat) ufp {
	if a.cls != clsFinite {
		return a
	}
	return env.normRound(a.neg, a.exp, a.mant, 0, f)
}

// nanSSE picks the NaN result of a two-operand SSE operation: the first
// source if it is a NaN, else the second, made quiet (SDM vol. 1 table
// 4-7). It flags IE for a signalling NaN.
func (env *fpEnv) nanSSE(a, b ufp) ufp {
	if a.cls == clsSNaN || b.cls == clsSNaN {
		env.flags |= fpIE
	}
	if a.isNaN() {
		return a.quiet()
	}
	return b.quiet()
}

// nanX87 picks the NaN result of a two-operand x87 operation: a QNaN over
// an SNaN, otherwise the NaN with the larger significand (SDM vol. 1
// table 4-7). Unsupported encodings produce the default NaN.
func (env *fpEnv) nanX87(a, b ufp) ufp {
	if a.cls == clsSNaN || b.cls == clsSNaN {
		env.flags |= fpIE
	}
	if a.unsupported() || b.unsupported() {
		return defaultNaN
	}
	if !a.isNaN() {
		return b.quiet()
	}
	if !b.isNaN() {
		return a.quiet()
	}
	if a.cls == clsQNaN && b.cls == clsSNaN {
		return a
	}
	if b.cls == clsQNaN && a.cls == clsSNaN {
		return b
	}
	if a.mant<<1 > b.mant<<1 || (a.mant<<1 == b.mant<<1 && !a.neg) {
		return a.quiet()
	}
	return b.quiet()
}

// add returns a+b (or a-b when sub). Both are not NaN.
func (env *fpEnv) add(a, b ufp, sub bool, f *fpFormat) ufp {
	if sub {
		b.neg = !b.neg
	}
	switch {
	case a.cls == clsInf && b.cls == clsInf:
		if a.neg != b.neg {
			env.flags |= fpIE
			return defaultNaN
		}
		return a
	case a.cls == clsInf:
		return a
	case b.cls == clsInf:
		return b
	case a.cls == clsZero && b.cls == clsZero:
		if a.neg == b.neg {
			return a
		}
		return ufp{cls: clsZero, neg: env.rc == rcDown}
	case a.cls == clsZero:
		return env.round(b, f)
	case b.cls == clsZero:
		return env.round(a, f)
	}
	if a.exp < b.exp || (a.exp == b.exp && a.mant < b.mant) {
		a, b = b, a
	}
	bhi, blo := shiftRightJam128(b.mant, 0, a.exp-b.exp)
	if a.neg == b.neg {
		lo := blo
		hi, c := bits.Add64(a.mant, bhi, 0)
		e := a.exp
		if c != 0 {
			sticky := lo & 1
			lo = lo>>1 | hi<<63 | sticky
			hi = hi>>1 | 1<<63
			e++
		}
		return env.roundPack(a.neg, e, hi, lo, f)
	}
	lo, bw := bits.Sub64(0, blo, 0)
	hi, _ := bits.Sub64(a.mant, bhi, bw)
	if hi == 0 && lo == 0 {
		return ufp{cls: clsZero, neg: env.rc == rcDown}
	}
	return env.normRound(a.neg, a.exp, hi, lo, f)
}

// mul returns a×b. Both are not NaN.
func (env *fpEnv) mul(a, b ufp, f *fpFormat) ufp {
	neg := a.neg != b.neg
	switch {
	case a.cls == clsInf || b.cls == clsInf:
		if a.cls == clsZero || b.cls == clsZero {
			env.flags |= fpIE
			return defaultNaN
		}
		return ufp{cls: clsInf, neg: neg}
	case a.cls == clsZero || b.cls == clsZero:
		return ufp{cls: clsZero, neg: neg}
	}
	hi, lo := bits.Mul64(a.mant, b.mant)
	e := a.exp + b.exp + 1
	if hi>>63 == 0 {
		hi = hi<<1 | lo>>63
		lo <<= 1
		e--
	}
	return env.roundPack(neg, e, hi, lo, f)
}

// div returns a/b. Both are not NaN.
func (env *fpEnv) div(a, b ufp, f *fpFormat) ufp {
	neg := a.neg != b.neg
	switch {
	case a.cls == clsInf && b.cls == clsInf, a.cls == clsZero && b.cls == clsZero:
		env.flags |= fpIE
		return defaultNaN
	case a.cls == clsInf, b.cls == clsZero:
		if a.cls != clsInf {
			env.flags |= fpZE // only a finite dividend divides by zero
		}
		return ufp{cls: clsInf, neg: neg}
	case a.cls == clsZero, b.cls == clsInf:
		return ufp{cls: clsZero, neg: neg}
	}
	// q = (a.mant << 64) / b.mant has 64 or 65 bits; a second step gives
	// 64 more bits and the final remainder is the sticky bit.
	var qhi uint64
	r := a.mant
	if r >= b.mant {
		qhi = 1
		r -= b.mant
	}
	q1, r := bits.Div64(r, 0, b.mant)
	q2, r := bits.Div64(r, 0, b.mant)
	var hi, lo uint64
	e := a.exp - b.exp
	if qhi != 0 {
		hi = 1<<63 | q1>>1
		lo = q1<<63 | q2>>1 | q2&1
	} else {
		hi, lo = q1, q2
		e--
	}
	if r != 0 {
		lo |= 1
	}
	return env.roundPack(neg, e, hi, lo, f)
}

// sqrt returns √a. a is not NaN.
func (env *fpEnv) sqrt(a ufp, f *fpFormat) ufp {
	switch {
	case a.cls == clsZero:
		return a
	case a.neg:
		env.flags |= fpIE
		return defaultNaN
	case a.cls == clsInf:
		return a
	}
	// value = N × 2^(2k) with N = mant<<64 (exp odd) or mant<<63 (exp
	// even), so N is in [2^126, 2^128) and √N in [2^63, 2^64).
	var nhi, nlo uint64
	var k int32
	if a.exp&1 != 0 {
		nhi, nlo = a.mant, 0
		k = (a.exp - 127) / 2
	} else {
		nhi, nlo = a.mant>>1, a.mant<<63
		k = (a.exp - 126) / 2
	}
	s, rhi, rlo := isqrt128(nhi, nlo)
	// The fraction √N - s is 0 when r == 0, above one half when r > s
	// (it can never be exactly one half), else below one half.
	var lo uint64
	switch {
	case rhi == 0 && rlo == 0:
	case rhi != 0 || rlo > s:
		lo = 1<<63 | 1
	default:
		lo = 1
	}
	return env.roundPack(false, 63+k, s, lo, f)
}

// isqrt128 returns s = ⌊√n⌋ and n - s² for n = nhi:nlo.
func isqrt128(nhi, nlo uint64) (s, rhi, rlo uint64) {
	// Digit-by-digit square root on 128-bit values.
	var reshi, reslo uint64
	bhi, blo := uint64(1)<<62, uint64(0)
	for bhi|blo != 0 {
		// t = res + bit
		tlo, c := bits.Add64(reslo, blo, 0)
		thi, _ := bits.Add64(reshi, bhi, c)
		// res >>= 1
		reslo = reslo>>1 | reshi<<63
		reshi >>= 1
		if nhi > thi || (nhi == thi && nlo >= tlo) {
			var bw uint64
			nlo, bw = bits.Sub64(nlo, tlo, 0)
			nhi, _ = bits.Sub64(nhi, thi, bw)
			reslo, c = bits.Add64(reslo, blo, 0)
			reshi, _ = bits.Add64(reshi, bhi, c)
		}
		// bit >>= 2
		blo = blo>>2 | bhi<<62
		bhi >>= 2
	}
	return reslo, nhi, nlo
}

// compare orders a and b: -1 less, 0 equal, 1 greater, 2 unordered.
// signalling: any NaN raises IE (COMISS, CMPLT…); otherwise only SNaN.
func (env *fpEnv) compare(a, b ufp, signalling bool) int {
	if a.isNaN() || b.isNaN() {
		if signalling || a.cls == clsSNaN || b.cls == clsSNaN {
			env.flags |= fpIE
		}
		return 2
	}
	if a.cls == clsZero && b.cls == clsZero {
		return 0
	}
	switch {
	case a.sortKeyLess(b):
		return -1
	case b.sortKeyLess(a):
		return 1
	}
	return 0
}

// sortKeyLess reports a < b for non-NaN values.
func (a ufp) sortKeyLess(b ufp) bool {
	if a.neg != b.neg {
		return a.neg && !(a.cls == clsZero && b.cls == clsZero)
	}
	if a.neg {
		return b.magLess(a)
	}
	return a.magLess(b)
}

// magLess reports |a| < |b| for non-NaN values.
func (a ufp) magLess(b ufp) bool {
	if a.cls != b.cls {
		return a.cls < b.cls // zero < finite < inf
	}
	if a.cls != clsFinite {
		return false
	}
	if a.exp != b.exp {
		return a.exp < b.exp
	}
	return a.mant < b.mant
}

// toInt converts a to a signed integer of size bits (16, 32, 64) using
// rounding mode rc. It returns the x86 "integer indefinite" (the minimum
// value) and IE when a is NaN or out of range, and flags PE when inexact.
func (env *fpEnv) toInt(a ufp, size int, rc uint8) int64 {
	indefinite := int64(-1) << (size - 1)
	switch a.cls {
	case clsZero:
		return 0
	case clsInf, clsQNaN, clsSNaN:
		env.flags |= fpIE
		return indefinite
	}
	if a.exp >= 64 {
		env.flags |= fpIE
		return indefinite
	}
	ip, frac := splitInt(a)
	inexact := frac != 0
	incr := false
	switch rc {
	case rcNearest:
		incr = frac > 1<<63 || (frac == 1<<63 && ip&1 == 1)
	case rcDown:
		incr = a.neg && inexact
	case rcUp:
		incr = !a.neg && inexact
	}
	env.up = incr
	if incr {
		ip++
		if ip == 0 { // 2^64
			env.flags |= fpIE
			env.up = false
			return indefinite
		}
	}
	limit := uint64(1) << (size - 1) // magnitude limit (exclusive for positive)
	if (!a.neg && ip >= limit) || (a.neg && ip > limit) {
		env.flags |= fpIE
		env.up = false
		return indefinite
	}
	if inexact {
		env.flags |= fpPE
	}
	if a.neg {
		return -int64(ip)
	}
	return int64(ip)
}

// splitInt splits a finite a with exp < 64 into its integer part and its
// fraction left-aligned in 64 bits (only "zero", "below one half", "one
// half" and "above one half" matter when the fraction is not exact).
func splitInt(a ufp) (ip, frac uint64) {
	switch {
	case a.exp < -1:
		return 0, 1
	case a.exp == -1:
		return 0, a.mant
	case a.exp == 63:
		return a.mant, 0
	}
	return a.mant >> (63 - a.exp), a.mant << (a.exp + 1)
}

// fromInt converts a signed 64-bit integer to format f.
func (env *fpEnv) fromInt(v int64, f *fpFormat) ufp {
	if v == 0 {
		return ufp{cls: clsZero}
	}
	neg := v < 0
	m := uint64(v)
	if neg {
		m = -m
	}
	return env.normRound(neg, 63, m, 0, f)
}

// roundInt rounds a to an integral value in the same format (ROUNDSD,
// FRNDINT), flagging PE when inexact.
func (env *fpEnv) roundInt(a ufp, rc uint8) ufp {
	if a.cls != clsFinite || a.exp >= 63 {
		return a
	}
	ip, frac := splitInt(a)
	inexact := frac != 0
	incr := false
	switch rc {
	case rcNearest:
		incr = frac > 1<<63 || (frac == 1<<63 && ip&1 == 1)
	case rcDown:
		incr = a.neg && inexact
	case rcUp:
		incr = !a.neg && inexact
	}
	if incr {
		ip++
	}
	if inexact {
		env.flags |= fpPE
	}
	env.up = incr
	if ip == 0 {
		return ufp{cls: clsZero, neg: a.neg}
	}
	lz := bits.LeadingZeros64(ip)
	return ufp{cls: clsFinite, neg: a.neg, exp: 63 - int32(lz), mant: ip << lz}
}

// ---- packing and unpacking ----

// unpackF64 unpacks IEEE double bits. With env.daz denormals read as
// zero; otherwise DE is flagged for a denormal operand.
func (env *fpEnv) unpackF64(x uint64) ufp {
	neg := x>>63 != 0
	be := int32(x>>52) & 0x7FF
	frac := x & (1<<52 - 1)
	switch be {
	case 0:
		if frac == 0 || env.daz {
			return ufp{cls: clsZero, neg: neg}
		}
		env.flags |= fpDE
		m := frac << 11
		lz := bits.LeadingZeros64(m)
		return ufp{cls: clsFinite, neg: neg, exp: -1022 - int32(lz), mant: m << lz}
	case 0x7FF:
		if frac == 0 {
			return ufp{cls: clsInf, neg: neg}
		}
		c := clsSNaN
		if frac>>51 != 0 {
			c = clsQNaN
		}
		return ufp{cls: c, neg: neg, mant: frac << 12}
	}
	return ufp{cls: clsFinite, neg: neg, exp: be - 1023, mant: 1<<63 | frac<<11}
}

// packF64 packs a value rounded for fmtF64.
func packF64(u ufp) uint64 {
	var s uint64
	if u.neg {
		s = 1 << 63
	}
	switch u.cls {
	case clsZero:
		return s
	case clsInf:
		return s | 0x7FF<<52
	case clsQNaN, clsSNaN:
		return s | 0x7FF<<52 | u.mant>>12
	}
	if u.mant>>63 == 0 || u.exp < -1022 { // denormal
		return s | denorm(u, -1022)>>11
	}
	return s | uint64(u.exp+1023)<<52 | (u.mant>>11)&(1<<52-1)
}

// unpackF32 is unpackF64 for single precision.
func (env *fpEnv) unpackF32(x uint32) ufp {
	neg := x>>31 != 0
	be := int32(x>>23) & 0xFF
	frac := uint64(x & (1<<23 - 1))
	switch be {
	case 0:
		if frac == 0 || env.daz {
			return ufp{cls: clsZero, neg: neg}
		}
		env.flags |= fpDE
		m := frac << 40
		lz := bits.LeadingZeros64(m)
		return ufp{cls: clsFinite, neg: neg, exp: -126 - int32(lz), mant: m << lz}
	case 0xFF:
		if frac == 0 {
			return ufp{cls: clsInf, neg: neg}
		}
		c := clsSNaN
		if frac>>22 != 0 {
			c = clsQNaN
		}
		return ufp{cls: c, neg: neg, mant: frac << 41}
	}
	return ufp{cls: clsFinite, neg: neg, exp: be - 127, mant: 1<<63 | frac<<40}
}

// packF32 packs a value rounded for fmtF32.
func packF32(u ufp) uint32 {
	var s uint32
	if u.neg {
		s = 1 << 31
	}
	switch u.cls {
	case clsZero:
		return s
	case clsInf:
		return s | 0xFF<<23
	case clsQNaN, clsSNaN:
		return s | 0xFF<<23 | uint32(u.mant>>41)
	}
	if u.mant>>63 == 0 || u.exp < -126 {
		return s | uint32(denorm(u, -126)>>40)
	}
	return s | uint32(u.exp+127)<<23 | uint32(u.mant>>40)&(1<<23-1)
}

// unpackF80 unpacks an x87 extended value. Pseudo-NaNs, pseudo-infinities
// and unnormals are unsupported encodings and unpack as an SNaN without
// payload (they raise IE and produce the default NaN, as on every x87
// since the 387). Denormals and pseudo-denormals flag DE.
func (env *fpEnv) unpackF80(x F80) ufp {
	neg := x.SignExp>>15 != 0
	be := int32(x.SignExp & 0x7FFF)
	m := x.Mant
	switch {
	case be == 0:
		if m == 0 {
			return ufp{cls: clsZero, neg: neg}
		}
		env.flags |= fpDE
		lz := bits.LeadingZeros64(m)
		return ufp{cls: clsFinite, neg: neg, exp: -16382 - int32(lz), mant: m << lz}
	case m>>63 == 0:
		return ufp{cls: clsSNaN, neg: neg} // unsupported (mant 0)
	case be == 0x7FFF:
		if m<<1 == 0 {
			return ufp{cls: clsInf, neg: neg}
		}
		c := clsSNaN
		if m>>62&1 != 0 {
			c = clsQNaN
		}
		return ufp{cls: c, neg: neg, mant: m << 1}
	}
	return ufp{cls: clsFinite, neg: neg, exp: be - 16383, mant: m}
}

// packF80 packs a value rounded for an fmtF80-range format.
func packF80(u ufp) F80 {
	var s uint16
	if u.neg {
		s = 1 << 15
	}
	switch u.cls {
	case clsZero:
		return F80{SignExp: s}
	case clsInf:
		return F80{Mant: 1 << 63, SignExp: s | 0x7FFF}
	case clsQNaN, clsSNaN:
		return F80{Mant: 1<<63 | u.mant>>1, SignExp: s | 0x7FFF}
	}
	if u.mant>>63 == 0 || u.exp < -16382 {
		return F80{Mant: denorm(u, -16382), SignExp: s}
	}
	return F80{Mant: u.mant, SignExp: s | uint16(u.exp+16383)}
}
