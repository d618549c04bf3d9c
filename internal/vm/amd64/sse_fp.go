package amd64

import "math"

// SSE floating-point lane operations. Each takes and returns raw bit
// patterns and ORs the exceptions it raises into MXCSR.
//
// Fast path: when MXCSR selects round-to-nearest without FTZ/DAZ and the
// sticky PE flag is already set (so only the flags that come from special
// operands or results could change), the host's IEEE arithmetic is used
// for operands and results that are zero or normal (excluding the
// smallest normal binade, where x86's after-rounding tininess rule could
// flag UE). Everything else (NaNs, infinities, denormals, overflow,
// other rounding modes, FTZ/DAZ, PE not yet set) goes through the
// soft-float core, which computes results and flags exactly. NaN results
// never come from the host, so NaN payloads and the default NaN are x86's
// on any host.

// MXCSR bits.
const (
	mxDAZ     = 1 << 6
	mxMaskSh  = 7
	mxRCShift = 13
	mxFTZ     = 1 << 15
	// MXCSRMask is the MXCSR_MASK reported by FXSAVE: the writable bits.
	MXCSRMask = 0xFFFF
	// MXCSRDefault is the power-up/exec value of MXCSR.
	MXCSRDefault = 0x1F80
)

const fastMask = 3<<mxRCShift | mxFTZ | mxDAZ | fpPE

// sseEnv returns the soft-float environment for the current MXCSR.
func (r *Regs) sseEnv() fpEnv {
	m := r.MXCSR
	return fpEnv{
		rc:         uint8(m>>mxRCShift) & 3,
		ftz:        m&mxFTZ != 0,
		daz:        m&mxDAZ != 0,
		ueUnmasked: m&(fpUE<<mxMaskSh) == 0,
	}
}

// fast reports whether the host fast path may be used.
func (r *Regs) fast() bool { return r.MXCSR&fastMask == fpPE }

// ok64 reports a zero or a normal double outside the smallest binade.
func ok64(x uint64) bool {
	e := (x >> 52) & 0x7FF
	return (e >= 2 && e < 0x7FF) || x<<1 == 0
}

// ok32 is ok64 for singles.
func ok32(x uint32) bool {
	e := (x >> 23) & 0xFF
	return (e >= 2 && e < 0xFF) || x<<1 == 0
}

// Operation numbers for the arithmetic helpers.
const (
	fopAdd = iota
	fopSub
	fopMul
	fopDiv
	fopMin
	fopMax
	fopSqrt // of the second operand
)

// arith64 computes a op b on doubles.
func (r *Regs) arith64(op int, a, b uint64) uint64 {
	if r.fast() && ok64(a) && ok64(b) {
		x, y := math.Float64frombits(a), math.Float64frombits(b)
		var z float64
		switch op {
		case fopAdd:
			z = x + y
		case fopSub:
			z = x - y
		case fopMul:
			z = float64(x * y)
		case fopDiv:
			if y == 0 {
				return r.arith64Slow(op, a, b)
			}
			z = x / y
		case fopMin:
			if x < y {
				return a
			}
			return b
		case fopMax:
			if x > y {
				return a
			}
			return b
		case fopSqrt:
			if y < 0 {
				return r.arith64Slow(op, a, b)
			}
			z = math.Sqrt(y)
		}
		// A zero result is exact only for add/sub or a zero input;
		// otherwise it underflowed.
		if zb := math.Float64bits(z); ok64(zb) && (zb<<1 != 0 || op <= fopSub || a<<1 == 0 || b<<1 == 0) {
			return zb
		}
	}
	return r.arith64Slow(op, a, b)
}

func (r *Regs) arith64Slow(op int, a, b uint64) uint64 {
	env := r.sseEnv()
	y := env.unpackF64(b)
	x := y
	if op != fopSqrt {
		x = env.unpackF64(a)
	}
	z := env.arith(op, x, y, &fmtF64)
	env.priority()
	r.MXCSR |= env.flags
	if op == fopMin || op == fopMax {
		// MIN/MAX return an operand unchanged (an SNaN too), except that
		// DAZ turns a denormal into a signed zero.
		if z != y {
			y, b = x, a
		}
		if y.cls == clsZero {
			return packF64(y)
		}
		return b
	}
	return packF64(z)
}

// arith32 computes a op b on singles.
func (r *Regs) arith32(op int, a, b uint32) uint32 {
	if r.fast() && ok32(a) && ok32(b) {
		x, y := math.Float32frombits(a), math.Float32frombits(b)
		var z float32
		switch op {
		case fopAdd:
			z = x + y
		case fopSub:
			z = x - y
		case fopMul:
			z = float32(x * y)
		case fopDiv:
			if y == 0 {
				return r.arith32Slow(op, a, b)
			}
			z = x / y
		case fopMin:
			if x < y {
				return a
			}
			return b
		case fopMax:
			if x > y {
				return a
			}
			return b
		case fopSqrt:
			if y < 0 {
				return r.arith32Slow(op, a, b)
			}
			z = float32(math.Sqrt(float64(y)))
		}
		if zb := math.Float32bits(z); ok32(zb) && (zb<<1 != 0 || op <= fopSub || a<<1 == 0 || b<<1 == 0) {
			return zb
		}
	}
	return r.arith32Slow(op, a, b)
}

func (r *Regs) arith32Slow(op int, a, b uint32) uint32 {
	env := r.sseEnv()
	y := env.unpackF32(b)
	x := y
	if op != fopSqrt {
		x = env.unpackF32(a)
	}
	z := env.arith(op, x, y, &fmtF32)
	env.priority()
	r.MXCSR |= env.flags
	if op == fopMin || op == fopMax {
		if z != y {
			y, b = x, a
		}
		if y.cls == clsZero {
			return packF32(y)
		}
		return b
	}
	return packF32(z)
}

// arith is the soft-float body shared by both widths. For MIN/MAX it
// returns the chosen operand (x or y).
func (env *fpEnv) arith(op int, x, y ufp, f *fpFormat) ufp {
	switch op {
	case fopMin, fopMax:
		// Any NaN is invalid and the second operand is returned; so is
		// the second operand when both are zeros of any sign.
		if x.isNaN() || y.isNaN() {
			env.flags = env.flags&^fpDE | fpIE
			return y
		}
		if x.cls == clsZero && y.cls == clsZero {
			return y
		}
		if (op == fopMin && x.sortKeyLess(y)) || (op == fopMax && y.sortKeyLess(x)) {
			return x
		}
		return y
	case fopSqrt:
		if y.isNaN() {
			env.flags &^= fpDE
			if y.cls == clsSNaN {
				env.flags |= fpIE
			}
			return y.quiet()
		}
		return env.sqrt(y, f)
	}
	if x.isNaN() || y.isNaN() {
		env.flags &^= fpDE
		return env.nanSSE(x, y)
	}
	switch op {
	case fopAdd:
		return env.add(x, y, false, f)
	case fopSub:
		return env.add(x, y, true, f)
	case fopMul:
		return env.mul(x, y, f)
	default:
		return env.div(x, y, f)
	}
}

// cmpPred evaluates SSE compare predicate p (0-7) on an ordering result
// (-1, 0, 1, 2 = unordered).
func cmpPred(p int64, ord int) bool {
	switch p & 7 {
	case 0:
		return ord == 0
	case 1:
		return ord == -1
	case 2:
		return ord == -1 || ord == 0
	case 3:
		return ord == 2
	case 4:
		return ord != 0
	case 5:
		return ord != -1
	case 6:
		return ord == 1 || ord == 2
	default:
		return ord != 2
	}
}

// cmpSignals reports whether predicate p raises IE on a QNaN.
func cmpSignals(p int64) bool {
	switch p & 7 {
	case 1, 2, 5, 6:
		return true
	}
	return false
}

// cmp64 compares doubles for CMPSD/CMPPD/(U)COMISD; signalling selects
// IE on QNaN operands.
func (r *Regs) cmp64(a, b uint64, signalling bool) int {
	if ok64(a) && ok64(b) && r.MXCSR&mxDAZ == 0 {
		x, y := math.Float64frombits(a), math.Float64frombits(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	env := r.sseEnv()
	x, y := env.unpackF64(a), env.unpackF64(b)
	if x.isNaN() || y.isNaN() {
		env.flags &^= fpDE
	}
	o := env.compare(x, y, signalling)
	r.MXCSR |= env.flags
	return o
}

// cmp32 is cmp64 for singles.
func (r *Regs) cmp32(a, b uint32, signalling bool) int {
	if ok32(a) && ok32(b) && r.MXCSR&mxDAZ == 0 {
		x, y := math.Float32frombits(a), math.Float32frombits(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	env := r.sseEnv()
	x, y := env.unpackF32(a), env.unpackF32(b)
	if x.isNaN() || y.isNaN() {
		env.flags &^= fpDE
	}
	o := env.compare(x, y, signalling)
	r.MXCSR |= env.flags
	return o
}

// ---- conversions ----

// cvtF64ToInt converts a double to a 32- or 64-bit integer, truncating
// (CVTT*) or with MXCSR.RC.
func (r *Regs) cvtF64ToInt(a uint64, size int, trunc bool) int64 {
	if r.MXCSR&(fpPE|mxDAZ) == fpPE && (trunc || r.MXCSR&(3<<mxRCShift) == 0) {
		x := math.Float64frombits(a)
		lim := math.Ldexp(1, size-1)
		if x > -lim && x < lim { // also false for NaN
			if trunc {
				return int64(x)
			}
			return int64(math.RoundToEven(x))
		}
	}
	env := r.sseEnv()
	rc := env.rc
	if trunc {
		rc = rcZero
	}
	v := env.toInt(env.unpackF64(a), size, rc)
	r.MXCSR |= env.flags &^ fpDE
	return v
}

// cvtF32ToInt is cvtF64ToInt for singles.
func (r *Regs) cvtF32ToInt(a uint32, size int, trunc bool) int64 {
	if r.MXCSR&(fpPE|mxDAZ) == fpPE && (trunc || r.MXCSR&(3<<mxRCShift) == 0) {
		x := float64(math.Float32frombits(a))
		lim := math.Ldexp(1, size-1)
		if x > -lim && x < lim {
			if trunc {
				return int64(x)
			}
			return int64(math.RoundToEven(x))
		}
	}
	env := r.sseEnv()
	rc := env.rc
	if trunc {
		rc = rcZero
	}
	v := env.toInt(env.unpackF32(a), size, rc)
	r.MXCSR |= env.flags &^ fpDE
	return v
}

// cvtIntToF64 converts a signed integer to double (exact for 32-bit).
func (r *Regs) cvtIntToF64(v int64) uint64 {
	if r.fast() || (v >= -(1<<53) && v <= 1<<53) {
		return math.Float64bits(float64(v))
	}
	env := r.sseEnv()
	z := env.fromInt(v, &fmtF64)
	r.MXCSR |= env.flags
	return packF64(z)
}

// cvtIntToF32 converts a signed integer to single.
func (r *Regs) cvtIntToF32(v int64) uint32 {
	if v >= -(1<<24) && v <= 1<<24 {
		return math.Float32bits(float32(v))
	}
	env := r.sseEnv()
	z := env.fromInt(v, &fmtF32)
	r.MXCSR |= env.flags
	return packF32(z)
}

// cvtF64ToF32 narrows a double.
func (r *Regs) cvtF64ToF32(a uint64) uint32 {
	if r.fast() && ok64(a) {
		z := math.Float32bits(float32(math.Float64frombits(a)))
		if ok32(z) && (z<<1 != 0 || a<<1 == 0) {
			return z
		}
	}
	env := r.sseEnv()
	x := env.unpackF64(a)
	var z ufp
	switch x.cls {
	case clsQNaN, clsSNaN:
		env.flags &^= fpDE
		if x.cls == clsSNaN {
			env.flags |= fpIE
		}
		z = x.quiet()
	default:
		z = env.round(x, &fmtF32)
	}
	r.MXCSR |= env.flags
	return packF32(z)
}

// cvtF32ToF64 widens a single (exact).
func (r *Regs) cvtF32ToF64(a uint32) uint64 {
	if ok32(a) {
		return math.Float64bits(float64(math.Float32frombits(a)))
	}
	env := r.sseEnv()
	x := env.unpackF32(a)
	if x.cls == clsSNaN {
		env.flags |= fpIE
		x = x.quiet()
	}
	r.MXCSR |= env.flags
	// The value is exact in double; round only re-normalises.
	return packF64(env.round(x, &fmtF64))
}

// round64 implements ROUNDSD/ROUNDPD: imm bit 2 selects MXCSR.RC over
// imm[1:0], bit 3 suppresses PE. It reports IE (SNaN) and PE, never DE.
func (r *Regs) round64(a uint64, imm int64) uint64 {
	env := r.sseEnv()
	rc := uint8(imm & 3)
	if imm&4 != 0 {
		rc = env.rc
	}
	x := env.unpackF64(a)
	var z ufp
	if x.isNaN() {
		if x.cls == clsSNaN {
			env.flags |= fpIE
		}
		z = x.quiet()
	} else {
		z = env.roundInt(x, rc)
	}
	env.flags &^= fpDE
	if imm&8 != 0 {
		env.flags &^= fpPE
	}
	r.MXCSR |= env.flags
	return packF64(z)
}

// round32 is round64 for singles.
func (r *Regs) round32(a uint32, imm int64) uint32 {
	env := r.sseEnv()
	rc := uint8(imm & 3)
	if imm&4 != 0 {
		rc = env.rc
	}
	x := env.unpackF32(a)
	var z ufp
	if x.isNaN() {
		if x.cls == clsSNaN {
			env.flags |= fpIE
		}
		z = x.quiet()
	} else {
		z = env.roundInt(x, rc)
	}
	env.flags &^= fpDE
	if imm&8 != 0 {
		env.flags &^= fpPE
	}
	r.MXCSR |= env.flags
	return packF32(z)
}

// RFLAGS bits written by SSE compares.
const (
	flagCF = 1 << 0
	flagPF = 1 << 2
	flagAF = 1 << 4
	flagZF = 1 << 6
	flagSF = 1 << 7
	flagOF = 1 << 11
)

// comisFlags maps an ordering to the (U)COMIS/FCOMI flags: ZF, PF, CF =
// 111 unordered, 000 greater, 001 less, 100 equal; OF, SF, AF cleared.
func comisFlags(ord int) uint64 {
	switch ord {
	case -1:
		return flagCF
	case 0:
		return flagZF
	case 1:
		return 0
	}
	return flagZF | flagPF | flagCF
}
