package main

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/uvm-emu/uvm/internal/timing"
)

// timingClock matches the first thread row of the timing model's
// --stats table (tid, cpu, clock, insns, IPC).
var timingClock = regexp.MustCompile(`(?m)^  \d+ +\d+ +(\d+) +\d+ +[0-9.]+ `)

// TestCacheLevelsGuest: under --model with the cache model, a pass of
// testdata/src/cachestream.c over its 1 MiB array costs more virtual
// cycles when the array fits the L2 but not the L1 than when it fits
// the L1, and less than when it fits neither the L2 nor the LLC; the
// differences are the machine's latencies times the lines streamed
// (1 MiB / 64 per pass: L1 misses that hit L2 add cache.l1d_miss, misses
// of every level add cache.l2_miss + cache.llc_miss on top).
func TestCacheLevelsGuest(t *testing.T) {
	for _, tc := range []struct{ arch, machine string }{{"arm64", "kunpeng916"}, {"amd64", "xeon-80"}} {
		t.Run(tc.arch, func(t *testing.T) {
			m, err := timing.Lookup(tc.machine)
			if err != nil {
				t.Fatal(err)
			}
			cfgs := []struct{ name, cfg string }{
				{"fits L1", "l1d=2m,64,8 l2=4m,64,16 llc=8m,64,16"},
				{"fits L2", "l1d=32k,64,8 l2=4m,64,16 llc=8m,64,16"},
				{"memory", "l1d=32k,64,8 l2=64k,64,8 llc=128k,64,8"},
			}
			var perPass [3]float64
			for i, c := range cfgs {
				var clock [2]int64
				for j, passes := range []string{"1", "3"} {
					out, errOut, code := runUVM(t, true, []string{"--model", tc.machine, "--stats", "--cache-config", c.cfg},
						cacheGuest(t, tc.arch, "cachestream"), passes)
					if code != 0 || out != "67043328\n" {
						t.Fatalf("%s: status %d, stdout %q, stderr:\n%s", c.name, code, out, errOut)
					}
					mm := timingClock.FindStringSubmatch(errOut)
					if mm == nil {
						t.Fatalf("%s: no timing table in --stats:\n%s", c.name, errOut)
					}
					clock[j], _ = strconv.ParseInt(mm[1], 10, 64)
				}
				perPass[i] = float64(clock[1]-clock[0]) / 2
			}
			t.Logf("%s on %s: cycles per pass: fits L1 %.0f, fits L2 %.0f, memory %.0f", tc.arch, tc.machine, perPass[0], perPass[1], perPass[2])
			if !(perPass[0] < perPass[1] && perPass[1] < perPass[2]) {
				t.Fatalf("cycles per pass %v: want fits L1 < fits L2 < memory", perPass)
			}
			const lines = 1 << 20 / 64
			check := func(what string, got, want float64) {
				if got < want*0.98 || got > want*1.02 {
					t.Errorf("%s: %.0f cycles per pass, want %.0f (±2 %%)", what, got, want)
				}
			}
			check("fits L2 − fits L1", perPass[1]-perPass[0], float64(lines*m.L1DMiss))
			check("memory − fits L2", perPass[2]-perPass[1], float64(lines*(m.L2Miss+m.LLCMiss)))
		})
	}
}
