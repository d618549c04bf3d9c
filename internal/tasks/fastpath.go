package tasks

import (
	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The kernel's fast way back to user mode (Linux's syscall_exit_to_user_mode
// and irqentry_exit_to_user_mode when no thread flag asks for work): a
// syscall or a uprobe breakpoint is handled from inside the CPU's Run
// (vm.TrapHandler), and the guest goes on without Run returning to the
// thread's run loop (runstate.go) and being entered again. The handler
// does exactly what that loop would have done for the exit, in the same
// order: the exit's accounting (virtual clock, vvar page, CPU-time timers),
// then the syscall or TIF_UPROBE work, and a uprobe's XOL single step
// when the slice has room after it. Whenever anything else is due (a
// signal, a stop, a ptrace or debugger stop, the thread's end, a step at
// the slice's end) it hands the rest to the run loop, which carries on as
// after the same exit. The CPU never calls it from a step, at the end of
// the budget (so deterministic quanta end where they did) or with the
// cache model on; it is not installed with the guest profiler, the
// instruction trace or the timing model, whose bookkeeping is per exit.

// trapWork is what a TrapLeave left to the run loop (Task.trapWork).
type trapWork uint8

const (
	trapNone       trapWork = iota
	trapToUser              // exit_to_user work (with Task.trapSC when trapHasSC)
	trapThreadDone          // the syscall ended the thread (stateDone)
	trapStepExit            // the XOL step exited otherwise than by ExitStep (Task.trapEx)
)

// trapHandler is a Task as its CPU's vm.TrapHandler.
type trapHandler Task

// installTrapHandler gives t's CPU the fast path when nothing that needs
// every exit is on.
func (t *Task) installTrapHandler() {
	c, ok := t.cpu.(interface{ SetTrapHandler(vm.TrapHandler) })
	if !ok {
		return
	}
	o := &t.tg.k.opts
	if o.SlowTraps || o.Profiler != nil || o.TraceInsn != nil || t.vc != nil {
		c.SetTrapHandler(nil)
		return
	}
	c.SetTrapHandler((*trapHandler)(t))
}

// inLoop reports whether syscall no may run inside the CPU's Run: every
// implemented one but those that end or replace the thread's execution
// (exit, exec, sigreturn's whole-context switch) or make threads.
func inLoop(no sysno, handler syscallHandler) bool {
	switch no {
	case sysExit, sysExitGroup, sysExecve, sysExecveat, sysRtSigreturn,
		sysClone, sysClone3, sysFork, sysVfork:
		return false
	}
	return handler != nil
}

// Trap is the fast path for one syscall or breakpoint exit.
func (h *trapHandler) Trap(reason vm.ExitReason, pc uint64, code uint32, left uint64) vm.TrapAction {
	t := (*Task)(h)
	k := t.tg.k
	if k.dbg != nil || t.ptrace.Load() != nil || t.flags.Load() != 0 || t.savedBlocked != nil || t.killed.Load() {
		return vm.TrapExit
	}
	a := t.tg.arch
	var nr uint64
	switch reason {
	case vm.ExitSyscall:
		nr = t.cpu.Reg(a.nr)
		if nr == a.uretprobeNr {
			if t.utask == nil {
				return vm.TrapExit
			}
		} else if nr >= uint64(len(a.dense)) || !a.dense[nr].inLoop {
			return vm.TrapExit
		}
	case vm.ExitBreakpoint:
		// Not a uprobe breakpoint: the run loop sends SIGTRAP.
		if t.utask == nil || !t.utask.TakesBreakpoint(pc, code) {
			return vm.TrapExit
		}
	default:
		return vm.TrapExit
	}
	t.exitAccounting(k, reason)
	if reason == vm.ExitBreakpoint {
		// The trap (BreakpointTrap) and exit_to_user_mode_loop's
		// TIF_UPROBE work (exitToUser) at once: no flag was set, so
		// TIF_UPROBE would have been the only one.
		t.utask.BreakpointResume(t.uregs, pc)
		if t.utask.SingleStepping() && left > 1 && t.quiet() {
			// The out-of-line single step, as stateApp's stepping case
			// and stateExit's StepDone would do it. With at least one
			// instruction of the slice left after it, the run loop would
			// neither yield nor start a new slice here.
			r0 := t.cpu.Retired()
			ex := xolStep(t.cpu)
			t.exitAccounting(k, ex.Reason)
			if ex.Reason != vm.ExitStep || t.cpu.Retired()-r0 >= left {
				t.trapWork, t.trapEx = trapStepExit, ex // stateExit handles it as after the step
				return vm.TrapLeave
			}
			t.utask.StepDone(t.uregs) // sets TIF_UPROBE
			t.uprobeWork()
		}
		return t.trapReturn(nil)
	}
	if nr == a.uretprobeNr {
		t.cpu.SetReg(a.ret, t.utask.SysUretprobe(t.uregs)) // as stateSyscall
		return t.trapReturn(nil)
	}
	stop, sc, restartable := t.syscall()
	if stop {
		t.trapWork = trapThreadDone
		return vm.TrapLeave
	}
	if !restartable {
		return t.trapReturn(nil)
	}
	return t.trapReturn(&sc)
}

// uprobeWork is exitToUser's TIF_UPROBE work.
func (t *Task) uprobeWork() {
	for t.flags.Test(signals.TIF_UPROBE) && !t.killed.Load() {
		t.utask.NotifyResume(t.uregs)
	}
}

// quiet reports whether nothing asks for exit_to_user work or the run
// loop's attention.
func (t *Task) quiet() bool {
	return t.flags.Load() == 0 && t.savedBlocked == nil && !t.killed.Load() && !t.tg.jobctl.isStopped()
}

// trapReturn is the way out of a handled trap: straight back to the guest
// when no work is due (an interrupted syscall restarts, as in
// stateSyscall), else to the run loop's exit_to_user work.
func (t *Task) trapReturn(sc *syscallResult) vm.TrapAction {
	if t.quiet() && (t.utask == nil || !t.utask.SingleStepping()) {
		if sc != nil && sc.ret <= -512 && sc.ret >= -516 {
			t.finishSyscall(sc, false, signals.SigAction{}) // a restart code with no signal: restart
		}
		return vm.TrapResume
	}
	t.trapWork = trapToUser
	if sc != nil {
		t.trapSC, t.trapHasSC = *sc, true
	}
	return vm.TrapLeave
}

// takeTrapWork is the run loop's side of a TrapLeave: the state after the
// exit that the trap handler began (stateExit calls it first), or, after
// an XOL step that did not end by ExitStep, that step's exit in rc for
// stateExit to handle.
func (t *Task) takeTrapWork(rc *runCtx) (runState, bool) {
	w := t.trapWork
	if w == trapNone {
		return 0, false
	}
	t.trapWork = trapNone
	switch w {
	case trapThreadDone:
		return stateDone, true
	case trapStepExit:
		rc.ex, rc.stepping = t.trapEx, true
		return 0, false
	}
	if t.trapHasSC {
		rc.scBuf, rc.sc = t.trapSC, &rc.scBuf
		t.trapHasSC = false
	}
	return stateExitToUser, true
}
