package vm

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const cowBase = 0x10000

// cowPair maps n read-write anonymous pages, fills page i with byte i+1
// and forks.
func cowPair(t *testing.T, n int, acct *MemAccount) (parent, child *MM) {
	t.Helper()
	parent = NewMM()
	parent.Acct = acct
	require.NoError(t, parent.Map(VMA{Start: cowBase, End: cowBase + uint64(n)*PageSize, Prot: ProtRead | ProtWrite}))
	for i := 0; i < n; i++ {
		b := make([]byte, PageSize)
		for j := range b {
			b[j] = byte(i + 1)
		}
		require.NoError(t, parent.WriteAt(b, cowBase+uint64(i)*PageSize))
	}
	child, err := parent.Fork()
	require.NoError(t, err)
	return parent, child
}

func pageAt(m *MM, addr uint64) *Page {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.lookupPTE(addr >> PageShift).page
}

func byteAt(t *testing.T, m *MM, addr uint64) byte {
	t.Helper()
	var b [1]byte
	require.NoError(t, m.ReadAt(b[:], addr))
	return b[0]
}

// Fork shares the pages; the first write on either side copies, each side
// sees only its own writes, and the memory account charges a page once.
func TestForkCopyOnWrite(t *testing.T) {
	acct := &MemAccount{}
	parent, child := cowPair(t, 4, acct)
	require.Equal(t, int64(4), acct.Used(), "fork charges nothing")
	require.Equal(t, int64(4), child.RSS(), "the child's RSS counts shared pages")
	for i := uint64(0); i < 4; i++ {
		p := pageAt(parent, cowBase+i*PageSize)
		require.Same(t, p, pageAt(child, cowBase+i*PageSize))
		require.Equal(t, int32(2), p.mapcount.Load())
	}
	require.NoError(t, child.WriteAt([]byte{'c'}, cowBase))
	require.NoError(t, parent.WriteAt([]byte{'p'}, cowBase+PageSize))
	require.Equal(t, int64(6), acct.Used(), "two copies")
	require.Equal(t, byte('c'), byteAt(t, child, cowBase))
	require.Equal(t, byte(1), byteAt(t, parent, cowBase))
	require.Equal(t, byte('p'), byteAt(t, parent, cowBase+PageSize))
	require.Equal(t, byte(2), byteAt(t, child, cowBase+PageSize))
	require.Equal(t, byte(1), byteAt(t, child, cowBase+1), "the copy keeps the rest of the page")

	// The last owner of a page writes it in place: after the child's copy
	// the parent owns page 0 alone.
	p0 := pageAt(parent, cowBase)
	require.Equal(t, int32(1), p0.mapcount.Load())
	require.NoError(t, parent.WriteAt([]byte{'q'}, cowBase))
	require.Same(t, p0, pageAt(parent, cowBase))

	// The child's exit gives its shared pages back to the parent.
	p2 := pageAt(parent, cowBase+2*PageSize)
	child.Release()
	require.Equal(t, int64(4), acct.Used())
	require.Equal(t, int32(1), p2.mapcount.Load())
	require.NoError(t, parent.WriteAt([]byte{'r'}, cowBase+2*PageSize))
	require.Same(t, p2, pageAt(parent, cowBase+2*PageSize), "no copy once the child is gone")
	require.Equal(t, int64(4), acct.Used())
	parent.Release()
	require.Equal(t, int64(0), acct.Used())
}

// A grandchild shares pages three ways; each copy leaves the others.
func TestForkCopyOnWriteThreeWays(t *testing.T) {
	acct := &MemAccount{}
	parent, child := cowPair(t, 1, acct)
	grand, err := child.Fork()
	require.NoError(t, err)
	p := pageAt(parent, cowBase)
	require.Equal(t, int32(3), p.mapcount.Load())
	require.NoError(t, child.WriteAt([]byte{'c'}, cowBase))
	require.Equal(t, int32(2), p.mapcount.Load())
	require.NoError(t, grand.WriteAt([]byte{'g'}, cowBase))
	require.Equal(t, int32(1), p.mapcount.Load())
	require.NoError(t, parent.WriteAt([]byte{'p'}, cowBase))
	require.Same(t, p, pageAt(parent, cowBase))
	require.Equal(t, []byte{'p', 'c', 'g'}, []byte{byteAt(t, parent, cowBase), byteAt(t, child, cowBase), byteAt(t, grand, cowBase)})
	require.Equal(t, int64(3), acct.Used())
}

// Permissions live in each address space's entries: mprotect on one side
// leaves the other's.
func TestCopyOnWriteMprotect(t *testing.T) {
	parent, child := cowPair(t, 1, nil)
	require.NoError(t, parent.Protect(cowBase, cowBase+PageSize, ProtRead))
	var f *Fault
	require.ErrorAs(t, parent.WriteAt([]byte{'x'}, cowBase), &f)
	require.True(t, f.Mapped)
	require.NoError(t, child.WriteAt([]byte{'c'}, cowBase), "the child's page stays writable")
	require.Equal(t, byte(1), byteAt(t, parent, cowBase))
	require.NoError(t, child.Protect(cowBase, cowBase+PageSize, ProtRead))
	require.NoError(t, parent.Protect(cowBase, cowBase+PageSize, ProtRead|ProtWrite))
	require.NoError(t, parent.WriteAt([]byte{'p'}, cowBase))
	require.Equal(t, byte('c'), byteAt(t, child, cowBase))
	require.ErrorAs(t, child.WriteAt([]byte{'x'}, cowBase), &f)
}

// MADV_DONTNEED on one side drops only its mapping; the other becomes the
// page's only owner and writes it in place.
func TestCopyOnWriteDiscard(t *testing.T) {
	acct := &MemAccount{}
	parent, child := cowPair(t, 1, acct)
	p := pageAt(parent, cowBase)
	child.Discard(cowBase, cowBase+PageSize)
	require.Equal(t, byte(0), byteAt(t, child, cowBase))
	require.Equal(t, byte(1), byteAt(t, parent, cowBase))
	require.Equal(t, int32(1), p.mapcount.Load())
	require.NoError(t, parent.WriteAt([]byte{'p'}, cowBase))
	require.Same(t, p, pageAt(parent, cowBase))
	require.Equal(t, int64(2), acct.Used(), "the parent's page and the child's new zero page")
}

// mremap moves a shared page with its mapcount; writes after the move
// still copy.
func TestCopyOnWriteMremap(t *testing.T) {
	acct := &MemAccount{}
	parent, child := cowPair(t, 2, acct)
	const dst = 0x200000
	require.NoError(t, parent.Move(cowBase, 2*PageSize, dst, PageSize))
	require.Equal(t, int64(2), acct.Used())
	p := pageAt(parent, dst)
	require.Same(t, pageAt(child, cowBase), p)
	require.NoError(t, parent.WriteAt([]byte{'p'}, dst))
	require.Equal(t, byte(1), byteAt(t, child, cowBase))
	require.Equal(t, byte('p'), byteAt(t, parent, dst))
	require.Equal(t, int32(1), p.mapcount.Load())
	require.Equal(t, int32(1), pageAt(child, cowBase+PageSize).mapcount.Load(), "the page past the new length left the parent")
	require.Equal(t, int64(3), acct.Used())
}

// A write to a shared page that holds predecoded code: the writer's
// decoded copy is invalidated (the old page's CodeVersion changes) and it
// fetches from its own copy; the other side keeps the old bytes.
func TestCopyOnWriteCode(t *testing.T) {
	parent := NewMM()
	require.NoError(t, parent.Map(VMA{Start: cowBase, End: cowBase + PageSize, Prot: ProtRead | ProtWrite | ProtExec}))
	require.NoError(t, parent.WriteAt([]byte{1, 2, 3, 4}, cowBase))
	old, f := parent.CodePage(cowBase)
	require.Nil(t, f)
	child, err := parent.Fork()
	require.NoError(t, err)
	v := old.CodeVersion.Load()
	tlb := NewTLB(child)
	tlb.Enter()
	require.True(t, tlb.Store32(cowBase, 0xdeadbeef))
	tlb.Leave()
	require.NotEqual(t, v, old.CodeVersion.Load(), "decoded code of the old page is stale")
	np, f := child.CodePage(cowBase)
	require.Nil(t, f)
	require.NotSame(t, old, np)
	require.Equal(t, uint32(0xdeadbeef), binary.LittleEndian.Uint32(np.Data[:]))
	pp, _ := parent.CodePage(cowBase)
	require.Same(t, old, pp)
	require.Equal(t, []byte{1, 2, 3, 4}, pp.Data[:4])
}

// Guest atomics and kernel pokes break copy-on-write too; a poke of the
// bytes already there does not copy.
func TestCopyOnWriteAtomicAndPoke(t *testing.T) {
	parent, child := cowPair(t, 2, nil)
	tlb := NewTLB(child)
	tlb.Enter()
	ptr, ok := tlb.Atomic64(cowBase + 8)
	require.True(t, ok)
	atomic.AddUint64(ptr, 1)
	tlb.Leave()
	require.Equal(t, byte(1), byteAt(t, parent, cowBase+8))
	require.Equal(t, byte(2), byteAt(t, child, cowBase+8))

	p := pageAt(parent, cowBase+PageSize)
	require.NoError(t, parent.Poke([]byte{2, 2}, cowBase+PageSize))
	require.Same(t, p, pageAt(parent, cowBase+PageSize), "same bytes: no copy")
	require.NoError(t, parent.Protect(cowBase, cowBase+2*PageSize, ProtRead|ProtExec))
	require.NoError(t, parent.Poke([]byte{0xcc}, cowBase+PageSize))
	require.Equal(t, byte(2), byteAt(t, child, cowBase+PageSize))
	require.Equal(t, byte(0xcc), byteAt(t, parent, cowBase+PageSize))
}

// Fork under the memory limit needs no memory; the copy does, and fails
// with an OOM fault when the limit is reached.
func TestCopyOnWriteOOM(t *testing.T) {
	acct := &MemAccount{Limit: 3}
	parent, child := cowPair(t, 2, acct)
	require.NoError(t, child.WriteAt([]byte{'c'}, cowBase))
	var f *Fault
	require.ErrorAs(t, child.WriteAt([]byte{'c'}, cowBase+PageSize), &f)
	require.True(t, f.OOM)
	tlb := NewTLB(parent)
	tlb.Enter()
	require.False(t, tlb.Store8(cowBase+PageSize, 'p'))
	require.True(t, tlb.Fault.OOM)
	tlb.Leave()
	require.Equal(t, byte(2), byteAt(t, parent, cowBase+PageSize))
}

// cowWorker is a guest thread of the parent: it executes between Enter
// and Leave, storing an increasing counter into its word of a page, and
// leaves and re-enters when interrupted, as the interpreters do at block
// boundaries.
type cowWorker struct {
	tlb  *TLB
	stop atomic.Bool
	intr atomic.Bool
	addr uint64
	n    atomic.Uint64
}

func (w *cowWorker) run(t *testing.T) {
	w.tlb.Enter()
	for v := uint64(1); !w.stop.Load(); v++ {
		if !w.tlb.Store64(w.addr, v) {
			t.Errorf("store at %#x: %v", w.addr, &w.tlb.Fault)
			break
		}
		w.n.Store(v)
		if v%64 == 0 && w.intr.Swap(false) {
			w.tlb.Leave()
			runtime.Gosched()
			w.tlb.Enter()
		}
	}
	w.tlb.Leave()
}

// Threads of the parent store while it forks: once Fork has returned, no
// store of theirs reaches the child (the shootdown), and their stores go
// on into the parent's own copies. Run with -race.
func TestForkShootdownConcurrentStores(t *testing.T) {
	parent := NewMM()
	const pages = 4
	require.NoError(t, parent.Map(VMA{Start: cowBase, End: cowBase + pages*PageSize, Prot: ProtRead | ProtWrite}))
	workers := make([]*cowWorker, 3)
	var wg sync.WaitGroup
	for i := range workers {
		w := &cowWorker{tlb: NewTLB(parent), addr: cowBase + uint64(i%pages)*PageSize + uint64(i)*8}
		w.tlb.SetInterrupt(func() { w.intr.Store(true) })
		workers[i] = w
		wg.Add(1)
		go func() { defer wg.Done(); w.run(t) }()
	}
	for _, w := range workers {
		for w.n.Load() == 0 {
			runtime.Gosched()
		}
	}
	for round := 0; round < 20; round++ {
		child, err := parent.Fork()
		require.NoError(t, err)
		snap := make([]byte, pages*PageSize)
		require.NoError(t, child.ReadAt(snap, cowBase))
		for _, w := range workers {
			// Let every worker store a few more times.
			for n := w.n.Load(); w.n.Load() < n+100; {
				runtime.Gosched()
			}
		}
		again := make([]byte, pages*PageSize)
		require.NoError(t, child.ReadAt(again, cowBase))
		require.Equal(t, snap, again, "round %d: a parent store reached the child after fork", round)
		for _, w := range workers {
			require.Less(t, binary.LittleEndian.Uint64(snap[w.addr-cowBase:]), w.n.Load(), "the parent's counter moves on")
		}
		child.Release()
	}
	for _, w := range workers {
		w.stop.Store(true)
	}
	wg.Wait()
	var b [8]byte
	for _, w := range workers {
		require.NoError(t, parent.ReadAt(b[:], w.addr))
		require.Equal(t, w.n.Load(), binary.LittleEndian.Uint64(b[:]), "every store reached the parent")
	}
}

// Threads of both processes write the same shared pages at once: every
// copy is private to its writer. Run with -race.
func TestCopyOnWriteConcurrentBreaks(t *testing.T) {
	for round := 0; round < 20; round++ {
		parent, child := cowPair(t, 8, &MemAccount{})
		var wg sync.WaitGroup
		for k, m := range []*MM{parent, child, parent, child} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tlb := NewTLB(m)
				tlb.Enter()
				defer tlb.Leave()
				for i := uint64(0); i < 8; i++ {
					if !tlb.Store8(cowBase+i*PageSize+uint64(k), byte(0x80+k)) {
						t.Errorf("store: %v", &tlb.Fault)
					}
				}
			}()
		}
		wg.Wait()
		for i := uint64(0); i < 8; i++ {
			a := cowBase + i*PageSize
			require.Equal(t, []byte{0x80, byte(i + 1), 0x82, byte(i + 1)}, []byte{byteAt(t, parent, a), byteAt(t, parent, a+1), byteAt(t, parent, a+2), byteAt(t, parent, a+3)})
			require.Equal(t, []byte{byte(i + 1), 0x81, byte(i + 1), 0x83}, []byte{byteAt(t, child, a), byteAt(t, child, a+1), byteAt(t, child, a+2), byteAt(t, child, a+3)})
			require.NotSame(t, pageAt(parent, a), pageAt(child, a))
		}
		parent.Release()
		child.Release()
	}
}

// A CPU holding SplitLock copies a copy-on-write page (its shootdown
// waits for the other CPUs) while another CPU of the process waits for
// SplitLock: the waiter counts as outside guest execution, so neither
// waits for the other forever.
func TestCopyOnWriteUnderSplitLock(t *testing.T) {
	parent, _ := cowPair(t, 1, nil)
	a, b := NewTLB(parent), NewTLB(parent)
	a.Enter()
	SplitLock.Lock()
	done := make(chan struct{})
	var waiting atomic.Bool
	go func() {
		b.Enter()
		waiting.Store(true)
		b.LockSplit()
		SplitLock.Unlock()
		b.Leave()
		close(done)
	}()
	// Wait until b has left guest execution for the lock wait (or give
	// up after a while: then the store below must not hang either).
	for deadline := time.Now().Add(2 * time.Second); !waiting.Load() || atomic.LoadUint64(&b.active) != 0 && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	stored := make(chan bool)
	go func() { stored <- a.Store8(cowBase, 'a') }()
	select {
	case ok := <-stored:
		require.True(t, ok)
	case <-time.After(10 * time.Second):
		t.Fatal("the copy's shootdown waits for a CPU blocked on SplitLock")
	}
	SplitLock.Unlock()
	a.Leave()
	<-done
}
