package main

import (
	"os"
	"os/exec"
	"runtime"
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
	native, err := exec.Command(bin, x86TrapsSections...).Output()
	if err != nil {
		t.Fatalf("native run: %v", err)
	}
	if string(native) != string(want) {
		t.Errorf("native output differs from expected:\n%s", native)
	}
}
