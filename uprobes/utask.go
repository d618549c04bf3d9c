package uprobes

import (
	"sync/atomic"
)

// Entry-handler results (spec §1.3).
const (
	// HandlerRemove (UPROBE_HANDLER_REMOVE) asks to remove the breakpoint
	// from the current mm. It takes effect only when every consumer
	// returned it and no consumer's Filter accepts the mm any more (a
	// consumer without Filter accepts every mm).
	HandlerRemove = 1
	// HandlerIgnore (UPROBE_HANDLER_IGNORE) skips this consumer's return
	// handler for this hit.
	HandlerIgnore = 2
)

// UTaskState is the single-step state of a task (enum uprobe_task_state).
type UTaskState uint8

const (
	UTaskRunning      UTaskState = iota // UTASK_RUNNING
	UTaskSStep                          // UTASK_SSTEP: executing the XOL slot
	UTaskSStepAck                       // UTASK_SSTEP_ACK: the step completed
	UTaskSStepTrapped                   // UTASK_SSTEP_TRAPPED: the step faulted or a fatal signal came
	// UTaskSStepDenySignal is the fifth state of the rejected v1 design
	// (Options.WrongSignalDeniedV1 only).
	UTaskSStepDenySignal
)

var utaskStateNames = [...]string{"UTASK_RUNNING", "UTASK_SSTEP", "UTASK_SSTEP_ACK", "UTASK_SSTEP_TRAPPED", "UTASK_SSTEP_DENY_SIGNAL"}

func (s UTaskState) String() string {
	if int(s) < len(utaskStateNames) {
		return utaskStateNames[s]
	}
	return "UTASK_?"
}

// trapSentinel is UPROBE_TRAP_NR (x86) / UPROBE_INV_FAULT_CODE (arm64).
const trapSentinel = ^uint32(0)

// Ctx is what a handler sees. It is reused per thread: a handler must
// not keep it after returning.
type Ctx struct {
	// Task is the thread that hit the probe.
	Task *Task
	// Regs are its registers. Entry: PC is the probe address. Return:
	// PC is already the original return address and the return value is
	// in x0/rax.
	Regs Regs
	// Addr is the probe's virtual address (entry) or the probed
	// function's address, ri->func (return).
	Addr uint64
	// RetAddr is the original return address (return handlers only).
	RetAddr uint64
	// Cookie is UprobeOptions.Cookie of the consumer (the BPF cookie).
	Cookie uint64
	// Session is the session cookie of a session consumer (one with both
	// Handler and RetHandler): the entry handler may write it and the
	// return handler of the same hit reads it. nil for other consumers.
	Session *uint64
	// Name is the consumer's name (the probe spec for CLI probes).
	Name string
}

// set assigns every field of c, in place: the handler paths fill the
// per-thread Ctx so on each call (a composite literal would build a
// temporary and copy it).
func (c *Ctx) set(t *Task, r Regs, addr, retAddr, cookie uint64, session *uint64, name string) {
	c.Task, c.Regs, c.Addr, c.RetAddr, c.Cookie, c.Session, c.Name = t, r, addr, retAddr, cookie, session, name
}

// reset is set to Ctx{Task: t}: nothing of the last hit stays reachable.
func (c *Ctx) reset(t *Task) { c.set(t, nil, 0, 0, 0, nil, "") }

// set and reset must assign every field: this unkeyed literal stops
// compiling when Ctx gains one.
var _ = Ctx{nil, nil, 0, 0, 0, nil, ""}

// Arch returns the architecture of the thread.
func (c *Ctx) Arch() Arch { return c.Task.mm.arch }

// Task is the uprobe state of one thread (task_struct's utask and the
// thread it belongs to). All methods run on the thread's own goroutine
// while its CPU is stopped, except where noted.
type Task struct {
	mm  *MM
	th  Thread
	tid int32
	cpu int
	// slot is the thread's counter slot in mm.sys's pcpuCounters
	// (counterSlots; sharedSlot when none was free): only this thread
	// adds to it, until Exit.
	slot int
	// utask is struct uprobe_task, allocated on first need (get_utask).
	utask *utask
	// hit is the thread's last speculative lookup (hitcache.go).
	hit hitCache
	// flags is th.Flags(), the thread's flag word (fixed for its life).
	flags ThreadFlags
	// uw, sw and tf are th's optional userWordAccessor, userWordSwapper
	// and trapFlagReader (nil: none), asserted once rather than on each
	// use; uw and sw are the bound RegWords.Words instead while there
	// are some.
	uw userWordAccessor
	sw userWordSwapper
	tf trapFlagReader
	// rw is the thread's register words (BindRegWords), zero when unbound.
	rw RegWords
}

// utask is struct uprobe_task.
type utask struct {
	state UTaskState
	// Single step.
	activeUprobe *uprobe
	vaddr        uint64 // probe address of the active step
	xolVaddr     uint64 // slot of the active step
	stepping     bool   // user single step enabled (TF / MDSCR.SS)
	signalDenied bool
	// Arch task state: trapNr is thread.trap_nr (x86) / thread.fault_code
	// (arm64); the saved values are autask's.
	trapNr       uint32
	savedTrapNr  uint32
	savedTF      bool
	savedScratch uint64

	// Return instances (uretprobe.go).
	depth   int
	ri      rcuPointer[returnInstance] // return_instances, newest first
	riPool  *returnInstance
	riSeq   seqcount
	riTimer Timer
	// timerFn is the ri_timer callback (one closure per utask);
	// timerRunning counts callbacks in progress; dead stops new ones.
	timerFn      func()
	timerRunning atomic.Int32
	dead         atomic.Bool

	// Fork: the child creates its XOL area at dupXOLAddr (task work).
	dupXOLAddr    uint64
	dupXOLPending bool

	ctx     Ctx
	cookie  uint64
	scratch [32]byte
	// words holds the user words of the return-address hijack and the
	// uretprobe syscall (readUserWords).
	words [3]uint64
}

// NewTask returns the uprobe state of a new thread of m. th is the
// thread's kernel-side interface; tid its id; cpu a CPU hint that
// spreads the SRCU counters (any stable number per thread, e.g. tid).
// The Task takes one of the system's counter slots until Exit.
func (m *MM) NewTask(th Thread, tid int32, cpu int) *Task {
	if cpu < 0 {
		cpu = -cpu
	}
	t := &Task{mm: m, th: th, tid: tid, cpu: cpu, flags: th.Flags(), slot: m.sys.slots.take()}
	t.uw, _ = th.(userWordAccessor)
	t.sw, _ = th.(userWordSwapper)
	t.tf, _ = th.(trapFlagReader)
	return t
}

// TID returns the thread id.
func (t *Task) TID() int32 { return t.tid }

// MM returns the address space the thread runs in.
func (t *Task) MM() *MM { return t.mm }

// SetMM switches the thread to a new address space (execve, after Free).
func (t *Task) SetMM(m *MM) {
	if m.sys != t.mm.sys {
		t.mm.sys.slots.put(t.slot)
		t.slot = m.sys.slots.take()
	}
	t.mm = m
}

// Exit is the thread's end, after Free: its counter slot goes back to
// the system (the counts stay in it). A Task used after Exit counts in
// the shared slot.
func (t *Task) Exit() {
	t.mm.sys.slots.put(t.slot)
	t.slot = sharedSlot
}

// State returns the single-step state (UTaskRunning without a utask).
func (t *Task) State() UTaskState {
	if t.utask == nil {
		return UTaskRunning
	}
	return t.utask.state
}

func (t *Task) newUtask() *utask {
	ut := &utask{trapNr: trapSentinel, savedTrapNr: trapSentinel}
	sys := t.mm.sys
	ut.timerFn = func() { sys.riTimer(ut, t.cpu) }
	ut.ctx.Task = t
	return ut
}

// getUtask is get_utask.
func (t *Task) getUtask() *utask {
	if t.utask == nil {
		if t.mm.sys.failAlloc(AllocUtask) {
			return nil
		}
		t.utask = t.newUtask()
	}
	return t.utask
}

// BreakpointTrap is the trap side of a breakpoint (arm64
// uprobe_brk_handler, x86 arch_uprobe_exception_notify, then
// uprobe_pre_sstep_notifier). Call it when the interpreter reports a
// breakpoint at addr (the BRK/INT3 instruction itself; imm is the BRK
// immediate on arm64). It returns true when the uprobe code takes the
// trap: TIF_UPROBE is set (and on x86 the PC is left after the INT3, as
// the trap leaves it) and the run loop must go through its
// exit-to-user-mode work (NotifyResume) before running the thread again.
// false means an ordinary SIGTRAP.
func (t *Task) BreakpointTrap(r Regs, addr uint64, imm uint32) bool {
	if !t.TakesBreakpoint(addr, imm) {
		return false
	}
	if t.mm.arch == ArchAMD64 {
		t.setPC(r, addr+1)
	}
	t.flags.Set(TIF_UPROBE)
	return true
}

// TakesBreakpoint reports what BreakpointTrap would return, changing
// nothing (uprobe_pre_sstep_notifier's test).
func (t *Task) TakesBreakpoint(addr uint64, imm uint32) bool {
	m := t.mm
	if m == nil || m.dead.Load() {
		return false
	}
	if m.arch == ArchARM64 && imm != ARM64BRKImm {
		return false
	}
	return m.flags.Load()&mmfHasUprobes != 0 || t.utask != nil && t.utask.ri.Load() != nil
}

// NotifyResume is uprobe_notify_resume: call it on the way back to user
// mode when TIF_UPROBE is set, before signal delivery (spec §2.2). It
// clears TIF_UPROBE and either finishes a single step
// (handle_singlestep) or handles a breakpoint hit (handle_swbp).
func (t *Task) NotifyResume(r Regs) {
	t.flags.Clear(TIF_UPROBE)
	t.notifyResume(r)
}

func (t *Task) notifyResume(r Regs) {
	if ut := t.utask; ut != nil && ut.activeUprobe != nil {
		t.handleSinglestep(r)
	} else {
		t.handleSWBP(r)
	}
}

// BreakpointResume is BreakpointTrap and then NotifyResume with nothing
// between them, for a caller that found TakesBreakpoint true and no
// thread flag set, and runs the exit-to-user work right after the trap
// (the kernel's fast way back, internal/tasks/fastpath.go). TIF_UPROBE
// only carries the trap to that work, which then finds it the only flag
// and runs it first, so it is neither set nor cleared: two locked
// operations fewer per hit, and nothing else can tell, since only the
// thread itself reads TIF_UPROBE.
func (t *Task) BreakpointResume(r Regs, addr uint64) {
	if t.mm.arch == ArchAMD64 {
		t.setPC(r, addr+1)
	}
	t.notifyResume(r)
}

// handleSWBP is handle_swbp (spec §2.3).
func (t *Task) handleSWBP(r Regs) {
	m := t.mm
	s := m.sys
	bp := t.pc(r) // uprobe_get_swbp_addr: x86 reports ip-1, arm64 pc
	if m.arch == ArchAMD64 {
		bp--
	}
	if a := m.xolAreaLoad(); a != nil && bp == a.vaddr {
		t.handleTrampoline(r)
		return
	}
	idx := s.hitRCU.readLock(t.slot)
	defer s.hitRCU.readUnlock(t.slot, idx)

	u, isSWBP := t.findActiveUprobe(bp)
	if u == nil {
		if isSWBP > 0 {
			s.stats.sigtraps.Add(1)
			t.th.SendSignal(SIGTRAP, true)
		} else {
			r.SetPC(bp)
			s.stats.restarts.Add(1)
		}
		return
	}
	t.setPC(r, bp)
	if !u.copied.Load() {
		s.stats.restarts.Add(1)
		return
	}
	if t.utask == nil && t.getUtask() == nil {
		s.stats.restarts.Add(1)
		return
	}
	s.stats.hits.Add(t.slot, 1)
	u.hits.Add(t.slot, 1)
	if s.opts.Contention != nil && s.oldLookup() {
		defer t.atomicOp(ObjUprobeRef, u) // put_uprobe of find_uprobe's reference
	}
	t.handlerChain(u, r)
	// arch_uprobe_skip_sstep: simulate (arm64) or emulate (x86) the
	// probed instruction when the analysis allows it.
	if m.arch == ArchARM64 {
		if u.arch.simulate {
			t.simulateARM64(&u.arch, r)
			s.stats.simulated.Add(t.slot, 1)
			t.cost(PathSimulate, 1)
			return
		}
	} else if t.x86Emulate(&u.arch, r) {
		s.stats.simulated.Add(t.slot, 1)
		t.cost(PathEmulate, 1)
		return
	}
	if !t.preSSout(u, r, bp) {
		s.stats.restarts.Add(1)
	}
}

// findActiveUprobe is find_active_uprobe_rcu: the speculative lookup
// without the mm lock first, then the locked one, which also tells
// whether a breakpoint opcode is at bp when no uprobe owns it.
func (t *Task) findActiveUprobe(bp uint64) (*uprobe, int) {
	if u := t.hit.lookup(t.mm, bp); u != nil {
		return u, 0 // the same answer as the lookups below (hitcache.go)
	}
	return t.findActiveUprobeSlow(bp)
}

// findActiveUprobeSlow is findActiveUprobe past the hit cache.
func (t *Task) findActiveUprobeSlow(bp uint64) (*uprobe, int) {
	m := t.mm
	s := m.sys
	snap := t.hit.snapshot(m)
	seq := m.mmapSeq.begin()
	if v, ok := m.as.FindVMA(bp); ok && !v.File.IsZero() {
		t.treeLookupBegin()
		u := s.tree.find(keyOf(v.File, v.fileOffset(bp)), t.cpu)
		t.treeLookupEnd(u)
		if u != nil && !m.mmapSeq.retry(seq) {
			t.hit.store(m, snap, bp, u, seq)
			return u, 0
		}
	}
	m.mmapLock.RLock()
	defer m.mmapLock.RUnlock()
	v, ok := m.as.FindVMA(bp)
	if !ok {
		return nil, -int(EFAULT)
	}
	var u *uprobe
	if !v.File.IsZero() {
		u = s.tree.find(keyOf(v.File, v.fileOffset(bp)), t.cpu)
	}
	isSWBP := 0
	if u == nil {
		isSWBP = m.isTrapAtAddr(bp)
		for {
			f := m.flags.Load()
			if f&mmfRecalcUprobes == 0 {
				break
			}
			if m.flags.CompareAndSwap(f, f&^mmfRecalcUprobes) {
				m.recalcUprobes()
				break
			}
		}
	}
	return u, isSWBP
}

// handlerChain is handler_chain (spec §1.3, §6.1).
func (t *Task) handlerChain(u *uprobe, r Regs) {
	ut := t.utask
	s := t.mm.sys
	remove, has := true, false
	var ri *returnInstance
	riDropped := false // ZERO_SIZE_PTR: allocation failed, no uretprobe this hit
	ctx := &ut.ctx
	if ct := s.opts.Contention; ct != nil {
		ct.Cost(t.th, PathHandlerChain, 1)
		if s.oldLookup() {
			ct.RLock(t.th, ObjRegisterRWSem, u)
			defer ct.RUnlock(t.th, ObjRegisterRWSem, u)
		}
	}
	for _, c := range u.consumerList() {
		session := c.Handler != nil && c.RetHandler != nil
		ut.cookie = 0
		rc := 0
		if c.Handler != nil {
			var cookie *uint64
			if session {
				cookie = &ut.cookie
			}
			ctx.set(t, r, t.pc(r), 0, c.cookie, cookie, c.name)
			rc = c.Handler(ctx)
			if rc < 0 || rc > 2 {
				s.warn("bad rc=%d from uprobe handler of %s", rc, c.name)
			}
		}
		remove = remove && rc == HandlerRemove
		has = true
		if c.RetHandler == nil || rc == HandlerRemove || rc == HandlerIgnore {
			continue
		}
		if ri == nil && !riDropped {
			if ri = t.allocReturnInstance(); ri == nil {
				riDropped = true
			}
		}
		if session && ri != nil {
			if ri = t.pushConsumer(ri, c.id, ut.cookie); ri == nil {
				riDropped = true
			}
		}
	}
	ctx.reset(t)
	if ri != nil {
		t.prepareUretprobe(u, r, ri)
	}
	if remove && has {
		u.registerRWSem.RLock()
		if !u.filterChain(t.mm) {
			t.mm.unapplyUprobe(u)
		}
		u.registerRWSem.RUnlock()
	}
}

// preSSout is pre_ssout: take a reference and a slot, point the thread
// at the slot and enable single-step. false: restart at the probe (the
// handlers will run again on the re-hit, as in Linux).
func (t *Task) preSSout(u *uprobe, r Regs, bp uint64) bool {
	ut := t.utask
	s := t.mm.sys
	t.atomicOp(ObjUprobeRef, u)
	if !u.tryGet() {
		return false
	}
	if !t.xolGetInsnSlot(u) {
		s.putUprobe(u)
		return false
	}
	ut.vaddr = bp
	if t.mm.arch == ArchAMD64 {
		t.x86PreXOL(&u.arch, r)
	} else {
		// arch_uprobe_pre_xol (arm64).
		ut.trapNr = trapSentinel
		r.SetPC(ut.xolVaddr)
	}
	ut.stepping = true
	ut.activeUprobe = u
	ut.state = UTaskSStep
	t.cost(PathPreXOL, 1)
	s.stats.singleSteps.Add(t.slot, 1)
	return true
}

// SingleStepping reports whether the thread must execute exactly one
// instruction (CPU.Step) at its current PC, the XOL slot, and then call
// StepDone: user single-step is enabled (x86 TF, arm64 MDSCR_EL1.SS).
func (t *Task) SingleStepping() bool { return t.utask != nil && t.utask.stepping }

// StepDone is the single-step exception (x86 DIE_DEBUG, arm64
// uprobe_single_step_handler → uprobe_post_sstep_notifier): call it when
// the instruction in the slot retired (CPU.Step returned ExitStep). It
// sets UTASK_SSTEP_ACK and TIF_UPROBE and returns true; false when the
// thread is not stepping a uprobe (an ordinary step trap).
func (t *Task) StepDone(r Regs) bool {
	ut := t.utask
	if ut == nil || ut.activeUprobe == nil {
		return false
	}
	if t.mm.arch == ArchARM64 && r.PC() != ut.xolVaddr+4 {
		t.mm.sys.warn("uprobe: single-step trap at %#x, expected %#x", r.PC(), ut.xolVaddr+4)
	}
	ut.state = UTaskSStepAck
	t.flags.Set(TIF_UPROBE)
	return true
}

// RecordTrap is the arch fault path recording the exception (x86
// thread.trap_nr, arm64 thread.fault_code): call it when the stepped
// instruction did not retire but raised a synchronous exception (fault,
// undefined instruction, alignment, divide error…), before sending the
// signal. code is any value but ^uint32(0), e.g. the exit reason.
func (t *Task) RecordTrap(code uint32) {
	if t.utask != nil {
		t.utask.trapNr = code
	}
}

// xolWasTrapped is arch_uprobe_xol_was_trapped.
func (t *Task) xolWasTrapped() bool { return t.utask.trapNr != trapSentinel }

// DenySignal is uprobe_deny_signal: call it at the start of signal
// delivery (get_signal), when TIF_SIGPENDING is set. true means "deliver
// nothing now": the thread is single-stepping a probed instruction. It
// then clears TIF_SIGPENDING (remembering it, SingleStepSiglock false),
// and when the signal is fatal or the step faulted it sets
// UTASK_SSTEP_TRAPPED and TIF_UPROBE, so the exit-to-user loop aborts the
// step (NotifyResume) and the signal is delivered with the PC at the
// probe address.
func (t *Task) DenySignal() bool {
	ut := t.utask
	if ut == nil || ut.activeUprobe == nil {
		return false
	}
	s := t.mm.sys
	if ut.state != UTaskSStep {
		s.warn("uprobe_deny_signal: state %s, want UTASK_SSTEP", ut.state)
	}
	fl := t.flags
	if !fl.Test(TIF_SIGPENDING) {
		return true
	}
	s.stats.signalsDenied.Add(1)
	o := &s.opts
	switch {
	case o.WrongSignalDeniedV1:
		fl.Clear(TIF_SIGPENDING)
	case o.SingleStepSiglock:
		l := t.th.Siglock()
		if c := o.Contention; c != nil {
			c.Lock(t.th, ObjSiglock, l)
			defer c.Unlock(t.th, ObjSiglock, l)
		}
		l.Lock()
		fl.Clear(TIF_SIGPENDING)
		l.Unlock()
	default:
		ut.signalDenied = true
		fl.Clear(TIF_SIGPENDING)
	}
	if t.th.FatalSignalPending() || t.xolWasTrapped() {
		ut.state = UTaskSStepTrapped
		fl.Set(TIF_UPROBE)
	} else if o.WrongSignalDeniedV1 {
		ut.state = UTaskSStepDenySignal
	}
	return true
}

// handleSinglestep is handle_singlestep (spec §5.2).
func (t *Task) handleSinglestep(r Regs) {
	ut := t.utask
	s := t.mm.sys
	u := ut.activeUprobe
	var err error
	state := ut.state
	switch state {
	case UTaskSStepAck:
		err = t.archPostXOL(u, r)
	case UTaskSStepTrapped:
		t.archAbortXOL(u, r)
		s.stats.aborts.Add(1)
	case UTaskSStepDenySignal:
		// v1 variant (b): re-raise without post_xol/abort_xol.
		t.flags.Set(TIF_SIGPENDING)
	default:
		s.warn("handle_singlestep: state %s", ut.state)
	}
	t.cost(PathPostXOL, 1)
	t.atomicOp(ObjUprobeRef, u)
	s.putUprobe(u)
	ut.activeUprobe = nil
	ut.state = UTaskRunning
	t.xolFreeInsnSlot()
	switch {
	case s.opts.WrongSignalDeniedV1:
		// v1 re-raised the flag only for the states it still saw here;
		// after a completed step the notifier has overwritten
		// DENY_SIGNAL with ACK, so a denied signal is lost.
		if state == UTaskSStepTrapped {
			t.flags.Set(TIF_SIGPENDING)
		}
	case s.opts.SingleStepSiglock:
		l := t.th.Siglock()
		c := s.opts.Contention
		if c != nil {
			c.Lock(t.th, ObjSiglock, l)
			c.Cost(t.th, PathRecalcSigpending, 1)
		}
		l.Lock()
		t.th.RecalcSigpending()
		l.Unlock()
		if c != nil {
			c.Unlock(t.th, ObjSiglock, l)
		}
	case ut.signalDenied:
		t.flags.Set(TIF_SIGPENDING)
		ut.signalDenied = false
	}
	if err != nil {
		s.warn("uprobe: pid %d: execute the probed insn, sending SIGILL", t.tid)
		s.stats.sigills.Add(1)
		t.th.SendSignal(SIGILL, true)
	}
}

// archPostXOL is arch_uprobe_post_xol.
func (t *Task) archPostXOL(u *uprobe, r Regs) error {
	ut := t.utask
	ut.stepping = false
	if t.mm.arch == ArchAMD64 {
		return t.x86PostXOL(&u.arch, r)
	}
	if ut.trapNr != trapSentinel {
		t.mm.sys.warn("uprobe: fault_code changed during the step")
	}
	r.SetPC(ut.vaddr + 4)
	return nil
}

// archAbortXOL is arch_uprobe_abort_xol: back to the probe address.
func (t *Task) archAbortXOL(u *uprobe, r Regs) {
	ut := t.utask
	ut.stepping = false
	if t.mm.arch == ArchAMD64 {
		t.x86AbortXOL(&u.arch, r)
		return
	}
	r.SetPC(ut.vaddr)
}

// TrapAddr is uprobe_get_trap_addr: the address to report for a trap
// taken at pc (si_addr of SIGILL/SIGFPE/SIGTRAP): the probe address
// while the thread single-steps a probed instruction, else pc.
func (t *Task) TrapAddr(pc uint64) uint64 {
	if ut := t.utask; ut != nil && ut.activeUprobe != nil {
		return ut.vaddr
	}
	return pc
}

// PendingReturns returns the depth of the thread's stack of pending
// uretprobe returns.
func (t *Task) PendingReturns() int {
	if t.utask == nil {
		return 0
	}
	return t.utask.depth
}

// Free is uprobe_free_utask: call it when the thread exits or execs.
// It stops ri_timer, frees the pending return instances and the pool.
// A thread that is killed mid-step (uvm's exit_group does not pass
// through get_signal, where Linux aborts the step first) has the step
// aborted here: r, when not nil, gets the PC back at the probe address.
func (t *Task) Free(r Regs) {
	ut := t.utask
	if ut == nil {
		return
	}
	s := t.mm.sys
	if ut.activeUprobe != nil {
		if r != nil {
			t.archAbortXOL(ut.activeUprobe, r)
		}
		s.putUprobe(ut.activeUprobe)
		ut.activeUprobe = nil
		ut.state = UTaskRunning
		t.xolFreeInsnSlot()
		s.stats.exitMidStep.Add(1)
	}
	ut.dead.Store(true)
	if ut.riTimer != nil {
		ut.riTimer.Stop()
	}
	for spins := 0; ut.timerRunning.Load() != 0; {
		cpuRelax(&spins)
	}
	ri := ut.ri.Load()
	for ri != nil {
		next := ri.next.Load()
		t.freeRetInstance(ri, true)
		ri = next
	}
	ut.ri.Store(nil)
	ut.depth = 0
	for ri := ut.riPool; ri != nil; {
		next := ri.next.Load()
		s.riFree(ri)
		ri = next
	}
	ut.riPool = nil
	t.utask = nil
}

// CopyProcess is uprobe_copy_process for a new task child created by
// clone/fork/vfork (child.MM() is the parent's MM for threads and vfork,
// the result of MM.Fork for fork). A forked (or vforked) child gets
// copies of the parent's pending return instances; a fork child also
// gets its XOL area at the parent's address on its first return to user
// space (TaskWork). Threads inherit nothing.
func (t *Task) CopyProcess(child *Task, vfork bool) {
	child.utask = nil
	ut := t.utask
	if ut == nil || ut.ri.Load() == nil {
		return
	}
	if child.mm == t.mm && !vfork {
		return
	}
	s := t.mm.sys
	if err := t.dupUtask(child); err != nil {
		s.warn("uprobe: pid %d: dup ret instances", child.tid)
		return
	}
	a := t.mm.xolAreaLoad()
	if a == nil {
		s.warn("uprobe: pid %d: dup xol area", child.tid)
		return
	}
	if child.mm == t.mm {
		return
	}
	child.utask.dupXOLAddr = a.vaddr
	child.utask.dupXOLPending = true
}

// TaskWork runs the uprobe task work queued for the thread (the fork
// child's dup_xol_work): call it before the thread first enters the
// guest, or from its exit path if it never did (exit_task_work). A thread
// that is exiting (Exiter) creates no XOL area.
func (t *Task) TaskWork() {
	ut := t.utask
	if ut == nil || !ut.dupXOLPending {
		return
	}
	ut.dupXOLPending = false
	if e, ok := t.th.(Exiter); ok && e.Exiting() {
		return // dup_xol_work: current->flags & PF_EXITING
	}
	if _, err := t.mm.createXOLArea(ut.dupXOLAddr); err != nil && !t.th.FatalSignalPending() {
		t.mm.sys.warn("uprobe: pid %d: dup xol area", t.tid)
	}
}
