package tasks

import (
	"sync/atomic"

	"github.com/uvm-emu/uvm/signals"
)

// Syscall catchpoints of the debugger (gdb's `catch syscall`, the remote
// protocol's QCatchSyscalls): a traced thread stops at the entry of a
// caught syscall, before the kernel looks at its arguments, and at its
// return, with the result in the return register, as under
// PTRACE_O_TRACESYSGOOD (Linux's syscall-enter and syscall-exit stops).
// Without catchpoints the run loop pays one nil check per syscall.

// syscallCatch is an immutable set of caught syscalls.
type syscallCatch struct {
	all bool
	nrs map[uint64]bool
}

// catching is Debugger.catchSys's type (nil: no syscall is caught).
type catching = atomic.Pointer[syscallCatch]

// CatchSyscalls sets the caught syscalls: none (on false), all (nrs
// nil) or the listed numbers (the guest architecture's).
func (d *Debugger) CatchSyscalls(on bool, nrs []uint64) {
	if !on {
		d.catchSys.Store(nil)
		return
	}
	c := &syscallCatch{all: nrs == nil, nrs: map[uint64]bool{}}
	for _, nr := range nrs {
		c.nrs[nr] = true
	}
	d.catchSys.Store(c)
}

// DebugStop.Syscall values.
const (
	DebugSyscallEntry  = 1
	DebugSyscallReturn = 2
)

// debugSyscall reports a syscall entry (entry) or return of t, if the
// debugger catches syscall nr.
func (t *Task) debugSyscall(entry bool, nr uint64) {
	d := t.tg.k.dbg
	c := d.catchSys.Load()
	if c == nil || !d.on.Load() || !(c.all || c.nrs[nr]) || !d.traced(t) {
		return
	}
	st := DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: -1, Syscall: DebugSyscallReturn, SyscallNr: nr}
	if entry {
		st.Syscall = DebugSyscallEntry
	}
	d.report(t, st, false, true)
}
