package uprobes

// The optional timing and contention hooks (Options.Contention): a
// --model run of uvm charges the kernel path's steps to the thread's
// virtual CPU and models the shared objects the path touches as cache
// lines and locks (package timing, adapted by package tasks). With a nil
// Contention nothing is called and nothing costs.

// Path names a step of the uprobe path that has a cost in cycles; the
// names are the machine descriptions' cost.NAME keys.
type Path uint8

const (
	PathFindActiveUprobe Path = iota // find_active_uprobe(_rcu): VMA and tree lookup
	PathHandlerChain                 // handler_chain: the consumers (a BPF program)
	PathXOLSlotGet                   // xol_get_insn_slot / xol_get_slot_nr
	PathXOLSlotPut                   // xol_free_insn_slot
	PathXOLCopy                      // arch_uprobe_copy_ixol: compare and copy into the slot
	PathCacheFlushLine               // DC CVAU + IC IVAU of one line of the slot
	PathCacheFlushSync               // DSB ISH + ISB: waiting for the broadcast invalidation
	PathPreXOL                       // arch_uprobe_pre_xol: enable single-step
	PathPostXOL                      // arch_uprobe_post_xol / handle_singlestep's fixups
	PathSimulate                     // arm64 simulate_* of the probed instruction
	PathEmulate                      // x86 emulation (nop, push, branches)
	PathUretprobePrepare             // prepare_uretprobe: hijack the return address
	PathUretprobeReturn              // uprobe_handle_trampoline + return consumers
	PathRIKmalloc                    // kmalloc of a return_instance
	PathRIKfree                      // RCU-delayed kfree of a return_instance
	PathRIPool                       // ri_pool push/pop
	PathRecalcSigpending             // recalc_sigpending under siglock
	NumPaths
)

var pathNames = [...]string{"find_active_uprobe", "handler_chain", "xol_slot_get", "xol_slot_put",
	"xol_copy", "cache_flush_line", "cache_flush_sync", "pre_xol", "post_xol", "simulate", "emulate",
	"uretprobe_prepare", "uretprobe_return", "ri_kmalloc", "ri_kfree", "ri_pool", "recalc_sigpending"}

func (p Path) String() string {
	if int(p) < len(pathNames) {
		return pathNames[p]
	}
	return "path?"
}

// Object names a kind of shared kernel object the path touches.
type Object uint8

const (
	ObjSiglock         Object = iota // sighand->siglock (spinlock); key: the Siglock
	ObjTreeSpinlock                  // uprobes_treelock as a spinlock; key: the System
	ObjTreeRWLock                    // uprobes_treelock as an rwlock
	ObjTreePercpuRWSem               // uprobes_treelock as a per-CPU rw semaphore
	ObjTreeSRCU                      // the lockless (SRCU + seqcount) tree lookup
	ObjUprobeRef                     // uprobe->ref (atomic); key: the uprobe
	ObjRegisterRWSem                 // uprobe->register_rwsem (read side); key: the uprobe
	ObjXOLBitmap                     // xol_area->bitmap (atomic bit ops); key: the area
	ObjXOLWaitqueue                  // xol_area->wq (waitqueue_active); key: the area
	ObjMMLockSeq                     // mm->mm_lock_seq (mmap_lock speculation); key: the MM
	NumObjects
)

var objectNames = [...]string{"sighand->siglock", "uprobes_treelock", "uprobes_treelock", "uprobes_treelock",
	"uprobes_tree (srcu)", "uprobe->ref", "uprobe->register_rwsem", "xol_area->bitmap", "xol_area->wq",
	"mm->mm_lock_seq"}

func (o Object) String() string {
	if int(o) < len(objectNames) {
		return objectNames[o]
	}
	return "object?"
}

// Contention is the timing model of the kernel paths. Every method is
// called on the thread's own goroutine; key identifies the object
// instance (see the Object constants). Lock-type methods bracket the
// model's real Go locks from outside, so a modelled wait never happens
// with a real lock held.
type Contention interface {
	// Cost charges path p, n times, to th's virtual CPU.
	Cost(th Thread, p Path, n int)
	// Lock/Unlock take and release a lock object exclusively.
	Lock(th Thread, o Object, key any)
	Unlock(th Thread, o Object, key any)
	// RLock/RUnlock take and release its read side.
	RLock(th Thread, o Object, key any)
	RUnlock(th Thread, o Object, key any)
	// Atomic is a read-modify-write of the object's word.
	Atomic(th Thread, o Object, key any)
	// Read is a load of the object's word.
	Read(th Thread, o Object, key any)
	// Slab is a kmalloc (free false) or an RCU-delayed kfree (free true)
	// of a return_instance on th's CPU: the per-CPU slab, refilled from
	// and flushed to the NUMA node's partial list under its list_lock.
	Slab(th Thread, free bool)
}

// cost charges p to t's CPU when a contention model is attached.
func (t *Task) cost(p Path, n int) {
	if c := t.mm.sys.opts.Contention; c != nil {
		c.Cost(t.th, p, n)
	}
}

func (t *Task) atomicOp(o Object, key any) {
	if c := t.mm.sys.opts.Contention; c != nil {
		c.Atomic(t.th, o, key)
	}
}

// oldLookup reports whether the modelled kernel generation is the one
// the lock kind belongs to: before v6.12 (spinlock, rwlock, per-CPU
// rwsem), find_uprobe took a reference under the tree lock, handle_swbp
// dropped it, and handler_chain took uprobe->register_rwsem for reading.
func (s *System) oldLookup() bool { return s.opts.TreeLock != TreeLockRCU }

// treeLookupBegin / treeLookupEnd bracket a tree lookup with the
// modelled tree lock of the configured kind.
func (t *Task) treeLookupBegin() {
	s := t.mm.sys
	c := s.opts.Contention
	if c == nil {
		return
	}
	c.Read(t.th, ObjMMLockSeq, t.mm)
	switch s.opts.TreeLock {
	case TreeLockSpinlock:
		c.Lock(t.th, ObjTreeSpinlock, s)
	case TreeLockRWLock:
		c.RLock(t.th, ObjTreeRWLock, s)
	case TreeLockPercpuRWSem:
		c.RLock(t.th, ObjTreePercpuRWSem, s)
	default:
		c.RLock(t.th, ObjTreeSRCU, s)
	}
}

func (t *Task) treeLookupEnd(u *uprobe) {
	s := t.mm.sys
	c := s.opts.Contention
	if c == nil {
		return
	}
	if u != nil && s.oldLookup() {
		c.Atomic(t.th, ObjUprobeRef, u) // get_uprobe under the lock
	}
	switch s.opts.TreeLock {
	case TreeLockSpinlock:
		c.Unlock(t.th, ObjTreeSpinlock, s)
	case TreeLockRWLock:
		c.RUnlock(t.th, ObjTreeRWLock, s)
	case TreeLockPercpuRWSem:
		c.RUnlock(t.th, ObjTreePercpuRWSem, s)
	default:
		c.RUnlock(t.th, ObjTreeSRCU, s)
	}
	c.Cost(t.th, PathFindActiveUprobe, 1)
}
