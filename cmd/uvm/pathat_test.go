package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestRootEscapeAt runs testdata/src/escape_at.c under --root on both
// arches, in deterministic and parallel mode, and compares with the real
// kernel's answers (a native run under chroot(2), recorded in
// testdata/expected/escape_at.out): ".." from directory descriptors and
// the cwd, symlinks made relative to a descriptor, a descriptor whose
// directory was renamed, the *at calls that create, link, rename and
// remove, a chain deeper than PATH_MAX, and threads moving the directory
// or swapping a symlink while another climbs out. The file outside the
// root must be untouched.
func TestRootEscapeAt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--root needs Linux (openat2)")
	}
	want, err := os.ReadFile("../../testdata/expected/escape_at.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		for _, det := range []bool{true, false} {
			jail := makeJail(t, arch)
			bin, err := os.ReadFile("../../testdata/bin/" + arch + "/escape_at")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(jail, "bin", "escape_at"), bin, 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "--root", jail, "/bin/escape_at"}
			if det {
				args = append([]string{"run", "--det"}, args[1:]...)
			}
			var o, e bytes.Buffer
			code := run(args, nil, &o, &e)
			if code != 0 || o.String() != string(want) {
				t.Errorf("%s det=%v: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, det, code, o.String(), want, e.String())
			}
			if b, _ := os.ReadFile(filepath.Join(filepath.Dir(jail), "outside.txt")); string(b) != "OUTSIDE\n" {
				t.Errorf("%s det=%v: the file outside the root changed: %q", arch, det, b)
			}
		}
	}
}

// TestPathAtRoot runs testdata/src/pathat.c (also in MANIFEST, unconfined)
// confined by --root, where every relative lookup goes through the
// in-root resolution: renamed parents of open directories, "dir/." and
// ".." after a symlink, getcwd, a chain deeper than PATH_MAX. The output
// must be the native run's (expected/pathat.out; a chroot(2) run prints
// the same).
func TestPathAtRoot(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--root needs Linux (openat2)")
	}
	want, err := os.ReadFile("../../testdata/expected/pathat.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		root := t.TempDir()
		bin, err := os.ReadFile("../../testdata/bin/" + arch + "/pathat")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(root, "w"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "bin", "pathat"), bin, 0o755); err != nil {
			t.Fatal(err)
		}
		var o, e bytes.Buffer
		code := run([]string{"run", "--det", "--root", root, "/bin/pathat", "/w"}, nil, &o, &e)
		if code != 0 || o.String() != string(want) {
			t.Errorf("%s: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, code, o.String(), want, e.String())
		}
	}
}

// TestRootEscapeStdinDir hands the confined guest a directory outside its
// root as stdin (escape_at stdin): natively, under chroot(2), openat and
// fchdir on it are a way out; under --root uvm must look nothing up from
// a directory outside the root, so no attempt reads the outside file.
func TestRootEscapeStdinDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--root needs Linux (openat2)")
	}
	for _, arch := range guestArches {
		jail := makeJail(t, arch)
		bin, err := os.ReadFile("../../testdata/bin/" + arch + "/escape_at")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(jail, "bin", "escape_at"), bin, 0o755); err != nil {
			t.Fatal(err)
		}
		dir, err := os.Open(filepath.Dir(jail))
		if err != nil {
			t.Fatal(err)
		}
		var o, e bytes.Buffer
		code := run([]string{"run", "--det", "--root", jail, "/bin/escape_at", "stdin"}, dir, &o, &e)
		dir.Close()
		want := "openat(stdin, outside.txt): ENOENT\nopenat(stdin, jail/inside.txt): ENOENT\nfchdir stdin: ENOENT\n" +
			"openat(cwd, outside.txt): ENOENT\nopenat(cwd, inside.txt): \"inside\"\n"
		if code != 0 || o.String() != want {
			t.Errorf("%s: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", arch, code, o.String(), want, e.String())
		}
	}
}
