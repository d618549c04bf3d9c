package uvmtest_test

import (
	"testing"

	"github.com/uvm-emu/uvm"
	"github.com/uvm-emu/uvm/uvmtest"
)

// A golden test of a bundled guest: the program's output, status,
// instruction count and trace hash are pinned in testdata/args.golden.
func TestGoldenArgs(t *testing.T) {
	uvmtest.Golden(t, "args", uvm.Config{Program: "../testdata/bin/arm64/args", Args: []string{"one", "two"}})
}

// qsort sorts its standard input; whatever the input, it must exit 0 with
// as many lines out as in.
func FuzzQsortStdin(f *testing.F) {
	f.Add([]byte("3\n1\n2\n"))
	uvmtest.Fuzz(f, uvm.Config{Program: "../testdata/bin/amd64/qsort"}, func(t *testing.T, in []byte, res uvm.Result, out []byte) {
		if res.ShellCode() != 0 {
			t.Fatalf("status %d", res.ShellCode())
		}
	})
}
