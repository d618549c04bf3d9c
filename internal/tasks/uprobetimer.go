package tasks

import (
	"sync"
	"sync/atomic"
	"time"
)

// lazyTimer is the host clock's uprobes.Timer: time.AfterFunc with a
// Reset that costs two loads in the common case. The uretprobe model
// re-arms its ri_timer on every uretprobe hit (prepare_uretprobe's
// mod_timer). The kernel's mod_timer is cheap there because jiffies is a
// memory load and a timer re-armed within the same jiffy is left alone;
// a runtime timer's Reset takes the timer heap's lock and reads the
// clock, and even a clock read alone (about 25 ns through the vDSO on a
// virtual machine) was a tenth of a uretprobe hit.
//
// So a Reset of a pending timer with the period it was armed with only
// marks it touched. The host timer checks every period/4 (the slack):
// a check that finds the timer touched clears the mark and counts the
// quiet time from itself. A check that finds it untouched for a whole
// period runs the callback. The last Reset came before the check that
// saw it, so the callback runs at the deadline of the last Reset or
// later (at most slack later), as with time.AfterFunc.
//
// Reset and Stop report whether the timer was pending, as time.Timer's
// do, except that a Reset racing with the check that runs the callback
// may report it pending (then the callback runs once, as after a Reset
// just too late). The uprobes model ignores the answer: its ri_timer
// callback is made to run concurrently with hits.
type lazyTimer struct {
	start time.Time // the clock's origin (monotonic)
	f     func()
	t     *time.Timer

	// armed is the period (ns) of the pending timer; 0 when it is
	// stopped or has run. Written under mu; read by Reset's fast path.
	armed atomic.Int64
	// touched: a Reset since the last check.
	touched atomic.Bool

	mu sync.Mutex // serialises arming, Stop and the checks
	// quietFrom is when the time without Resets began (ns since
	// start). Protected by mu.
	quietFrom int64
}

func newLazyTimer(start time.Time, d time.Duration, f func()) *lazyTimer {
	l := &lazyTimer{start: start, f: f}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t = time.AfterFunc(l.armLocked(d), l.fire)
	return l
}

func (l *lazyTimer) now() int64 { return int64(time.Since(l.start)) }

// slack is the interval between a pending timer's checks.
func slack(period int64) time.Duration { return time.Duration(max(period/4, 1)) }

// armLocked makes the timer pending with period d from now and returns
// the wait until its first check.
func (l *lazyTimer) armLocked(d time.Duration) time.Duration {
	p := max(int64(d), 1)
	l.quietFrom = l.now()
	l.touched.Store(false)
	l.armed.Store(p)
	return min(time.Duration(p), slack(p))
}

// fire is a check; it runs on the host timer's goroutine.
func (l *lazyTimer) fire() {
	l.mu.Lock()
	p := l.armed.Load()
	if p == 0 {
		l.mu.Unlock()
		return // stopped
	}
	now := l.now()
	if l.touched.Swap(false) {
		l.quietFrom = now
	}
	if rem := l.quietFrom + p - now; rem > 0 {
		l.t.Reset(min(time.Duration(rem), slack(p)))
		l.mu.Unlock()
		return
	}
	l.armed.Store(0)
	l.mu.Unlock()
	l.f()
}

func (l *lazyTimer) Reset(d time.Duration) bool {
	if l.armed.Load() == int64(d) {
		if !l.touched.Load() {
			l.touched.Store(true)
		}
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	pending := l.armed.Load() != 0
	l.t.Reset(l.armLocked(d))
	return pending
}

func (l *lazyTimer) Stop() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Stop()
	l.touched.Store(false)
	return l.armed.Swap(0) != 0
}
