package amd64

import (
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// CPU is one x86-64 hardware thread: the register file (with lazily
// evaluated arithmetic flags), its TLB and the shared instruction cache.
//
// Helpers for the SSE/x87 half (execSSE in sse*.go):
//   - c.regs.XMM, c.regs.MXCSR, c.regs.FCW … hold the vector/x87 state;
//     c.regs.GPR the general registers (RFLAGS is NOT live there, see below).
//   - c.addr(a) computes the effective address of an ArgMem operand
//     (base + index*scale + disp, 0x67 wrap, FS/GS base).
//   - c.getReg(a) / c.setReg(a, v) read and write a general-register
//     operand at a.Size with x86's rules (32-bit writes zero-extend, 8/16-bit
//     writes merge, AH..BH).
//   - c.tlb: Load*/Store*/LoadBytes/StoreBytes; on failure return sseFault
//     (c.tlb.Fault is set) without changing any state.
//   - c.setStatusFlags(f) replaces CF, PF, AF, ZF, SF, OF with the bits of
//     f (COMISD/UCOMISD/FCOMI/PTEST); c.rflags() reads the materialised
//     RFLAGS.
type CPU struct {
	regs Regs

	// Lazy flags. When lop == lfNone, flags holds all of RFLAGS.
	// Otherwise the status flags (CF PF AF ZF SF OF) are a function of
	// (lop, lw, la, lb, lr, lc) and only the other bits of flags are
	// current.
	flags uint64
	lop   uint8
	lw    uint8 // operation width in bytes
	la    uint64
	lb    uint64
	lr    uint64
	lc    uint64 // carry in (ADC/SBB), previous CF (INC/DEC), overflow (MUL)

	mm   *vm.MM
	tlb  *vm.TLB
	code *icache.X86Cache
	// Small direct-mapped cache of decoded pages (per CPU, no locks).
	pcache [pcacheSize]*icache.X86Page

	retired   uint64
	interrupt atomic.Bool
	// trap is the kernel's fast path for SYSCALL and INT3 (vm.TrapHandler;
	// nil: Run returns at each).
	trap vm.TrapHandler
	// TSC, when set, supplies RDTSC at pc given the thread's retired
	// count so far: one machine-wide clock (virtual time in deterministic
	// mode), so the counter is monotonic across threads. Nil: the
	// thread's own retired instructions.
	TSC func(retired, pc uint64) uint64
	// TSCAux is the IA32_TSC_AUX value RDTSCP and RDPID return: Linux
	// keeps (node << 12) | cpu there; uvm sets the virtual CPU number
	// of the thread (tasks). Set before Run, not while it runs.
	TSCAux uint32
	// cm is the cache model and re-decode state (cachemodel.go); nil
	// when both are off.
	cm *cmState
	// why explains the next ExitUndefined (set by the op that refuses).
	why string
	// trapStep is set during StepTrap (trapstep.go): a REP string
	// instruction runs one iteration, as under the trap flag.
	trapStep bool
	// avx: the x86-64-v3 CPU model (AVX/AVX2/FMA/F16C/XSAVE enabled in
	// CPUID and the interpreter; avx_xsave.go). Set before the CPU runs.
	avx bool
	// sel holds the segment selectors ES, CS, SS, DS, FS, GS (segs.go);
	// gpErr is the error code of the #GP being raised (set with xPriv).
	sel   [6]uint16
	gpErr uint16
	// ssShadow: the last instruction loaded SS (MOV SS), which blocks the
	// single-step trap until after the next one (trapflag.go).
	ssShadow bool
}

const pcacheSize = 32

// Flag bits of RFLAGS.
const (
	rfCF = 1 << 0
	rfPF = 1 << 2
	rfAF = 1 << 4
	rfZF = 1 << 6
	rfSF = 1 << 7
	rfTF = 1 << 8
	rfIF = 1 << 9
	rfDF = 1 << 10
	rfOF = 1 << 11
	rfRF = 1 << 16
	rfAC = 1 << 18
	rfID = 1 << 21

	statusMask = rfCF | rfPF | rfAF | rfZF | rfSF | rfOF
	// popfMask: the bits a CPL-3 POPF/IRET may change (IF and IOPL stay).
	popfMask = statusMask | rfTF | rfDF | 1<<14 | rfAC | rfID
	// rfFixed is bit 1, always set.
	rfFixed = 1 << 1
)

// Linux x86-64 user segment selectors at exec: ES CS SS DS FS GS.
var segSelectors = [6]uint16{0, selUserCS, selUserDS, 0, 0, 0}

// NewCPU returns a CPU with zeroed registers bound to mm. It installs the
// address space's instruction cache (mm.Code) when there is none.
func NewCPU(mm *vm.MM) *CPU {
	c := &CPU{mm: mm, tlb: vm.NewTLB(mm)}
	c.tlb.SetInterrupt(c.Interrupt)
	c.flags = rfFixed | rfIF
	c.regs.MXCSR = 0x1F80
	c.regs.FCW = 0x37F
	c.sel = segSelectors
	c.code = x86Cache(mm)
	return c
}

func x86Cache(mm *vm.MM) *icache.X86Cache {
	if mm.Code == nil {
		mm.Code = icache.NewX86Cache(mm)
	}
	return mm.Code.(*icache.X86Cache)
}

var _ vm.CPU = (*CPU)(nil)

// Retired is the number of instructions retired so far.
func (c *CPU) Retired() uint64 { return c.retired }

// Interrupt asks Run to return ExitBudget soon (at the next taken branch
// or page crossing). Safe from any goroutine; a pending request makes the
// next Run return at once.
func (c *CPU) Interrupt() { c.interrupt.Store(true) }

// PC returns RIP.
func (c *CPU) PC() uint64 { return c.regs.RIP }

// SetPC sets RIP.
func (c *CPU) SetPC(pc uint64) { c.regs.RIP = pc }

// SP returns RSP.
func (c *CPU) SP() uint64 { return c.regs.GPR[4] }

// SetSP sets RSP.
func (c *CPU) SetSP(v uint64) { c.regs.GPR[4] = v }

// Reg reads general register i (rax=0 … r15=15).
func (c *CPU) Reg(i int) uint64 { return c.regs.GPR[i&15] }

// SetReg writes general register i.
func (c *CPU) SetReg(i int, v uint64) { c.regs.GPR[i&15] = v }

// TLS returns the FS base.
func (c *CPU) TLS() uint64 { return c.regs.FSBase }

// SetTLS sets the FS base (arch_prctl ARCH_SET_FS).
func (c *CPU) SetTLS(v uint64) { c.regs.FSBase = v }

// GSBase returns the GS base.
func (c *CPU) GSBase() uint64 { return c.regs.GSBase }

// SetGSBase sets the GS base (arch_prctl ARCH_SET_GS).
func (c *CPU) SetGSBase(v uint64) { c.regs.GSBase = v }

// MM returns the address space.
func (c *CPU) MM() *vm.MM { return c.mm }

// TLB returns the CPU's translation cache.
func (c *CPU) TLB() *vm.TLB { return c.tlb }

// Clone returns a copy of the register state bound to mm with a fresh
// TLB and a zero retired count; threads of the same MM share its
// instruction cache.
func (c *CPU) Clone(mm *vm.MM) vm.CPU {
	n := &CPU{}
	n.regs = c.regs
	n.regs.GPR = c.regs.GPR
	n.flags = c.rflags()
	n.mm = mm
	n.tlb = vm.NewTLB(mm)
	n.tlb.SetInterrupt(n.Interrupt)
	n.code = x86Cache(mm)
	n.avx = c.avx
	n.sel = c.sel
	c.cmClone(n)
	return n
}

// Regs returns the register file with RFLAGS materialised from the lazy
// flags. The pointer aliases the CPU's state: changes to GPR, RIP, XMM …
// take effect directly; after changing RFLAGS call SetRFLAGS (or
// SetRegs) so the lazy flag state is replaced.
func (c *CPU) Regs() *Regs {
	c.regs.RFLAGS = c.rflags()
	return &c.regs
}

// SetRegs replaces the whole register file (signal return). RFLAGS is
// taken as is, apart from bit 1 which is always set.
func (c *CPU) SetRegs(r *Regs) {
	c.regs = *r
	c.SetRFLAGS(r.RFLAGS)
}

// RFLAGS returns the materialised flags register.
func (c *CPU) RFLAGS() uint64 { return c.rflags() }

// SetRFLAGS replaces RFLAGS (bit 1 forced on).
func (c *CPU) SetRFLAGS(f uint64) {
	c.flags = f | rfFixed
	c.lop = lfNone
	c.regs.RFLAGS = c.flags
}

// wmask is the all-ones value of a width in bytes (1, 2, 4, 8).
var wmask = [17]uint64{1: 0xFF, 2: 0xFFFF, 4: 0xFFFFFFFF, 8: ^uint64(0), 16: ^uint64(0)}

// wkeep is the part of a register a write at a width keeps: the upper
// bits at 1 and 2 bytes (merged), nothing at 4 (zero-extended) and 8.
var wkeep = [16]uint64{1: ^uint64(0xFF), 2: ^uint64(0xFFFF)}

// getReg reads a general-register operand at its size.
func (c *CPU) getReg(a *decode.X86Arg) uint64 {
	return c.regs.GPR[a.Reg&15] >> (a.Shift & 63) & wmask[a.Size&15]
}

// setReg writes a general-register operand at its size: 64-bit writes
// replace, 32-bit writes zero-extend, 16/8-bit writes merge.
func (c *CPU) setReg(a *decode.X86Arg, v uint64) {
	p := &c.regs.GPR[a.Reg&15]
	switch a.Size {
	case 8:
		*p = v
	case 4:
		*p = uint64(uint32(v))
	case 2:
		*p = *p&^0xFFFF | v&0xFFFF
	default:
		sh := a.Shift & 63
		*p = *p&^(0xFF<<sh) | (v&0xFF)<<sh
	}
}

// setRegW writes register r (0..15) at width w with the same rules.
func (c *CPU) setRegW(r uint8, w uint8, v uint64) {
	p := &c.regs.GPR[r&15]
	switch w {
	case 8:
		*p = v
	case 4:
		*p = uint64(uint32(v))
	case 2:
		*p = *p&^0xFFFF | v&0xFFFF
	default:
		*p = *p&^0xFF | v&0xFF
	}
}

// eaNoSeg computes base + index*scale + disp (LEA's value).
func (c *CPU) eaNoSeg(a *decode.X86Arg) uint64 {
	ea := uint64(a.Disp)
	if a.Reg != decode.NoReg {
		ea += c.regs.GPR[a.Reg&15]
	}
	if a.Index != decode.NoReg {
		ea += c.regs.GPR[a.Index&15] * uint64(a.Scale)
	}
	if a.Flags&decode.ArgA32 != 0 {
		ea = uint64(uint32(ea))
	}
	return ea
}

// addr computes the linear address of a memory operand (with the FS/GS
// base of a segment override). Small enough to be inlined.
func (c *CPU) addr(a *decode.X86Arg) uint64 {
	ea := uint64(a.Disp)
	if r := a.Reg; r < 16 {
		ea += c.regs.GPR[r]
	}
	if x := a.Index; x < 16 {
		ea += c.regs.GPR[x] * uint64(a.Scale)
	}
	if a.Flags != 0 {
		ea = c.addrFlags(a, ea)
	}
	return ea
}

// ea0 is addr for operands without flags (no 0x67, no FS/GS): the
// specialised forms of decode.specializeX86 only have such operands.
func (c *CPU) ea0(a *decode.X86Arg) uint64 {
	ea := uint64(a.Disp)
	if r := a.Reg; r < 16 {
		ea += c.regs.GPR[r]
	}
	if x := a.Index; x < 16 {
		ea += c.regs.GPR[x] * uint64(a.Scale)
	}
	return ea
}

// addrFlags applies the 0x67 wrap and the FS/GS base.
//
//go:noinline
func (c *CPU) addrFlags(a *decode.X86Arg, ea uint64) uint64 {
	if a.Flags&decode.ArgA32 != 0 {
		ea = uint64(uint32(ea))
	}
	switch (a.Flags & decode.ArgSegMask) >> decode.ArgSegShift {
	case decode.SegFS:
		ea += c.regs.FSBase
	case decode.SegGS:
		ea += c.regs.GSBase
	}
	return ea
}

// segBase returns the base added for a string instruction's segment.
func (c *CPU) segBase(seg uint8) uint64 {
	switch seg {
	case decode.SegFS:
		return c.regs.FSBase
	case decode.SegGS:
		return c.regs.GSBase
	}
	return 0
}

// load reads size bytes (1, 2, 4, 8) at addr.
func (c *CPU) load(addr uint64, size uint8) (uint64, bool) {
	if c.cm != nil {
		c.cmData(addr, uint64(size), false)
	}
	switch size {
	case 1:
		v, ok := c.tlb.Load8(addr)
		return uint64(v), ok
	case 2:
		v, ok := c.tlb.Load16(addr)
		return uint64(v), ok
	case 4:
		v, ok := c.tlb.Load32(addr)
		return uint64(v), ok
	}
	return c.tlb.Load64(addr)
}

// store writes size bytes (1, 2, 4, 8) at addr.
func (c *CPU) store(addr uint64, size uint8, v uint64) bool {
	if c.cm != nil {
		c.cmData(addr, uint64(size), true)
	}
	switch size {
	case 1:
		return c.tlb.Store8(addr, uint8(v))
	case 2:
		return c.tlb.Store16(addr, uint16(v))
	case 4:
		return c.tlb.Store32(addr, uint32(v))
	}
	return c.tlb.Store64(addr, v)
}

// read returns the value of a register, memory or immediate operand.
func (c *CPU) read(in *decode.X86, a *decode.X86Arg) (uint64, bool) {
	switch a.Kind {
	case decode.ArgReg, decode.ArgRegHigh:
		return c.getReg(a), true
	case decode.ArgImm:
		return uint64(in.Imm), true
	}
	return c.load(c.addr(a), a.Size)
}

// write stores v to a register or memory operand.
func (c *CPU) write(a *decode.X86Arg, v uint64) bool {
	if a.Kind == decode.ArgMem {
		return c.store(c.addr(a), a.Size, v)
	}
	c.setReg(a, v)
	return true
}

// ea is addr for the SSE half (which passes the instruction as well).
func (c *CPU) ea(in *decode.X86, a *decode.X86Arg) uint64 {
	_ = in
	return c.addr(a)
}

// sseSetFlags sets CF PF AF ZF SF OF to the bits of f (for the SSE half).
func (c *CPU) sseSetFlags(f uint64) { c.setStatusFlags(f) }

// sseCond evaluates condition code cc (for the SSE half: FCMOVcc …).
func (c *CPU) sseCond(cc uint8) bool { return c.cond(cc) }
