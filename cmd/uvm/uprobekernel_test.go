package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestUprobeOptKernel: --uprobe-opt kernel=VERSION selects a release's
// behaviour; releases the model does not know are refused before the
// guest starts.
func TestUprobeOptKernel(t *testing.T) {
	bin, _ := filepath.Abs(filepath.Join(oracleDir, "oracle"))
	for _, tc := range []struct {
		kernel string
		code   int
		stderr string
	}{
		{"6.12", 0, "c_nop  uprobe"},
		{"6.18.44-fc-v669", 0, "c_nop  uprobe"},
		{"6.9", 2, "kernel 6.9 is not modelled (kernel=VERSION knows 6.10 … 6.18)"},
		{"7.1", 2, "kernel 7.1 is not modelled"},
		{"new", 2, `kernel version "new" (want MAJOR.MINOR`},
	} {
		var o, e bytes.Buffer
		code := run([]string{"run", "--clean-env", "--uprobe-opt", "kernel=" + tc.kernel, "--uprobe", "c_nop", bin, "nop"},
			strings.NewReader(""), &o, &e)
		if code != tc.code || !strings.Contains(e.String(), tc.stderr) {
			t.Errorf("kernel=%s: exit %d, stderr %q; want %d and %q", tc.kernel, code, e.String(), tc.code, tc.stderr)
		}
		if tc.code != 0 && o.Len() != 0 {
			t.Errorf("kernel=%s: the guest ran: %q", tc.kernel, o.String())
		}
	}
}

// TestUprobeXOLMremap: mremap of the "[uprobes]" area, as the live 6.18
// kernel answers it (TestUprobeOracleWholePrograms/mremap compares with
// the kernel where perf uprobes exist): growing is EFAULT, moving EPERM;
// with kernel=6.12 (before xol_mremap) the move succeeds and the next
// out-of-line step faults at the stale address.
func TestUprobeXOLMremap(t *testing.T) {
	bin, _ := filepath.Abs(filepath.Join(oracleDir, "progs"))
	var o, e bytes.Buffer
	code := run([]string{"run", "--clean-env", "--uprobe", "leaf", bin, "mremap"}, strings.NewReader(""), &o, &e)
	want := "mremap grow: errno 14\nmremap grow-maymove: errno 14\nmremap move: errno 1\n" +
		"mremap same: ok, in place; [uprobes] unmoved\nsum 11; [uprobes] unmoved\n"
	if code != 0 || o.String() != want {
		t.Errorf("exit %d, output %q, want %q\n%s", code, o.String(), want, e.String())
	}
	o.Reset()
	e.Reset()
	code = run([]string{"run", "--clean-env", "--uprobe-opt", "kernel=6.12", "--uprobe", "leaf", bin, "mremap"}, strings.NewReader(""), &o, &e)
	if code != 128+11 || !strings.Contains(o.String(), "mremap move: ok, moved; [uprobes] moved\n") {
		t.Errorf("kernel=6.12: exit %d, output %q\n%s", code, o.String(), e.String())
	}
}
