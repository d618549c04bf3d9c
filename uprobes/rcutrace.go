package uprobes

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvm-emu/uvm/internal/hostfence"
)

// tasksTraceRCU is RCU Tasks Trace, the section around every
// breakpoint's handler chain and return handlers (rcu_read_lock_trace,
// synchronize_rcu_tasks_trace). As in the kernel the read side is a
// per-thread count and no atomic operation: a thread in an owned
// counter slot (Task.slot) bumps its slot's section counter, odd while
// it is inside, with hostfence.Store. synchronize is the kernel's grace
// period with its IPIs: hostfence.Heavy (every thread executes a full
// barrier, so each counter is current and every section entered after it
// sees what was removed before the call), then a wait for each thread
// found inside to leave. Threads on sharedSlot (more threads than
// owned slots) use an SRCU domain instead, which synchronize also waits
// for.
type tasksTraceRCU struct {
	// slots are the owned slots' section counters: written by the
	// slot's owner only, read by synchronize.
	slots [sharedSlot]struct {
		ctr  uint64 // odd: inside a section
		nest int    // the owner's nesting depth (owner-only)
		_    [48]byte
	}
	shared srcu
	mu     sync.Mutex // serialises synchronize
}

// readLock is rcu_read_lock_trace for the thread in slot; the result
// goes to readUnlock.
func (r *tasksTraceRCU) readLock(slot int) int {
	if slot == sharedSlot {
		return r.shared.readLock(0)
	}
	s := &r.slots[slot]
	if s.nest == 0 {
		hostfence.Store(&s.ctr, s.ctr+1)
	}
	s.nest++
	return 0
}

// readUnlock is rcu_read_unlock_trace (the same thread as readLock).
func (r *tasksTraceRCU) readUnlock(slot, idx int) {
	if slot == sharedSlot {
		r.shared.readUnlock(0, idx)
		return
	}
	s := &r.slots[slot]
	if s.nest--; s.nest == 0 {
		hostfence.Store(&s.ctr, s.ctr+1)
	}
}

// synchronize is synchronize_rcu_tasks_trace: it returns once every read
// section that began before the call has ended.
func (r *tasksTraceRCU) synchronize() {
	r.mu.Lock()
	defer r.mu.Unlock()
	hostfence.Heavy()
	for i := range r.slots {
		c := &r.slots[i].ctr
		v := atomic.LoadUint64(c)
		for d := time.Microsecond; v&1 != 0 && atomic.LoadUint64(c) == v; {
			time.Sleep(d)
			if d < time.Millisecond {
				d *= 2
			}
		}
	}
	r.shared.synchronize()
}
