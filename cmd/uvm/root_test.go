package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// makeJail builds the escape guest's root (see testdata/src/escape.c): a
// file inside, symlinks pointing out, and a file outside the root.
func makeJail(t *testing.T, arch string) string {
	top := t.TempDir()
	jail := filepath.Join(top, "jail")
	bin, err := os.ReadFile("../../testdata/bin/" + arch + "/escape")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(jail, "bin"), 0o755))
	must(os.WriteFile(filepath.Join(jail, "bin", "escape"), bin, 0o755))
	must(os.WriteFile(filepath.Join(top, "outside.txt"), []byte("OUTSIDE\n"), 0o644))
	must(os.WriteFile(filepath.Join(jail, "inside.txt"), []byte("inside\n"), 0o644))
	must(os.Symlink("/outside.txt", filepath.Join(jail, "abs")))
	must(os.Symlink("../../../../../outside.txt", filepath.Join(jail, "up")))
	must(os.Symlink("/..", filepath.Join(jail, "dir")))
	return jail
}

// TestRootConfinement runs the escape attempts under --root and --root
// DIR:ro on both arches and compares with the real kernel's answers (a
// native run under chroot(2), and a read-only bind mount for :ro,
// recorded in testdata/expected/escape*.out): "..", absolute and relative
// symlinks, hard links, renames, creation through a dangling symlink, a
// symlink-swapping race, execve of a host path. The file outside the root
// must be untouched.
func TestRootConfinement(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--root needs Linux (openat2)")
	}
	for _, arch := range guestArches {
		for _, ro := range []bool{false, true} {
			jail := makeJail(t, arch)
			args := []string{"run", "--det", "--root", jail, "/bin/escape"}
			want := "../../testdata/expected/escape.out"
			if ro {
				args = []string{"run", "--det", "--root", jail + ":ro", "/bin/escape", "ro"}
				want = "../../testdata/expected/escape-ro.out"
			}
			var o, e bytes.Buffer
			code := run(args, nil, &o, &e)
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if code != 0 || o.String() != string(exp) {
				t.Errorf("%s ro=%v: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, ro, code, o.String(), exp, e.String())
			}
			if b, _ := os.ReadFile(filepath.Join(filepath.Dir(jail), "outside.txt")); string(b) != "OUTSIDE\n" {
				t.Errorf("%s ro=%v: the file outside the root changed: %q", arch, ro, b)
			}
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"run", "--root", "/nonexistent-root", "/bin/x"}, nil, &o, &e); code == 0 {
		t.Errorf("a missing root must fail, got 0")
	}
}

// Without --root the guest sees the host's files, but never the host's
// per-process /proc (uvm's own memory, environment and descriptors), not
// even through paths whose meaning only the host kernel's resolution knows:
// guest-made symlinks to /proc/self/mem, to /proc, to / (testdata/src/procsym.c).
func TestProcSymlinkEscape(t *testing.T) {
	if _, err := os.Stat("/proc/self/mem"); err != nil {
		t.Skip("no host procfs")
	}
	want, err := os.ReadFile("../../testdata/expected/procsym.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		for _, det := range []bool{false, true} {
			out, stderr, code := runUVM(t, det, nil, "../../testdata/bin/"+arch+"/procsym", t.TempDir())
			if code != 0 || out != string(want) {
				t.Errorf("%s det=%v: status %d, output:\n%s\nwant:\n%s\nstderr: %s", arch, det, code, out, want, stderr)
			}
		}
		// A thread swapping the symlink while another opens it: only the
		// parallel scheduler runs them at the same time.
		out, stderr, code := runUVM(t, false, nil, "../../testdata/bin/"+arch+"/procsym", t.TempDir(), "--race")
		if code != 0 || out != "race: no open reached the host's /proc/self\n" {
			t.Errorf("%s race: status %d, %q, stderr %s", arch, code, out, stderr)
		}
	}
}
