package amd64

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// The scalar integer extensions: BMI1 (ANDN BEXTR BLSI BLSMSK BLSR
// TZCNT), BMI2 (BZHI MULX PDEP PEXT RORX SARX SHLX SHRX), ADX (ADCX
// ADOX), RDTSCP, RDPID and FSGSBASE. LZCNT/TZCNT/MOVBE/POPCNT live in
// ops.go. Flags follow the SDM; the flags it calls undefined are
// computed as a logic operation on the result would (AF = 0, PF from the
// result), which the differential tests do not compare.

// execIntExt executes ops X86Andn … X86Wrgsbase.
func (c *CPU) execIntExt(in *decode.X86) xres {
	w := in.Width
	m := wmask[w&15]
	a := in.Args[:3]
	switch in.Op {
	case decode.X86Rdpid:
		c.regs.GPR[a[0].Reg&15] = uint64(c.TSCAux)
		return xOK
	case decode.X86Rdfsbase, decode.X86Rdgsbase, decode.X86Wrfsbase, decode.X86Wrgsbase:
		return c.opFSGSBase(in)
	case decode.X86Adcx, decode.X86Adox:
		src, ok := c.read(in, &a[1])
		if !ok {
			return xFault
		}
		f := c.rflags()
		flag := uint64(rfCF)
		if in.Op == decode.X86Adox {
			flag = rfOF
		}
		cin := uint64(0)
		if f&flag != 0 {
			cin = 1
		}
		d := c.getReg(&a[0])
		r := (d + src + cin) & m
		carry := r < d || (cin == 1 && r == d)
		c.setReg(&a[0], r)
		f &^= flag
		if carry {
			f |= flag
		}
		c.flags, c.lop = f, lfNone
		return xOK
	}

	// VEX forms: the r/m operand is the one that may be memory.
	var rmIdx int
	switch in.Op {
	case decode.X86Andn, decode.X86Mulx, decode.X86Pdep, decode.X86Pext:
		rmIdx = 2
	default:
		rmIdx = 1
	}
	src, ok := c.read(in, &a[rmIdx])
	if !ok {
		return xFault
	}
	src &= m
	n := uint64(8 * w)
	var r uint64
	switch in.Op {
	case decode.X86Andn:
		r = ^c.getReg(&a[1]) & src & m
		c.setReg(&a[0], r)
		c.setLogic(r, w)
	case decode.X86Bextr:
		ctl := c.getReg(&a[2])
		start, length := ctl&0xFF, ctl>>8&0xFF
		if start < n {
			r = src >> start
			if length < 64 {
				r &= 1<<length - 1
			}
		}
		c.setReg(&a[0], r)
		c.setLogic(r, w) // ZF by result, CF = OF = 0
	case decode.X86Blsi, decode.X86Blsmsk, decode.X86Blsr:
		switch in.Op {
		case decode.X86Blsi:
			r = -src & src & m
		case decode.X86Blsmsk:
			r = (src - 1) ^ src&m
			r &= m
		default:
			r = (src - 1) & src & m
		}
		c.setReg(&a[0], r)
		f := c.rflags()&^statusMask | szp(r, w)&(rfSF|rfZF|rfPF)
		if (in.Op == decode.X86Blsi) == (src != 0) {
			f |= rfCF // BLSI: CF = src != 0; BLSMSK, BLSR: CF = src == 0
		}
		c.flags, c.lop = f, lfNone
	case decode.X86Bzhi:
		idx := c.getReg(&a[2]) & 0xFF
		r = src
		f := c.rflags() &^ statusMask
		if idx < n {
			r = src & (1<<idx - 1)
		} else {
			f |= rfCF
		}
		c.setReg(&a[0], r)
		c.flags, c.lop = f|szp(r, w), lfNone
	case decode.X86Mulx:
		var hi, lo uint64
		if w == 8 {
			hi, lo = bits.Mul64(c.regs.GPR[2], src)
		} else {
			p := uint64(uint32(c.regs.GPR[2])) * src
			hi, lo = p>>32, p&0xFFFFFFFF
		}
		// Lo first: when both destinations are the same register, it
		// holds the high half.
		c.setReg(&a[1], lo)
		c.setReg(&a[0], hi)
	case decode.X86Pdep:
		c.setReg(&a[0], pdep(c.getReg(&a[1]), src))
	case decode.X86Pext:
		c.setReg(&a[0], pext(c.getReg(&a[1]), src))
	case decode.X86Rorx:
		k := uint64(in.Imm) & (n - 1)
		if w == 8 {
			r = bits.RotateLeft64(src, -int(k))
		} else {
			r = uint64(bits.RotateLeft32(uint32(src), -int(k)))
		}
		c.setReg(&a[0], r)
	case decode.X86Sarx, decode.X86Shlx, decode.X86Shrx:
		k := c.getReg(&a[2]) & (n - 1)
		switch in.Op {
		case decode.X86Sarx:
			r = uint64(sext(src, w)>>k) & m
		case decode.X86Shlx:
			r = src << k & m
		default:
			r = src >> k
		}
		c.setReg(&a[0], r)
	default:
		c.why = "unimplemented op " + in.Op.String()
		return xUndef
	}
	return xOK
}

// pdep deposits the low bits of v at the set bit positions of mask.
func pdep(v, mask uint64) uint64 {
	var r uint64
	for mask != 0 {
		low := mask & -mask
		if v&1 != 0 {
			r |= low
		}
		v >>= 1
		mask &^= low
	}
	return r
}

// pext gathers the bits of v at the set bit positions of mask into the
// low bits of the result.
func pext(v, mask uint64) uint64 {
	var r uint64
	k := uint(0)
	for mask != 0 {
		low := mask & -mask
		if v&low != 0 {
			r |= 1 << k
		}
		k++
		mask &^= low
	}
	return r
}

// opFSGSBase executes RDFSBASE/RDGSBASE/WRFSBASE/WRGSBASE (Linux sets
// CR4.FSGSBASE and advertises HWCAP2_FSGSBASE). A 32-bit read
// zero-extends; a 32-bit write zero-extends the base. A 64-bit write of a
// non-canonical address raises #GP (SIGSEGV).
func (c *CPU) opFSGSBase(in *decode.X86) xres {
	a := &in.Args[0]
	switch in.Op {
	case decode.X86Rdfsbase:
		c.setReg(a, c.regs.FSBase)
	case decode.X86Rdgsbase:
		c.setReg(a, c.regs.GSBase)
	default:
		v := c.getReg(a)
		if int64(v)<<16>>16 != int64(v) {
			return xPriv
		}
		if in.Op == decode.X86Wrfsbase {
			c.regs.FSBase = v
		} else {
			c.regs.GSBase = v
		}
	}
	return xOK
}
