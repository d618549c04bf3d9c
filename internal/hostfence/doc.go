// Package hostfence is the asymmetric memory fence of the host process:
// Linux's membarrier(2), as userspace RCU and the kernel's RCU Tasks
// Trace use it.
//
// Some of uvm's store-then-load handshakes run millions of times a
// second on one side and rarely on the other: a TLB announcing that its
// CPU executes guest code against a shootdown (internal/vm), a uprobe
// hit's RCU Tasks Trace read section against uprobe_unregister_sync
// (uprobes). Each side must see the other's store (Dekker's store-load
// order). On an x86-64 host a sequentially consistent store is an XCHG
// and an atomic add a LOCK XADD, about 20 cycles each, several per
// syscall or uprobe hit. With this package the frequent side stores
// with a plain MOV (Store) and the rare side calls Heavy first, which
// makes every thread of the process execute a full barrier
// (MEMBARRIER_CMD_PRIVATE_EXPEDITED). Whichever point of the frequent
// side's store-then-load the barrier lands at, the rare side's later
// load sees the store, or the frequent side's load sees what the rare
// side stored before Heavy. A plain store is also a release store on
// x86-TSO, which is what the end of such a section needs.
//
// Asymmetric reports whether this holds. It does not (and Store is a
// sequentially consistent atomic store, Heavy a no-op) where membarrier
// is missing (not Linux, an old kernel, a seccomp filter), on hosts
// other than amd64, whose plain stores are not release stores, and
// under the race detector, which does not know about the fence.
//
// Racing word-sized plain accesses are never torn in Go's memory model,
// so a concurrent reader (atomic.LoadUint64) sees the value before or
// after a Store.
package hostfence
