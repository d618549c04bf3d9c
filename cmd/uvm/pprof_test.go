package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// pprofPeriod is the sampling period the end-to-end tests ask for: small
// enough for a few hundred samples of fib(27).
const pprofPeriod = "10007"

// runPprof runs bin under uvm in deterministic mode with --pprof and
// returns the profile's bytes. It skips the test when uvm run does not
// know the profiling flags yet.
func runPprof(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	file := filepath.Join(t.TempDir(), "guest.pprof")
	argv := append([]string{"run", "--det", "--clean-env", "--pprof", file, "--pprof-period", pprofPeriod, bin}, args...)
	var o, e bytes.Buffer
	code := run(argv, bytes.NewReader(nil), &o, &e)
	if code == 2 && strings.Contains(e.String(), "pprof") {
		t.Skipf("uvm run does not support --pprof/--pprof-period yet: %s", firstLine(e.String()))
	}
	if code != 0 {
		t.Fatalf("uvm %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(argv, " "), code, o.String(), e.String())
	}
	if want := "fib(27) = 196418\n"; o.String() != want {
		t.Fatalf("stdout %q, want %q", o.String(), want)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no profile written: %v", err)
	}
	return b
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// funcStats sums a profile's first sample value per function: flat (the
// leaf function of the sample) and cum (anywhere in the stack, once per
// sample), and counts the caller→callee edges. Inlined frames count as
// frames, as in `go tool pprof`.
type funcStats struct {
	total     int64
	flat, cum map[string]int64
	edges     map[[2]string]int64 // {caller, callee}
}

func stats(p *profile.Profile) funcStats {
	st := funcStats{flat: map[string]int64{}, cum: map[string]int64{}, edges: map[[2]string]int64{}}
	for _, s := range p.Sample {
		v := s.Value[0]
		st.total += v
		var names []string // leaf first
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				names = append(names, ln.Function.Name)
			}
			if len(loc.Line) == 0 {
				names = append(names, fmt.Sprintf("%#x", loc.Address))
			}
		}
		if len(names) == 0 {
			continue
		}
		st.flat[names[0]] += v
		seen := map[string]bool{}
		for i, n := range names {
			if !seen[n] {
				st.cum[n] += v
				seen[n] = true
			}
			if i+1 < len(names) {
				st.edges[[2]string{names[i+1], n}] += v
			}
		}
	}
	return st
}

// top lists functions by flat value, like `go tool pprof -top`.
func (st funcStats) top() []string {
	var fs []string
	for f := range st.flat {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool {
		if st.flat[fs[i]] != st.flat[fs[j]] {
			return st.flat[fs[i]] > st.flat[fs[j]]
		}
		return fs[i] < fs[j]
	})
	return fs
}

func (st funcStats) String() string {
	var b strings.Builder
	for i, f := range st.top() {
		if i == 10 {
			break
		}
		fmt.Fprintf(&b, "  flat %5.1f%% cum %5.1f%% %s\n", pct(st.flat[f], st.total), pct(st.cum[f], st.total), f)
	}
	return b.String()
}

func pct(x, total int64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(x) / float64(total)
}

// TestPprof profiles guests with one hot function (fib, called from a
// known caller) on both arches: the profile parses, the hot function is
// first with >= 80% flat and cum, the call edge from its caller is
// there, mappings carry the build ID, and two deterministic runs give
// the same bytes.
func TestPprof(t *testing.T) {
	for _, arch := range guestArches {
		for _, c := range []struct {
			name, hot, caller string
			bin               func(t *testing.T) string
		}{
			// C with frame pointers (-fno-omit-frame-pointer): main → run → fib.
			{"fibfp", "fib", "run", func(*testing.T) string { return filepath.Join("../../testdata/bin", arch, "fibfp") }},
			// Plain -O2 C: x86-64 code has no frame pointers, so only the
			// leaf is reliable; arm64 gcc keeps frame records, so main → fib
			// unwinds there.
			{"fib", "fib", map[string]string{"arm64": "main"}[arch], func(*testing.T) string { return filepath.Join("../../testdata/bin", arch, "fib") }},
			// Go (frame pointers on both arches): main.main → main.run → main.fib.
			{"go-fib", "main.fib", "main.run", func(t *testing.T) string { return filepath.Join(goGuestDir(t, arch), "fib") }},
		} {
			t.Run(arch+"/"+c.name, func(t *testing.T) {
				if c.name == "go-fib" && testing.Short() {
					t.Skip("builds Go guests")
				}
				bin := c.bin(t)
				data := runPprof(t, bin, "27")
				p, err := profile.ParseData(data)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.CheckValid(); err != nil {
					t.Fatal(err)
				}
				if len(p.SampleType) == 0 || p.SampleType[0].Type != "instructions" || p.SampleType[0].Unit != "count" {
					t.Errorf("sample types %v", p.SampleType)
				}
				st := stats(p)
				t.Logf("%d instructions, %d stacks:\n%s", st.total, len(p.Sample), st)
				if n := st.total / p.Period; n < 100 {
					t.Errorf("only %d samples", n)
				}
				if top := st.top(); len(top) == 0 || top[0] != c.hot {
					t.Errorf("top function %v, want %s", top, c.hot)
				}
				if f := pct(st.flat[c.hot], st.total); f < 80 {
					t.Errorf("%s flat %.1f%%, want >= 80%%", c.hot, f)
				}
				if f := pct(st.cum[c.hot], st.total); f < 80 {
					t.Errorf("%s cum %.1f%%, want >= 80%%", c.hot, f)
				}
				if c.caller != "" {
					if st.edges[[2]string{c.caller, c.hot}] == 0 {
						t.Errorf("no call edge %s → %s", c.caller, c.hot)
					}
					if f := pct(st.cum[c.caller], st.total); f < 80 {
						t.Errorf("%s cum %.1f%%, want >= 80%% (unwinding lost frames)", c.caller, f)
					}
				}
				abs, _ := filepath.Abs(bin)
				found := false
				for _, m := range p.Mapping {
					if m.File == abs || filepath.Base(m.File) == filepath.Base(bin) {
						found = true
						if m.BuildID == "" || !m.HasFunctions {
							t.Errorf("mapping %+v: no build ID or functions", m)
						}
					}
				}
				if !found {
					t.Errorf("no mapping for %s in %v", bin, p.Mapping)
				}
				if again := runPprof(t, bin, "27"); !bytes.Equal(data, again) {
					t.Error("two deterministic runs give different profile bytes")
				}
			})
		}
	}
}
