package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestBenchSmoke runs every bench that uvm can run for one second on each
// arch and checks the kernel's summary format and that hits > 0.
func TestBenchSmoke(t *testing.T) {
	if raceEnabled {
		t.Skip("uvm bench runs guests in parallel mode and reads their counters while they run: guest memory races by design (ARCHITECTURE.md)")
	}
	summary := regexp.MustCompile(`(?m)^Summary: hits +([0-9.]+) ± +[0-9.]+M/s \( *[0-9.]+M/prod\), drops +0\.000 ± +0\.000M/s, total operations +[0-9.]+ ± +[0-9.]+M/s$`)
	for _, arch := range guestArches {
		for _, d := range benchDefs {
			t.Run(arch+"/"+d.name, func(t *testing.T) {
				var o, e strings.Builder
				code := cmdBench([]string{"-w", "0", "-d", "1", "--arch", arch, d.name}, &o, &e)
				if code != 0 {
					t.Fatalf("status %d: %s", code, e.String())
				}
				m := summary.FindStringSubmatch(o.String())
				if m == nil {
					t.Fatalf("no summary line in:\n%s", o.String())
				}
				if m[1] == "0.000" {
					t.Errorf("no hits:\n%s", o.String())
				}
				if !strings.Contains(o.String(), "Iter   0 (") {
					t.Errorf("no progress line:\n%s", o.String())
				}
			})
		}
	}
}

// TestBenchExactCount: a deterministic run of a fixed number of producer
// iterations reports exactly that many hits.
func TestBenchExactCount(t *testing.T) {
	for _, arch := range guestArches {
		for _, d := range benchDefs {
			t.Run(arch+"/"+d.name, func(t *testing.T) {
				var o, e strings.Builder
				code := cmdBench([]string{"--det", "--iters", "20000", "-p", "3", "--arch", arch, d.name}, &o, &e)
				if code != 0 {
					t.Fatalf("status %d: %s", code, e.String())
				}
				if !strings.Contains(o.String(), ": hits 60000 (3 producers × 20000 calls)") {
					t.Errorf("want exactly 60000 hits:\n%s", o.String())
				}
			})
		}
	}
}

func TestBenchBadFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"nonesuch"}, {"-p", "0", "all"}, {"--arch", "mips", "all"}, {"--compare", "bogus=1,2", "all"}} {
		var o, e strings.Builder
		if code := cmdBench(args, &o, &e); code != 2 {
			t.Errorf("%v: status %d, want 2", args, code)
		}
	}
}
