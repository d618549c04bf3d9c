package uprobes

import "sync/atomic"

// The global uprobes tree (kernel/events/uprobes.c: uprobes_tree). Linux
// uses a red-black tree; this model uses a treap, which has the property
// that matters for lockless readers in the same way: a writer changes the
// shape with rotations whose pointer stores a concurrent reader may
// observe half-done, so a lockless lookup can miss a present key (a false
// negative) but never returns a wrong node. Child links are atomic
// pointers so that lockless readers are race-free in Go's memory model;
// an erased node keeps its links, so a reader standing on it walks on
// (Go's garbage collector plays RCU's role in keeping it alive).

// treeKey orders uprobes by file identity, then offset (the kernel
// compares the inode pointer, then the offset).
type treeKey struct {
	dev, ino, off uint64
}

func keyOf(id FileID, off uint64) treeKey { return treeKey{id.Dev, id.Inode, off} }

func cmpKey(a, b treeKey) int {
	switch {
	case a.dev != b.dev:
		return cmp3(a.dev, b.dev)
	case a.ino != b.ino:
		return cmp3(a.ino, b.ino)
	}
	return cmp3(a.off, b.off)
}

func cmp3(a, b uint64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// treePrio is the treap priority of a key: a fixed hash, so the shape of
// the tree (and therefore everything about it) is deterministic.
func treePrio(k treeKey) uint64 {
	x := k.dev*0x9e3779b97f4a7c15 ^ k.ino*0xbf58476d1ce4e5b9 ^ k.off
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// treeNode is the tree linkage embedded in a uprobe.
type treeNode struct {
	left, right atomic.Pointer[uprobe]
	prio        uint64
	// linked: the node is in the tree (!RB_EMPTY_NODE). Protected by the
	// tree's write lock.
	linked bool
}

// tree is the global tree with its lock. In TreeLockRCU mode, changes
// take rw (write) and bump seq; lookups take nothing; range queries take
// rw (read). In the other modes lk protects everything.
type tree struct {
	kind TreeLock
	root atomic.Pointer[uprobe]
	lk   treeLocker
	rw   *rwSpinLock // TreeLockRCU: the writer lock
	seq  seqcount    // TreeLockRCU: uprobes_seqcount
	// lookups and retries count find calls and seqcount retries.
	retries atomic.Uint64
	// gen is odd while a change is in progress and bumped twice per
	// change, in every mode (the threads' hit caches check it, hitcache.go).
	gen atomic.Uint64
}

func newTree(kind TreeLock) *tree {
	t := &tree{kind: kind}
	switch kind {
	case TreeLockSpinlock:
		t.lk = new(spinLock)
	case TreeLockRWLock:
		t.lk = new(rwSpinLock)
	case TreeLockPercpuRWSem:
		t.lk = new(percpuRWSem)
	default:
		t.rw = new(rwSpinLock)
		t.lk = t.rw
	}
	return t
}

// empty is no_uprobe_events().
func (t *tree) empty() bool { return t.root.Load() == nil }

// maxWalk bounds a lockless walk; a longer one means the reader raced
// with many rotations and must retry.
const maxWalk = 4096

func (t *tree) walk(k treeKey) (*uprobe, bool) {
	n := t.root.Load()
	for steps := 0; n != nil; steps++ {
		if steps > maxWalk {
			return nil, false
		}
		switch c := cmpKey(k, n.key); {
		case c == 0:
			return n, true
		case c < 0:
			n = n.left.Load()
		default:
			n = n.right.Load()
		}
	}
	return nil, true
}

// find looks a uprobe up (find_uprobe_rcu / the locked lookups of older
// kernels). It takes no reference. cpu is the caller's CPU hint.
func (t *tree) find(k treeKey, cpu int) *uprobe {
	if t.kind == TreeLockRCU {
		for {
			s := t.seq.begin()
			n, ok := t.walk(k)
			if n != nil {
				return n
			}
			if ok && !t.seq.retry(s) {
				return nil
			}
			t.retries.Add(1)
		}
	}
	t.lk.rlock(cpu)
	n, _ := t.walk(k)
	t.lk.runlock(cpu)
	return n
}

// writeLock / writeUnlock bracket a change (write_lock +
// write_seqcount_begin).
func (t *tree) writeLock() {
	t.lk.lock()
	t.gen.Add(1)
	if t.kind == TreeLockRCU {
		t.seq.writeBegin()
	}
}

func (t *tree) writeUnlock() {
	if t.kind == TreeLockRCU {
		t.seq.writeEnd()
	}
	t.gen.Add(1)
	t.lk.unlock()
}

// rangeLock / rangeUnlock protect the slow-path range queries
// (find_node_in_range): the read lock in every mode.
func (t *tree) rangeLock()   { t.lk.rlock(0) }
func (t *tree) rangeUnlock() { t.lk.runlock(0) }

// lookupLocked finds k under the write or range lock.
func (t *tree) lookupLocked(k treeKey) *uprobe {
	n, _ := t.walk(k)
	return n
}

// insertLocked links u, whose key must not be in the tree. Called with
// the write lock held.
func (t *tree) insertLocked(u *uprobe) {
	u.prio = treePrio(u.key)
	u.left.Store(nil)
	u.right.Store(nil)
	insertAt(&t.root, u)
	u.linked = true
}

func insertAt(slot *atomic.Pointer[uprobe], u *uprobe) {
	cur := slot.Load()
	if cur == nil {
		slot.Store(u)
		return
	}
	if cmpKey(u.key, cur.key) < 0 {
		insertAt(&cur.left, u)
		if l := cur.left.Load(); l.prio > cur.prio {
			cur.left.Store(l.right.Load())
			l.right.Store(cur)
			slot.Store(l)
		}
		return
	}
	insertAt(&cur.right, u)
	if r := cur.right.Load(); r.prio > cur.prio {
		cur.right.Store(r.left.Load())
		r.left.Store(cur)
		slot.Store(r)
	}
}

// eraseLocked unlinks u (rb_erase). Called with the write lock held.
func (t *tree) eraseLocked(u *uprobe) {
	if !u.linked {
		return
	}
	slot := &t.root
	for {
		cur := slot.Load()
		if cur == nil {
			panic("BUG: uprobes: linked node not in tree")
		}
		c := cmpKey(u.key, cur.key)
		if c == 0 && cur == u {
			break
		}
		if c < 0 {
			slot = &cur.left
		} else {
			slot = &cur.right
		}
	}
	for {
		l, r := u.left.Load(), u.right.Load()
		if l == nil {
			slot.Store(r)
			break
		}
		if r == nil {
			slot.Store(l)
			break
		}
		if l.prio > r.prio {
			u.left.Store(l.right.Load())
			l.right.Store(u)
			slot.Store(l)
			slot = &l.right
		} else {
			u.right.Store(r.left.Load())
			r.left.Store(u)
			slot.Store(r)
			slot = &r.left
		}
	}
	u.linked = false
}

// rangeLocked calls f, in key order, for every uprobe with lo <= key <=
// hi. Called with the range (or write) lock held.
func (t *tree) rangeLocked(lo, hi treeKey, f func(*uprobe)) {
	var rec func(n *uprobe)
	rec = func(n *uprobe) {
		if n == nil {
			return
		}
		if cmpKey(lo, n.key) < 0 {
			rec(n.left.Load())
		}
		if cmpKey(lo, n.key) <= 0 && cmpKey(n.key, hi) <= 0 {
			f(n)
		}
		if cmpKey(n.key, hi) < 0 {
			rec(n.right.Load())
		}
	}
	rec(t.root.Load())
}
