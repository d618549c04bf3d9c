package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// mountsTree builds the mounts guest's root (testdata/src/mounts.c) under
// top: top/root with its mount points, top/host to bind. It returns the
// root's path and the --bind flags (a read-only bind and one whose mount
// point has a space in it).
func mountsTree(t *testing.T, top, arch string) (string, []string) {
	bin, err := os.ReadFile("../../testdata/bin/" + arch + "/mounts")
	if err != nil {
		t.Fatal(err)
	}
	root, host := filepath.Join(top, "root"), filepath.Join(top, "host")
	for _, d := range []string{"root/data", "root/sp ace", "root/proc", "root/dev", "host"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "mounts"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, []string{"--bind", host + ":/data:ro", "--bind", host + ":/sp ace"}
}

// TestMounts: under --root with two binds the guest's mount table lists
// /, /proc, /dev and the binds (ro, \040 escape, parents) as a real
// kernel's does in a chroot with the same mounts (TestMountsNative
// checks expected/mounts-root.out against one).
func TestMounts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--bind needs Linux")
	}
	exp, err := os.ReadFile("../../testdata/expected/mounts-root.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		for _, det := range []bool{true, false} {
			root, binds := mountsTree(t, t.TempDir(), arch)
			args := []string{"run"}
			if det {
				args = append(args, "--det")
			}
			args = append(append(append(args, "--root", root), binds...), "/mounts")
			var o, e bytes.Buffer
			if code := run(args, nil, &o, &e); code != 0 || o.String() != string(exp) {
				t.Errorf("%s det=%v: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, det, code, o.String(), exp, e.String())
			}
		}
	}
}

// TestMountsNative checks expected/mounts-root.out against the host
// kernel: the amd64 guest under chroot(2) in a mount namespace with the
// root bound onto itself, proc and devtmpfs mounted, then the binds
// (skipped where unshare -m or the mounts are not permitted).
func TestMountsNative(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs an x86-64 Linux host")
	}
	if exec.Command("unshare", "-m", "true").Run() != nil {
		t.Skip("unshare -m not permitted")
	}
	top := t.TempDir()
	mountsTree(t, top, "amd64")
	script := `cd "$1" && mount --bind root root && mount -t proc proc root/proc && mount -t devtmpfs devtmpfs root/dev &&
mount --bind host root/data && mount -o remount,bind,ro root/data && mount --bind host "root/sp ace" && exec chroot root /mounts`
	out, err := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", top).Output()
	if err != nil {
		t.Skipf("native run with mounts: %v", err)
	}
	exp, err := os.ReadFile("../../testdata/expected/mounts-root.out")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(exp) {
		t.Errorf("native run differs from expected/mounts-root.out\n--- native\n%s--- expected\n%s", out, exp)
	}
}
