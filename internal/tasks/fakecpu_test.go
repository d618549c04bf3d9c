package tasks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvm-emu/uvm/internal/vm"
)

// A fake CPU for the unit tests of the kernel side (the shape of
// uprobes/fake_test.go): no interpreter and no guest binary. The "guest
// program" is a Go function that retires instructions in bulk (work) and
// makes syscalls by name (sys); it runs as a coroutine (iter.Pull) that
// the task's own goroutine resumes inside Run, so the kernel sees the
// same exits, register conventions and retired counts a real CPU gives it
// — budgets, quanta and the deterministic scheduler included.
type fakeCPU struct {
	a    *arch
	mm   *vm.MM
	tlb  *vm.TLB
	regs [32]uint64
	pc   uint64
	sp   uint64
	tls  uint64

	retired     uint64
	left        int64 // instructions left in the current Run's budget
	interrupted atomic.Bool

	prog func(g *fakeGuest)
	next func() (vm.Exit, bool)
	stop func()
	// child is the program a clone's new CPU runs (set by fakeGuest.clone
	// just before its syscall).
	child func(g *fakeGuest)
	// done collects the coroutines' stop functions for the test's cleanup.
	done *fakeCleanup
}

type fakeCleanup struct {
	mu    sync.Mutex
	stops []func()
}

func (f *fakeCleanup) add(stop func()) {
	f.mu.Lock()
	f.stops = append(f.stops, stop)
	f.mu.Unlock()
}

// fakeGuest is what a fake guest program sees: its CPU and the coroutine's
// yield.
type fakeGuest struct {
	c    *fakeCPU
	pull func(vm.Exit) bool
}

// errFakeStopped unwinds a guest program whose thread is gone (the
// test's cleanup stops every coroutine).
var errFakeStopped = errors.New("fake guest stopped")

// yield hands ex to the kernel and returns when the task runs the CPU
// again.
func (g *fakeGuest) yield(ex vm.Exit) {
	if !g.pull(ex) {
		panic(errFakeStopped)
	}
}

func (c *fakeCPU) Run(budget int64) vm.Exit {
	c.left = budget
	if c.next == nil {
		c.next, c.stop = iter.Pull(func(yield func(vm.Exit) bool) {
			defer func() {
				if r := recover(); r != nil && r != errFakeStopped {
					panic(r)
				}
			}()
			g := &fakeGuest{c: c, pull: yield}
			c.prog(g)
			g.sys("exit", 0) // falling off the end of a thread's function
			panic("fake guest ran past exit")
		})
		c.done.add(c.stop)
	}
	ex, ok := c.next()
	if !ok {
		panic("fake guest coroutine ended")
	}
	return ex
}

func (c *fakeCPU) Step() vm.Exit {
	ex := c.Run(1)
	if ex.Reason == vm.ExitBudget {
		ex.Reason = vm.ExitStep
	}
	return ex
}

func (c *fakeCPU) Interrupt()             { c.interrupted.Store(true) }
func (c *fakeCPU) Retired() uint64        { return c.retired }
func (c *fakeCPU) PC() uint64             { return c.pc }
func (c *fakeCPU) SetPC(v uint64)         { c.pc = v }
func (c *fakeCPU) SP() uint64             { return c.sp }
func (c *fakeCPU) SetSP(v uint64)         { c.sp = v }
func (c *fakeCPU) Reg(i int) uint64       { return c.regs[i&31] }
func (c *fakeCPU) SetReg(i int, v uint64) { c.regs[i&31] = v }
func (c *fakeCPU) TLS() uint64            { return c.tls }
func (c *fakeCPU) SetTLS(v uint64)        { c.tls = v }
func (c *fakeCPU) MM() *vm.MM             { return c.mm }
func (c *fakeCPU) TLB() *vm.TLB           { return c.tlb }
func (c *fakeCPU) Disasm(pc uint64) string {
	return fmt.Sprintf("fake@%#x", pc)
}
func (c *fakeCPU) TraceLine() string { return fmt.Sprintf("pc=%#x", c.pc) }

func (c *fakeCPU) Clone(mm *vm.MM) vm.CPU {
	n := &fakeCPU{a: c.a, mm: mm, tlb: vm.NewTLB(mm), regs: c.regs, pc: c.pc, sp: c.sp, tls: c.tls,
		prog: c.child, done: c.done}
	if n.prog == nil {
		panic("fake CPU cloned without a child program")
	}
	return n
}

// work retires n instructions, returning to the kernel whenever the
// budget is spent or the CPU was interrupted, as a real CPU does at block
// boundaries.
func (g *fakeGuest) work(n int64) {
	c := g.c
	for n > 0 {
		if c.left <= 0 || c.interrupted.Swap(false) {
			g.yield(vm.Exit{Reason: vm.ExitBudget, PC: c.pc})
			continue
		}
		k := min(n, c.left)
		c.retired += uint64(k)
		c.pc += uint64(k) * 4
		c.left -= k
		n -= k
	}
}

// sys makes a syscall by name with the arch's registers and returns the
// result register as Linux's signed value. A restart (the kernel moving
// pc back over the syscall instruction) executes the instruction again
// with the registers the kernel left, as hardware would.
func (g *fakeGuest) sys(name string, args ...uint64) int64 {
	c, a := g.c, g.c.a
	nr := a.entryNr(name)
	if nr == ^uint64(0) {
		panic("fake guest: no syscall " + name)
	}
	c.regs[a.nr&31] = nr
	for i, v := range args {
		c.regs[a.args[i]&31] = v
	}
	insn := c.pc
	for {
		c.retired++
		c.pc = insn + a.syscallInsnLen
		g.yield(vm.Exit{Reason: vm.ExitSyscall, PC: insn})
		if c.pc != insn {
			return int64(c.regs[a.ret&31])
		}
	}
}

// clone runs child on a new thread (or process, without CLONE_VM) and
// returns the parent's result.
func (g *fakeGuest) clone(flags uint64, child func(g *fakeGuest)) int64 {
	g.c.child = child
	defer func() { g.c.child = nil }()
	return g.sys("clone", flags, 0, 0, 0, 0)
}

func (g *fakeGuest) load32(addr uint64) uint32 {
	var b [4]byte
	if err := g.c.mm.ReadAt(b[:], addr); err != nil {
		panic(err)
	}
	return binary.LittleEndian.Uint32(b[:])
}

func (g *fakeGuest) store32(addr uint64, v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	if err := g.c.mm.WriteAt(b[:], addr); err != nil {
		panic(err)
	}
}

func (g *fakeGuest) load64(addr uint64) uint64 {
	var b [8]byte
	if err := g.c.mm.ReadAt(b[:], addr); err != nil {
		panic(err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

func (g *fakeGuest) store64(addr, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if err := g.c.mm.WriteAt(b[:], addr); err != nil {
		panic(err)
	}
}

// fakeLog is an ordered record of what the fake guests did (the
// deterministic scheduler runs one at a time; the mutex is for -race
// across the goroutines that hand the baton on).
type fakeLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *fakeLog) add(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *fakeLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

const (
	fakeData = 0x100000 // a read-write data area for the fake guests
	fakeSize = 16 * vm.PageSize
)

// runFake starts prog as the first process of a kernel with opts (for
// either guest arch) and returns its exit status when the process is
// gone.
func runFake(t *testing.T, a *arch, opts Options, prog func(g *fakeGuest)) ExitStatus {
	t.Helper()
	if opts.Cwd == "" {
		opts.Cwd = t.TempDir()
	}
	k := NewKernel(opts)
	mm := vm.NewMM()
	mm.Acct = k.acct
	require.NoError(t, mm.Map(vm.VMA{Start: fakeData, End: fakeData + fakeSize, Prot: vm.ProtRead | vm.ProtWrite}))
	cl := &fakeCleanup{}
	t.Cleanup(func() {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		for _, stop := range cl.stops {
			stop()
		}
	})
	cpu := &fakeCPU{a: a, mm: mm, tlb: vm.NewTLB(mm), pc: 0x400000, sp: fakeData + fakeSize, prog: prog, done: cl}
	task := k.newProcess(mm, nil, cpu, a, []string{"fake"})
	k.startTask(task)
	return task.tg.Wait()
}

func bothArches(t *testing.T, f func(t *testing.T, a *arch)) {
	for _, a := range []*arch{&amd64ABI, &arm64ABI} {
		t.Run(a.name, func(t *testing.T) { f(t, a) })
	}
}
