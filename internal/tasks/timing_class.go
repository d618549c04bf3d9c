package tasks

import (
	"fmt"
	"io"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/timing"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Per-class instruction costs and cache latencies in the timing model.
// A CPU that counts its retired instructions by class (vm/arm64: the
// hooked loop tallies decode.ClassCounts from the class byte the decoder
// put in each record) is charged the machine's cpi.CLASS per
// instruction, cpi.taken per taken branch and cache.ic_broadcast per IC
// IVAU and other thread of the process; other CPUs (amd64) pay
// insn.cycles per instruction. With the cache model on, every L1 I or D
// miss adds cache.l1i_miss or cache.l1d_miss, every L2 miss
// cache.l2_miss and every LLC miss cache.llc_miss on top (so a load
// served by memory costs all four levels' latencies). All of it is charged when
// the thread leaves Run (Task.account), from the counters' growth since
// the previous exit, so the interpreters' hot paths do nothing more
// than count.

// classCPU is what a CPU offers for per-class costs.
type classCPU interface {
	CountClasses(on bool)
	ClassCounts() *decode.ClassCounts
}

// insnCosts are the machine's per-class costs in hundredths of a cycle.
type insnCosts struct {
	on       bool // the machine has cpi entries
	cpi      [decode.NumInsnClasses]int64
	taken    int64
	l1i, l1d int64 // cycles per miss
	l2, llc  int64 // cycles per outer-level miss
	icBcast  int64 // cycles per IC IVAU and other thread
	plain    int64 // hundredths per unclassified instruction
}

func newInsnCosts(m *timing.Machine) insnCosts {
	ic := insnCosts{on: len(m.CPI) > 0, taken: m.CPI["taken"], l1i: m.L1IMiss, l1d: m.L1DMiss,
		l2: m.L2Miss, llc: m.LLCMiss,
		icBcast: m.ICBroadcast, plain: m.InsnCycles * 100}
	for c := decode.InsnClass(0); c < decode.NumInsnClasses; c++ {
		v, ok := m.CPI[c.String()]
		if !ok {
			v = ic.plain
		}
		ic.cpi[c] = v
	}
	return ic
}

// checkCPI reports a cpi.NAME entry that names no class.
func checkCPI(m *timing.Machine) error {
	for name := range m.CPI {
		if name == "taken" {
			continue
		}
		ok := false
		for c := decode.InsnClass(0); c < decode.NumInsnClasses; c++ {
			ok = ok || c.String() == name
		}
		if !ok {
			return fmt.Errorf("machine %s: cpi.%s names no instruction class", m.Name, name)
		}
	}
	return nil
}

// retireBase is a thread's counters at its previous exit from Run.
type retireBase struct {
	cls          *decode.ClassCounts // the CPU's tally (a new CPU after execve has another)
	last         decode.ClassCounts
	iMiss, dMiss uint64
	l2Miss       uint64
	llcMiss      uint64
	cm           any // the cache model the miss counts belong to
	// sampled is the CPU's clock at the thread's previous profile
	// sample (cycleDelta).
	sampled int64
}

// startClassCount turns class counting on for cpu when the machine has
// per-class costs.
func (ts *timingState) startClassCount(cpu vm.CPU) {
	if c, ok := cpu.(classCPU); ok && ts.costs.on && c.ClassCounts() == nil {
		c.CountClasses(true)
	}
}

// timingRetire charges n newly retired instructions to t's virtual CPU.
func (t *Task) timingRetire(n uint64) {
	ts := t.tg.k.tm
	b := ts.base[t.tid]
	if b == nil {
		b = &retireBase{}
		ts.base[t.tid] = b
	}
	var centis int64
	var counted uint64
	if c, ok := t.cpu.(classCPU); ok && ts.costs.on {
		cls := c.ClassCounts()
		if cls != b.cls { // first exit, or a new CPU (execve): count from zero
			b.cls, b.last = cls, decode.ClassCounts{}
		}
		if cls != nil {
			for i, v := range cls.N {
				d := v - b.last.N[i]
				centis += int64(d) * ts.costs.cpi[i]
				counted += d
			}
			centis += int64(cls.Taken-b.last.Taken) * ts.costs.taken
			if nic := cls.N[decode.ClassIC] - b.last.N[decode.ClassIC]; nic > 0 && ts.costs.icBcast > 0 {
				t.tg.mu.Lock()
				others := int64(len(t.tg.tasks) - 1)
				t.tg.mu.Unlock()
				centis += int64(nic) * max(others, 0) * ts.costs.icBcast * 100
			}
			b.last = *cls
		} else {
			c.CountClasses(true)
		}
	}
	if counted < n { // retired outside the counting loop, or not counted
		centis += int64(n-counted) * ts.costs.plain
	}
	if c, ok := t.cpu.(cacheModelCPU); ok && (ts.costs.l1i != 0 || ts.costs.l1d != 0 || ts.costs.l2 != 0 || ts.costs.llc != 0) {
		if m := c.CacheModel(); m != nil {
			st := m.Stats()
			if any(m) != b.cm {
				b.cm, b.iMiss, b.dMiss, b.l2Miss, b.llcMiss = m, 0, 0, 0, 0
			}
			centis += (int64(st.I.Misses-b.iMiss)*ts.costs.l1i + int64(st.D.Misses-b.dMiss)*ts.costs.l1d +
				int64(st.L2.Misses-b.l2Miss)*ts.costs.l2 + int64(st.LLC.Misses-b.llcMiss)*ts.costs.llc) * 100
			b.iMiss, b.dMiss, b.l2Miss, b.llcMiss = st.I.Misses, st.D.Misses, st.L2.Misses, st.LLC.Misses
		}
	}
	t.vc.RetireCentis(n, centis)
}

// writeClassStats prints, per thread, its retired instructions by class
// and its taken branches (the counts since its CPU began counting).
func (ts *timingState) writeClassStats(w io.Writer) {
	if !ts.costs.on {
		return
	}
	fmt.Fprintf(w, "  retired instructions by class\n  %-5s", "tid")
	for c := decode.InsnClass(0); c < decode.NumInsnClasses; c++ {
		fmt.Fprintf(w, " %10s", c)
	}
	fmt.Fprintf(w, " %10s\n", "taken")
	for _, c := range ts.model.CPUs() {
		b := ts.base[c.TID]
		if b == nil || b.cls == nil {
			continue
		}
		fmt.Fprintf(w, "  %-5d", c.TID)
		for _, v := range b.last.N {
			fmt.Fprintf(w, " %10d", v)
		}
		fmt.Fprintf(w, " %10d\n", b.last.Taken)
	}
}

// cycleDelta is a guest profile sample's "cycles" value: the virtual
// cycles the thread's CPU spent since its previous sample, its retired
// instructions charged up to now (Task.account: charging a span in
// pieces gives the same clock as at once) and every kernel path and
// lock wait charged in between included.
func (t *Task) cycleDelta() int64 {
	t.account()
	ts := t.tg.k.tm
	b := ts.base[t.tid]
	if b == nil {
		b = &retireBase{}
		ts.base[t.tid] = b
	}
	d := t.vc.Clock - b.sampled
	b.sampled = t.vc.Clock
	return d
}
