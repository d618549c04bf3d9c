package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/uvm-emu/uvm/internal/timing"
)

// The cycle-clock guest profile (--pprof-clock=cycles,
// tasks/timing_pprof.go) over testdata/src/arm64/cycdiv.c: two threads
// call divloop ({udiv, subs, b.ne} ×1000) and aluloop ({add, subs, b.ne}
// ×1000) in turn, the same instructions each.

const cycdivMachine = "kunpeng916"

// cycdivProfile runs cycdiv under the timing model with flags and
// returns its guest profile and the --stats output.
func cycdivProfile(t *testing.T, flags ...string) (*profile.Profile, string) {
	t.Helper()
	bin, _ := filepath.Abs("../../testdata/bin/arm64/cycdiv")
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	args := append([]string{"--model", cycdivMachine, "--stats", "--pprof", path, "--pprof-period", "10007"}, flags...)
	out, stderr, code := runUVM(t, true, args, bin)
	if code != 0 || !strings.HasPrefix(out, "cycdiv ") {
		t.Fatalf("status %d, stdout %q:\n%s", code, out, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return p, stderr
}

// leafShare is divloop's share of value i over the samples whose leaf
// is divloop or aluloop, and the number of threads with such samples.
func leafShare(t *testing.T, p *profile.Profile, i int) (float64, int) {
	t.Helper()
	var div, alu int64
	tids := map[int64]bool{}
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
			continue
		}
		switch s.Location[0].Line[len(s.Location[0].Line)-1].Function.Name {
		case "divloop":
			div += s.Value[i]
		case "aluloop":
			alu += s.Value[i]
		default:
			continue
		}
		tids[s.NumLabel["tid"][0]] = true
	}
	if div == 0 || alu == 0 {
		t.Fatalf("value %d: divloop %d, aluloop %d:\n%s", i, div, alu, p)
	}
	return float64(div) / float64(div+alu), len(tids)
}

// TestPprofCycleClock: on the instruction clock divloop and aluloop get
// half the samples each; on the cycle clock divloop gets its share of
// the cycles as the machine's cpi.* prices the two loop bodies. Every
// sample stands for about one period, so the share of the "cycles"
// value (and of the instructions the samples stand for) is the share of
// the samples. The skid stays under one loop iteration on average, and
// profiling leaves every thread's clock as it was.
func TestPprofCycleClock(t *testing.T) {
	m, err := timing.Lookup(cycdivMachine)
	if err != nil {
		t.Fatal(err)
	}
	body := m.CPI["alu"] + m.CPI["branch"] + m.CPI["taken"] // subs, b.ne (taken)
	divIter, aluIter := m.CPI["div"]+body, m.CPI["alu"]+body
	want := float64(divIter) / float64(divIter+aluIter)
	if want < 0.6 {
		t.Fatalf("machine %s: divide loop %d, ALU loop %d centicycles per iteration: too close for the test", m.Name, divIter, aluIter)
	}

	ip, istats := cycdivProfile(t)
	if ip.SampleType[0].Type != "instructions" || ip.PeriodType.Type != "instructions" {
		t.Fatalf("default clock: sample types %v", ip.SampleType)
	}
	insnShare, _ := leafShare(t, ip, 0)
	if insnShare < 0.46 || insnShare > 0.54 {
		t.Errorf("instruction clock: divloop has %.3f of the samples, want 0.5", insnShare)
	}

	cp, cstats := cycdivProfile(t, "--pprof-clock=cycles")
	if len(cp.SampleType) != 2 || cp.SampleType[0].Type != "cycles" || cp.SampleType[1].Type != "instructions" ||
		cp.PeriodType.Type != "cycles" || cp.Period != 10007 || cp.DefaultSampleType != "cycles" {
		t.Fatalf("cycle clock: sample types %v, period %v %d", cp.SampleType, cp.PeriodType, cp.Period)
	}
	cycShare, threads := leafShare(t, cp, 0)
	insnOfSamples, _ := leafShare(t, cp, 1)
	if cycShare < want-0.03 || cycShare > want+0.03 || insnOfSamples < want-0.05 || insnOfSamples > want+0.05 {
		t.Errorf("cycle clock: divloop has %.3f of the cycles and %.3f of the samples' instructions, want %.3f (cpi: %d vs %d)",
			cycShare, insnOfSamples, want, divIter, aluIter)
	}
	if threads != 2 {
		t.Errorf("samples of %d threads, want 2", threads)
	}
	t.Logf("divloop: %.3f of the samples on the instruction clock, %.3f on the cycle clock (cpi predicts %.3f)", insnShare, cycShare, want)

	skidRe := regexp.MustCompile(`^cycle clock: (\d+) samples, skid mean ([0-9.]+) max (\d+) cycles$`)
	var sm []string
	for _, c := range cp.Comments {
		if sm = skidRe.FindStringSubmatch(c); sm != nil {
			break
		}
	}
	if sm == nil {
		t.Fatalf("no skid comment: %q", cp.Comments)
	}
	n, _ := strconv.Atoi(sm[1])
	mean, _ := strconv.ParseFloat(sm[2], 64)
	var total int64
	for _, s := range cp.Sample {
		total += s.Value[0]
	}
	if lo := int(total / cp.Period); n < lo*9/10 || n > lo+2 {
		t.Errorf("%d samples for %d cycles at period %d", n, total, cp.Period)
	}
	if mean > float64(divIter)/100 {
		t.Errorf("mean skid %.1f cycles, more than one divide loop iteration (%d centicycles)", mean, divIter)
	}

	clocks := regexp.MustCompile(`(?m)^  100\d +\d+ +\d+ +\d+ +\d+\.\d+ .*$`)
	if a, b := clocks.FindAllString(istats, -1), clocks.FindAllString(cstats, -1); len(a) != 2 || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("thread clocks on the instruction clock:\n%s\non the cycle clock:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// TestPprofCycleClockDeterministic: the cycle-clock profile (with the
// cache model's miss values) has the same bytes under GOMAXPROCS 1 and
// 4, in subprocesses; --pprof-clock=insns gives the default profile.
func TestPprofCycleClockDeterministic(t *testing.T) {
	bin, _ := filepath.Abs("../../testdata/bin/arm64/cycdiv")
	dir := t.TempDir()
	profileOf := func(name string, procs int, flags ...string) []byte {
		path := filepath.Join(dir, name)
		args := append([]string{"--det", "--model", cycdivMachine, "--pprof", path, "--pprof-period", "3001"}, flags...)
		r := runUVMHost(t, hostVariant{gomaxprocs: procs}, append(args, bin), nil)
		if r.code != 0 {
			t.Fatalf("%s: status %d:\n%s", name, r.code, r.stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := profileOf("c1", 1, "--pprof-clock=cycles", "--cache-model")
	if b := profileOf("c4", 4, "--pprof-clock=cycles", "--cache-model"); !bytes.Equal(a, b) {
		t.Error("cycle clock: GOMAXPROCS 1 and 4 give different profile bytes")
	}
	p, err := profile.Parse(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 4 || p.SampleType[0].Type != "cycles" || p.SampleType[3].Type != "dcache-misses" {
		t.Errorf("sample types %v", p.SampleType)
	}
	if d, i := profileOf("i-default", 4), profileOf("i-insns", 1, "--pprof-clock=insns"); !bytes.Equal(d, i) {
		t.Error("--pprof-clock=insns differs from the default profile")
	}
}

// TestPprofClockFlags: the cycle clock needs --model (and so --det) and
// --pprof; an unknown clock is refused.
func TestPprofClockFlags(t *testing.T) {
	bin, _ := filepath.Abs("../../testdata/bin/arm64/cycdiv")
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	for _, tc := range []struct {
		det   bool
		flags []string
		want  string
	}{
		{true, []string{"--pprof", path, "--pprof-clock=cycles"}, "--pprof-clock=cycles needs --pprof and --det --model"},
		{false, []string{"--pprof", path, "--pprof-clock=cycles"}, "--pprof-clock=cycles needs --pprof and --det --model"},
		{true, []string{"--model", cycdivMachine, "--pprof-clock=cycles"}, "--pprof-clock=cycles needs --pprof and --det --model"},
		{true, []string{"--model", cycdivMachine, "--pprof", path, "--pprof-clock=time"}, `--pprof-clock wants insns or cycles, got "time"`},
	} {
		out, stderr, code := runUVM(t, tc.det, tc.flags, bin)
		if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("det=%v %v: status %d, stdout %q, stderr %q; want 2 and %q", tc.det, tc.flags, code, out, stderr, tc.want)
		}
	}
}
