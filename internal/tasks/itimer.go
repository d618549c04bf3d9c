package tasks

import (
	"encoding/binary"
	"time"

	"github.com/uvm-emu/uvm/internal/signals"
)

// ITIMER_REAL (setitimer, getitimer, alarm): a per-process timer that
// sends SIGALRM on the kernel's clock — a host timer in parallel mode, a
// virtual-time event of the deterministic scheduler otherwise.
// ITIMER_VIRTUAL and ITIMER_PROF (SIGVTALRM, SIGPROF) run on the process's
// CPU time (timers.go).

// itimerState is a process's ITIMER_REAL (protected by ThreadGroup.mu).
type itimerState struct {
	deadline int64 // uptimeNs when it fires; 0: disarmed
	interval int64 // reload value in ns; 0: one-shot
	gen      uint64
	host     *time.Timer
}

const (
	itimerReal    = 0
	itimerVirtual = 1
	itimerProf    = 2
)

// armItimer (re)arms or disarms the timer; value and interval in ns.
// Called with tg.mu held.
func (tg *ThreadGroup) armItimerLocked(value, interval int64) {
	it := &tg.itimer
	it.gen++
	if it.host != nil {
		it.host.Stop()
		it.host = nil
	}
	if value <= 0 {
		it.deadline, it.interval = 0, 0
		return
	}
	k := tg.k
	it.deadline = k.uptimeNs() + value
	it.interval = interval
	gen := it.gen
	if k.det != nil {
		k.det.addTimer(it.deadline, func() { tg.fireItimer(gen) })
		return
	}
	it.host = time.AfterFunc(time.Duration(value), func() { tg.fireItimer(gen) })
}

// fireItimer sends SIGALRM and reloads the timer.
func (tg *ThreadGroup) fireItimer(gen uint64) {
	tg.mu.Lock()
	if tg.itimer.gen != gen || tg.exiting {
		tg.mu.Unlock()
		return
	}
	interval := tg.itimer.interval
	if interval > 0 {
		tg.armItimerLocked(interval, interval)
	} else {
		tg.itimer.deadline = 0
	}
	tg.mu.Unlock()
	tg.sendSignal(signals.KernelInfo(signals.SIGALRM), nil)
}

func (tg *ThreadGroup) itimerRemaining() (value, interval int64) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.itimer.deadline == 0 {
		return 0, tg.itimer.interval
	}
	left := tg.itimer.deadline - tg.k.uptimeNs()
	if left <= 0 {
		left = 1000 // about to fire
	}
	return left, tg.itimer.interval
}

// timeval helpers: struct itimerval is two timevals (sec, usec).
func putItimerval(b []byte, interval, value int64) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(interval/1e9))
	le.PutUint64(b[8:], uint64(interval%1e9/1e3))
	le.PutUint64(b[16:], uint64(value/1e9))
	le.PutUint64(b[24:], uint64(value%1e9/1e3))
}

func (t *Task) sysGetitimer(which, addr uint64) uint64 {
	if which > itimerProf {
		return errRet(EINVAL)
	}
	v, i := t.tg.itimerGet(which)
	var b [32]byte
	putItimerval(b[:], i, v)
	return errOr0(t.writeBytes(addr, b[:]))
}

func (t *Task) sysSetitimer(which, newAddr, oldAddr uint64) uint64 {
	if which > itimerProf {
		return errRet(EINVAL)
	}
	var value, interval int64
	if newAddr != 0 {
		b, e := t.readBuf(newAddr, 32)
		if e != 0 {
			return errRet(e)
		}
		le := binary.LittleEndian
		isec, iusec := int64(le.Uint64(b[0:])), int64(le.Uint64(b[8:]))
		vsec, vusec := int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:]))
		if iusec < 0 || iusec >= 1e6 || vusec < 0 || vusec >= 1e6 || isec < 0 || vsec < 0 {
			return errRet(EINVAL)
		}
		interval, value = isec*1e9+iusec*1e3, vsec*1e9+vusec*1e3
	}
	if oldAddr != 0 {
		v, i := t.tg.itimerGet(which)
		var b [32]byte
		putItimerval(b[:], i, v)
		if e := t.writeBytes(oldAddr, b[:]); e != 0 {
			return errRet(e)
		}
	}
	if newAddr != 0 {
		if which != itimerReal {
			t.tg.cpuItimerSet(which, value, interval)
			return 0
		}
		t.tg.mu.Lock()
		t.tg.armItimerLocked(value, interval)
		t.tg.mu.Unlock()
	}
	return 0
}

// itimerGet is getitimer's value and interval for which.
func (tg *ThreadGroup) itimerGet(which uint64) (value, interval int64) {
	if which == itimerReal {
		return tg.itimerRemaining()
	}
	return tg.cpuItimerGet(which)
}

func (t *Task) sysAlarm(secs uint64) uint64 {
	v, _ := t.tg.itimerRemaining()
	t.tg.mu.Lock()
	t.tg.armItimerLocked(int64(secs)*1e9, 0)
	t.tg.mu.Unlock()
	left := (v + 5e8) / 1e9
	if v > 0 && left == 0 {
		left = 1
	}
	return uint64(left)
}
