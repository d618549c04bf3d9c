package tasks

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Two schedulers run guest threads:
//
//   - parallel (Options.Deterministic false): one goroutine per guest
//     thread, running freely; blocking syscalls block their goroutine;
//     time is the host's.
//   - deterministic: each guest thread still has its goroutine, but only
//     the holder of a single baton runs. The baton moves round-robin after
//     a fixed instruction quantum (or a seeded random one with Chaos), at
//     blocking syscalls and at thread exit, in an order that depends only
//     on the guest's own behaviour. Time is virtual: the clock advances by
//     NsPerInsn for every retired instruction (summed over all threads),
//     and jumps to the earliest sleeper's deadline when every thread is
//     blocked. The same program, arguments, environment and seed therefore
//     produce the same run at any GOMAXPROCS on any host.
//
// Blocking in deterministic mode is a predicate plus a virtual deadline
// (Task.wait); the scheduler re-evaluates the predicates of blocked
// threads at every switch, in thread-id order.

// DetCPUs is the number of CPUs a guest sees in deterministic mode
// (sched_getaffinity). The host's count — its cores, and the affinity
// taskset gives uvm — must not leak in: a Go guest sizes GOMAXPROCS from
// it, a C runtime its arenas and thread pools, and every later syscall
// follows from that.
const DetCPUs = 4

// guestCPUs is the number of CPUs the guest may run on: DetCPUs in
// deterministic mode, the host's (as the Go runtime sees them: affinity
// included) otherwise.
func (k *Kernel) guestCPUs() int {
	if k.tm != nil {
		return k.tm.model.M.NumCPU() // --model: the described machine's
	}
	if k.det != nil {
		return DetCPUs
	}
	return runtime.NumCPU()
}

// detSched is the deterministic scheduler.
type detSched struct {
	// mu protects everything below; it is taken briefly at switches.
	mu      sync.Mutex
	runq    []*Task // runnable, in order
	blocked []*Task // waiting on a predicate and/or deadline, by tid
	current *Task
	quantum int64
	chaos   *rand.Rand
	// vclock is virtual nanoseconds since boot.
	vclock    int64
	nsPerInsn int64
	switches  uint64
	deadlock  func()
	// timers are virtual-time events (ITIMER_REAL), fired in deadline
	// order when the clock passes them.
	timers []*detTimer
	seq    uint64
	// timed: the timing model orders the run queue (timing.go).
	timed bool
	// retired counts the instructions every task has retired and
	// accounted, in schedule order: the position in the run that
	// reverse execution re-executes to (debug_reverse.go). Written by
	// the baton holder.
	retired atomic.Uint64
}

type detTimer struct {
	deadline int64
	seq      uint64 // FIFO order among equal deadlines
	fire     func()
	queued   bool
}

// addTimer schedules fire at virtual time deadline.
func (s *detSched) addTimer(deadline int64, fire func()) *detTimer {
	tm := &detTimer{fire: fire}
	s.resetTimer(tm, deadline)
	return tm
}

// resetTimer (re)queues tm at deadline.
func (s *detSched) resetTimer(tm *detTimer, deadline int64) {
	s.mu.Lock()
	s.resetTimerLocked(tm, deadline)
	s.mu.Unlock()
}

// resetTimerAfter (re)queues tm d virtual nanoseconds from now and
// reports whether it was queued (mod_timer's return): now and the queue
// under one acquisition of s.mu. The uretprobe model re-arms its
// ri_timer so on every uretprobe hit.
func (s *detSched) resetTimerAfter(tm *detTimer, d int64) bool {
	s.mu.Lock()
	was := tm.queued
	s.resetTimerLocked(tm, s.vclock+d)
	s.mu.Unlock()
	return was
}

// resetTimerLocked is resetTimer with s.mu held. The queue is sorted by
// (deadline, seq) and the re-armed timer takes a new seq, the largest,
// so its place is after every timer due at or before deadline. A timer
// that is last and stays last (the common re-arm: the one pending
// timer, its deadline moved later) keeps its slot: no search, no shift.
func (s *detSched) resetTimerLocked(tm *detTimer, deadline int64) {
	s.seq++
	if s.staysLastLocked(tm, deadline) {
		tm.deadline, tm.seq = deadline, s.seq
		return
	}
	s.removeTimerLocked(tm)
	tm.deadline, tm.seq, tm.queued = deadline, s.seq, true
	i := sort.Search(len(s.timers), func(i int) bool {
		o := s.timers[i]
		return o.deadline > deadline || o.deadline == deadline && o.seq > tm.seq
	})
	s.timers = append(s.timers, nil)
	copy(s.timers[i+1:], s.timers[i:])
	s.timers[i] = tm
}

// staysLastLocked reports whether tm is queued last and re-arming it at
// deadline (with a new, largest seq) leaves it last.
func (s *detSched) staysLastLocked(tm *detTimer, deadline int64) bool {
	n := len(s.timers)
	return tm.queued && n > 0 && s.timers[n-1] == tm && (n == 1 || s.timers[n-2].deadline <= deadline)
}

// stopTimer dequeues tm; it reports whether it was queued.
func (s *detSched) stopTimer(tm *detTimer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removeTimerLocked(tm)
}

func (s *detSched) removeTimerLocked(tm *detTimer) bool {
	if !tm.queued {
		return false
	}
	for i, o := range s.timers {
		if o == tm {
			s.timers = append(s.timers[:i], s.timers[i+1:]...)
			break
		}
	}
	tm.queued = false
	return true
}

// fireTimersLocked runs the timers that are due. The callbacks send
// signals (they take signal and group locks, never s.mu), so s.mu is
// released around them.
func (s *detSched) fireTimersLocked() {
	for len(s.timers) > 0 && s.timers[0].deadline <= s.vclock {
		tm := s.timers[0]
		s.timers = s.timers[1:]
		tm.queued = false
		s.mu.Unlock()
		tm.fire()
		s.mu.Lock()
	}
}

// detWait is a blocked task's condition.
type detWait struct {
	ready    func() bool
	deadline int64 // virtual ns; -1: none
	timedOut bool
	park     bool // a modelled lock wait (timing.go)
}

func newDetSched(quantum, nsPerInsn int64, chaosSeed uint64, chaos bool) *detSched {
	s := &detSched{quantum: quantum, nsPerInsn: nsPerInsn}
	if chaos {
		s.chaos = rand.New(rand.NewPCG(chaosSeed, 0x75766d))
	}
	return s
}

// budget returns the instruction quantum for the next slice.
func (s *detSched) budget() int64 {
	if s.chaos == nil {
		return s.quantum
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return 1 + s.chaos.Int64N(2*s.quantum)
}

// add makes a new task runnable (it waits for the baton in acquire).
func (s *detSched) add(t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		s.current = t
		t.baton <- struct{}{}
		return
	}
	s.runq = append(s.runq, t)
}

// acquire waits until t holds the baton.
func (s *detSched) acquire(t *Task) { <-t.baton }

// account adds retired instructions to the virtual clock.
func (s *detSched) account(n uint64) {
	s.mu.Lock()
	s.vclock += int64(n) * s.nsPerInsn
	s.mu.Unlock()
	s.retired.Add(n)
}

func (s *detSched) now() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vclock
}

// yield puts t at the back of the run queue and passes the baton.
func (s *detSched) yield(t *Task) {
	s.mu.Lock()
	s.runq = append(s.runq, t)
	s.switchLocked(t)
}

// block parks t until w.ready() or the virtual deadline; it reports
// whether the deadline expired first.
func (s *detSched) block(t *Task, w *detWait) bool {
	if w.ready() {
		return false
	}
	s.mu.Lock()
	if w.deadline >= 0 && w.deadline <= s.vclock {
		s.mu.Unlock()
		return true
	}
	t.detWait = w
	s.timingBlock(t, w)
	s.blocked = append(s.blocked, t)
	sort.Slice(s.blocked, func(i, j int) bool { return s.blocked[i].tid < s.blocked[j].tid })
	s.switchLocked(t)
	t.detWait = nil
	return w.timedOut
}

// exit removes t and passes the baton on.
func (s *detSched) exit(t *Task) {
	s.mu.Lock()
	if s.current != t {
		s.mu.Unlock()
		return
	}
	next := s.pickLocked()
	s.current = next
	s.switches++
	s.mu.Unlock()
	if next != nil {
		next.baton <- struct{}{}
	}
}

// switchLocked picks the next task, hands it the baton and, if it is not
// t, waits for t's turn. Called with s.mu held; returns with it released.
func (s *detSched) switchLocked(t *Task) {
	next := s.pickLocked()
	s.current = next
	s.switches++
	s.mu.Unlock()
	if next == t {
		return
	}
	if next != nil {
		next.baton <- struct{}{}
	}
	<-t.baton
}

// pickLocked wakes blocked tasks whose predicate holds, advances virtual
// time to the earliest deadline when nothing can run, and returns the
// next task (nil: nothing can ever run again).
func (s *detSched) pickLocked() *Task {
	for {
		s.fireTimersLocked()
		s.wakeReadyLocked()
		if len(s.runq) > 0 {
			i := s.pickIndex()
			next := s.runq[i]
			s.runq = append(s.runq[:i], s.runq[i+1:]...)
			return next
		}
		if len(s.blocked) == 0 {
			return nil
		}
		earliest := int64(-1)
		for _, b := range s.blocked {
			if d := b.detWait.deadline; d >= 0 && (earliest < 0 || d < earliest) {
				earliest = d
			}
		}
		if len(s.timers) > 0 && (earliest < 0 || s.timers[0].deadline < earliest) {
			earliest = s.timers[0].deadline
		}
		if earliest < 0 {
			// Every thread waits for something no thread can do.
			if s.deadlock != nil {
				s.deadlock()
				s.deadlock = nil
				continue // the handler made the waiters' predicates true
			}
			return nil
		}
		if earliest > s.vclock {
			s.vclock = earliest
		}
	}
}

func (s *detSched) wakeReadyLocked() {
	out := s.blocked[:0]
	for _, b := range s.blocked {
		w := b.detWait
		switch {
		case w.ready():
			s.timingWoke(b)
			s.runq = append(s.runq, b)
		case w.deadline >= 0 && w.deadline <= s.vclock:
			w.timedOut = true
			s.timingWoke(b)
			s.runq = append(s.runq, b)
		default:
			out = append(out, b)
		}
	}
	for i := len(out); i < len(s.blocked); i++ {
		s.blocked[i] = nil
	}
	s.blocked = out
}

// wait blocks t until ready() returns true, a signal is pending, the task
// is killed, or timeoutNs nanoseconds of the kernel's clock pass
// (timeoutNs < 0: no timeout). It reports whether the timeout expired.
//
// wake says when ready() may have changed: it returns a channel that is
// closed at the next change (the parallel scheduler sleeps on it, on the
// signal-notify channel and on one deadline timer, never polling). A nil
// wake means ready() changes only with signals, kills and time (sleeps).
// A wake that returns a nil channel means the caller has no channel for
// this condition: the wait then re-checks it every 50 ms (a fallback for
// callers not yet converted; waitChans takes any number of channels).
// The deterministic scheduler ignores wake and re-evaluates ready() at
// every switch.
func (t *Task) wait(ready func() bool, wake func() <-chan struct{}, timeoutNs int64) (timedOut bool) {
	var chans func(buf []<-chan struct{}) []<-chan struct{}
	if wake != nil {
		chans = func(buf []<-chan struct{}) []<-chan struct{} { return append(buf, wake()) }
	}
	return t.waitOn(ready, chans, timeoutNs, true)
}

// waitChans is wait with any number of wake channels: wake appends the
// channels to watch to buf (any one closing means ready() may have
// changed) and returns it.
func (t *Task) waitChans(ready func() bool, wake func(buf []<-chan struct{}) []<-chan struct{}, timeoutNs int64) (timedOut bool) {
	return t.waitOn(ready, wake, timeoutNs, true)
}

// waitKillable is wait that signals do not end (Linux's TASK_KILLABLE):
// only ready(), a kill or the timeout. Used for group stop and vfork.
func (t *Task) waitKillable(ready func() bool, wake func() <-chan struct{}, timeoutNs int64) (timedOut bool) {
	var chans func(buf []<-chan struct{}) []<-chan struct{}
	if wake != nil {
		chans = func(buf []<-chan struct{}) []<-chan struct{} { return append(buf, wake()) }
	}
	return t.waitOn(ready, chans, timeoutNs, false)
}

// legacyPoll is how often a wait whose wake channel is nil re-checks its
// condition.
const legacyPoll = 50 * time.Millisecond

func (t *Task) waitOn(ready func() bool, wake func(buf []<-chan struct{}) []<-chan struct{}, timeoutNs int64, interruptible bool) (timedOut bool) {
	k := t.tg.k
	done := func() bool {
		return t.killed.Load() || interruptible && t.sigPending() || ready()
	}
	if k.det != nil {
		w := &detWait{ready: done, deadline: -1}
		if timeoutNs >= 0 {
			w.deadline = k.det.now() + timeoutNs
		}
		if done() {
			return false
		}
		k.loadChange(-1) // blocked: not in the load average
		defer k.loadChange(1)
		return k.det.block(t, w)
	}
	if done() {
		return false
	}
	if timeoutNs == 0 {
		return true
	}
	k.loadChange(-1)
	defer k.loadChange(1)
	var tc <-chan time.Time
	if timeoutNs > 0 {
		tm := time.NewTimer(time.Duration(timeoutNs))
		defer tm.Stop()
		tc = tm.C
	}
	var sigch chan struct{}
	arm := func() {
		t.notifyMu.Lock()
		sigch = make(chan struct{})
		t.notify = sigch
		t.notifyMu.Unlock()
	}
	arm()
	defer func() {
		t.notifyMu.Lock()
		t.notify = nil
		t.notifyMu.Unlock()
	}()
	var buf [4]<-chan struct{}
	var cases []reflect.SelectCase
	for {
		var chans []<-chan struct{}
		if wake != nil {
			chans = wake(buf[:0])
		}
		if done() {
			return false
		}
		var poll <-chan time.Time
		var pt *time.Timer
		for i, c := range chans {
			if c == nil {
				// No channel for this condition: re-check periodically.
				pt = time.NewTimer(legacyPoll)
				poll = pt.C
				chans = append(chans[:i:i], chans[i+1:]...)
				break
			}
		}
		switch len(chans) {
		case 0:
			select {
			case <-sigch:
			case <-tc:
				return !done()
			case <-poll:
			}
		case 1:
			select {
			case <-chans[0]:
			case <-sigch:
			case <-tc:
				return !done()
			case <-poll:
			}
		case 2:
			select {
			case <-chans[0]:
			case <-chans[1]:
			case <-sigch:
			case <-tc:
				return !done()
			case <-poll:
			}
		default:
			cases = cases[:0]
			cases = append(cases,
				reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(sigch)},
				reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(tc)},
				reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(poll)})
			for _, c := range chans {
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
			}
			if i, _, _ := reflect.Select(cases); i == 1 {
				return !done()
			}
		}
		if pt != nil {
			pt.Stop()
		}
		select {
		case <-sigch:
			arm() // a signal came: wait for the next one
		default:
		}
	}
}

// interruptWait makes a blocking wait of t re-check its condition at once
// (a signal arrived, or the task was killed). Deterministic waits
// re-check at every switch.
func (t *Task) interruptWait() {
	t.notifyMu.Lock()
	if t.notify != nil {
		close(t.notify)
		t.notify = nil
	}
	t.notifyMu.Unlock()
}
