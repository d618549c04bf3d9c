//go:build linux && amd64

package main

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestUprobeOracleWholePrograms compares whole-program uprobe and
// uretprobe hit counts on the C guests (recursion, longjmp, fork, threads,
// signal handlers) with the live kernel's (perf uprobe PMU, counting mode,
// inherited by threads and children). Skips where perf uprobes are
// unavailable.
func TestUprobeOracleWholePrograms(t *testing.T) {
	pmu := uprobePMU(t)
	progs := []struct {
		name string
		args []string
		syms []string
	}{
		{"fib", []string{"15"}, []string{"fib"}},
		{"setjmp", nil, []string{"thrower", "deep", "try_throw", "nested_try"}},
		// proc_fork and threads are left out: the inherited counting
		// event reads 0 (or 1) hits for functions their parent calls
		// several times once children/threads have come and gone, so the
		// perf count is not an oracle there (to investigate: perf
		// inherit + uprobe_perf_close's uprobe_apply).
		{"sig_alarm", nil, []string{"on_alarm", "on_tick"}},
	}
	for _, p := range progs {
		bin, _ := filepath.Abs(filepath.Join("../../testdata/bin/amd64", p.name))
		for _, sym := range p.syms {
			for _, ret := range []bool{false, true} {
				kind := "uprobe"
				if ret {
					kind = "uretprobe"
				}
				t.Run(p.name+"/"+sym+"/"+kind, func(t *testing.T) {
					off, err := elfFileOffset(bin, sym)
					if err != nil {
						t.Skip(err)
					}
					k := kernelRun(t, pmu, bin, off, ret, nil, append([]string{bin}, p.args...))
					if k.Errno != 0 {
						t.Fatalf("the kernel rejected %s: %v", sym, k.Errno)
					}
					var o, e bytes.Buffer
					args := append([]string{"run", "--clean-env", "--" + kind, sym, bin}, p.args...)
					run(args, strings.NewReader(""), &o, &e)
					got := uint64(0)
					for _, l := range strings.Split(e.String(), "\n") {
						if f := strings.Fields(l); len(f) == 3 && f[0] == sym && f[1] == kind {
							got, _ = strconv.ParseUint(f[2], 10, 64)
						}
					}
					if got != k.Hits {
						t.Errorf("%s %s: uvm counts %d hits, the kernel %d\n%s", kind, sym, got, k.Hits, e.String())
					}
				})
			}
		}
	}
}
