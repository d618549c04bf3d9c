package main

// Reverse execution for `uvm run --det -g` (gdb's reverse-stepi and
// reverse-continue; tasks/debug_reverse.go): each reverse command
// re-executes the run from its start in a fresh kernel with the same
// options and inputs, once to the current point (recording where to go)
// and once more to the point found; that kernel then replaces the old
// one. Stdin is recorded as the guest reads it; output already written
// to stdout and stderr is not written again.

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/gdbstub"
	"github.com/uvm-emu/uvm/tasks"
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
}

// newReverseRun prepares re-executions of the run k is about to start
// (before k starts). It returns nil for a run that is not deterministic
// (the debugger refuses reverse execution itself).
func newReverseRun(k *tasks.Kernel, opts tasks.Options, prog string, argv []string) *reverseRun {
	if !opts.Deterministic {
		return nil
	}
	r := &reverseRun{opts: opts, prog: prog, argv: argv, stdin: &tasks.StdinLog{}}
	switch {
	case opts.Uprobes != nil:
		r.off = errors.New("reverse execution is not available with uprobes")
	case opts.CacheModel != nil || opts.Machine != nil:
		r.off = errors.New("reverse execution is not available with the cache or timing model")
	case opts.Profiler != nil || opts.TraceInsn != nil:
		r.off = errors.New("reverse execution is not available with --pprof or --trace-insn")
	}
	k.RecordStdin(r.stdin)
	return r
}

// replayLog is a re-execution's kernel log: dropped until the kernel
// becomes the run (what it logs before, the run logged already).
type replayLog struct {
	w    io.Writer
	live atomic.Bool
}

func (l *replayLog) Write(p []byte) (int, error) {
	if !l.live.Load() {
		return len(p), nil
	}
	return l.w.Write(p)
}

// replay is one re-execution: a fresh kernel running the program until
// goal (nil: stopped before its first instruction), with from's
// breakpoints and watchpoints.
type replay struct {
	k   *tasks.Kernel
	d   *tasks.Debugger
	tg  *tasks.ThreadGroup
	log *replayLog
	st  tasks.DebugStop
}

func (r *reverseRun) replay(from *tasks.Debugger, goal *tasks.ReplayGoal) (*replay, error) {
	o := r.opts
	log := o.Log
	if log == nil {
		log = o.Stderr
	}
	rl := &replayLog{w: log}
	o.Log, o.Trace = rl, nil // the run traced and logged this part already
	k := tasks.NewKernel(o)
	k.RecordStdin(r.stdin)
	k.SkipOutput(r.out[0], r.out[1])
	d := k.NewReplayDebugger(from, goal)
	tg, err := k.Start(r.prog, r.argv)
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
	st := <-ch
	if st.Exited {
		k.KillAll()
		return nil, errors.New("reverse execution: the re-execution did not reach the point (the process exited first); the run is not reproducible")
	}
	if err := r.stdin.Complete(); err != nil {
		k.KillAll()
		return nil, err
	}
	return &replay{k: k, d: d, tg: tg, log: rl, st: st}, nil
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
// there the run. It returns when the new run is stopped there.
func (t *gdbTarget) reverse(tid int32, step bool) (<-chan gdbstub.Stop, error) {
	if err := t.d.Reversible(); err != nil {
		return nil, err
	}
	r := t.srv.rev
	if r == nil {
		return nil, errors.New("reverse execution needs a deterministic run (uvm run --det)")
	}
	if r.off != nil {
		return nil, r.off
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
	trap := tasks.DebugStop{Signal: 5, Break: -1} // SIGTRAP
	rec, err := r.replay(t.d, &tasks.ReplayGoal{At: now, Stop: trap, Record: true, StepTid: tid})
	if err != nil {
		return nil, err
	}
	found := rec.d.Recorded()
	rec.k.KillAll()
	var goal *tasks.ReplayGoal
	switch {
	case step && found.HavePrev:
		goal = &tasks.ReplayGoal{At: found.Prev, Stop: trap}
	case !step && found.HaveHit:
		goal = &tasks.ReplayGoal{At: found.Hit, Stop: found.HitStop}
	}
	next, err := r.replay(t.d, goal)
	if err != nil {
		return nil, err
	}
	next.log.live.Store(true)
	t.d = next.d
	t.srv.replace(next.k, next.tg)
	st := t.stop(next.st)
	st.HistoryBegin = goal == nil
	out := make(chan gdbstub.Stop, 1)
	out <- st
	return out, nil
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
