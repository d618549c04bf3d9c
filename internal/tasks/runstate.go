package tasks

import (
	"fmt"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The loop of one guest thread, as an explicit state machine (the shape
// of gVisor's taskRunState): each state does one step and names the next.
//
//	stateApp ──► stateExit ──► stateApp            (nothing pending)
//	   │  ▲          │    └──► stateExitToUser ──► stateApp
//	   ▼  │          └───────► stateDone           (exit, exit_group, kill)
//	stateStopped
//
// stateApp runs the CPU and accounts what it retired; stateExit handles
// what the CPU stopped for (Linux's syscall and exception entry);
// stateExitToUser is exit_to_user_mode_loop (TIF_UPROBE work, signal
// delivery, the restart decision of an interrupted syscall). A thread
// leaves through stateDone, from any state, once it is killed or has
// exited.

// runState is one state of Task.run.
type runState uint8

const (
	// stateApp executes guest instructions until the CPU exits, then
	// accounts the slice (retired instructions, virtual time, timers,
	// the deterministic scheduler's quantum).
	stateApp runState = iota
	// stateStopped waits while job control stops the thread group.
	stateStopped
	// stateExit handles the CPU's exit: a syscall, a breakpoint (a
	// uprobe's or the guest's), a fault or trap turned into its signal.
	stateExit
	// stateExitToUser runs the work pending before the thread returns to
	// the guest (Task.exitToUser), then goes back to stateApp.
	stateExitToUser
	// stateDone ends the loop: the thread exited or was killed.
	stateDone
)

var runStateNames = [...]string{"app", "stopped", "exit", "exit-to-user", "done"}

func (s runState) String() string {
	if int(s) < len(runStateNames) {
		return runStateNames[s]
	}
	return fmt.Sprintf("runState(%d)", uint8(s))
}

// runCtx is what one state hands the next.
type runCtx struct {
	// ex is the CPU's last exit (stateApp → stateExit).
	ex vm.Exit
	// stepping: ex ended a uprobe's out-of-line single step.
	stepping bool
	// sc is the interrupted syscall stateExitToUser may restart, or nil.
	sc    *syscallResult
	scBuf syscallResult
}

// runBudget is the number of instructions a CPU runs before returning to
// the task loop to look at its flags.
const runBudget = 1 << 20

// run is the task's loop: the states above until stateDone.
func (t *Task) run() {
	k := t.tg.k
	if k.opts.PinThreads && k.det == nil {
		pinToCPU(int(t.tid - 1001))
	}
	if k.det != nil {
		k.det.acquire(t)
	}
	defer t.exited()
	defer t.recoverBug()
	if t.utask != nil && t.forkChild {
		t.utask.TaskWork() // a fork child maps its XOL area before entering the guest
	}
	var rc runCtx
	for st := stateApp; st != stateDone; {
		switch st {
		case stateApp:
			st = t.stateApp(&rc)
		case stateStopped:
			t.waitWhileStopped()
			st = stateApp
		case stateExit:
			st = t.stateExit(&rc)
		case stateExitToUser:
			st = stateApp
			if !t.exitToUser(rc.sc) {
				st = stateDone
			}
			rc.sc = nil
		default:
			panic("tasks: bad run state " + st.String())
		}
	}
}

// stateApp runs the CPU for one slice and accounts it.
func (t *Task) stateApp(rc *runCtx) runState {
	if t.killed.Load() {
		return stateDone
	}
	if t.tg.jobctl.isStopped() {
		return stateStopped
	}
	k := t.tg.k
	var ex vm.Exit
	budget := int64(runBudget)
	if k.det != nil {
		// The slice spans exits: a thread that traps or makes
		// syscalls in a loop still yields after its quantum.
		if t.sliceLeft <= 0 {
			if k.ckpt != nil {
				t.maybeCheckpoint() // checkpoint.go
			}
			t.sliceLeft = k.det.budget()
		}
		t.detClean = false
		budget = t.sliceLeft
	}
	before := t.cpu.Retired()
	stepping := t.utask != nil && t.utask.SingleStepping()
	switch {
	case stepping:
		// Executing the XOL slot: exactly one instruction.
		if k.opts.TraceInsn != nil {
			fmt.Fprintln(k.opts.TraceInsn, t.cpu.TraceLine())
		}
		ex = xolStep(t.cpu)
	case t.x86TrapFlags():
		ex = t.x86Step() // x86trap.go: RFLAGS.TF or AC set
	case t.ptraceStepping():
		// PTRACE_SINGLESTEP (ptrace.go): one instruction, then SIGTRAP.
		if ex = t.cpu.Step(); ex.Reason == vm.ExitStep {
			t.ptraceStepped()
			ex.Reason = vm.ExitBudget
		}
	case k.opts.TraceInsn != nil:
		fmt.Fprintln(k.opts.TraceInsn, t.cpu.TraceLine())
		ex = t.cpu.Step()
		if ex.Reason == vm.ExitStep {
			ex.Reason = vm.ExitBudget
		}
	case k.dbg != nil && k.dbg.on.Load():
		ex = t.debugRun(budget) // debug.go: the debugger's gate and breakpoints
	default:
		ex = t.runSampled(budget)
	}
	t.exitAccounting(k, ex.Reason)
	if k.det != nil {
		t.sliceLeft -= int64(t.cpu.Retired() - before)
		if t.sliceLeft <= 0 && !(ex.Reason == vm.ExitStep && stepping) {
			t.detClean = ex.Reason == vm.ExitBudget
			k.det.yield(t)
		}
	}
	rc.ex, rc.stepping = ex, stepping
	return stateExit
}

// exitAccounting is what every exit from the guest's code does before
// its cause is handled (also on the fast path, fastpath.go): the virtual
// clock, the timing model, the vvar page, CPU-time timers.
func (t *Task) exitAccounting(k *Kernel, reason vm.ExitReason) {
	if k.det != nil {
		t.account()
		if t.vc != nil {
			t.timingExit(reason)
		}
	} else if k.vdso != nil {
		if t.vvarSkip <= 0 || reason == vm.ExitBudget {
			t.vvarSkip = vvarRefreshExits
			k.refreshVvar()
		} else {
			t.vvarSkip--
		}
	}
	if t.tg.timers.cpuArmed.Load() != 0 {
		t.cpuTimerTick()
	}
}

// toUser is the state after an exit that needs no more work of its own:
// exit_to_user work when a thread flag is set, else straight back.
func (t *Task) toUser() runState {
	if t.flags.Load() != 0 {
		return stateExitToUser
	}
	return stateApp
}

// alive maps "the thread goes on" to the next state.
func alive(ok bool) runState {
	if ok {
		return stateApp
	}
	return stateDone
}

// stateExit handles the CPU's exit.
func (t *Task) stateExit(rc *runCtx) runState {
	if t.trapWork != trapNone { // the fast path began this exit (fastpath.go)
		if st, ok := t.takeTrapWork(rc); ok {
			return st
		}
	}
	ex, stepping := rc.ex, rc.stepping
	switch ex.Reason {
	case vm.ExitBudget, vm.ExitStep:
		if ex.Reason == vm.ExitBudget {
			t.checkCPU()
		}
		if stepping && ex.Reason == vm.ExitStep {
			t.utask.StepDone(t.uregs) // sets TIF_UPROBE
		}
		return t.toUser()
	case vm.ExitSyscall:
		return t.stateSyscall(rc)
	case vm.ExitBreakpoint:
		if t.utask != nil && t.utask.BreakpointTrap(t.uregs, ex.PC, ex.Code) {
			return stateExitToUser
		}
		return alive(t.syncSignal(ex, stepping))
	case vm.ExitFault:
		if ex.Fault.Watch != 0 {
			t.debugWatchFault(ex) // a debugger's watchpoint (debug_watch.go)
			return stateApp
		}
		if ex.Fault.OOM {
			// Not the guest's fault: the kernel's out-of-memory
			// path, then the instruction runs again.
			t.outOfMemory()
			return stateApp
		}
		if t.emulateVsyscall(ex) {
			return stateExitToUser
		}
		return alive(t.syncSignal(ex, stepping))
	default:
		return alive(t.syncSignal(ex, stepping))
	}
}

// stateSyscall is the syscall part of stateExit: entry, the handler, and
// what comes after it (the fast way back when nothing is pending, the
// restart of an interrupted call otherwise).
func (t *Task) stateSyscall(rc *runCtx) runState {
	k := t.tg.k
	if a := t.tg.arch; t.cpu.Reg(a.nr) == a.uretprobeNr {
		// sys_uretprobe: only the trampoline may call it (the model
		// checks the caller and raises SIGILL otherwise, as without any
		// XOL area); never restarted.
		if t.utask != nil {
			t.cpu.SetReg(a.ret, t.utask.SysUretprobe(t.uregs))
		} else {
			t.forceSignal(signals.KernelInfo(signals.SIGILL))
		}
		return t.toUser()
	}
	var ds debugSys
	if k.dbg != nil { // catchpoints and process events (debug_events.go)
		ds = t.debugSyscallEntry()
	}
	stop, sc, restartable := t.syscallTraced() // ptrace.go: t.syscall() when untraced
	if k.dbg != nil && !stop {
		t.debugSyscallExit(ds)
	}
	if stop {
		return stateDone
	}
	if t.flags.Load() == 0 && t.savedBlocked == nil {
		if restartable && sc.ret <= -512 && sc.ret >= -516 {
			// A restart code with no signal to deliver: restart.
			t.finishSyscall(&sc, false, signals.SigAction{})
		}
		return stateApp
	}
	if restartable {
		rc.scBuf = sc
		rc.sc = &rc.scBuf
	}
	return stateExitToUser
}
