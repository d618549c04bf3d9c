package uprobes

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The locks of the global tree (spec §1.2). They are real Go
// implementations with real contention in parallel mode: the spinning
// locks spin on one shared word (the cache line every CPU fights for),
// the per-CPU semaphore spreads readers over padded shards.

// nShards is the number of "CPUs" of the per-CPU structures (the
// percpu-rwsem and the SRCU counters). Callers pass a CPU hint (the
// task's CPU index or thread id); hints are reduced modulo nShards.
const nShards = 64

// cpuRelax is the body of a spin loop: cheap spinning first, then
// yielding the processor so that a preempted lock holder can run.
func cpuRelax(spins *int) {
	*spins++
	switch {
	case *spins < 64:
		// busy spin
	case *spins < 1024:
		runtime.Gosched()
	default:
		time.Sleep(time.Microsecond)
	}
}

// treeLocker is the interface of the four variants. rlock/runlock
// protect lookups (cpu is the caller's CPU hint); lock/unlock protect
// changes.
type treeLocker interface {
	rlock(cpu int)
	runlock(cpu int)
	lock()
	unlock()
}

// spinLock is raw_spinlock_t: a test-and-test-and-set lock.
type spinLock struct {
	v atomic.Int32
	_ [60]byte
}

func (l *spinLock) lock() {
	spins := 0
	for {
		if l.v.Load() == 0 && l.v.CompareAndSwap(0, 1) {
			return
		}
		cpuRelax(&spins)
	}
}

func (l *spinLock) unlock()     { l.v.Store(0) }
func (l *spinLock) rlock(int)   { l.lock() }
func (l *spinLock) runlock(int) { l.unlock() }

// rwSpinLock is rwlock_t (qrwlock): readers count in the low bits of one
// word; a writer first sets the waiting bit, which stops new readers,
// then waits for the count to drain and sets the locked bit. Writers are
// serialised by wmu.
type rwSpinLock struct {
	v   atomic.Int32
	_   [60]byte
	wmu spinLock
}

const (
	rwLocked  = 1 << 30
	rwWaiting = 1 << 29
	rwWriter  = rwLocked | rwWaiting
	rwReaders = rwWaiting - 1
)

func (l *rwSpinLock) rlock(int) {
	spins := 0
	for {
		if l.v.Load()&rwWriter == 0 {
			if l.v.Add(1)&rwWriter == 0 {
				return
			}
			l.v.Add(-1)
		}
		cpuRelax(&spins)
	}
}

func (l *rwSpinLock) runlock(int) { l.v.Add(-1) }

func (l *rwSpinLock) lock() {
	l.wmu.lock()
	l.v.Or(rwWaiting)
	spins := 0
	for l.v.Load()&rwReaders != 0 {
		cpuRelax(&spins)
	}
	l.v.Or(rwLocked)
}

func (l *rwSpinLock) unlock() {
	l.v.And(^int32(rwWriter))
	l.wmu.unlock()
}

// percpuRWSem is a per-CPU rw semaphore (percpu_rw_semaphore): a reader
// increments the counter of its shard and proceeds unless a writer is
// active, in which case it backs out and sleeps on block until the writer
// is done. A writer sets active (Linux: rcu_sync_enter, a full RCU grace
// period), takes block and waits until the sum over all shards is zero.
// Sequentially consistent atomics make the reader's increment-then-check
// and the writer's set-then-sum a Dekker handshake: either the reader
// sees the writer or the writer sees the reader.
type percpuRWSem struct {
	shards [nShards]paddedCounter
	active atomic.Int32
	_      [60]byte
	block  sync.RWMutex
	wmu    sync.Mutex
}

type paddedCounter struct {
	n atomic.Int64
	_ [56]byte
}

func (s *percpuRWSem) rlock(cpu int) {
	c := &s.shards[cpu&(nShards-1)].n
	c.Add(1)
	if s.active.Load() == 0 {
		return
	}
	// Slow path: a writer is active or arriving.
	c.Add(-1)
	s.block.RLock()
	c.Add(1)
	s.block.RUnlock()
}

func (s *percpuRWSem) runlock(cpu int) { s.shards[cpu&(nShards-1)].n.Add(-1) }

func (s *percpuRWSem) lock() {
	s.wmu.Lock()
	s.active.Store(1)
	s.block.Lock()
	spins := 0
	for s.readers() != 0 {
		cpuRelax(&spins)
	}
}

func (s *percpuRWSem) readers() int64 {
	var n int64
	for i := range s.shards {
		n += s.shards[i].n.Load()
	}
	return n
}

func (s *percpuRWSem) unlock() {
	s.active.Store(0)
	s.block.Unlock()
	s.wmu.Unlock()
}

// seqcount is seqcount_rwlock_t: odd while a writer changes the tree.
type seqcount struct {
	v atomic.Uint32
	_ [60]byte
}

// begin is read_seqcount_begin: wait for an even value.
func (s *seqcount) begin() uint32 {
	spins := 0
	for {
		v := s.v.Load()
		if v&1 == 0 {
			return v
		}
		cpuRelax(&spins)
	}
}

// retry is read_seqcount_retry.
func (s *seqcount) retry(v uint32) bool { return s.v.Load() != v }

// tryBegin is raw_seqcount_try_begin: succeeds when no writer is inside.
func (s *seqcount) tryBegin() bool { return s.v.Load()&1 == 0 }

func (s *seqcount) writeBegin() { s.v.Add(1) }
func (s *seqcount) writeEnd()   { s.v.Add(1) }

// srcu is a sleepable-RCU domain (Linux's srcu_struct), used for the two
// grace periods of the model: uretprobes_srcu (leased return instances,
// held across returns to user space) and the RCU Tasks Trace section
// around every breakpoint's handler chain. Readers bump the counter of
// the current index in their shard; synchronize waits for stragglers of
// the other index, flips the index and waits for the old one to drain.
type srcu struct {
	idx    atomic.Uint32
	_      [60]byte
	shards [nShards]srcuShard
	mu     sync.Mutex // serialises synchronize
}

type srcuShard struct {
	c [2]atomic.Int64
	_ [48]byte
}

// readLock enters a read section and returns its index.
func (s *srcu) readLock(cpu int) int {
	i := int(s.idx.Load() & 1)
	s.shards[cpu&(nShards-1)].c[i].Add(1)
	return i
}

// readUnlock leaves a read section entered with index i (on any CPU).
func (s *srcu) readUnlock(cpu, i int) {
	s.shards[cpu&(nShards-1)].c[i&1].Add(-1)
}

func (s *srcu) count(i int) int64 {
	var n int64
	for k := range s.shards {
		n += s.shards[k].c[i].Load()
	}
	return n
}

// synchronize waits until every read section that started before it
// has ended (synchronize_srcu).
func (s *srcu) synchronize() {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := int(s.idx.Load() & 1)
	s.drain(cur ^ 1)
	s.idx.Store(uint32(cur ^ 1))
	s.drain(cur)
}

func (s *srcu) drain(i int) {
	for d := time.Microsecond; s.count(i) != 0; {
		time.Sleep(d)
		if d < time.Millisecond {
			d *= 2
		}
	}
}
