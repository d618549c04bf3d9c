package main

// Reverse execution for `uvm run --det -g` (gdb's reverse-stepi and
// reverse-continue; tasks/debug_reverse.go): each reverse command
// re-executes the run in a fresh kernel with the same options and
// inputs, from the nearest checkpoint before the current point
// (tasks/checkpoint.go; --checkpoint-interval, --checkpoint-mem) or
// from the program's start, once to the current point (recording where
// to go; where nothing is found, again from the checkpoint before) and
// once more to the point found; that kernel then replaces the old one.
// Stdin is recorded as the guest reads it; output already written to
// stdout and stderr is not written again.

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/gdbstub"
	"github.com/uvm-emu/uvm/internal/tasks"
)

// reverseRun re-creates the debugged run.
type reverseRun struct {
	opts  tasks.Options
	prog  string
	argv  []string
	stdin *tasks.StdinLog
	// off says why reverse execution is not available (nil: it is).
	off error
	// out is the most output the run has written to stdout and stderr
	// in any of its executions (the stub's goroutine only).
	out [2]int64
	// log and trace are the kernel log and the syscall trace; live
	// turns them on for the kernel that is the run now (the stub's
	// goroutine only, after the start).
	log, trace io.Writer
	live       *atomic.Bool
	// ckpt holds the run's checkpoints, taken every interval
	// instructions (nil: none; every re-execution starts from the
	// program's start); lastLog is the last fallback message.
	ckpt     *tasks.CheckpointLog
	interval uint64
	lastLog  string
}

// newReverseRun prepares re-executions of the run about to be started
// with opts (before its kernel is made: the kernel log and trace of opts
// are wrapped, to be turned off when a re-execution replaces the run).
// It returns nil for a run that is not deterministic (the debugger
// refuses reverse execution itself).
func newReverseRun(opts *tasks.Options, prog string, argv []string, interval uint64, ckptMem int64) *reverseRun {
	if !opts.Deterministic {
		return nil
	}
	r := &reverseRun{prog: prog, argv: argv, stdin: &tasks.StdinLog{}, live: new(atomic.Bool), interval: interval}
	if interval > 0 {
		r.ckpt = tasks.NewCheckpointLog(interval, ckptMem)
	}
	r.log, r.trace = opts.Log, opts.Trace
	if r.log == nil {
		r.log = opts.Stderr
	}
	r.live.Store(true)
	opts.Log = &replayLog{w: r.log, live: r.live}
	if r.trace != nil {
		opts.Trace = &replayLog{w: r.trace, live: r.live}
	}
	r.opts = *opts
	switch { // uprobes are attached later: cmdRun sets off for them
	case opts.CacheModel != nil || opts.Machine != nil:
		r.off = errors.New("reverse execution is not available with the cache or timing model")
	case opts.Profiler != nil || opts.TraceInsn != nil:
		r.off = errors.New("reverse execution is not available with --pprof or --trace-insn")
	}
	return r
}

// attach records the stdin of the run's first kernel (before it starts).
func (r *reverseRun) attach(k *tasks.Kernel) {
	if r != nil {
		k.RecordStdin(r.stdin)
		if r.ckpt != nil && r.off == nil {
			k.RecordCheckpoints(r.ckpt)
		}
	}
}

// replayLog is a re-execution's kernel log or syscall trace: dropped
// until the kernel becomes the run (what it logs before, the run logged
// already; from there on the trace repeats what follows the point gone
// back to).
type replayLog struct {
	w    io.Writer
	live *atomic.Bool
}

func (l *replayLog) Write(p []byte) (int, error) {
	if !l.live.Load() {
		return len(p), nil
	}
	return l.w.Write(p)
}

// replay is one re-execution: a fresh kernel running the program from
// its start (cp nil) or from checkpoint cp until goal (nil: stopped
// before its first instruction), with from's breakpoints and
// watchpoints. A close of cancel (gdb's ^C) abandons it.
type replay struct {
	k  *tasks.Kernel
	d  *tasks.Debugger
	tg *tasks.ThreadGroup
	// live turns its log and trace on.
	live *atomic.Bool
	st   tasks.DebugStop
}

// errInterrupted: gdb's ^C abandoned a reverse command.
var errInterrupted = errors.New("reverse execution interrupted")

func (r *reverseRun) replay(from *tasks.Debugger, cp *tasks.Checkpoint, goal *tasks.ReplayGoal, cancel <-chan struct{}) (*replay, error) {
	o := r.opts
	live := new(atomic.Bool)
	o.Log = &replayLog{w: r.log, live: live}
	if r.trace != nil {
		o.Trace = &replayLog{w: r.trace, live: live}
	}
	k := tasks.NewKernel(o)
	k.RecordStdin(r.stdin)
	if r.ckpt != nil {
		k.RecordCheckpoints(r.ckpt)
	}
	k.SkipOutput(r.out[0], r.out[1])
	d := k.NewReplayDebugger(from, goal)
	var tg *tasks.ThreadGroup
	var err error
	if cp == nil {
		tg, err = k.Start(r.prog, r.argv)
	} else {
		tg, err = k.StartFrom(cp)
	}
	if err != nil {
		return nil, fmt.Errorf("reverse execution: restarting the program: %v", err)
	}
	d.Attach(tg)
	var ch <-chan tasks.DebugStop
	if goal != nil {
		ch = d.NextStop()
	} else {
		ch = d.Stopped()
	}
	var st tasks.DebugStop
	select {
	case st = <-ch:
	case <-cancel:
		k.KillAll()
		return nil, errInterrupted
	}
	if st.Exited {
		k.KillAll()
		return nil, errors.New("reverse execution: the re-execution did not reach the point (the process exited first); the run is not reproducible")
	}
	if err := r.stdin.Complete(); err != nil {
		k.KillAll()
		return nil, err
	}
	return &replay{k: k, d: d, tg: tg, live: live, st: st}, nil
}

// ReverseStep implements gdbstub.Reverser.
func (t *gdbTarget) ReverseStep(tid int) (<-chan gdbstub.Stop, error) {
	return t.reverse(int32(tid), true)
}

// ReverseContinue implements gdbstub.Reverser.
func (t *gdbTarget) ReverseContinue(tid int) (<-chan gdbstub.Stop, error) {
	return t.reverse(int32(tid), false)
}

// reverse goes back one instruction of thread tid (step) or to the last
// breakpoint or watchpoint hit, and makes the re-execution that got
// there the run. The search runs while the session waits for its stop
// (gdb's ^C abandons it: the run stays where it was and the stop is
// SIGINT); a failure on the way is the stop's error.
func (t *gdbTarget) reverse(tid int32, step bool) (<-chan gdbstub.Stop, error) {
	r := t.srv.rev
	if r != nil && r.off != nil {
		return nil, r.off
	}
	if err := t.d.Reversible(); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New("reverse execution needs a deterministic run (uvm run --det)")
	}
	if err := r.stdin.Complete(); err != nil {
		return nil, err
	}
	now, err := t.d.Where(tid)
	if err != nil {
		return nil, err
	}
	k, _ := t.srv.current()
	w0, w1 := k.OutputWritten()
	r.out = [2]int64{max(r.out[0], w0), max(r.out[1], w1)}
	cancel := make(chan struct{})
	t.srv.cancelMu.Lock()
	t.srv.cancel = cancel
	t.srv.cancelMu.Unlock()
	out := make(chan gdbstub.Stop, 1)
	go func() {
		st, err := t.reverseTo(r, tid, step, now, cancel)
		switch {
		case errors.Is(err, errInterrupted):
			st = gdbstub.Stop{Kind: gdbstub.StopSignal, Thread: int(tid), Signal: 2, Break: -1} // SIGINT
		case err != nil:
			st = gdbstub.Stop{Err: err.Error()}
		}
		// Until here a ^C only closes cancel (t.d is this goroutine's);
		// from here it stops the new run, stopped already.
		t.srv.cancelMu.Lock()
		t.srv.cancel = nil
		t.srv.cancelMu.Unlock()
		out <- st
	}()
	return out, nil
}

// reverseTo finds the point to go back to, searching backwards from now
// one checkpoint at a time (the start of the program last), goes there
// and makes that re-execution the run.
func (t *gdbTarget) reverseTo(r *reverseRun, tid int32, step bool, now tasks.ReversePoint, cancel <-chan struct{}) (gdbstub.Stop, error) {
	trap := tasks.DebugStop{Signal: 5, Break: -1} // SIGTRAP
	var cps []*tasks.Checkpoint
	startKept := true
	if r.ckpt != nil {
		cps = r.ckpt.Before(now.Pos)
		startKept = r.ckpt.StartKept()
	}
	froms := cps
	if startKept {
		froms = append(froms, nil) // nil: the program's start
	}
	if len(froms) > 0 && froms[0] == nil && now.Pos >= r.interval && r.ckpt != nil {
		why, at := r.ckpt.Skipped()
		if why == "" {
			why = "none taken"
		}
		r.logOnce(fmt.Sprintf("uvm: reverse execution: no checkpoint before instruction %d (at %d: %s): re-executing from the start\n", now.Pos, at, why))
	}
	var goal *tasks.ReplayGoal
	var from *tasks.Checkpoint
	upTo := now
	for _, cp := range froms {
		rec, err := r.replay(t.d, cp, &tasks.ReplayGoal{At: upTo, Stop: trap, Record: true, Hits: !step, StepTid: tid}, cancel)
		if err != nil {
			return gdbstub.Stop{}, err
		}
		found := rec.d.Recorded()
		rec.k.KillAll()
		switch {
		case step && found.HavePrev:
			goal = &tasks.ReplayGoal{At: found.Prev, Stop: trap}
		case !step && found.HaveHit:
			goal = &tasks.ReplayGoal{At: found.Hit, Stop: found.HitStop}
		}
		if goal != nil {
			from = cp
			break
		}
		if cp != nil {
			upTo = tasks.ReversePoint{Tid: cp.Tid(), Pos: cp.Pos()}
		}
	}
	begin := goal == nil
	if begin && !startKept {
		// The history begins at the oldest checkpoint kept: stop there.
		if len(cps) == 0 {
			return gdbstub.Stop{}, fmt.Errorf("reverse execution: no history is available (the checkpoints before instruction %d were dropped: --checkpoint-mem)", now.Pos)
		}
		from = cps[len(cps)-1]
		goal = &tasks.ReplayGoal{At: tasks.ReversePoint{Tid: from.Tid(), Pos: from.Pos()}, Stop: trap}
		fmt.Fprintf(r.log, "uvm: reverse execution: history before instruction %d is not available (older checkpoints were dropped: --checkpoint-mem)\n", from.Pos())
	}
	next, err := r.replay(t.d, from, goal, cancel)
	if err != nil {
		return gdbstub.Stop{}, err
	}
	r.live.Store(false) // the old run dies quietly
	r.live = next.live
	next.live.Store(true)
	t.d = next.d
	t.srv.replace(next.k, next.tg)
	st := t.stop(next.st)
	st.HistoryBegin = begin
	return st, nil
}

// logOnce writes msg to the log unless it was the last message written.
func (r *reverseRun) logOnce(msg string) {
	if msg != r.lastLog {
		r.lastLog = msg
		fmt.Fprint(r.log, msg)
	}
}

// interrupt abandons a reverse command in progress (gdb's ^C); it
// reports whether there was one.
func (s *gdbServer) interrupt() bool {
	s.cancelMu.Lock()
	defer s.cancelMu.Unlock()
	if s.cancel == nil {
		return false
	}
	select {
	case <-s.cancel: // already abandoned, or done
	default:
		close(s.cancel)
	}
	return true
}

// liveRun is the run a debugger session debugs now: the first one, or
// the re-execution the last reverse command made (protected by mu).
type liveRun struct {
	mu sync.Mutex
	k  *tasks.Kernel
	tg *tasks.ThreadGroup
	// replaced is closed when the run is replaced (protected by mu).
	replaced chan struct{}
}

// current returns the live run.
func (s *gdbServer) current() (*tasks.Kernel, *tasks.ThreadGroup) {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	return s.live.k, s.live.tg
}

// replace makes k (stopped) the run and ends the old one.
func (s *gdbServer) replace(k *tasks.Kernel, tg *tasks.ThreadGroup) {
	s.live.mu.Lock()
	old := s.live.k
	s.live.k, s.live.tg = k, tg
	close(s.live.replaced)
	s.live.replaced = make(chan struct{})
	s.live.mu.Unlock()
	old.KillAll()
}

// final waits for the end of the run, following the replacements reverse
// execution makes, and returns the last run's kernel, process and status.
func (s *gdbServer) final() (*tasks.Kernel, *tasks.ThreadGroup, tasks.ExitStatus) {
	for {
		s.live.mu.Lock()
		k, tg, repl := s.live.k, s.live.tg, s.live.replaced
		s.live.mu.Unlock()
		select {
		case <-tg.Done():
			s.live.mu.Lock()
			same := s.live.tg == tg
			s.live.mu.Unlock()
			if same {
				return k, tg, tg.Wait()
			}
		case <-repl:
		}
	}
}

// readN reads what it can of buf's length at addr.
func (t *gdbTarget) readN(addr uint64, buf []byte) int {
	n, _ := t.d.ReadMemory(addr, buf)
	return n
}
