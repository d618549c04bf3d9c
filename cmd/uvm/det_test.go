package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestVirtualClock: in deterministic mode a program that reads the clock
// in a loop sees time advance only with retired instructions — the same
// elapsed time on every run, scaled exactly by --ns-per-insn — and the
// wall clock starts at the documented epoch. Random bytes come from the
// seed: equal seeds give equal bytes, different seeds different ones.
func TestVirtualClock(t *testing.T) {
	re := regexp.MustCompile(`elapsed_ns=(\d+) backwards=0\nrealtime_s=(\d+)\nrandom=([0-9a-f]{16})\n`)
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "clockloop"))
			runIt := func(nsPerInsn, seed int) (elapsed int64, realtime int64, random string) {
				var o, e strings.Builder
				code := run([]string{"run", "--det", "--ns-per-insn", fmt.Sprint(nsPerInsn), "--seed", fmt.Sprint(seed), bin}, strings.NewReader(""), &o, &e)
				m := re.FindStringSubmatch(o.String())
				if code != 0 || m == nil {
					t.Fatalf("status %d, output %q, stderr %q", code, o.String(), e.String())
				}
				elapsed, _ = strconv.ParseInt(m[1], 10, 64)
				realtime, _ = strconv.ParseInt(m[2], 10, 64)
				return elapsed, realtime, m[3]
			}
			e1, rt, r1 := runIt(1, 1)
			// The same seed and rate replay: in this process and in
			// subprocesses under every host condition (det_host_test.go).
			m := re.FindStringSubmatch(detHostMatrix(t, []string{"--det", "--clean-env", "--seed", "1", bin}, nil).stdout)
			if m == nil || m[1] != fmt.Sprint(e1) || m[3] != r1 {
				t.Errorf("same seed and rate differ: %d/%s in process vs %q in subprocesses", e1, r1, m)
			}
			e3, _, r2 := runIt(3, 2)
			if e3 != 3*e1 {
				t.Errorf("--ns-per-insn 3 elapsed %d, want exactly 3×%d", e3, e1)
			}
			if e1 < 100000 || e1 > 10000000 {
				t.Errorf("elapsed %d ns for ~600k instructions at 1 ns each", e1)
			}
			if rt != 1767225600 { // 2026-01-01T00:00:00Z
				t.Errorf("realtime %d, want the deterministic epoch 1767225600", rt)
			}
			if r1 == r2 {
				t.Errorf("different seeds gave the same random bytes %s", r1)
			}
		})
	}
}

// TestDetChaos: seeded random quanta change the schedule (and so the
// trace) between seeds, but each seed replays exactly — in this process,
// and (seed 1) in subprocesses under every host condition of the matrix.
func TestDetChaos(t *testing.T) {
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "threads"))
			want, err := readFileString("../../testdata/expected/threads.out")
			if err != nil {
				t.Fatal(err)
			}
			hashes := map[string]bool{}
			for seed := 1; seed <= 3; seed++ {
				var first string
				for rep := 0; rep < 2; rep++ {
					var o, e strings.Builder
					code := run([]string{"run", "--det-chaos", "--clean-env", "--quantum", "2000", "--seed", fmt.Sprint(seed), "--trace-hash", bin}, strings.NewReader(""), &o, &e)
					if code != 0 || o.String() != want {
						t.Fatalf("seed %d: status %d, output %q", seed, code, o.String())
					}
					if rep == 0 {
						first = e.String()
					} else if e.String() != first {
						t.Fatalf("seed %d does not replay: %q vs %q", seed, e.String(), first)
					}
				}
				hashes[first] = true
				if seed == 1 {
					r := detHostMatrix(t, []string{"--det-chaos", "--clean-env", "--quantum", "2000", "--seed", "1", "--trace-hash", bin}, nil)
					if r.code != 0 || r.stdout != want || r.stderr != first {
						t.Errorf("seed 1 in subprocesses: status %d, stdout %q, stderr %q; in process %q", r.code, r.stdout, r.stderr, first)
					}
				}
			}
			if len(hashes) < 2 {
				t.Errorf("three chaos seeds gave one schedule")
			}
		})
	}
}

func readFileString(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}
