package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// statsSection returns the "name count" lines of one --stats section
// ("syscalls", "vdso calls").
func statsSection(stderr, section string) map[string]uint64 {
	out := map[string]uint64{}
	in := false
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case line == "  "+section+":":
			in = true
		case in && strings.HasPrefix(line, "    "):
			f := strings.Fields(line)
			if len(f) == 2 {
				n, _ := strconv.ParseUint(f[1], 10, 64)
				out[f[0]] = n
			}
		default:
			in = false
		}
	}
	return out
}

func runVDSOGuest(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(append([]string{"run", "--clean-env"}, args...), nil, &o, &e)
	return o.String(), e.String(), code
}

var traceHashRE = regexp.MustCompile(`trace-hash ([0-9a-f]{64})`)

// TestVDSOClockC runs the C clock guest, static and dynamically linked
// (glibc's setup_vdso in ld.so and in the static startup): its own
// clock_gettime syscalls are the only ones (libc's calls go through the
// vDSO), every check passes, the vDSO calls are counted, and --det runs
// repeat. With --vdso=off there is no [vvar] and libc makes syscalls.
func TestVDSOClockC(t *testing.T) {
	for _, arch := range guestArches {
		for _, prog := range []string{"vdsoclock", "vdsoclock-dyn"} {
			t.Run(arch+"/"+prog, func(t *testing.T) {
				var flags []string
				if strings.HasSuffix(prog, "-dyn") {
					flags = dynamicSetup(t, arch)
				}
				bin := filepath.Join("../../testdata/bin", arch, prog)
				args := append(append([]string{"--det", "--stats", "--trace-hash"}, flags...), bin, "maps")
				out, errOut, code := runVDSOGuest(t, args...)
				if code != 0 || !strings.HasSuffix(out, "\nok\n") {
					t.Fatalf("status %d\n%s\n%s", code, out, errOut)
				}
				for _, want := range []string{"r--p [vvar]\n", "r-xp [vdso] at AT_SYSINFO_EHDR\n", "store to [vvar]: SIGSEGV\n", "fork child reads the clocks\n"} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				}
				m := regexp.MustCompile(`direct clock_gettime syscalls: (\d+)`).FindStringSubmatch(out)
				if m == nil {
					t.Fatalf("no syscall count:\n%s", out)
				}
				direct, _ := strconv.ParseUint(m[1], 10, 64)
				sc, vd := statsSection(errOut, "syscalls"), statsSection(errOut, "vdso calls")
				if sc["clock_gettime"] != direct {
					t.Errorf("clock_gettime syscalls %d, the program made %d itself", sc["clock_gettime"], direct)
				}
				if sc["gettimeofday"] != 200 {
					t.Errorf("gettimeofday syscalls %d, the program made 200 itself", sc["gettimeofday"])
				}
				if vd["clock_gettime"] < 2*direct || vd["gettimeofday"] < 400 {
					t.Errorf("vdso calls %v", vd)
				}
				out2, errOut2, _ := runVDSOGuest(t, args...)
				h1, h2 := traceHashRE.FindString(errOut), traceHashRE.FindString(errOut2)
				if h1 == "" || h1 != h2 || out != out2 {
					t.Errorf("--det runs differ: %q %q", h1, h2)
				}

				off := append(append([]string{"--det", "--stats", "--vdso=off"}, flags...), bin, "maps")
				out, errOut, code = runVDSOGuest(t, off...)
				if code != 0 || !strings.Contains(out, "no [vvar]\n") || !strings.HasSuffix(out, "\nok\n") {
					t.Errorf("--vdso=off: status %d\n%s\n%s", code, out, errOut)
				}
				if sc := statsSection(errOut, "syscalls"); sc["clock_gettime"] <= direct {
					t.Errorf("--vdso=off: %d clock_gettime syscalls, libc made none", sc["clock_gettime"])
				}
			})
		}
	}
}

// TestVDSOGoGuest: Go's runtime reads the time through the vDSO on both
// arches, so the clock-heavy guest makes no clock_gettime syscall; its
// --det trace hash repeats, and its output equals the run without vDSO.
func TestVDSOGoGuest(t *testing.T) {
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			bin := filepath.Join(goGuestDir(t, arch), "clockvdso")
			out, errOut, code := runVDSOGuest(t, "--det", "--stats", "--trace-hash", bin)
			if code != 0 {
				t.Fatalf("status %d\n%s\n%s", code, out, errOut)
			}
			sc, vd := statsSection(errOut, "syscalls"), statsSection(errOut, "vdso calls")
			if sc["clock_gettime"] != 0 || sc["gettimeofday"] != 0 {
				t.Errorf("clock syscalls: %v", sc)
			}
			if vd["clock_gettime"] < 80000 {
				t.Errorf("vdso calls %v, want ≥ 80000 clock_gettime", vd)
			}
			_, errOut2, _ := runVDSOGuest(t, "--det", "--trace-hash", bin)
			if h1, h2 := traceHashRE.FindString(errOut), traceHashRE.FindString(errOut2); h1 == "" || h1 != h2 {
				t.Errorf("trace hashes %q %q", h1, h2)
			}
			off, errOff, code := runVDSOGuest(t, "--det", "--stats", "--vdso=off", bin)
			if code != 0 || off != out {
				t.Errorf("--vdso=off: status %d\n%s--- with vDSO\n%s", code, off, out)
			}
			if sc := statsSection(errOff, "syscalls"); sc["clock_gettime"] < 80000 {
				t.Errorf("--vdso=off: %d clock_gettime syscalls", sc["clock_gettime"])
			}
		})
	}
}
