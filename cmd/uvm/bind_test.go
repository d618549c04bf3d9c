package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// bindTree builds the bind guest's tree under top (see testdata/src/bind.c):
// the guest's tree top/jail with its mount points, the host directories
// and file bound there, and files outside that must stay unreachable.
// base is the guest's path of top/jail ("" under --root). It returns the
// --bind flags.
func bindTree(t *testing.T, top, arch, base string) []string {
	bin, err := os.ReadFile("../../testdata/bin/" + arch + "/bind")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	p := func(s string) string { return filepath.Join(top, s) }
	for _, d := range []string{"jail/bin", "jail/etc", "jail/data", "jail/ro", "hostrw/sub/nest", "hostnest", "hostro", "etc"} {
		must(os.MkdirAll(p(d), 0o755))
	}
	files := map[string]string{"jail/etc/secret.txt": "jail-etc\n", "etc/secret.txt": "ESCAPED\n", "jail/cfg.txt": "",
		"hostrw/file.txt": "rw-data\n", "hostro/file.txt": "ro-data\n", "hostcfg.txt": "cfg\n", "outside.txt": "OUTSIDE\n", "hostnest/n.txt": "nested\n"}
	for name, data := range files {
		must(os.WriteFile(p(name), []byte(data), 0o644))
	}
	must(os.WriteFile(p("jail/bin/bind"), bin, 0o755))
	must(os.Symlink("../outside.txt", p("hostrw/up")))
	must(os.Symlink(base+"/etc/secret.txt", p("hostrw/abs")))
	must(os.Symlink("..", p("hostrw/top")))
	must(os.Symlink(base+"/data/file.txt", p("hostro/tow")))
	must(os.Symlink("../../file.txt", p("hostnest/up2")))
	g := func(s string) string { return base + s }
	return []string{"--bind", p("hostrw") + ":" + g("/data"), "--bind", p("hostro") + ":" + g("/ro") + ":ro",
		"--bind", p("hostcfg.txt") + ":" + g("/cfg.txt") + ":ro", "--bind", p("hostnest") + ":" + g("/data/sub/nest")}
}

// checkBindHost checks what the bind guest's run left on the host: its
// writes in the read-write bind, nothing else changed.
func checkBindHost(t *testing.T, top, what string) {
	t.Helper()
	want := map[string]string{"hostrw/sub/moved.txt": "written\n", "hostrw/file.txt": "rw-data\n", "hostro/file.txt": "ro-data\n",
		"hostcfg.txt": "cfg\n", "outside.txt": "OUTSIDE\n", "etc/secret.txt": "ESCAPED\n", "jail/etc/secret.txt": "jail-etc\n",
		"hostnest/n.txt": "nested\n"}
	for name, data := range want {
		if b, err := os.ReadFile(filepath.Join(top, name)); err != nil || string(b) != data {
			t.Errorf("%s: host %s = %q, %v; want %q", what, name, b, err, data)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(top, "hostro"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "file.txt tow" {
		t.Errorf("%s: the read-only bind's host directory holds %v", what, names)
	}
	if fi, err := os.Stat(filepath.Join(top, "hostro/file.txt")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("%s: the read-only bind's file changed mode: %v %v", what, fi, err)
	}
}

// TestBind runs the bind guest with --root and three binds (read-write
// directory, read-only directory, read-only file), and without --root
// with the same binds over the host's tree, on both arches, in --det and
// parallel mode (the symlink race then runs on two host threads). The expected
// output is the real kernel's: a native run under chroot(2) with real
// bind mounts in a mount namespace (TestBindNative).
func TestBind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--bind needs Linux")
	}
	exp, err := os.ReadFile("../../testdata/expected/bind.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		for i := 0; i < 4; i++ {
			confined, det := i&1 == 0, i&2 == 0
			if !det && raceEnabled {
				// Guest threads share guest memory without host
				// synchronisation, which the race detector reports.
				continue
			}
			top := t.TempDir()
			jail := filepath.Join(top, "jail")
			args := []string{"run"}
			if det {
				args = append(args, "--det")
			}
			if confined {
				args = append(append(args, "--root", jail), bindTree(t, top, arch, "")...)
				args = append(args, "/bin/bind")
			} else {
				args = append(args, bindTree(t, top, arch, jail)...)
				args = append(args, filepath.Join(jail, "bin/bind"), jail)
			}
			var o, e bytes.Buffer
			code := run(args, nil, &o, &e)
			what := arch + map[bool]string{true: " --root", false: " unconfined"}[confined] + map[bool]string{true: " --det", false: " parallel"}[det]
			if code != 0 || o.String() != string(exp) {
				t.Errorf("%s: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", what, code, o.String(), exp, e.String())
			}
			checkBindHost(t, top, what)
		}
	}
}

// TestBindNative checks expected/bind.out against the host kernel: the
// amd64 guest run natively under chroot(2) with real bind mounts, in a
// user and mount namespace (skipped where unshare -rm is not allowed).
func TestBindNative(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs an x86-64 Linux host")
	}
	if exec.Command("unshare", "-rm", "true").Run() != nil {
		t.Skip("unshare -rm (user and mount namespaces) not available")
	}
	top := t.TempDir()
	bindTree(t, top, "amd64", "")
	script := `cd "$1" && mount --bind hostrw jail/data && mount --bind hostro jail/ro && mount -o remount,bind,ro jail/ro &&
mount --bind hostcfg.txt jail/cfg.txt && mount -o remount,bind,ro jail/cfg.txt && mount --bind hostnest jail/data/sub/nest &&
exec chroot jail /bin/bind`
	out, err := exec.Command("unshare", "-rm", "sh", "-c", script, "sh", top).Output()
	if err != nil {
		t.Skipf("native run with bind mounts: %v", err)
	}
	exp, err := os.ReadFile("../../testdata/expected/bind.out")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(exp) {
		t.Errorf("native run differs from expected/bind.out\n--- native\n%s--- expected\n%s", out, exp)
	}
	checkBindHost(t, top, "native")
}

// TestBindFlags: a bad --bind value is one clear error and exit status 2,
// never a panic; a mount point the guest's tree lacks fails the run.
func TestBindFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ spec, want string }{
		{"nocolon", "want HOST:GUEST"},
		{dir + ":relative/guest", "not an absolute path"},
		{dir + "/missing:/g", "HOST"},
		{":/g", "empty HOST"},
		{dir + ":", "not an absolute path"},
	} {
		var o, e bytes.Buffer
		code := run([]string{"run", "--bind", c.spec, "../../testdata/bin/amd64/hello"}, nil, &o, &e)
		msg := e.String()
		if code != 2 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") != 1 || strings.Contains(msg, "panic") {
			t.Errorf("--bind %q: status %d, stderr %q; want 2 and one line with %q", c.spec, code, msg, c.want)
		}
	}
	var lo, le bytes.Buffer
	if code := run([]string{"run", "-L", dir, "--bind", dir + ":/g", "../../testdata/bin/amd64/hello"}, nil, &lo, &le); code != 2 || !strings.Contains(le.String(), "-L") {
		t.Errorf("--bind with -L: status %d, stderr %q; want 2", code, le.String())
	}
	hello, err := os.ReadFile("../../testdata/bin/amd64/hello")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello"), hello, 0o755); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	code := run([]string{"run", "--root", dir, "--bind", dir + ":/no/such/dir", "/hello"}, nil, &o, &e)
	if code == 0 || code == 2 || !strings.Contains(e.String(), "mount point") {
		t.Errorf("missing mount point: status %d, stderr %q", code, e.String())
	}
}

// bindCorpusSkip are corpus programs whose expected output does not hold
// with the corpus bound into an empty root.
var bindCorpusSkip = map[string]string{
	"hostile": "execve /dev/zero: the empty root has no /dev/zero file (ENOENT, as under --root alone)",
	"pathat":  "stat of a removed cwd: relative lookups from a removed directory fail (ENOENT) with --bind",
}

// TestGuestsBind runs the C corpus from a read-only bind of its binaries
// (/bin) into an empty root, with its temporary directory bound at /tmp:
// every program (execve of its siblings, file I/O, renames, FIFOs,
// descriptor-relative lookups) gives its expected output through binds.
func TestGuestsBind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--bind needs Linux")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	for _, arch := range guestArches {
		bindir, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch))
		for _, ent := range readManifest(t) {
			if strings.HasPrefix(ent.name, "go-") {
				continue
			}
			t.Run(arch+"/"+ent.name, func(t *testing.T) {
				if why, ok := bindCorpusSkip[ent.name]; ok {
					t.Skip(why)
				}
				exp := "../../testdata/expected/" + ent.name
				want, ok := readOpt(exp + "." + arch + ".out")
				if !ok {
					want, _ = readOpt(exp + ".out")
				}
				wantCode := 0
				if b, ok := readOpt(exp + ".exit"); ok {
					fmt.Sscan(string(b), &wantCode)
				}
				stdin, _ := readOpt(exp + ".stdin")
				root := t.TempDir()
				for _, d := range []string{"bin", "tmp"} {
					if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				argv := []string{"run", "--det", "--clean-env", "--root", root,
					"--bind", bindir + ":/bin:ro", "--bind", t.TempDir() + ":/tmp"}
				if b, ok := readOpt(exp + ".env"); ok {
					for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
						argv = append(argv, "-E", kv)
					}
				}
				argv = append(argv, "/bin/"+ent.name)
				for _, a := range ent.args {
					argv = append(argv, strings.ReplaceAll(a, "$TMP", "/tmp"))
				}
				var o, e bytes.Buffer
				code := run(argv, bytes.NewReader(stdin), &o, &e)
				if o.String() != string(want) || code != wantCode {
					t.Errorf("status %d (want %d)\n--- got\n%s--- want\n%s--- stderr\n%s", code, wantCode, o.String(), want, e.String())
				}
			})
		}
	}
}
