//go:build linux && amd64

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestUprobeOracleWholePrograms compares whole-program uprobe and
// uretprobe hit counts and uretprobe return values on the scenarios of
// testdata/uprobe-oracle/progs.c (recursion past the uretprobe depth
// limit, a loop, longjmp out of probed functions, threads, fork inside
// and outside a probed function, a signal taken during a probed function,
// probed signal handlers, timer signals during the out-of-line step) with
// the live kernel's: system-wide perf uprobes in counting mode, and for
// uretprobes rax sampled at every return (PERF_SAMPLE_REGS_USER) against
// the ret= values of uvm's --probe-log. Where the number of calls depends
// on timing (the timer's handler), each side's hits must equal the count
// its own run printed. Skips where perf uprobes are unavailable.
func TestUprobeOracleWholePrograms(t *testing.T) {
	pmu := uprobePMU(t)
	bin, _ := filepath.Abs(filepath.Join(oracleDir, "progs"))
	scenarios := []struct {
		mode    string
		syms    []string
		sample  bool // uretprobes: compare return values
		ordered bool // one thread: the return values in order
	}{
		{"recursion", []string{"fib", "deep"}, true, true},
		{"loop", []string{"leaf"}, true, true},
		{"longjmp", []string{"leaf", "thrower", "catcher"}, true, true},
		{"threads", []string{"leaf"}, true, false},
		{"fork", []string{"leaf", "forker"}, true, false},
		{"signal", []string{"leaf", "on_usr1", "raiser"}, true, true},
		{"itimer", []string{"leaf", "on_tick"}, false, false},
		{"mremap", []string{"leaf"}, true, true},
	}
	for _, sc := range scenarios {
		for _, ret := range []bool{false, true} {
			kind := "uprobe"
			if ret {
				kind = "uretprobe"
			}
			t.Run(sc.mode+"/"+kind, func(t *testing.T) {
				var reqs []kernelProbeReq
				for _, sym := range sc.syms {
					off, err := elfFileOffset(bin, sym)
					if err != nil {
						t.Fatal(err)
					}
					reqs = append(reqs, kernelProbeReq{Lib: bin, Off: off, Ret: ret, Sample: ret && sc.sample})
				}
				k := kernelRunWide(t, pmu, reqs, nil, []string{bin, sc.mode})
				for i, p := range k.Probes {
					if p.Errno != 0 {
						t.Fatalf("the kernel rejected %s: %v", sc.syms[i], p.Errno)
					}
				}
				log := filepath.Join(t.TempDir(), "probes")
				args := []string{"run", "--clean-env", "--probe-log", log}
				for _, sym := range sc.syms {
					args = append(args, "--"+kind, sym)
				}
				var o, e bytes.Buffer
				code := run(append(args, bin, sc.mode), strings.NewReader(""), &o, &e)
				if code != k.Status {
					t.Errorf("exit status: uvm %d, kernel %d\n%s", code, k.Status, e.String())
				}
				if a, b := dropCallLines(o.String()), dropCallLines(string(k.Stdout)); a != b {
					t.Errorf("output: uvm %q, kernel %q", a, b)
				}
				lb, err := os.ReadFile(log)
				if err != nil {
					t.Fatal(err)
				}
				got := uvmProbeLog(string(lb), kind)
				for i, sym := range sc.syms {
					uhits := probeSummaryHits(e.String(), sym, kind)
					t.Logf("%s %s: uvm %d hits, kernel %d", kind, sym, uhits, k.Probes[i].Hits)
					if n, ok := printedCalls(o.String(), sym); ok {
						// Timing-dependent: each side against its own run.
						kn, _ := printedCalls(string(k.Stdout), sym)
						if uhits != n || k.Probes[i].Hits != kn {
							t.Errorf("%s %s: uvm %d hits for %d calls, the kernel %d for %d", kind, sym, uhits, n, k.Probes[i].Hits, kn)
						}
						continue
					}
					if uhits != k.Probes[i].Hits {
						t.Errorf("%s %s: uvm counts %d hits, the kernel %d", kind, sym, uhits, k.Probes[i].Hits)
					}
					if uint64(len(got[sym])) != uhits {
						t.Errorf("%s %s: %d --probe-log lines for %d hits", kind, sym, len(got[sym]), uhits)
					}
					if !ret || !sc.sample {
						continue
					}
					u, kr := got[sym], slices.Clone(k.Probes[i].RAX)
					if !sc.ordered {
						slices.Sort(u)
						slices.Sort(kr)
					}
					if !slices.Equal(u, kr) {
						t.Errorf("%s %s return values differ:\n  uvm    %s\n  kernel %s", kind, sym, hexList(u), hexList(kr))
					}
				}
			})
		}
	}
}

// dropCallLines removes the timing-dependent "calls FUNC N" lines.
func dropCallLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "calls ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// printedCalls finds "calls SYM N" in a run's output.
func printedCalls(out, sym string) (uint64, bool) {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "calls" && f[1] == sym {
			n, err := strconv.ParseUint(f[2], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// probeSummaryHits reads a probe's hits from uvm's summary table.
func probeSummaryHits(stderr, spec, kind string) uint64 {
	for _, l := range strings.Split(stderr, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == spec && f[1] == kind {
			n, _ := strconv.ParseUint(f[2], 10, 64)
			return n
		}
	}
	return 0
}

// uvmProbeLog collects, per probe, the rax of each uretprobe hit (ret=) or
// the first argument of each uprobe hit, in log order.
func uvmProbeLog(log, kind string) map[string][]uint64 {
	m := map[string][]uint64{}
	for _, l := range strings.Split(log, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != kind {
			continue
		}
		var probe string
		var v uint64
		for _, kv := range f[1:] {
			k, val, _ := strings.Cut(kv, "=")
			switch k {
			case "probe":
				probe = val
			case "ret":
				v, _ = strconv.ParseUint(strings.TrimPrefix(val, "0x"), 16, 64)
			case "args":
				a, _, _ := strings.Cut(val, ",")
				v, _ = strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
			}
		}
		m[probe] = append(m[probe], v)
	}
	return m
}

func hexList(v []uint64) string {
	var b strings.Builder
	for i, x := range v {
		if i == 40 {
			fmt.Fprintf(&b, " … (%d)", len(v))
			break
		}
		fmt.Fprintf(&b, " %#x", x)
	}
	return b.String()
}
