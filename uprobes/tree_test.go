package uprobes

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var allTreeLocks = []TreeLock{TreeLockSpinlock, TreeLockRWLock, TreeLockPercpuRWSem, TreeLockRCU}

func newTestUprobe(k treeKey) *uprobe {
	u := &uprobe{key: k}
	u.ref.Store(1)
	return u
}

func TestTree_InsertEraseRange(t *testing.T) {
	for _, kind := range allTreeLocks {
		t.Run(kind.String(), func(t *testing.T) {
			tr := newTree(kind)
			assert.True(t, tr.empty())
			rng := rand.New(rand.NewPCG(1, 2))
			keys := map[treeKey]*uprobe{}
			for i := 0; i < 500; i++ {
				k := treeKey{dev: 1, ino: uint64(rng.IntN(4)), off: uint64(rng.IntN(1000)) * 4}
				if keys[k] != nil {
					continue
				}
				u := newTestUprobe(k)
				tr.writeLock()
				tr.insertLocked(u)
				tr.writeUnlock()
				keys[k] = u
			}
			for k, u := range keys {
				require.Same(t, u, tr.find(k, 0))
			}
			var got []treeKey
			lo, hi := treeKey{1, 2, 400}, treeKey{1, 2, 2000}
			tr.rangeLock()
			tr.rangeLocked(lo, hi, func(u *uprobe) { got = append(got, u.key) })
			tr.rangeUnlock()
			want := 0
			for k := range keys {
				if cmpKey(lo, k) <= 0 && cmpKey(k, hi) <= 0 {
					want++
				}
			}
			assert.Len(t, got, want)
			for i := 1; i < len(got); i++ {
				assert.Negative(t, cmpKey(got[i-1], got[i]), "in key order")
			}
			n := 0
			for k, u := range keys {
				if n%2 == 0 {
					tr.writeLock()
					tr.eraseLocked(u)
					tr.writeUnlock()
					delete(keys, k)
					assert.Nil(t, tr.find(k, 0))
				}
				n++
			}
			for k, u := range keys {
				require.Same(t, u, tr.find(k, 0))
			}
		})
	}
}

// TestTree_ConcurrentRegisterLookup: lookups of a stable key never miss
// while writers insert and erase other keys (lockless readers retry on
// the seqcount), under every lock.
func TestTree_ConcurrentRegisterLookup(t *testing.T) {
	for _, kind := range allTreeLocks {
		t.Run(kind.String(), func(t *testing.T) {
			tr := newTree(kind)
			stable := make([]*uprobe, 64)
			for i := range stable {
				stable[i] = newTestUprobe(treeKey{1, 1, uint64(i) * 8})
				tr.writeLock()
				tr.insertLocked(stable[i])
				tr.writeUnlock()
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			var lookups atomic.Int64
			for r := 0; r < 4; r++ {
				wg.Add(1)
				go func(cpu int) {
					defer wg.Done()
					for i := 0; !stop.Load(); i++ {
						u := stable[i%len(stable)]
						if tr.find(u.key, cpu) != u {
							t.Errorf("lookup of %v missed", u.key)
							return
						}
						lookups.Add(1)
					}
				}(r)
			}
			for i := 0; i < 3000; i++ {
				u := newTestUprobe(treeKey{1, 1, uint64(i)*8 + 4})
				tr.writeLock()
				tr.insertLocked(u)
				tr.writeUnlock()
				if i%3 != 0 {
					tr.writeLock()
					tr.eraseLocked(u)
					tr.writeUnlock()
				}
			}
			for lookups.Load() < 1000 {
				runtime.Gosched()
			}
			stop.Store(true)
			wg.Wait()
		})
	}
}

// TestTreeLock_MutualExclusion: the write side excludes readers and
// other writers in every variant.
func TestTreeLock_MutualExclusion(t *testing.T) {
	for _, kind := range allTreeLocks {
		t.Run(kind.String(), func(t *testing.T) {
			tr := newTree(kind)
			var readers, writers atomic.Int32
			var wg sync.WaitGroup
			for g := 0; g < 6; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < 500; i++ {
						if g%3 == 0 {
							tr.lk.lock()
							if writers.Add(1) != 1 || readers.Load() != 0 {
								t.Error("writer not exclusive")
							}
							writers.Add(-1)
							tr.lk.unlock()
							continue
						}
						tr.lk.rlock(g)
						readers.Add(1)
						if writers.Load() != 0 {
							t.Error("reader ran with a writer")
						}
						readers.Add(-1)
						tr.lk.runlock(g)
					}
				}(g)
			}
			wg.Wait()
		})
	}
}

func TestSRCU_SynchronizeWaitsForReaders(t *testing.T) {
	var s srcu
	idx := s.readLock(3)
	done := make(chan struct{})
	go func() { s.synchronize(); close(done) }()
	select {
	case <-done:
		t.Fatal("synchronize did not wait")
	default:
	}
	s.readUnlock(7, idx) // released on another CPU
	<-done
	s.synchronize() // no readers: immediate
}

// BenchmarkTreeLookup measures find under each tree lock, with all
// goroutines looking up one hot uprobe (the trig-uprobe-nop pattern).
func BenchmarkTreeLookup(b *testing.B) {
	for _, kind := range allTreeLocks {
		b.Run(kind.String(), func(b *testing.B) {
			tr := newTree(kind)
			for i := 0; i < 128; i++ {
				tr.writeLock()
				tr.insertLocked(newTestUprobe(treeKey{1, 1, uint64(i) * 4}))
				tr.writeUnlock()
			}
			k := treeKey{1, 1, 64 * 4}
			var cpus atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				cpu := int(cpus.Add(1))
				for pb.Next() {
					if tr.find(k, cpu) == nil {
						panic(fmt.Sprint("miss ", k))
					}
				}
			})
		})
	}
}

// TestSystem_ConcurrentRegisterAndHits: threads hitting a registered
// probe never miss it (no restarts) while another probe of the same file
// is registered and unregistered over and over, under every tree lock.
func TestSystem_ConcurrentRegisterAndHits(t *testing.T) {
	for _, kind := range allTreeLocks {
		t.Run(kind.String(), func(t *testing.T) {
			o := DefaultOptions()
			o.TreeLock = kind
			w := newWorld(t, ArchARM64, o, a64Text())
			var hits atomic.Int64
			w.probe(a64NOPOff, counter(&hits, 0))
			const perThread = 300
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				th := &fakeThread{}
				tk, r := w.task(th, int32(g+1))
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < perThread; i++ {
						r.pc = textBase + a64NOPOff
						if !tk.BreakpointTrap(r, r.pc, ARM64BRKImm) {
							t.Error("breakpoint not taken")
							return
						}
						tk.NotifyResume(r)
						if r.pc != textBase+a64NOPOff+4 {
							t.Errorf("pc %#x after the hit", r.pc)
							return
						}
					}
				}()
			}
			for i := 0; i < 30; i++ {
				p := w.probe(a64ADDOff, counter(&hits, 0))
				require.NoError(t, p.Close())
			}
			wg.Wait()
			assert.Equal(t, int64(4*perThread), hits.Load())
			assert.Zero(t, w.sys.Stats().Restarts)
		})
	}
}
