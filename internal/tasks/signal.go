package tasks

import (
	"debug/elf"
	"encoding/binary"
	"errors"

	"github.com/uvm-emu/uvm/internal/guestprof"
	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// Signal delivery, after Linux's kernel/signal.c and the arch signal code:
// the model (queues, actions, frames) is package signals; this file moves
// state between it, the CPUs and guest memory.
//
// Locking: ThreadGroup.sighand.Siglock protects the actions, the group's
// shared queue, every thread's own queue and blocked mask (when read by
// other threads) and altstack. Task.flags is atomic.

// vdsoBase is where uvm maps its one-page arm64 "[vdso]" when the vDSO is
// off (Options.NoVDSO, vdso.go): only the signal return trampoline
// (__kernel_rt_sigreturn), no ELF image and no AT_SYSINFO_EHDR, so
// language runtimes make real syscalls for time.
const vdsoBase = vm.StackTop

// arm64Sigtramp is the trampoline's address: "nop; mov x8, #139; svc #0".
const arm64Sigtramp = vdsoBase + 4

func mapARM64VDSO(mm *vm.MM) error {
	if err := mm.Map(vm.VMA{Start: vdsoBase, End: vdsoBase + vm.PageSize, Prot: vm.ProtRead | vm.ProtExec, Name: "[vdso]"}); err != nil {
		return err
	}
	var code [12]byte
	binary.LittleEndian.PutUint32(code[0:], 0xd503201f) // nop
	binary.LittleEndian.PutUint32(code[4:], 0xd2801168) // mov x8, #139 (rt_sigreturn)
	binary.LittleEndian.PutUint32(code[8:], 0xd4000001) // svc #0
	return mm.Poke(code[:], vdsoBase)
}

// sigPending reports whether t has a deliverable signal (TIF_SIGPENDING).
func (t *Task) sigPending() bool { return t.flags.Load()&signals.TIF_SIGPENDING != 0 }

// recalc updates t's TIF_SIGPENDING. Called with Siglock held.
func (t *Task) recalcLocked() {
	signals.RecalcSigpending(&t.flags, &t.pending, &t.tg.shared, t.blocked)
}

// wakeForSignal makes a thread notice a newly pending signal: its CPU
// leaves Run, and blocking waits re-evaluate their condition.
func (t *Task) wakeForSignal() {
	t.cpu.Interrupt()
	t.interruptWait()
}

// sendSignal queues info for thread target (process-directed when target
// is nil) and wakes a thread that can take it, like Linux's
// send_signal_locked + complete_signal.
func (tg *ThreadGroup) sendSignal(info signals.SigInfo, target *Task) Errno {
	sh := tg.sighand
	sh.Siglock.Lock()
	var q *signals.Pending
	var blocked signals.SigSet
	traced := false
	if target != nil {
		q, blocked = &target.pending, target.blocked
		traced = target.ptrace.Load() != nil
	} else {
		q = &tg.shared
		tg.mu.Lock()
		if main := tg.tasks[tg.pid]; main != nil {
			blocked = main.blocked
			traced = main.ptrace.Load() != nil
		}
		tg.mu.Unlock()
	}
	if traced {
		// sig_ignored: a traced thread's tracer sees ignored signals
		// too (queued as if blocked; disposed of after the stop).
		blocked = blocked.Add(signals.Signal(info.Signo))
	}
	// all (every queue, for prepare_signal's job-control side) is needed
	// for stop signals and SIGCONT only, tasks (the threads by tid) for
	// those and for a process-directed signal (complete_signal): a
	// thread-directed tgkill builds neither.
	sig0 := signals.Signal(info.Signo)
	jobCtl := sig0.Mask()&signals.StopMask != 0 || sig0 == signals.SIGCONT
	var all []*signals.Pending
	var tasks []*Task
	if jobCtl || target == nil {
		tg.mu.Lock()
		tasks = tg.sortedTasksLocked()
		tg.mu.Unlock()
	}
	if jobCtl {
		all = append(make([]*signals.Pending, 0, 1+len(tasks)), &tg.shared)
		for _, o := range tasks {
			all = append(all, &o.pending)
		}
	}
	if sig := sig0; sig == signals.SIGCONT || sig == signals.SIGKILL {
		// prepare_signal: SIGCONT (and SIGKILL) resume a stopped group
		// at send time, whatever the signal's disposition.
		defer tg.cont()
	}
	res := sh.Send(info, q, blocked, all)
	var wake *Task // at most one thread is woken
	if res == signals.SendQueued {
		sig := signals.Signal(info.Signo)
		if target != nil {
			if !target.blocked.Has(sig) {
				wake = target
			}
		} else {
			// complete_signal: prefer the main thread, then any thread
			// not blocking the signal.
			for _, o := range tasks {
				if !o.blocked.Has(sig) {
					wake = o
					break
				}
			}
		}
		if wake != nil {
			wake.recalcLocked()
		}
	}
	sh.Siglock.Unlock()
	if res == signals.SendQueueFull {
		return EAGAIN
	}
	if res == signals.SendQueued {
		tg.notifySignalQueued()
	}
	if wake != nil {
		wake.wakeForSignal()
	}
	if res == signals.SendQueued && tg.k.tracing() { // no boxing of the arguments untraced
		tg.k.event("%d signal %s queued from pid %d", tidOf(target, tg), signals.Signal(info.Signo), info.Pid)
	}
	return 0
}

func tidOf(t *Task, tg *ThreadGroup) int32 {
	if t == nil {
		return tg.pid
	}
	return t.tid
}

// sortedTasksLocked lists the group's live tasks by tid (main first).
// Called with tg.mu held.
func (tg *ThreadGroup) sortedTasksLocked() []*Task {
	out := make([]*Task, 0, len(tg.tasks))
	for _, t := range tg.tasks {
		out = append(out, t)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].tid < out[j-1].tid; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// forceSignal raises a synchronous signal on t (force_sig_info).
func (t *Task) forceSignal(info signals.SigInfo) {
	sh := t.tg.sighand
	sh.Siglock.Lock()
	sh.Force(info, &t.pending, &t.blocked, false)
	t.recalcLocked()
	sh.Siglock.Unlock()
}

// exitSignalInfo turns a synchronous exit of the interpreter into the
// signal Linux would send, with the arch's fault context.
func (t *Task) exitSignalInfo(ex vm.Exit) signals.SigInfo {
	if rec := t.tg.arch.recordTrap; rec != nil {
		rec(t, ex) // x86trap.go
	}
	switch ex.Reason {
	case vm.ExitFault:
		if ex.Fault.Bus {
			// A file mapping's page wholly past the end of the file.
			t.fault = ex
			return signals.FaultInfo(signals.SIGBUS, signals.BUS_ADRERR, ex.Fault.Addr)
		}
		code := int32(signals.SEGV_MAPERR)
		if ex.Fault.Mapped {
			code = signals.SEGV_ACCERR
		}
		t.fault = ex
		return signals.FaultInfo(signals.SIGSEGV, code, ex.Fault.Addr)
	case vm.ExitAlignment:
		t.fault = ex
		return signals.FaultInfo(signals.SIGBUS, signals.BUS_ADRALN, ex.Fault.Addr)
	case vm.ExitUndefined:
		return signals.FaultInfo(signals.SIGILL, t.tg.arch.illCode, ex.PC)
	case vm.ExitBreakpoint:
		if n := t.tg.arch.breakpointTrapLen; n != 0 {
			// INT3 is a trap: the handler sees rip after it, si_code SI_KERNEL.
			t.cpu.SetPC(ex.PC + n)
			return signals.KernelInfo(signals.SIGTRAP)
		}
		return signals.FaultInfo(signals.SIGTRAP, signals.TRAP_BRKPT, ex.PC)
	case vm.ExitDivide:
		// Code carries the si_code of an unmasked SIMD or x87
		// floating-point exception (x86 #XM, #MF with
		// amd64.FPECodeX87); 0 is the integer divide error (#DE).
		if ex.Code != 0 {
			return signals.FaultInfo(signals.SIGFPE, int32(ex.Code&^amd64.FPECodeX87), ex.PC)
		}
		return signals.FaultInfo(signals.SIGFPE, signals.FPE_INTDIV, ex.PC)
	case vm.ExitPrivileged:
		return signals.KernelInfo(signals.SIGSEGV)
	}
	// Any other synchronous exit: a kernel-sent SIGSEGV, as Linux does
	// for traps it has no better signal for.
	return signals.KernelInfo(signals.SIGSEGV)
}

// syscallResult is what a syscall exit left for signal handling: the
// return value (possibly a restart code) and how to restart it.
type syscallResult struct {
	ret      int64
	origArg0 uint64
	nr       uint64
}

// handleSignalsOnce dequeues and acts on one signal (get_signal +
// handle_signal). It completes sc (restart rules) when a signal is
// acted on, and returns false when the thread group is ending.
func (t *Task) handleSignalsOnce(sc *syscallResult) bool {
	tg := t.tg
	sh := tg.sighand
	var info signals.SigInfo
	var act signals.SigAction
	var disp signals.Disposition
	if ps := t.ptrace.Load(); ps != nil {
		info, act, disp = t.ptraceGetSignal(ps) // the tracer sees it first
	} else {
		sh.Siglock.Lock()
		info, act, disp = sh.GetSignal(&t.pending, &tg.shared, t.blocked)
		t.recalcLocked()
		sh.Siglock.Unlock()
	}
	tg.timerSignalDequeued(&info)
	if info.Signo != 0 && tg.k.dbg != nil && !t.debugSignal(&info) {
		disp = signals.DispNone // discarded by the debugger (debug.go)
	}
	sig := signals.Signal(info.Signo)
	switch disp {
	case signals.DispNone:
		if sc != nil {
			t.finishSyscall(sc, false, signals.SigAction{})
		}
		return true
	case signals.DispStop:
		if sc != nil {
			t.finishSyscall(sc, false, signals.SigAction{})
		}
		tg.stop(sig)
		t.waitWhileStopped()
		return !t.killed.Load()
	case signals.DispTerminate, signals.DispCore:
		if sc != nil {
			t.finishSyscall(sc, false, signals.SigAction{})
		}
		t.dieOfSignal(sig, disp == signals.DispCore, info)
		return false
	}
	// DispHandler
	if sc != nil {
		t.finishSyscall(sc, true, act)
	}
	mask := t.blocked
	if t.savedBlocked != nil {
		mask = *t.savedBlocked
		t.savedBlocked = nil
	}
	if !t.setupFrame(sig, &info, act, mask) {
		sh.Siglock.Lock()
		sh.ForceSigsegv(sig, &t.pending, &t.blocked)
		t.recalcLocked()
		sh.Siglock.Unlock()
		return true
	}
	sh.Siglock.Lock()
	t.blocked = signals.BlockedForHandler(mask, sig, act)
	t.alt.Disarm()
	t.recalcLocked()
	sh.Siglock.Unlock()
	if tg.k.tracing() { // no boxing of the arguments untraced
		tg.k.event("%d signal %s handler=%#x", t.tid, sig, act.Handler)
	}
	return true
}

// restoreSuspendMask puts back the mask rt_sigsuspend replaced when it
// returns without running a handler.
func (t *Task) restoreSuspendMask() {
	if t.savedBlocked == nil {
		return
	}
	sh := t.tg.sighand
	sh.Siglock.Lock()
	t.blocked = *t.savedBlocked
	t.savedBlocked = nil
	t.recalcLocked()
	sh.Siglock.Unlock()
}

// finishSyscall applies the restart rules to an interrupted syscall.
func (t *Task) finishSyscall(sc *syscallResult, handler bool, act signals.SigAction) {
	a := t.tg.arch
	// restore undoes what the return value overwrote: x86-64's rax held
	// the number, arm64's x0 the first argument.
	restore := func() {
		if a.ret == a.nr {
			t.cpu.SetReg(a.nr, sc.nr)
		} else {
			t.cpu.SetReg(a.ret, sc.origArg0)
		}
	}
	switch signals.SyscallRestart(sc.ret, handler, act) {
	case signals.RestartEINTR:
		t.cpu.SetReg(a.ret, errRet(EINTR))
	case signals.RestartSyscall:
		restore()
		t.cpu.SetPC(t.cpu.PC() - a.syscallInsnLen)
	case signals.RestartRestartBlock:
		// restart_syscall runs t.restartBlock (the rest of a nanosleep
		// or poll); without one it re-issues the original call.
		restore()
		if t.restartBlock != nil {
			t.cpu.SetReg(a.nr, a.restartSyscallNr)
		}
		t.cpu.SetPC(t.cpu.PC() - a.syscallInsnLen)
	}
	if handler {
		t.restartBlock = nil
	}
}

// dieOfSignal ends the thread group by a signal's default action.
func (t *Task) dieOfSignal(sig signals.Signal, core bool, info signals.SigInfo) {
	k := t.tg.k
	if sig != signals.SIGKILL {
		t.ptraceExitEvent(uint32(sig) | uint32(boolInt(core))<<7) // ptrace.go
	}
	// The one-line report is for the program uvm runs; its children die
	// silently, as on Linux (their parent sees the wait status).
	k.mu.Lock()
	first := len(k.groups) > 0 && k.groups[0] == t.tg
	k.mu.Unlock()
	if first && info.Code > 0 && sig.Mask()&signals.SynchronousMask != 0 && t.lastExit != nil {
		ex := *t.lastExit
		k.logf("%s: %s at pc 0x%x: %s in %s (thread %d)", sig, exitWhy(ex), ex.PC, t.cpu.Disasm(ex.PC), t.backtrace(ex.PC), t.tid)
	}
	if first && t.lastExit != nil && t.tg.umm != nil {
		ex := *t.lastExit
		if t.tg.umm.XOLContains(ex.PC) || t.tg.umm.XOLContains(ex.Fault.Addr) {
			k.logf("the crash involves the uprobes XOL area (the uretprobe trampoline page)")
			if isGoBinary(t.tg.mm.ExePath) {
				k.logf("this is a Go program: a uretprobe replaces return addresses on goroutine stacks, which the Go runtime copies and unwinds; it then meets the trampoline address and fails (golang/go#22008) — the kernel behaves the same; probe Go functions with uprobes, not uretprobes")
			}
		}
	}
	k.event("%d signal %s fatal core=%v", t.tid, sig, core)
	t.tg.exitGroup(ExitStatus{Signal: int(sig), Core: core})
}

// setupFrame builds the signal frame on the guest stack and points the
// CPU at the handler (the arch's setupFrame). It reports false when the
// frame cannot be written.
func (t *Task) setupFrame(sig signals.Signal, info *signals.SigInfo, act signals.SigAction, blocked signals.SigSet) bool {
	// The arch's setupFrame is an indirect call, so a pointer passed to
	// it escapes: the caller's siginfo goes through the thread's own copy
	// rather than to the heap on every delivery.
	t.frameInfo = *info
	if !t.tg.arch.setupFrame(t, sig, &t.frameInfo, act, blocked) {
		return false
	}
	t.fault = vm.Exit{}
	return true
}

// arm64SetupFrame is arm64's setupFrame: the rt_sigframe with its
// fpsimd, esr and extra records; the handler returns through the vDSO's
// __kernel_rt_sigreturn.
func arm64SetupFrame(t *Task, sig signals.Signal, info *signals.SigInfo, act signals.SigAction, blocked signals.SigSet) bool {
	c, ok := t.cpu.(*arm64.CPU)
	if !ok {
		return false
	}
	sc := t.sigScratch() // the context and frame buffers, reused (sigscratch.go)
	ctx := &sc.a64
	arm64ContextInto(c, ctx)
	if t.fault.Reason == vm.ExitFault && (sig == signals.SIGSEGV || sig == signals.SIGBUS) {
		ctx.FaultAddress = t.fault.Fault.Addr
		ctx.ESR = arm64ESR(t.fault)
	}
	f, err := signals.BuildARM64FrameInto(sc.frame, ctx, info, blocked, act, t.alt)
	if err != nil || t.tg.mm.WriteAt(f.Bytes, f.Addr) != nil {
		return false
	}
	sc.keepFrame(f.Bytes)
	ctx.EnterHandler(sig, act, f, t.tg.k.arm64Sigtramp())
	setARM64Context(c, ctx)
	return true
}

// amd64SetupFrame is x86-64's setupFrame: the rt_sigframe with the
// trap number, error code and CR2 of the last trap, and the fpstate (the
// XSAVE image in the x86-64-v3 model).
func amd64SetupFrame(t *Task, sig signals.Signal, info *signals.SigInfo, act signals.SigAction, blocked signals.SigSet) bool {
	c, ok := t.cpu.(*amd64.CPU)
	if !ok {
		return false
	}
	sc := t.sigScratch()
	ctx := &sc.x86
	amd64ContextInto(c, ctx)
	t.x86FrameTrap(ctx) // x86trap.go
	f, err := signals.BuildAMD64FrameInto(sc.frame, ctx, info, blocked, act, t.alt)
	if err != nil || t.tg.mm.WriteAt(f.Bytes, f.Addr) != nil {
		return false
	}
	sc.keepFrame(f.Bytes)
	ctx.EnterHandlerRegs(sig, act, f)
	setAMD64ContextNoFP(c, ctx)
	amd64InitFPU(c) // EnterHandler's FPU reset, without building and parsing its image
	return true
}

// arm64ESR is the ESR_EL1 value Linux reports in esr_context for a data
// abort from EL0: EC 0x24, IL, WnR for writes, and a level-3 translation
// (unmapped) or permission fault status code.
func arm64ESR(ex vm.Exit) uint64 {
	esr := uint64(0x24)<<26 | 1<<25
	if ex.Fault.Access == vm.AccessExec {
		esr = uint64(0x20)<<26 | 1<<25
	}
	if ex.Fault.Access == vm.AccessWrite {
		esr |= 1 << 6
	}
	if ex.Fault.Mapped {
		esr |= 0x0f
	} else {
		esr |= 0x07
	}
	return esr
}

// sigreturnScratch returns a buffer of n bytes for the frame rt_sigreturn
// reads (the task's own, reused: the parsers copy out of it). n is the
// fixed frame size of the arch's signals package, not guest-controlled.
func (t *Task) sigreturnScratch(n int) []byte {
	if cap(t.sigFrame) < n {
		t.sigFrame = make([]byte, n)
	}
	return t.sigFrame[:n]
}

// sysRtSigreturn restores the context saved by setupFrame (the arch's
// sigreturn).
func (t *Task) sysRtSigreturn() { t.tg.arch.sigreturn(t) }

// badSigreturn is the signal of a frame rt_sigreturn cannot use.
func (t *Task) badSigreturn() {
	info := signals.KernelInfo(signals.SIGSEGV)
	if t.tg.arch.badFrameAtSP {
		info = signals.FaultInfo(signals.SIGSEGV, signals.SEGV_MAPERR, t.cpu.SP())
	}
	t.forceSignal(info)
}

func arm64Sigreturn(t *Task) {
	c, ok := t.cpu.(*arm64.CPU)
	if !ok {
		t.badSigreturn()
		return
	}
	sc := t.sigScratch()
	ctx := &sc.a64 // the current state, restored in place
	arm64ContextInto(c, ctx)
	addr, size, err := signals.ARM64SigreturnFrame(ctx.SP)
	buf := t.sigreturnScratch(size)
	if err == nil && t.tg.mm.ReadAt(buf, addr) != nil {
		err = errors.New("unreadable frame")
	}
	if err != nil {
		t.badSigreturn()
		return
	}
	blocked, alt, perr := signals.ParseARM64FrameInto(buf, ctx)
	setARM64Context(c, ctx)
	t.setBlocked(blocked)
	t.alt.Set(alt, ctx.SP, signals.MINSIGSTKSZ_ARM64)
	if perr != nil {
		t.badSigreturn()
	}
}

func amd64Sigreturn(t *Task) {
	c, ok := t.cpu.(*amd64.CPU)
	if !ok {
		t.badSigreturn()
		return
	}
	mm := t.tg.mm
	sc := t.sigScratch()
	// The current state, restored in place. Its FPU half is not
	// read: either the frame's fpstate replaces all of it
	// (RestoreAMD64FPState, success or reset) or the FPU is left
	// alone (no fpstate, a bad frame, an unreadable fpstate).
	ctx := &sc.x86
	amd64ContextNoFP(c, ctx)
	fpLoaded := false
	addr, size := signals.AMD64SigreturnFrame(ctx.GPR[signals.RSP])
	buf := t.sigreturnScratch(size)
	if mm.ReadAt(buf, addr) != nil {
		t.badSigreturn()
		return
	}
	blocked, alt, fpstate, perr := signals.ParseAMD64FrameInto(buf, ctx)
	if perr == nil && fpstate != 0 {
		fx := sc.fpstate(512)
		if mm.ReadAt(fx, fpstate) != nil {
			perr = signals.ErrBadFrame
		} else if n := signals.AMD64XStateExtra(ctx, fx); n > 0 {
			// The XSAVE image of the x86-64-v3 model (AVX state).
			fx = sc.fpstate(512 + n)
			if mm.ReadAt(fx[512:], fpstate+512) != nil {
				perr = signals.ErrBadFrame
			} else {
				perr, fpLoaded = signals.RestoreAMD64FPState(ctx, fpstate, fx), true
			}
		} else {
			perr, fpLoaded = signals.RestoreAMD64FPState(ctx, fpstate, fx), true
		}
	}
	if fpLoaded {
		setAMD64Context(c, ctx)
	} else {
		setAMD64ContextNoFP(c, ctx)
	}
	t.setBlocked(blocked)
	t.alt.Set(alt, ctx.GPR[signals.RSP], signals.MINSIGSTKSZ_AMD64)
	if perr != nil {
		t.badSigreturn()
	}
}

func (t *Task) setBlocked(b signals.SigSet) {
	sh := t.tg.sighand
	sh.Siglock.Lock()
	t.blocked = b &^ signals.UnblockableMask
	t.recalcLocked()
	sh.Siglock.Unlock()
}

// Context conversion between the CPUs' register files and the signal
// frames' contexts.

// arm64ContextInto fills ctx (all of it) from the CPU's registers.
func arm64ContextInto(c *arm64.CPU, ctx *signals.ARM64Context) {
	r := c.Regs()
	*ctx = signals.ARM64Context{}
	ctx.X, ctx.SP, ctx.PC, ctx.PState = r.X, r.SP, r.PC, r.NZCV&0xf0000000
	ctx.V, ctx.FPSR, ctx.FPCR = r.V, r.FPSR, r.FPCR
}

func setARM64Context(c *arm64.CPU, ctx *signals.ARM64Context) {
	r := c.Regs()
	r.X, r.SP, r.PC, r.NZCV = ctx.X, ctx.SP, ctx.PC, ctx.PState&0xf0000000
	r.V, r.FPSR, r.FPCR = ctx.V, ctx.FPSR, ctx.FPCR&c.CPUModel().FPCRMask()
}

// amd64ContextInto fills ctx (all of it) from the CPU's registers.
func amd64ContextInto(c *amd64.CPU, ctx *signals.AMD64Context) {
	amd64ContextNoFP(c, ctx)
	r := c.RegsForSet() // RFLAGS is already materialised by amd64ContextNoFP
	fx := &ctx.FXSave
	le := binary.LittleEndian
	le.PutUint16(fx[0:], r.FCW)
	le.PutUint16(fx[2:], r.FSW)
	fx[4] = r.FTW
	le.PutUint16(fx[6:], r.FOP)
	le.PutUint64(fx[8:], r.FIP)
	le.PutUint64(fx[16:], r.FDP)
	le.PutUint32(fx[24:], r.MXCSR)
	top := int(r.FSW>>11) & 7
	for i := 0; i < 8; i++ {
		st := r.ST[(top+i)&7]
		le.PutUint64(fx[32+16*i:], st.Mant)
		le.PutUint16(fx[32+16*i+8:], st.SignExp)
	}
	for i := 0; i < 16; i++ {
		le.PutUint64(fx[160+16*i:], r.XMM[i][0])
		le.PutUint64(fx[160+16*i+8:], r.XMM[i][1])
	}
	if c.AVX() {
		for i := 0; i < 16; i++ {
			le.PutUint64(ctx.AVX[16*i:], r.YMMH[i][0])
			le.PutUint64(ctx.AVX[16*i+8:], r.YMMH[i][1])
		}
	}
}

// amd64ContextNoFP fills ctx from the CPU's registers but for the FPU
// image: FXSave and AVX are zero apart from MXCSR_MASK, which FXSAVE
// reports and FXRSTOR (RestoreAMD64FPState) keeps; XFeatures is set.
// rt_sigreturn uses it when the frame's fpstate replaces the FPU state
// (or the FPU is not written back: setAMD64ContextNoFP).
func amd64ContextNoFP(c *amd64.CPU, ctx *signals.AMD64Context) {
	r := c.Regs()
	*ctx = signals.AMD64Context{}
	ctx.GPR, ctx.RIP, ctx.RFLAGS, ctx.CS, ctx.SS = r.GPR, r.RIP, r.RFLAGS, 0x33, 0x2b
	binary.LittleEndian.PutUint32(ctx.FXSave[28:], signals.MXCSRMask)
	if c.AVX() {
		ctx.XFeatures = amd64.XCR0
	}
}

// setAMD64ContextNoFP loads the general registers, RIP and RFLAGS of
// ctx, leaving the FPU state as it is (setAMD64Context of a context
// whose FPU half was read from the CPU, without the round trip).
func setAMD64ContextNoFP(c *amd64.CPU, ctx *signals.AMD64Context) {
	r := c.RegsForSet()
	r.GPR, r.RIP = ctx.GPR, ctx.RIP
	c.SetRFLAGS(ctx.RFLAGS)
}

// amd64InitFPU resets the CPU's x87/SSE/AVX state to the initial one
// (fpu__clear_user_states): what setAMD64Context loads from
// signals.AMD64InitFXSave and a zero AVX area (TestAMD64InitFPU).
func amd64InitFPU(c *amd64.CPU) {
	r := c.RegsForSet()
	r.FCW, r.FSW, r.FTW, r.FOP, r.FIP, r.FDP, r.MXCSR = 0x37f, 0, 0, 0, 0, 0, 0x1f80
	r.ST = [8]amd64.F80{}
	r.XMM = [16][2]uint64{}
	r.YMMH = [16][2]uint64{}
}

// setAMD64Context loads ctx into the CPU's registers, in place (the
// same result as SetRegs of a modified copy, without the two copies).
func setAMD64Context(c *amd64.CPU, ctx *signals.AMD64Context) {
	r := c.RegsForSet() // every field but RFLAGS is written below; SetRFLAGS last
	r.GPR, r.RIP = ctx.GPR, ctx.RIP
	fx := &ctx.FXSave
	le := binary.LittleEndian
	r.FCW = le.Uint16(fx[0:])
	r.FSW = le.Uint16(fx[2:])
	r.FTW = fx[4]
	r.FOP, r.FIP, r.FDP = le.Uint16(fx[6:]), le.Uint64(fx[8:]), le.Uint64(fx[16:])
	r.MXCSR = le.Uint32(fx[24:])
	top := int(r.FSW>>11) & 7
	for i := 0; i < 8; i++ {
		r.ST[(top+i)&7] = amd64.F80{Mant: le.Uint64(fx[32+16*i:]), SignExp: le.Uint16(fx[32+16*i+8:])}
	}
	for i := 0; i < 16; i++ {
		r.XMM[i][0] = le.Uint64(fx[160+16*i:])
		r.XMM[i][1] = le.Uint64(fx[160+16*i+8:])
		r.YMMH[i] = [2]uint64{le.Uint64(ctx.AVX[16*i:]), le.Uint64(ctx.AVX[16*i+8:])}
	}
	c.SetRFLAGS(ctx.RFLAGS)
}

// backtrace symbolizes the thread's stack for crash reports, leaf first
// ("main.foo+0x14 ← main.bar+0x30 ← …").
func (t *Task) backtrace(pc uint64) string {
	arch, fp, lr := t.frameRegs()
	return guestprof.NewSymbolizer(t.tg.mm).Backtrace(arch, pc, t.cpu.SP(), fp, lr)
}

// isGoBinary reports whether the executable was built by the Go toolchain.
func isGoBinary(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".go.buildinfo") != nil || f.Section(".note.go.buildid") != nil
}

// explainGoUretprobeFailure: a Go program that ends with exit status 2
// (the runtime's throw) while uretprobe instances were pending most likely
// met the trampoline address while copying or unwinding a goroutine stack
// ("unexpected return pc … called from" the XOL page). The kernel behaves
// the same (golang/go#22008); uvm says so.
func (tg *ThreadGroup) explainGoUretprobeFailure() {
	tg.mu.Lock()
	st := tg.status
	tg.mu.Unlock()
	if tg.umm == nil || st.Signal != 0 || st.Code != 2 || !tg.retsPendingAtExit.Load() || !isGoBinary(tg.mm.ExePath) {
		return
	}
	tg.k.logf("this Go program exited with status 2 while uretprobes had replaced return addresses on its stacks: " +
		"the Go runtime copies and unwinds goroutine stacks and fails on the trampoline address (golang/go#22008); " +
		"the kernel behaves the same; probe Go functions with uprobes, not uretprobes")
}
