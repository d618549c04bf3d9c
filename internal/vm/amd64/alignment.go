package amd64

import (
	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Alignment checking (#AC) with RFLAGS.AC set, as on hardware with
// CR0.AM (SDM vol. 3, 6.15 "Alignment Check Exception"), measured on an
// Intel CPU: every data access of 2, 4 or 8 bytes must be aligned to its
// size, whether the instruction is an integer, x87, MMX or scalar SSE one;
// an 80-bit x87 operand to 8; a far pointer to its offset size; the x87
// environment and state images (FNSTENV, FLDENV, FNSAVE, FRSTOR) to 4.
// Implicit stack accesses (PUSH, POP, CALL, RET, LEAVE, ENTER …) and
// string instructions (each element; none for REP with RCX = 0) are
// checked too. Byte accesses, 16- and 32-byte vector operands (which are
// either unchecked or #GP on misalignment) and instructions that access no
// memory (LEA, NOP, PREFETCH, CLFLUSH) never raise it.

// AlignmentExit reports whether the instruction at RIP makes a misaligned
// data access; if so it returns the #AC exit (Linux reports si_addr 0, so
// Fault.Addr is 0). Call it before stepping the instruction while
// AlignCheck is true. An instruction that cannot be fetched or decoded is
// left to the step, which reports that.
func (c *CPU) AlignmentExit() (vm.Exit, bool) {
	c.tlb.Enter()
	defer c.tlb.Leave()
	pc := c.regs.RIP
	p, f := c.page(pc)
	if f != nil {
		return vm.Exit{}, false
	}
	in := p.At(pc)
	if in == nil {
		r, _, dr := p.DecodeRun(c.mm, pc)
		c.tlb.Sync()
		if dr != icache.DecodeOK {
			return vm.Exit{}, false
		}
		in = r
	}
	if c.misaligned(in) {
		return vm.Exit{Reason: vm.ExitAlignment, PC: pc}, true
	}
	return vm.Exit{}, false
}

// misaligned reports whether one of in's data accesses is misaligned.
func (c *CPU) misaligned(in *decode.X86) bool {
	g := &c.regs.GPR
	sp := g[4]
	off := func(a uint64, n uint64) bool { return n > 1 && a&(n-1) != 0 }
	w := uint64(in.Width)
	switch in.Op {
	case decode.X86Lea, decode.X86Nop, decode.X86Prefetch, decode.X86Clflush:
		return false
	case decode.X86Push, decode.X86Pushf, decode.X86PushSeg:
		if in.Op == decode.X86Push && in.Args[0].Kind == decode.ArgMem && c.argMisaligned(in, &in.Args[0]) {
			return true
		}
		return off(sp-w, w)
	case decode.X86Pop, decode.X86Popf, decode.X86PopSeg:
		if in.Op == decode.X86Pop {
			w = uint64(in.Args[0].Size)
		}
		if off(sp, w) {
			return true
		}
		return in.Op == decode.X86Pop && in.Args[0].Kind == decode.ArgMem && c.argMisaligned(in, &in.Args[0])
	case decode.X86Call:
		return off(sp-8, 8)
	case decode.X86CallInd:
		return c.argMisaligned(in, &in.Args[0]) || off(sp-8, 8)
	case decode.X86Ret, decode.X86Iret:
		return off(sp, 8)
	case decode.X86Lret:
		return off(sp, w)
	case decode.X86FarJmp:
		return off(c.addr(&in.Args[0]), w)
	case decode.X86FarCall:
		return off(c.addr(&in.Args[0]), w) || off(sp-w, w)
	case decode.X86Leave:
		return off(g[5], w)
	case decode.X86Enter:
		return off(sp-w, w)
	case decode.X86Movs, decode.X86Stos, decode.X86Lods, decode.X86Scas, decode.X86Cmps:
		if in.Rep != 0 && g[1]&wmask[in.Aux&15] == 0 {
			return false
		}
		for i := 0; i < int(in.NArgs); i++ {
			if a := &in.Args[i]; a.Kind == decode.ArgMem && off(c.addr(a), w) {
				return true
			}
		}
		return false
	case decode.X87Fnstenv, decode.X87Fldenv, decode.X87Fnsave, decode.X87Frstor:
		return off(c.addr(&in.Args[0]), 4)
	}
	for i := 0; i < int(in.NArgs); i++ {
		if a := &in.Args[i]; a.Kind == decode.ArgMem && c.argMisaligned(in, a) {
			return true
		}
	}
	return false
}

// argMisaligned checks one explicit memory operand by its size.
func (c *CPU) argMisaligned(in *decode.X86, a *decode.X86Arg) bool {
	var n uint64
	switch a.Size {
	case 2, 4, 8:
		n = uint64(a.Size)
	case 10:
		n = 8
	default:
		return false
	}
	return c.addr(a)&(n-1) != 0
}
