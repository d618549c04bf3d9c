package tasks

import (
	"sync/atomic"
	"time"
)

// lazyTimer is the host clock's uprobes.Timer: time.AfterFunc with a
// Reset that only moves a deadline. The uretprobe model re-arms its
// ri_timer on every uretprobe hit (prepare_uretprobe's mod_timer); a
// runtime timer Reset takes the timer heap's lock and reads the clock
// through the runtime each time, which was a tenth of a hit's cost.
// Here the pending host timer, when it fires before the deadline,
// re-arms itself for the rest, so the callback runs at the deadline or
// later, as with time.AfterFunc, and Reset and Stop report whether the
// timer was pending, as time.Timer's do.
type lazyTimer struct {
	start time.Time // the clock's origin (monotonic)
	f     func()
	t     *time.Timer
	// due is the deadline in nanoseconds since start; 0 when the timer
	// is stopped or has fired.
	due atomic.Int64
}

func newLazyTimer(start time.Time, d time.Duration, f func()) *lazyTimer {
	l := &lazyTimer{start: start, f: f}
	l.due.Store(l.deadline(d))
	l.t = time.AfterFunc(d, l.fire)
	return l
}

// deadline is now + d on the timer's clock, never 0.
func (l *lazyTimer) deadline(d time.Duration) int64 {
	return max(int64(time.Since(l.start)+d), 1)
}

// fire runs on the host timer's goroutine.
func (l *lazyTimer) fire() {
	for {
		due := l.due.Load()
		if due == 0 {
			return // stopped (or already run)
		}
		if rem := due - int64(time.Since(l.start)); rem > 0 {
			l.t.Reset(time.Duration(rem)) // moved on by Reset
			return
		}
		if l.due.CompareAndSwap(due, 0) {
			l.f()
			return
		}
	}
}

func (l *lazyTimer) Reset(d time.Duration) bool {
	if l.due.Swap(l.deadline(d)) != 0 {
		return true // pending: fire moves on to the new deadline
	}
	l.t.Reset(d) // stopped or fired: arm the host timer again
	return false
}

func (l *lazyTimer) Stop() bool {
	l.t.Stop()
	return l.due.Swap(0) != 0
}
