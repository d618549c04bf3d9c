package amd64

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// xres is the outcome of executing one instruction's semantics.
type xres uint8

const (
	xOK        xres = iota
	xFault          // memory fault: c.tlb.Fault is set, state unchanged
	xDivide         // #DE
	xUndef          // not implemented / #UD (c.why says why)
	xPriv           // #GP in user mode
	xInterrupt      // REP string instruction interrupted part-way: PC stays
	xSIMDFP         // unmasked SIMD floating-point exception (#XM)
	xIteration      // StepTrap: one REP iteration done, the instruction not retired
	xMF             // x87 floating-point error pending at a waiting x87 instruction (#MF)
)

// sext sign-extends the low w bytes of v.
func sext(v uint64, w uint8) int64 {
	sh := 64 - 8*uint(w)
	return int64(v<<sh) >> sh
}

// opALU executes ADD OR ADC SBB AND SUB XOR CMP TEST.
func (c *CPU) opALU(in *decode.X86) xres {
	w := in.Width
	m := wmask[w]
	d := &in.Args[0]
	b, ok := c.read(in, &in.Args[1])
	if !ok {
		return xFault
	}
	op := in.Op
	var cin uint64
	if op == decode.X86Adc || op == decode.X86Sbb {
		cin = c.cf()
	}
	writes := op != decode.X86Cmp && op != decode.X86Test
	if d.Kind != decode.ArgMem {
		a := c.getReg(d)
		r := aluResult(op, a, b, cin, m)
		if writes {
			c.setReg(d, r)
		}
		c.setAluFlags(op, a, b, r, cin, w)
		return xOK
	}
	ea := c.addr(d)
	if in.Lock {
		a, r, res := c.atomicRMW(ea, w, op, b, cin)
		if res != xOK {
			return res
		}
		c.setAluFlags(op, a, b, r, cin, w)
		return xOK
	}
	a, ok := c.load(ea, w)
	if !ok {
		return xFault
	}
	r := aluResult(op, a, b, cin, m)
	if writes && !c.store(ea, w, r) {
		return xFault
	}
	c.setAluFlags(op, a, b, r, cin, w)
	return xOK
}

// rmwCompute is the new value of a read-modify-write op (used by the
// locked paths): ALU ops, INC/DEC/NEG/NOT, BTS/BTR/BTC (b is the bit
// mask), XADD and XCHG.
func rmwCompute(op decode.X86Op, a, b, cin, m uint64) uint64 {
	switch op {
	case decode.X86Inc:
		return (a + 1) & m
	case decode.X86Dec:
		return (a - 1) & m
	case decode.X86Neg:
		return -a & m
	case decode.X86Not:
		return ^a & m
	case decode.X86Bts:
		return a | b
	case decode.X86Btr:
		return a &^ b
	case decode.X86Btc:
		return a ^ b
	case decode.X86Xadd:
		return (a + b) & m
	case decode.X86Xchg:
		return b
	}
	return aluResult(op, a, b, cin, m)
}

// opUnary executes INC DEC NEG NOT.
func (c *CPU) opUnary(in *decode.X86) xres {
	w := in.Width
	m := wmask[w]
	d := &in.Args[0]
	op := in.Op
	var a, r uint64
	if d.Kind != decode.ArgMem {
		a = c.getReg(d)
		r = rmwCompute(op, a, 0, 0, m)
		c.setReg(d, r)
	} else {
		ea := c.addr(d)
		if in.Lock {
			var res xres
			a, r, res = c.atomicRMW(ea, w, op, 0, 0)
			if res != xOK {
				return res
			}
		} else {
			var ok bool
			if a, ok = c.load(ea, w); !ok {
				return xFault
			}
			r = rmwCompute(op, a, 0, 0, m)
			if !c.store(ea, w, r) {
				return xFault
			}
		}
	}
	switch op {
	case decode.X86Inc, decode.X86Dec:
		cf := c.cf()
		c.lop = lfInc
		if op == decode.X86Dec {
			c.lop = lfDec
		}
		c.lw, c.la, c.lr, c.lc = w, a, r, cf
	case decode.X86Neg:
		c.lop, c.lw, c.la, c.lr = lfNeg, w, a, r
	}
	return xOK
}

// opMulDiv executes MUL, one-operand IMUL, DIV and IDIV.
func (c *CPU) opMulDiv(in *decode.X86) xres {
	src, ok := c.read(in, &in.Args[0])
	if !ok {
		return xFault
	}
	w := in.Width
	g := &c.regs.GPR
	rax, rdx := g[0], g[2]
	switch in.Op {
	case decode.X86Mul:
		var lo, hi uint64
		switch w {
		case 1:
			p := (rax & 0xFF) * src
			c.setRegW(0, 2, p)
			lo, hi = p&0xFF, p>>8
		case 2:
			p := (rax & 0xFFFF) * src
			lo, hi = p&0xFFFF, p>>16
			c.setRegW(0, 2, lo)
			c.setRegW(2, 2, hi)
		case 4:
			p := uint64(uint32(rax)) * src
			lo, hi = p&0xFFFFFFFF, p>>32
			g[0], g[2] = lo, hi
		default:
			hi, lo = bits.Mul64(rax, src)
			g[0], g[2] = lo, hi
		}
		c.lop, c.lw, c.lr, c.lc = lfMul, w, lo, hi
		return xOK
	case decode.X86Imul1:
		var lo uint64
		var ov bool
		switch w {
		case 1:
			p := int64(int8(rax)) * int64(int8(src))
			c.setRegW(0, 2, uint64(p))
			lo, ov = uint64(p)&0xFF, p != int64(int8(p))
		case 2:
			p := int64(int16(rax)) * int64(int16(src))
			lo, ov = uint64(p)&0xFFFF, p != int64(int16(p))
			c.setRegW(0, 2, uint64(p))
			c.setRegW(2, 2, uint64(p>>16))
		case 4:
			p := int64(int32(rax)) * int64(int32(src))
			lo, ov = uint64(uint32(p)), p != int64(int32(p))
			g[0], g[2] = lo, uint64(uint32(p>>32))
		default:
			hi, l := mulSigned64(rax, src)
			lo, ov = l, int64(hi) != int64(l)>>63
			g[0], g[2] = l, hi
		}
		c.lop, c.lw, c.lr = lfMul, w, lo
		c.lc = 0
		if ov {
			c.lc = 1
		}
		return xOK
	case decode.X86Div:
		if src == 0 {
			return xDivide
		}
		switch w {
		case 1:
			n := rax & 0xFFFF
			q, r := n/src, n%src
			if q > 0xFF {
				return xDivide
			}
			c.setRegW(0, 2, r<<8|q)
		case 2:
			n := (rdx&0xFFFF)<<16 | rax&0xFFFF
			q, r := n/src, n%src
			if q > 0xFFFF {
				return xDivide
			}
			c.setRegW(0, 2, q)
			c.setRegW(2, 2, r)
		case 4:
			n := (rdx&0xFFFFFFFF)<<32 | rax&0xFFFFFFFF
			q, r := n/src, n%src
			if q > 0xFFFFFFFF {
				return xDivide
			}
			g[0], g[2] = q, r
		default:
			if rdx >= src {
				return xDivide
			}
			q, r := bits.Div64(rdx, rax, src)
			g[0], g[2] = q, r
		}
		return xOK
	case decode.X86Idiv:
		if src&wmask[w] == 0 {
			return xDivide
		}
		switch w {
		case 1:
			n, d := int64(int16(rax)), int64(int8(src))
			q, r := n/d, n%d
			if q != int64(int8(q)) {
				return xDivide
			}
			c.setRegW(0, 2, uint64(r&0xFF)<<8|uint64(q&0xFF))
		case 2:
			n, d := int64(int32(uint32(rdx&0xFFFF)<<16|uint32(rax&0xFFFF))), int64(int16(src))
			q, r := n/d, n%d
			if q != int64(int16(q)) {
				return xDivide
			}
			c.setRegW(0, 2, uint64(q))
			c.setRegW(2, 2, uint64(r))
		case 4:
			n, d := int64((rdx&0xFFFFFFFF)<<32|rax&0xFFFFFFFF), int64(int32(src))
			if d == -1 && n == -1<<63 {
				return xDivide
			}
			q, r := n/d, n%d
			if q != int64(int32(q)) {
				return xDivide
			}
			g[0], g[2] = uint64(uint32(q)), uint64(uint32(r))
		default:
			q, r, ok := idiv128(rdx, rax, int64(src))
			if !ok {
				return xDivide
			}
			g[0], g[2] = uint64(q), uint64(r)
		}
		return xOK
	}
	return xUndef
}

// mulSigned64 returns the 128-bit signed product of x and y.
func mulSigned64(x, y uint64) (hi, lo uint64) {
	hi, lo = bits.Mul64(x, y)
	if int64(x) < 0 {
		hi -= y
	}
	if int64(y) < 0 {
		hi -= x
	}
	return
}

// idiv128 divides the signed 128-bit hi:lo by d; ok is false when the
// quotient does not fit in 64 bits (or d is 0).
func idiv128(hi, lo uint64, d int64) (q, r int64, ok bool) {
	if d == 0 {
		return 0, 0, false
	}
	neg := int64(hi) < 0
	ahi, alo := hi, lo
	if neg {
		alo = ^lo + 1
		ahi = ^hi
		if alo == 0 {
			ahi++
		}
	}
	ad := uint64(d)
	if d < 0 {
		ad = -ad
	}
	if ahi >= ad {
		return 0, 0, false
	}
	uq, ur := bits.Div64(ahi, alo, ad)
	if neg != (d < 0) {
		if uq > 1<<63 {
			return 0, 0, false
		}
		q = -int64(uq)
	} else {
		if uq > 1<<63-1 {
			return 0, 0, false
		}
		q = int64(uq)
	}
	r = int64(ur)
	if neg {
		r = -r
	}
	return q, r, true
}

// opImul executes the two- and three-operand IMUL.
func (c *CPU) opImul(in *decode.X86) xres {
	d := &in.Args[0]
	src, ok := c.read(in, &in.Args[1])
	if !ok {
		return xFault
	}
	a, b := c.getReg(d), src
	if in.NArgs == 3 {
		a, b = src, uint64(in.Imm)
	}
	var r uint64
	var ov bool
	switch in.Width {
	case 2:
		p := int64(int16(a)) * int64(int16(b))
		r, ov = uint64(p)&0xFFFF, p != int64(int16(p))
	case 4:
		p := int64(int32(a)) * int64(int32(b))
		r, ov = uint64(uint32(p)), p != int64(int32(p))
	default:
		hi, lo := mulSigned64(a, b)
		r, ov = lo, int64(hi) != int64(lo)>>63
	}
	c.setReg(d, r)
	c.lop, c.lw, c.lr = lfMul, in.Width, r
	c.lc = 0
	if ov {
		c.lc = 1
	}
	return xOK
}

// readRM reads the destination operand of a read-modify-write op,
// returning its value and (for memory) its address.
func (c *CPU) readRM(a *decode.X86Arg) (v, ea uint64, ok bool) {
	if a.Kind != decode.ArgMem {
		return c.getReg(a), 0, true
	}
	ea = c.addr(a)
	v, ok = c.load(ea, a.Size)
	return v, ea, ok
}

// writeRM writes the destination of a read-modify-write op.
func (c *CPU) writeRM(a *decode.X86Arg, ea, v uint64) bool {
	if a.Kind != decode.ArgMem {
		c.setReg(a, v)
		return true
	}
	return c.store(ea, a.Size, v)
}

// opShift executes ROL ROR RCL RCR SHL SHR SAR.
func (c *CPU) opShift(in *decode.X86) xres {
	w := in.Width
	m := wmask[w]
	n := 8 * uint64(w)
	d := &in.Args[0]
	var cnt uint64
	if in.Args[1].Kind == decode.ArgImm {
		cnt = uint64(in.Imm)
	} else {
		cnt = c.regs.GPR[1] & 0xFF
	}
	if w == 8 {
		cnt &= 63
	} else {
		cnt &= 31
	}
	a, ea, ok := c.readRM(d)
	if !ok {
		return xFault
	}
	if cnt == 0 {
		if d.Kind != decode.ArgMem && w == 4 {
			c.setReg(d, a) // a 32-bit destination is still zero-extended
		}
		return xOK
	}
	f := c.rflags()
	msb := func(v uint64) uint64 { return (v >> (n - 1)) & 1 }
	var r, st uint64
	switch in.Op {
	case decode.X86Shl:
		tmp := (a << (cnt - 1)) & m
		r = (a << cnt) & m
		cf := msb(tmp)
		st = szp(r, w) | cf | (cf^msb(r))<<11
	case decode.X86Shr:
		tmp := a >> (cnt - 1)
		r = a >> cnt
		st = szp(r, w) | tmp&1 | (msb(tmp)^msb(r))<<11
	case decode.X86Sar:
		sa := sext(a, w)
		tmp := uint64(sa>>(cnt-1)) & m
		r = uint64(sa>>cnt) & m
		st = szp(r, w) | tmp&1 | (msb(tmp)^msb(r))<<11
	case decode.X86Rol:
		k := cnt % n
		r = (a<<k | a>>((n-k)%n)) & m
		if k == 0 {
			r = a
		}
		cf := r & 1
		st = f&statusMask&^(rfCF|rfOF) | cf | (cf^msb(r))<<11
	case decode.X86Ror:
		k := cnt % n
		r = (a>>k | a<<((n-k)%n)) & m
		if k == 0 {
			r = a
		}
		st = f&statusMask&^(rfCF|rfOF) | msb(r) | (msb(r)^((r>>(n-2))&1))<<11
	case decode.X86Rcl, decode.X86Rcr:
		k := cnt
		switch w {
		case 1:
			k %= 9
		case 2:
			k %= 17
		}
		if k == 0 {
			return xOK
		}
		cin := f & rfCF
		var cf uint64
		if in.Op == decode.X86Rcl {
			r = (a<<k | cin<<(k-1) | a>>(n+1-k)) & m
			cf = (a >> (n - k)) & 1
		} else {
			r = (a>>k | cin<<(n-k) | a<<(n+1-k)) & m
			cf = (a >> (k - 1)) & 1
		}
		st = f&statusMask&^(rfCF|rfOF) | cf | msb(a^r)<<11
	default:
		return xUndef
	}
	if !c.writeRM(d, ea, r) {
		return xFault
	}
	c.flags = f&^statusMask | st
	c.lop = lfNone
	return xOK
}

// opShiftD executes SHLD and SHRD.
func (c *CPU) opShiftD(in *decode.X86) xres {
	w := in.Width
	m := wmask[w]
	n := 8 * uint64(w)
	d := &in.Args[0]
	var cnt uint64
	if in.Args[2].Kind == decode.ArgImm {
		cnt = uint64(in.Imm)
	} else {
		cnt = c.regs.GPR[1] & 0xFF
	}
	if w == 8 {
		cnt &= 63
	} else {
		cnt &= 31
	}
	a, ea, ok := c.readRM(d)
	if !ok {
		return xFault
	}
	if cnt == 0 {
		if d.Kind != decode.ArgMem && w == 4 {
			c.setReg(d, a)
		}
		return xOK
	}
	s := c.getReg(&in.Args[1])
	var r, tmp, cf uint64
	if in.Op == decode.X86Shld {
		switch w {
		case 2: // Intel's behaviour for counts > 16: shift A:B:A
			x := a<<32 | s<<16 | a
			r, tmp = (x>>(32-cnt))&m, (x>>(33-cnt))&m
		case 4:
			x := a<<32 | s
			r, tmp = (x>>(32-cnt))&m, (x>>(33-cnt))&m
		default:
			r = a<<cnt | s>>(64-cnt)
			tmp = a<<(cnt-1) | s>>(65-cnt)
		}
		cf = (tmp >> (n - 1)) & 1
	} else {
		switch w {
		case 2:
			x := a | s<<16 | a<<32
			r, tmp = (x>>cnt)&m, (x>>(cnt-1))&m
		case 4:
			x := s<<32 | a
			r, tmp = (x>>cnt)&m, (x>>(cnt-1))&m
		default:
			r = a>>cnt | s<<(64-cnt)
			tmp = a>>(cnt-1) | s<<(65-cnt)
		}
		cf = tmp & 1
	}
	if !c.writeRM(d, ea, r) {
		return xFault
	}
	f := c.rflags()
	c.flags = f&^statusMask | szp(r, w) | cf | (((tmp^r)>>(n-1))&1)<<11
	c.lop = lfNone
	return xOK
}

// opBitTest executes BT BTS BTR BTC.
func (c *CPU) opBitTest(in *decode.X86) xres {
	w := in.Width
	n := 8 * uint64(w)
	d := &in.Args[0]
	var off uint64
	regOff := in.Args[1].Kind != decode.ArgImm
	if regOff {
		off = c.getReg(&in.Args[1])
	} else {
		off = uint64(in.Imm)
	}
	bit := off & (n - 1)
	mask := uint64(1) << bit
	var a, r uint64
	if d.Kind != decode.ArgMem {
		a = c.getReg(d)
		r = rmwCompute(in.Op, a, mask, 0, wmask[w])
		if in.Op != decode.X86Bt {
			c.setReg(d, r)
		}
	} else {
		ea := c.addr(d)
		if regOff {
			ea += uint64((sext(off, w) >> bits.TrailingZeros64(n)) * int64(w))
		}
		if in.Lock && in.Op != decode.X86Bt {
			var res xres
			a, _, res = c.atomicRMW(ea, w, in.Op, mask, 0)
			if res != xOK {
				return res
			}
		} else {
			var ok bool
			if a, ok = c.load(ea, w); !ok {
				return xFault
			}
			if in.Op != decode.X86Bt {
				r = rmwCompute(in.Op, a, mask, 0, wmask[w])
				if !c.store(ea, w, r) {
					return xFault
				}
			}
		}
	}
	f := c.rflags()
	c.flags = f&^rfCF | (a>>bit)&1
	c.lop = lfNone
	return xOK
}

// opBitScan executes BSF BSR TZCNT LZCNT POPCNT.
func (c *CPU) opBitScan(in *decode.X86) xres {
	w := in.Width
	d := &in.Args[0]
	src, ok := c.read(in, &in.Args[1])
	if !ok {
		return xFault
	}
	n := 8 * uint64(w)
	op := in.Op
	if op == decode.X86Tzcnt && !hasBMI1 {
		op = decode.X86Bsf
	}
	if op == decode.X86Lzcnt && !hasABM {
		op = decode.X86Bsr
	}
	switch op {
	case decode.X86Bsf, decode.X86Bsr:
		// QEMU/real hardware: a zero source leaves the destination
		// unchanged (written back at its width); ZF = (src == 0), and
		// the undefined flags follow a logic op on the source.
		if src == 0 {
			c.setReg(d, c.getReg(d))
		} else if op == decode.X86Bsf {
			c.setReg(d, uint64(bits.TrailingZeros64(src)))
		} else {
			c.setReg(d, uint64(63-bits.LeadingZeros64(src)))
		}
		c.setLogic(src, w)
	case decode.X86Tzcnt, decode.X86Lzcnt:
		var r uint64
		if op == decode.X86Tzcnt {
			r = uint64(bits.TrailingZeros64(src | 1<<n))
		} else {
			r = uint64(bits.LeadingZeros64(src)) - (64 - n)
		}
		c.setReg(d, r)
		f := c.rflags() &^ statusMask
		if src == 0 {
			f |= rfCF
		}
		if r == 0 {
			f |= rfZF
		}
		c.flags, c.lop = f, lfNone
	case decode.X86Popcnt:
		if !hasPOPCNT {
			c.why = "POPCNT not advertised in CPUID"
			return xUndef
		}
		c.setReg(d, uint64(bits.OnesCount64(src)))
		f := c.rflags() &^ statusMask
		if src == 0 {
			f |= rfZF
		}
		c.flags, c.lop = f, lfNone
	}
	return xOK
}

// opCmpxchg executes CMPXCHG.
func (c *CPU) opCmpxchg(in *decode.X86) xres {
	w := in.Width
	m := wmask[w]
	d := &in.Args[0]
	src := c.getReg(&in.Args[1])
	acc := c.regs.GPR[0] & m
	var old uint64
	if d.Kind != decode.ArgMem {
		old = c.getReg(d)
		if old == acc {
			c.setReg(d, src)
		} else {
			c.setRegW(0, w, old)
		}
	} else {
		ea := c.addr(d)
		var ok bool
		if in.Lock {
			var res xres
			old, res = c.atomicCAS(ea, w, acc, src)
			if res != xOK {
				return res
			}
		} else {
			if old, ok = c.load(ea, w); !ok {
				return xFault
			}
			nv := old
			if old == acc {
				nv = src
			}
			// The destination is always written (with the old value on
			// failure), as on hardware.
			if !c.store(ea, w, nv) {
				return xFault
			}
		}
		if old != acc {
			c.setRegW(0, w, old)
		}
	}
	c.setSub(acc, old, (acc-old)&m, w)
	return xOK
}

// opCmpxchg8b16b executes CMPXCHG8B and CMPXCHG16B.
func (c *CPU) opCmpxchg8b16b(in *decode.X86) xres {
	g := &c.regs.GPR
	ea := c.addr(&in.Args[0])
	var eq bool
	if in.Op == decode.X86Cmpxchg8b {
		exp := g[2]<<32 | g[0]&0xFFFFFFFF
		nv := g[1]<<32 | g[3]&0xFFFFFFFF
		old, res := c.atomicCAS(ea, 8, exp, nv)
		if res != xOK {
			return res
		}
		eq = old == exp
		if !eq {
			g[0], g[2] = old&0xFFFFFFFF, old>>32
		}
	} else {
		if ea&15 != 0 {
			return xPriv // #GP(0) on a misaligned operand
		}
		var res xres
		eq, res = c.cas128(ea)
		if res != xOK {
			return res
		}
	}
	f := c.rflags() &^ rfZF
	if eq {
		f |= rfZF
	}
	c.flags, c.lop = f, lfNone
	return xOK
}

// opXadd executes XADD.
func (c *CPU) opXadd(in *decode.X86) xres {
	w := in.Width
	m := wmask[w]
	d, s := &in.Args[0], &in.Args[1]
	b := c.getReg(s)
	var a, r uint64
	if d.Kind != decode.ArgMem {
		a = c.getReg(d)
		r = (a + b) & m
		c.setReg(s, a)
		c.setReg(d, r)
	} else {
		ea := c.addr(d)
		if in.Lock {
			var res xres
			a, r, res = c.atomicRMW(ea, w, decode.X86Xadd, b, 0)
			if res != xOK {
				return res
			}
		} else {
			var ok bool
			if a, ok = c.load(ea, w); !ok {
				return xFault
			}
			r = (a + b) & m
			if !c.store(ea, w, r) {
				return xFault
			}
		}
		c.setReg(s, a)
	}
	c.setAdd(a, b, r, w)
	return xOK
}

// opXchg executes XCHG (the memory form is always atomic).
func (c *CPU) opXchg(in *decode.X86) xres {
	d, s := &in.Args[0], &in.Args[1]
	b := c.getReg(s)
	if d.Kind != decode.ArgMem {
		a := c.getReg(d)
		c.setReg(d, b)
		c.setReg(s, a)
		return xOK
	}
	a, _, res := c.atomicRMW(c.addr(d), in.Width, decode.X86Xchg, b, 0)
	if res != xOK {
		return res
	}
	c.setReg(s, a)
	return xOK
}

// opMovx executes MOVZX and MOVSX/MOVSXD.
func (c *CPU) opMovx(in *decode.X86) xres {
	s := &in.Args[1]
	v, ok := c.read(in, s)
	if !ok {
		return xFault
	}
	if in.Op == decode.X86Movsx {
		v = uint64(sext(v, s.Size))
	}
	c.setReg(&in.Args[0], v)
	return xOK
}

// opMov executes MOV (register, memory, immediate forms).
func (c *CPU) opMov(in *decode.X86) xres {
	v, ok := c.read(in, &in.Args[1])
	if !ok {
		return xFault
	}
	if !c.write(&in.Args[0], v) {
		return xFault
	}
	return xOK
}

// opMovbe executes MOVBE.
func (c *CPU) opMovbe(in *decode.X86) xres {
	if !hasMOVBE {
		c.why = "MOVBE not advertised in CPUID"
		return xUndef
	}
	v, ok := c.read(in, &in.Args[1])
	if !ok {
		return xFault
	}
	switch in.Width {
	case 2:
		v = uint64(bits.ReverseBytes16(uint16(v)))
	case 4:
		v = uint64(bits.ReverseBytes32(uint32(v)))
	default:
		v = bits.ReverseBytes64(v)
	}
	if !c.write(&in.Args[0], v) {
		return xFault
	}
	return xOK
}

// opCmov executes CMOVcc. The source is read (and may fault) whatever the
// condition; a 32-bit destination is zero-extended even when not moved.
func (c *CPU) opCmov(in *decode.X86) xres {
	v, ok := c.read(in, &in.Args[1])
	if !ok {
		return xFault
	}
	d := &in.Args[0]
	if c.cond(in.Cond) {
		c.setReg(d, v)
	} else if d.Size == 4 {
		c.setReg(d, c.getReg(d))
	}
	return xOK
}

// opSetcc executes SETcc.
func (c *CPU) opSetcc(in *decode.X86) xres {
	var v uint64
	if c.cond(in.Cond) {
		v = 1
	}
	if !c.write(&in.Args[0], v) {
		return xFault
	}
	return xOK
}

// opBswap executes BSWAP (16-bit: the register becomes 0, as on hardware).
func (c *CPU) opBswap(in *decode.X86) xres {
	d := &in.Args[0]
	v := c.getReg(d)
	switch d.Size {
	case 8:
		v = bits.ReverseBytes64(v)
	case 4:
		v = uint64(bits.ReverseBytes32(uint32(v)))
	default:
		v = 0
	}
	c.setReg(d, v)
	return xOK
}

// opCbwCwd executes CBW/CWDE/CDQE and CWD/CDQ/CQO.
func (c *CPU) opCbwCwd(in *decode.X86) xres {
	g := &c.regs.GPR
	w := in.Width
	if in.Op == decode.X86Cbw {
		c.setRegW(0, w, uint64(sext(g[0], w/2)))
		return xOK
	}
	var v uint64
	if sext(g[0], w) < 0 {
		v = ^uint64(0)
	}
	c.setRegW(2, w, v)
	return xOK
}

// push pushes w bytes; registers change only on success.
func (c *CPU) push(v uint64, w uint8) bool {
	sp := c.regs.GPR[4] - uint64(w)
	if !c.store(sp, w, v) {
		return false
	}
	c.regs.GPR[4] = sp
	return true
}

// opPush executes PUSH.
func (c *CPU) opPush(in *decode.X86) xres {
	v, ok := c.read(in, &in.Args[0])
	if !ok {
		return xFault
	}
	if !c.push(v, in.Width) {
		return xFault
	}
	return xOK
}

// opPop executes POP. A memory destination's address is computed with
// the incremented RSP, as the SDM specifies.
func (c *CPU) opPop(in *decode.X86) xres {
	d := &in.Args[0]
	w := d.Size
	sp := c.regs.GPR[4]
	v, ok := c.load(sp, w)
	if !ok {
		return xFault
	}
	c.regs.GPR[4] = sp + uint64(w)
	if !c.write(d, v) {
		c.regs.GPR[4] = sp
		return xFault
	}
	return xOK
}

// opPushf executes PUSHF/PUSHFQ (RF and VM read as 0).
func (c *CPU) opPushf(in *decode.X86) xres {
	if !c.push(c.rflags()&^(1<<16|1<<17), in.Width) {
		return xFault
	}
	return xOK
}

// opPopf executes POPF/POPFQ at CPL 3 (IF and IOPL unchanged).
func (c *CPU) opPopf(in *decode.X86) xres {
	w := in.Width
	sp := c.regs.GPR[4]
	v, ok := c.load(sp, w)
	if !ok {
		return xFault
	}
	c.regs.GPR[4] = sp + uint64(w)
	mask := uint64(popfMask)
	if w == 2 {
		mask &= 0xFFFF
	}
	f := c.rflags()
	c.flags = f&^mask | v&mask | rfFixed
	c.lop = lfNone
	return xOK
}

// opLeave executes LEAVE.
func (c *CPU) opLeave(in *decode.X86) xres {
	g := &c.regs.GPR
	w := in.Width
	v, ok := c.load(g[5], w)
	if !ok {
		return xFault
	}
	if w == 2 {
		c.setRegW(4, 2, g[5]+2)
		c.setRegW(5, 2, v)
		return xOK
	}
	g[4] = g[5] + 8
	g[5] = v
	return xOK
}

// opEnter executes ENTER size, level (64-bit operand size).
func (c *CPU) opEnter(in *decode.X86) xres {
	g := &c.regs.GPR
	size, level := uint64(in.Imm)&0xFFFF, uint64(in.Imm2)&31
	sp, bp := g[4], g[5]
	sp -= 8
	if !c.store(sp, 8, bp) {
		return xFault
	}
	frame := sp
	if level > 0 {
		for i := uint64(1); i < level; i++ {
			bp -= 8
			v, ok := c.load(bp, 8)
			if !ok {
				return xFault
			}
			sp -= 8
			if !c.store(sp, 8, v) {
				return xFault
			}
		}
		sp -= 8
		if !c.store(sp, 8, frame) {
			return xFault
		}
	}
	g[5] = frame
	g[4] = sp - size
	return xOK
}

// opXlat executes XLAT: AL = [seg: RBX + AL].
func (c *CPU) opXlat(in *decode.X86) xres {
	a := &in.Args[0]
	ea := c.regs.GPR[3] + c.regs.GPR[0]&0xFF
	if a.Flags&decode.ArgA32 != 0 {
		ea = uint64(uint32(ea))
	}
	ea += c.segBase((a.Flags & decode.ArgSegMask) >> decode.ArgSegShift)
	v, ok := c.load(ea, 1)
	if !ok {
		return xFault
	}
	c.setRegW(0, 1, v)
	return xOK
}

// opLahfSahf executes LAHF and SAHF.
func (c *CPU) opLahfSahf(in *decode.X86) xres {
	const low = rfSF | rfZF | rfAF | rfPF | rfCF
	f := c.rflags()
	if in.Op == decode.X86Lahf {
		g := &c.regs.GPR[0]
		*g = *g&^0xFF00 | (f&low|rfFixed)<<8
		return xOK
	}
	ah := (c.regs.GPR[0] >> 8) & low
	c.flags = f&^low | ah
	c.lop = lfNone
	return xOK
}

// opFlagOp executes CLC STC CMC CLD STD.
func (c *CPU) opFlagOp(in *decode.X86) {
	f := c.rflags()
	switch in.Op {
	case decode.X86Clc:
		f &^= rfCF
	case decode.X86Stc:
		f |= rfCF
	case decode.X86Cmc:
		f ^= rfCF
	case decode.X86Cld:
		f &^= rfDF
	case decode.X86Std:
		f |= rfDF
	}
	c.flags, c.lop = f, lfNone
}

// opMovSeg executes MOV r/m, Sreg (reads the Linux user selectors).
func (c *CPU) opMovSeg(in *decode.X86) xres {
	v := uint64(c.sel[in.Args[1].Reg%6])
	d := &in.Args[0]
	if d.Kind == decode.ArgMem {
		if !c.store(c.addr(d), 2, v) {
			return xFault
		}
		return xOK
	}
	c.setReg(d, v)
	return xOK
}
