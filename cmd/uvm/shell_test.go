package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestShell runs shell scripts (testdata/shell/*.sh) under a static
// busybox sh for each guest arch, in deterministic and parallel mode, and
// compares output and exit status with the script's native run
// (testdata/shell/NAME.out/.exit, recorded with the same busybox on an
// x86-64 Linux host). The busybox binaries are fetched by
// scripts/fetch-busybox; without them the test skips.
func TestShell(t *testing.T) {
	scripts, _ := filepath.Glob("../../testdata/shell/*.sh")
	if len(scripts) == 0 {
		t.Fatal("no scripts in testdata/shell")
	}
	for _, arch := range guestArches {
		bb, _ := filepath.Abs(filepath.Join("../../testdata/shell/bin", arch, "busybox"))
		t.Run(arch, func(t *testing.T) {
			if _, err := os.Stat(bb); err != nil {
				t.Skipf("%s missing: run scripts/fetch-busybox", bb)
			}
			for _, mode := range []string{"det", "parallel"} {
				if mode == "parallel" && (testing.Short() || raceEnabled) {
					continue
				}
				for _, sc := range scripts {
					name := strings.TrimSuffix(filepath.Base(sc), ".sh")
					t.Run(mode+"/"+name, func(t *testing.T) {
						want, err := os.ReadFile(strings.TrimSuffix(sc, ".sh") + ".out")
						if err != nil {
							t.Fatal(err)
						}
						codeB, _ := os.ReadFile(strings.TrimSuffix(sc, ".sh") + ".exit")
						wantCode, _ := strconv.Atoi(strings.TrimSpace(string(codeB)))
						abs, _ := filepath.Abs(sc)
						// stdout and stderr interleaved, as the native 2>&1 run.
						var both bytes.Buffer
						argv := []string{"run", "--clean-env", "-E", "PATH=/usr/bin:/bin"}
						if mode == "det" {
							argv = append(argv, "--det")
						}
						code := run(append(argv, bb, "sh", abs), strings.NewReader(""), &both, &both)
						got := both.String()
						if got != string(want) || code != wantCode {
							t.Errorf("status %d (want %d)\n--- got\n%s\n--- want\n%s", code, wantCode, got, want)
						}
					})
				}
			}
		})
	}
}
