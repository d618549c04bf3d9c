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

// sysrootLoader is each arch's dynamic loader inside a Debian sysroot.
var sysrootLoader = map[string]string{"arm64": "lib/ld-linux-aarch64.so.1", "amd64": "lib64/ld-linux-x86-64.so.2"}

// debianSysroot is the Debian sysroot for arch that scripts/sysroot built:
// $UVM_SYSROOT_ARM64 or $UVM_SYSROOT_AMD64, else the first of
// ~/.cache/uvm/sysroot-ARCH-full (the whole program list: python3,
// git, gawk, diffutils, tar, gzip …) and ~/.cache/uvm/sysroot-ARCH (.ci/run's
// smaller one) that has the loader; or skips.
func debianSysroot(t *testing.T, arch string) string {
	env := "UVM_SYSROOT_" + strings.ToUpper(arch)
	cands := []string{os.Getenv(env)}
	if cands[0] == "" {
		home, _ := os.UserHomeDir()
		cands = []string{filepath.Join(home, ".cache/uvm/sysroot-"+arch+"-full"), filepath.Join(home, ".cache/uvm/sysroot-"+arch)}
	}
	for _, root := range cands {
		if _, err := os.Stat(filepath.Join(root, sysrootLoader[arch])); err == nil {
			return root
		}
	}
	t.Skipf("no %s Debian sysroot (set %s, or scripts/sysroot %s %s coreutils bash grep sed gawk findutils diffutils tar gzip xz-utils python3 perl-base sqlite3 git)",
		arch, env, arch, cands[0])
	return ""
}

// qemuUser is qemu-user's binary for arch, "" where it is not installed.
func qemuUser(arch string) string {
	name := map[string]string{"arm64": "qemu-aarch64", "amd64": "qemu-x86_64"}[arch]
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

// TestSysrootPrograms runs Debian's own binaries (hostCases: coreutils,
// grep, sed, gawk, find | xargs, diff, tar + gzip + xz, bash scripts,
// python3, perl, sqlite3, git) from a Debian sysroot of each arch under
// uvm -L and compares stdout and status with qemu-user -L on the same
// sysroot, and with this x86-64 host's own build of the program where that
// is the very same file (amd64) or where qemu is missing (the output of
// these tools does not depend on the arch). Without binfmt_misc a program
// qemu runs execs the host's programs (PATH's sort, xz, git): their output
// is the same release's. A case skips when the sysroot lacks its program.
func TestSysrootPrograms(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reference runs are Linux programs")
	}
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			root := debianSysroot(t, arch)
			qemu := qemuUser(arch)
			native := runtime.GOARCH == "amd64"
			dir := t.TempDir()
			for _, c := range hostCases(dir) {
				t.Run(filepath.Base(c[0]), func(t *testing.T) {
					gp := sysrootProgram(root, c[0])
					if gp == "" {
						t.Skip(c[0] + " not in the sysroot")
					}
					if m, _ := filepath.Glob(filepath.Join(root, "usr/lib/python3*/json")); strings.HasSuffix(c[0], "python3") && len(m) == 0 {
						t.Skip("python3-minimal: no json module")
					}
					stdin := "lower case input\n"
					var o, e bytes.Buffer
					args := append([]string{"run", "--clean-env", "-E", "LC_ALL=C", "-E", "PATH=/usr/bin:/bin", "-L", root, gp}, c[1:]...)
					code := run(args, strings.NewReader(stdin), &o, &e)
					compared := false
					if qemu != "" {
						qo, qcode, err := runReference(append([]string{qemu, "-L", root, gp}, c[1:]...), stdin)
						if err != nil {
							t.Fatalf("qemu: %v", err)
						}
						compared = true
						if code != qcode || o.String() != qo {
							t.Errorf("status %d (qemu %d)\n--- uvm\n%s--- qemu\n%s--- stderr\n%s", code, qcode, o.String(), qo, e.String())
						}
					}
					if native && (qemu == "" || arch == "amd64" && sameFile(gp, c[0])) {
						no, ncode, err := runReference(c, stdin)
						if err == nil {
							compared = true
							if code != ncode || o.String() != no {
								t.Errorf("status %d (native %d)\n--- uvm\n%s--- native\n%s--- stderr\n%s", code, ncode, o.String(), no, e.String())
							}
						}
					}
					if !compared {
						t.Skip("no reference: neither qemu-user nor this host's " + c[0])
					}
				})
			}
		})
	}
}

// sysrootProgram is the regular file in root that runs for prog (a host
// path: /bin/x may be /usr/bin/x in a usrmerged tree), or "".
func sysrootProgram(root, prog string) string {
	for _, p := range []string{prog, "/usr" + prog, strings.TrimPrefix(prog, "/usr")} {
		if fi, err := os.Stat(filepath.Join(root, p)); err == nil && fi.Mode().IsRegular() {
			return filepath.Join(root, p)
		}
	}
	return ""
}

// sameFile reports whether two files have the same contents.
func sameFile(a, b string) bool {
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// runReference runs argv on the host in the environment the uvm runs get
// (plus env) and returns its stdout and status; err: it did not run at all.
func runReference(argv []string, stdin string, env ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append([]string{"LC_ALL=C", "PATH=/usr/bin:/bin"}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return out.String(), 128 + int(ws.Signal()), nil // as a shell reports it
		}
		return out.String(), ee.ExitCode(), nil
	}
	return out.String(), 0, err
}
