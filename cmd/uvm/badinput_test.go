package main

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// oneClearLine fails unless stderr is a single line holding want (want
// "": at most one line), and no Go panic.
func oneClearLine(t *testing.T, what, stderr, want string) {
	t.Helper()
	n := strings.Count(stderr, "\n")
	if n > 1 || want != "" && (n != 1 || !strings.Contains(stderr, want)) || strings.Contains(stderr, "goroutine") {
		t.Errorf("%s: stderr %q, want one line with %q", what, stderr, want)
	}
}

// TestSysrootMissing: -L and UVM_LD_PREFIX name a directory that does not
// exist, or a file: one line and the shell's status for the execve error,
// never a run that quietly takes every path from the host (which the
// amd64 program, whose libraries the host has, would otherwise do).
func TestSysrootMissing(t *testing.T) {
	dir := t.TempDir()
	prog := "../../testdata/bin/amd64/dynhello"
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		env, flag string
		code      int
		want      string
	}{
		{"", filepath.Join(dir, "nope"), 127, "does not exist"},
		{filepath.Join(dir, "nope"), "", 127, "UVM_LD_PREFIX=" + filepath.Join(dir, "nope") + " does not exist"},
		{"", file, 126, "is not a directory"},
		{file, "", 126, "is not a directory"},
	} {
		t.Setenv("UVM_LD_PREFIX", c.env)
		args := []string{"run"}
		if c.flag != "" {
			args = append(args, "-L", c.flag)
		}
		var o, e bytes.Buffer
		if code := run(append(args, prog), nil, &o, &e); code != c.code || o.Len() != 0 {
			t.Errorf("%+v: status %d, stdout %q", c, code, o.String())
		}
		oneClearLine(t, c.want, e.String(), c.want)
	}
}

// TestLDPrefixEnv: UVM_LD_PREFIX is -L's default, as QEMU_LD_PREFIX is
// qemu-user's: an arm64 dynamic program finds its loader and libc there.
func TestLDPrefixEnv(t *testing.T) {
	root := arm64Sysroot
	if _, err := os.Stat(filepath.Join(root, "lib/ld-linux-aarch64.so.1")); err != nil {
		root = debianSysroot(t, "arm64")
	}
	want, err := os.ReadFile("../../testdata/expected/dynhello.out")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("UVM_LD_PREFIX", root)
	var o, e bytes.Buffer
	code := run([]string{"run", "--clean-env", "-E", "DYNHELLO=yes", "../../testdata/bin/arm64/dynhello", "a", "b"}, nil, &o, &e)
	if code != 3 || o.String() != string(want) {
		t.Errorf("status %d\n%s--- want\n%s--- stderr\n%s", code, o.String(), want, e.String())
	}
}

// TestDynamicInterpreterOtherArch: an arm64 program whose prefix holds an
// x86-64 loader under the arm64 loader's name.
func TestDynamicInterpreterOtherArch(t *testing.T) {
	x86, err := os.ReadFile("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Skip("no /lib64/ld-linux-x86-64.so.2")
	}
	pre := t.TempDir()
	os.MkdirAll(filepath.Join(pre, "lib"), 0o755)
	os.WriteFile(filepath.Join(pre, "lib/ld-linux-aarch64.so.1"), x86, 0o755)
	var o, e bytes.Buffer
	code := run([]string{"run", "-L", pre, "../../testdata/bin/arm64/dynhello"}, nil, &o, &e)
	if code != 126 {
		t.Errorf("status %d, want 126", code)
	}
	oneClearLine(t, "x86-64 loader", e.String(), "program interpreter /lib/ld-linux-aarch64.so.1 is for amd64")
}

// corruptDynamic writes a copy of the ELF library src to dst with its
// PT_DYNAMIC made PT_NULL (mode "none": the loader finds no dynamic
// section) or its dynamic entries overwritten with 0xff bytes ("garbage").
func corruptDynamic(t *testing.T, src, dst, mode string) {
	b, err := os.ReadFile(src)
	if err != nil {
		t.Skip(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil || f.Class != elf.ELFCLASS64 {
		t.Fatalf("%s: not a 64-bit ELF file (%v)", src, err)
	}
	phoff := f.ByteOrder.Uint64(b[0x20:])
	phentsize := uint64(f.ByteOrder.Uint16(b[0x36:]))
	done := false
	for i, p := range f.Progs {
		if p.Type != elf.PT_DYNAMIC {
			continue
		}
		switch mode {
		case "none":
			f.ByteOrder.PutUint32(b[phoff+uint64(i)*phentsize:], uint32(elf.PT_NULL))
		case "garbage":
			for j := p.Off; j < p.Off+p.Filesz; j++ {
				b[j] = 0xff
			}
		}
		done = true
	}
	if !done {
		t.Fatalf("%s has no PT_DYNAMIC", src)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestDynamicCorruptLibrary: the libc a dynamic program loads (through
// LD_LIBRARY_PATH) has a corrupt dynamic section. The guest's loader is
// what reads it, so uvm must end the way the real run does: with no
// dynamic section, ld.so's one line and 127; with garbage entries, the
// loader's own crash, reported in one line as a signal (139) like the
// host's. A uprobe on the corrupt library (uvm reads its symbols) changes
// neither. References: the native run (amd64) and qemu-aarch64 -L (arm64).
func TestDynamicCorruptLibrary(t *testing.T) {
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			var libc string
			var ref []string // the reference run, before the program
			var flags []string
			switch arch {
			case "amd64":
				if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
					t.Skip("the amd64 reference is this host's own run")
				}
				libc = "/lib/x86_64-linux-gnu/libc.so.6"
			default:
				root := arm64Sysroot
				libc = filepath.Join(root, "lib/libc.so.6")
				if _, err := os.Stat(libc); err != nil {
					root = debianSysroot(t, "arm64")
					libc = filepath.Join(root, "usr/lib/aarch64-linux-gnu/libc.so.6")
				}
				q := qemuUser("arm64")
				if q == "" {
					t.Skip("no qemu-aarch64 for the reference run")
				}
				ref, flags = []string{q, "-L", root}, []string{"-L", root}
			}
			prog, err := filepath.Abs("../../testdata/bin/" + arch + "/dynhello")
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				mode, want string
				probe      bool
			}{
				{"none", "libc.so.6: object file has no dynamic section", false},
				{"none", "libc.so.6: object file has no dynamic section", true},
				{"garbage", "", false},
				{"garbage", "", true},
			} {
				dir := t.TempDir()
				bad := filepath.Join(dir, "libc.so.6")
				corruptDynamic(t, libc, bad, c.mode)
				// qemu's own loader must not see the variable: -E
				// gives it to the guest only.
				argv, env := append(append([]string(nil), ref...), prog), []string{"LD_LIBRARY_PATH=" + dir}
				if len(ref) > 0 {
					argv, env = append(append([]string(nil), ref...), "-E", env[0], prog), nil
				}
				rout, rcode, err := runReference(argv, "", env...)
				if err != nil {
					t.Fatal(err)
				}
				args := append([]string{"run", "--clean-env", "-E", "LD_LIBRARY_PATH=" + dir}, flags...)
				if c.probe {
					args = append(args, "--uprobe", bad+":0x1000", "--probe-log", filepath.Join(dir, "log"))
				}
				var o, e bytes.Buffer
				code := run(append(args, prog), nil, &o, &e)
				what := c.mode
				if c.probe {
					what += " with a uprobe"
				}
				if code != rcode || o.String() != rout {
					t.Errorf("%s: status %d (reference %d), stdout %q (reference %q)", what, code, rcode, o.String(), rout)
				}
				stderr := e.String()
				if c.probe {
					// The probe table follows the one line.
					stderr, _, _ = strings.Cut(stderr, "probe ")
				}
				want := c.want
				if want == "" && rcode == 128+11 {
					want = "uvm: SIGSEGV" // the loader's crash, as the host's
				}
				oneClearLine(t, what, stderr, want)
			}
		})
	}
}
