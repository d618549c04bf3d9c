package tasks

import (
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A blocking open of a FIFO waits for the other end (fifo_open's
// wait_for_partner). Done on the guest thread itself it would hold the
// thread inside a host syscall where no signal reaches it and, in
// deterministic mode, keep every other guest thread from running, so the
// thread that would open the other end never does (os.TestFifoEOF opens
// both ends from two goroutines and hung). The guest thread instead
// waits as any blocked syscall does:
//
//   - in parallel mode the host open runs on a goroutine of its own, so
//     a partner outside uvm counts too;
//   - in deterministic mode the end is opened without blocking at once
//     and the wait is for a partner among the guests' own FIFO ends
//     (fifoTable), which is what the guests' order decides: a writer
//     waits until a non-blocking host open for writing succeeds (some
//     reader holds the FIFO), a reader until a guest holds the FIFO open
//     for writing or opened it for writing since the reader began to
//     wait (Linux's w_counter).

// fifoTable counts, per FIFO inode, the ends guests hold open and the
// opens for writing ever made, and passes readiness changes the guests
// cause (a write, a read, a close) to the other ends at once: their
// pollers see them only at their next poll, and an EPOLLET waiter must
// see every edge, in deterministic mode in guest order.
type fifoTable struct {
	mu sync.Mutex
	m  map[fifoKey]*fifoCount
}

type fifoKey struct{ dev, ino uint64 }

type fifoCount struct {
	writers    int    // guest ends open for writing now
	writeOpens uint64 // opens for writing so far (w_counter)
	waiting    int    // readers in openFIFODet
	ends       map[*hostFIFO]struct{}
}

func fifoKeyOf(f *os.File) (fifoKey, bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fifoKey{}, false
	}
	return fifoKey{uint64(st.Dev), st.Ino}, true
}

// entryLocked is k's counts, made on first use.
func (ft *fifoTable) entryLocked(k fifoKey) *fifoCount {
	if ft.m == nil {
		ft.m = map[fifoKey]*fifoCount{}
	}
	c := ft.m[k]
	if c == nil {
		c = &fifoCount{ends: map[*hostFIFO]struct{}{}}
		ft.m[k] = c
	}
	return c
}

// dropLocked forgets k once nothing refers to it.
func (ft *fifoTable) dropLocked(k fifoKey, c *fifoCount) {
	if len(c.ends) == 0 && c.waiting == 0 {
		delete(ft.m, k)
	}
}

// opened enters end h of FIFO k (writing: open for writing).
func (ft *fifoTable) opened(k fifoKey, h *hostFIFO, writing bool) {
	ft.mu.Lock()
	c := ft.entryLocked(k)
	c.ends[h] = struct{}{}
	if writing {
		c.writers++
		c.writeOpens++
	}
	ft.mu.Unlock()
	ft.notify(k, h)
}

// closed is opened's inverse at the end's release.
func (ft *fifoTable) closed(k fifoKey, h *hostFIFO, writing bool) {
	ft.mu.Lock()
	c := ft.m[k]
	if c == nil {
		ft.mu.Unlock()
		return
	}
	delete(c.ends, h)
	if writing {
		c.writers--
	}
	ft.dropLocked(k, c)
	ft.mu.Unlock()
	ft.notify(k, h)
}

// waiter counts a reader waiting in openFIFODet (delta +1 or -1).
func (ft *fifoTable) waiter(k fifoKey, delta int) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	c := ft.entryLocked(k)
	c.waiting += delta
	ft.dropLocked(k, c)
}

// notify tells every guest end of k but from that its readiness may have
// changed.
func (ft *fifoTable) notify(k fifoKey, from *hostFIFO) {
	ft.mu.Lock()
	var ends []*hostFIFO
	if c := ft.m[k]; c != nil {
		for h := range c.ends {
			if h != from {
				ends = append(ends, h)
			}
		}
	}
	ft.mu.Unlock()
	for _, h := range ends {
		h.changedNow()
	}
}

// writerState is the number of guest writers of k and its w_counter.
func (ft *fifoTable) writerState(k fifoKey) (int, uint64) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if c := ft.m[k]; c != nil {
		return c.writers, c.writeOpens
	}
	return 0, 0
}

// openMayBlock reports whether opening name of fsys with host flags
// would wait for a partner: a FIFO opened read-only or write-only
// without O_NONBLOCK (O_RDWR never waits).
func openMayBlock(fsys vfs, name string, hostFlags int) bool {
	if hostFlags&syscall.O_NONBLOCK != 0 || hostFlags&(os.O_RDONLY|os.O_WRONLY|os.O_RDWR) == os.O_RDWR {
		return false
	}
	st := fsys.stat
	if hostFlags&syscall.O_NOFOLLOW != 0 {
		st = fsys.lstat
	}
	fi, err := st(name)
	return err == nil && fi.Mode()&fs.ModeNamedPipe != 0
}

// openFIFOWait opens name of fsys (a FIFO, see openMayBlock) while t
// waits for the partner. A signal or kill ends the wait with ERESTARTSYS
// as Linux's interrupted fifo_open.
func (t *Task) openFIFOWait(fsys vfs, name string, hostFlags int, perm fs.FileMode) (*os.File, Errno) {
	if t.tg.k.det != nil {
		return t.openFIFODet(fsys, name, hostFlags, perm)
	}
	done := make(chan struct{})
	var f *os.File
	var err error
	go func() {
		f, err = fsys.open(name, hostFlags, perm)
		close(done)
	}()
	ready := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	t.wait(ready, func() <-chan struct{} { return done }, -1)
	if ready() {
		if err != nil {
			return nil, errnoOf(err)
		}
		return f, 0
	}
	// Interrupted: the host open still waits. Opening the other end
	// without blocking for a moment releases it; what it opened is
	// closed.
	other := os.O_RDONLY
	if hostFlags&(os.O_WRONLY|os.O_RDWR) == os.O_RDONLY {
		other = os.O_WRONLY
	}
	if p, perr := fsys.open(name, other|syscall.O_NONBLOCK, 0); perr == nil {
		<-done
		p.Close()
	}
	go func() {
		<-done
		if f != nil {
			f.Close()
		}
	}()
	return nil, Errno(erestartsys)
}

// openFIFODet is openFIFOWait in deterministic mode (see above).
func (t *Task) openFIFODet(fsys vfs, name string, hostFlags int, perm fs.FileMode) (*os.File, Errno) {
	nb := hostFlags | syscall.O_NONBLOCK
	if hostFlags&(os.O_WRONLY|os.O_RDWR) == os.O_WRONLY {
		var f *os.File
		var err error
		ready := func() bool {
			if f == nil {
				f, err = fsys.open(name, nb, perm)
			}
			return f != nil || errnoOf(err) != ENXIO
		}
		t.wait(ready, nil, -1)
		if f == nil {
			if errnoOf(err) == ENXIO {
				return nil, Errno(erestartsys)
			}
			return nil, errnoOf(err)
		}
		return f, 0
	}
	f, err := fsys.open(name, nb, perm)
	if err != nil {
		return nil, errnoOf(err)
	}
	k, ok := fifoKeyOf(f)
	if !ok {
		return f, 0
	}
	tab := &t.tg.k.fifos
	tab.waiter(k, 1) // keeps the counts while this reader waits
	defer tab.waiter(k, -1)
	writers, opens := tab.writerState(k)
	if writers > 0 {
		return f, 0
	}
	t.wait(func() bool {
		w, o := tab.writerState(k)
		return w > 0 || o != opens
	}, nil, -1)
	if w, o := tab.writerState(k); w == 0 && o == opens {
		f.Close()
		return nil, Errno(erestartsys)
	}
	return f, 0
}
