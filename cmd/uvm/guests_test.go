package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The guest corpus lives in ../../testdata (see its README.md): each
// MANIFEST line is a program and its arguments; expected/NAME[.ARCH].out
// is its stdout, NAME.exit its exit status, NAME.stdin its input and
// NAME.env extra environment.

var guestArches = []string{"arm64", "amd64"}

type manifestEntry struct {
	name string
	args []string
}

func readManifest(t *testing.T) []manifestEntry {
	t.Helper()
	f, err := os.Open("../../testdata/MANIFEST")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []manifestEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		out = append(out, manifestEntry{fields[0], fields[1:]})
	}
	return out
}

// goGuests builds the Go guest programs for arch once per test binary.
var goGuests struct {
	sync.Mutex
	dir map[string]string
	err map[string]error
}

func goGuestDir(t testing.TB, arch string) string {
	t.Helper()
	goGuests.Lock()
	defer goGuests.Unlock()
	if goGuests.dir == nil {
		goGuests.dir, goGuests.err = map[string]string{}, map[string]error{}
	}
	if d, ok := goGuests.dir[arch]; ok {
		if goGuests.err[arch] != nil {
			t.Fatalf("building Go guests for %s: %v", arch, goGuests.err[arch])
		}
		return d
	}
	dir, err := os.MkdirTemp("", "uvm-goguests-"+arch)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool(), "build", "-o", dir+string(filepath.Separator), "./...")
	cmd.Dir = "../../testdata/go"
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%v\n%s", err, out)
	}
	goGuests.dir[arch], goGuests.err[arch] = dir, err
	if err != nil {
		t.Fatalf("building Go guests for %s: %v", arch, err)
	}
	return dir
}

// goTool is the go command that runs the tests: `go test` puts its own
// GOROOT/bin first in the test's PATH.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

func readOpt(name string) ([]byte, bool) {
	b, err := os.ReadFile(name)
	return b, err == nil
}

// runGuest runs a program under uvm with a clean environment, in
// deterministic mode (the project's default for tests: repeatable, and
// safe under -race since one goroutine runs guest code at a time) unless
// parallelMode is set.
func runGuest(t *testing.T, bin string, args []string, env []string, stdin []byte, dir string) (stdout, stderr string, code int) {
	return runGuestMode(t, false, bin, args, env, stdin, dir)
}

func runGuestMode(t *testing.T, parallelMode bool, bin string, args []string, env []string, stdin []byte, dir string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	argv := []string{"run", "--clean-env"}
	if !parallelMode {
		argv = append(argv, "--det")
	}
	for _, kv := range env {
		argv = append(argv, "-E", kv)
	}
	argv = append(argv, bin)
	argv = append(argv, args...)
	wd, _ := os.Getwd()
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
	}
	code = run(argv, bytes.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code
}

// TestGuests runs the corpus in deterministic mode, and again in parallel
// mode (one goroutine per guest thread) unless -short.
func TestGuests(t *testing.T) {
	t.Run("det", func(t *testing.T) { testGuests(t, false) })
	if testing.Short() || raceEnabled {
		return // parallel mode races on guest memory by design (see ARCHITECTURE.md)
	}
	t.Run("parallel", func(t *testing.T) { testGuests(t, true) })
}

// detOnlyGuests are corpus programs whose expected output holds only in
// deterministic mode.
var detOnlyGuests = map[string]string{
	"creds": "outside --det the guest is the host user, not the fixed unprivileged identity (TestCredsRoot covers root)",
}

func testGuests(t *testing.T, parallelMode bool) {
	entries := readManifest(t)
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			for _, ent := range entries {
				t.Run(ent.name, func(t *testing.T) {
					if why, ok := detOnlyGuests[ent.name]; ok && parallelMode {
						t.Skip(why)
					}
					var bin string
					if strings.HasPrefix(ent.name, "go-") {
						bin = filepath.Join(goGuestDir(t, arch), strings.TrimPrefix(ent.name, "go-"))
					} else {
						bin, _ = filepath.Abs(filepath.Join("../../testdata/bin", arch, ent.name))
					}
					exp := "../../testdata/expected/" + ent.name
					want, ok := readOpt(exp + "." + arch + ".out")
					if !ok {
						want, ok = readOpt(exp + ".out")
					}
					if !ok {
						t.Fatalf("no expected output for %s", ent.name)
					}
					wantCode := 0
					if b, ok := readOpt(exp + ".exit"); ok {
						wantCode, _ = strconv.Atoi(strings.TrimSpace(string(b)))
					}
					stdin, _ := readOpt(exp + ".stdin")
					var env []string
					if b, ok := readOpt(exp + ".env"); ok {
						env = strings.Split(strings.TrimSpace(string(b)), "\n")
					}
					args := make([]string, len(ent.args))
					for i, a := range ent.args {
						if a == "$TMP" {
							a = t.TempDir()
						}
						args[i] = a
					}
					out, errOut, code := runGuestMode(t, parallelMode, bin, args, env, stdin, "")
					if out != string(want) {
						t.Errorf("stdout differs\n--- got\n%s\n--- want\n%s\n--- stderr\n%s", out, want, errOut)
					}
					if code != wantCode {
						t.Errorf("exit status %d, want %d; stderr:\n%s", code, wantCode, errOut)
					}
				})
			}
		})
	}
}

// TestBadInput checks that bad programs give one clear line and a
// shell-like status, never a panic.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hello, err := os.ReadFile("../../testdata/bin/amd64/hello")
	if err != nil {
		t.Fatal(err)
	}
	wrongMachine := append([]byte(nil), hello...)
	wrongMachine[18] = 40 // EM_ARM
	class32 := append([]byte(nil), hello...)
	class32[4] = 1
	cases := []struct {
		name string
		path string
		code int
		msg  string
	}{
		{"missing", filepath.Join(dir, "nope"), 127, "no such file"},
		{"empty", write("empty", nil), 126, "not an ELF"},
		{"text", write("text", []byte("#!/bin/sh\necho hi\n")), 126, "not an ELF"},
		{"truncated", write("trunc", hello[:100]), 126, "malformed ELF"},
		{"wrong-machine", write("arm32", wrongMachine), 126, "unsupported"},
		{"class32", write("class32", class32), 126, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var o, e bytes.Buffer
			code := run([]string{"run", c.path}, nil, &o, &e)
			if code != c.code {
				t.Errorf("status %d, want %d (stderr %q)", code, c.code, e.String())
			}
			if !strings.Contains(e.String(), c.msg) || strings.Count(e.String(), "\n") != 1 {
				t.Errorf("stderr %q: want one line containing %q", e.String(), c.msg)
			}
		})
	}
	t.Run("usage", func(t *testing.T) {
		var o, e bytes.Buffer
		if code := run([]string{"run"}, nil, &o, &e); code != 2 {
			t.Errorf("status %d, want 2", code)
		}
		if code := run([]string{"frobnicate"}, nil, &o, &e); code != 2 {
			t.Errorf("status %d, want 2", code)
		}
		if code := run([]string{"run", "--no-such-flag", "x"}, nil, &o, &e); code != 2 {
			t.Errorf("status %d, want 2", code)
		}
	})
}
