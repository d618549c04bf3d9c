package tasks

import (
	"encoding/binary"
	"math"
	"sync"
)

// POSIX record locks (fcntl F_GETLK/F_SETLK/F_SETLKW and the open file
// description forms F_OFD_*), shared between uvm's guest processes (not
// with host processes), as fs/locks.c keeps them: one list per inode,
// keyed by the file's (dev, ino) as the guest sees it. A lock's owner is
// the process's descriptor table (Linux's files_struct; threads share
// it, fork makes a new one), or the open file description for the OFD
// commands. Setting a range splits the owner's locks it overlaps and
// merges it with the owner's adjacent or overlapping locks of the same
// type. A process's locks on an inode go when it closes any descriptor
// of that inode (and so at exit); OFD locks go with the last descriptor
// of their description. F_SETLKW sleeps until no other owner's lock
// conflicts, interruptibly, and fails with EDEADLK when the owner of the
// blocking lock is itself waiting, through at most ten such owners, for
// a lock of the caller (posix_locks_deadlock).

const (
	fOFD_GETLK  = 36
	fOFD_SETLK  = 37
	fOFD_SETLKW = 38

	lockRD = 0 // F_RDLCK
	lockWR = 1 // F_WRLCK
	lockUL = 2 // F_UNLCK

	// EDEADLK is "resource deadlock would occur" (asm-generic).
	EDEADLK Errno = 35

	offsetMax     = math.MaxInt64 // OFFSET_MAX: a lock to the end of the file
	maxDeadlkIter = 10            // MAX_DEADLK_ITERATIONS
)

// plock is one lock: bytes start..end (inclusive) of an inode.
type plock struct {
	owner      any   // *fdTable or *openFile (OFD)
	pid        int32 // l_pid as F_GETLK reports it (-1 for OFD locks)
	start, end int64
	write      bool
}

func (l *plock) conflicts(o *plock) bool {
	return l.owner != o.owner && (l.write || o.write) && l.start <= o.end && o.start <= l.end
}

// plockTable is the kernel's record lock table (protected by mu).
type plockTable struct {
	mu    sync.Mutex
	locks map[flockKey][]plock
	// held counts each owner's locks (so a close by an owner without
	// any needs no stat); waiting is the owner each blocked
	// process-owned F_SETLKW waits for (deadlock detection).
	held    map[any]int
	waiting map[*fdTable]any
	changed chan struct{}
}

func (pt *plockTable) wakeup() <-chan struct{} {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.changed == nil {
		pt.changed = make(chan struct{})
	}
	return pt.changed
}

func (pt *plockTable) notifyLocked() {
	if pt.changed != nil {
		close(pt.changed)
		pt.changed = nil
	}
}

// conflictLocked returns the first lock of another owner that conflicts with l.
func (pt *plockTable) conflictLocked(key flockKey, l *plock) (plock, bool) {
	for _, o := range pt.locks[key] {
		if l.conflicts(&o) {
			return o, true
		}
	}
	return plock{}, false
}

// setLocked replaces l.owner's locks on l's range by l (lockUL: removes them).
func (pt *plockTable) setLocked(key flockKey, l plock, typ int) {
	old := pt.locks[key]
	out := make([]plock, 0, len(old)+2)
	for _, o := range old {
		if o.owner != l.owner {
			out = append(out, o)
			continue
		}
		adjacent := o.end != offsetMax && o.end+1 == l.start || l.end != offsetMax && l.end+1 == o.start
		overlap := o.start <= l.end && l.start <= o.end
		if typ != lockUL && o.write == l.write && (overlap || adjacent) {
			// Merge: the new lock grows to cover o.
			l.start, l.end = min(l.start, o.start), max(l.end, o.end)
			pt.held[o.owner]--
			continue
		}
		if !overlap {
			out = append(out, o)
			continue
		}
		pt.held[o.owner]--
		if o.start < l.start { // the part before the new range stays
			p := o
			p.end = l.start - 1
			out = append(out, p)
			pt.held[o.owner]++
		}
		if o.end > l.end { // and the part after it
			p := o
			p.start = l.end + 1
			out = append(out, p)
			pt.held[o.owner]++
		}
	}
	if typ != lockUL {
		out = append(out, l)
		pt.held[l.owner]++
	}
	if pt.held[l.owner] <= 0 {
		delete(pt.held, l.owner)
	}
	if len(out) == 0 {
		delete(pt.locks, key)
	} else {
		pt.locks[key] = out
	}
	pt.notifyLocked()
}

// removeOwner drops owner's locks on key (every inode if key is nil).
func (pt *plockTable) removeOwner(owner any, key *flockKey) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.held[owner] == 0 {
		return
	}
	for k, ls := range pt.locks {
		if key != nil && k != *key {
			continue
		}
		out := ls[:0]
		for _, l := range ls {
			if l.owner == owner {
				pt.held[owner]--
			} else {
				out = append(out, l)
			}
		}
		if len(out) == 0 {
			delete(pt.locks, k)
		} else {
			pt.locks[k] = out
		}
	}
	if pt.held[owner] <= 0 {
		delete(pt.held, owner)
	}
	pt.notifyLocked()
}

// any reports whether any record lock is held.
func (pt *plockTable) any() bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return len(pt.locks) > 0
}

func (pt *plockTable) holds(owner any) bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.held[owner] > 0
}

// deadlockLocked reports whether waiting for blocker would close a cycle
// of process-owned waits back to me.
func (pt *plockTable) deadlockLocked(me *fdTable, blocker any) bool {
	for i := 0; i < maxDeadlkIter; i++ {
		b, ok := blocker.(*fdTable)
		if !ok {
			return false
		}
		if b == me {
			return true
		}
		if blocker, ok = pt.waiting[b]; !ok {
			return false
		}
	}
	return false
}

// closedBy drops the process-owned locks of fds on f's inode (a close of
// any descriptor of it, as locks_remove_posix does in filp_close).
func (k *Kernel) closedBy(fds *fdTable, f *openFile) {
	if !k.plocks.holds(fds) {
		return
	}
	key, ok := k.lockKeyOf(f)
	if !ok {
		return
	}
	k.plocks.removeOwner(fds, &key)
}

// lockKeyOf is the inode of f as locks know it: the key of a lock taken
// through f, else the (dev, ino) its host file stats to.
func (k *Kernel) lockKeyOf(f *openFile) (flockKey, bool) {
	if p := f.plockKey.Load(); p != nil {
		return *p, true
	}
	h, ok := f.hostOS()
	if !ok {
		return flockKey{}, false
	}
	fi, err := h.Stat()
	if err != nil {
		return flockKey{}, false
	}
	st := statFromInfo(fi)
	k.virtualize(&st, f.path)
	return flockKey{st.dev, st.ino}, true
}

// struct flock (the same on arm64 and x86-64): l_type, l_whence (shorts),
// l_start at 8, l_len at 16, l_pid at 24; 32 bytes.
const flockSize = 32

func (t *Task) sysFcntlLock(f *openFile, cmd, arg uint64) uint64 {
	b, e := t.readBuf(arg, flockSize)
	if e != 0 {
		return errRet(e)
	}
	le := binary.LittleEndian
	typ, whence := int(int16(le.Uint16(b[0:]))), int(int16(le.Uint16(b[2:])))
	start, length := int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:]))
	ofd := cmd == fOFD_GETLK || cmd == fOFD_SETLK || cmd == fOFD_SETLKW
	if ofd && int32(le.Uint32(b[24:])) != 0 {
		return errRet(EINVAL)
	}
	if typ != lockRD && typ != lockWR && typ != lockUL {
		return errRet(EINVAL)
	}
	// flock_to_posix_lock: the range from l_whence, l_start and l_len.
	switch whence {
	case 0:
	case 1, 2:
		var base int64
		if whence == 1 {
			pos, e := f.ops.seek(t, f, 0, 1)
			if e != 0 {
				return errRet(e)
			}
			base = pos
		} else {
			st, e := t.statFile(f)
			if e != 0 {
				return errRet(e)
			}
			base = st.size
		}
		if start > offsetMax-base {
			return errRet(EOVERFLOW)
		}
		start += base
	default:
		return errRet(EINVAL)
	}
	if start < 0 {
		return errRet(EINVAL)
	}
	end := int64(offsetMax)
	switch {
	case length > 0:
		if length-1 > offsetMax-start {
			return errRet(EOVERFLOW)
		}
		end = start + length - 1
	case length < 0:
		if start+length < 0 {
			return errRet(EINVAL)
		}
		end = start - 1
		start += length
	}
	st, e := t.statFile(f)
	if e != 0 {
		return errRet(e)
	}
	key := flockKey{st.dev, st.ino}
	l := plock{owner: t.tg.fds, pid: t.tg.pid, start: start, end: end, write: typ == lockWR}
	if ofd {
		l.owner, l.pid = f, -1
	}
	pt := &t.tg.k.plocks
	if cmd == fGETLK || cmd == fOFD_GETLK {
		if typ == lockUL {
			return errRet(EINVAL)
		}
		pt.mu.Lock()
		c, found := pt.conflictLocked(key, &l)
		pt.mu.Unlock()
		if !found {
			le.PutUint16(b[0:], lockUL)
			return errOr0(t.writeBytes(arg, b[:2]))
		}
		ctyp := uint16(lockRD)
		if c.write {
			ctyp = lockWR
		}
		le.PutUint16(b[0:], ctyp)
		le.PutUint16(b[2:], 0)
		le.PutUint64(b[8:], uint64(c.start))
		n := int64(0)
		if c.end != offsetMax {
			n = c.end - c.start + 1
		}
		le.PutUint64(b[16:], uint64(n))
		le.PutUint32(b[24:], uint32(c.pid))
		return errOr0(t.writeBytes(arg, b))
	}
	acc := f.flags & oACCMODE
	if typ == lockRD && acc == oWRONLY || typ == lockWR && acc == oRDONLY {
		return errRet(EBADF)
	}
	f.plockKey.Store(&key)
	wait := cmd == fSETLKW || cmd == fOFD_SETLKW
	for {
		pt.mu.Lock()
		if pt.locks == nil {
			pt.locks = map[flockKey][]plock{}
			pt.held = map[any]int{}
			pt.waiting = map[*fdTable]any{}
		}
		c, found := plock{}, false
		if typ != lockUL {
			c, found = pt.conflictLocked(key, &l)
		}
		if !found {
			pt.setLocked(key, l, typ)
			pt.mu.Unlock()
			return 0
		}
		if !wait {
			pt.mu.Unlock()
			return errRet(EAGAIN)
		}
		me, procOwned := l.owner.(*fdTable)
		if procOwned {
			if pt.deadlockLocked(me, c.owner) {
				pt.mu.Unlock()
				return errRet(EDEADLK)
			}
			pt.waiting[me] = c.owner
		}
		pt.mu.Unlock()
		t.wait(func() bool {
			pt.mu.Lock()
			defer pt.mu.Unlock()
			_, busy := pt.conflictLocked(key, &l)
			return !busy
		}, pt.wakeup, -1)
		if procOwned {
			pt.mu.Lock()
			delete(pt.waiting, me)
			pt.mu.Unlock()
		}
		if t.killed.Load() || t.sigPending() {
			return errRet(EINTR)
		}
	}
}
