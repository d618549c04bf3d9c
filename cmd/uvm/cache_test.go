package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// End-to-end tests of the cache model (issue 6, package icache): the
// self-modifying-code programs in every cache mode, --stats numbers for a
// known access pattern, and the re-decode differential mode.

func cacheGuest(t *testing.T, arch, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../testdata/bin", arch, name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runUVM runs `uvm run --clean-env [--det] flags... bin args...`.
func runUVM(t *testing.T, det bool, flags []string, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	argv := []string{"run", "--clean-env"}
	if det {
		argv = append(argv, "--det")
	}
	argv = append(append(append(argv, flags...), bin), args...)
	var o, e bytes.Buffer
	code = run(argv, strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

// TestCacheModelJIT: testdata/src/jit.c and jit_mt.c print the new
// result after a rewrite everywhere except, on arm64 under the strict
// model, where the code was not published with __builtin___clear_cache.
func TestCacheModelJIT(t *testing.T) {
	modes := []struct {
		name   string
		flags  []string
		strict bool // arm64 only
	}{
		{"off", nil, false},
		{"strict", []string{"--cache-model"}, true},
		{"strict-config", []string{"--cache-config", "l1i=16k,32,2 l1d=16k,128,4,fifo"}, true},
		{"coherent", []string{"--cache-model", "--icache", "coherent"}, false},
	}
	out := func(stale bool) (jit, jitMT string) {
		r := "1 2"
		if stale {
			r = "1 1"
		}
		jit = "rwx clear_cache: 1 2\nrw-rx clear_cache: 1 2\n" +
			"rwx no clear_cache: " + r + "\nrw-rx no clear_cache: " + r + "\n"
		jitMT = "clear_cache: 1 2\nno clear_cache: " + r + "\n"
		return
	}
	scheds := []bool{true}
	if !testing.Short() && !raceEnabled {
		scheds = append(scheds, false) // also the parallel scheduler
	}
	for _, arch := range guestArches {
		for _, m := range modes {
			wantJIT, wantMT := out(arch == "arm64" && m.strict)
			for _, det := range scheds {
				t.Run(fmt.Sprintf("%s/%s/det=%v", arch, m.name, det), func(t *testing.T) {
					for name, want := range map[string]string{"jit": wantJIT, "jit_mt": wantMT} {
						got, errOut, code := runUVM(t, det, m.flags, cacheGuest(t, arch, name))
						if got != want || code != 0 {
							t.Errorf("%s: status %d, stdout\n%s--- want\n%s--- stderr\n%s", name, code, got, want, errOut)
						}
					}
				})
			}
		}
	}
}

var l1dLine = regexp.MustCompile(`L1D: (\d+) accesses \((\d+) reads, (\d+) writes\), (\d+) misses \([^;]*; (\d+) read, (\d+) write\)`)

// l1dReadMisses returns cpu 0's L1D read misses from --stats output.
func l1dReadMisses(t *testing.T, stats string) uint64 {
	t.Helper()
	m := l1dLine.FindStringSubmatch(stats)
	if m == nil {
		t.Fatalf("no L1D line in --stats output:\n%s", stats)
	}
	n, _ := strconv.ParseUint(m[5], 10, 64)
	return n
}

// TestCacheModelStreamStats: testdata/src/cachestream.c streams over a
// page-aligned 1 MiB array; with LRU or FIFO replacement every extra pass
// adds exactly 1 MiB / line read misses, since the array is at least 32
// times the L1D. (Random replacement makes the rest of the program's
// misses vary; the icache unit tests cover it.)
func TestCacheModelStreamStats(t *testing.T) {
	for _, arch := range guestArches {
		for _, tc := range []struct {
			cfg  string
			line uint64
		}{
			{"l1i=32k,64,4 l1d=32k,64,8", 64},
			{"l1d=16k,32,4,fifo", 32},
			{"l1d=32k,128,2", 128},
		} {
			t.Run(arch+"/"+tc.cfg, func(t *testing.T) {
				var misses [2]uint64
				for i, passes := range []string{"1", "3"} {
					out, errOut, code := runUVM(t, true, []string{"--stats", "--cache-config", tc.cfg}, cacheGuest(t, arch, "cachestream"), passes)
					if code != 0 || out != "67043328\n" {
						t.Fatalf("status %d, stdout %q, stderr:\n%s", code, out, errOut)
					}
					if !strings.Contains(errOut, "cache model: ") || !strings.Contains(errOut, "maintenance: ") {
						t.Fatalf("--stats lacks the cache model:\n%s", errOut)
					}
					misses[i] = l1dReadMisses(t, errOut)
				}
				if got, want := misses[1]-misses[0], 2*(1<<20)/tc.line; got != want {
					t.Errorf("two more passes added %d read misses, want %d (1 MiB / %d-byte lines, twice)", got, want, tc.line)
				}
			})
		}
	}
}

// TestRedecodeDifferential: every program gives the same output and
// status with its instructions decoded afresh before each execution as
// with the predecoded-instruction cache, with the cache model off and in
// strict mode.
func TestRedecodeDifferential(t *testing.T) {
	progs := [][]string{{"hello"}, {"hello-pie"}, {"args", "a", "b"}, {"setjmp"}, {"printf"}, {"threads"},
		{"sig_segv"}, {"jit"}, {"jit_mt"}, {"cachestream"}, {"fib", "18"}}
	if testing.Short() {
		progs = progs[:3]
	}
	for _, arch := range guestArches {
		for _, mode := range [][]string{nil, {"--cache-model"}} {
			for _, p := range progs {
				t.Run(fmt.Sprintf("%s/%s/model=%v", arch, p[0], mode != nil), func(t *testing.T) {
					bin := cacheGuest(t, arch, p[0])
					o1, e1, c1 := runUVM(t, true, mode, bin, p[1:]...)
					o2, e2, c2 := runUVM(t, true, append([]string{"--redecode"}, mode...), bin, p[1:]...)
					if o1 != o2 || c1 != c2 {
						t.Errorf("cached: status %d\n%s\n--- re-decoded: status %d\n%s\n--- stderr:\n%s\n---\n%s", c1, o1, c2, o2, e1, e2)
					}
				})
			}
		}
	}
}

// TestGuestsCacheModel runs the corpus under the strict cache model:
// correct programs (they publish any code they write) behave exactly as
// without it.
func TestGuestsCacheModel(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus under the cache model: not in -short")
	}
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			for _, ent := range readManifest(t) {
				t.Run(ent.name, func(t *testing.T) {
					var bin string
					if strings.HasPrefix(ent.name, "go-") {
						bin = filepath.Join(goGuestDir(t, arch), strings.TrimPrefix(ent.name, "go-"))
					} else {
						bin = cacheGuest(t, arch, ent.name)
					}
					exp := "../../testdata/expected/" + ent.name
					want, ok := readOpt(exp + "." + arch + ".out")
					if !ok {
						want, _ = readOpt(exp + ".out")
					}
					wantCode := 0
					if b, ok := readOpt(exp + ".exit"); ok {
						wantCode, _ = strconv.Atoi(strings.TrimSpace(string(b)))
					}
					stdin, _ := readOpt(exp + ".stdin")
					argv := []string{"run", "--clean-env", "--det", "--cache-model"}
					if b, ok := readOpt(exp + ".env"); ok {
						for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
							argv = append(argv, "-E", kv)
						}
					}
					argv = append(argv, bin)
					for _, a := range ent.args {
						if a == "$TMP" {
							a = t.TempDir()
						}
						argv = append(argv, a)
					}
					var o, e bytes.Buffer
					code := run(argv, bytes.NewReader(stdin), &o, &e)
					if o.String() != string(want) || code != wantCode {
						t.Errorf("status %d (want %d), stdout differs:\n%s\n--- want\n%s\n--- stderr\n%s", code, wantCode, o.String(), want, e.String())
					}
				})
			}
		})
	}
}

// TestCacheModelFlags: bad configurations are usage errors.
func TestCacheModelFlags(t *testing.T) {
	for _, flags := range [][]string{
		{"--cache-config", "l1d=32k,48,8"},
		{"--cache-config", "l3=1m,64,8"},
		{"--icache", "sometimes"},
	} {
		_, errOut, code := runUVM(t, true, flags, cacheGuest(t, "arm64", "hello"))
		if code != 2 || !strings.Contains(errOut, "uvm run: ") {
			t.Errorf("%v: status %d, stderr %q", flags, code, errOut)
		}
	}
}
