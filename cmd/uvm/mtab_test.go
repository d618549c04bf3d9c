package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// mtabArgs are the mtab guest's getmntent paths (testdata/src/mtab.c).
var mtabArgs = []string{"/etc/mtab", "/etc/mtab-abs", "/etc/pself/mounts", "/etc/mtab2", "/data/link"}

// mtabBusybox is the busybox script of TestMtabBusybox: mount and df
// read /etc/mtab (getmntent) and statfs each mount; sources, disk types
// and super block options are the host's and left out.
const mtabBusybox = `/busybox mount | while read src on pt type t opts; do case $t in proc|devtmpfs) ;; *) t=disk src=-;; esac;` +
	` echo "mount $src $pt $t ${opts%%,*}"; done; /busybox df | while read fs blocks used avail pct pt; do echo "df $pt"; done`

// mtabTree is mountsTree with the mtab guest in the root and Debian's
// /etc/mtab (a link to ../proc/self/mounts) beside links to it by other
// ways, a dangling one into /proc, one to ../dev/null, and on the bound
// host directory one to /proc/self/mounts.
func mtabTree(t *testing.T, top, arch string) (string, []string) {
	root, binds := mountsTree(t, top, arch)
	bin, err := os.ReadFile("../../testdata/bin/" + arch + "/mtab")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "mtab"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"root/etc/mtab": "../proc/self/mounts", "root/etc/mtab-abs": "/proc/self/mounts",
		"root/etc/pself": "../proc/self", "root/etc/mtab2": "mtab", "root/etc/dangling": "../proc/nonexistent",
		"root/etc/null": "../dev/null", "host/link": "/proc/self/mounts"} {
		if err := os.Symlink(target, filepath.Join(top, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, binds
}

// TestMtab: under --root with binds, /etc/mtab and the other links into
// uvm's /proc and /dev (relative, absolute, through a directory link, a
// chain, from a bind) lead there for getmntent, stat, statfs, readlink,
// access and open, as in a real chroot with the same mounts
// (TestMtabNative); /proc/PID/mountstats is Linux's format.
func TestMtab(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--root needs Linux")
	}
	exp, err := os.ReadFile("../../testdata/expected/mtab-root.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		for _, det := range []bool{true, false} {
			root, binds := mtabTree(t, t.TempDir(), arch)
			args := []string{"run"}
			if det {
				args = append(args, "--det")
			}
			args = append(append(append(append(args, "--root", root), binds...), "/mtab"), mtabArgs...)
			var o, e bytes.Buffer
			if code := run(args, nil, &o, &e); code != 0 || o.String() != string(exp) {
				t.Errorf("%s det=%v: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, det, code, o.String(), exp, e.String())
			}
		}
	}
}

// TestMtabBusybox: busybox mount and df under --root read the mount
// table through /etc/mtab and statfs every mount, as in a real chroot
// (TestMtabNative checks expected/mtab-busybox.out against one). Skipped
// without scripts/fetch-busybox's binaries.
func TestMtabBusybox(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--root needs Linux")
	}
	exp, err := os.ReadFile("../../testdata/expected/mtab-busybox.out")
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	for _, arch := range guestArches {
		bb, err := os.ReadFile(filepath.Join("../../testdata/shell/bin", arch, "busybox"))
		if err != nil {
			continue
		}
		ran = true
		root, binds := mtabTree(t, t.TempDir(), arch)
		if err := os.WriteFile(filepath.Join(root, "busybox"), bb, 0o755); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{"run", "--det", "--root", root}, binds...), "/busybox", "sh", "-c", mtabBusybox)
		var o, e bytes.Buffer
		if code := run(args, nil, &o, &e); code != 0 || o.String() != string(exp) {
			t.Errorf("%s: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, code, o.String(), exp, e.String())
		}
	}
	if !ran {
		t.Skip("no busybox: run scripts/fetch-busybox")
	}
}

// TestMtabNative checks expected/mtab-root.out (and, with busybox,
// mtab-busybox.out) against the host kernel: the amd64 guest under
// chroot(2) in a mount namespace with the mounts of uvm's table.
func TestMtabNative(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs an x86-64 Linux host")
	}
	if exec.Command("unshare", "-m", "true").Run() != nil {
		t.Skip("unshare -m not permitted")
	}
	native := func(top string, cmd ...string) []byte {
		script := `cd "$1" && shift && mount --bind root root && mount -t proc -o nosuid,nodev,noexec proc root/proc &&
mount -t devtmpfs -o nosuid,mode=755 devtmpfs root/dev && mount --bind host root/data && mount -o remount,bind,ro root/data &&
mount --bind host "root/sp ace" && exec chroot root "$@"`
		out, err := exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh", top}, cmd...)...).Output()
		if err != nil {
			t.Skipf("native run with mounts: %v", err)
		}
		return out
	}
	check := func(name string, out []byte) {
		exp, err := os.ReadFile("../../testdata/expected/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(exp) {
			t.Errorf("native run differs from expected/%s\n--- native\n%s--- expected\n%s", name, out, exp)
		}
	}
	top := t.TempDir()
	mtabTree(t, top, "amd64")
	check("mtab-root.out", native(top, append([]string{"/mtab"}, mtabArgs...)...))
	if bb, err := os.ReadFile("../../testdata/shell/bin/amd64/busybox"); err == nil {
		if err := os.WriteFile(filepath.Join(top, "root/busybox"), bb, 0o755); err != nil {
			t.Fatal(err)
		}
		check("mtab-busybox.out", native(top, "/busybox", "sh", "-c", mtabBusybox))
	}
}
