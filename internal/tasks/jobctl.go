package tasks

import (
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/signals"
)

// Group stop and continue (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU; SIGCONT), as
// Linux's do_signal_stop: every thread of the group parks until SIGCONT
// or SIGKILL; the parent sees the stop through wait4(WUNTRACED) and
// SIGCHLD (CLD_STOPPED / CLD_CONTINUED) unless it set SA_NOCLDSTOP.

// groupStop is a ThreadGroup's stop state (protected by mu).
type groupStop struct {
	mu       sync.Mutex
	stopped  bool
	sig      signals.Signal
	reported bool // the stop was reported to a WUNTRACED waiter
	changed  chan struct{}

	// stoppedFast mirrors stopped (written under mu, read without it by
	// the run loop's isStopped on every exit).
	stoppedFast atomic.Bool
}

func (g *groupStop) wakeup() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.changed
}

func (g *groupStop) notifyLocked() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

func (g *groupStop) isStopped() bool {
	return g.stoppedFast.Load()
}

// stop parks the group (called by the thread that dequeued the stop
// signal).
func (tg *ThreadGroup) stop(sig signals.Signal) {
	g := &tg.jobctl
	g.mu.Lock()
	already := g.stopped
	g.stopped, g.sig, g.reported = true, sig, false
	g.stoppedFast.Store(true)
	g.notifyLocked()
	g.mu.Unlock()
	if already {
		return
	}
	tg.mu.Lock()
	for _, o := range tg.tasks {
		o.cpu.Interrupt()
	}
	tg.mu.Unlock()
	tg.k.event("%d group stop %s", tg.pid, sig)
	tg.notifyParent(signals.CLD_STOPPED, int32(sig))
}

// cont resumes a stopped group (SIGCONT, at send time as in Linux's
// prepare_signal).
func (tg *ThreadGroup) cont() {
	g := &tg.jobctl
	g.mu.Lock()
	was := g.stopped
	g.stopped = false
	g.stoppedFast.Store(false)
	g.notifyLocked()
	g.mu.Unlock()
	if was {
		tg.k.event("%d group continue", tg.pid)
		tg.notifyParent(signals.CLD_CONTINUED, int32(signals.SIGCONT))
	}
}

// notifyParent sends SIGCHLD for a stop or continue, unless the parent's
// SIGCHLD action has SA_NOCLDSTOP, and wakes its waiters.
func (tg *ThreadGroup) notifyParent(code, status int32) {
	k := tg.k
	k.procMu.Lock()
	parent := tg.proc.parent
	if parent != nil {
		close(parent.proc.childEvent)
		parent.proc.childEvent = make(chan struct{})
	}
	k.procMu.Unlock()
	if parent == nil {
		return
	}
	parent.sighand.Siglock.Lock()
	act := parent.sighand.Action(signals.SIGCHLD)
	parent.sighand.Siglock.Unlock()
	if act.Flags&signals.SA_NOCLDSTOP != 0 {
		return
	}
	parent.sendSignal(signals.SigInfo{Signo: int32(signals.SIGCHLD), Code: code, Pid: tg.pid, UID: k.uid(), Status: status}, nil)
}

// waitWhileStopped parks t while its group is stopped.
func (t *Task) waitWhileStopped() {
	g := &t.tg.jobctl
	// Killable, not interruptible: a pending signal stays pending until
	// SIGCONT (Linux's do_signal_stop sleeps in TASK_STOPPED), so a
	// stopped thread neither spins nor holds the deterministic baton.
	t.waitKillable(func() bool { return !g.isStopped() }, g.wakeup, -1)
}
