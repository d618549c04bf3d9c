package tasks

import (
	"errors"
	"fmt"
)

// Following a fork child (gdb's `set follow-fork-mode child`): while
// the debugger asks for fork events, a new process forked by a traced
// thread is held before its first instruction, as Linux starts a traced
// fork child stopped, until the debugger says which process it keeps:
// FollowFork makes the child the debugged process (the parent then runs
// on untraced, as after gdb's D;PID of the parent); any other resume
// lets the child run on untraced (detach-on-fork, following the
// parent). A vfork child is not held: uvm's vfork parent reports only
// once its child released the memory, so a vfork child cannot be
// followed. Holding a child changes no schedule: it waits only while
// the process is stopped for the fork event.

// errFollowed refuses reverse execution in a followed child: a
// re-execution debugs the first process.
var errFollowed = errors.New("reverse execution: this session follows a fork child; its history before the fork cannot be re-executed under the debugger")

// holdChild holds the new process child of traced thread t (called by
// fork before the child's first thread starts).
func (t *Task) holdChild(child *ThreadGroup, flags uint64) {
	d := t.tg.k.dbg
	if flags&cloneVfork != 0 || !d.on.Load() || d.events.Load()&debugWantFork == 0 || !d.traced(t) || d.replaying() {
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
	if _, ok := d.holds[st.ChildPid]; ok && st.Event == DebugEventFork {
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
	delete(d.holds, pid)
	d.followed.Store(true)
	d.tg.Store(child)
	return nil
}
