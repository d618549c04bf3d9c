package main

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// x86TrapsSections are the sections of testdata/src/x86_traps.c whose
// output uvm reproduces exactly (expected/x86_traps.amd64.out is the
// native run with these arguments): SSE exceptions unmasked in MXCSR, the
// #UD/#GP/#PF/#DE faults, far transfers and segment register loads, with
// si_code, si_addr, the saved RIP and RFLAGS (RF set by faults), trapno,
// error code and the saved and reset FPU state.
var x86TrapsSections = []string{"sse", "faults", "far", "segs"}

// TestX86Traps runs x86_traps under uvm and, on an x86-64 Linux host,
// natively, and compares both with the expected output.
func TestX86Traps(t *testing.T) {
	bin := cacheGuest(t, "amd64", "x86_traps")
	want, err := os.ReadFile("../../testdata/expected/x86_traps.amd64.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, det := range []bool{true, false} {
		out, stderr, code := runUVM(t, det, nil, bin, x86TrapsSections...)
		if code != 0 || out != string(want) {
			t.Errorf("det=%v: exit %d, output:\n%s\nwant:\n%s\nstderr: %s", det, code, out, want, stderr)
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
