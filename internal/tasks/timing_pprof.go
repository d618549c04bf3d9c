package tasks

import (
	"math"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/guestprof"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The guest profile on the virtual cycle clock (uvm run --det --model M
// --pprof FILE --pprof-clock=cycles). A thread's sample is due each time
// its on-CPU cycles (onCPUCycles: its virtual CPU's instruction, kernel
// and lock-wait cycles, not the time it slept) cross a multiple of the
// period, so an instruction, kernel path or lock wait gets samples in
// proportion to its cycles.
//
// An instruction's cost is known only when it has retired (Task.account
// prices the class counts), and Run stops only at block boundaries. So
// runSampledCycles gives each Run the budget that cannot reach the
// crossing, the cycles left divided by the dearest instruction
// (insnBound), and takes the sample at the first exit from Run at or
// past the crossing: the end of the block in which the crossing
// instruction retired, or, for cycles charged outside Run (syscall entry,
// uprobe paths, lock waits), where the thread returns to the guest. The
// cycles past the multiple are the sample's skid; the profile's comment
// gives their mean and maximum. The bound is exact without the cache
// model; with it an instruction that misses more than once in the L1D
// (an x86 string instruction, a load across two lines) can carry the
// clock further inside a Run, which only adds to the skid. Cutting Run
// changes no instruction or clock: the quantum still ends at the same
// block boundary, and charging a span in pieces gives the same clock.

// onCPUCycles is the cycles t's virtual CPU has spent running: its
// clock less the gaps it slept through (timingWoke).
func (t *Task) onCPUCycles() uint64 {
	c := t.vc
	return uint64(c.InsnCycles + c.KernelCycles + c.Waited)
}

// insnBound is the most one instruction of t can cost, in ten-thousandths
// of a cycle (RetireCentis' unit with the SMT penalty applied).
func (t *Task) insnBound() int64 {
	ts := t.tg.k.tm
	b := ts.costs.plain
	if _, ok := t.cpu.(classCPU); ok && ts.costs.on {
		for _, v := range ts.costs.cpi {
			b = max(b, v)
		}
		if ts.costs.icBcast > 0 {
			t.tg.mu.Lock()
			others := int64(max(len(t.tg.tasks)-1, 0))
			t.tg.mu.Unlock()
			b = max(b, ts.costs.cpi[decode.ClassIC]+others*ts.costs.icBcast*100)
		}
		b += max(ts.costs.taken, 0)
	}
	if c, ok := t.cpu.(cacheModelCPU); ok && c.CacheModel() != nil {
		b += max(ts.costs.l1i, 0)*100 + max(ts.costs.l1d, 0)*100
	}
	return max(b, 1) * max(ts.model.M.SMTPenaltyPct, 100)
}

// runSampledCycles is runSampled on the cycle clock.
func (t *Task) runSampledCycles(prof *guestprof.Profiler, budget int64) vm.Exit {
	if t.vc == nil { // no virtual CPU (NewKernel requires the model): nothing to sample on
		return t.cpu.Run(budget)
	}
	if !t.cclock.Armed() {
		t.cclock = prof.NewCycleClock(0, 0)
	}
	bound := t.insnBound()
	for {
		t.sampleCycles(prof)
		start := t.cpu.Retired()
		b := budget
		// Cycles left before the crossing, less one: b instructions
		// of at most bound each (plus the carried fraction) stay
		// below it.
		if left := t.cclock.Left(t.onCPUCycles()) - 1; left <= math.MaxInt64/10000 {
			b = min(b, max(int64(left)*10000/bound, 1))
		}
		ex := t.cpu.Run(b)
		done := t.cpu.Retired()
		budget -= int64(done - start)
		if ex.Reason != vm.ExitBudget || budget <= 0 || int64(done-start) < b {
			t.sampleCycles(prof)
			return ex
		}
	}
}

// sampleCycles charges what t retired so far and takes its sample if
// its cycles have reached the sample point.
func (t *Task) sampleCycles(prof *guestprof.Profiler) {
	t.account()
	cyc, insns, skid, ok := t.cclock.Due(t.onCPUCycles(), t.vc.Insns)
	if !ok {
		return
	}
	arch, fp, lr := t.frameRegs()
	extra := append([]int64{int64(insns)}, t.cacheMissDeltas()...)
	prof.SampleCycles(int(t.tid), arch, t.cpu.PC(), t.cpu.SP(), fp, lr, t.cpu.MM(), cyc, skid, extra)
}
