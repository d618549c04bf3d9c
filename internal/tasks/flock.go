package tasks

import "sync"

// flock(2): advisory whole-file locks held by open file descriptions,
// shared between uvm's guest processes (not with host processes).

type flockKey struct{ dev, ino uint64 }

// flockTable is the kernel's lock table (protected by mu).
type flockTable struct {
	mu      sync.Mutex
	holders map[flockKey]map[*openFile]bool // value: exclusive
	changed chan struct{}
}

const (
	lockSH = 1
	lockEX = 2
	lockNB = 4
	lockUN = 8
)

func (ft *flockTable) wakeup() <-chan struct{} {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.changed == nil {
		ft.changed = make(chan struct{})
	}
	return ft.changed
}

func (ft *flockTable) notifyLocked() {
	if ft.changed != nil {
		close(ft.changed)
		ft.changed = nil
	}
}

// tryLock takes or converts f's lock; false if another holder conflicts.
func (ft *flockTable) tryLock(key flockKey, f *openFile, exclusive bool) bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.holders == nil {
		ft.holders = map[flockKey]map[*openFile]bool{}
	}
	h := ft.holders[key]
	for o, ex := range h {
		if o != f && (ex || exclusive) {
			return false
		}
	}
	if h == nil {
		h = map[*openFile]bool{}
		ft.holders[key] = h
	}
	h[f] = exclusive
	f.flockKey = &key
	ft.notifyLocked()
	return true
}

func (ft *flockTable) unlock(f *openFile) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if f.flockKey == nil {
		return
	}
	if h := ft.holders[*f.flockKey]; h != nil {
		delete(h, f)
		if len(h) == 0 {
			delete(ft.holders, *f.flockKey)
		}
	}
	f.flockKey = nil
	ft.notifyLocked()
}

func (t *Task) sysFlock(fd int32, op uint64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	ft := &t.tg.k.flocks
	if op&lockUN != 0 {
		ft.unlock(f)
		return 0
	}
	if op&(lockSH|lockEX) == 0 || op&lockSH != 0 && op&lockEX != 0 {
		return errRet(EINVAL)
	}
	st, e := t.statFile(f)
	if e != 0 {
		return errRet(e)
	}
	key := flockKey{st.dev, st.ino}
	ex := op&lockEX != 0
	for !ft.tryLock(key, f, ex) {
		if op&lockNB != 0 {
			return errRet(EAGAIN)
		}
		t.wait(func() bool { return ft.tryLockProbe(key, f, ex) }, ft.wakeup, -1)
		if t.killed.Load() || t.sigPending() {
			return errRet(EINTR)
		}
	}
	return 0
}

// tryLockProbe reports whether tryLock would succeed now.
func (ft *flockTable) tryLockProbe(key flockKey, f *openFile, exclusive bool) bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	for o, ex := range ft.holders[key] {
		if o != f && (ex || exclusive) {
			return false
		}
	}
	return true
}
