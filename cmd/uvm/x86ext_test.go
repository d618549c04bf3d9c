package main

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestX86Ext runs the x86-64-only programs testdata/src/x86_bmi.c (BMI1,
// BMI2, LZCNT, MOVBE, ADX, RDTSCP, RDPID, FSGSBASE; built with
// -march=x86-64-v3 -mno-avx) and x86_mmx.c (MMX, SSE-on-MMX, x87/MMX
// aliasing) under uvm and compares their output with
// expected/NAME.amd64.out, and with a native run when the host CPU has
// every feature the program uses. x86_vsyscall checks the legacy vsyscall
// page ("vsyscall": natively only where the host kernel maps it).
func TestX86Ext(t *testing.T) {
	hostFlags := cpuinfoFlags()
	for _, c := range []struct {
		name  string
		needs []string // /proc/cpuinfo flags for the native comparison
	}{
		{"x86_bmi", []string{"bmi1", "bmi2", "abm", "movbe", "adx", "rdtscp", "rdpid", "fsgsbase"}},
		{"x86_mmx", []string{"mmx", "sse2", "ssse3"}},
		{"x86_vsyscall", []string{"vsyscall"}}, // the host kernel's page, emulate/xonly mode
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := cacheGuest(t, "amd64", c.name)
			want, err := os.ReadFile("../../testdata/expected/" + c.name + ".amd64.out")
			if err != nil {
				t.Fatal(err)
			}
			for _, det := range []bool{true, false} {
				out, stderr, code := runUVM(t, det, nil, bin)
				if code != 0 || out != string(want) {
					t.Errorf("det=%v: exit %d, output:\n%s\nwant:\n%s\nstderr: %s", det, code, out, want, stderr)
				}
			}
			if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
				return
			}
			for _, f := range c.needs {
				if !hostFlags[f] {
					t.Logf("host CPU lacks %s: no native comparison", f)
					return
				}
			}
			native, err := exec.Command(bin).Output()
			if err != nil {
				t.Fatalf("native run: %v", err)
			}
			if string(native) != string(want) {
				t.Errorf("native output differs from expected (rebuild with testdata/build.sh?):\n%s", native)
			}
		})
	}
}

// cpuinfoFlags returns the host CPU's /proc/cpuinfo flags, plus
// "vsyscall" when the host kernel maps the legacy vsyscall page.
func cpuinfoFlags() map[string]bool {
	f := map[string]bool{}
	if maps, err := os.ReadFile("/proc/self/maps"); err == nil && strings.Contains(string(maps), "[vsyscall]") {
		f["vsyscall"] = true
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return f
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			for _, w := range strings.Fields(v) {
				f[w] = true
			}
			return f
		}
	}
	return f
}
