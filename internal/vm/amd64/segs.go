package amd64

import (
	"github.com/uvm-emu/uvm/internal/decode"
)

// Segment registers and far transfers in a 64-bit Linux process.
//
// Selectors are checked against the GDT Linux installs on x86-64
// (arch/x86/include/asm/segment.h): entry 4 __USER32_CS (0x23, readable
// compatibility-mode code), 5 __USER_DS (0x2b, writable data), 6
// __USER_CS (0x33, readable 64-bit code), 15 the CPUNODE entry (0x7b,
// read-only data whose limit holds the CPU number), all DPL 3; entries 1-3
// are the kernel's (DPL 0), 8-11 the TSS and LDT system descriptors, 0, 7
// and the TLS entries 12-14 are empty (the guest cannot fill them: uvm has
// no set_thread_area), the GDT has 16 entries and there is no LDT. Every
// refused load is #GP with the selector (RPL cleared) as error code, #GP(0)
// for a null CS or SS; Linux turns it into SIGSEGV, si_code SI_KERNEL.
// A far transfer to __USER32_CS would switch to 32-bit code, which uvm does
// not run: it stops with an undefined-instruction exit saying so.

// Segment register numbers (decode.ArgSeg).
const (
	segES = iota
	segCS
	segSS
	segDS
	segFS
	segGS
)

// Linux user selectors.
const (
	selUser32CS = 0x23
	selUserDS   = 0x2b
	selUserCS   = 0x33
)

// gdtKind is what a GDT entry holds, as far as CPL-3 loads can tell.
type gdtKind uint8

const (
	gdtEmpty  gdtKind = iota // zero descriptor, system descriptor or DPL 0
	gdtCode64                // readable code, L=1, DPL 3
	gdtCode32                // readable code, L=0, DPL 3
	gdtDataRW                // writable data, DPL 3
	gdtDataRO                // read-only data, DPL 3
)

// gdtEntry returns the kind of GDT entry index (selector >> 3).
func gdtEntry(index uint16) gdtKind {
	switch index {
	case selUser32CS >> 3:
		return gdtCode32
	case selUserDS >> 3:
		return gdtDataRW
	case selUserCS >> 3:
		return gdtCode64
	case 15:
		return gdtDataRO
	}
	return gdtEmpty
}

// selKind returns the descriptor a selector names (gdtEmpty for the LDT,
// which Linux processes have none of unless they modify_ldt, and past the
// GDT limit).
func selKind(sel uint16) gdtKind {
	if sel&4 != 0 || sel>>3 >= 16 {
		return gdtEmpty
	}
	return gdtEntry(sel >> 3)
}

// gp raises #GP with error code err.
func (c *CPU) gp(err uint16) xres {
	c.gpErr = err
	return xPriv
}

// loadDataSeg loads a data segment register (DS, ES, FS, GS, SS) as MOV
// and POP do at CPL 3. In 64-bit mode a load into FS or GS also loads
// its base from the descriptor: 0 for every Linux GDT entry, and 0 for a
// null selector on Intel CPUs (AMD keeps the old base, Linux's
// X86_BUG_NULL_SEG); uvm follows Intel.
func (c *CPU) loadDataSeg(seg uint8, sel uint16) xres {
	if seg == segCS || seg > segGS {
		c.why = "load of segment register " + itoa(int(seg))
		return xUndef
	}
	k := selKind(sel)
	if seg == segSS {
		// SS: a writable data segment with RPL = DPL = CPL.
		if sel&^3 == 0 {
			return c.gp(0)
		}
		if k != gdtDataRW || sel&3 != 3 {
			return c.gp(sel &^ 3)
		}
		c.sel[seg] = sel
		c.ssShadow = true
		return xOK
	}
	if sel&^3 != 0 && k == gdtEmpty {
		return c.gp(sel &^ 3)
	}
	c.sel[seg] = sel
	switch seg {
	case segFS:
		c.regs.FSBase = 0
	case segGS:
		c.regs.GSBase = 0
	}
	return xOK
}

// opMovToSeg executes MOV Sreg, r/m16.
func (c *CPU) opMovToSeg(in *decode.X86) xres {
	v, ok := c.read(in, &in.Args[1])
	if !ok {
		return xFault
	}
	return c.loadDataSeg(in.Args[0].Reg, uint16(v))
}

// opPushSeg executes PUSH FS/GS (the selector zero-extended).
func (c *CPU) opPushSeg(in *decode.X86) xres {
	if !c.push(uint64(c.sel[in.Args[0].Reg%6]), in.Width) {
		return xFault
	}
	return xOK
}

// opPopSeg executes POP FS/GS: RSP moves only when the load succeeds.
func (c *CPU) opPopSeg(in *decode.X86) xres {
	sp := c.regs.GPR[4]
	v, ok := c.load(sp, in.Width)
	if !ok {
		return xFault
	}
	if r := c.loadDataSeg(in.Args[0].Reg, uint16(v)); r != xOK {
		return r
	}
	c.regs.GPR[4] = sp + uint64(in.Width)
	return xOK
}

// farTarget checks a far transfer's new CS at CPL 3 (a return when ret:
// RPL must equal CPL; a jump or call: RPL <= CPL, always true) and the
// target offset. It returns xOK when the transfer goes ahead in 64-bit
// mode.
func (c *CPU) farTarget(sel uint16, off uint64, ret bool) xres {
	if sel&^3 == 0 {
		return c.gp(0)
	}
	k := selKind(sel)
	if k != gdtCode64 && k != gdtCode32 || (ret && sel&3 != 3) {
		return c.gp(sel &^ 3)
	}
	if k == gdtCode32 {
		c.why = "far transfer to the 32-bit compatibility-mode code segment (CS 0x23): 32-bit code is unimplemented"
		return xUndef
	}
	if !canonical(off) {
		return c.gp(0)
	}
	return xOK
}

// canonical reports whether a is a canonical 48-bit address.
func canonical(a uint64) bool { return uint64(int64(a<<16)>>16) == a }

// opLret executes a far RET: pops the offset and CS (operand size each)
// and releases Imm more bytes. It returns the target in *pc.
func (c *CPU) opLret(in *decode.X86, pc *uint64) xres {
	w := in.Width
	sp := c.regs.GPR[4]
	off, ok := c.load(sp, w)
	if !ok {
		return xFault
	}
	cs, ok := c.load(sp+uint64(w), w)
	if !ok {
		return xFault
	}
	if r := c.farTarget(uint16(cs), off, true); r != xOK {
		return r
	}
	c.sel[segCS] = uint16(cs)
	c.regs.GPR[4] = sp + 2*uint64(w) + uint64(in.Imm)
	*pc = off
	return xOK
}

// opFar executes JMP/CALL m16:16/32/64: the offset (operand size) then
// the selector. CALL pushes CS and the return address at operand size.
func (c *CPU) opFar(in *decode.X86, pc *uint64) xres {
	w := in.Width
	a := c.addr(&in.Args[0])
	off, ok := c.load(a, w)
	if !ok {
		return xFault
	}
	sel, ok := c.load(a+uint64(w), 2)
	if !ok {
		return xFault
	}
	if r := c.farTarget(uint16(sel), off, false); r != xOK {
		return r
	}
	if in.Op == decode.X86FarCall {
		sp := c.regs.GPR[4]
		if !c.store(sp-uint64(w), w, uint64(c.sel[segCS])) ||
			!c.store(sp-2*uint64(w), w, (in.PC+uint64(in.Len))&wmask[w&15]) {
			return xFault
		}
		c.regs.GPR[4] = sp - 2*uint64(w)
	}
	c.sel[segCS] = uint16(sel)&^3 | 3
	*pc = off
	return xOK
}

// itoa formats a small number for c.why.
func itoa(n int) string {
	if n < 0 || n > 9 {
		return "?"
	}
	return string(rune('0' + n))
}
