package tasks

import (
	"encoding/binary"
	"sync"

	"github.com/uvm-emu/uvm/internal/vm"
)

// futexTable is the kernel's futex hash. A private futex (FUTEX_PRIVATE_FLAG,
// or a word in private memory) is keyed by address space and address; a
// shared futex in a MAP_SHARED mapping by the shared object and the word's
// offset in it (get_futex_key's inode/page key), so processes that share
// the memory at different addresses (fork, two mmaps of one memfd or file)
// wait and wake on the same word.
type futexTable struct {
	// mu protects waiters; it is a leaf lock (guest memory is read under it
	// through MM.ReadAt, which takes MM.mu internally — MM.mu is also a leaf
	// with respect to everything else, so the order is futexTable.mu → MM.mu).
	mu      sync.Mutex
	waiters map[futexKey][]*futexWaiter
}

type futexKey struct {
	mm   *vm.MM           // private: the address space; nil when shared
	obj  *vm.SharedObject // shared: the object; nil when private
	addr uint64           // private: the address; shared: the offset in obj
}

type futexWaiter struct {
	ch     chan struct{}
	bitset uint32
	mm     *vm.MM // the waiter's address space, for exit_group's wakeAll
}

// futexKeyOf is get_futex_key: the key of the futex word at addr in mm.
// Words in a MAP_SHARED mapping get the shared key unless private is set.
func futexKeyOf(mm *vm.MM, addr uint64, private bool) futexKey {
	if !private {
		if v, ok := mm.FindVMA(addr); ok && v.Obj != nil {
			return futexKey{obj: v.Obj, addr: v.Offset + (addr - v.Start)}
		}
	}
	return futexKey{mm: mm, addr: addr}
}

func (ft *futexTable) init() { ft.waiters = map[futexKey][]*futexWaiter{} }

// Futex operations (include/uapi/linux/futex.h).
const (
	futexWait          = 0
	futexWake          = 1
	futexRequeue       = 3
	futexCmpRequeue    = 4
	futexWakeOp        = 5
	futexWaitBitset    = 9
	futexWakeBitset    = 10
	futexPrivateFlag   = 128
	futexClockRealtime = 256
)

// wait blocks while *addr == val (FUTEX_WAIT), at most timeoutNs (< 0: no
// timeout) on the kernel's clock.
// It returns 0 when woken, EAGAIN when the value differed, ETIMEDOUT, or
// EINTR when the thread group is exiting.
func (ft *futexTable) wait(t *Task, addr uint64, private bool, val, bitset uint32, timeoutNs int64) Errno {
	if addr&3 != 0 {
		return EINVAL
	}
	if bitset == 0 {
		return EINVAL
	}
	key := futexKeyOf(t.tg.mm, addr, private)
	ft.mu.Lock()
	var b [4]byte
	if err := t.tg.mm.ReadAt(b[:], addr); err != nil {
		ft.mu.Unlock()
		return EFAULT
	}
	if binary.LittleEndian.Uint32(b[:]) != val {
		ft.mu.Unlock()
		return EAGAIN
	}
	w := &futexWaiter{ch: make(chan struct{}), bitset: bitset, mm: t.tg.mm}
	ft.waiters[key] = append(ft.waiters[key], w)
	ft.mu.Unlock()
	closed := func() bool {
		select {
		case <-w.ch:
			return true
		default:
			return false
		}
	}
	timedOut := t.wait(closed, func() <-chan struct{} { return w.ch }, timeoutNs)
	if closed() {
		if t.killed.Load() {
			return EINTR
		}
		return 0
	}
	if !ft.remove(key, w) {
		return 0 // woken concurrently with the timeout or kill
	}
	if timedOut {
		return ETIMEDOUT
	}
	if t.killed.Load() {
		return EINTR
	}
	// Interrupted by a signal: restarted after the handler if it has
	// SA_RESTART (or none runs), else EINTR (see signals.SyscallRestart).
	return Errno(erestartsys)
}

// erestartsys is Linux's ERESTARTSYS, never seen by the guest.
const erestartsys = 512

// remove takes w off its queue; false if it was already woken.
func (ft *futexTable) remove(key futexKey, w *futexWaiter) bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	q := ft.waiters[key]
	for i, x := range q {
		if x == w {
			ft.waiters[key] = append(q[:i:i], q[i+1:]...)
			if len(ft.waiters[key]) == 0 {
				delete(ft.waiters, key)
			}
			return true
		}
	}
	return false
}

// wake wakes up to n waiters on the futex key whose bitset intersects
// bitset.
func (ft *futexTable) wake(key futexKey, n int, bitset uint32) int {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.wakeLocked(key, n, bitset)
}

func (ft *futexTable) wakeLocked(key futexKey, n int, bitset uint32) int {
	q := ft.waiters[key]
	woken := 0
	out := q[:0]
	for _, w := range q {
		if woken < n && w.bitset&bitset != 0 {
			close(w.ch)
			woken++
			continue
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		delete(ft.waiters, key)
	} else {
		ft.waiters[key] = out
	}
	return woken
}

// requeue wakes n waiters on key and moves up to n2 of the rest to key2.
func (ft *futexTable) requeue(key, key2 futexKey, n, n2 int) int {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	woken := ft.wakeLocked(key, n, ^uint32(0))
	q := ft.waiters[key]
	moved := 0
	for moved < n2 && len(q) > 0 {
		ft.waiters[key2] = append(ft.waiters[key2], q[0])
		q = q[1:]
		moved++
	}
	if len(q) == 0 {
		delete(ft.waiters, key)
	} else {
		ft.waiters[key] = q
	}
	return woken + moved
}

// wakeAll wakes every waiter whose address space is mm (exit_group), on
// private and shared keys alike.
func (ft *futexTable) wakeAll(mm *vm.MM) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	for key, q := range ft.waiters {
		out := q[:0]
		for _, w := range q {
			if w.mm == mm {
				close(w.ch)
				continue
			}
			out = append(out, w)
		}
		if len(out) == 0 {
			delete(ft.waiters, key)
		} else {
			ft.waiters[key] = out
		}
	}
}
