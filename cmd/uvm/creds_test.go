package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCredsRoot runs creds' privileged part (set*id with capabilities
// kept, dropped and regained, keepcaps, setfsuid's capability fix-ups,
// capset, chown and access as root, PR_CAPBSET_DROP) without --det, where
// the guest is the host user: it needs uvm to run as root, and compares
// with testdata/expected/creds-root.out, recorded natively as root in
// the same kind of container (the capability sets are the host's).
func TestCredsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs uvm to run as root (the guest is the host user outside --det)")
	}
	want, err := os.ReadFile("../../testdata/expected/creds-root.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "creds"))
			var out, errb bytes.Buffer
			code := run([]string{"run", bin, "--root", t.TempDir()}, nil, &out, &errb)
			if code != 0 || out.String() != string(want) {
				t.Errorf("status %d\n--- got\n%s\n--- want\n%s\n--- stderr\n%s", code, out.String(), want, errb.String())
			}
		})
	}
}
