package uprobes

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCounterSlots_ConcurrentHits: threads hitting one probe at once,
// more of them than there are owned counter slots (the rest share the
// atomic slot), add up to exact totals in Stats and in the probe's own
// count; exited threads give their slots back and their counts stay.
func TestCounterSlots_ConcurrentHits(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	p := w.probe(a64NOPOff, Consumer{Handler: func(*Ctx) int { return 0 }})
	const threads, hits = 2 * pcpuSlots, 500
	tasks := make([]*Task, threads)
	regs := make([]*fakeRegs, threads)
	ths := make([]*fakeThread, threads)
	owned := 0
	for i := range tasks {
		ths[i] = &fakeThread{}
		tasks[i], regs[i] = w.task(ths[i], int32(100+i))
		if tasks[i].slot != sharedSlot {
			owned++
		}
	}
	require.Equal(t, sharedSlot, owned, "every owned slot handed out once")
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range hits {
				regs[i].pc = textBase + a64NOPOff
				if !w.trap(tasks[i], regs[i], ths[i]) {
					t.Error("breakpoint not taken")
					return
				}
			}
		}()
	}
	wg.Wait()
	st := w.sys.Stats()
	assert.Equal(t, uint64(threads*hits), st.Hits)
	assert.Equal(t, uint64(threads*hits), st.Simulated)
	assert.Equal(t, uint64(threads*hits), p.u.hits.Load())
	for _, tk := range tasks {
		tk.Free(nil)
		tk.Exit()
	}
	assert.Equal(t, uint64(threads*hits), w.sys.Stats().Hits, "counts outlive their threads")
	th := &fakeThread{}
	tk, _ := w.task(th, 1)
	assert.NotEqual(t, sharedSlot, tk.slot, "exited threads gave their slots back")
}
