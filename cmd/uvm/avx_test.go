package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestAVXGuest runs the x86-64-v3 C guest (testdata/src/amd64/avx2.c:
// auto-vectorised loops, AVX2/FMA/F16C intrinsics, glibc string functions
// picked by CPUID, a signal with live YMM state) with --cpu x86-64-v3, in
// both scheduling modes; stdout must equal the native run's. With the
// x86-64-v2 model the first VEX instruction is SIGILL; the default model
// is x86-64-v3.
func TestAVXGuest(t *testing.T) {
	want, err := os.ReadFile("../../testdata/expected/avx2.out")
	if err != nil {
		t.Fatal(err)
	}
	const bin = "../../testdata/bin/amd64/avx2"
	for _, mode := range [][]string{{"--det"}, {}} {
		var o, e bytes.Buffer
		args := append(append([]string{"run", "--clean-env", "--cpu", "x86-64-v3"}, mode...), bin)
		if code := run(args, nil, &o, &e); code != 0 || o.String() != string(want) {
			t.Errorf("%v: status %d\n%s--- want\n%s--- stderr\n%s", mode, code, o.String(), want, e.String())
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"run", "--clean-env", "--cpu", "x86-64-v2", bin}, nil, &o, &e); code != 128+4 || !strings.Contains(e.String(), "SIGILL") {
		t.Errorf("x86-64-v2: status %d, stderr %q; want SIGILL", code, e.String())
	}
	o.Reset()
	e.Reset()
	if code := run([]string{"run", "--clean-env", bin}, nil, &o, &e); code != 0 || o.String() != string(want) {
		t.Errorf("default model (x86-64-v3): status %d\n%s--- stderr\n%s", code, o.String(), e.String())
	}
	if code := run([]string{"run", "--cpu", "x86-64-v9", bin}, nil, &o, &e); code == 0 {
		t.Errorf("--cpu x86-64-v9 accepted")
	}
}
