package guestprof

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/uvm-emu/uvm/internal/vm"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// sampleCall is one Profiler.SampleValues call.
type sampleCall struct {
	tid             int
	arch            vm.Arch
	pc, sp, fp, lr  uint64
	mm              *vm.MM
	insns           uint64
	icache, dcache  int64
	stackWords      [][2]uint64 // (address, word) to write first
	stackWordsGuest *guest
}

// scenario builds a fixed sequence of samples over both arches' fibfp.
func scenario(t *testing.T) []sampleCall {
	var calls []sampleCall
	for i, a := range arches {
		c := loadFibfp(t, a.name, a.arch)
		c.chain(t)
		tid := 100 + i
		live := sampleCall{tid: tid, arch: a.arch, pc: c.retFF, sp: sp, fp: f1, lr: c.retFF, mm: c.mm, insns: 1000, icache: 3, dcache: 5}
		entry := sampleCall{tid: tid, arch: a.arch, pc: c.fib, sp: sp, fp: f3, lr: c.retRF, mm: c.mm, insns: 1004, icache: 1,
			stackWords: [][2]uint64{{sp, c.retRF}}, stackWordsGuest: c.guest}
		lost := sampleCall{tid: tid + 10, arch: a.arch, pc: 0x1000, sp: sp, fp: 0, mm: c.mm, insns: 1000} // pc outside any mapping
		calls = append(calls, live, live, entry, live, lost)
	}
	return calls
}

func feed(t *testing.T, p *Profiler, calls []sampleCall) {
	for _, c := range calls {
		for _, w := range c.stackWords {
			c.stackWordsGuest.put(t, w[0], w[1])
		}
		p.SampleValues(c.tid, c.arch, c.pc, c.sp, c.fp, c.lr, c.mm, c.insns, []int64{c.icache, c.dcache})
	}
}

func newTestProfiler() *Profiler {
	return New(Options{Period: 1000, Extra: []string{"icache-misses", "dcache-misses"}})
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update if the change is intended):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestProfileGolden pins the text form of a profile of fixed samples.
func TestProfileGolden(t *testing.T) {
	p := newTestProfiler()
	feed(t, p, scenario(t))
	prof, err := p.Profile()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "profile.golden", prof.String())
}

// TestProfileRoundTrip: Write, then Parse with the pprof package, gives
// the same profile.
func TestProfileRoundTrip(t *testing.T) {
	p := newTestProfiler()
	feed(t, p, scenario(t))
	want, err := p.Profile()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("round trip differs:\n--- parsed\n%s--- written\n%s", got, want)
	}
	// The leaf-first stack and the labels survive.
	var fibSelf int64
	for _, s := range got.Sample {
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 && s.Location[0].Line[0].Function.Name == "fib" {
			fibSelf += s.Value[0]
		}
		if len(s.NumLabel["tid"]) != 1 {
			t.Errorf("sample without a tid label: %v", s.NumLabel)
		}
	}
	if fibSelf != 2*(3*1000+1004) {
		t.Errorf("fib flat = %d", fibSelf)
	}
	if got.Mapping[0].BuildID == "" || !strings.HasSuffix(got.Mapping[0].File, "fibfp") || !got.Mapping[0].HasLineNumbers {
		t.Errorf("mapping %+v", got.Mapping[0])
	}
}

// TestProfileDeterministic: the same samples give the same bytes, and so
// do the same samples in another order or from another profiler.
func TestProfileDeterministic(t *testing.T) {
	write := func(calls []sampleCall) []byte {
		p := newTestProfiler()
		feed(t, p, calls)
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a := write(scenario(t))
	b := write(scenario(t))
	if !bytes.Equal(a, b) {
		t.Error("two identical sample sequences give different bytes")
	}
	calls := scenario(t)
	for i, j := 0, len(calls)-1; i < j; i, j = i+1, j-1 {
		calls[i], calls[j] = calls[j], calls[i]
	}
	if c := write(calls); !bytes.Equal(a, c) {
		t.Error("the same samples in another order give different bytes")
	}
}

// TestClock checks sample points and budgets.
func TestClock(t *testing.T) {
	p := New(Options{Period: 100})
	c := p.NewClock(50)
	if b := c.Budget(50, 1<<20); b != 100 {
		t.Errorf("Budget = %d, want 100", b)
	}
	if b := c.Budget(120, 10); b != 10 {
		t.Errorf("Budget = %d, want 10", b)
	}
	if _, ok := c.Due(149); ok {
		t.Error("due before the sample point")
	}
	if n, ok := c.Due(153); !ok || n != 103 {
		t.Errorf("Due(153) = %d, %v; want 103, true", n, ok)
	}
	if b := c.Budget(153, 1<<20); b != 100 {
		t.Errorf("re-armed Budget = %d, want 100", b)
	}
	var nilp *Profiler
	nc := nilp.NewClock(0)
	if _, ok := nc.Due(1 << 40); ok || nc.Budget(0, 77) != 77 || nilp.Period() != 0 {
		t.Error("a nil profiler's clock fires")
	}
	nilp.Sample(1, vm.ArchARM64, 0, 0, 0, 0, nil) // no-op
	if New(Options{}).Period() != DefaultPeriod {
		t.Error("default period")
	}
}

// TestSamplePeriodValue: Sample counts one period per sample.
func TestSamplePeriodValue(t *testing.T) {
	c := loadFibfp(t, "arm64", vm.ArchARM64)
	c.chain(t)
	p := New(Options{Period: 777})
	p.Sample(1, vm.ArchARM64, c.retFF, sp, f1, 0, c.mm)
	p.Sample(1, vm.ArchARM64, c.retFF, sp, f1, 0, c.mm)
	prof, err := p.Profile()
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Sample) != 1 || prof.Sample[0].Value[0] != 2*777 || len(prof.Sample[0].Location) != 4 {
		t.Fatalf("profile:\n%s", prof)
	}
	if len(prof.SampleType) != 1 || prof.SampleType[0].Type != "instructions" || prof.Period != 777 {
		t.Errorf("sample types %v period %d", prof.SampleType, prof.Period)
	}
}

// TestSampleAcrossAddressSpaces: the same thread and stack in two address
// spaces of the same file (exec of the same program) is one sample; a
// different file at the same addresses is not confused with it.
func TestSampleAcrossAddressSpaces(t *testing.T) {
	p := New(Options{Period: 10})
	for range 2 {
		c := loadFibfp(t, "arm64", vm.ArchARM64)
		c.chain(t)
		p.Sample(7, vm.ArchARM64, c.retFF, sp, f1, 0, c.mm)
	}
	other := loadGuest(t, "../../testdata/bin/arm64/fib") // same text addresses, other file
	p.Sample(7, vm.ArchARM64, other.sym(t, "fib")+8, sp, 0, 0, other.mm)
	prof, err := p.Profile()
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Sample) != 2 || prof.Sample[0].Value[0]+prof.Sample[1].Value[0] != 30 || prof.Sample[0].Value[0] == prof.Sample[1].Value[0] {
		t.Fatalf("want 2 samples (20, 10):\n%s", prof)
	}
	if len(prof.Mapping) != 2 || prof.Mapping[0].File == prof.Mapping[1].File {
		t.Errorf("mappings %v", prof.Mapping)
	}
}
