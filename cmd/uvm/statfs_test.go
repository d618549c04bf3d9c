package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// statfsPaths are the statfs guest's arguments (testdata/src/statfs.c):
// the root, uvm's /proc (directories, files, a missing name), its /dev
// (memory devices and directories of the root's dev/), the binds and a
// file on the read-only one.
var statfsPaths = []string{"/", "/statfs", "/proc", "/proc/self", "/proc/self/status", "/proc/self/mounts",
	"/proc/cpuinfo", "/proc/nonexistent", "/dev", "/dev/null", "/dev/zero", "/dev/shm", "/dev/pts",
	"/data", "/data/file", "/sp ace", "/nonexistent"}

// statfsTree is mountsTree with the statfs guest in the root, dev/shm
// and dev/pts in its dev/ (devtmpfs has them) and a file to bind.
func statfsTree(t *testing.T, top, arch string) (string, []string) {
	root, binds := mountsTree(t, top, arch)
	bin, err := os.ReadFile("../../testdata/bin/" + arch + "/statfs")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"root/dev/shm", "root/dev/pts"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "host/file"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "statfs"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, binds
}

// TestStatfs: statfs and fstatfs under --root with two binds give what a
// real kernel gives in a chroot with the same mounts (TestStatfsNative
// checks the expected files against one): procfs and devtmpfs for uvm's
// /proc and /dev with their mount flags, the host's file system with
// ST_RDONLY on the :ro bind and on --root DIR:ro, the kernel's pseudo
// file systems for pipes, sockets, eventfds and memfds. Unconfined, the
// /proc and /dev lines are the same.
func TestStatfs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--root and --bind need Linux")
	}
	for _, ro := range []bool{false, true} {
		name := "statfs-root.out"
		if ro {
			name = "statfs-rootro.out"
		}
		exp, err := os.ReadFile("../../testdata/expected/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, arch := range guestArches {
			for _, det := range []bool{true, false} {
				root, binds := statfsTree(t, t.TempDir(), arch)
				args := []string{"run"}
				if det {
					args = append(args, "--det")
				}
				if ro {
					root += ":ro"
				}
				args = append(append(append(args, "--root", root), binds...), "/statfs")
				args = append(args, statfsPaths...)
				var o, e bytes.Buffer
				if code := run(args, nil, &o, &e); code != 0 || o.String() != string(exp) {
					t.Errorf("%s det=%v ro=%v: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, det, ro, code, o.String(), exp, e.String())
				}
			}
		}
	}
	// Unconfined: the same answers for uvm's own /proc and /dev.
	exp, err := os.ReadFile("../../testdata/expected/statfs-root.out")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	var paths []string
	for _, l := range strings.SplitAfter(string(exp), "\n") {
		p, _, _ := strings.Cut(l, " ")
		p = strings.TrimSuffix(p, ":")
		if p == "/proc" || strings.HasPrefix(p, "/proc/") && p != "/proc/self/fd/PIPE" || p == "/dev/null" || p == "/dev/zero" {
			paths = append(paths, p)
		}
		if p == "/proc" || strings.HasPrefix(p, "/proc/") || p == "/dev/null" || p == "/dev/zero" || !strings.HasPrefix(p, "/") && p != "" {
			want.WriteString(l)
		}
	}
	for _, arch := range guestArches {
		bin, _ := filepath.Abs("../../testdata/bin/" + arch + "/statfs")
		var o, e bytes.Buffer
		if code := run(append([]string{"run", "--det", bin}, paths...), nil, &o, &e); code != 0 || o.String() != want.String() {
			t.Errorf("%s unconfined: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, code, o.String(), want.String(), e.String())
		}
	}
}

// TestStatfsNative checks expected/statfs-root.out and statfs-rootro.out
// against the host kernel: the amd64 guest under chroot(2) in a mount
// namespace with the mounts of uvm's table (proc nosuid,nodev,noexec,
// devtmpfs nosuid, the binds), the root bound onto itself, read-write
// and then remounted read-only (skipped where unshare -m or the mounts
// are not permitted).
func TestStatfsNative(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs an x86-64 Linux host")
	}
	if exec.Command("unshare", "-m", "true").Run() != nil {
		t.Skip("unshare -m not permitted")
	}
	for _, ro := range []bool{false, true} {
		name := "statfs-root.out"
		remount := ""
		if ro {
			name, remount = "statfs-rootro.out", "mount -o remount,bind,ro root && "
		}
		top := t.TempDir()
		statfsTree(t, top, "amd64")
		script := `cd "$1" && shift && mount --bind root root && mount -t proc -o nosuid,nodev,noexec proc root/proc &&
mount -t devtmpfs -o nosuid,mode=755 devtmpfs root/dev && mount --bind host root/data && mount -o remount,bind,ro root/data &&
mount --bind host "root/sp ace" && ` + remount + `exec chroot root /statfs "$@"`
		out, err := exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh", top}, statfsPaths...)...).Output()
		if err != nil {
			t.Skipf("native run with mounts: %v", err)
		}
		exp, err := os.ReadFile("../../testdata/expected/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(exp) {
			t.Errorf("native run differs from expected/%s\n--- native\n%s--- expected\n%s", name, out, exp)
		}
	}
}
