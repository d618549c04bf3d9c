package tasks

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
	"github.com/uvm-emu/uvm/uprobes"
)

// The uprobe integration: adapters that let package uprobes see guest
// memory (vm.MM), registers (vm.CPU) and threads (Task), and the hooks the
// run loop, mmap, fork, exec and exit call (see uprobes/doc.go).

// uprobeSyscall is the x86-64 uretprobe syscall (335): the trampoline in
// XOL slot 0 calls it when a probed function returns.
const uprobeSyscall = 335

// uAddrSpace is uprobes.AddrSpace over a vm.MM. It remembers the last
// area found (find_vma's vmacache): probe hits look up the same text VMA
// again and again.
type uAddrSpace struct {
	mm   *vm.MM
	k    *Kernel
	last atomic.Pointer[cachedVMA]
}

type cachedVMA struct {
	gen uint64
	v   uprobes.VMA
}

func toUVMA(v vm.VMA) uprobes.VMA {
	return uprobes.VMA{Start: v.Start, End: v.End, Offset: v.Offset, File: uprobes.FileID{Dev: v.Dev, Inode: v.Inode},
		Read: v.Prot&vm.ProtRead != 0, Write: v.Prot&vm.ProtWrite != 0, Exec: v.Prot&vm.ProtExec != 0, Shared: v.Shared}
}

func (a *uAddrSpace) FindVMA(addr uint64) (uprobes.VMA, bool) {
	gen := a.mm.Gen()
	if c := a.last.Load(); c != nil && c.gen == gen && c.v.Start <= addr && addr < c.v.End {
		return c.v, true
	}
	v, ok := a.mm.FindVMA(addr)
	if !ok {
		return uprobes.VMA{}, false
	}
	u := toUVMA(v)
	a.last.Store(&cachedVMA{gen: gen, v: u})
	return u, true
}

func (a *uAddrSpace) VMAs() []uprobes.VMA {
	vs := a.mm.VMAs()
	out := make([]uprobes.VMA, len(vs))
	for i, v := range vs {
		out[i] = toUVMA(v)
	}
	return out
}

func (a *uAddrSpace) Peek(b []byte, addr uint64) error    { return a.mm.Peek(b, addr) }
func (a *uAddrSpace) Poke(b []byte, addr uint64) error    { return a.mm.Poke(b, addr) }
func (a *uAddrSpace) ReadAt(b []byte, addr uint64) error  { return a.mm.ReadAt(b, addr) }
func (a *uAddrSpace) WriteAt(b []byte, addr uint64) error { return a.mm.WriteAt(b, addr) }
func (a *uAddrSpace) Unmap(start, end uint64)             { a.mm.Unmap(start, end) }

// MapXOL maps the "[uprobes]" page (execute-only, like the kernel's
// VM_EXEC special mapping) at hint or wherever there is room.
func (a *uAddrSpace) MapXOL(hint uint64) (uint64, error) {
	return a.mm.MapAnywhere(hint&^vm.PageMask, vm.VMA{End: vm.PageSize, Prot: vm.ProtExec, Name: "[uprobes]"})
}

// FlushICache does arm64's cache maintenance for a written XOL slot
// (DC CVAU + IC IVAU of the range, for every CPU of the process). The
// modelled cycle cost is not charged to any CPU's counters: the adapter
// serves the whole address space and does not know the writing CPU (the
// uprobes model counts flushes done and saved itself).
func (a *uAddrSpace) FlushICache(addr uint64, n int) {
	icache.FlushICache(a.mm, nil, addr, uint64(n))
}

// uRegs is uprobes.Regs over the task's current CPU. Tasks keep one and
// pass the pointer, so a probe hit allocates nothing for it. x86 and a64
// are t.cpu as its concrete type (bind, called whenever t.cpu changes:
// a new thread, execve), so that the hit path's register accesses are
// direct calls rather than two interface dispatches each.
type uRegs struct {
	t   *Task
	x86 *amd64.CPU
	a64 *arm64.CPU
	// tlb is the CPU's TLB (fixed for the CPU's life), nil for another
	// kind of CPU.
	tlb *vm.TLB
}

// bind points r at cpu, the task's new CPU, and gives the uprobe task
// (when there is one) the CPU's register words (uprobes.BindRegWords):
// the register files the CPUs' Regs methods return alias their state
// for the CPU's life.
func (r *uRegs) bind(cpu vm.CPU) {
	r.x86, r.a64, r.tlb = nil, nil, nil
	var w uprobes.RegWords
	switch c := cpu.(type) {
	case *amd64.CPU:
		r.x86 = c
		r.tlb = c.TLB()
		g := c.Regs() // materialises RFLAGS there, a snapshot nothing reads
		w = uprobes.RegWords{GPR: g.GPR[:], SP: &g.GPR[4], PC: &g.RIP, Words: r.tlb}
	case *arm64.CPU:
		r.a64 = c
		r.tlb = c.TLB()
		g := c.Regs()
		w = uprobes.RegWords{GPR: g.X[:], SP: &g.SP, PC: &g.PC, Flags: &g.NZCV, Words: r.tlb}
	}
	if u := r.t.utask; u != nil {
		u.BindRegWords(w)
	}
}

func (r *uRegs) PC() uint64 {
	if c := r.x86; c != nil {
		return c.PC()
	}
	if c := r.a64; c != nil {
		return c.PC()
	}
	return r.t.cpu.PC()
}

func (r *uRegs) SetPC(v uint64) {
	if c := r.x86; c != nil {
		c.SetPC(v)
	} else if c := r.a64; c != nil {
		c.SetPC(v)
	} else {
		r.t.cpu.SetPC(v)
	}
}

func (r *uRegs) SP() uint64 {
	if c := r.x86; c != nil {
		return c.SP()
	}
	if c := r.a64; c != nil {
		return c.SP()
	}
	return r.t.cpu.SP()
}

func (r *uRegs) SetSP(v uint64) {
	if c := r.x86; c != nil {
		c.SetSP(v)
	} else if c := r.a64; c != nil {
		c.SetSP(v)
	} else {
		r.t.cpu.SetSP(v)
	}
}

func (r *uRegs) Reg(i int) uint64 {
	if c := r.x86; c != nil {
		return c.Reg(i)
	}
	if c := r.a64; c != nil {
		return c.Reg(i)
	}
	return r.t.cpu.Reg(i)
}

func (r *uRegs) SetReg(i int, v uint64) {
	if c := r.x86; c != nil {
		c.SetReg(i, v)
	} else if c := r.a64; c != nil {
		c.SetReg(i, v)
	} else {
		r.t.cpu.SetReg(i, v)
	}
}

func (r *uRegs) Flags() uint64 {
	if c := r.x86; c != nil {
		return c.RFLAGS()
	}
	if c := r.a64; c != nil {
		return c.Regs().NZCV
	}
	return 0
}

func (r *uRegs) SetFlags(v uint64) {
	if c := r.x86; c != nil {
		c.SetRFLAGS(v)
	} else if c := r.a64; c != nil {
		c.Regs().NZCV = v
	}
}

// uThread is uprobes.Thread (and Waiter) over a Task.
type uThread struct{ t *Task }

func (u uThread) Flags() uprobes.ThreadFlags { return &u.t.flags }
func (u uThread) Siglock() sync.Locker       { return &u.t.tg.sighand.Siglock }
func (u uThread) RecalcSigpending()          { u.t.recalcLocked() }

func (u uThread) FatalSignalPending() bool {
	return u.t.killed.Load() || u.t.pending.Has(signals.SIGKILL) || u.t.tg.shared.Has(signals.SIGKILL)
}

func (u uThread) SendSignal(sig int, force bool) {
	if force {
		u.t.forceSignal(signals.KernelInfo(signals.Signal(sig)))
		return
	}
	u.t.tg.sendSignal(signals.KernelInfo(signals.Signal(sig)), u.t)
}

// TrapFlag is uprobes' optional Thread fast path for RFLAGS.TF (asserted
// once, when the uprobe task is made). The thread's user words go to
// uprobes through the CPU's TLB with its register words (uRegs.bind).
func (u uThread) TrapFlag() bool { return u.t.uregs != nil && u.t.uregs.TrapFlag() }

// Wait blocks until ready (XOL slot waits), under either scheduler.
func (u uThread) Wait(ready func() bool) {
	for !ready() && !u.t.killed.Load() {
		u.t.wait(ready, nil, 1e6)
	}
}

// uClock is ri_timer's clock: virtual in deterministic mode.
type uClock struct{ k *Kernel }

// detTimerHandle is a virtual-time timer of the deterministic scheduler.
type detTimerHandle struct {
	k  *Kernel
	tm *detTimer
}

func (d *detTimerHandle) Reset(dur time.Duration) bool {
	return d.k.det.resetTimerAfter(d.tm, int64(dur))
}

func (d *detTimerHandle) Stop() bool { return d.k.det.stopTimer(d.tm) }

func (c uClock) AfterFunc(d time.Duration, f func()) uprobes.Timer {
	if c.k.det != nil {
		return &detTimerHandle{k: c.k, tm: c.k.det.addTimer(c.k.det.now()+int64(d), f)}
	}
	return newLazyTimer(c.k.start, d, f) // uprobetimer.go
}

// UprobeClock returns the clock uprobes' ri_timer must use with this
// kernel (virtual in deterministic mode); pass it as Options.Clock.
func (k *Kernel) UprobeClock() uprobes.Clock { return uClock{k} }

func uArch(a vm.Arch) uprobes.Arch {
	if a == vm.ArchARM64 {
		return uprobes.ArchARM64
	}
	return uprobes.ArchAMD64
}

// attachUprobes gives a freshly loaded image its uprobe state: the file
// identity on its mappings, the uprobes MM, and breakpoints for every
// registered probe it maps (uprobe_mmap of each VMA).
func (tg *ThreadGroup) attachUprobes(img *vm.Image) {
	sys := tg.k.opts.Uprobes
	if sys == nil {
		return
	}
	if id, err := uprobes.FileIdentity(img.Path); err == nil {
		tg.mm.SetFileIdentity(img.Path, id.Dev, id.Inode)
	}
	tg.umm = sys.NewMM(&uAddrSpace{mm: tg.mm, k: tg.k}, uArch(img.Arch), tg.pid)
	tg.umm.MmapAll()
}

// newUtask makes t's uprobe task (one per thread).
func (t *Task) newUtask() {
	if t.tg.umm != nil {
		t.uregs = &uRegs{t: t}
		t.utask = t.tg.umm.NewTask(uThread{t}, t.tid, int(t.tid))
		t.uregs.bind(t.cpu)
	}
}

// uprobeMmap tells uprobes about a new file mapping that t made.
func (tg *ThreadGroup) uprobeMmap(v vm.VMA, t *Task) {
	if tg.umm != nil {
		tg.umm.MmapBy(toUVMA(v), uThread{t})
	}
}

// uprobeMunmap runs before [start, end) is unmapped.
func (tg *ThreadGroup) uprobeMunmap(start, end uint64) {
	if tg.umm == nil {
		return
	}
	for _, v := range tg.mm.VMAs() {
		if v.Start < end && start < v.End {
			tg.umm.Munmap(toUVMA(v), max(start, v.Start), min(end, v.End))
		}
	}
}

// exitToUser is Linux's exit_to_user_mode_loop for uprobes and signals:
// TIF_UPROBE work first, then signals (each delivery asking
// uprobe_deny_signal first). It returns false when the group is ending.
func (t *Task) exitToUser(sc *syscallResult) bool {
	for !t.killed.Load() {
		if t.utask != nil && t.flags.Test(signals.TIF_UPROBE) {
			t.utask.NotifyResume(t.uregs) // clears TIF_UPROBE first
			continue
		}
		if t.sigPending() {
			if t.utask != nil && t.utask.DenySignal() {
				continue
			}
			if !t.handleSignalsOnce(sc) {
				return false
			}
			sc = nil
			continue
		}
		break
	}
	if sc != nil {
		t.finishSyscall(sc, false, signals.SigAction{})
	}
	t.restoreSuspendMask()
	return !t.killed.Load()
}

// releaseUprobes drops the group's uprobe MM when no other process shares
// the address space (a vfork child that exits without exec shares it).
func (tg *ThreadGroup) releaseUprobes() {
	if tg.umm == nil {
		return
	}
	k := tg.k
	k.procMu.Lock()
	shared := false
	for _, p := range k.procs {
		if p != tg && p.umm == tg.umm && !p.proc.zombie {
			shared = true
		}
	}
	k.procMu.Unlock()
	if !shared {
		tg.umm.Release()
	}
}

// SetUprobes installs the uprobe subsystem (before the first Start; the
// system's Options.Clock should be k.UprobeClock()).
func (k *Kernel) SetUprobes(sys *uprobes.System) { k.opts.Uprobes = sys }

// xolStep single-steps the XOL slot as the trap flag does: on amd64 a REP
// string instruction runs one iteration per step (vm/amd64 StepTrap), so
// a probe on one hits once per iteration, as in the kernel.
func xolStep(c vm.CPU) vm.Exit {
	if s, ok := c.(interface{ StepTrap() vm.Exit }); ok {
		return s.StepTrap()
	}
	return c.Step()
}

// uprobeXOLMremap refuses an mremap of the "[uprobes]" area as the
// kernel's special mapping does (uprobes.MM.XOLMremap); 0 otherwise.
func (tg *ThreadGroup) uprobeXOLMremap(old, oldLen, newLen uint64, fixed bool) Errno {
	if tg.umm == nil {
		return 0
	}
	v, ok := tg.mm.FindVMA(old)
	if !ok || v.Name != "[uprobes]" {
		return 0
	}
	return Errno(tg.umm.XOLMremap(oldLen, newLen, fixed))
}

// TrapFlag is x86's RFLAGS.TF, read without computing the arithmetic
// flags (uprobes' optional fast path for Flags()&TF); false on arm64.
func (r *uRegs) TrapFlag() bool {
	if c := r.x86; c != nil {
		return c.TrapFlag()
	}
	return false
}

// ReadUser and WriteUser are uprobes' optional fast path for the
// thread's own copy_from_user/copy_to_user (the x86 return-address
// hijack, the uretprobe trampoline's saved registers, emulated pushes):
// the bytes go through the CPU's TLB when it holds the page
// (vm.TLB.ReadUser), and false sends uprobes to the address space's
// ReadAt/WriteAt.
func (r *uRegs) ReadUser(b []byte, addr uint64) bool {
	if c := r.x86; c != nil {
		return c.TLB().ReadUser(b, addr)
	}
	if c := r.a64; c != nil {
		return c.TLB().ReadUser(b, addr)
	}
	return false
}

func (r *uRegs) WriteUser(b []byte, addr uint64) bool {
	if c := r.x86; c != nil {
		return c.TLB().WriteUser(b, addr)
	}
	if c := r.a64; c != nil {
		return c.TLB().WriteUser(b, addr)
	}
	return false
}

// Gen is the address space's mapping generation (vm.MM.Gen): uprobes'
// per-thread hit cache (uprobes/hitcache.go) is valid while it is unchanged.
func (a *uAddrSpace) Gen() uint64 { return a.mm.Gen() }
