package guestprof

import (
	"fmt"

	"github.com/uvm-emu/uvm/internal/vm"
)

// CycleClock tracks one thread's next sample point on a virtual cycle
// clock (Options.Cycles): a sample is due each time the thread's cycles
// cross a multiple of the period. The zero CycleClock (and the one a nil
// Profiler returns) never fires.
type CycleClock struct {
	period, next uint64
	// last are the cycles and instructions at the previous sample.
	lastCycles, lastInsns uint64
}

// NewCycleClock returns a cycle clock for a thread that has spent cycles
// cycles and retired insns instructions; its first sample is due at the
// next multiple of the period above cycles.
func (p *Profiler) NewCycleClock(cycles, insns uint64) CycleClock {
	if p == nil || !p.opts.Cycles {
		return CycleClock{}
	}
	return CycleClock{period: p.period, next: (cycles/p.period + 1) * p.period, lastCycles: cycles, lastInsns: insns}
}

// Armed reports whether the clock can fire.
func (c *CycleClock) Armed() bool { return c.period != 0 }

// Left returns the cycles until the next sample point (0: due now).
func (c *CycleClock) Left(cycles uint64) uint64 {
	if c.period == 0 {
		return ^uint64(0)
	}
	if cycles >= c.next {
		return 0
	}
	return c.next - cycles
}

// Due reports whether the thread's cycles have reached the sample point
// and, if so, re-arms the clock at the next multiple of the period above
// cycles and returns the cycles and instructions since the previous
// sample and the skid: the cycles past the multiple crossed last.
func (c *CycleClock) Due(cycles, insns uint64) (dCycles, dInsns, skid uint64, ok bool) {
	if c.period == 0 || cycles < c.next {
		return 0, 0, 0, false
	}
	dCycles, dInsns = cycles-c.lastCycles, insns-c.lastInsns
	skid = cycles % c.period
	c.lastCycles, c.lastInsns = cycles, insns
	c.next = (cycles/c.period + 1) * c.period
	return dCycles, dInsns, skid, true
}

// skidStats is what the profile's comment says about the skid.
type skidStats struct {
	n, sum, max uint64
}

func (s skidStats) comment() string {
	mean := 0.0
	if s.n > 0 {
		mean = float64(s.sum) / float64(s.n)
	}
	return fmt.Sprintf("cycle clock: %d samples, skid mean %.1f max %d cycles", s.n, mean, s.max)
}

// SampleCycles records one stack sample of a cycle-clock profile: cycles
// (the first value, CycleClock.Due's dCycles), then the extra values in
// Options.Extra order; skid goes into the profile's skid comment.
func (p *Profiler) SampleCycles(tid int, arch vm.Arch, pc, sp, fp, lr uint64, mm *vm.MM, cycles, skid uint64, extra []int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.skid.n++
	p.skid.sum += skid
	p.skid.max = max(p.skid.max, skid)
	p.mu.Unlock()
	p.SampleValues(tid, arch, pc, sp, fp, lr, mm, cycles, extra)
}

// Cycles reports whether p samples on the cycle clock (false for nil).
func (p *Profiler) Cycles() bool { return p != nil && p.opts.Cycles }
