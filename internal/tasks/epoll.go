package tasks

import (
	"encoding/binary"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"
)

// eventfd and epoll (fs/eventfd.c, fs/eventpoll.c). epoll watches any
// file whose kind can tell when its readiness changes (pollWaker):
// eventfds, pipes and sockets; asking it to watch anything else (a
// regular file, a directory) fails with EPERM, as Linux does for regular
// files, and Go then uses blocking I/O on that descriptor.

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

func (e *eventFile) wakeup() <-chan struct{} { return e.ev.wakeup() }

func (e *eventFile) poll(events uint16) uint16 {
	var rev uint16
	if e.ev.readable() {
		rev |= pollIN
	}
	return (rev | pollOUT) & events
}

// pollWaker is a file kind whose readiness epoll can wait for: wakeup
// returns a channel closed at the next change of the file's readiness.
// Kinds that implement it: eventFile, pipeEnd, sock.
type pollWaker interface {
	wakeup() <-chan struct{}
}

// epollInstance is an epoll file. Items are level-triggered unless
// EPOLLET (reported again only after a readiness change since the last
// report) or EPOLLONESHOT (disabled after one report until
// EPOLL_CTL_MOD).
type epollInstance struct {
	// mu protects interest, the items and changed.
	mu       sync.Mutex
	interest map[int32]*epollItem
	// changed is closed and replaced at every EPOLL_CTL_ADD and
	// EPOLL_CTL_MOD. A waiter sleeps on the wake channels of the items it
	// scanned, which say nothing of an item added (or re-armed) after its
	// scan; this channel is the rest of what Linux's ep_insert and
	// ep_modify do when the new item is ready: wake the instance's wait
	// queue, so the waiter scans again.
	changed chan struct{}
}

func newEpollInstance() *epollInstance {
	return &epollInstance{interest: map[int32]*epollItem{}, changed: make(chan struct{})}
}

type epollItem struct {
	f    *openFile
	w    pollWaker
	mask uint32
	data uint64
	// seen is the waker's channel at the item's last report (EPOLLET);
	// nil: report whenever ready.
	seen     <-chan struct{}
	disabled bool // EPOLLONESHOT reported
}

const (
	epollIN       = 0x1
	epollPRI      = 0x2
	epollOUT      = 0x4
	epollERR      = 0x8
	epollHUP      = 0x10
	epollRDNORM   = 0x40
	epollRDBAND   = 0x80
	epollWRNORM   = 0x100
	epollWRBAND   = 0x200
	epollMSG      = 0x400
	epollRDHUP    = 0x2000
	epollONESHOT  = 1 << 30
	epollET       = 1 << 31
	epollCtlAdd   = 1
	epollCtlDel   = 2
	epollCtlMod   = 3
	efdSemaphore  = 1
	epollPollBits = epollIN | epollPRI | epollOUT | epollERR | epollHUP | epollRDHUP
)

// epollFile is an epoll instance's open file.
type epollFile struct {
	fileBase
	ep *epollInstance
}

// epollEventSize is sizeof(struct epoll_event): packed (12 bytes) on
// x86-64, naturally aligned (16, data at 8) on arm64.
func (t *Task) epollEventSize() (size, dataOff uint64) {
	return t.tg.arch.epollEventSize, t.tg.arch.epollDataOff
}

func (t *Task) sysEpollCreate1(flags uint64) uint64 {
	if flags&^oCLOEXEC != 0 {
		return errRet(EINVAL)
	}
	f := &openFile{ops: &epollFile{ep: newEpollInstance()},
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
	var mask uint32
	var data uint64
	if op == epollCtlAdd || op == epollCtlMod {
		size, dataOff := t.epollEventSize()
		b, e := t.readBuf(evAddr, size)
		if e != 0 {
			return errRet(e)
		}
		mask, data = binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint64(b[dataOff:])
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch op {
	case epollCtlDel:
		if it, ok := ep.interest[fd]; !ok || it.f != tf {
			return errRet(ENOENT)
		}
		delete(ep.interest, fd)
		return 0
	case epollCtlAdd, epollCtlMod:
	default:
		return errRet(EINVAL)
	}
	w, canWait := tf.ops.(pollWaker)
	if !canWait {
		if _, nested := tf.ops.(*epollFile); nested {
			t.sockUnimpl("epoll_ctl on an epoll descriptor (nested epoll)")
		}
		return errRet(EPERM)
	}
	it, exists := ep.interest[fd]
	if exists && it.f != tf {
		exists = false // the descriptor was closed and reused
	}
	if op == epollCtlAdd && exists {
		return errRet(EEXIST)
	}
	if op == epollCtlMod && !exists {
		return errRet(ENOENT)
	}
	ep.interest[fd] = &epollItem{f: tf, w: w, mask: mask, data: data}
	close(ep.changed)
	ep.changed = make(chan struct{})
	return 0
}

// readyEvents is what item it reports now (0: nothing).
func (it *epollItem) readyEvents() (rev uint32, ch <-chan struct{}) {
	if it.disabled {
		return 0, nil
	}
	ch = it.w.wakeup()
	if it.mask&epollET != 0 && it.seen != nil {
		select {
		case <-it.seen:
		default:
			return 0, ch // no change since the last report
		}
	}
	want := it.mask&epollPollBits | epollERR | epollHUP
	pm := uint32(it.f.ops.poll(uint16(want)))
	rev = pm & want
	if pm&epollIN != 0 {
		rev |= it.mask & epollRDNORM
	}
	if pm&epollOUT != 0 {
		rev |= it.mask & epollWRNORM
	}
	return rev, ch
}

// scan reports up to max ready items in fd order (not map order: --det),
// updating EPOLLET/EPOLLONESHOT state when report is set; it returns the
// records, their count and the channels to sleep on: the items' wake
// channels and the instance's own (an item added or modified).
func (t *Task) epollScan(ep *epollInstance, max int32, report bool) (out []byte, n int32, waits []<-chan struct{}) {
	size, dataOff := t.epollEventSize()
	ep.mu.Lock()
	defer ep.mu.Unlock()
	waits = append(waits, ep.changed)
	for _, fd := range slices.Sorted(maps.Keys(ep.interest)) {
		it := ep.interest[fd]
		if f, ok := t.tg.fds.get(fd); !ok || f != it.f {
			// Closed: Linux drops the item with the file's last close.
			if report {
				delete(ep.interest, fd)
			}
			continue
		}
		rev, ch := it.readyEvents()
		if ch != nil {
			waits = append(waits, ch)
		}
		if rev == 0 || n >= max {
			continue
		}
		n++
		if !report {
			continue
		}
		rec := make([]byte, size)
		binary.LittleEndian.PutUint32(rec, rev)
		binary.LittleEndian.PutUint64(rec[dataOff:], it.data)
		out = append(out, rec...)
		if it.mask&epollET != 0 {
			it.seen = ch
		}
		if it.mask&epollONESHOT != 0 {
			it.disabled = true
		}
	}
	return out, n, waits
}

// anyClosed returns a channel closed when any of chans is (and a stop
// function that ends the helper goroutine).
func anyClosed(chans []<-chan struct{}) (<-chan struct{}, func()) {
	if len(chans) == 1 {
		return chans[0], func() {}
	}
	out, stop := make(chan struct{}), make(chan struct{})
	cases := make([]reflect.SelectCase, 0, len(chans)+1)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(stop)})
	for _, c := range chans {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
	}
	go func() {
		if i, _, _ := reflect.Select(cases); i != 0 {
			close(out)
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { close(stop) }) }
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
	ep := epf.ep
	for {
		out, n, waits := t.epollScan(ep, max, true)
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
			_, n, _ := t.epollScan(ep, 1, false)
			return n > 0
		}
		var wake func() <-chan struct{}
		stop := func() {}
		if t.tg.k.det == nil {
			var ch <-chan struct{}
			ch, stop = anyClosed(waits)
			wake = func() <-chan struct{} { return ch }
		}
		timedOut := t.wait(anyReady, wake, rel)
		stop()
		if timedOut {
			return 0
		}
		if t.sigPending() && !anyReady() {
			// epoll_wait is never restarted after a handler.
			return errRet(EINTR)
		}
	}
}
