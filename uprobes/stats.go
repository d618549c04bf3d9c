package uprobes

import (
	"fmt"
	"io"
	"reflect"
	"sync"
	"sync/atomic"
)

// pcpuCounter is a per-CPU event counter (the kernel's percpu counters):
// the hit path adds to its own cache line, so producers on different CPUs
// do not bounce one line; readers sum the slots.
//
// A slot is a thread's counter slot (Task.slot, counterSlots), not a CPU
// number: every slot but sharedSlot has one owner at a time, which adds
// with a plain add (relaxedAdd) as this_cpu_add does, instead of a
// locked one (about 20 cycles on x86-64, several per hit). Threads
// beyond the owned slots share sharedSlot, with atomic adds. A slot's
// count outlives its owner: the next owner adds to it, so Load's sum
// stays the total.
type pcpuCounter [pcpuSlots]struct {
	v uint64 // single writer (the slot's owner), or atomic adds (sharedSlot)
	_ [56]byte
}

const (
	pcpuSlots  = 64
	sharedSlot = pcpuSlots - 1
)

// Add adds n to slot's share.
func (c *pcpuCounter) Add(slot int, n uint64) {
	if slot == sharedSlot {
		atomic.AddUint64(&c[sharedSlot].v, n)
		return
	}
	relaxedAdd(&c[slot].v, n)
}

// Load sums the slots. A sum that races with adds is some value between
// the counts before and after them, as a percpu counter's sum is.
func (c *pcpuCounter) Load() uint64 {
	var n uint64
	for i := range c {
		n += atomic.LoadUint64(&c[i].v)
	}
	return n
}

// counterSlots hands out the owned slots of the pcpuCounters.
type counterSlots struct {
	mu   sync.Mutex
	used [sharedSlot]bool // protected by mu
}

// take returns a free owned slot, or sharedSlot when all are taken.
func (cs *counterSlots) take() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for i, u := range cs.used {
		if !u {
			cs.used[i] = true
			return i
		}
	}
	return sharedSlot
}

// put gives back a slot take returned; its owner adds nothing after.
func (cs *counterSlots) put(slot int) {
	if slot == sharedSlot {
		return
	}
	cs.mu.Lock()
	cs.used[slot] = false
	cs.mu.Unlock()
}

// statCounters are the subsystem's event counters; the ones every hit
// touches are pcpuCounters (thread-owned slots).
type statCounters struct {
	hits, simulated, singleSteps                                       pcpuCounter
	uretEntries, uretReturns, poolHits, poolPuts                       pcpuCounter
	aborts, restarts, sigtraps, sigills                                atomic.Uint64
	installs, removals, handlerRemoves                                 atomic.Uint64
	xolAreas, slotWaits, xolCopies, copiesSaved, flushes, flushesSaved atomic.Uint64
	uretOmitted, uretChained, uretPurged                               atomic.Uint64
	riAllocs, riFrees, timerRuns, timerExpired                         atomic.Uint64
	signalsDenied, exitMidStep, warnings                               atomic.Uint64
}

// Stats is a snapshot of the subsystem's counters (for --stats).
type Stats struct {
	Hits          uint64 // breakpoint hits handled by a uprobe (handler chains run)
	Simulated     uint64 // hits whose instruction was simulated/emulated (1 trap)
	SingleSteps   uint64 // hits stepped out of line (2 traps)
	Aborts        uint64 // steps aborted (the slot faulted or a fatal signal came)
	Restarts      uint64 // hits restarted at the probe address (no uprobe, not analysed, no slot…)
	SIGTRAPs      uint64 // breakpoints no uprobe owns
	SIGILLs       uint64 // failed fixups and bad trampoline/uretprobe-syscall hits
	Installs      uint64 // breakpoints written
	Removals      uint64 // original instructions written back
	HandlerRemove uint64 // UPROBE_HANDLER_REMOVE unapplies
	XOLAreas      uint64 // "[uprobes]" pages created
	SlotWaits     uint64 // threads that found every XOL slot busy
	XOLCopies     uint64 // instructions copied into slots (incl. trampolines)
	CopiesSaved   uint64 // copies skipped by flush elision (same bytes)
	Flushes       uint64 // arm64 slot cache maintenance done
	FlushesSaved  uint64 // arm64 slot cache maintenance skipped
	UretEntries   uint64 // return instances pushed
	UretReturns   uint64 // return instances that ran their handlers
	UretOmitted   uint64 // entries refused by MAX_URETPROBE_DEPTH
	UretChained   uint64 // chained entries (trampoline already the return address)
	UretPurged    uint64 // instances dropped without handlers (longjmp'ed frames)
	RIAllocs      uint64 // return instances allocated
	RIFrees       uint64 // return instances freed (not pooled)
	PoolHits      uint64 // return instances taken from a pool
	PoolPuts      uint64 // return instances put into a pool
	TimerRuns     uint64 // ri_timer callbacks
	TimerExpired  uint64 // leases converted by hprobe_expire
	SignalsDenied uint64 // uprobe_deny_signal clearing TIF_SIGPENDING
	ExitMidStep   uint64 // threads freed while stepping
	Warnings      uint64 // kernel warnings (uprobe_warn, WARN_ON)
	TreeRetries   uint64 // lockless lookups retried after a seqcount change
}

// Stats returns a snapshot of the counters.
func (s *System) Stats() Stats {
	c := &s.stats
	return Stats{
		Hits: c.hits.Load(), Simulated: c.simulated.Load(), SingleSteps: c.singleSteps.Load(),
		Aborts: c.aborts.Load(), Restarts: c.restarts.Load(), SIGTRAPs: c.sigtraps.Load(), SIGILLs: c.sigills.Load(),
		Installs: c.installs.Load(), Removals: c.removals.Load(), HandlerRemove: c.handlerRemoves.Load(),
		XOLAreas: c.xolAreas.Load(), SlotWaits: c.slotWaits.Load(), XOLCopies: c.xolCopies.Load(),
		CopiesSaved: c.copiesSaved.Load(), Flushes: c.flushes.Load(), FlushesSaved: c.flushesSaved.Load(),
		UretEntries: c.uretEntries.Load(), UretReturns: c.uretReturns.Load(), UretOmitted: c.uretOmitted.Load(),
		UretChained: c.uretChained.Load(), UretPurged: c.uretPurged.Load(),
		RIAllocs: c.riAllocs.Load(), RIFrees: c.riFrees.Load(), PoolHits: c.poolHits.Load(), PoolPuts: c.poolPuts.Load(),
		TimerRuns: c.timerRuns.Load(), TimerExpired: c.timerExpired.Load(),
		SignalsDenied: c.signalsDenied.Load(), ExitMidStep: c.exitMidStep.Load(), Warnings: c.warnings.Load(),
		TreeRetries: s.tree.retries.Load(),
	}
}

// WriteTo prints the non-zero counters, one "uprobes.Name value" line
// each, in field order.
func (st Stats) WriteTo(w io.Writer) (int64, error) {
	var n int64
	v := reflect.ValueOf(st)
	for i := 0; i < v.NumField(); i++ {
		x := v.Field(i).Uint()
		if x == 0 {
			continue
		}
		k, err := fmt.Fprintf(w, "uprobes.%s %d\n", v.Type().Field(i).Name, x)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
