package amd64

import (
	"math"
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// x87 transcendental instructions, computed in a 128-bit-significand
// software format (xf) and rounded once to extended precision with FCW's
// rounding control. Hardware documents these as accurate to within one
// unit in the last place; uvm returns the correctly rounded result of
// the exact function, which is what current CPUs deliver in nearly all
// cases. Argument reduction for FSIN/FCOS/FSINCOS/FPTAN uses a 128-bit π
// (Intel CPUs reduce with a 66-bit π, so results for huge arguments
// differ there). Everything here is allocation-free.

// xf is a value (-1)^neg × (hi:lo / 2^127) × 2^exp with hi's top bit set,
// or zero when hi == lo == 0. Operations truncate.
type xf struct {
	neg    bool
	exp    int32
	hi, lo uint64
}

func (a xf) isZero() bool { return a.hi|a.lo == 0 }

// xfNorm normalises a 128-bit significand.
func xfNorm(neg bool, exp int32, hi, lo uint64) xf {
	if hi|lo == 0 {
		return xf{neg: neg}
	}
	var lz int
	if hi != 0 {
		lz = bits.LeadingZeros64(hi)
	} else {
		lz = 64 + bits.LeadingZeros64(lo)
	}
	switch {
	case lz >= 64:
		hi, lo = lo<<(lz-64), 0
	case lz > 0:
		hi, lo = hi<<lz|lo>>(64-lz), lo<<lz
	}
	return xf{neg, exp - int32(lz), hi, lo}
}

func xfFromUfp(u ufp) xf {
	if u.cls != clsFinite {
		return xf{neg: u.neg}
	}
	return xfNorm(u.neg, u.exp, u.mant, 0)
}

func xfInt(v int64) xf {
	neg := v < 0
	m := uint64(v)
	if neg {
		m = -m
	}
	return xfNorm(neg, 63, m, 0)
}

func (a xf) negate() xf {
	a.neg = !a.neg
	return a
}

// toUfp rounds a to extended precision. The results of transcendental
// functions are inexact, so PE is always flagged. dir says on which side
// of a the exact value lies when a is representable at 128 bits (a series
// cut off below that precision): -1 smaller in magnitude, +1 larger, 0
// unknown; it decides directed rounding (cos of a tiny argument rounds
// toward zero to 1-ulp) and underflow.
func (a xf) toUfp(env *fpEnv) ufp { return a.toUfpDir(env, 0) }

func (a xf) toUfpDir(env *fpEnv, dir int) ufp {
	if a.isZero() {
		return ufp{cls: clsZero, neg: a.neg}
	}
	hi, lo, e := a.hi, a.lo, a.exp
	switch {
	case dir > 0:
		lo |= 1
	case dir < 0:
		var bw uint64
		lo, bw = bits.Sub64(lo, 1, 0)
		hi -= bw
		if hi>>63 == 0 {
			hi, lo = hi<<1|lo>>63, lo<<1|1
			e--
		}
		lo |= 1
	}
	u := env.roundPack(a.neg, e, hi, lo, &fmtF80)
	env.flags |= fpPE
	return u
}

func xfMul(a, b xf) xf {
	if a.isZero() || b.isZero() {
		return xf{neg: a.neg != b.neg}
	}
	// 256-bit product, keep the top 128 bits.
	h1, l1 := bits.Mul64(a.hi, b.hi)
	h2, _ := bits.Mul64(a.hi, b.lo)
	h3, _ := bits.Mul64(a.lo, b.hi)
	var c uint64
	l1, c = bits.Add64(l1, h2, 0)
	h1 += c
	l1, c = bits.Add64(l1, h3, 0)
	h1 += c
	e := a.exp + b.exp
	if h1>>63 == 0 {
		h1, l1 = h1<<1|l1>>63, l1<<1
	} else {
		e++
	}
	return xf{a.neg != b.neg, e, h1, l1}
}

func xfAdd(a, b xf) xf {
	if a.isZero() {
		return b
	}
	if b.isZero() {
		return a
	}
	if a.exp < b.exp || (a.exp == b.exp && (a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo))) {
		a, b = b, a
	}
	d := a.exp - b.exp
	bhi, blo := b.hi, b.lo
	switch {
	case d >= 128:
		return a
	case d >= 64:
		bhi, blo = 0, bhi>>(d-64)
	case d > 0:
		bhi, blo = bhi>>d, blo>>d|bhi<<(64-d)
	}
	if a.neg == b.neg {
		lo, c := bits.Add64(a.lo, blo, 0)
		hi, c2 := bits.Add64(a.hi, bhi, c)
		if c2 != 0 {
			return xf{a.neg, a.exp + 1, hi>>1 | 1<<63, lo>>1 | hi<<63}
		}
		return xf{a.neg, a.exp, hi, lo}
	}
	lo, bw := bits.Sub64(a.lo, blo, 0)
	hi, _ := bits.Sub64(a.hi, bhi, bw)
	return xfNorm(a.neg, a.exp, hi, lo)
}

func xfSub(a, b xf) xf { return xfAdd(a, b.negate()) }

// xfDiv returns a/b (b not zero) by long division.
func xfDiv(a, b xf) xf {
	if a.isZero() {
		return xf{neg: a.neg != b.neg}
	}
	// Remainder r = a.m (129 bits with rh), quotient bits one at a time.
	rh, rl := a.hi, a.lo
	var rtop uint64 // bit 128 of the remainder
	var qh, ql uint64
	e := a.exp - b.exp
	if rh < b.hi || (rh == b.hi && rl < b.lo) {
		// a.m < b.m: the quotient starts below 1; shift once.
		rtop = rh >> 63
		rh, rl = rh<<1|rl>>63, rl<<1
		e--
	}
	for range 128 {
		qh, ql = qh<<1|ql>>63, ql<<1
		if rtop != 0 || rh > b.hi || (rh == b.hi && rl >= b.lo) {
			var bw uint64
			rl, bw = bits.Sub64(rl, b.lo, 0)
			rh, _ = bits.Sub64(rh, b.hi, bw)
			ql |= 1
		}
		rtop = rh >> 63
		rh, rl = rh<<1|rl>>63, rl<<1
	}
	return xf{a.neg != b.neg, e, qh, ql}
}

// xfDivInt returns a/k for a small positive integer k.
func xfDivInt(a xf, k uint64) xf {
	qh, r := bits.Div64(0, a.hi, k)
	ql, r := bits.Div64(r, a.lo, k)
	// one more word for precision before normalising
	q0, _ := bits.Div64(r, 0, k)
	x := xfNorm(a.neg, a.exp, qh, ql)
	if lz := bits.LeadingZeros64(qh); lz > 0 && lz < 64 {
		x.lo |= q0 >> (64 - lz)
	}
	return x
}

// xfSqrt returns √a (a > 0) by Newton's iteration from a double estimate.
func xfSqrt(a xf) xf {
	if a.isZero() {
		return a
	}
	// Double-precision estimate of √(m × 2^e) with e made even.
	e := a.exp
	m := float64(a.hi>>11) / (1 << 52) // [1, 2)
	if e&1 != 0 {
		m *= 2
		e--
	}
	fb := math.Float64bits(math.Sqrt(m)) // [1, 2)
	s := xf{exp: e/2 + int32((fb>>52)&0x7FF) - 1023, hi: (fb&(1<<52-1) | 1<<52) << 11}
	for range 3 {
		s = xfAdd(s, xfDiv(a, s))
		s.exp--
	}
	return s
}

// Constants computed once at start-up from series.
var xfLn2, xfPi, xfPi2, xfPi4, xfOne xf

// xfPi66Half is π/2 with π truncated to 66 bits, the value x87 hardware
// uses to reduce FSIN/FCOS/FSINCOS/FPTAN arguments (SDM vol. 1, 8.3.10).
var xfPi66Half = xf{exp: 0, hi: 0xC90FDAA22168C234, lo: 0xC000000000000000}

func init() {
	xfOne = xfInt(1)
	// ln 2 = 2 atanh(1/3)
	xfLn2 = xfAtanhSeries(xfDivInt(xfOne, 3))
	xfLn2.exp++
	// π = 16 atan(1/5) - 4 atan(1/239)
	a := xfAtanSeries(xfDivInt(xfOne, 5))
	b := xfAtanSeries(xfDivInt(xfOne, 239))
	a.exp += 4
	b.exp += 2
	xfPi = xfSub(a, b)
	xfPi2, xfPi4 = xfPi, xfPi
	xfPi2.exp--
	xfPi4.exp -= 2
}

// xfAtanhSeries returns atanh(t) = Σ t^(2k+1)/(2k+1) for |t| <= 1/3.
func xfAtanhSeries(t xf) xf {
	t2 := xfMul(t, t)
	sum, p := t, t
	for k := uint64(1); k < 80; k++ {
		p = xfMul(p, t2)
		term := xfDivInt(p, 2*k+1)
		if term.isZero() || term.exp < sum.exp-130 {
			break
		}
		sum = xfAdd(sum, term)
	}
	return sum
}

// xfAtanSeries returns atan(t) = Σ (-1)^k t^(2k+1)/(2k+1) for small |t|.
func xfAtanSeries(t xf) xf {
	t2 := xfMul(t, t)
	sum, p := t, t
	for k := uint64(1); k < 120; k++ {
		p = xfMul(p, t2).negate()
		term := xfDivInt(p, 2*k+1)
		if term.isZero() || term.exp < sum.exp-130 {
			break
		}
		sum = xfAdd(sum, term)
	}
	return sum
}

// xfExpm1 returns e^y - 1 for |y| < 1.
func xfExpm1(y xf) xf {
	sum, p := y, y
	for k := uint64(2); k < 80; k++ {
		p = xfDivInt(xfMul(p, y), k)
		if p.isZero() || p.exp < sum.exp-130 {
			break
		}
		sum = xfAdd(sum, p)
	}
	return sum
}

// xfLn returns ln(x) for finite x > 0.
func xfLn(x xf) xf {
	e := x.exp
	m := x
	m.exp = 0
	// m in [1, 2); move to [√2/2, √2) so that ln m is small near 1.
	if m.hi > 0xB504F333F9DE6484 { // √2 × 2^63
		m.exp = -1
		e++
	}
	t := xfDiv(xfSub(m, xfOne), xfAdd(m, xfOne))
	l := xfAtanhSeries(t)
	l.exp++
	if e != 0 {
		l = xfAdd(l, xfMul(xfInt(int64(e)), xfLn2))
	}
	return l
}

// xfAtan returns atan(z) for finite z >= 0.
func xfAtan(z xf) xf {
	inv := false
	if z.exp >= 0 && !(z.exp == 0 && z.hi == 1<<63 && z.lo == 0) {
		z = xfDiv(xfOne, z) // z > 1
		inv = true
	}
	// atan(z) = 2 atan(z / (1 + √(1+z²))), twice.
	for range 2 {
		if z.isZero() {
			break
		}
		z = xfDiv(z, xfAdd(xfOne, xfSqrt(xfAdd(xfOne, xfMul(z, z)))))
	}
	r := xfAtanSeries(z)
	r.exp += 2
	if inv {
		r = xfSub(xfPi2, r)
	}
	return r
}

// xfSinCos returns sin and cos of r with |r| <= π/4.
func xfSinCos(r xf) (s, c xf) {
	r2 := xfMul(r, r)
	s, p := r, r
	for k := uint64(1); k < 60; k++ {
		p = xfDivInt(xfMul(p, r2), (2*k)*(2*k+1)).negate()
		if p.isZero() || p.exp < s.exp-130 {
			break
		}
		s = xfAdd(s, p)
	}
	c, p = xfOne, xfOne
	for k := uint64(1); k < 60; k++ {
		p = xfDivInt(xfMul(p, r2), (2*k-1)*(2*k)).negate()
		if p.isZero() || p.exp < -131 {
			break
		}
		c = xfAdd(c, p)
	}
	return s, c
}

// xfReduce returns x mod π/2 in [-π/4, π/4] and the quadrant (0..3).
func xfReduce(x xf) (xf, int) {
	// q = round(x / (π/2)); x < 2^63 so q fits (as far as the 128-bit π
	// allows).
	qf := xfDiv(x, xfPi66Half)
	q := int64(0)
	if qf.exp >= 0 {
		if qf.exp >= 64 {
			return xf{}, 0
		}
		ip := qf.hi >> (63 - qf.exp)
		frac := qf.hi << (qf.exp + 1)
		if qf.exp == 63 {
			frac = qf.lo
		}
		if frac>>63 != 0 {
			ip++
		}
		q = int64(ip)
		if qf.neg {
			q = -q
		}
	} else if qf.exp == -1 { // |x/(π/2)| in [0.5, 1)
		q = 1
		if qf.neg {
			q = -1
		}
	}
	r := xfSub(x, xfMul(xfInt(q), xfPi66Half))
	return r, int(q & 3)
}

// x87Transcendental executes FSIN, FCOS, FSINCOS, FPTAN, FPATAN, F2XM1,
// FYL2X and FYL2XP1.
func (r *Regs) x87Transcendental(op decode.X86Op) {
	two := op == decode.X87Fpatan || op == decode.X87Fyl2x || op == decode.X87Fyl2xp1
	push := op == decode.X87Fsincos || op == decode.X87Fptan
	if r.stEmpty(0) || (two && r.stEmpty(1)) {
		r.x87Underflow()
		if two {
			r.stSet(1, x87Indefinite)
			r.x87Pop()
		} else {
			r.stSet(0, x87Indefinite)
			if push {
				r.x87Push(x87Indefinite)
			}
		}
		return
	}
	env := r.x87Env()
	a := env.unpackF80(r.st(0))
	var b ufp
	if two {
		b = env.unpackF80(r.st(1))
	}
	r.FSW &^= swC2
	// NaN operands propagate.
	if a.isNaN() || (two && b.isNaN()) {
		env.flags &^= fpDE
		var z ufp
		if two {
			z = env.nanX87(a, b)
		} else {
			z = env.nanX87(a, a)
		}
		r.x87Commit(&env)
		switch {
		case two:
			r.stSet(1, packF80(z))
			r.x87Pop()
		case push:
			r.stSet(0, packF80(z))
			r.x87Push(packF80(z))
		default:
			r.stSet(0, packF80(z))
		}
		return
	}
	switch op {
	case decode.X87Fsin, decode.X87Fcos, decode.X87Fsincos, decode.X87Fptan:
		if a.cls == clsInf {
			env.flags |= fpIE
			r.x87Commit(&env)
			r.stSet(0, x87Indefinite)
			if push {
				r.x87Push(x87Indefinite)
			}
			return
		}
		if a.cls == clsFinite && a.exp >= 63 {
			r.FSW |= swC2 // out of range: operand unchanged, nothing pushed
			r.FSW &^= swC1
			return
		}
		var s, c ufp
		if a.cls == clsZero {
			s, c = a, ufp{cls: clsFinite, exp: 0, mant: 1 << 63}
		} else {
			rr, q := xfReduce(xfFromUfp(a))
			xs, xc := xfSinCos(rr)
			switch q {
			case 1:
				xs, xc = xc, xs.negate()
			case 2:
				xs, xc = xs.negate(), xc.negate()
			case 3:
				xs, xc = xc.negate(), xs
			}
			// The series are cut after a term below 128-bit precision;
			// for the values where that matters (tiny reduced argument)
			// sin and cos lie below the partial sums, tan above.
			switch op {
			case decode.X87Fptan:
				dir := 0
				if rr.exp < -40 {
					dir = 1
				}
				s = xfDiv(xs, xc).toUfpDir(&env, dir)
			case decode.X87Fcos:
				c = xc.toUfpDir(&env, -1)
			case decode.X87Fsin:
				s = xs.toUfpDir(&env, -1)
			default:
				e2 := env
				s = xs.toUfpDir(&env, -1)
				c = xc.toUfpDir(&e2, -1)
				env.flags |= e2.flags
			}
		}
		switch op {
		case decode.X87Fsin:
			r.stSet(0, packF80(s))
		case decode.X87Fcos:
			r.stSet(0, packF80(c))
		case decode.X87Fsincos:
			r.stSet(0, packF80(s))
			r.x87Commit(&env)
			r.x87Push(packF80(c))
			return
		default:
			r.stSet(0, packF80(s))
			r.x87Commit(&env)
			r.x87Push(x87Constant(0, rcNearest))
			return
		}
	case decode.X87F2xm1:
		var z ufp
		switch a.cls {
		case clsZero:
			z = a
		case clsInf:
			if a.neg {
				z = ufp{cls: clsFinite, neg: true, exp: 0, mant: 1 << 63} // -1
			} else {
				z = a
			}
		default:
			if a.exp >= 0 && !(a.exp == 0 && a.mant == 1<<63) { // |x| > 1: undefined; compute anyway
				z = xfExpm1Big(xfFromUfp(a)).toUfp(&env)
			} else {
				z = xfExpm1(xfMul(xfFromUfp(a), xfLn2)).toUfp(&env)
			}
		}
		r.stSet(0, packF80(z))
	case decode.X87Fyl2x, decode.X87Fyl2xp1:
		z := x87Log(&env, a, b, op == decode.X87Fyl2xp1)
		r.stSet(1, packF80(z))
		r.x87Commit(&env)
		r.x87Pop()
		return
	case decode.X87Fpatan:
		z := x87Atan2(&env, b, a)
		r.stSet(1, packF80(z))
		r.x87Commit(&env)
		r.x87Pop()
		return
	}
	r.x87Commit(&env)
}

// xfExpm1Big computes 2^x - 1 for |x| > 1 (outside F2XM1's defined range)
// by scaling: 2^x = 2^n × 2^f.
func xfExpm1Big(x xf) xf {
	if x.exp > 14 {
		if x.neg {
			return xfInt(-1)
		}
		return xf{exp: 1 << 20, hi: 1 << 63} // overflows when rounded
	}
	n := int64(x.hi >> (63 - x.exp))
	if x.neg {
		n = -n
	}
	f := xfSub(x, xfInt(n))
	p := xfAdd(xfExpm1(xfMul(f, xfLn2)), xfOne)
	p.exp += int32(n)
	return xfSub(p, xfOne)
}

// x87Log computes FYL2X (y × log2 x) and FYL2XP1 (y × log2(x+1)).
func x87Log(env *fpEnv, x, y ufp, p1 bool) ufp {
	if p1 {
		switch {
		case x.cls == clsZero:
			if y.cls == clsInf {
				env.flags |= fpIE
				return defaultNaN
			}
			return ufp{cls: clsZero, neg: x.neg != y.neg}
		case x.cls == clsInf && !x.neg:
			// Outside the defined range; hardware returns y × log2(+inf).
			if y.cls == clsZero {
				env.flags |= fpIE
				return defaultNaN
			}
			return ufp{cls: clsInf, neg: y.neg}
		case y.cls == clsZero:
			return ufp{cls: clsZero, neg: x.neg != y.neg}
		case y.cls == clsInf:
			return ufp{cls: clsInf, neg: x.neg != y.neg}
		}
		xx := xfFromUfp(x)
		if x.exp < -1 {
			// ln(1+x) = 2 atanh(x / (2 + x)), precise for small x.
			t := xfDiv(xx, xfAdd(xfInt(2), xx))
			l := xfAtanhSeries(t)
			l.exp++
			return xfMul(xfFromUfp(y), xfDiv(l, xfLn2)).toUfp(env)
		}
		// Outside the defined range |x| < 1 - √2/2: y × log2(1+x).
		e := fpEnv{}
		return x87Log(env, e.roundPack(false, xfAdd(xfOne, xx).exp, xfAdd(xfOne, xx).hi, xfAdd(xfOne, xx).lo, &fmtF80), y, false)
	}
	switch {
	case x.neg && x.cls != clsZero:
		env.flags |= fpIE
		return defaultNaN
	case x.cls == clsZero:
		if y.cls == clsZero {
			env.flags |= fpIE
			return defaultNaN
		}
		if y.cls != clsInf {
			env.flags |= fpZE
		}
		return ufp{cls: clsInf, neg: !y.neg}
	case x.cls == clsInf:
		if y.cls == clsZero {
			env.flags |= fpIE
			return defaultNaN
		}
		return ufp{cls: clsInf, neg: y.neg}
	}
	if x.exp == 0 && x.mant == 1<<63 { // log2(1) = +0
		if y.cls == clsInf {
			env.flags |= fpIE
			return defaultNaN
		}
		return ufp{cls: clsZero, neg: y.neg}
	}
	if y.cls == clsInf {
		return ufp{cls: clsInf, neg: y.neg != (x.exp < 0)}
	}
	if y.cls == clsZero {
		return ufp{cls: clsZero, neg: y.neg != (x.exp < 0)}
	}
	if x.mant == 1<<63 {
		// x = 2^e: log2 x = e exactly; the product rounds like FMUL.
		return env.mul(y, env.fromInt(int64(x.exp), &fmtF80), &fmtF80)
	}
	l := xfDiv(xfLn(xfFromUfp(x)), xfLn2)
	return xfMul(xfFromUfp(y), l).toUfp(env)
}

// x87Atan2 computes FPATAN: atan(y/x) with the quadrant of (x, y).
func x87Atan2(env *fpEnv, y, x ufp) ufp {
	switch {
	case y.cls == clsZero:
		if x.neg {
			return xfPiOr(env, xfPi, y.neg)
		}
		return ufp{cls: clsZero, neg: y.neg}
	case x.cls == clsZero:
		return xfPiOr(env, xfPi2, y.neg)
	case y.cls == clsInf && x.cls == clsInf:
		if x.neg {
			return xfPiOr(env, xfAdd(xfPi2, xfPi4), y.neg)
		}
		return xfPiOr(env, xfPi4, y.neg)
	case y.cls == clsInf:
		return xfPiOr(env, xfPi2, y.neg)
	case x.cls == clsInf:
		if x.neg {
			return xfPiOr(env, xfPi, y.neg)
		}
		return ufp{cls: clsZero, neg: y.neg}
	}
	ax, ay := xfFromUfp(x), xfFromUfp(y)
	ax.neg, ay.neg = false, false
	z := xfDiv(ay, ax)
	a := xfAtan(z)
	dir := 0
	if z.exp < -40 && !x.neg {
		dir = -1 // atan z lies below z
	}
	if x.neg {
		a = xfSub(xfPi, a)
	}
	a.neg = y.neg
	return a.toUfpDir(env, dir)
}

func xfPiOr(env *fpEnv, v xf, neg bool) ufp {
	v.neg = neg
	return v.toUfp(env)
}
