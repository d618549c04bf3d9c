package vm

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// storeWorker is a guest thread storing an increasing counter into its
// word until a store faults; it leaves and re-enters when interrupted, as
// the interpreters do at block boundaries.
type storeWorker struct {
	tlb     *TLB
	addr    uint64
	intr    atomic.Bool
	n       atomic.Uint64
	stop    atomic.Bool
	faulted atomic.Bool
}

func (w *storeWorker) run() {
	w.tlb.Enter()
	defer w.tlb.Leave()
	for v := uint64(1); !w.stop.Load(); v++ {
		if !w.tlb.Store64(w.addr, v) {
			w.faulted.Store(true)
			return
		}
		w.n.Store(v)
		if v%64 == 0 && w.intr.Swap(false) {
			w.tlb.Leave()
			runtime.Gosched()
			w.tlb.Enter()
		}
	}
}

// TestShootdownBeforeReturn: munmap, mprotect taking write away and
// MADV_DONTNEED return only once no other executing CPU can still store
// through its old translation (Linux's flush_tlb_range): the page's
// contents do not change after the call returns, and the storing
// threads fault (munmap, mprotect) or go on in a fresh page (DONTNEED).
// Run with -race.
func TestShootdownBeforeReturn(t *testing.T) {
	const pages = 2
	for _, c := range []struct {
		name   string
		change func(m *MM)
		faults bool
	}{
		{"munmap", func(m *MM) { m.Unmap(cowBase, cowBase+pages*PageSize) }, true},
		{"mprotect", func(m *MM) { require.NoError(t, m.Protect(cowBase, cowBase+pages*PageSize, ProtRead)) }, true},
		{"dontneed", func(m *MM) { m.Discard(cowBase, cowBase+pages*PageSize) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewMM()
			require.NoError(t, m.Map(VMA{Start: cowBase, End: cowBase + pages*PageSize, Prot: ProtRead | ProtWrite}))
			workers := make([]*storeWorker, 3)
			var wg sync.WaitGroup
			for i := range workers {
				w := &storeWorker{tlb: NewTLB(m), addr: cowBase + uint64(i%pages)*PageSize + uint64(i)*8}
				w.tlb.SetInterrupt(func() { w.intr.Store(true) })
				workers[i] = w
				wg.Add(1)
				go func() { defer wg.Done(); w.run() }()
			}
			old := make([]*Page, pages)
			for _, w := range workers {
				for w.n.Load() == 0 {
					runtime.Gosched()
				}
			}
			for i := range old {
				old[i] = pageAt(m, cowBase+uint64(i)*PageSize)
			}
			c.change(m)
			snap := make([][PageSize]byte, pages)
			for i, p := range old {
				snap[i] = p.Data
			}
			for _, w := range workers {
				// Give every worker time for many more stores.
				for n, spins := w.n.Load(), 0; w.n.Load() < n+200 && !w.faulted.Load() && spins < 1e6; spins++ {
					runtime.Gosched()
				}
				w.stop.Store(true)
			}
			wg.Wait()
			for i, p := range old {
				require.Equal(t, snap[i], p.Data, "page %d changed after the call returned", i)
			}
			for i, w := range workers {
				require.Equal(t, c.faults, w.faulted.Load(), "worker %d faulted", i)
				if !c.faults {
					var b [8]byte
					require.NoError(t, m.ReadAt(b[:], w.addr))
					require.Equal(t, w.n.Load(), binary.LittleEndian.Uint64(b[:]), "worker %d's stores go on in the new page", i)
				}
			}
		})
	}
}
