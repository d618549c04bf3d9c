package tasks

import (
	"errors"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Reverse execution of the debugger (gdb's reverse-stepi and
// reverse-continue, the remote protocol's bs and bc) on --det runs, by
// re-execution. A deterministic run is a function of its inputs, so any
// earlier point of it can be reached again by running the same program
// with the same inputs in a fresh Kernel until it gets there; no state is
// copied back. A point (ReversePoint) is a traced thread about to execute
// an instruction, named by its tid and the run's position: the
// instructions every task has retired so far, in schedule order
// (detSched.retired plus what the running thread has not yet accounted).
//
//   - reverse-stepi re-executes to the current point recording the last
//     point of the stepping thread before it, then re-executes to that
//     point and stops there.
//   - reverse-continue re-executes to the current point recording the
//     last breakpoint hit (a traced thread about to execute an
//     instruction at a breakpoint) and the last watchpoint hit, taken as
//     the point before the accessing instruction (so the watched memory
//     still holds its old value, as gdb's own record target stops), then
//     re-executes to the later of the two. Without one it re-executes to
//     the first instruction: the start of history.
//
// The fresh kernel's debugger (NewReplayDebugger) carries the session's
// breakpoints, watchpoints, catchpoints and event settings; while it
// replays, traced threads execute one instruction at a time (as with
// breakpoints, which keeps the schedule) and nothing stops them but the
// goal: signals are delivered as in the recorded run and catchpoints do
// not report. Once at the goal it is an ordinary debugger, and the
// caller (cmd/uvm) drops the old kernel.
//
// What a re-execution cannot repeat refuses reverse execution: a run
// without --det, and a session that changed the run (registers or memory
// written by the debugger, a signal discarded, replaced or injected at a
// resume). Output the run already wrote to the kernel's stdout and
// stderr is not written again (stdioMuted); what the guest writes to
// other host files, it writes again.

// ReversePoint is a point of a deterministic run: thread Tid about to
// execute an instruction after Pos instructions retired by every task.
type ReversePoint struct {
	Tid int32
	Pos uint64
}

// ReplayGoal is where a re-execution stops.
type ReplayGoal struct {
	At ReversePoint
	// Stop is what the debugger reports at At.
	Stop DebugStop
	// Record: on the way, keep the last point of thread StepTid and,
	// with Hits, the last breakpoint or watchpoint hit (Recorded). The
	// replay stops at At, or at the first point past At's position.
	Record, Hits bool
	StepTid      int32
}

// ReplayLog is what a recording replay found before its goal.
type ReplayLog struct {
	Prev     ReversePoint // the last point of StepTid
	HavePrev bool
	Hit      ReversePoint // the last breakpoint or watchpoint hit
	HitStop  DebugStop
	HaveHit  bool
}

// reverseState is a Debugger's part of reverse execution.
type reverseState struct {
	// goal is the replay in progress (nil: none, or reached).
	goal atomic.Pointer[ReplayGoal]
	// log is what the replay recorded (protected by Debugger.mu).
	log ReplayLog
	// tainted: the session changed the run in a way a re-execution
	// does not repeat.
	tainted atomic.Bool
}

// stdioCount is what the guest wrote to the kernel's stdout and stderr
// (protected by mu), for replays that must not write it twice.
type stdioCount struct {
	mu sync.Mutex
	// written counts the bytes the guest wrote to each; skip is how many
	// a replay drops at the start of each.
	written, skip [2]int64
	// in is the stdin record shared with the run's re-executions (nil:
	// none; set before the kernel starts), next the kernel's place in
	// it (protected by in.mu).
	in   *StdinLog
	next int
}

// StdinLog is what the guest read from the kernel's stdin with read(2),
// in order: a re-execution of the run reads the same bytes (the host
// stream has moved on), then goes on reading the stream, recording what
// it gets.
type StdinLog struct {
	mu    sync.Mutex
	reads []stdinRead // protected by mu
	size  int64       // bytes in reads (protected by mu)
}

type stdinRead struct {
	b   []byte
	err Errno
}

// maxStdinLog bounds the recorded stdin; past it, reverse execution
// fails (Complete).
const maxStdinLog = 1 << 30

// RecordStdin makes the kernel read its stdin through log (before it
// starts): the first kernel of a run records, its re-executions replay.
func (k *Kernel) RecordStdin(log *StdinLog) { k.stdio.in = log }

// Complete reports whether log still holds everything read (it is
// bounded).
func (log *StdinLog) Complete() error {
	log.mu.Lock()
	defer log.mu.Unlock()
	if log.size > maxStdinLog {
		return errors.New("reverse execution: the run read more than 1 GiB from stdin, which is not recorded")
	}
	return nil
}

// isStdin reports whether r (what backs a file) is the kernel's stdin.
func (k *Kernel) isStdin(r any) bool {
	if ty := reflect.TypeOf(r); ty == nil || !ty.Comparable() {
		return false
	}
	return r == any(k.opts.Stdin)
}

// stdinRead is a stream read of the kernel's stdin through its record:
// what the record holds at the kernel's place, else read (then recorded).
func (k *Kernel) stdinRead(read func() ([]byte, Errno)) ([]byte, Errno) {
	log := k.stdio.in
	log.mu.Lock()
	if k.stdio.next < len(log.reads) {
		r := log.reads[k.stdio.next]
		k.stdio.next++
		log.mu.Unlock()
		return append([]byte(nil), r.b...), r.err
	}
	log.mu.Unlock()
	b, e := read()
	log.mu.Lock()
	if k.stdio.next == len(log.reads) && log.size <= maxStdinLog {
		log.reads = append(log.reads, stdinRead{b: append([]byte(nil), b...), err: e})
		log.size += int64(len(b))
		k.stdio.next++
	} else {
		log.size = maxStdinLog + 1 // another kernel recorded meanwhile: the record is no use
	}
	log.mu.Unlock()
	return b, e
}

var (
	errNotDet  = errors.New("reverse execution needs a deterministic run (uvm run --det)")
	errTainted = errors.New("reverse execution: this session changed the run (registers or memory written, or a signal discarded or injected); its history cannot be re-executed")
)

// Reversible says whether the run's history can be re-executed.
func (d *Debugger) Reversible() error {
	switch {
	case d.k.det == nil:
		return errNotDet
	case d.rev.tainted.Load():
		return errTainted
	case d.followed.Load():
		return errFollowed // debug_follow.go
	}
	return nil
}

// Taint records that the session changed the run (a register or memory
// write by the debugger): reverse execution is refused from now on.
func (d *Debugger) Taint() { d.rev.tainted.Store(true) }

// detPos is t's position in the run: every instruction retired before
// t's next one (t holds the baton or is stopped).
func (t *Task) detPos() uint64 {
	return t.tg.k.det.retired.Load() + (t.cpu.Retired() - t.accounted)
}

// Where is thread tid's current point. Call it only while the process
// is stopped.
func (d *Debugger) Where(tid int32) (ReversePoint, error) {
	if err := d.Reversible(); err != nil {
		return ReversePoint{}, err
	}
	tg := d.tg.Load()
	if tg == nil {
		return ReversePoint{}, errNoProcess
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	for _, t := range tg.tasks {
		if t.tid == tid {
			return ReversePoint{Tid: tid, Pos: t.detPos()}, nil
		}
	}
	return ReversePoint{}, errors.New("reverse execution: no such thread")
}

// NewReplayDebugger attaches a debugger to the first process k (a fresh
// kernel with from's options) starts, with from's breakpoints,
// watchpoints, catchpoints and events. With goal, the run goes on until
// it reaches the goal (NextStop reports it); without, its first thread
// stops before its first instruction (Stopped reports it).
func (k *Kernel) NewReplayDebugger(from *Debugger, goal *ReplayGoal) *Debugger {
	d := k.NewDebugger(goal == nil)
	from.mu.Lock()
	for a, n := range from.nbreak {
		d.nbreak[a] = n
	}
	pts := append([]vm.Watchpoint(nil), from.wstate.points...)
	from.mu.Unlock()
	m := make(map[uint64]struct{}, len(d.nbreak))
	for a := range d.nbreak {
		m[a] = struct{}{}
	}
	d.breaks.Store(&m)
	d.catchSys.Store(from.catchSys.Load())
	d.events.Store(from.events.Load())
	d.threadEvents.Store(from.threadEvents.Load())
	if len(pts) > 0 {
		// The points were checked when from's set was built.
		if set, err := vm.NewWatchSet(pts, from.Arch() == vm.ArchARM64); err == nil {
			d.wstate.points = pts
			d.watch.Store(set)
		}
	}
	if goal != nil {
		g := *goal
		d.rev.goal.Store(&g)
		d.slow.Store(true)
	}
	return d
}

// NextStop returns the channel of the next stop, without asking for
// one (a replay's goal, or the process's exit).
func (d *Debugger) NextStop() <-chan DebugStop {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(chan DebugStop, 1)
	d.out = out
	d.deliverLocked()
	if d.tg.Load() == nil {
		return out
	}
	return d.watchExit(out)
}

// Recorded returns what a recording replay found.
func (d *Debugger) Recorded() ReplayLog {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rev.log
}

// KillAll ends every process of the kernel (a replaced run) and lets
// the debugger's parked threads go. It does not wait: a thread blocked in
// a host call ends when the call returns.
func (k *Kernel) KillAll() {
	k.mu.Lock()
	groups := append([]*ThreadGroup(nil), k.groups...)
	k.mu.Unlock()
	for _, tg := range groups {
		tg.exitGroup(ExitStatus{Signal: sigKILL})
	}
	if k.dbg != nil {
		k.dbg.Detach()
	}
}

// SkipOutput makes the kernel drop the first bytes the guest writes to
// its stdout and stderr (what an earlier run of the same program already
// wrote); OutputWritten is what the guest has written to them so far,
// the dropped bytes included.
func (k *Kernel) SkipOutput(stdout, stderr int64) {
	k.stdio.mu.Lock()
	k.stdio.skip = [2]int64{stdout, stderr}
	k.stdio.mu.Unlock()
}

// OutputWritten: see SkipOutput.
func (k *Kernel) OutputWritten() (stdout, stderr int64) {
	k.stdio.mu.Lock()
	defer k.stdio.mu.Unlock()
	return k.stdio.written[0], k.stdio.written[1]
}

// stdioMuted counts a guest write of b to w and returns how many of its
// first bytes are dropped: with a debugger, writes to the kernel's
// stdout and stderr (w is what backs them: an *os.File or the
// io.Writer) are counted, and a replay drops what was written before.
func (k *Kernel) stdioMuted(w any, b []byte) int {
	if k.dbg == nil {
		return 0
	}
	if ty := reflect.TypeOf(w); ty == nil || !ty.Comparable() {
		return 0
	}
	i := 0
	switch w {
	case any(k.opts.Stdout):
	case any(k.opts.Stderr):
		i = 1
	default:
		return 0
	}
	c := &k.stdio
	c.mu.Lock()
	defer c.mu.Unlock()
	before := c.written[i]
	c.written[i] += int64(len(b))
	if before >= c.skip[i] {
		return 0
	}
	return int(min(c.skip[i]-before, int64(len(b))))
}

// replayPoint is debugStep's check before each instruction of a traced
// thread while d replays: true when t reached the goal (the stop was
// reported and the process resumed since). A recording replay notes the
// stepping thread's points and the breakpoint hits on the way.
func (t *Task) replayPoint(d *Debugger, g *ReplayGoal, pc uint64) bool {
	pos := t.detPos()
	if (t.tid == g.At.Tid && pos == g.At.Pos) || (g.Record && pos > g.At.Pos) {
		d.rev.goal.Store(nil)
		st := g.Stop
		st.Tid = t.tid
		d.report(t, st, true, false)
		return true
	}
	if g.Record {
		d.mu.Lock()
		if t.tid == g.StepTid {
			d.rev.log.Prev, d.rev.log.HavePrev = ReversePoint{Tid: t.tid, Pos: pos}, true
		}
		if g.Hits && d.breakAt(pc) {
			d.rev.log.Hit, d.rev.log.HaveHit = ReversePoint{Tid: t.tid, Pos: pos}, true
			d.rev.log.HitStop = DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: 0}
		}
		d.mu.Unlock()
	}
	return false
}

// replayWatch is stepWatched's handling of a watchpoint hit while d
// replays: the hit is recorded at the point before the instruction, and
// the instruction completes (arm64 stopped before the access: it is
// executed again without the watchpoints).
func (t *Task) replayWatch(d *Debugger, g *ReplayGoal, ex vm.Exit, st DebugStop) vm.Exit {
	pos := t.detPos()
	before := ex.Reason == vm.ExitFault
	if !before {
		pos-- // x86-64: the accessing instruction retired
	}
	if g.Record && g.Hits {
		d.mu.Lock()
		d.rev.log.Hit, d.rev.log.HaveHit, d.rev.log.HitStop = ReversePoint{Tid: t.tid, Pos: pos}, true, st
		d.mu.Unlock()
	}
	if before {
		tlb := t.cpu.TLB()
		tlb.SetWatch(nil)
		ex = t.cpu.Step()
		d.syncWatch(t)
	}
	return ex
}

// replaySlack bounds how far past its budget a slice may run (arm64
// slices end at the end of a block; a block ends at a page boundary).
const replaySlack = vm.PageSize

// replayFast reports whether traced t may execute the next n
// instructions of its slice at full speed (CPU.Run, which ends the slice
// where debugStep would) while d replays: the goal is further away than
// the slice can reach, no watchpoint needs the slow path, and nothing on
// the way is recorded but t's own last point.
func (t *Task) replayFast(d *Debugger, n int64) bool {
	g := d.rev.goal.Load()
	if g == nil || g.Hits || d.watch.Load() != nil || n < 0 {
		return false
	}
	pos := t.detPos()
	return g.At.Pos > pos && g.At.Pos-pos > uint64(n)+replaySlack
}

// replayRan records, after a slice replayFast let t run from r0
// retired instructions, t's last point in it (the one before its last
// instruction) when the replay records t's points.
func (t *Task) replayRan(d *Debugger, r0 uint64) {
	g := d.rev.goal.Load()
	if g == nil || !g.Record || t.tid != g.StepTid || t.cpu.Retired() == r0 {
		return
	}
	d.mu.Lock()
	d.rev.log.Prev, d.rev.log.HavePrev = ReversePoint{Tid: t.tid, Pos: t.detPos() - 1}, true
	d.mu.Unlock()
}

// replaying reports whether d re-executes toward a goal (stops other
// than the goal are not reported).
func (d *Debugger) replaying() bool { return d.rev.goal.Load() != nil }
