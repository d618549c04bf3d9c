package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// straceCall is the syscall name at the start of an strace line.
var straceCall = regexp.MustCompile(`(?m)^([a-z_0-9]+)\(`)

// TestStrace runs the host's strace (a dynamically linked x86-64
// program, a PTRACE_TRACEME tracer that reads strings with
// process_vm_readv) under uvm on the hello guest, and checks it sees the
// syscalls a native strace sees, in the same order, ending in hello's
// write and exit. Skipped without /usr/bin/strace on an x86-64 host.
func TestStrace(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil || runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("needs strace on an x86-64 Linux host")
	}
	hello, _ := filepath.Abs("../../testdata/bin/amd64/hello")
	dir := t.TempDir()
	nativeOut := filepath.Join(dir, "native")
	if out, err := exec.Command(strace, "-o", nativeOut, hello).CombinedOutput(); err != nil {
		t.Skipf("native strace: %v: %s", err, out)
	}
	native, _ := os.ReadFile(nativeOut)
	uvmOut := filepath.Join(dir, "uvm")
	var o, e bytes.Buffer
	if code := run([]string{"run", strace, "-o", uvmOut, hello}, nil, &o, &e); code != 0 {
		t.Fatalf("strace under uvm: status %d\n%s", code, e.String())
	}
	got, _ := os.ReadFile(uvmOut)
	names := func(b []byte) string {
		var out []string
		for _, m := range straceCall.FindAllSubmatch(b, -1) {
			out = append(out, string(m[1]))
		}
		return strings.Join(out, " ")
	}
	if names(got) != names(native) {
		t.Errorf("syscalls under uvm:\n%s\nnative:\n%s\n--- uvm's strace output\n%s", names(got), names(native), got)
	}
	for _, want := range []string{`write(1, "Hello, world!\n", 14)`, "+++ exited with 0 +++"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("strace under uvm lacks %q:\n%s", want, got)
		}
	}
	if o.String() != "Hello, world!\n" {
		t.Errorf("guest output %q", o.String())
	}
}
