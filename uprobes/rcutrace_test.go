package uprobes

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTasksTraceRCU_Waits: synchronize waits for a section entered
// before it (owned and shared slots, nested sections) and returns once
// it ends.
func TestTasksTraceRCU_Waits(t *testing.T) {
	for _, c := range []struct {
		name string
		slot int
		nest int
	}{{"owned", 3, 1}, {"nested", 5, 2}, {"shared", sharedSlot, 1}} {
		t.Run(c.name, func(t *testing.T) {
			var r tasksTraceRCU
			var idx []int
			for range c.nest {
				idx = append(idx, r.readLock(c.slot))
			}
			done := make(chan struct{})
			go func() { r.synchronize(); close(done) }()
			for i := len(idx) - 1; i >= 0; i-- {
				select {
				case <-done:
					t.Fatalf("synchronize returned with %d sections open", i+1)
				case <-time.After(20 * time.Millisecond):
				}
				r.readUnlock(c.slot, idx[i])
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("synchronize did not return after the section ended")
			}
		})
	}
}

// TestTasksTraceRCU_Publication: a reader that finds an object through
// an RCU pointer inside a section never sees it retired; the updater
// retires each object after replacing it and waiting for a grace
// period. With two CPUs the reader runs beside the updater, so a read
// side whose entry store is not ordered before its loads (or a grace
// period that misses it) would show.
func TestTasksTraceRCU_Publication(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	type obj struct{ retired atomic.Bool }
	var r tasksTraceRCU
	var cur rcuPointer[obj]
	cur.Store(new(obj))
	var stop atomic.Bool
	var bad atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			i := r.readLock(7)
			o := cur.Load()
			for range 50 {
				if o.retired.Load() {
					bad.Add(1)
				}
			}
			r.readUnlock(7, i)
		}
	}()
	for range 2000 {
		old := cur.Load()
		cur.Store(new(obj))
		r.synchronize()
		old.retired.Store(true)
	}
	stop.Store(true)
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Fatalf("a reader saw a retired object %d times", n)
	}
}
