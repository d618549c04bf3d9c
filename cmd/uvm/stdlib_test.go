package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stdlibPackages are Go standard-library packages whose own test binaries
// must pass under uvm on both guests (issue acceptance).
var stdlibPackages = []string{"strconv", "sort", "strings", "unicode/utf8"}

// TestStdlib cross-compiles the test binaries of stdlibPackages for each
// guest arch and runs them under uvm from the package's source directory
// with -test.short, as `go test` would.
func TestStdlib(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Go standard library test binaries")
	}
	out, err := exec.Command(goTool(), "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := strings.TrimSpace(string(out))
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			dir := t.TempDir()
			for _, pkg := range stdlibPackages {
				t.Run(strings.ReplaceAll(pkg, "/", "_"), func(t *testing.T) {
					bin := filepath.Join(dir, strings.ReplaceAll(pkg, "/", "_")+".test")
					cmd := exec.Command(goTool(), "test", "-c", "-o", bin, pkg)
					cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("go test -c %s: %v\n%s", pkg, err, out)
					}
					src := filepath.Join(goroot, "src", pkg)
					out, errOut, code := runGuest(t, bin, []string{"-test.short"}, []string{"HOME=/tmp", "PATH=/usr/bin:/bin"}, nil, src)
					if code != 0 || !strings.Contains(out, "PASS") {
						t.Errorf("%s under uvm: status %d\n--- stdout (tail)\n%s\n--- stderr (tail)\n%s", pkg, code, tail(out, 3000), tail(errOut, 3000))
					}
				})
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
