package main

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// x86TrapsSections are the sections of testdata/src/x86_traps.c, all of
// which uvm reproduces exactly (expected/x86_traps.amd64.out is the native
// run with these arguments): the trap flag, x87 exceptions unmasked in FCW
// (#MF at the next waiting instruction), SSE exceptions unmasked in MXCSR,
// the #UD/#GP/#PF/#DE faults, far transfers, segment register loads and
// alignment checking, with si_code, si_addr, the saved RIP and RFLAGS,
// trapno, error code and the saved and reset FPU state.
var x86TrapsSections = []string{"tf", "x87", "sse", "faults", "far", "segs", "ac"}

// TestX86Traps runs x86_traps under uvm and, on an x86-64 Linux host,
// natively, and compares both with the expected output.
func TestX86Traps(t *testing.T) {
	bin := cacheGuest(t, "amd64", "x86_traps")
	want, err := os.ReadFile("../../testdata/expected/x86_traps.amd64.out")
	if err != nil {
		t.Fatal(err)
	}
	// The cache model runs the guest one instruction at a time
	// (runRedecode): the trap flag and AC must end its runs too.
	for _, v := range []struct {
		det   bool
		flags []string
	}{{true, nil}, {false, nil}, {true, []string{"--cache-model"}}, {false, []string{"--cache-model", "--icache", "coherent"}}} {
		out, stderr, code := runUVM(t, v.det, v.flags, bin, x86TrapsSections...)
		if code != 0 || out != string(want) {
			t.Errorf("det=%v %v: exit %d, output:\n%s\nwant:\n%s\nstderr: %s", v.det, v.flags, code, out, want, stderr)
		}
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	// uvm's CPU is a GenuineIntel one and the expected output an Intel
	// host's: other vendors differ in what the trap frames hold (AMD
	// saves FOP, sets no RF in a single-step frame, checks movups
	// alignment under AC).
	if v := hostCPUVendor(); v != "GenuineIntel" {
		t.Logf("host CPU is %q, not GenuineIntel: no native comparison", v)
		return
	}
	native, err := exec.Command(bin, x86TrapsSections...).Output()
	if err != nil {
		t.Fatalf("native run: %v", err)
	}
	if string(native) != string(want) {
		t.Errorf("native output differs from expected:\n%s", native)
	}
}

// hostCPUVendor is /proc/cpuinfo's vendor_id ("" where it cannot be read).
func hostCPUVendor() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "vendor_id" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
