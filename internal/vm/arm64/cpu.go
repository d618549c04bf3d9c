package arm64

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// CPU is one A64 hardware thread: the register state, a TLB over its
// address space and a first-level cache of predecoded pages. It
// implements vm.CPU. A CPU is owned by one goroutine at a time.
type CPU struct {
	regs Regs
	// r indexes X, SP, ZR and Discard of regs as one array by the
	// resolved register numbers of decode.A64 (see Regs).
	r     *gprView
	mm    *vm.MM
	tlb   *vm.TLB
	cache *icache.A64Cache
	// l0 is a direct-mapped cache of decoded pages in front of cache;
	// l0gen is the cache generation it was filled under.
	l0    [l0Size]*icache.A64Page
	l0gen uint64

	retired uint64
	stop    atomic.Uint32
	// State of the current run call, kept here rather than in locals of
	// the interpreter loop: the budget, single-step mode, instructions
	// retired so far in this call and the PC where the current block
	// started.
	limit      uint64
	step       bool
	n          uint64
	blockStart uint64
	excl       monitor
	fence      uint64 // target of the atomic add that implements DMB/DSB
	// cm is the cache model and re-decode state (cachemodel.go); nil
	// when both are off.
	cm *cmState
	// model is the CPU model (model.go): features, HWCAPs, ID registers.
	model *Model
	// trap is the kernel's fast path for SVC and BRK (vm.TrapHandler;
	// nil: Run returns at each).
	trap vm.TrapHandler

	// Counter, when set, supplies CNTVCT_EL0 (ticks of CNTFRQ_EL0 =
	// CounterFreq Hz) for the MRS at pc, given the instructions retired
	// before it. Deterministic runs set it to a virtual clock; the
	// default is host monotonic time since the CPU was created.
	Counter func(retired, pc uint64) uint64
	born    time.Time

	// _ pads CPU to at least the size of a gprView, which starts at regs
	// (offset 0): see gprView.
	_ [gprViewPad]byte
}

// gprView is the general register file as the interpreter loops index it
// (gpr): X, SP, ZR and Discard of Regs by the resolved register numbers of
// decode.A64, which are always below decode.A64NumRegs. It is 256 entries
// long so that an index of type uint8 needs no bounds check in the hot
// loop; the entries past Discard alias the rest of the CPU, which the
// padding at CPU's end keeps inside the struct, and are never used.
type gprView [256]uint64

const gprViewPad = 2048 - 1504

const (
	l0Bits = 6
	l0Size = 1 << l0Bits

	// CounterFreq is CNTFRQ_EL0: the generic timer runs at 1 GHz, so
	// CNTVCT_EL0 counts nanoseconds.
	CounterFreq = 1_000_000_000
	// CTR is CTR_EL0 with the cache model off: 64-byte I and D cache
	// lines (IminLine = DminLine = 4), PIPT instruction cache, CWG =
	// ERG = 4, IDC = DIC = 0 (so code must be published with DC CVAU +
	// IC IVAU, as on most cores).
	CTR = 0x8444c004
	// DCZID is DCZID_EL0 with the cache model off: DC ZVA is permitted
	// and zeroes 64 bytes. With the model on, both describe the modelled
	// line sizes (icache.Model.CTR, DCZID).
	DCZID = 4
	// DCZVASize is the block size DC ZVA zeroes.
	DCZVASize = 64
)

func init() {
	var r Regs
	if unsafe.Offsetof(r.X) != 0 || unsafe.Offsetof(r.SP) != decode.A64RegSP*8 ||
		unsafe.Offsetof(r.ZR) != decode.A64RegZR*8 || unsafe.Offsetof(r.Discard) != decode.A64RegDiscard*8 {
		panic("arm64: Regs layout does not match decode.A64Reg*")
	}
	if unsafe.Offsetof(CPU{}.regs) != 0 || unsafe.Sizeof(CPU{}) < unsafe.Sizeof(gprView{}) {
		panic("arm64: CPU does not hold a gprView at its start")
	}
	var pg icache.A64Page
	if unsafe.Offsetof(pg.Insn) != 0 || unsafe.Sizeof(pg.Insn) != icache.A64InsnsPerPage*unsafe.Sizeof(decode.A64{}) ||
		icache.A64InsnsPerPage*4 != vm.PageSize || unsafe.Sizeof(decode.A64{})%4 != 0 {
		panic("arm64: icache.A64Page layout does not match insnAt")
	}
}

// NewCPU returns a CPU with zeroed registers executing in mm. It installs
// the address space's A64 instruction cache when mm has none.
func NewCPU(mm *vm.MM) *CPU {
	c := &CPU{mm: mm, tlb: vm.NewTLB(mm), cache: icache.A64CacheOf(mm), born: time.Now(), model: &models[0]}
	c.tlb.SetInterrupt(c.Interrupt)
	c.r = c.gpr()
	return c
}

// Regs returns the CPU's register state for saving and restoring (signal
// frames, ptrace). It is only consistent while the CPU is not running.
func (c *CPU) Regs() *Regs { return &c.regs }

// Cache returns the predecoded-instruction cache the CPU executes from.
func (c *CPU) Cache() *icache.A64Cache { return c.cache }

// Interrupt asks a running Run to return ExitBudget at its next block
// boundary; safe from any goroutine.
func (c *CPU) Interrupt() { c.stop.Store(1) }

// Retired is the number of instructions retired so far.
func (c *CPU) Retired() uint64 { return c.retired }

// PC returns the program counter.
func (c *CPU) PC() uint64 { return c.regs.PC }

// SetPC sets the program counter.
func (c *CPU) SetPC(pc uint64) { c.regs.PC = pc }

// SP returns the stack pointer.
func (c *CPU) SP() uint64 { return c.regs.SP }

// SetSP sets the stack pointer.
func (c *CPU) SetSP(sp uint64) { c.regs.SP = sp }

// Reg reads x0..x30; Reg(31) reads SP (as user_pt_regs.regs[31] would be
// followed by sp). Other numbers read 0.
func (c *CPU) Reg(i int) uint64 {
	switch {
	case i >= 0 && i < 31:
		return c.regs.X[i]
	case i == 31:
		return c.regs.SP
	}
	return 0
}

// SetReg writes x0..x30 (31: SP); other numbers are ignored.
func (c *CPU) SetReg(i int, v uint64) {
	switch {
	case i >= 0 && i < 31:
		c.regs.X[i] = v
	case i == 31:
		c.regs.SP = v
	}
}

// TLS returns TPIDR_EL0.
func (c *CPU) TLS() uint64 { return c.regs.TPIDR }

// SetTLS sets TPIDR_EL0.
func (c *CPU) SetTLS(v uint64) { c.regs.TPIDR = v }

// NZCV returns PSTATE.NZCV in bits 31..28.
func (c *CPU) NZCV() uint64 { return c.regs.NZCV }

// Clone returns a CPU with a copy of the register state bound to mm, with
// its own TLB and an empty exclusive monitor.
func (c *CPU) Clone(mm *vm.MM) vm.CPU {
	n := NewCPU(mm)
	n.regs = c.regs
	n.model = c.model
	n.cache.SetFeatures(c.model.feat)
	n.Counter = c.Counter
	n.born = c.born
	c.cmClone(n)
	return n
}

// MM returns the address space.
func (c *CPU) MM() *vm.MM { return c.mm }

// TLB returns the CPU's translation cache.
func (c *CPU) TLB() *vm.TLB { return c.tlb }

// Disasm disassembles the instruction at pc (GNU syntax).
func (c *CPU) Disasm(pc uint64) string {
	var b [4]byte
	if err := c.mm.Peek(b[:], pc); err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	raw := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	return decode.DisasmA64(raw, pc)
}

// TraceLine formats the registers like shared/tools/qemu-trace:
// "pc=… x0=… … x30=… sp=… nzcv=…", lower-case hex without 0x.
func (c *CPU) TraceLine() string {
	b := make([]byte, 0, 640)
	b = append(b, "pc="...)
	b = strconv.AppendUint(b, c.regs.PC, 16)
	for i := 0; i < 31; i++ {
		b = append(b, " x"...)
		b = strconv.AppendUint(b, uint64(i), 10)
		b = append(b, '=')
		b = strconv.AppendUint(b, c.regs.X[i], 16)
	}
	b = append(b, " sp="...)
	b = strconv.AppendUint(b, c.regs.SP, 16)
	b = append(b, " nzcv="...)
	b = strconv.AppendUint(b, c.regs.NZCV>>28&15, 16)
	return string(b)
}

// counter reads CNTVCT_EL0 for the MRS at pc, in the middle of a run:
// the instructions retired before it are the earlier calls', this call's
// earlier blocks' (c.n) and those of the current block before pc.
func (c *CPU) counter(pc uint64) uint64 {
	if c.Counter != nil {
		return c.Counter(c.retired+c.n+(pc-c.blockStart)>>2, pc)
	}
	return uint64(time.Since(c.born))
}

// Helpers for the FP/SIMD unit (simd.go) and other code that reads
// general registers by their encoded number.

// xreg reads general register n with 31 = XZR.
func (c *CPU) xreg(n uint8) uint64 {
	if n >= 31 {
		return 0
	}
	return c.regs.X[n]
}

// xregSP reads general register n with 31 = SP.
func (c *CPU) xregSP(n uint8) uint64 {
	if n >= 31 {
		return c.regs.SP
	}
	return c.regs.X[n]
}

// setXreg writes general register n with 31 = XZR (the write is dropped).
func (c *CPU) setXreg(n uint8, v uint64) {
	if n < 31 {
		c.regs.X[n] = v
	}
}

// setXregSP writes general register n with 31 = SP.
func (c *CPU) setXregSP(n uint8, v uint64) {
	if n >= 31 {
		c.regs.SP = v
		return
	}
	c.regs.X[n] = v
}

var _ vm.CPU = (*CPU)(nil)

// gpr views X, SP, ZR and Discard of c.regs as one array indexed by the
// resolved register numbers of decode.A64. The interpreter loops use it
// rather than the stored c.r: the compiler knows it is not nil, so the
// register accesses need no nil checks.
func (c *CPU) gpr() *gprView {
	return (*gprView)(unsafe.Pointer(&c.regs))
}

// insnAt is &pg.Insn[pc>>2 % A64InsnsPerPage] computed as a byte offset,
// so that the field loads of the hot loop fold into one indexed load each
// (a decode.A64 is not a power of two bytes long).
func insnAt(pg *icache.A64Page, pc uint64) *decode.A64 {
	return (*decode.A64)(unsafe.Add(unsafe.Pointer(pg), uintptr(pc&(vm.PageSize-4))*(unsafe.Sizeof(decode.A64{})/4)))
}
