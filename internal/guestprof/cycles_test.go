package guestprof

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// TestCycleClock: samples fall due at each multiple of the period
// crossed, stand for the cycles and instructions since the previous
// one, and report the cycles past the multiple as skid.
func TestCycleClock(t *testing.T) {
	p := New(Options{Period: 100, Cycles: true})
	c := p.NewCycleClock(30, 7)
	if l := c.Left(30); l != 70 {
		t.Errorf("Left(30) = %d, want 70", l)
	}
	if _, _, _, ok := c.Due(99, 50); ok {
		t.Error("due before the multiple")
	}
	if dc, di, skid, ok := c.Due(104, 60); !ok || dc != 74 || di != 53 || skid != 4 {
		t.Errorf("Due(104) = %d, %d, %d, %v; want 74, 53, 4, true", dc, di, skid, ok)
	}
	if l := c.Left(104); l != 96 {
		t.Errorf("re-armed at the next multiple: Left(104) = %d, want 96", l)
	}
	// A span crossing three multiples (a long lock wait) is one sample.
	if dc, _, skid, ok := c.Due(420, 61); !ok || dc != 316 || skid != 20 {
		t.Errorf("Due(420) = %d, skid %d, %v; want 316, 20, true", dc, skid, ok)
	}
	if l := c.Left(420); l != 80 {
		t.Errorf("Left(420) = %d, want 80", l)
	}
	var zero CycleClock
	if _, _, _, ok := zero.Due(1<<40, 0); ok || zero.Armed() || zero.Left(5) != ^uint64(0) {
		t.Error("the zero CycleClock fires")
	}
	if ic := New(Options{Period: 100}).NewCycleClock(0, 0); ic.Armed() {
		t.Error("an instruction-clock profiler armed a cycle clock")
	}
	var nilp *Profiler
	if nc := nilp.NewCycleClock(0, 0); nc.Armed() || nilp.Cycles() {
		t.Error("a nil profiler's cycle clock is armed")
	}
}

// TestSampleCyclesProfile: a cycle-clock profile's first sample type and
// period type are cycles, and its comment gives the skid.
func TestSampleCyclesProfile(t *testing.T) {
	c := loadFibfp(t, "arm64", vm.ArchARM64)
	c.chain(t)
	p := New(Options{Period: 500, Cycles: true, Extra: []string{"instructions"}})
	p.SampleCycles(1, vm.ArchARM64, c.retFF, sp, f1, 0, c.mm, 503, 3, []int64{200})
	p.SampleCycles(1, vm.ArchARM64, c.retFF, sp, f1, 0, c.mm, 509, 12, []int64{180})
	prof, err := p.Profile()
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.SampleType) != 2 || prof.SampleType[0].Type != "cycles" || prof.SampleType[1].Type != "instructions" ||
		prof.DefaultSampleType != "cycles" || prof.PeriodType.Type != "cycles" || prof.Period != 500 {
		t.Fatalf("sample types %v default %q period %v %d", prof.SampleType, prof.DefaultSampleType, prof.PeriodType, prof.Period)
	}
	if len(prof.Sample) != 1 || prof.Sample[0].Value[0] != 1012 || prof.Sample[0].Value[1] != 380 {
		t.Errorf("samples:\n%s", prof)
	}
	if want := "cycle clock: 2 samples, skid mean 7.5 max 12 cycles"; len(prof.Comments) != 1 || prof.Comments[0] != want {
		t.Errorf("comments %q, want %q", prof.Comments, want)
	}
}
