package tasks

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Syscall catchpoints of the debugger (gdb's `catch syscall`, the remote
// protocol's QCatchSyscalls): a traced thread stops at the entry of a
// caught syscall, before the kernel looks at its arguments, and at its
// return, with the result in the return register, as under
// PTRACE_O_TRACESYSGOOD (Linux's syscall-enter and syscall-exit stops).
// Without a debugger the run loop pays one nil check per syscall.
//
// Process events (gdb's fork-events, vfork-events, exec-events): a
// traced thread whose fork, vfork or clone made a new process, or whose
// execve replaced its program, stops as it returns from the syscall
// (before a syscall-return catchpoint, as PTRACE_EVENT_FORK/EXEC stops
// come before the syscall-exit stop). The child is not traced: it runs
// on, as after gdb's default detach-on-fork, unless the debugger follows
// it (debug_follow.go). A vfork parent reports the vfork inside the
// syscall, before it waits for the child, and vforkdone once the child
// released the memory (debug_follow.go); gdb's breakpoints never change
// memory here, so the child, which shares it, never sees them.

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

// DebugStop.Event values: process events.
const (
	DebugEventFork = 1 + iota
	DebugEventVfork
	DebugEventVforkDone
	DebugEventExec
	// DebugEventThreadCreate: thread Tid was created and has not run yet;
	// DebugEventThreadExit: thread Tid exited with Status.Code
	// (debug_threads.go).
	DebugEventThreadCreate
	DebugEventThreadExit
)

// Event bits of Debugger.events.
const (
	debugWantFork = 1 << iota
	debugWantVfork
	debugWantExec
)

// SetEvents says which process events stop the process.
func (d *Debugger) SetEvents(fork, vfork, exec bool) {
	var v uint32
	if fork {
		v |= debugWantFork
	}
	if vfork {
		v |= debugWantVfork
	}
	if exec {
		v |= debugWantExec
	}
	d.events.Store(v)
}

// debugSys is what the syscall hooks keep from a syscall's entry to its
// return.
type debugSys struct {
	traced bool
	nr     uint64
	flags  uint64 // clone flags of the clone family
	mm     *vm.MM // the address space before (execve replaces it)
}

// debugSyscallEntry is the syscall-entry hook of a debugged kernel.
func (t *Task) debugSyscallEntry() debugSys {
	d := t.tg.k.dbg
	if !d.on.Load() || !d.traced(t) || d.replaying() {
		return debugSys{}
	}
	a := t.tg.arch
	ds := debugSys{traced: true, nr: t.cpu.Reg(a.nr), mm: t.tg.mm}
	switch a.entry(ds.nr).no {
	case sysClone:
		ds.flags = t.arg(0)
	case sysClone3:
		var b [8]byte // struct clone_args starts with flags
		if t.tg.mm.ReadAt(b[:], t.arg(0)) == nil {
			ds.flags = binary.LittleEndian.Uint64(b[:])
		}
	case sysVfork:
		ds.flags = cloneVM | cloneVfork
	}
	t.debugSyscall(true, ds.nr)
	return ds
}

// debugSyscallExit is the syscall-return hook: process events, then
// the return catchpoint.
func (t *Task) debugSyscallExit(ds debugSys) {
	d := t.tg.k.dbg
	if !ds.traced || !d.on.Load() {
		return
	}
	a := t.tg.arch
	want := d.events.Load()
	trap := DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: -1}
	switch a.entry(ds.nr).no {
	case sysClone, sysClone3, sysFork, sysVfork:
		child := int64(t.cpu.Reg(a.ret))
		if child <= 0 || child > 1<<31-1 || ds.flags&cloneThread != 0 {
			break
		}
		st := trap
		st.ChildPid = int32(child)
		if ds.flags&cloneVfork == 0 && want&debugWantFork != 0 { // vfork: debug_follow.go
			st.Event = DebugEventFork
			d.report(t, st, false, true)
		}
	case sysExecve, sysExecveat:
		if t.tg.mm != ds.mm && want&debugWantExec != 0 {
			st := trap
			st.Event, st.ExecPath = DebugEventExec, t.tg.mm.ExePath
			d.report(t, st, false, true)
		}
	}
	t.debugSyscall(false, ds.nr)
}

// debugSyscall reports a syscall entry (entry) or return of traced t, if
// the debugger catches syscall nr.
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
