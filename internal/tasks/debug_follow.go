package tasks

import (
	"errors"
	"fmt"

	"github.com/uvm-emu/uvm/internal/signals"
)

// Following a fork child (gdb's `set follow-fork-mode child`): while
// the debugger asks for fork (vfork) events, a new process forked
// (vforked) by a traced thread is held before its first instruction, as
// Linux starts a traced fork child stopped, until the debugger says which
// process it keeps: FollowFork makes the child the debugged process (the
// parent then runs on untraced, as after gdb's D;PID of the parent); any
// other resume lets the child run on untraced (detach-on-fork, following
// the parent). Holding a child changes no schedule: it waits only while
// the process is stopped for the fork event.
//
// A vfork parent reports the vfork as soon as its child exists, before it
// waits for the child to release the memory (Linux's PTRACE_EVENT_VFORK
// stop), and vforkdone once the child exec'd or exited
// (PTRACE_EVENT_VFORK_DONE). When the debugger follows a vfork child, gdb
// keeps the parent until the child exec'd or exited and detaches it then
// (infrun's pending_detach): the parent, untraced from FollowFork on,
// does not return from vfork before the debugger lets it go with
// DetachProcess (gdb's D;PID of it), detaches or kills. It waits holding
// the --det baton, as a stopped process does; it reaches that wait only
// once its child exec'd or exited, and gdb detaches it at that event, so
// the wait changes no schedule either. (Without exec events gdb hears of
// no exec: the parent of a child that exec'd goes on at once, so that the
// child runs on to the exit gdb waits for.)

// errFollowed refuses reverse execution in a followed child: a
// re-execution debugs the first process.
var errFollowed = errors.New("reverse execution: this session follows a fork child; its history before the fork cannot be re-executed under the debugger")

// holdChild holds the new process child of traced thread t (called by
// fork before the child's first thread starts).
func (t *Task) holdChild(child *ThreadGroup, flags uint64) {
	d := t.tg.k.dbg
	want := uint32(debugWantFork)
	if flags&cloneVfork != 0 {
		want = debugWantVfork
	}
	if !d.on.Load() || d.events.Load()&want == 0 || !d.traced(t) || d.replaying() {
		return
	}
	d.mu.Lock()
	if d.holds == nil {
		d.holds = map[int32]bool{}
	}
	d.holds[child.pid] = false
	d.mu.Unlock()
}

// waitHold keeps a held fork child from running until the debugger
// followed it or resumed without it.
func (d *Debugger) waitHold(t *Task) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for !t.killed.Load() && d.on.Load() {
		if _, held := d.holds[t.tg.pid]; !held {
			return
		}
		ch := d.resumeCh
		d.mu.Unlock()
		waitResume(t, ch)
		d.mu.Lock()
	}
}

// holdReportedLocked marks the hold of st's fork child as reported: the
// next resume releases it.
func (d *Debugger) holdReportedLocked(st *DebugStop) {
	if _, ok := d.holds[st.ChildPid]; ok && (st.Event == DebugEventFork || st.Event == DebugEventVfork) {
		d.holds[st.ChildPid] = true
	}
}

// releaseHoldsLocked lets the reported fork children run (at a resume).
func (d *Debugger) releaseHoldsLocked() {
	for pid, reported := range d.holds {
		if reported {
			delete(d.holds, pid)
		}
	}
}

// FollowFork makes the held fork child pid the debugged process; the
// previous one runs on untraced from the next resume. Call it only while
// the process is stopped at the child's fork event.
func (d *Debugger) FollowFork(pid int32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if reported, ok := d.holds[pid]; !ok || !reported {
		return fmt.Errorf("process %d is not a fork child stopped for the debugger", pid)
	}
	var child *ThreadGroup
	d.k.mu.Lock()
	for _, g := range d.k.groups {
		if g.pid == pid {
			child = g
		}
	}
	d.k.mu.Unlock()
	if child == nil {
		return fmt.Errorf("fork child %d has gone", pid)
	}
	if old := d.tg.Load(); old != nil {
		old.mu.Lock()
		for _, o := range old.tasks {
			delete(d.stepReport, o.tid)
			delete(d.noReport, o.tid)
			delete(d.acts, o.tid)
		}
		old.mu.Unlock()
	}
	if old := d.tg.Load(); old != nil && child.proc.vforkDone != nil {
		if d.vforkParents == nil {
			d.vforkParents = map[int32]chan struct{}{}
		}
		d.vforkParents[old.pid] = make(chan struct{})
	}
	delete(d.holds, pid)
	d.followed.Store(true)
	d.tg.Store(child)
	return nil
}

// DetachProcess lets process pid, which the debugger holds without
// debugging it, run on: a vfork parent held since the debugger followed
// its child. It reports whether pid was held.
func (d *Debugger) DetachProcess(pid int32) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	ch, ok := d.vforkParents[pid]
	if ok {
		close(ch)
		delete(d.vforkParents, pid)
	}
	return ok
}

// releaseVforkParentsLocked lets every held vfork parent go (Detach).
func (d *Debugger) releaseVforkParentsLocked() {
	for pid, ch := range d.vforkParents {
		close(ch)
		delete(d.vforkParents, pid)
	}
}

// debugVfork is the vfork event of traced t, whose vfork made child (it
// has not run yet): it reports whether the event stopped t.
func (t *Task) debugVfork(child *ThreadGroup) bool {
	d := t.tg.k.dbg
	if !d.on.Load() || d.events.Load()&debugWantVfork == 0 || !d.traced(t) || d.replaying() {
		return false
	}
	d.report(t, DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: -1, Event: DebugEventVfork, ChildPid: child.pid}, false, true)
	return true
}

// debugVforkDone runs when t's vfork child released the memory: a parent
// whose child the debugger follows waits until the debugger lets it go;
// one still traced reports vforkdone (after a reported vfork).
func (t *Task) debugVforkDone(child *ThreadGroup, reported bool) {
	d := t.tg.k.dbg
	child.mu.Lock()
	execd := child.mm != t.tg.mm
	child.mu.Unlock()
	d.mu.Lock()
	ch, held := d.vforkParents[t.tg.pid]
	if held && execd && d.events.Load()&debugWantExec == 0 {
		// gdb, told of no exec, would detach the parent only at the
		// child's exit: the parent goes on now.
		delete(d.vforkParents, t.tg.pid)
		held = false
	}
	d.mu.Unlock()
	if held {
		waitResume(t, ch)
	}
	if reported && d.on.Load() && d.traced(t) && !d.replaying() {
		d.report(t, DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: -1, Event: DebugEventVforkDone, ChildPid: child.pid}, false, true)
	}
}
