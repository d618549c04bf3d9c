package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goBuildMain is the small module TestGoBuildInGuest builds inside uvm.
const goBuildMain = `package main

import (
	"fmt"
	"strings"
)

func main() {
	fmt.Println(strings.ToUpper("built by go inside uvm"), len(strings.Fields("a b c")))
}
`

// goBuildWarm imports what goBuildMain imports, so that a host build of it
// fills the build cache with the standard library and the guest compiles
// only goBuildMain's package and links it (a cold standard library takes
// the interpreter hours on a loaded 2-core host).
const goBuildWarm = `package main

import (
	"fmt"
	"strings"
)

func main() { fmt.Println(strings.ToLower("W")) }
`

// TestGoBuildInGuest runs the Go toolchain inside uvm: `go build` of a
// small module (cmd/go forking and execing the compiler and the linker,
// the linker mapping its output with fallocate), then runs the binary it
// produced and compares its output with a native run (amd64) or
// qemu-aarch64 (arm64). amd64 uses the host's toolchain; arm64 needs a
// linux/arm64 toolchain named by UVM_GOROOT_ARM64 (scripts/goroot-arm64).
// The standard library comes from a build cache the host fills first with
// the same toolchain source. uvm's peak RSS is logged.
func TestGoBuildInGuest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping go build inside uvm")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the amd64 case runs the host's linux/amd64 toolchain")
	}
	out, err := exec.Command(goTool(), "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("no Go toolchain: go env GOROOT: %v", err)
	}
	hostRoot := strings.TrimSpace(string(out))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ arch, goroot string }{
		{"amd64", hostRoot},
		{"arm64", os.Getenv("UVM_GOROOT_ARM64")},
	} {
		t.Run(c.arch, func(t *testing.T) {
			if c.goroot == "" {
				t.Skip("UVM_GOROOT_ARM64 unset (make one with scripts/goroot-arm64 DIR)")
			}
			guestGo := filepath.Join(c.goroot, "bin", "go")
			if _, err := os.Stat(guestGo); err != nil {
				t.Skipf("no guest toolchain: %v", err)
			}
			dir := t.TempDir()
			mod := filepath.Join(dir, "mod")
			warm := filepath.Join(dir, "warm")
			for d, src := range map[string]string{mod: goBuildMain, warm: goBuildWarm} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				gomod := "module example.com/" + filepath.Base(d) + "\n\ngo 1.21\n"
				if err := os.WriteFile(filepath.Join(d, "go.mod"), []byte(gomod), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "main.go"), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{
				"HOME=" + filepath.Join(dir, "home"),
				"GOCACHE=" + filepath.Join(dir, "cache"),
				"GOROOT=" + c.goroot,
				"PATH=" + filepath.Join(c.goroot, "bin") + ":/usr/bin:/bin",
				"GOFLAGS=-mod=mod", "CGO_ENABLED=0", "GOPROXY=off", "GOTOOLCHAIN=local",
			}
			warmCmd := exec.Command(goTool(), "build", "-o", os.DevNull, ".")
			warmCmd.Dir = warm
			warmCmd.Env = append(append([]string{}, env...), "GOOS=linux", "GOARCH="+c.arch)
			if out, err := warmCmd.CombinedOutput(); err != nil {
				t.Fatalf("host go build (cache warm-up): %v\n%s", err, out)
			}

			// Bounded: a stuck guest fails with its output instead of
			// eating the whole test timeout.
			limit := 20 * time.Minute
			if dl, ok := t.Deadline(); ok && time.Until(dl)-time.Minute < limit {
				limit = time.Until(dl) - time.Minute
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			hello := filepath.Join(dir, "hello")
			argv := []string{"run", "-U", asUVMEnv, "--clean-env"}
			for _, kv := range env {
				argv = append(argv, "-E", kv)
			}
			argv = append(argv, guestGo, "build", "-o", hello, ".")
			cmd := exec.CommandContext(ctx, exe, argv...)
			cmd.Dir = mod
			cmd.Env = []string{asUVMEnv + "=1", "HOME=/"}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("go build inside uvm did not finish in %v\n--- stdout\n%s\n--- stderr\n%s", limit, tail(stdout.String(), 3000), tail(stderr.String(), 3000))
			}
			if err != nil {
				t.Fatalf("go build inside uvm: %v\n--- stdout\n%s\n--- stderr\n%s", err, tail(stdout.String(), 3000), tail(stderr.String(), 3000))
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				t.Logf("uvm peak RSS during go build: %d MiB", ru.Maxrss/1024)
			}

			// The oracle: the produced binary natively (amd64) or under
			// qemu-aarch64; then the same binary under uvm.
			var oracle []string
			switch c.arch {
			case "amd64":
				oracle = []string{hello}
			case "arm64":
				q, err := exec.LookPath("qemu-aarch64")
				if err != nil {
					t.Skip("qemu-aarch64 not installed: no oracle for the built arm64 binary")
				}
				oracle = []string{q, hello}
			}
			want, err := exec.Command(oracle[0], oracle[1:]...).Output()
			if err != nil {
				t.Fatalf("%v: %v", oracle, err)
			}
			if !strings.HasPrefix(string(want), "BUILT BY GO INSIDE UVM 3\n") {
				t.Fatalf("the binary go built inside uvm prints %q natively", want)
			}
			got, errOut, code := runGuest(t, hello, nil, nil, nil, dir)
			if code != 0 || got != string(want) {
				t.Errorf("the built binary under uvm: status %d, stdout %q, want %q\nstderr:\n%s", code, got, want, errOut)
			}
		})
	}
}
