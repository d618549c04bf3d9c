// Package uvmtest turns deterministic guest runs into Go tests: Golden
// runs a program under uvm and compares its stdout, stderr, exit status and
// trace hash with a file under testdata (rewritten with -update, the
// golden-file habit of pprof and x/arch); Fuzz feeds fuzz inputs to a guest
// as its standard input.
package uvmtest

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm"
)

var update = flag.Bool("update", false, "rewrite uvmtest golden files with the results of this run")

// Golden runs cfg deterministically (cfg.Det defaults to seed 0) and
// compares the outcome with testdata/NAME.golden, which -update rewrites.
// cfg's Stdout and Stderr are ignored: the run's own are compared.
//
// Unless cfg.Root is set, the program runs confined in a fresh root that
// holds only a copy of it, as /NAME of the program: what the guest sees of
// paths (its own through /proc/self/exe, its working directory /) is then
// the same wherever the test runs, so the golden holds on every machine.
func Golden(t testing.TB, name string, cfg uvm.Config) uvm.Result {
	t.Helper()
	if cfg.Det == nil {
		cfg.Det = &uvm.Det{}
	}
	if cfg.Root == "" {
		if runtime.GOOS != "linux" {
			t.Skip("uvmtest.Golden confines the guest with --root, which needs a Linux host")
		}
		data, err := os.ReadFile(cfg.Program)
		if err != nil {
			t.Fatalf("uvmtest: %v", err)
		}
		root := t.TempDir()
		base := filepath.Base(cfg.Program)
		if err := os.WriteFile(filepath.Join(root, base), data, 0o755); err != nil {
			t.Fatal(err)
		}
		if cfg.Argv0 == "" {
			cfg.Argv0 = base
		}
		cfg.Root, cfg.Program, cfg.Dir = root, "/"+base, "/"
	}
	var out, errw bytes.Buffer
	cfg.Stdout, cfg.Stderr = &out, &errw
	if cfg.Log == nil {
		cfg.Log = &errw
	}
	res, err := uvm.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("uvmtest: %s: %v", name, err)
	}
	got := Format(res, out.Bytes(), errw.Bytes())
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return res
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("uvmtest: %v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("uvmtest: %s differs from %s (-update rewrites it):\n%s", name, path, diffLines(string(want), got))
	}
	return res
}

// Format is the golden file's text for a run.
func Format(res uvm.Result, stdout, stderr []byte) string {
	return fmt.Sprintf("status %d\ninstructions %d\ntrace-hash %s\n--- stdout\n%s\n--- stderr\n%s\n",
		res.ShellCode(), res.Instructions, res.TraceHash, stdout, stderr)
}

// diffLines shows the first differing line of two texts and its context.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n- %q\n+ %q", i+1, wl, gl)
		}
	}
	return "(equal)"
}

// Fuzz runs cfg with each fuzz input as the guest's standard input, in
// deterministic mode, and fails on anything but a clean end: a start error
// or a death by a signal the program does not expect (check, when not nil,
// judges the result; nil accepts every exit status).
func Fuzz(f *testing.F, cfg uvm.Config, check func(t *testing.T, in []byte, res uvm.Result, stdout []byte)) {
	f.Fuzz(func(t *testing.T, in []byte) {
		c := cfg
		if c.Det == nil {
			c.Det = &uvm.Det{}
		}
		var out bytes.Buffer
		c.Stdin, c.Stdout = bytes.NewReader(in), &out
		res, err := uvm.Run(context.Background(), c)
		if err != nil {
			t.Fatalf("uvmtest: %v", err)
		}
		if check != nil {
			check(t, in, res, out.Bytes())
		}
	})
}
