package tasks

import (
	"encoding/binary"
	"maps"
	"slices"
	"sync"
	"time"
)

// eventfd and epoll, as far as language runtimes need them: Go's netpoller
// creates an epoll instance and an eventfd at its first pollable file and
// sleeps in epoll_pwait with a timeout while timers are pending. uvm's
// epoll watches eventfds; asking it to watch anything else fails with
// EPERM, as Linux does for regular files, and Go then uses blocking I/O on
// that descriptor.

// eventFD is an eventfd object (fs/eventfd.c).
type eventFD struct {
	// mu protects count; changed is closed and replaced on every write.
	mu        sync.Mutex
	count     uint64
	semaphore bool
	changed   chan struct{}
}

func newEventFD(initval uint64, semaphore bool) *eventFD {
	return &eventFD{count: initval, semaphore: semaphore, changed: make(chan struct{})}
}

func (e *eventFD) readable() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count > 0
}

// wakeup returns a channel closed at the next change.
func (e *eventFD) wakeup() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed
}

func (e *eventFD) notifyLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// epollInstance is an epoll file (fs/eventpoll.c), level-triggered.
type epollInstance struct {
	// mu protects interest.
	mu       sync.Mutex
	interest map[int32]epollItem
}

type epollItem struct {
	ev   *eventFD
	mask uint32
	data uint64
}

const (
	epollIN      = 0x1
	epollOUT     = 0x4
	epollET      = 1 << 31
	epollCtlAdd  = 1
	epollCtlDel  = 2
	epollCtlMod  = 3
	efdSemaphore = 1
)

func (t *Task) sysEventfd2(initval, flags uint64) uint64 {
	if flags&^(efdSemaphore|oNONBLOCK|oCLOEXEC) != 0 {
		return errRet(EINVAL)
	}
	f := &openFile{ops: &eventFile{ev: newEventFD(uint64(uint32(initval)), flags&efdSemaphore != 0)},
		path: "anon_inode:[eventfd]", flags: oRDWR | int(flags&oNONBLOCK)}
	fd, e := t.tg.fds.alloc(f, 0, flags&oCLOEXEC != 0)
	return retFD(fd, e)
}

// eventFile is an eventfd's open file.
type eventFile struct {
	fileBase
	ev *eventFD
}

// read takes the counter (or 1 of it, EFD_SEMAPHORE), blocking while it is
// zero; a signal ends the wait with ERESTARTSYS.
func (e *eventFile) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if n < 8 {
		return nil, EINVAL
	}
	ev := e.ev
	for {
		ev.mu.Lock()
		if ev.count > 0 {
			v := ev.count
			if ev.semaphore {
				v = 1
			}
			ev.count -= v
			ev.notifyLocked()
			ev.mu.Unlock()
			return binary.LittleEndian.AppendUint64(nil, v), 0
		}
		ev.mu.Unlock()
		if f.flags&oNONBLOCK != 0 {
			return nil, EAGAIN
		}
		t.wait(ev.readable, ev.wakeup, -1)
		if t.killed.Load() {
			return nil, EINTR
		}
		if t.sigPending() && !ev.readable() {
			return nil, Errno(erestartsys)
		}
	}
}

// write adds to the counter (EAGAIN rather than blocking at the maximum).
func (e *eventFile) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if len(b) < 8 {
		return 0, EINVAL
	}
	v := binary.LittleEndian.Uint64(b)
	if v == ^uint64(0) {
		return 0, EINVAL
	}
	ev := e.ev
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.count+v < ev.count || ev.count+v == ^uint64(0) {
		return 0, EAGAIN
	}
	ev.count += v
	ev.notifyLocked()
	return 8, 0
}

func (e *eventFile) poll(events uint16) uint16 {
	var rev uint16
	if e.ev.readable() {
		rev |= pollIN
	}
	return (rev | pollOUT) & events
}

// epollFile is an epoll instance's open file.
type epollFile struct {
	fileBase
	ep *epollInstance
}

func (t *Task) sysEpollCreate1(flags uint64) uint64 {
	if flags&^oCLOEXEC != 0 {
		return errRet(EINVAL)
	}
	f := &openFile{ops: &epollFile{ep: &epollInstance{interest: map[int32]epollItem{}}},
		path: "anon_inode:[eventpoll]", flags: oRDWR}
	fd, e := t.tg.fds.alloc(f, 0, flags&oCLOEXEC != 0)
	return retFD(fd, e)
}

func (t *Task) sysEpollCtl(epfd int32, op uint64, fd int32, evAddr uint64) uint64 {
	ef, ok := t.tg.fds.get(epfd)
	if !ok {
		return errRet(EBADF)
	}
	epf, isEpoll := ef.ops.(*epollFile)
	if !isEpoll {
		return errRet(EINVAL)
	}
	tf, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	if fd == epfd {
		return errRet(EINVAL)
	}
	ep := epf.ep
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch op {
	case epollCtlDel:
		if _, ok := ep.interest[fd]; !ok {
			return errRet(ENOENT)
		}
		delete(ep.interest, fd)
		return 0
	case epollCtlAdd, epollCtlMod:
	default:
		return errRet(EINVAL)
	}
	evf, isEvent := tf.ops.(*eventFile)
	if !isEvent {
		return errRet(EPERM)
	}
	b, e := t.readBuf(evAddr, 12)
	if e != 0 {
		return errRet(e)
	}
	_, exists := ep.interest[fd]
	if op == epollCtlAdd && exists {
		return errRet(EEXIST)
	}
	if op == epollCtlMod && !exists {
		return errRet(ENOENT)
	}
	ep.interest[fd] = epollItem{ev: evf.ev, mask: binary.LittleEndian.Uint32(b), data: binary.LittleEndian.Uint64(b[4:])}
	return 0
}

// sysEpollWait reports ready items, waiting up to timeoutMs (-1: forever).
func (t *Task) sysEpollWait(epfd int32, evAddr uint64, max int32, timeoutMs int64) uint64 {
	ef, ok := t.tg.fds.get(epfd)
	if !ok {
		return errRet(EBADF)
	}
	epf, isEpoll := ef.ops.(*epollFile)
	if !isEpoll || max <= 0 || max > 1<<16 {
		return errRet(EINVAL)
	}
	var deadline time.Time
	if timeoutMs >= 0 {
		deadline = time.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
	}
	var detDeadline int64
	if t.tg.k.det != nil && timeoutMs > 0 {
		detDeadline = t.tg.k.det.now() + timeoutMs*1e6
	}
	for {
		ep := epf.ep
		ep.mu.Lock()
		var out []byte
		var waits []<-chan struct{}
		n := int32(0)
		for _, fd := range slices.Sorted(maps.Keys(ep.interest)) { // not map order: --det
			it := ep.interest[fd]
			var rev uint32
			if it.mask&epollIN != 0 && it.ev.readable() {
				rev |= epollIN
			}
			if it.mask&epollOUT != 0 {
				rev |= epollOUT
			}
			if rev != 0 && n < max {
				var rec [12]byte
				binary.LittleEndian.PutUint32(rec[0:], rev)
				binary.LittleEndian.PutUint64(rec[4:], it.data)
				out = append(out, rec[:]...)
				n++
			}
			waits = append(waits, it.ev.wakeup())
		}
		ep.mu.Unlock()
		if n > 0 {
			return retOr(t.writeBytes(evAddr, out), uint64(n))
		}
		if timeoutMs == 0 || t.killed.Load() {
			return 0
		}
		rel := int64(-1)
		if timeoutMs > 0 {
			rel = int64(time.Until(deadline))
			if t.tg.k.det != nil {
				rel = detDeadline - t.tg.k.det.now()
			}
			if rel <= 0 {
				return 0
			}
		}
		anyReady := func() bool {
			ep.mu.Lock()
			defer ep.mu.Unlock()
			for _, it := range ep.interest {
				if it.mask&epollIN != 0 && it.ev.readable() || it.mask&epollOUT != 0 {
					return true
				}
			}
			return false
		}
		wake := func() <-chan struct{} {
			if len(waits) == 1 {
				return waits[0]
			}
			return nil
		}
		if t.wait(anyReady, wake, rel) {
			return 0
		}
		if t.sigPending() && !anyReady() {
			// epoll_wait is never restarted after a handler.
			return errRet(EINTR)
		}
	}
}
