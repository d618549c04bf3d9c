// Package gdbstub is a GDB remote serial protocol stub: it speaks the
// protocol gdb (and lldb's gdb-remote) uses for `target remote`, over any
// byte stream, and drives a Target — a stopped-or-running set of threads
// with registers and memory — through a small interface. Package tasks
// implements the kernel side (stopping every guest thread, breakpoints
// checked by the run loop, watchpoints in the memory slow path) and
// cmd/uvm joins the two (`uvm run -g PORT`).
//
// The stub is all-stop: a stop of one thread stops every thread, and a
// resume applies one action (continue, step, with or without a signal)
// to each thread. It speaks no-ack mode, qSupported with PacketSize, the
// target description (qXfer:features:read) of aarch64 and i386:x86-64,
// qXfer:threads/auxv/exec-file, g/G/p/P, m/M/X, vCont, Z0-Z4, vKill, D
// and k; with optional Target interfaces, QCatchSyscalls (SyscallCatcher)
// and the multiprocess extensions with fork, vfork and exec events
// (EventReporter), QThreadEvents (ThreadEventReporter). Input is hostile: every length is checked against the packet
// limit before anything is allocated, malformed packets get an error
// reply, and the stub never panics on what a client sends.
package gdbstub

import "errors"

// Thread is one thread of the target, by the id gdb sees (the Linux tid).
type Thread struct {
	ID   int
	Name string
}

// ResumeAction is what one thread does when the target resumes.
type ResumeAction struct {
	// Thread is the thread id; 0 means every thread without an action
	// of its own.
	Thread int
	// Step: execute one instruction, then stop (report SIGTRAP).
	Step bool
	// Signal, when not 0, is delivered (Linux number) as the thread
	// resumes, as PTRACE_CONT with a signal does.
	Signal int
}

// StopKind says how the target stopped.
type StopKind uint8

const (
	// StopSignal: a thread stopped with a signal (SIGTRAP for
	// breakpoints, steps, watchpoints and interrupts by the debugger).
	StopSignal StopKind = iota
	// StopExited: the process exited with Code.
	StopExited
	// StopTerminated: the process was killed by Signal.
	StopTerminated
	// StopThreadExited: Thread exited with Code while other threads
	// remain (QThreadEvents; the process is stopped).
	StopThreadExited
)

// BreakKind is a Z/z packet's type.
type BreakKind uint8

const (
	BreakSoftware   BreakKind = 0 // Z0
	BreakHardware   BreakKind = 1 // Z1
	WatchWrite      BreakKind = 2 // Z2
	WatchRead       BreakKind = 3 // Z3
	WatchAccess     BreakKind = 4 // Z4
	breakKindsCount           = 5
)

// Stop is one stop event.
type Stop struct {
	Kind   StopKind
	Thread int
	// Signal is a Linux signal number (StopSignal, StopTerminated).
	Signal int
	// Code is the exit status (StopExited).
	Code int
	// Break says why a SIGTRAP stop happened: BreakSoftware or
	// BreakHardware for a breakpoint hit, Watch* for a watchpoint
	// (WatchAddr is then the data address); -1 for anything else.
	Break     int
	WatchAddr uint64
	// Event, when not EventNone, says what the SIGTRAP stop reports
	// instead of a breakpoint (Syscall: the syscall's number).
	Event   StopEvent
	Syscall uint64
	// ChildPid and ChildTid are the new process of EventFork/EventVfork;
	// ExecPath is the program of EventExec (a host path gdb can open).
	ChildPid, ChildTid int
	ExecPath           string
	// HistoryBegin: a reverse execution found no earlier point and
	// stopped at the start of the history (replaylog:begin).
	HistoryBegin bool
	// Err, when not empty, is the failure of a reverse command that
	// failed after it started (it answers E.text; the process is where
	// it was).
	Err string
}

// StopEvent is an event a SIGTRAP stop reports (gdb's catchpoints).
type StopEvent uint8

const (
	EventNone          StopEvent = iota
	EventSyscallEntry            // syscall_entry:NR (QCatchSyscalls)
	EventSyscallReturn           // syscall_return:NR
	EventFork                    // fork:pPID.TID (fork-events)
	EventVfork                   // vfork:pPID.TID (vfork-events)
	EventVforkDone               // vforkdone: the vfork child released the parent's memory
	EventExec                    // exec:HEXPATH (exec-events)
	EventThreadCreated           // create: Thread is new and has not run (QThreadEvents)
)

// Events are the process events a client asks for in qSupported.
type Events struct {
	Fork, Vfork, Exec bool
}

// EventReporter is a Target that reports process events (optional: the
// stub offers multiprocess+, fork-events+, vfork-events+ and
// exec-events+ only to a Target that implements it). Fork and vfork
// children are not debugged: gdb detaches them (D;PID) and they run on,
// unless the Target is a ForkFollower and gdb follows the child.
type EventReporter interface {
	// SetEvents says which events to report from the next resume on.
	SetEvents(ev Events)
}

// ForkFollower is an EventReporter that can debug a fork or vfork child
// instead of its parent (gdb's follow-fork-mode child): gdb detaches the
// parent with D;PID at the child's fork event, or names the child (Hg,
// vCont) at its vfork event, and the stub then calls FollowFork; from
// then on the target is the child (Pid, Threads, …).
type ForkFollower interface {
	// FollowFork makes the fork child pid the target; the parent runs
	// on undebugged from the next resume, except a vfork parent, which
	// waits for DetachProcess (or Detach, Kill) after its child
	// released the memory, as gdb keeps it until then.
	FollowFork(pid int) error
	// DetachProcess lets a process the target holds without debugging
	// it (a vfork parent) run on: the D;PID of a process other than the
	// target's.
	DetachProcess(pid int)
}

// ThreadEventReporter is a Target that can stop when a thread is
// created or exits (optional: the stub offers QThreadEvents only to a
// Target that implements it).
type ThreadEventReporter interface {
	// SetThreadEvents says whether thread creations (EventThreadCreated)
	// and exits (StopThreadExited) stop the target from the next resume
	// on. Called while the target is stopped.
	SetThreadEvents(on bool)
}

// SyscallCatcher is a Target that can stop at syscalls (optional: the
// stub offers QCatchSyscalls only to a Target that implements it).
type SyscallCatcher interface {
	// CatchSyscalls sets which syscalls stop a thread at their entry and
	// return: none (on false), every one (nrs nil) or the listed numbers
	// (the architecture's). Called while the target is stopped.
	CatchSyscalls(on bool, nrs []uint64) error
}

// ErrUnsupported is what a Target returns for a request it does not
// implement (the stub answers with an empty packet, gdb's "not supported").
var ErrUnsupported = errors.New("gdbstub: not supported")

// Target is what the stub debugs. Every method except Interrupt is called
// only while the target is stopped (between a Stop and the next Resume),
// from the stub's goroutine.
type Target interface {
	// Arch describes the registers (Arch64 or AMD64).
	Arch() *Arch
	// Pid is the process id.
	Pid() int
	// Threads lists the live threads in id order.
	Threads() []Thread
	// ReadRegisters fills buf (Arch().Size() bytes) with every register
	// of the thread, in the description's order, little-endian.
	ReadRegisters(tid int, buf []byte) error
	// WriteRegisters sets every register from buf (same layout).
	WriteRegisters(tid int, buf []byte) error
	// ReadMemory reads guest memory at addr; a short count with an error
	// means the rest is not readable.
	ReadMemory(addr uint64, buf []byte) (int, error)
	// WriteMemory writes guest memory (as ptrace POKEDATA: permissions
	// are ignored, code stays coherent).
	WriteMemory(addr uint64, data []byte) error
	// SetBreakpoint inserts (insert) or removes a breakpoint or
	// watchpoint; ErrUnsupported for a kind it does not implement.
	SetBreakpoint(kind BreakKind, addr, length uint64, insert bool) error
	// Resume starts the threads with their actions and returns the
	// channel that receives the next stop (exactly one value).
	Resume(actions []ResumeAction) <-chan Stop
	// Interrupt asks a resumed target to stop (^C) soon; the stop comes
	// through Resume's channel with SIGINT. Safe from any goroutine.
	Interrupt()
	// Kill ends the process (SIGKILL).
	Kill()
	// Detach removes every breakpoint and lets the process run on.
	Detach()
	// Auxv is the process's auxiliary vector as bytes (qXfer:auxv).
	Auxv() ([]byte, error)
	// ExecFile is the host path of the program (qXfer:exec-file).
	ExecFile() (string, error)
}

// Linux signal numbers ↔ gdb's (include/gdb/signals.def, the remote
// protocol's numbering). They agree only below 7.

var linuxToGDB = [65]byte{
	1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 10, 8: 8, 9: 9, 10: 30, 11: 11, 12: 31, 13: 13, 14: 14, 15: 15,
	16: 143, // SIGSTKFLT: gdb has none (GDB_SIGNAL_UNKNOWN)
	17: 20, 18: 19, 19: 17, 20: 18, 21: 21, 22: 22, 23: 16, 24: 24, 25: 25, 26: 26, 27: 27, 28: 28,
	29: 23, 30: 32, 31: 12,
	32: 77, // SIGRTMIN of the kernel: GDB_SIGNAL_REALTIME_32
	64: 78, // GDB_SIGNAL_REALTIME_64
}

func init() {
	for s := 33; s <= 63; s++ {
		linuxToGDB[s] = byte(45 + s - 33) // GDB_SIGNAL_REALTIME_33 = 45 …
	}
}

// GDBSignal converts a Linux signal number to gdb's (143, "unknown", for
// numbers Linux does not have).
func GDBSignal(linux int) int {
	if linux == 0 {
		return 0
	}
	if linux < 0 || linux >= len(linuxToGDB) {
		return 143
	}
	return int(linuxToGDB[linux])
}

// LinuxSignal converts gdb's signal number to Linux's; ok is false for a
// signal Linux does not have.
func LinuxSignal(gdb int) (int, bool) {
	if gdb == 0 {
		return 0, true
	}
	for l, g := range linuxToGDB {
		if l != 0 && int(g) == gdb && g != 143 {
			return l, true
		}
	}
	return 0, false
}
