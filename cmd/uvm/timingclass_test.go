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
	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/timing"
)

// TestModelInsnClasses: under --det --model, a thread's virtual
// clock is exactly its kernel cycles plus its retired instructions
// priced by class (cpi.CLASS, cpi.taken) plus, with --cache-model, its
// L1 misses priced at cache.l1i_miss / cache.l1d_miss; the --stats class
// table accounts for every retired instruction.
func TestModelInsnClasses(t *testing.T) {
	for _, tc := range []struct{ arch, machine string }{{"arm64", "kunpeng916"}, {"amd64", "xeon-80"}} {
		t.Run(tc.arch, func(t *testing.T) { modelInsnClasses(t, tc.arch, tc.machine) })
	}
}

func modelInsnClasses(t *testing.T, arch, machine string) {
	bin, _ := filepath.Abs("../../testdata/bin/" + arch + "/fib")
	m, err := timing.Lookup(machine)
	if err != nil {
		t.Fatal(err)
	}
	cpuRow := regexp.MustCompile(`(?m)^  1001 +\d+ +(\d+) +(\d+) +[0-9.]+ +(\d+) +(\d+)$`)
	clsRow := regexp.MustCompile(`(?m)^  retired instructions by class\n.*\n  1001((?: +\d+)+)$`)
	missRow := regexp.MustCompile(`L1I: \d+ accesses, (\d+) misses(?s:.*)L1D: .*?, (\d+) misses`)
	var plainClock int64
	for _, cm := range []bool{false, true} {
		flags := []string{"--model", machine, "--stats"}
		if cm {
			flags = append(flags, "--cache-model")
		}
		_, stderr, code := runUVM(t, true, flags, bin)
		c, k := cpuRow.FindStringSubmatch(stderr), clsRow.FindStringSubmatch(stderr)
		if code != 0 || c == nil || k == nil {
			t.Fatalf("status %d, stats:\n%s", code, stderr)
		}
		clock, _ := strconv.ParseInt(c[1], 10, 64)
		insns, _ := strconv.ParseInt(c[2], 10, 64)
		kernel, _ := strconv.ParseInt(c[3], 10, 64)
		f := strings.Fields(k[1])
		if len(f) != int(decode.NumInsnClasses)+1 {
			t.Fatalf("class row %q: want %d columns", k[1], decode.NumInsnClasses+1)
		}
		var n, centis int64
		for i := range decode.NumInsnClasses {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			n += v
			centis += v * m.CPI[i.String()]
		}
		taken, _ := strconv.ParseInt(f[decode.NumInsnClasses], 10, 64)
		centis += taken * m.CPI["taken"]
		if n != insns {
			t.Errorf("class table counts %d instructions, %d retired", n, insns)
		}
		if taken == 0 || taken > insns/2 {
			t.Errorf("%d taken branches of %d instructions", taken, insns)
		}
		want := kernel + centis/100
		if cm {
			mm := missRow.FindStringSubmatch(stderr)
			if mm == nil {
				t.Fatalf("no cache statistics:\n%s", stderr)
			}
			im, _ := strconv.ParseInt(mm[1], 10, 64)
			dm, _ := strconv.ParseInt(mm[2], 10, 64)
			want += im*m.L1IMiss + dm*m.L1DMiss
			// The machine's L2 and LLC: each miss there adds its latency.
			for _, lv := range []struct {
				name string
				cost int64
			}{{"L2", m.L2Miss}, {"LLC", m.LLCMiss}} {
				om := regexp.MustCompile(`(?m)^    ` + lv.name + `: \d+ accesses, (\d+) misses`).FindStringSubmatch(stderr)
				if om == nil {
					t.Fatalf("no %s statistics:\n%s", lv.name, stderr)
				}
				n, _ := strconv.ParseInt(om[1], 10, 64)
				want += n * lv.cost
			}
			if clock <= plainClock {
				t.Errorf("clock with the cache model %d, without %d: misses cost nothing", clock, plainClock)
			}
		}
		plainClock = clock
		// Rounding: each exit from Run carries its fraction of a cycle.
		if clock < want-1 || clock > want+1 {
			t.Errorf("cache model %v: clock %d, want kernel %d + classes %d = %d", cm, clock, kernel, want-kernel, want)
		}
	}
}

// TestModelContentionProfile: uvm bench --model --pprof-contention
// writes the modelled locks' waits as a pprof profile (contentions,
// delay): with siglock in the single-step path 8 producers contend on
// sighand->siglock, without it they do not; the bytes repeat.
func TestModelContentionProfile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) []byte {
		path := filepath.Join(dir, name)
		var o, e strings.Builder
		args := []string{"--arch", "arm64", "--model", "kunpeng916", "--arm64-sim-nop", "false", "-p", "8", "-d", "2",
			"--compare", "siglock=true,false", "--pprof-contention", path, "uprobe-nop"}
		if code := cmdBench(args, &o, &e); code != 0 {
			t.Fatalf("status %d: %s", code, e.String())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := write("a.pb.gz")
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 2 || p.SampleType[0].Type != "contentions" || p.SampleType[1].Type != "delay" {
		t.Fatalf("sample types %v", p.SampleType)
	}
	siglock := map[string]int64{}
	for _, s := range p.Sample {
		if s.Location[0].Line[0].Function.Name == "sighand->siglock" {
			siglock[s.Label["switches"][0]] += s.Value[0]
		}
	}
	if siglock["arm64-sim-nop=false,siglock=true"] == 0 || siglock["arm64-sim-nop=false,siglock=false"] != 0 {
		t.Errorf("siglock contentions by switches: %v", siglock)
	}
	if !bytes.Equal(b, write("b.pb.gz")) {
		t.Error("two runs give different profile bytes")
	}
}

// TestModelPprofCycles: with --model, every guest profile sample also
// carries the virtual cycles since the thread's previous sample, so the
// "cycles" values add up to the thread's clock (less the tail after the
// last sample), and profiling leaves the clock exactly as it was.
func TestModelPprofCycles(t *testing.T) {
	for _, tc := range []struct{ arch, machine string }{{"arm64", "kunpeng916"}, {"amd64", "xeon-80"}} {
		t.Run(tc.arch, func(t *testing.T) {
			bin, _ := filepath.Abs("../../testdata/bin/" + tc.arch + "/fib")
			clockRe := regexp.MustCompile(`(?m)^  1001 +\d+ +(\d+) `)
			clock := func(flags ...string) int64 {
				_, stderr, code := runUVM(t, true, append([]string{"--model", tc.machine, "--stats"}, flags...), bin)
				m := clockRe.FindStringSubmatch(stderr)
				if code != 0 || m == nil {
					t.Fatalf("status %d:\n%s", code, stderr)
				}
				v, _ := strconv.ParseInt(m[1], 10, 64)
				return v
			}
			path := filepath.Join(t.TempDir(), "p.pb.gz")
			plain, profiled := clock(), clock("--pprof", path, "--pprof-period", "10007")
			if plain != profiled {
				t.Errorf("clock %d without --pprof, %d with", plain, profiled)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := profile.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			ci := -1
			for i, st := range p.SampleType {
				if st.Type == "cycles" {
					ci = i
				}
			}
			if ci < 0 {
				t.Fatalf("no cycles sample type: %v", p.SampleType)
			}
			var sum int64
			for _, s := range p.Sample {
				sum += s.Value[ci]
			}
			if sum > plain || sum < plain*99/100 {
				t.Errorf("cycles in the profile %d, thread clock %d", sum, plain)
			}
		})
	}
}
