package tasks

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The kernel side of a debugger session (`uvm run -g`, package gdbstub):
// gdb's all-stop model over what Linux's ptrace gives gdbserver.
//
//   - The debugged process is the first one started (Kernel.Start). Its
//     threads are "traced"; every other task only takes part in stops.
//   - A stop freezes every guest thread: each task checks the debugger's
//     gate before it executes guest instructions (debugRun, called by the
//     run loop only while a debugger is attached: without one the loop
//     pays one nil check per slice). In --det the baton holder parks
//     holding the baton, so no other thread runs and the virtual clock
//     stands still. In the parallel scheduler a stop interrupts every
//     CPU; a thread blocked in a syscall counts as stopped and parks
//     before it returns to the guest.
//   - Breakpoints never change guest memory: while any exists (or a
//     thread single-steps), traced threads execute one instruction at a
//     time (CPU.Step) and compare the pc with the breakpoint set before
//     each one, so they coexist with uprobes' BRK/INT3 patches and with
//     self-modifying code. Slices keep their lengths (arm64 slices end at
//     the block boundary at or after the budget, as CPU.Run's do), so a
//     --det run with breakpoints follows the same schedule as one without.
//   - Signals are reported before delivery (Linux's ptrace_signal): the
//     thread stops in get_signal, and the debugger's resume says whether
//     the signal is delivered, discarded or replaced.
//
// Lock order: Debugger.mu is taken before ThreadGroup.mu (to interrupt
// the CPUs) and before nothing else; tasks never hold other locks when
// they take it.

// DebugStop is one stop of the debugged process.
type DebugStop struct {
	Tid int32
	// Signal is the Linux signal the thread stopped with: SIGTRAP for
	// breakpoints, steps and watchpoints; SIGINT for Interrupt.
	Signal int
	// Break is 0 for a breakpoint hit, 2/3/4 for a write/read/access
	// watchpoint (WatchAddr: the data address), -1 otherwise.
	Break     int
	WatchAddr uint64
	// Syscall is DebugSyscallEntry or DebugSyscallReturn for a caught
	// syscall (debug_events.go), SyscallNr its number; 0 otherwise.
	Syscall   int
	SyscallNr uint64
	// Event is a process event (DebugEventFork…, debug_events.go): the
	// new process ChildPid, or the new program ExecPath (a host path).
	Event    int
	ChildPid int32
	ExecPath string
	// Exited: the process has ended with Status.
	Exited bool
	Status ExitStatus
}

// DebugAction is what a thread does at the next resume.
type DebugAction struct {
	Tid    int32 // 0: every thread without an action of its own
	Step   bool
	Signal int // delivered as the thread resumes (0: none)
}

// DebugThread is one thread of the debugged process.
type DebugThread struct {
	Tid  int32
	Name string
	// CPU is the thread's register state; it may be read and written
	// while the process is stopped.
	CPU vm.CPU
}

// Debugger is a debugger's hold on the first process of a Kernel.
type Debugger struct {
	k  *Kernel
	tg atomic.Pointer[ThreadGroup] // the debugged process, set at its first gate
	// on is false after Detach: tasks run as without a debugger.
	on atomic.Bool
	// stopFlag mirrors stopping for the per-instruction check.
	stopFlag atomic.Bool
	// slow: breakpoints exist or a traced thread single-steps, so traced
	// threads execute one instruction at a time.
	slow atomic.Bool
	// gen counts resumes: a task that parked re-reads its action.
	gen atomic.Uint64
	// breaks is the breakpoint set, replaced (never changed) under mu.
	breaks atomic.Pointer[map[uint64]struct{}]

	mu sync.Mutex
	// stopping: a stop is requested or in effect (protected by mu).
	stopping bool
	// resumeCh is closed at the next resume (protected by mu).
	resumeCh chan struct{}
	// pending is the stop to report; the first one wins (protected by mu).
	pending *DebugStop
	// out receives the current resume's stop (nil once sent).
	out chan DebugStop
	// inUser counts tasks between enter and leave: possibly executing
	// guest instructions. A stop is reported when it is 0.
	inUser int
	// acts are the actions of the current resume by tid, def the rest.
	acts map[int32]DebugAction
	def  DebugAction
	// stepReport: a thread's step ended in a syscall; the stop is
	// reported when the syscall returns.
	stepReport map[int32]bool
	// noReport: a signal the debugger injected, not reported again.
	noReport map[int32]int
	nbreak   map[uint64]int // insertion counts behind breaks

	// watch is the watchpoint set (debug_watch.go), nil without one;
	// replaced under mu, installed in each traced thread's TLB by the
	// thread. wstate is its list (protected by mu).
	watch  atomic.Pointer[vm.WatchSet]
	wstate watchState
	// catchSys: the caught syscalls (debug_events.go), nil for none;
	// events: the process events reported (debugWant* bits).
	catchSys catching
	events   atomic.Uint32
	// rev is the reverse-execution state (debug_reverse.go).
	rev reverseState
	// holds are the fork children held before their first instruction
	// (debug_follow.go), true once their fork was reported (protected
	// by mu).
	holds map[int32]bool
	// vforkParents are the vfork parents of a followed vfork child, held
	// until their channel closes (debug_follow.go; protected by mu).
	vforkParents map[int32]chan struct{}
	// followed: the session follows a fork child (no reverse execution).
	followed atomic.Bool
	// threadEvents: thread creations and exits stop the process
	// (debug_threads.go).
	threadEvents atomic.Bool
}

// NewDebugger attaches a debugger to the first process k starts. With
// stopAtStart its first thread stops before its first instruction; the
// stop is what Stopped returns.
func (k *Kernel) NewDebugger(stopAtStart bool) *Debugger {
	d := &Debugger{k: k, resumeCh: make(chan struct{}), acts: map[int32]DebugAction{},
		stepReport: map[int32]bool{}, noReport: map[int32]int{}, nbreak: map[uint64]int{}}
	d.breaks.Store(&map[uint64]struct{}{})
	d.on.Store(true)
	if stopAtStart {
		d.stopping = true
		d.stopFlag.Store(true)
		d.pending = &DebugStop{Signal: int(signals.SIGTRAP), Break: -1}
	}
	k.dbg = d
	return d
}

// Attach names the debugged process (the one Kernel.Start returned).
func (d *Debugger) Attach(tg *ThreadGroup) { d.tg.CompareAndSwap(nil, tg) }

// traced reports whether t belongs to the debugged process (claiming the
// first process that asks).
func (d *Debugger) traced(t *Task) bool {
	tg := d.tg.Load()
	if tg == nil {
		d.tg.CompareAndSwap(nil, t.tg)
		tg = d.tg.Load()
	}
	return tg == t.tg
}

// Stopped requests a stop with SIGTRAP (unless one is already pending)
// and returns the channel that reports it: the session's first stop.
func (d *Debugger) Stopped() <-chan DebugStop {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(chan DebugStop, 1)
	d.out = out
	if d.pending == nil && !d.stopping {
		d.pending = &DebugStop{Signal: int(signals.SIGTRAP), Break: -1}
	}
	d.requestStopLocked()
	d.deliverLocked()
	return d.watchExit(out)
}

// Interrupt asks the running process to stop (gdb's ^C): the stop is
// reported with SIGINT on the current resume's channel.
func (d *Debugger) Interrupt() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending == nil && !d.stopping {
		d.pending = &DebugStop{Signal: int(signals.SIGINT), Break: -1}
	}
	d.requestStopLocked()
	d.deliverLocked()
}

// requestStopLocked makes every task park at its next gate.
func (d *Debugger) requestStopLocked() {
	if d.stopping {
		return
	}
	d.stopping = true
	d.stopFlag.Store(true)
	d.k.mu.Lock()
	groups := append([]*ThreadGroup(nil), d.k.groups...)
	d.k.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		for _, o := range g.tasks {
			o.cpu.Interrupt()
		}
		g.mu.Unlock()
	}
}

// deliverLocked sends the pending stop once no task executes guest code.
func (d *Debugger) deliverLocked() {
	if !d.stopping || d.pending == nil || d.inUser > 0 || d.out == nil {
		return
	}
	st := *d.pending
	if st.Tid == 0 {
		if ths := d.threadsLocked(); len(ths) > 0 {
			st.Tid = ths[0].Tid
		}
	}
	d.pending = nil
	d.holdReportedLocked(&st)
	d.out <- st
	d.out = nil
}

// watchExit forwards out, or the process's exit if it ends first.
func (d *Debugger) watchExit(out chan DebugStop) <-chan DebugStop {
	tg := d.tg.Load()
	if tg == nil {
		return out
	}
	res := make(chan DebugStop, 1)
	go func() {
		select {
		case st := <-out:
			res <- st
		case <-tg.Done():
			select {
			case st := <-out:
				res <- st
			default:
				res <- DebugStop{Tid: tg.pid, Exited: true, Status: tg.Wait()}
			}
		}
	}()
	return res
}

// Resume starts the process with the actions and returns the channel of
// its next stop (or exit).
func (d *Debugger) Resume(acts []DebugAction) <-chan DebugStop {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.acts = map[int32]DebugAction{}
	d.def = DebugAction{}
	stepping := false
	for _, a := range acts {
		if a.Tid == 0 {
			d.def = a
		} else {
			d.acts[a.Tid] = a
		}
		stepping = stepping || a.Step
	}
	clear(d.stepReport)
	d.releaseHoldsLocked()
	d.slow.Store(stepping || len(d.nbreak) > 0 || len(d.wstate.points) > 0)
	out := make(chan DebugStop, 1)
	d.out = out
	d.pending = nil
	d.resumeLocked()
	return d.watchExit(out)
}

func (d *Debugger) resumeLocked() {
	d.gen.Add(1)
	d.stopping = false
	d.stopFlag.Store(false)
	close(d.resumeCh)
	d.resumeCh = make(chan struct{})
}

// Detach removes the breakpoints and lets every thread run on as
// without a debugger.
func (d *Debugger) Detach() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nbreak = map[uint64]int{}
	d.breaks.Store(&map[uint64]struct{}{})
	d.dropWatchpointsLocked()
	d.catchSys.Store(nil)
	d.events.Store(0)
	d.threadEvents.Store(false)
	d.slow.Store(false)
	d.on.Store(false)
	d.acts, d.def = map[int32]DebugAction{}, DebugAction{}
	clear(d.holds)
	d.releaseVforkParentsLocked()
	d.resumeLocked()
}

// Kill ends the debugged process with SIGKILL.
func (d *Debugger) Kill() {
	if tg := d.tg.Load(); tg != nil {
		tg.Kill()
	}
	d.Detach()
}

// SetBreakpoint inserts or removes a breakpoint at addr (counted: gdb may
// insert one address twice).
func (d *Debugger) SetBreakpoint(addr uint64, insert bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if insert {
		d.nbreak[addr]++
	} else if d.nbreak[addr] > 0 {
		if d.nbreak[addr]--; d.nbreak[addr] == 0 {
			delete(d.nbreak, addr)
		}
	}
	m := make(map[uint64]struct{}, len(d.nbreak))
	for a := range d.nbreak {
		m[a] = struct{}{}
	}
	d.breaks.Store(&m)
}

func (d *Debugger) breakAt(pc uint64) bool {
	_, ok := (*d.breaks.Load())[pc]
	return ok
}

// Threads lists the debugged process's threads by tid. Call it only
// while the process is stopped.
func (d *Debugger) Threads() []DebugThread {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.threadsLocked()
}

func (d *Debugger) threadsLocked() []DebugThread {
	tg := d.tg.Load()
	if tg == nil {
		return nil
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	var out []DebugThread
	for _, t := range tg.sortedTasksLocked() {
		name := t.comm
		if name == "" {
			name = progName(tg.mm.ExeName)
		}
		out = append(out, DebugThread{Tid: t.tid, Name: name, CPU: t.cpu})
	}
	return out
}

func progName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

// Pid is the debugged process's pid (0 before it started).
func (d *Debugger) Pid() int32 {
	if tg := d.tg.Load(); tg != nil {
		return tg.pid
	}
	return 0
}

// Arch is the debugged process's guest architecture.
func (d *Debugger) Arch() vm.Arch {
	if tg := d.tg.Load(); tg != nil {
		return tg.arch.vmArch
	}
	return vm.ArchARM64
}

var errNoProcess = errors.New("no debugged process")

// ReadMemory reads the debugged process's memory regardless of page
// permissions (PTRACE_PEEKDATA); it stops at the first unmapped page.
func (d *Debugger) ReadMemory(addr uint64, buf []byte) (int, error) {
	tg := d.tg.Load()
	if tg == nil {
		return 0, errNoProcess
	}
	n := 0
	for n < len(buf) {
		a := addr + uint64(n)
		if a < addr {
			return n, errors.New("address wraps")
		}
		chunk := min(len(buf)-n, int(vm.PageSize-a&vm.PageMask))
		if err := tg.mm.Peek(buf[n:n+chunk], a); err != nil {
			return n, err
		}
		n += chunk
	}
	return n, nil
}

// WriteMemory writes the debugged process's memory regardless of page
// permissions (PTRACE_POKEDATA; code stays coherent: a changed code page
// is decoded again).
func (d *Debugger) WriteMemory(addr uint64, data []byte) error {
	tg := d.tg.Load()
	if tg == nil {
		return errNoProcess
	}
	if addr+uint64(len(data)) < addr {
		return errors.New("address wraps")
	}
	return tg.mm.Poke(data, addr)
}

// Auxv is the debugged process's auxiliary vector.
func (d *Debugger) Auxv() ([]byte, error) {
	tg := d.tg.Load()
	if tg == nil || len(tg.mm.Auxv) == 0 {
		return nil, errNoProcess
	}
	return tg.mm.Auxv, nil
}

// ExecFile is the host path of the debugged process's program.
func (d *Debugger) ExecFile() (string, error) {
	tg := d.tg.Load()
	if tg == nil {
		return "", errNoProcess
	}
	return tg.mm.ExePath, nil
}

// actionLocked is t's action in the current resume.
func (d *Debugger) actionLocked(t *Task) DebugAction {
	if a, ok := d.acts[t.tid]; ok {
		return a
	}
	return d.def
}

// parkLocked waits, with mu released, until the next resume (or until
// t is killed). Called with mu held; returns with it held.
func (d *Debugger) parkLocked(t *Task) {
	for d.stopping && !t.killed.Load() {
		ch := d.resumeCh
		d.deliverLocked()
		d.mu.Unlock()
		waitResume(t, ch)
		d.mu.Lock()
	}
}

// waitResume blocks t until ch (a resumeCh) closes, or, in parallel
// mode, until t is killed. Called without mu.
func waitResume(t *Task, ch <-chan struct{}) {
	if t.tg.k.det != nil {
		// The baton holder keeps the baton: nothing else runs.
		<-ch
		return
	}
	t.waitKillable(func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}, func() <-chan struct{} { return ch }, -1)
}

// enter is the gate before guest instructions: it parks t while the
// process is stopped, then counts it as running.
func (d *Debugger) enter(t *Task) {
	d.mu.Lock()
	d.parkLocked(t)
	d.inUser++
	d.mu.Unlock()
}

// leave undoes enter.
func (d *Debugger) leave(t *Task) {
	d.mu.Lock()
	d.inUser--
	d.deliverLocked()
	d.mu.Unlock()
}

// report records st as the process's stop (unless another stop is
// already pending: then, with retry, t parks and reports after the next
// resume; without, st is dropped) and parks t. entered says whether t is
// between enter and leave (it stays so).
func (d *Debugger) report(t *Task, st DebugStop, entered, retry bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if entered {
		d.inUser--
		defer func() { d.inUser++ }()
	}
	for !t.killed.Load() && d.on.Load() {
		if d.pending == nil && !d.stopping {
			d.pending = &st
			d.requestStopLocked()
			d.parkLocked(t)
			return
		}
		d.parkLocked(t)
		if !retry {
			return
		}
	}
}

// takeSignal returns and clears the signal t's resume action delivers.
func (d *Debugger) takeSignal(t *Task) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.actionLocked(t)
	if a.Signal == 0 {
		return 0
	}
	sig := a.Signal
	a.Signal = 0
	d.acts[t.tid] = a
	return sig
}

// inject queues sig for t as the debugger's resume signal (not reported
// to it again).
func (d *Debugger) inject(t *Task, sig int) {
	d.mu.Lock()
	d.noReport[t.tid] = sig
	d.mu.Unlock()
	t.tg.sendSignal(signals.KernelInfo(signals.Signal(sig)), t)
}

// debugSignal is the ptrace_signal of get_signal: a traced thread about
// to take a signal stops and reports it. It returns false when the
// debugger discards the signal (its resume carries no signal, or another
// one, which is then queued instead).
func (t *Task) debugSignal(info *signals.SigInfo) bool {
	d := t.tg.k.dbg
	sig := int(info.Signo)
	if !d.on.Load() || !d.traced(t) || signals.Signal(sig) == signals.SIGKILL {
		return true
	}
	d.mu.Lock()
	if d.noReport[t.tid] == sig {
		delete(d.noReport, t.tid)
		d.mu.Unlock()
		return true
	}
	d.mu.Unlock()
	if d.replaying() {
		return true // as in the run being re-executed
	}
	d.report(t, DebugStop{Tid: t.tid, Signal: sig, Break: -1}, false, true)
	if !d.on.Load() {
		return true // detached while stopped: the signal goes on
	}
	switch s := d.takeSignal(t); s {
	case sig:
		return true
	case 0:
		d.Taint()
		return false
	default:
		d.Taint()
		d.inject(t, s)
		return false
	}
}

// debugRun replaces runSampled while a debugger is attached: the gate,
// breakpoints, single steps, and the rest of the slice after a stop.
func (t *Task) debugRun(budget int64) vm.Exit {
	d := t.tg.k.dbg
	d.waitHold(t) // debug_follow.go
	if t.debugCreated {
		t.debugThreadCreated() // debug_threads.go
	}
	traced := d.traced(t)
	if !traced && t.cpu.TLB().Watch() != nil {
		t.cpu.TLB().SetWatch(nil) // a process the debugger left
	}
	d.enter(t)
	defer d.leave(t)
	pcExit := func() vm.Exit { return vm.Exit{Reason: vm.ExitBudget, PC: t.cpu.PC()} }
	if traced {
		d.syncWatch(t)
		if s := d.takeSignal(t); s != 0 {
			d.Taint()
			d.inject(t, s)
			return pcExit()
		}
		d.mu.Lock()
		rep := d.stepReport[t.tid]
		delete(d.stepReport, t.tid)
		d.mu.Unlock()
		if rep {
			d.report(t, DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: -1}, true, false)
		}
	}
	start := t.cpu.Retired()
	for !t.killed.Load() {
		done := int64(t.cpu.Retired() - start)
		if done >= budget {
			return pcExit()
		}
		fast := traced && d.slow.Load() && t.replayFast(d, budget-done) // debug_reverse.go
		if traced && d.slow.Load() && !fast {
			ex, more := t.debugStep(d, start, budget)
			if !more {
				return ex
			}
			continue
		}
		r0 := t.cpu.Retired()
		ex := t.runSampled(budget - done)
		if fast {
			t.replayRan(d, r0)
		}
		if ex.Reason != vm.ExitBudget || !d.stopFlag.Load() || t.flags.Load() != 0 {
			return ex
		}
		// Stopped by the debugger in the middle of the slice: park,
		// then run the rest of it.
		d.leave(t)
		d.enter(t)
	}
	return pcExit()
}

// debugStep runs the rest of a slice one instruction at a time, checking
// breakpoints before each and ending where CPU.Run would. more: the
// debugger dropped the last breakpoint during a stop, so the rest of the
// slice may run at full speed.
func (t *Task) debugStep(d *Debugger, start uint64, budget int64) (ex vm.Exit, more bool) {
	arm := t.tg.arch.vmArch == vm.ArchARM64
	gen := ^uint64(0)
	var first bool
	sigAtEntry := t.sigPending()
	for !t.killed.Load() {
		if d.stopFlag.Load() {
			d.leave(t)
			d.enter(t)
		}
		if g := d.gen.Load(); g != gen {
			// A new resume (or the first look): the thread's action.
			gen = g
			d.mu.Lock()
			first = d.actionLocked(t).Step
			d.mu.Unlock()
			d.syncWatch(t)
			if !d.slow.Load() {
				return vm.Exit{}, true
			}
		}
		if !sigAtEntry && t.sigPending() {
			// A signal arrived (parallel scheduler, or injected by the
			// debugger): back to the loop to deliver it.
			return vm.Exit{Reason: vm.ExitBudget, PC: t.cpu.PC()}, false
		}
		pc := t.cpu.PC()
		if g := d.rev.goal.Load(); g != nil {
			if t.replayPoint(d, g, pc) { // debug_reverse.go
				continue
			}
		} else if !first && d.breakAt(pc) {
			d.report(t, DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: 0}, true, false)
			continue
		}
		var word uint32
		if arm {
			var b [4]byte
			if t.tg.mm.Peek(b[:], pc) == nil {
				word = binary.LittleEndian.Uint32(b[:])
			}
		}
		ex, hit := t.stepWatched(d) // debug_watch.go
		if hit {
			if first = false; ex.Reason == vm.ExitFault {
				continue // arm64: stopped before the access
			}
		} else if first {
			first = false
			if ex.Reason == vm.ExitSyscall {
				// The step ends when the syscall returns.
				d.mu.Lock()
				d.stepReport[t.tid] = true
				d.mu.Unlock()
			} else if ex.Reason == vm.ExitStep {
				d.report(t, DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: -1}, true, false)
			}
		}
		if ex.Reason != vm.ExitStep {
			return ex, false
		}
		if n := int64(t.cpu.Retired() - start); n >= budget && (!arm || a64BlockEnds(word, pc, t.cpu.PC())) {
			return vm.Exit{Reason: vm.ExitBudget, PC: t.cpu.PC()}, false
		}
	}
	return vm.Exit{Reason: vm.ExitBudget, PC: t.cpu.PC()}, false
}

// a64BlockEnds reports whether the arm64 interpreter's Run would check its
// budget after the instruction word at pc, which continued at next: after
// a taken branch, ISB, IC IVAU and at a page crossing (vm/arm64 exec.go).
func a64BlockEnds(word uint32, pc, next uint64) bool {
	switch {
	case next != pc+4, next&^vm.PageMask != pc&^vm.PageMask:
		return true
	case word&0xfc000000 == 0x14000000, word&0xfc000000 == 0x94000000: // B, BL (to pc+4)
		return true
	case word&0xfffffc1f == 0xd61f0000, word&0xfffffc1f == 0xd63f0000, word&0xfffffc1f == 0xd65f0000: // BR, BLR, RET
		return true
	case word&0xfffff0ff == 0xd50330df, word&0xffffffe0 == 0xd50b7520: // ISB, IC IVAU
		return true
	}
	return false
}
