package signals

import (
	"errors"
	"sync"
)

// Sighand is the signal-action table a thread group shares (Linux's
// sighand_struct; CLONE_SIGHAND shares it, fork copies it).
//
// Siglock is the lock Linux calls sighand->siglock. It protects Actions
// and, by convention, every Pending of the threads using this Sighand
// (each thread's own queue and the group's shared queue) and every
// thread's blocked mask when another thread reads it. Methods of Sighand
// expect the caller to hold Siglock unless they say otherwise.
type Sighand struct {
	Siglock sync.Mutex

	// Actions holds the action of each signal, indexed by signal number
	// (Actions[0] is unused). Protected by Siglock.
	Actions [NSIG + 1]SigAction
}

// Clone returns a copy of the table for fork (copy_sighand): same actions,
// a fresh lock.
func (sh *Sighand) Clone() *Sighand {
	n := &Sighand{}
	n.Actions = sh.Actions
	return n
}

// ResetForExec resets the actions as execve does (flush_signal_handlers
// with force_default 0): ignored signals stay ignored, every other handler
// becomes SIG_DFL, and flags, restorer and mask are cleared.
func (sh *Sighand) ResetForExec() {
	for i := 1; i <= NSIG; i++ {
		a := &sh.Actions[i]
		if a.Handler != SIG_IGN {
			a.Handler = SIG_DFL
		}
		a.Flags, a.Restorer, a.Mask = 0, 0, 0
	}
}

// ErrInvalidSignal is rt_sigaction's EINVAL: a bad number, or a new action
// for SIGKILL/SIGSTOP.
var ErrInvalidSignal = errors.New("signals: invalid signal (EINVAL)")

// Action returns sig's action (zero for an invalid number).
func (sh *Sighand) Action(sig Signal) SigAction {
	if !sig.Valid() {
		return SigAction{}
	}
	return sh.Actions[sig]
}

// SetAction is rt_sigaction's core (do_sigaction). It returns the old
// action (with sa_flags masked to UAPI_SA_FLAGS as Linux reports it); when
// act is non-nil it installs *act with unknown flag bits cleared and
// SIGKILL/SIGSTOP removed from its mask. If the new action ignores the
// signal (SIG_IGN, or SIG_DFL for a default-ignored signal), every
// pending instance is discarded from the queues passed in queues (the
// group's shared queue and every thread's own queue), as POSIX requires.
func (sh *Sighand) SetAction(sig Signal, act *SigAction, queues ...*Pending) (SigAction, error) {
	if !sig.Valid() || (act != nil && !sig.Catchable()) {
		return SigAction{}, ErrInvalidSignal
	}
	old := sh.Actions[sig]
	old.Flags &= UAPI_SA_FLAGS
	if act != nil {
		a := *act
		a.Flags &= UAPI_SA_FLAGS
		a.Mask &^= UnblockableMask
		sh.Actions[sig] = a
		if a.Ignores(sig) {
			for _, q := range queues {
				if q != nil {
					q.Remove(sig.Mask())
				}
			}
		}
	}
	return old, nil
}

// Fatal is Linux's sig_fatal: the action is SIG_DFL and the default
// neither ignores nor stops, so delivering sig ends the thread group.
// complete_signal uses it to kill the whole group at send time when some
// thread does not block the signal.
func (sh *Sighand) Fatal(sig Signal) bool {
	m := sig.Mask()
	return m&(IgnoreMask|StopMask) == 0 && sh.Action(sig).Handler == SIG_DFL
}

// SendResult says what Send did.
type SendResult int

// Send results.
const (
	SendQueued    SendResult = iota // pending now (or coalesced with a pending one)
	SendIgnored                     // discarded: the action ignores it and it is not blocked
	SendQueueFull                   // real-time signal over the queue limit: EAGAIN
)

// Send is Linux's __send_signal_locked minus the choice of the thread to
// wake: it makes info pending on target (a thread's own queue, or the
// group's shared queue for process-directed signals) unless the signal is
// ignored. blocked is the blocked mask of the target thread (for a shared
// queue, the thread the sender named, as in Linux); blocked signals are
// never ignored, since the handler may change before they are unblocked.
//
// prepare_signal's job-control side is applied to all (the shared queue
// and every thread's own queue; may be nil): a stop signal discards
// pending SIGCONT, and SIGCONT discards pending stop signals (resuming a
// stopped group is the caller's). After SendQueued the caller picks a
// thread that does not block the signal, sets its TIF_SIGPENDING and
// wakes it (complete_signal); if Fatal(sig) it may end the group at once.
func (sh *Sighand) Send(info SigInfo, target *Pending, blocked SigSet, all []*Pending) SendResult {
	sig := Signal(info.Signo)
	switch {
	case sig.Mask()&StopMask != 0:
		for _, q := range all {
			if q != nil {
				q.Remove(SIGCONT.Mask())
			}
		}
	case sig == SIGCONT:
		for _, q := range all {
			if q != nil {
				q.Remove(StopMask)
			}
		}
	}
	if !blocked.Has(sig) && sh.Action(sig).Ignores(sig) {
		return SendIgnored
	}
	if target.Add(info) == QueueFull {
		return SendQueueFull
	}
	return SendQueued
}

// Force is Linux's force_sig_info for a synchronous signal the thread
// caused (fault, undefined instruction, breakpoint, divide error, bad
// sigreturn): if the signal is blocked or ignored, or resetHandler is set
// (force_sig_fault_to_task with HANDLER_SIG_DFL, e.g. force_sigsegv), its
// action becomes SIG_DFL and it is unblocked in *blocked; then it is
// queued on the thread's own queue. The caller sets TIF_SIGPENDING.
func (sh *Sighand) Force(info SigInfo, own *Pending, blocked *SigSet, resetHandler bool) {
	sig := Signal(info.Signo)
	if !sig.Valid() {
		return
	}
	a := &sh.Actions[sig]
	isBlocked := blocked.Has(sig)
	if isBlocked || a.Handler == SIG_IGN || resetHandler {
		a.Handler = SIG_DFL
		if isBlocked {
			*blocked = blocked.Del(sig)
		}
	}
	own.Add(info)
}

// ForceSigsegv is what Linux does when a handler's frame cannot be set up
// (force_sigsegv): a SIGSEGV (SI_KERNEL); if the failed signal was itself
// SIGSEGV, its handler is reset to SIG_DFL so the thread group dies
// instead of looping.
func (sh *Sighand) ForceSigsegv(failed Signal, own *Pending, blocked *SigSet) {
	sh.Force(KernelInfo(SIGSEGV), own, blocked, failed == SIGSEGV)
}

// Disposition is what get_signal decided for a dequeued signal.
type Disposition int

// Dispositions.
const (
	DispNone      Disposition = iota // nothing deliverable
	DispHandler                      // run the guest handler (act holds the action)
	DispTerminate                    // default action: end the thread group with the signal
	DispCore                         // default action: end the thread group, dumping core
	DispStop                         // default action: stop the group (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU)
)

func (d Disposition) String() string {
	switch d {
	case DispNone:
		return "none"
	case DispHandler:
		return "handler"
	case DispTerminate:
		return "terminate"
	case DispCore:
		return "core"
	case DispStop:
		return "stop"
	}
	return "?"
}

// GetSignal is the dequeue loop of Linux's get_signal: it dequeues signals
// in Linux's order (see Dequeue) and skips ignored ones until one needs
// action. For a handler it returns the action as it was (ksig->ka) and,
// for SA_RESETHAND, resets the installed handler to SIG_DFL. For SIGTSTP,
// SIGTTIN and SIGTTOU Linux ignores the stop when the process group is
// orphaned; uvm has no job control, so the caller decides what DispStop
// does. The caller holds Siglock.
func (sh *Sighand) GetSignal(own, shared *Pending, blocked SigSet) (info SigInfo, act SigAction, d Disposition) {
	for {
		var ok bool
		info, ok = Dequeue(own, shared, blocked)
		if !ok {
			return SigInfo{}, SigAction{}, DispNone
		}
		if act, d = sh.Dispose(Signal(info.Signo)); d != DispNone {
			return info, act, d
		}
	}
}

// Dispose is what get_signal does with a dequeued sig: run its handler
// (an SA_RESETHAND action is reset here), ignore it (DispNone), or its
// default stop, core dump or termination. A ptraced thread's signal is
// disposed of after the tracer has seen it (and maybe replaced it).
func (sh *Sighand) Dispose(sig Signal) (act SigAction, d Disposition) {
	a := &sh.Actions[sig]
	if a.Handler == SIG_IGN {
		return SigAction{}, DispNone
	}
	if a.Handler != SIG_DFL {
		act = *a
		if a.Flags&SA_RESETHAND != 0 {
			a.Handler = SIG_DFL
		}
		return act, DispHandler
	}
	m := sig.Mask()
	switch {
	case m&IgnoreMask != 0:
		return SigAction{}, DispNone
	case m&StopMask != 0:
		return *a, DispStop
	case m&CoredumpMask != 0:
		return *a, DispCore
	}
	return *a, DispTerminate
}

// BlockedForHandler is the blocked mask while a handler for sig runs
// (Linux's signal_delivered): the current mask plus the action's mask plus
// sig itself unless SA_NODEFER; SIGKILL and SIGSTOP are never blocked.
// After a successful frame setup the caller also calls StackT.Disarm.
func BlockedForHandler(blocked SigSet, sig Signal, act SigAction) SigSet {
	b := blocked | act.Mask
	if act.Flags&SA_NODEFER == 0 {
		b = b.Add(sig)
	}
	return b &^ UnblockableMask
}

// Kernel-internal syscall return values that ask for a restart
// (include/linux/errno.h); a syscall returns their negation.
const (
	ERESTARTSYS           = 512
	ERESTARTNOINTR        = 513
	ERESTARTNOHAND        = 514
	ERESTART_RESTARTBLOCK = 516
	EINTR                 = 4
)

// Restart says what happens to a syscall that a signal interrupted.
type Restart int

// Restart decisions.
const (
	RestartNone         Restart = iota // not a restart code: keep the return value
	RestartEINTR                       // return -EINTR to the guest
	RestartSyscall                     // re-execute the syscall: restore its first argument register (x0 / rax = number) and back the pc up over the SVC/SYSCALL (4 / 2 bytes)
	RestartRestartBlock                // re-execute as restart_syscall (arm64 x8 / x86 rax = __NR_restart_syscall)
)

// SyscallRestart is the restart logic of arm64's do_signal and x86's
// handle_signal/arch_do_signal_or_restart. ret is the syscall's return
// value; handler is whether a guest handler is about to run (act is its
// action). Without a handler every restart code restarts
// (ERESTART_RESTARTBLOCK via restart_syscall); with one, ERESTARTNOHAND and
// ERESTART_RESTARTBLOCK, and ERESTARTSYS without SA_RESTART, become EINTR,
// and ERESTARTNOINTR always restarts.
func SyscallRestart(ret int64, handler bool, act SigAction) Restart {
	switch ret {
	case -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK:
	default:
		return RestartNone
	}
	if !handler {
		if ret == -ERESTART_RESTARTBLOCK {
			return RestartRestartBlock
		}
		return RestartSyscall
	}
	switch ret {
	case -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK:
		return RestartEINTR
	case -ERESTARTSYS:
		if act.Flags&SA_RESTART == 0 {
			return RestartEINTR
		}
	}
	return RestartSyscall
}
