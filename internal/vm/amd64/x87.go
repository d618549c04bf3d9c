package amd64

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// The x87 unit. Arithmetic is exact IEEE extended precision (64-bit
// significand, 15-bit exponent) through the soft-float core, honouring
// FCW precision control (24/53/64 bits) and rounding control, with x87 NaN
// rules (SDM vol. 1 table 4-7), denormals and exception flags in FSW.
//
// Approximations, documented:
//   - Unmasked exceptions raise #MF at the next waiting instruction
//     (x87trap.go, which lists the instructions that still apply the
//     masked response).
//   - FSIN, FCOS, FSINCOS, FPTAN, FPATAN, F2XM1, FYL2X, FYL2XP1 return
//     the correctly rounded value of the exact function (x87_trans.go;
//     FSIN/FCOS/FSINCOS/FPTAN reduce their argument with the hardware's
//     66-bit π); hardware is only specified to within one ulp, so a
//     result can differ from a given CPU in the last bit, and C1 (the
//     rounding direction) may differ. Outside the defined input ranges
//     of F2XM1 and FYL2XP1 uvm returns the mathematical value.
//   - The last instruction/operand pointers and opcode are kept
//     (x87trap.go) but FNSTENV/FNSAVE/FXSAVE images hold zero for them.
//   - FPREM/FPREM1 partial remainders reduce the exponent difference by
//     32 + (d mod 32) (the SDM leaves the amount between 32 and 63 to
//     the implementation); the final remainder is exact.

// FSW bits.
const (
	swSF  = 1 << 6
	swES  = 1 << 7
	swC0  = 1 << 8
	swC1  = 1 << 9
	swC2  = 1 << 10
	swTop = 7 << 11
	swC3  = 1 << 14
	swB   = 1 << 15
	swCC  = swC0 | swC1 | swC2 | swC3
)

// x87Indefinite is the QNaN "real indefinite" in extended format.
var x87Indefinite = F80{Mant: 0xC000000000000000, SignExp: 0xFFFF}

func (r *Regs) x87Top() int { return int(r.FSW>>11) & 7 }

func (r *Regs) setTop(t int) { r.FSW = r.FSW&^swTop | uint16(t&7)<<11 }

// phys returns the physical register of ST(i).
func (r *Regs) phys(i int) int { return (r.x87Top() + i) & 7 }

func (r *Regs) stEmpty(i int) bool { return r.FTW>>r.phys(i)&1 == 0 }

func (r *Regs) st(i int) F80 { return r.ST[r.phys(i)] }

// stSet writes ST(i) and tags it valid.
func (r *Regs) stSet(i int, v F80) {
	p := r.phys(i)
	r.ST[p] = v
	r.FTW |= 1 << p
}

// x87Push pushes v; on stack overflow it flags IE|SF, C1=1 and pushes the
// indefinite (masked response).
func (r *Regs) x87Push(v F80) {
	t := (r.x87Top() - 1) & 7
	if r.FTW>>t&1 != 0 {
		r.FSW |= fpIE | swSF | swC1
		v = x87Indefinite
		if r.x87Unmasked(fpIE) { // x87trap.go: no push
			r.x87Summary()
			return
		}
	}
	r.setTop(t)
	r.ST[t] = v
	r.FTW |= 1 << t
	r.x87Summary()
}

// x87Pop marks ST(0) empty and increments TOP.
func (r *Regs) x87Pop() {
	t := r.x87Top()
	r.FTW &^= 1 << t
	r.setTop(t + 1)
}

// x87Underflow records a stack underflow (reading an empty register).
func (r *Regs) x87Underflow() {
	r.FSW = r.FSW&^swC1 | fpIE | swSF
	r.x87Summary()
}

// x87Summary recomputes ES and B from the unmasked exception flags.
func (r *Regs) x87Summary() {
	if r.FSW&^r.FCW&fpAll != 0 {
		r.FSW |= swES | swB
	} else {
		r.FSW &^= swES | swB
	}
}

// x87Env returns the soft-float environment of FCW.
func (r *Regs) x87Env() fpEnv {
	return fpEnv{rc: uint8(r.FCW>>10) & 3, ueUnmasked: r.FCW&fpUE == 0,
		oeBias: r.FCW&fpOE == 0, ueBias: r.FCW&fpUE == 0}
}

// x87Fmt returns the rounding format of FCW's precision control.
func (r *Regs) x87Fmt() fpFormat {
	f := fmtF80
	switch (r.FCW >> 8) & 3 {
	case 0:
		f.prec = 24
	case 2:
		f.prec = 53
	}
	return f
}

// x87Commit ORs the flags of env into FSW and sets C1 from its rounding.
func (r *Regs) x87Commit(env *fpEnv) {
	env.priority()
	r.FSW = r.FSW&^swC1 | uint16(env.flags)
	if env.up {
		r.FSW |= swC1
	}
	r.x87Summary()
}

// x87Binary computes x op y (X87OpAdd…) under FCW.
func (r *Regs) x87Binary(op int, x, y F80) F80 {
	env := r.x87Env()
	f := r.x87Fmt()
	a, b := env.unpackF80(x), env.unpackF80(y)
	return r.x87BinaryU(op, a, b, &env, &f)
}

func (r *Regs) x87BinaryU(op int, a, b ufp, env *fpEnv, f *fpFormat) F80 {
	var z ufp
	if a.isNaN() || b.isNaN() {
		env.flags &^= fpDE
		z = env.nanX87(a, b)
	} else {
		switch op {
		case decode.X87OpAdd:
			z = env.add(a, b, false, f)
		case decode.X87OpSub:
			z = env.add(a, b, true, f)
		case decode.X87OpMul:
			z = env.mul(a, b, f)
		default:
			z = env.div(a, b, f)
		}
	}
	r.x87Commit(env)
	return packF80(z)
}

// readX87Mem reads a real (4, 8, 10 bytes) or integer (2, 4, 8 bytes)
// memory operand as an unpacked value.
func (c *CPU) readX87Mem(in *decode.X86, a *decode.X86Arg, isInt bool, env *fpEnv) (ufp, sseResult) {
	addr := c.sseEA(in, a)
	if a.Size == 10 {
		m, ok := c.tlb.Load64(addr)
		if !ok {
			return ufp{}, sseFault
		}
		se, ok := c.tlb.Load16(addr + 8)
		if !ok {
			return ufp{}, sseFault
		}
		return env.unpackF80(F80{Mant: m, SignExp: se}), sseOK
	}
	v, res := c.readMem(in, addr, int(a.Size))
	if res != sseOK {
		return ufp{}, res
	}
	if isInt {
		return env.fromInt(signExt(v[0], int(a.Size)), &fmtF80), sseOK
	}
	// An SNaN stays signalling here: the operation decides (FLD quiets
	// it with IE; arithmetic prefers a QNaN operand over it).
	if a.Size == 4 {
		return env.unpackF32(uint32(v[0])), sseOK
	}
	return env.unpackF64(v[0]), sseOK
}

// execX87Op executes one x87 instruction. Memory faults leave the state
// unchanged.
func (c *CPU) execX87Op(in *decode.X86) sseResult {
	r := &c.regs
	a0 := &in.Args[0]
	pop := in.Aux&decode.X87AuxPop != 0
	switch in.Op {
	case decode.X87Fld:
		v := x87Indefinite
		if r.stEmpty(int(a0.Reg)) {
			r.x87Underflow()
			if r.x87Unmasked(fpIE) {
				return sseOK
			}
		} else {
			v = r.st(int(a0.Reg))
		}
		r.FSW &^= swC1
		r.x87Push(v)
	case decode.X87FldM, decode.X87Fild:
		if a0.Size == 10 {
			addr := c.sseEA(in, a0)
			m, ok := c.tlb.Load64(addr)
			if !ok {
				return sseFault
			}
			se, ok := c.tlb.Load16(addr + 8)
			if !ok {
				return sseFault
			}
			r.FSW &^= swC1
			r.x87Push(F80{Mant: m, SignExp: se})
			return sseOK
		}
		env := r.x87Env()
		u, res := c.readX87Mem(in, a0, in.Op == decode.X87Fild, &env)
		if res != sseOK {
			return res
		}
		if u.cls == clsSNaN {
			env.flags |= fpIE
			u = u.quiet()
		}
		r.x87Commit(&env)
		if r.x87Unmasked(fpIE) {
			return sseOK
		}
		r.x87Push(packF80(u))
	case decode.X87FldConst:
		r.FSW &^= swC1
		r.x87Push(x87Constant(int(in.Aux>>8), uint8(r.FCW>>10)&3))
	case decode.X87Fst:
		v := x87Indefinite
		if r.stEmpty(0) {
			r.x87Underflow()
			if r.x87Unmasked(fpIE) {
				return sseOK
			}
		} else {
			v = r.st(0)
			r.FSW &^= swC1
		}
		r.stSet(int(a0.Reg), v)
		if pop {
			r.x87Pop()
		}
	case decode.X87FstM:
		return c.x87Store(in, pop)
	case decode.X87Fist, decode.X87Fisttp:
		return c.x87Fist(in, pop)
	case decode.X87Fbld:
		return c.x87Fbld(in)
	case decode.X87Fbstp:
		return c.x87Fbstp(in)
	case decode.X87ArithReg:
		d, s := int(a0.Reg), int(in.Args[1].Reg)
		op := int(in.Aux>>decode.X87AuxOpShift) & 15
		var v F80
		if r.stEmpty(d) || r.stEmpty(s) {
			r.x87Underflow()
			v = x87Indefinite
		} else if in.Aux&decode.X87AuxRev != 0 {
			v = r.x87Binary(op, r.st(s), r.st(d))
		} else {
			v = r.x87Binary(op, r.st(d), r.st(s))
		}
		if r.x87Unmasked(x87Suppress) {
			return sseOK
		}
		r.stSet(d, v)
		if pop {
			r.x87Pop()
		}
	case decode.X87ArithMem:
		op := int(in.Aux>>decode.X87AuxOpShift) & 15
		env := r.x87Env()
		m, res := c.readX87Mem(in, a0, in.Aux&decode.X87AuxInt != 0, &env)
		if res != sseOK {
			return res
		}
		if r.stEmpty(0) {
			r.x87Underflow()
			if !r.x87Unmasked(fpIE) {
				r.stSet(0, x87Indefinite)
			}
			return sseOK
		}
		f := r.x87Fmt()
		x := env.unpackF80(r.st(0))
		var v F80
		if in.Aux&decode.X87AuxRev != 0 {
			v = r.x87BinaryU(op, m, x, &env, &f)
		} else {
			v = r.x87BinaryU(op, x, m, &env, &f)
		}
		if r.x87Unmasked(x87Suppress) {
			return sseOK
		}
		r.stSet(0, v)
	case decode.X87Fcom, decode.X87Ftst:
		env := r.x87Env()
		var b ufp
		empty := r.stEmpty(0)
		switch {
		case in.Op == decode.X87Ftst:
			b = ufp{cls: clsZero}
		case a0.Kind == decode.ArgMem:
			var res sseResult
			if b, res = c.readX87Mem(in, a0, in.Aux&decode.X87AuxInt != 0, &env); res != sseOK {
				return res
			}
		default:
			empty = empty || r.stEmpty(int(a0.Reg))
			if !empty {
				b = env.unpackF80(r.st(int(a0.Reg)))
			}
		}
		o := 2
		if empty {
			r.x87Underflow()
		} else {
			a := env.unpackF80(r.st(0))
			if a.isNaN() || b.isNaN() {
				env.flags &^= fpDE
			}
			o = env.compare(a, b, in.Aux&decode.X87AuxUnordered == 0)
			r.x87Commit(&env)
		}
		r.FSW &^= swCC
		switch o {
		case -1:
			r.FSW |= swC0
		case 0:
			r.FSW |= swC3
		case 2:
			r.FSW |= swC3 | swC2 | swC0
		}
		if r.x87Unmasked(fpIE) {
			return sseOK
		}
		if pop || in.Aux&decode.X87AuxPop2 != 0 {
			r.x87Pop()
		}
		if in.Aux&decode.X87AuxPop2 != 0 {
			r.x87Pop()
		}
	case decode.X87Fcomi:
		s := int(in.Args[1].Reg)
		o := 2
		if r.stEmpty(0) || r.stEmpty(s) {
			r.x87Underflow()
		} else {
			env := r.x87Env()
			a, b := env.unpackF80(r.st(0)), env.unpackF80(r.st(s))
			if a.isNaN() || b.isNaN() {
				env.flags &^= fpDE
			}
			o = env.compare(a, b, in.Aux&decode.X87AuxUnordered == 0)
			r.x87Commit(&env)
			r.FSW &^= swC1
		}
		c.sseSetFlags(comisFlags(o))
		if pop && !r.x87Unmasked(fpIE) {
			r.x87Pop()
		}
	case decode.X87Fxam:
		r.FSW = r.FSW&^swCC | x87Examine(r.st(0), r.stEmpty(0))
	case decode.X87Fxch:
		i := int(a0.Reg)
		x, y := r.st(0), r.st(i)
		if r.stEmpty(0) || r.stEmpty(i) {
			r.x87Underflow()
			if r.x87Unmasked(fpIE) {
				return sseOK
			}
			if r.stEmpty(0) {
				x = x87Indefinite
			}
			if r.stEmpty(i) {
				y = x87Indefinite
			}
		} else {
			r.FSW &^= swC1
		}
		r.stSet(0, y)
		r.stSet(i, x)
	case decode.X87Fchs, decode.X87Fabs:
		if r.stEmpty(0) {
			r.x87Underflow()
			if !r.x87Unmasked(fpIE) {
				r.stSet(0, x87Indefinite)
			}
			return sseOK
		}
		v := r.st(0)
		if in.Op == decode.X87Fchs {
			v.SignExp ^= 0x8000
		} else {
			v.SignExp &^= 0x8000
		}
		r.FSW &^= swC1
		r.stSet(0, v)
	case decode.X87Fsqrt, decode.X87Frndint:
		if r.stEmpty(0) {
			r.x87Underflow()
			if !r.x87Unmasked(fpIE) {
				r.stSet(0, x87Indefinite)
			}
			return sseOK
		}
		env := r.x87Env()
		a := env.unpackF80(r.st(0))
		var z ufp
		switch {
		case a.isNaN():
			env.flags &^= fpDE
			z = env.nanX87(a, a)
		case in.Op == decode.X87Fsqrt:
			f := r.x87Fmt()
			z = env.sqrt(a, &f)
		default:
			z = env.roundInt(a, env.rc)
		}
		r.x87Commit(&env)
		if r.x87Unmasked(x87Suppress) {
			return sseOK
		}
		r.stSet(0, packF80(z))
	case decode.X87Fscale:
		r.x87Fscale()
	case decode.X87Fxtract:
		r.x87Fxtract()
	case decode.X87Fprem, decode.X87Fprem1:
		r.x87Fprem(in.Op == decode.X87Fprem1)
	case decode.X87Fnstcw:
		return c.writeMem(in, c.sseEA(in, a0), vec{uint64(r.FCW)}, 2)
	case decode.X87Fldcw:
		v, res := c.readMem(in, c.sseEA(in, a0), 2)
		if res != sseOK {
			return res
		}
		r.FCW = uint16(v[0])&0x1F3F | 0x40
		r.x87Summary()
	case decode.X87Fnstsw:
		if a0.Kind == decode.ArgReg {
			r.GPR[0] = r.GPR[0]&^0xFFFF | uint64(r.FSW)
			return sseOK
		}
		return c.writeMem(in, c.sseEA(in, a0), vec{uint64(r.FSW)}, 2)
	case decode.X87Fnclex:
		r.FSW &^= fpAll | swSF | swES | swB
	case decode.X87Fninit:
		r.FCW, r.FSW, r.FTW = 0x37F, 0, 0
	case decode.X87Fwait, decode.X87Fnop:
	case decode.X87Ffree:
		r.FTW &^= 1 << r.phys(int(a0.Reg))
		if pop {
			r.x87Pop()
		}
	case decode.X87Fincstp:
		r.setTop(r.x87Top() + 1)
		r.FSW &^= swC1
	case decode.X87Fdecstp:
		r.setTop(r.x87Top() - 1)
		r.FSW &^= swC1
	case decode.X87Fcmov:
		s := int(in.Args[1].Reg)
		if r.stEmpty(0) || r.stEmpty(s) {
			r.x87Underflow()
			if c.sseCond(in.Cond) || r.stEmpty(0) {
				r.stSet(0, x87Indefinite)
			}
			return sseOK
		}
		r.FSW &^= swC1
		if c.sseCond(in.Cond) {
			r.stSet(0, r.st(s))
		}
	case decode.X87Fnstenv, decode.X87Fnsave:
		return c.x87SaveEnv(in)
	case decode.X87Fldenv, decode.X87Frstor:
		return c.x87LoadEnv(in)
	case decode.X87Fsin, decode.X87Fcos, decode.X87Fsincos, decode.X87Fptan,
		decode.X87Fpatan, decode.X87F2xm1, decode.X87Fyl2x, decode.X87Fyl2xp1:
		r.x87Transcendental(in.Op)
	default:
		return sseUndefined
	}
	return sseOK
}

// x87Constant returns FLD1, FLDZ, FLDPI, FLDL2E, FLDL2T, FLDLG2, FLDLN2.
// The irrational constants are stored with 66 bits internally and
// rounded by FCW.RC, as on hardware since the 486.
func x87Constant(k int, rc uint8) F80 {
	type c66 struct {
		exp  uint16
		mant uint64
		rest uint8 // two more bits below the significand
	}
	tab := [...]c66{
		{16383, 0x8000000000000000, 0},
		{0, 0, 0},
		{16384, 0xC90FDAA22168C234, 3}, // pi: ...C234 C4C6 → next bits 11
		{16383, 0xB8AA3B295C17F0BB, 3}, // log2(e): ...F0BB BE87 → 10 (rounded below)
		{16384, 0xD49A784BCD1B8AFE, 1}, // log2(10): ...8AFE 492B → 01
		{16381, 0x9A209A84FBCFF798, 3}, // log10(2): ...F798 8F89 → 10
		{16382, 0xB17217F7D1CF79AB, 3}, // ln(2): ...79AB C9E3 → 11
	}
	t := tab[k]
	if k == 1 {
		return F80{}
	}
	m := t.mant
	// rest holds the two bits after the significand; round per rc
	// (nearest: up when the first is set and not a tie — the constants
	// are irrational, so there is never a tie).
	switch rc {
	case rcNearest:
		if t.rest&2 != 0 {
			m++
		}
	case rcUp:
		if t.rest != 0 {
			m++
		}
	}
	return F80{Mant: m, SignExp: t.exp}
}

// x87Examine returns C3, C2, C1, C0 of FXAM for v.
func x87Examine(v F80, empty bool) uint16 {
	var cc uint16
	if v.SignExp&0x8000 != 0 {
		cc |= swC1
	}
	e := v.SignExp & 0x7FFF
	switch {
	case empty:
		cc |= swC3 | swC0
	case e == 0 && v.Mant == 0:
		cc |= swC3
	case e == 0:
		cc |= swC3 | swC2 // denormal (and pseudo-denormal)
	case v.Mant>>63 == 0:
		// unsupported: 000
	case e == 0x7FFF && v.Mant<<1 == 0:
		cc |= swC2 | swC0 // infinity
	case e == 0x7FFF:
		cc |= swC0 // NaN
	default:
		cc |= swC2 // normal
	}
	return cc
}

// x87Store executes FST/FSTP m32/m64/m80.
func (c *CPU) x87Store(in *decode.X86, pop bool) sseResult {
	r := &c.regs
	a0 := &in.Args[0]
	addr := c.sseEA(in, a0)
	env := r.x87Env()
	env.oeBias, env.ueBias = false, false // a memory destination
	empty := r.stEmpty(0)
	v := r.st(0)
	if empty {
		v = x87Indefinite
		env.flags |= fpIE
	}
	if env.flags&^uint32(r.FCW)&fpIE != 0 {
		r.x87Underflow() // unmasked: nothing stored, no pop
		return sseOK
	}
	switch a0.Size {
	case 10:
		var b [10]byte
		putLE64(b[:8], v.Mant)
		b[8], b[9] = byte(v.SignExp), byte(v.SignExp>>8)
		if !c.tlb.StoreBytes(addr, b[:]) {
			return sseFault
		}
	case 8, 4:
		u := env.unpackF80(v)
		env.flags &^= fpDE
		var z ufp
		switch {
		case u.unsupported():
			env.flags |= fpIE
			z = defaultNaN
		case u.isNaN():
			if u.cls == clsSNaN {
				env.flags |= fpIE
			}
			z = u.quiet()
		case a0.Size == 8:
			z = env.round(u, &fmtF64)
		default:
			z = env.round(u, &fmtF32)
		}
		env.priority()
		if env.flags&^uint32(r.FCW)&(fpAll&^fpPE) != 0 {
			// Unmasked invalid, overflow or underflow: nothing
			// stored, no pop, C1 clear (x87trap.go).
			env.up = false
			r.x87Commit(&env)
			return sseOK
		}
		var bitsOut uint64
		if a0.Size == 8 {
			bitsOut = packF64(z)
		} else {
			bitsOut = uint64(packF32(z))
		}
		if res := c.writeMem(in, addr, vec{bitsOut}, int(a0.Size)); res != sseOK {
			return res
		}
	default:
		return sseUndefined
	}
	if empty {
		r.x87Underflow()
	} else {
		r.x87Commit(&env)
	}
	if pop {
		r.x87Pop()
	}
	return sseOK
}

// x87Fist executes FIST/FISTP/FISTTP to m16/m32/m64.
func (c *CPU) x87Fist(in *decode.X86, pop bool) sseResult {
	r := &c.regs
	a0 := &in.Args[0]
	env := r.x87Env()
	size := 8 * int(a0.Size)
	rc := env.rc
	if in.Op == decode.X87Fisttp {
		rc = rcZero
	}
	var v int64
	empty := r.stEmpty(0)
	if empty {
		v = int64(-1) << (size - 1)
	} else {
		u := env.unpackF80(r.st(0))
		env.flags &^= fpDE
		v = env.toInt(u, size, rc)
	}
	if empty || env.flags&fpIE != 0 {
		if r.FCW&fpIE == 0 { // unmasked: nothing stored, no pop (x87trap.go)
			if empty {
				r.x87Underflow()
			} else {
				env.flags &^= fpPE
				env.up = false
				r.x87Commit(&env)
			}
			return sseOK
		}
	}
	if res := c.writeMem(in, c.sseEA(in, a0), vec{uint64(v)}, int(a0.Size)); res != sseOK {
		return res
	}
	if empty {
		r.x87Underflow()
	} else {
		r.x87Commit(&env)
	}
	if pop {
		r.x87Pop()
	}
	return sseOK
}

// x87Fbld pushes an 18-digit packed BCD integer.
func (c *CPU) x87Fbld(in *decode.X86) sseResult {
	var b [10]byte
	if !c.tlb.LoadBytes(c.sseEA(in, &in.Args[0]), b[:]) {
		return sseFault
	}
	var v int64
	for i := 8; i >= 0; i-- {
		v = v*100 + int64(b[i]>>4)*10 + int64(b[i]&15)
	}
	if b[9]&0x80 != 0 {
		v = -v
	}
	env := c.regs.x87Env()
	u := env.fromInt(v, &fmtF80)
	if v == 0 && b[9]&0x80 != 0 {
		u.neg = true
	}
	c.regs.FSW &^= swC1
	c.regs.x87Push(packF80(u))
	return sseOK
}

// x87Fbstp stores ST(0) as packed BCD (rounded by FCW.RC) and pops.
func (c *CPU) x87Fbstp(in *decode.X86) sseResult {
	r := &c.regs
	env := r.x87Env()
	var b [10]byte
	empty := r.stEmpty(0)
	invalid := empty
	if !empty {
		u := env.unpackF80(r.st(0))
		env.flags &^= fpDE
		v := env.toInt(u, 64, env.rc)
		if env.flags&fpIE != 0 || v >= 1e18 || v <= -1e18 {
			invalid = true
			env.flags |= fpIE
			env.flags &^= fpPE
		} else {
			if u.neg {
				b[9] = 0x80
				v = -v
			}
			for i := 0; i < 9; i++ {
				d := v % 100
				v /= 100
				b[i] = byte(d/10)<<4 | byte(d%10)
			}
		}
	}
	if invalid {
		b = [10]byte{7: 0xC0, 8: 0xFF, 9: 0xFF}
	}
	if !c.tlb.StoreBytes(c.sseEA(in, &in.Args[0]), b[:]) {
		return sseFault
	}
	if empty {
		r.x87Underflow()
	} else {
		r.x87Commit(&env)
	}
	r.x87Pop()
	return sseOK
}

// x87Fscale: ST(0) ← ST(0) × 2^trunc(ST(1)).
func (r *Regs) x87Fscale() {
	if r.stEmpty(0) || r.stEmpty(1) {
		r.x87Underflow()
		r.stSet(0, x87Indefinite)
		return
	}
	env := r.x87Env()
	f := fmtF80 // precision control does not apply to FSCALE
	a, b := env.unpackF80(r.st(0)), env.unpackF80(r.st(1))
	var z ufp
	switch {
	case a.isNaN() || b.isNaN():
		env.flags &^= fpDE
		z = env.nanX87(a, b)
	case b.cls == clsInf && !b.neg:
		if a.cls == clsZero {
			env.flags |= fpIE
			z = defaultNaN
		} else {
			z = ufp{cls: clsInf, neg: a.neg}
		}
	case b.cls == clsInf:
		if a.cls == clsInf {
			env.flags |= fpIE
			z = defaultNaN
		} else {
			z = ufp{cls: clsZero, neg: a.neg}
		}
	case a.cls != clsFinite:
		z = a
	default:
		n := int64(0)
		if b.cls == clsFinite {
			if b.exp > 30 {
				n = 1 << 31
			} else if b.exp >= 0 {
				n = int64(b.mant >> (63 - b.exp))
			}
			if b.neg {
				n = -n
			}
		}
		z = env.roundPack(a.neg, int32(max(min(int64(a.exp)+n, 1<<30), -(1<<30))), a.mant, 0, &f)
	}
	r.x87Commit(&env)
	r.stSet(0, packF80(z))
}

// x87Fxtract: ST(0) ← exponent, then push the significand.
func (r *Regs) x87Fxtract() {
	if r.stEmpty(0) {
		r.x87Underflow()
		r.stSet(0, x87Indefinite)
		r.x87Push(x87Indefinite)
		return
	}
	env := r.x87Env()
	a := env.unpackF80(r.st(0))
	var e, s ufp
	switch a.cls {
	case clsZero:
		env.flags |= fpZE
		e, s = ufp{cls: clsInf, neg: true}, a
	case clsInf:
		e, s = ufp{cls: clsInf}, a
	case clsQNaN, clsSNaN:
		env.flags &^= fpDE
		s = env.nanX87(a, a)
		e = s
	default:
		e = env.fromInt(int64(a.exp), &fmtF80)
		s = ufp{cls: clsFinite, neg: a.neg, exp: 0, mant: a.mant}
	}
	r.x87Commit(&env)
	r.stSet(0, packF80(e))
	r.x87Push(packF80(s))
}

// x87Fprem computes the partial remainder of ST(0) by ST(1) (FPREM:
// truncated quotient; FPREM1: quotient rounded to nearest). The result
// is always exact.
func (r *Regs) x87Fprem(ieee bool) {
	if r.stEmpty(0) || r.stEmpty(1) {
		r.x87Underflow()
		r.stSet(0, x87Indefinite)
		return
	}
	env := r.x87Env()
	a, b := env.unpackF80(r.st(0)), env.unpackF80(r.st(1))
	var z ufp
	var cc uint16
	switch {
	case a.isNaN() || b.isNaN():
		env.flags &^= fpDE
		z = env.nanX87(a, b)
	case a.cls == clsInf || b.cls == clsZero:
		env.flags |= fpIE
		z = defaultNaN
	case a.cls == clsZero || b.cls == clsInf:
		z = a
	default:
		d := a.exp - b.exp
		switch {
		case d >= 64:
			// Partial remainder: reduce the exponent difference by n.
			n := 32 + d%32
			hi, lo := a.mant>>(64-uint(n)), a.mant<<uint(n)
			_, rem := bits.Div64(hi%b.mant, lo, b.mant)
			z = remResult(&env, a.neg, rem, b.exp+d-n)
			cc = swC2
		case d < -1 || (d == -1 && !ieee):
			z = a
		case d == -1:
			// |a| in [|b|/4, |b|/2·2): the rounded quotient is 0 or 1.
			if a.mant > b.mant {
				z = remResult(&env, !a.neg, b.mant-a.mant+b.mant, a.exp)
				cc = x87QuotientBits(1)
			} else {
				z = a
			}
		default:
			var hi, lo uint64
			if d == 0 {
				hi, lo = 0, a.mant
			} else {
				hi, lo = a.mant>>(64-uint(d)), a.mant<<uint(d)
			}
			q, rem := bits.Div64(hi%b.mant, lo, b.mant)
			neg := a.neg
			if ieee && (rem > b.mant-rem || (rem == b.mant-rem && q&1 == 1)) {
				q++
				rem = b.mant - rem
				neg = !neg
			}
			if rem == 0 {
				z = ufp{cls: clsZero, neg: a.neg}
			} else {
				z = remResult(&env, neg, rem, b.exp)
			}
			cc = x87QuotientBits(q)
		}
	}
	r.x87Commit(&env)
	r.FSW = r.FSW&^swCC | cc
	r.stSet(0, packF80(z))
}

// remResult packs the exact remainder rem × 2^(e-63).
func remResult(env *fpEnv, neg bool, rem uint64, e int32) ufp {
	if rem == 0 {
		return ufp{cls: clsZero, neg: neg}
	}
	return env.normRound(neg, e, rem, 0, &fmtF80)
}

// x87QuotientBits maps the low three quotient bits to C0 (Q2), C3 (Q1)
// and C1 (Q0).
func x87QuotientBits(q uint64) uint16 {
	var cc uint16
	if q&4 != 0 {
		cc |= swC0
	}
	if q&2 != 0 {
		cc |= swC3
	}
	if q&1 != 0 {
		cc |= swC1
	}
	return cc
}

// ---- FNSTENV / FLDENV / FNSAVE / FRSTOR (32-bit protected-mode format) ----

// fullTag returns the 16-bit tag word: 00 valid, 01 zero, 10 special,
// 11 empty, for each physical register.
func (r *Regs) fullTag() uint16 {
	var t uint16
	for p := range 8 {
		var tag uint16
		v := r.ST[p]
		e := v.SignExp & 0x7FFF
		switch {
		case r.FTW>>p&1 == 0:
			tag = 3
		case e == 0 && v.Mant == 0:
			tag = 1
		case e == 0 || e == 0x7FFF || v.Mant>>63 == 0:
			tag = 2
		}
		t |= tag << (2 * p)
	}
	return t
}

// FSaveImage writes the 108-byte FNSAVE image (32-bit protected-mode
// layout, as FNSAVE writes it in 64-bit mode without a 0x66 prefix): the
// 28-byte environment followed by ST(0)..ST(7). The instruction and data
// pointers are not tracked and read as zero; reserved halves read as ones.
func (r *Regs) FSaveImage(b *[108]byte) {
	*b = [108]byte{}
	put32 := func(off int, v uint32) {
		for i := range 4 {
			b[off+i] = byte(v >> (8 * i))
		}
	}
	put32(0, 0xFFFF0000|uint32(r.FCW))
	put32(4, 0xFFFF0000|uint32(r.FSW))
	put32(8, 0xFFFF0000|uint32(r.fullTag()))
	put32(24, 0xFFFF0000)
	for i := range 8 {
		v := r.st(i)
		putLE64(b[28+10*i:], v.Mant)
		b[28+10*i+8], b[28+10*i+9] = byte(v.SignExp), byte(v.SignExp>>8)
	}
}

func (c *CPU) x87SaveEnv(in *decode.X86) sseResult {
	r := &c.regs
	var b [108]byte
	r.FSaveImage(&b)
	n := 28
	if in.Op == decode.X87Fnsave {
		n = 108
	}
	if !c.tlb.StoreBytes(c.sseEA(in, &in.Args[0]), b[:n]) {
		return sseFault
	}
	if in.Op == decode.X87Fnsave {
		r.FCW, r.FSW, r.FTW = 0x37F, 0, 0
	} else {
		r.FCW |= fpAll // FNSTENV masks all exceptions
		r.x87Summary()
	}
	return sseOK
}

func (c *CPU) x87LoadEnv(in *decode.X86) sseResult {
	r := &c.regs
	var b [108]byte
	n := 28
	if in.Op == decode.X87Frstor {
		n = 108
	}
	if !c.tlb.LoadBytes(c.sseEA(in, &in.Args[0]), b[:n]) {
		return sseFault
	}
	get16 := func(off int) uint16 { return uint16(b[off]) | uint16(b[off+1])<<8 }
	r.FCW = get16(0)&0x1F3F | 0x40
	r.FSW = get16(4)
	tag := get16(8)
	r.FTW = 0
	for p := range 8 {
		if tag>>(2*p)&3 != 3 {
			r.FTW |= 1 << p
		}
	}
	if n == 108 {
		for i := range 8 {
			var m uint64
			for k := range 8 {
				m |= uint64(b[28+10*i+k]) << (8 * k)
			}
			r.ST[r.phys(i)] = F80{Mant: m, SignExp: get16(28 + 10*i + 8)}
		}
	}
	r.x87Summary()
	return sseOK
}
