package tasks

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvm-emu/uvm/internal/signals"
)

// hostFIFO is a host FIFO opened by path. A plain *os.File read would
// block the guest thread inside the host read (deaf to signals, SIGKILL
// and the guest's own O_NONBLOCK) and cannot tell epoll when it becomes
// ready. hostFIFO keeps the host descriptor non-blocking, answers the
// guest's O_NONBLOCK itself, blocks through Task.wait, and reports
// readiness changes (pollWaker) from a poller goroutine that watches the
// descriptor with poll(2) while the file is open.
type hostFIFO struct {
	*hostFile
	fd int

	// mu protects changed, last, polling and closed.
	mu      sync.Mutex
	changed chan struct{} // closed and replaced when the readiness changes
	last    int16
	polling bool
	closed  bool

	// tab counts this end among the guests' (fifoTable; nil: not
	// counted), under key, as a writer when writing. det: no poller
	// (deterministic mode: only the guests' own changes, through tab,
	// close changed).
	tab     *fifoTable
	key     fifoKey
	writing bool
	det     bool
}

// count enters the end in tab (see fifoTable) until its release.
func (h *hostFIFO) count(tab *fifoTable, writing, det bool) {
	k, ok := fifoKeyOf(h.f)
	if !ok {
		return
	}
	h.tab, h.key, h.writing, h.det = tab, k, writing, det
	tab.opened(k, h, writing)
}

// changedNow signals a readiness change (another guest end's write,
// read or close).
func (h *hostFIFO) changedNow() {
	cur := h.revents()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = cur
	close(h.changed)
	h.changed = make(chan struct{})
}

// touched tells the other guest ends of the FIFO that this one changed
// what they may see.
func (h *hostFIFO) touched() {
	if h.tab != nil {
		h.tab.notify(h.key, h)
	}
}

// newHostFIFO wraps f if it is a FIFO (nil otherwise).
func newHostFIFO(f *os.File) *hostFIFO {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if sc.Control(func(p uintptr) { fd = int(p) }) != nil || fd < 0 || unix.SetNonblock(fd, true) != nil {
		return nil
	}
	return &hostFIFO{hostFile: &hostFile{f: f}, fd: fd, changed: make(chan struct{})}
}

// hostPollMask is what the FIFO side reports: data, room, hang-up, error.
const hostPollMask = unix.POLLIN | unix.POLLOUT | unix.POLLHUP | unix.POLLERR

func (h *hostFIFO) revents() int16 {
	fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN | unix.POLLOUT}}
	if n, err := unix.Poll(fds, 0); err != nil || n == 0 {
		return 0
	}
	return fds[0].Revents & hostPollMask
}

func (h *hostFIFO) poll(events uint16) uint16 {
	return uint16(h.revents()) & (events | pollHUP | pollERR)
}

// wakeup starts the poller on first use; the channel closes at the next
// change of the descriptor's readiness.
func (h *hostFIFO) wakeup() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.polling && !h.closed && !h.det {
		h.polling = true
		h.last = h.revents()
		go h.pollLoop()
	}
	return h.changed
}

// sync records the descriptor's readiness now and signals it if it
// changed. read and write call it at EAGAIN: the guest just drained the
// FIFO (or filled it), which the poller, sleeping between its polls,
// may not see before the other end writes again, and an EPOLLET waiter
// would then wait for a change that was never reported.
func (h *hostFIFO) sync() {
	cur := h.revents()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.polling || cur == h.last {
		return
	}
	h.last = cur
	close(h.changed)
	h.changed = make(chan struct{})
}

// pollLoop polls the host descriptor (with a timeout, so that release
// ends it) and signals every change until the file is released.
func (h *hostFIFO) pollLoop() {
	for {
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN | unix.POLLOUT}}
		h.mu.Lock()
		last, closed := h.last, h.closed
		h.mu.Unlock()
		if closed {
			return
		}
		n, err := unix.Poll(fds, 50)
		if err != nil {
			continue
		}
		// A timeout is the state "nothing ready": a change too when
		// the last state was ready (the guest drained the FIFO), so
		// the next write is seen as the change it is.
		cur := int16(0)
		if n != 0 {
			cur = fds[0].Revents & hostPollMask
		}
		if cur == last {
			if cur != 0 {
				// Still the same state (e.g. readable while nobody
				// reads): do not spin on a level-triggered answer.
				time.Sleep(20 * time.Millisecond)
			}
			continue
		}
		h.mu.Lock()
		h.last = cur
		close(h.changed)
		h.changed = make(chan struct{})
		h.mu.Unlock()
	}
}

// await blocks t until the FIFO reports one of want (or a signal or kill
// interrupts it: ERESTARTSYS).
func (h *hostFIFO) await(t *Task, want int16) Errno {
	ready := func() bool { return h.revents()&(want|unix.POLLHUP|unix.POLLERR) != 0 }
	t.wait(ready, h.wakeup, -1)
	if t.killed.Load() || (t.sigPending() && !ready()) {
		return Errno(erestartsys)
	}
	return 0
}

func (h *hostFIFO) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if off >= 0 {
		return nil, ESPIPE
	}
	b := make([]byte, n)
	for {
		got, err := unix.Read(h.fd, b)
		switch {
		case err == nil:
			h.touched()
			return b[:got], 0
		case err == unix.EINTR:
			continue
		case err != unix.EAGAIN:
			return nil, errnoOf(err)
		}
		h.sync()
		if f.flags&oNONBLOCK != 0 {
			return nil, EAGAIN
		}
		if e := h.await(t, unix.POLLIN); e != 0 {
			return nil, e
		}
	}
}

func (h *hostFIFO) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if off >= 0 {
		return 0, ESPIPE
	}
	done := 0
	for done < len(b) {
		got, err := unix.Write(h.fd, b[done:])
		switch {
		case err == nil:
			done += got
			h.touched()
			continue
		case err == unix.EINTR:
			continue
		case err == unix.EPIPE:
			t.tg.sendSignal(signals.KillInfo(signals.SIGPIPE, signals.SI_USER, t.tg.pid, t.tg.k.uid()), t)
			return doneCount(done, EPIPE)
		case err != unix.EAGAIN:
			return doneCount(done, errnoOf(err))
		}
		h.sync()
		if f.flags&oNONBLOCK != 0 {
			return doneCount(done, EAGAIN)
		}
		if e := h.await(t, unix.POLLOUT); e != 0 {
			return doneCount(done, e)
		}
	}
	return uint64(done), 0
}

// doneCount is a partial write's count, or the error when nothing went.
func doneCount(done int, e Errno) (uint64, Errno) {
	if done > 0 {
		return uint64(done), 0
	}
	return 0, e
}

func (h *hostFIFO) release() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	if h.tab != nil {
		h.tab.closed(h.key, h, h.writing)
	}
	h.hostFile.release()
}
