package tasks

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSysnamesFresh regenerates sysnames.go from the host's uapi headers
// and compares it with the committed file, so a hand edit or a changed
// generator is noticed. It skips where the headers are absent or belong
// to another kernel version than the committed file's (the supplement
// covers what older headers lack; newer ones name more syscalls).
func TestSysnamesFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	const amd64H, genericH, versionH = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm-generic/unistd.h", "/usr/include/linux/version.h"
	for _, h := range []string{amd64H, genericH, versionH} {
		if _, err := os.Stat(h); err != nil {
			t.Skipf("no uapi header %s (apt-get install linux-libc-dev)", h)
		}
	}
	committed, err := os.ReadFile("sysnames.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// Headers: Linux (\S+)\.$`).FindSubmatch(committed)
	if m == nil {
		t.Fatal("sysnames.go lacks its '// Headers: Linux X.Y.' line: regenerate with go generate ./internal/tasks")
	}
	ver, err := os.ReadFile(versionH)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ver, []byte("LINUX_VERSION_MAJOR "+strings.Split(string(m[1]), ".")[0]+"\n")) ||
		!bytes.Contains(ver, []byte("LINUX_VERSION_PATCHLEVEL "+strings.Split(string(m[1]), ".")[1]+"\n")) {
		t.Skipf("host headers are not Linux %s, the version sysnames.go was generated from", m[1])
	}
	out := filepath.Join(t.TempDir(), "sysnames.go")
	goTool, err := exec.LookPath("go") // go test puts its own first in PATH
	if err != nil {
		t.Skip("no go command in PATH")
	}
	cmd := exec.Command(goTool, "run", "./internal/sysgen",
		"-amd64", amd64H, "-generic", genericH, "-version", versionH, "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sysgen: %v\n%s", err, b)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatal("sysnames.go is stale or hand-edited: run go generate ./internal/tasks")
	}
}
