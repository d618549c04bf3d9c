package uprobes

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// The kernel's cheap memory accesses, for the hit paths.
//
// Go's sync/atomic stores are sequentially consistent: on an x86-64 host
// each one is an XCHG, and each Add a LOCK XADD, about 20 cycles. The
// kernel's uprobe hit path uses weaker operations: this_cpu_inc for its
// counters, WRITE_ONCE for an hprobe's state, rcu_assign_pointer (a
// release store: a plain MOV on x86) to publish a return instance. A
// uretprobe hit made about twenty sequentially consistent operations
// that the kernel does not make. These helpers give the kernel's
// orderings, each where Go's memory model allows it:
//   - word-sized racing accesses are never torn (a racing reader sees
//     the value before or after a write), so a single writer's plain
//     add or store is a relaxed one;
//   - a plain store is a release store on a TSO host (amd64, 386): the
//     compiler keeps stores in program order and the hardware makes
//     them visible in that order.
//
// Under the race detector, which would report the racing readers, and
// where the ordering does not hold, they use sync/atomic.

// tsoHost: the host's plain stores are release stores.
const tsoHost = runtime.GOARCH == "amd64" || runtime.GOARCH == "386"

// wordIs64: a uint64 is a machine word (no torn racing accesses).
const wordIs64 = ^uintptr(0)>>32 != 0

// relaxedAdd adds n to the word at p, which only the caller writes
// (this_cpu_add); concurrent readers use atomic.LoadUint64.
func relaxedAdd(p *uint64, n uint64) {
	if raceEnabled || !wordIs64 {
		atomic.AddUint64(p, n)
		return
	}
	*p += n
}

// rcuPointer is an RCU-protected pointer: Store is rcu_assign_pointer
// (a release store: the pointee's initialisation is visible before the
// pointer), Load is rcu_dereference (an acquire load). The writer
// serialises its own Stores.
type rcuPointer[T any] struct {
	_ [0]*T
	v unsafe.Pointer
}

// Load is rcu_dereference.
func (p *rcuPointer[T]) Load() *T { return (*T)(atomic.LoadPointer(&p.v)) }

// Store is rcu_assign_pointer.
func (p *rcuPointer[T]) Store(x *T) {
	if raceEnabled || !tsoHost {
		atomic.StorePointer(&p.v, unsafe.Pointer(x))
		return
	}
	p.v = unsafe.Pointer(x)
}

// onceInt32 is an int32 written with WRITE_ONCE (Store: no ordering of
// its own; a later rcuPointer.Store publishes it) and read or updated
// atomically (READ_ONCE, xchg, cmpxchg).
type onceInt32 struct{ v int32 }

// Load is READ_ONCE.
func (o *onceInt32) Load() int32 { return atomic.LoadInt32(&o.v) }

// Store is WRITE_ONCE.
func (o *onceInt32) Store(v int32) {
	if raceEnabled {
		atomic.StoreInt32(&o.v, v)
		return
	}
	o.v = v
}

// Swap is xchg.
func (o *onceInt32) Swap(v int32) int32 { return atomic.SwapInt32(&o.v, v) }

// CompareAndSwap is cmpxchg.
func (o *onceInt32) CompareAndSwap(old, v int32) bool {
	return atomic.CompareAndSwapInt32(&o.v, old, v)
}
