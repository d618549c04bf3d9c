package hostfence

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestDekker runs the store-then-load handshake both ways many times: a
// frequent side that stores its flag (Store) and then loads the other's,
// and a rare side that stores its flag atomically, calls Heavy and then
// loads the frequent side's. Both may see each other, but never may both
// miss each other.
func TestDekker(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs for the race to be possible")
	}
	t.Logf("asymmetric: %v", Asymmetric())
	const rounds = 20000
	var fast, rare uint64
	var sawRare, sawFast [rounds]bool
	var wg sync.WaitGroup
	var go1, go2 atomic.Uint64
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := uint64(0); i < rounds; i++ {
			for go1.Load() != i { // wait for the round
			}
			Store(&fast, i+1)
			sawRare[i] = atomic.LoadUint64(&rare) == i+1
			go2.Add(1)
		}
	}()
	go func() {
		defer wg.Done()
		for i := uint64(0); i < rounds; i++ {
			go1.Store(i)
			atomic.StoreUint64(&rare, i+1)
			Heavy()
			sawFast[i] = atomic.LoadUint64(&fast) == i+1
			for go2.Load() != i+1 {
			}
		}
	}()
	wg.Wait()
	for i := range rounds {
		if !sawRare[i] && !sawFast[i] {
			t.Fatalf("round %d: both sides missed the other's store", i)
		}
	}
}
