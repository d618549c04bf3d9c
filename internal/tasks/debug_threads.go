package tasks

import "github.com/uvm-emu/uvm/internal/signals"

// Thread events of the debugger (gdb's QThreadEvents, reported by
// gdbserver from PTRACE_EVENT_CLONE and the thread's exit): while the
// debugger asks for them, a thread cloned by a traced thread stops the
// process at its first gate, before its first instruction (as Linux
// starts a traced clone child stopped), and a traced thread that ends
// with exit(2) while others remain stops it after it left the thread
// list, before it is gone (the last thread's exit is the process's). A
// thread killed (exit_group, a fatal signal, execve) reports nothing.
// Without a debugger the clone and exit paths pay one nil check.

// SetThreadEvents says whether thread creations and exits stop the
// process, from the next resume on.
func (d *Debugger) SetThreadEvents(on bool) { d.threadEvents.Store(on) }

// debugClone marks nt, the new thread of traced t, to report its
// creation (called before nt starts).
func (t *Task) debugClone(nt *Task) {
	d := t.tg.k.dbg
	nt.debugCreated = d.on.Load() && d.threadEvents.Load() && d.traced(t) && !d.replaying()
}

// debugThreadCreated reports t's creation (at its first gate).
func (t *Task) debugThreadCreated() {
	t.debugCreated = false
	d := t.tg.k.dbg
	if !d.on.Load() || !d.threadEvents.Load() || !d.traced(t) {
		return
	}
	d.report(t, DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: -1, Event: DebugEventThreadCreate}, false, true)
}

// debugThreadExit reports the exit of t, a traced thread that is not its
// process's last.
func (t *Task) debugThreadExit() {
	d := t.tg.k.dbg
	if t.killed.Load() || !d.on.Load() || !d.threadEvents.Load() || !d.traced(t) || d.replaying() {
		return
	}
	d.report(t, DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: -1, Event: DebugEventThreadExit,
		Status: ExitStatus{Code: t.exitCode}}, false, true)
}
