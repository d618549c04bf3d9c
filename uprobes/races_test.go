package uprobes

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHprobeExpire_LostRace: ri_timer's hprobe_expire takes a reference
// to the leased uprobe and then loses the cmpxchg to a racing
// hprobe_consume (the function returned meanwhile): it must drop the
// reference it took (get == false) or keep it for its caller (get ==
// true), leaving the count as before otherwise.
func TestHprobeExpire_LostRace(t *testing.T) {
	for _, get := range []bool{false, true} {
		w := newRetWorld(t, DefaultOptions())
		p := w.probe(a64NOPOff, w.retConsumer("f"))
		w.call(0x7fe000, 0x400800)
		ri := w.tk.utask.ri.Load()
		h := &ri.hprobe
		require.Equal(t, hprobeLeased, h.state.Load())
		u := h.uprobe.Load()
		before := u.ref.Load()
		raced := false
		hprobeExpireRace = func(h *hprobe) {
			// hprobe_consume wins: it now owns the lease.
			raced = h.state.CompareAndSwap(hprobeLeased, hprobeConsumed)
		}
		got := w.sys.hprobeExpire(h, get)
		hprobeExpireRace = nil
		require.True(t, raced)
		assert.Same(t, u, got, "the uprobe is still returned")
		want := before
		if get {
			want++
		}
		assert.Equal(t, want, u.ref.Load(), "get=%v: the reference taken before the lost cmpxchg", get)
		assert.Equal(t, hprobeConsumed, h.state.Load())
		assert.Zero(t, w.sys.Stats().TimerExpired, "the timer did not expire the lease")
		if get {
			w.sys.putUprobe(got)
		}
		w.sys.hprobeFinalize(h, hprobeLeased) // the consumer's side: end the lease
		require.NoError(t, p.Close())
	}
}

// TestFindActiveUprobe_MmapSeqRetry: the speculative lookup of
// find_active_uprobe_rcu trusts its answer only when the mm's sequence
// count shows no change since it began. Here the probed text is replaced
// by an anonymous mapping right after the speculative find_vma: the
// stale uprobe must not be returned; the locked lookup finds none.
func TestFindActiveUprobe_MmapSeqRetry(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	w.mm.MmapAll()
	p := w.probe(a64NOPOff, Consumer{Handler: func(*Ctx) int { return 0 }})
	defer p.Close()
	tk, _ := w.task(&fakeThread{}, 1)
	bp := uint64(textBase + a64NOPOff)
	u, _ := tk.findActiveUprobe(bp)
	require.NotNil(t, u, "found without a race")

	w.as.findHook = func() {
		w.mm.mmapWriteLock()
		w.as.mu.Lock()
		for i := range w.as.vmas {
			if w.as.vmas[i].Start == textBase {
				w.as.vmas[i].File = FileID{} // munmap + mmap anonymous
			}
		}
		w.as.mu.Unlock()
		w.mm.mmapWriteUnlock()
	}
	u, _ = tk.findActiveUprobe(bp)
	assert.Nil(t, u, "a lookup that raced with an mm change retried under the lock")
}

// TestMmapBy_FatalSignal: uprobe_mmap installs no breakpoint while the
// mapping task has a fatal signal pending.
func TestMmapBy_FatalSignal(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	p := w.probe(a64NOPOff, Consumer{Handler: func(*Ctx) int { return 0 }})
	defer p.Close()
	const base = 0x500000
	file := make([]byte, 2*PageSize)
	copy(file, a64Text())
	orig := binary.LittleEndian.Uint32(file[a64NOPOff:])
	for i, fatal := range []bool{true, false} {
		start := uint64(base + i*0x10000)
		v := VMA{Start: start, End: start + 2*PageSize, File: testFileID, Read: true, Exec: true}
		w.as.mapVMA(v, file)
		th := &fakeThread{}
		th.fatal.Store(fatal)
		w.mm.MmapBy(v, th)
		got := w.as.peek32(t, start+a64NOPOff)
		if fatal {
			assert.Equal(t, orig, got, "being killed: no breakpoint")
		} else {
			assert.NotEqual(t, orig, got, "the breakpoint is installed")
		}
	}
}

// TestTaskWork_Exiting: the fork child's dup_xol_work does nothing for a
// task that is exiting (PF_EXITING); otherwise it maps the child's XOL
// area at the parent's address.
func TestTaskWork_Exiting(t *testing.T) {
	for _, exiting := range []bool{true, false} {
		w, _, _ := pendingPair(t, DefaultOptions())
		require.NotNil(t, w.mm.xol.Load())
		cmm, err := w.mm.Fork(101, func() (AddrSpace, error) { return w.as.clone(), nil })
		require.NoError(t, err)
		var th Thread = &fakeThread{}
		if exiting {
			th = exitingThread{&fakeThread{}}
		}
		child := cmm.NewTask(th, 101, 101)
		w.tk.CopyProcess(child, false)
		require.True(t, child.utask.dupXOLPending)
		child.TaskWork()
		if exiting {
			assert.Nil(t, cmm.xol.Load(), "exiting: no XOL area")
		} else if assert.NotNil(t, cmm.xol.Load()) {
			assert.Equal(t, w.mm.xol.Load().vaddr, cmm.xol.Load().vaddr)
		}
		child.Free(nil)
	}
}
