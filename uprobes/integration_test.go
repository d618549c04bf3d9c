package uprobes

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// These tests run hand-assembled guest code on uvm's real interpreters
// with a miniature of the run-loop integration described in doc.go: the
// adapters below are what package tasks provides.

// vmSpace adapts vm.MM to AddrSpace.
type vmSpace struct {
	*vm.MM
	flush func(addr, n uint64)
}

func fromVM(v vm.VMA) VMA {
	return VMA{Start: v.Start, End: v.End, Offset: v.Offset, File: FileID{v.Dev, v.Inode},
		Read: v.Prot&vm.ProtRead != 0, Write: v.Prot&vm.ProtWrite != 0, Exec: v.Prot&vm.ProtExec != 0, Shared: v.Shared}
}

func (s vmSpace) FindVMA(addr uint64) (VMA, bool) {
	v, ok := s.MM.FindVMA(addr)
	return fromVM(v), ok
}

func (s vmSpace) VMAs() []VMA {
	var out []VMA
	for _, v := range s.MM.VMAs() {
		out = append(out, fromVM(v))
	}
	return out
}

func (s vmSpace) MapXOL(hint uint64) (uint64, error) {
	addr, err := s.FindFree(hint, vm.PageSize)
	if err != nil {
		return 0, err
	}
	return addr, s.Map(vm.VMA{Start: addr, End: addr + vm.PageSize, Prot: vm.ProtExec, Name: "[uprobes]"})
}

func (s vmSpace) FlushICache(addr uint64, n int) {
	if s.flush != nil {
		s.flush(addr, uint64(n))
	}
}

// a64Regs / x64Regs adapt the CPUs to Regs.
type a64Regs struct{ *arm64.CPU }

func (r a64Regs) Flags() uint64     { return r.Regs().NZCV }
func (r a64Regs) SetFlags(f uint64) { r.Regs().NZCV = f & 0xF0000000 }

type x64Regs struct{ *amd64.CPU }

func (r x64Regs) Flags() uint64     { return r.RFLAGS() }
func (r x64Regs) SetFlags(f uint64) { r.SetRFLAGS(f) }

// guest is one single-threaded process on a real interpreter.
type guest struct {
	t    *testing.T
	sys  *System
	mm   *vm.MM
	umm  *MM
	cpu  vm.CPU
	regs Regs
	th   *fakeThread
	tk   *Task
	file *fileRef
}

const (
	gText  = 0x400000
	gStack = 0x7f0000000
)

var guestFile = FileID{Dev: 9, Inode: 77}

func newGuest(t *testing.T, arch Arch, o Options, code []byte, strict bool) *guest {
	mm := vm.NewMM()
	require.NoError(t, mm.Map(vm.VMA{Start: gText, End: gText + vm.PageSize, Prot: vm.ProtRead | vm.ProtExec,
		Name: "/guest", Dev: guestFile.Dev, Inode: guestFile.Inode}))
	require.NoError(t, mm.Poke(code, gText))
	require.NoError(t, mm.Map(vm.VMA{Start: gStack - 0x10000, End: gStack, Prot: vm.ProtRead | vm.ProtWrite, Name: "[stack]"}))
	g := &guest{t: t, sys: New(o), mm: mm, th: &fakeThread{}}
	space := vmSpace{MM: mm}
	if arch == ArchARM64 {
		c := arm64.NewCPU(mm)
		if strict {
			c.SetCacheModel(icache.NewModel(icache.DefaultModelConfig()))
			space.flush = c.FlushICache
		}
		g.cpu, g.regs = c, a64Regs{c}
	} else {
		c := amd64.NewCPU(mm)
		g.cpu, g.regs = c, x64Regs{c}
	}
	g.cpu.SetPC(gText)
	g.cpu.SetSP(gStack - 0x100)
	g.umm = g.sys.NewMM(space, arch, 1)
	g.file = newFileRef("/guest", guestFile, arch, code)
	g.umm.MmapAll()
	g.tk = g.umm.NewTask(g.th, 1, 1)
	return g
}

func (g *guest) attach(off uint64, c Consumer) {
	_, err := g.sys.register(g.file, off, 0, &consumer{Consumer: c, name: c.Name})
	require.NoError(g.t, err)
}

// run is the task loop: run or single-step, handle the exit, then the
// exit-to-user work (TIF_UPROBE before signals). It returns the exit
// status of exit(2).
func (g *guest) run() uint64 {
	for i := 0; i < 100000; i++ {
		var ex vm.Exit
		if g.tk.SingleStepping() {
			ex = g.cpu.Step()
		} else {
			ex = g.cpu.Run(1000)
		}
		switch ex.Reason {
		case vm.ExitBudget:
		case vm.ExitStep:
			if !g.tk.StepDone(g.regs) {
				g.t.Fatalf("unexpected step trap at %#x", ex.PC)
			}
		case vm.ExitBreakpoint:
			if !g.tk.BreakpointTrap(g.regs, ex.PC, ex.Code) {
				g.t.Fatalf("SIGTRAP at %#x", ex.PC)
			}
		case vm.ExitSyscall:
			if g.umm.Arch() == ArchAMD64 {
				switch g.cpu.Reg(0) {
				case X86SysUretprobe:
					g.cpu.SetReg(0, g.tk.SysUretprobe(g.regs))
				case 60:
					return g.cpu.Reg(7)
				default:
					g.t.Fatalf("syscall %d", g.cpu.Reg(0))
				}
			} else {
				require.Equal(g.t, uint64(93), g.cpu.Reg(8))
				return g.cpu.Reg(0)
			}
		default:
			if g.tk.SingleStepping() {
				g.tk.RecordTrap(uint32(ex.Reason))
			}
			g.t.Fatalf("exit %v at %#x: %s", ex.Reason, ex.PC, g.cpu.Disasm(ex.PC))
		}
		for n := 0; g.th.flags.Test(TIF_UPROBE | TIF_SIGPENDING); n++ {
			require.Less(g.t, n, 10)
			if g.th.flags.Test(TIF_UPROBE) {
				g.tk.NotifyResume(g.regs)
				continue
			}
			if !g.tk.DenySignal() {
				g.t.Fatalf("signal %v", g.th.sentSignals())
			}
		}
	}
	g.t.Fatal("guest did not exit")
	return 0
}

func words(ws ...uint32) []byte {
	b := make([]byte, 4*len(ws))
	for i, w := range ws {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

// arm64 guest: x0 = 0; ten calls of f, which does x0 += 1; exit(x0).
// f's first instruction is an STP (stepped out of line); its ADD is
// probed too (stepped); and f has a uretprobe.
var a64Guest = words(
	0xD2800000, // 0x00 mov x0, #0
	0xD2800141, // 0x04 mov x1, #10
	0x94000006, // 0x08 bl f (0x20)
	0xF1000421, // 0x0c subs x1, x1, #1
	0x54FFFFC1, // 0x10 b.ne 0x08
	0xD2800BA8, // 0x14 mov x8, #93
	0xD4000001, // 0x18 svc #0
	A64NOP,     // 0x1c
	0xA9BF7BFD, // 0x20 f: stp x29, x30, [sp, #-16]!
	0x91000400, // 0x24 add x0, x0, #1
	0xA8C17BFD, // 0x28 ldp x29, x30, [sp], #16
	0xD65F03C0, // 0x2c ret
)

func TestGuest_ARM64(t *testing.T) {
	for _, strict := range []bool{false, true} {
		for _, elide := range []bool{false, true} {
			o := DefaultOptions()
			o.XOLFlushElision = elide
			g := newGuest(t, ArchARM64, o, a64Guest, strict)
			var mu sync.Mutex
			var entries, adds []uint64
			var rets []uint64
			g.attach(0x20, Consumer{Handler: func(c *Ctx) int {
				mu.Lock()
				entries = append(entries, c.Regs.Reg(0))
				mu.Unlock()
				return 0
			}, RetHandler: func(c *Ctx) {
				rets = append(rets, c.Regs.Reg(0))
				assert.Equal(t, uint64(gText+0x0c), c.RetAddr)
				assert.Equal(t, uint64(gText+0x20), c.Addr)
			}})
			g.attach(0x24, Consumer{Handler: func(c *Ctx) int { adds = append(adds, c.Regs.Reg(0)); return 0 }})
			status := g.run()
			assert.Equal(t, uint64(10), status, "strict=%v elide=%v: the program's result is unchanged", strict, elide)
			assert.Equal(t, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, entries)
			assert.Equal(t, entries, adds)
			assert.Equal(t, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, rets)
			st := g.sys.Stats()
			assert.Equal(t, uint64(20), st.SingleSteps)
			// The trampoline, then every slot write: the two probes
			// alternate in slot 1, so elision finds nothing to save.
			assert.Equal(t, uint64(21), st.Flushes)
			assert.Zero(t, st.FlushesSaved)
		}
	}
}

// TestGuest_ARM64ElisionSavesFlushes: one stepped probe in a loop: the
// slot keeps its bytes, so only the first write is flushed (seed 002).
func TestGuest_ARM64ElisionSavesFlushes(t *testing.T) {
	for _, elide := range []bool{false, true} {
		o := DefaultOptions()
		o.XOLFlushElision = elide
		g := newGuest(t, ArchARM64, o, a64Guest, true)
		g.attach(0x20, Consumer{Handler: func(*Ctx) int { return 0 }})
		assert.Equal(t, uint64(10), g.run())
		st := g.sys.Stats()
		if elide {
			assert.Equal(t, uint64(2), st.Flushes, "trampoline + the first copy")
			assert.Equal(t, uint64(9), st.FlushesSaved)
		} else {
			assert.Equal(t, uint64(11), st.Flushes)
			assert.Zero(t, st.FlushesSaved)
		}
	}
}

// TestGuest_ARM64StaleSlot: with the strict I-cache and the known-wrong
// elision (no compare), the second probe executes the first probe's
// stale slot and the program's result changes.
func TestGuest_ARM64StaleSlot(t *testing.T) {
	o := DefaultOptions()
	o.WrongFlushElisionNoCompare = true
	g := newGuest(t, ArchARM64, o, a64Guest, true)
	g.attach(0x20, Consumer{Handler: func(*Ctx) int { return 0 }})
	g.attach(0x24, Consumer{Handler: func(*Ctx) int { return 0 }})
	status := g.run()
	assert.NotEqual(t, uint64(10), status, "stale XOL slot executed")
}

// x86-64 guest: eax = 0; ten calls of f, which does push rbp; mov rbp,
// rsp; add eax, [rip+one]; pop rbp; ret; exit(eax).
var x64Guest = func() []byte {
	b := make([]byte, 0x48)
	copy(b[0x00:], []byte{0xb9, 0x0a, 0x00, 0x00, 0x00})       // mov ecx, 10
	copy(b[0x05:], []byte{0x31, 0xc0})                         // xor eax, eax
	copy(b[0x07:], []byte{0xe8, 0x14, 0x00, 0x00, 0x00})       // call f (0x20)
	copy(b[0x0c:], []byte{0xff, 0xc9})                         // dec ecx
	copy(b[0x0e:], []byte{0x75, 0xf7})                         // jnz 0x07
	copy(b[0x10:], []byte{0x89, 0xc7})                         // mov edi, eax
	copy(b[0x12:], []byte{0xb8, 0x3c, 0x00, 0x00, 0x00})       // mov eax, 60
	copy(b[0x17:], []byte{0x0f, 0x05})                         // syscall
	copy(b[0x20:], []byte{0x55})                               // f: push rbp
	copy(b[0x21:], []byte{0x48, 0x89, 0xe5})                   // mov rbp, rsp
	copy(b[0x24:], []byte{0x03, 0x05, 0x16, 0x00, 0x00, 0x00}) // add eax, [rip+0x16] (0x40)
	copy(b[0x2a:], []byte{0x5d, 0xc3})                         // pop rbp; ret
	copy(b[0x40:], []byte{0x01, 0x00, 0x00, 0x00})             // one: .long 1
	return b
}()

func TestGuest_AMD64(t *testing.T) {
	for _, syscallTramp := range []bool{true, false} {
		o := DefaultOptions()
		o.X86UretprobeSyscall = syscallTramp
		g := newGuest(t, ArchAMD64, o, x64Guest, false)
		var entries, adds, rets []uint64
		g.attach(0x20, Consumer{Handler: func(c *Ctx) int { entries = append(entries, c.Regs.Reg(0)); return 0 },
			RetHandler: func(c *Ctx) {
				rets = append(rets, c.Regs.Reg(0))
				assert.Equal(t, uint64(gText+0x0c), c.RetAddr)
			}})
		g.attach(0x24, Consumer{Handler: func(c *Ctx) int { adds = append(adds, c.Regs.Reg(6)); return 0 }})
		status := g.run()
		assert.Equal(t, uint64(10), status, "syscall trampoline=%v", syscallTramp)
		assert.Equal(t, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, entries)
		assert.Equal(t, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, rets)
		assert.Len(t, adds, 10)
		st := g.sys.Stats()
		assert.Equal(t, uint64(10), st.Simulated, "push rbp emulated")
		assert.Equal(t, uint64(10), st.SingleSteps, "the RIP-relative add stepped")
		assert.Equal(t, uint64(10), st.UretReturns)
		assert.Zero(t, g.tk.PendingReturns())
	}
}
