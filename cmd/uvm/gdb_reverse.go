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
}

// newReverseRun prepares re-executions of the run about to be started
// with opts (before its kernel is made: the kernel log and trace of opts
// are wrapped, to be turned off when a re-execution replaces the run).
// It returns nil for a run that is not deterministic (the debugger
// refuses reverse execution itself).
func newReverseRun(opts *tasks.Options, prog string, argv []string) *reverseRun {
	if !opts.Deterministic {
		return nil
	}
	r := &reverseRun{prog: prog, argv: argv, stdin: &tasks.StdinLog{}, live: new(atomic.Bool)}
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

// replay is one re-execution: a fresh kernel running the program until
// goal (nil: stopped before its first instruction), with from's
// breakpoints and watchpoints.
type replay struct {
	k  *tasks.Kernel
	d  *tasks.Debugger
	tg *tasks.ThreadGroup
	// live turns its log and trace on.
	live *atomic.Bool
	st   tasks.DebugStop
}

func (r *reverseRun) replay(from *tasks.Debugger, goal *tasks.ReplayGoal) (*replay, error) {
	o := r.opts
	live := new(atomic.Bool)
	o.Log = &replayLog{w: r.log, live: live}
	if r.trace != nil {
		o.Trace = &replayLog{w: r.trace, live: live}
	}
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
// there the run. It returns when the new run is stopped there.
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
	trap := tasks.DebugStop{Signal: 5, Break: -1} // SIGTRAP
	rec, err := r.replay(t.d, &tasks.ReplayGoal{At: now, Stop: trap, Record: true, Hits: !step, StepTid: tid})
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
	r.live.Store(false) // the old run dies quietly
	r.live = next.live
	next.live.Store(true)
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
