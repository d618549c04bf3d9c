package tasks

import (
	"encoding/binary"
	"sync"
)

// timerfd (fs/timerfd.c): a timer on CLOCK_REALTIME, CLOCK_MONOTONIC or
// CLOCK_BOOTTIME whose expirations are read from a file descriptor, on
// the kernel's clock (virtual with --det) through a ktimer.

type timerFD struct {
	fileBase
	k     *Kernel
	clock int32
	kt    *ktimer

	// mu protects the rest; changed is closed at the next change.
	mu       sync.Mutex
	expires  int64 // uptime ns; 0: disarmed
	interval int64
	ticks    uint64
	changed  chan struct{}
}

const (
	tfdTimerAbstime = 1
	tfdCancelOnSet  = 2
	tfdCloexec      = oCLOEXEC
	tfdNonblock     = oNONBLOCK
)

func (t *Task) sysTimerfdCreate(clock int32, flags uint64) uint64 {
	switch clock {
	case clockRealtime, clockMonotonic, clockBoottime:
	case clockRealtimeAlarm, clockBoottimeAlarm:
		return errRet(EPERM)
	default:
		return errRet(EINVAL)
	}
	if flags&^uint64(tfdCloexec|tfdNonblock) != 0 {
		return errRet(EINVAL)
	}
	tf := &timerFD{k: t.tg.k, clock: clock}
	tf.kt = tf.k.newKTimer(tf.fire)
	f := &openFile{ops: tf, path: "anon_inode:[timerfd]", flags: oRDWR | int(flags&tfdNonblock)}
	fd, e := t.tg.fds.alloc(f, 0, flags&tfdCloexec != 0)
	return retFD(fd, e)
}

// timerFDOf returns fd's timerfd (EBADF, or EINVAL for another kind).
func (t *Task) timerFDOf(fd int32) (*timerFD, Errno) {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return nil, EBADF
	}
	tf, ok := f.ops.(*timerFD)
	if !ok {
		return nil, EINVAL
	}
	return tf, 0
}

func (tf *timerFD) notifyLocked() {
	if tf.changed != nil {
		close(tf.changed)
		tf.changed = nil
	}
}

// wakeup returns a channel closed at the next change of the timer.
func (tf *timerFD) wakeup() <-chan struct{} {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.changed == nil {
		tf.changed = make(chan struct{})
	}
	return tf.changed
}

func (tf *timerFD) fire() {
	tf.mu.Lock()
	now := tf.k.uptimeNs()
	if tf.expires == 0 || now < tf.expires {
		tf.mu.Unlock()
		return // disarmed, or a stale host timer
	}
	n := uint64(1)
	if tf.interval > 0 {
		n += uint64((now - tf.expires) / tf.interval)
		tf.expires += int64(n) * tf.interval
	} else {
		tf.expires = 0
	}
	tf.ticks += n
	next := tf.expires
	tf.notifyLocked()
	tf.mu.Unlock()
	if next != 0 {
		tf.kt.arm(next)
	}
}

func (tf *timerFD) remainingLocked() (value, interval int64) {
	if tf.expires == 0 {
		return 0, tf.interval
	}
	return max(tf.expires-tf.k.uptimeNs(), 1), tf.interval
}

func (tf *timerFD) readable() bool {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	return tf.ticks > 0
}

func (tf *timerFD) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if n < 8 {
		return nil, EINVAL
	}
	for {
		tf.mu.Lock()
		if tf.ticks > 0 {
			v := tf.ticks
			tf.ticks = 0
			tf.notifyLocked()
			tf.mu.Unlock()
			return binary.LittleEndian.AppendUint64(nil, v), 0
		}
		tf.mu.Unlock()
		if f.flags&oNONBLOCK != 0 {
			return nil, EAGAIN
		}
		t.wait(tf.readable, tf.wakeup, -1)
		if t.killed.Load() {
			return nil, EINTR
		}
		if t.sigPending() && !tf.readable() {
			return nil, Errno(erestartsys)
		}
	}
}

func (tf *timerFD) poll(events uint16) uint16 {
	if tf.readable() {
		return events & pollIN
	}
	return 0
}

func (tf *timerFD) release() {
	tf.mu.Lock()
	tf.expires = 0
	tf.notifyLocked()
	tf.mu.Unlock()
	tf.kt.stop()
}

func (t *Task) sysTimerfdSettime(fd int32, flags, newAddr, oldAddr uint64) uint64 {
	tf, e := t.timerFDOf(fd)
	if e != 0 {
		return errRet(e)
	}
	if flags&^uint64(tfdTimerAbstime|tfdCancelOnSet) != 0 {
		return errRet(EINVAL)
	}
	interval, value, e := t.readItimerspec(newAddr)
	if e != 0 {
		return errRet(e)
	}
	k := t.tg.k
	tf.mu.Lock()
	ov, oi := tf.remainingLocked()
	var expires int64
	if value != 0 {
		if flags&tfdTimerAbstime != 0 {
			expires = max(value-k.clockOffset(tf.clock), 1)
		} else {
			expires = k.uptimeNs() + value
		}
	} else {
		interval = 0
	}
	tf.expires, tf.interval, tf.ticks = expires, interval, 0
	tf.notifyLocked()
	tf.mu.Unlock()
	if expires != 0 {
		tf.kt.arm(expires)
	} else {
		tf.kt.stop()
	}
	if oldAddr != 0 {
		if e := t.writeItimerspec(oldAddr, oi, ov); e != 0 {
			return errRet(e)
		}
	}
	return 0
}

func (t *Task) sysTimerfdGettime(fd int32, addr uint64) uint64 {
	tf, e := t.timerFDOf(fd)
	if e != 0 {
		return errRet(e)
	}
	tf.mu.Lock()
	v, i := tf.remainingLocked()
	tf.mu.Unlock()
	return errOr0(t.writeItimerspec(addr, i, v))
}

func init() {
	registerSyscall("timerfd_create", func(t *Task, a [6]uint64) uint64 { return t.sysTimerfdCreate(int32(a[0]), a[1]) })
	registerSyscall("timerfd_settime", func(t *Task, a [6]uint64) uint64 {
		return t.sysTimerfdSettime(int32(a[0]), a[1], a[2], a[3])
	})
	registerSyscall("timerfd_gettime", func(t *Task, a [6]uint64) uint64 { return t.sysTimerfdGettime(int32(a[0]), a[1]) })
}
