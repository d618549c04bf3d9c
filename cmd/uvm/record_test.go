package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tests of uvm run --det --record DIR and uvm replay DIR (record.go): the
// replay of a moved recording, with the original input file gone,
// repeats the run (stdout, exit status, trace hash) and writes nothing
// outside its scratch root; a changed recording is refused; the limit
// holds; a replay can be debugged with gdb.

// recordRun runs uvm with args and stdin; it returns stdout, stderr, the
// status and the trace hash ("" without one).
func recordRun(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int, hash string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, strings.NewReader(stdin), &o, &e)
	if m := traceHashRE.FindStringSubmatch(e.String()); m != nil {
		hash = m[1]
	}
	return o.String(), e.String(), code, hash
}

// recordRecread records recread reading input (a file it is given the
// path of) and stdin, and writing a copy of both to out; it returns the
// recording's directory and the run's results.
func recordRecread(t *testing.T, arch, dir string) (rec, stdout string, code int, hash, input, out string) {
	t.Helper()
	input, out = filepath.Join(dir, "in", "input.txt"), filepath.Join(dir, "scratch", "out")
	for _, d := range []string{filepath.Dir(input), filepath.Dir(out)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(input, []byte("the contents of the input file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec = filepath.Join(dir, "rec")
	bin, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "bin", arch, "recread"))
	stdout, stderr, code, hash := recordRun(t, "bytes from stdin", "run", "--clean-env", "-E", "V=1", "--det", "--seed", "7",
		"--trace-hash", "--record", rec, bin, input, out)
	if hash == "" || !strings.Contains(stdout, "stdin: bytes from stdin") || !strings.Contains(stdout, "file 31 bytes") {
		t.Fatalf("recorded run: status %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	return rec, stdout, code, hash, input, out
}

func TestRecordReplay(t *testing.T) {
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			dir := t.TempDir()
			rec, stdout, code, hash, input, out := recordRecread(t, arch, dir)
			// Ship it: another directory, the input file and the
			// output gone.
			moved := filepath.Join(t.TempDir(), "shipped")
			if err := os.Rename(rec, moved); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{input, out} {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
			before := treeOf(t, moved)
			o, e, c, h := recordRun(t, "not the recorded stdin", "replay", moved, "--trace-hash")
			if o != stdout || c != code || h != hash || !strings.Contains(e, "replay matches the recording") {
				t.Errorf("replay: status %d hash %s stdout %q; recorded: status %d hash %s stdout %q\nstderr:\n%s", c, h, o, code, hash, stdout, e)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("the replay wrote %s on the host", out)
			}
			if _, err := os.Stat(input); err == nil {
				t.Errorf("the replay made %s on the host", input)
			}
			if after := treeOf(t, moved); after != before {
				t.Errorf("the replay changed the recording:\n%s\n--- before\n%s", after, before)
			}
		})
	}
}

// TestRecordReplayDynamic: the program's interpreter and libraries come
// from the recording (the replay's root holds nothing else).
func TestRecordReplayDynamic(t *testing.T) {
	dynamicSetup(t, "amd64")
	rec := filepath.Join(t.TempDir(), "rec")
	bin, _ := filepath.Abs("../../testdata/bin/amd64/dynhello")
	stdout, e, code, hash := recordRun(t, "", "run", "--clean-env", "--det", "--trace-hash", "--record", rec, bin, "a")
	if hash == "" || code != 3 {
		t.Fatalf("recorded run: status %d, stderr:\n%s", code, e)
	}
	m := recordedManifest(t, rec)
	have := map[string]bool{}
	for _, f := range m.Files {
		if f.Blob != "" {
			have[filepath.Base(f.Path)] = true
		}
	}
	for _, n := range []string{"dynhello", "ld-linux-x86-64.so.2", "libc.so.6"} {
		if !have[n] {
			t.Errorf("the recording lacks the contents of %s: %+v", n, m.Files)
		}
	}
	o, e, c, h := recordRun(t, "", "replay", rec, "--trace-hash")
	if o != stdout || c != code || h != hash {
		t.Errorf("replay: status %d hash %s stdout %q; recorded: status %d hash %s stdout %q\nstderr:\n%s", c, h, o, code, hash, stdout, e)
	}
}

// TestRecordTampered: every part of a recording is checked.
func TestRecordTampered(t *testing.T) {
	rec, _, _, _, _, _ := recordRecread(t, "amd64", t.TempDir())
	m := recordedManifest(t, rec)
	var blob string
	for _, f := range m.Files {
		if strings.HasSuffix(f.Path, "/input.txt") {
			blob = f.Blob
		}
	}
	if blob == "" {
		t.Fatalf("input.txt's contents are not recorded: %+v", m.Files)
	}
	cases := []struct {
		name   string
		change func(dir string)
		want   string
	}{
		{"file contents", func(dir string) {
			os.WriteFile(filepath.Join(dir, "files", blob), []byte("the contents of the input file\n"[:30]+"X"), 0o644)
		}, "do not match their SHA-256"},
		{"stdin", func(dir string) { os.WriteFile(filepath.Join(dir, "stdin"), []byte("bytes from stdiN"), 0o644) }, "stdin does not match"},
		{"exit status", func(dir string) { editManifest(t, dir, func(m *recordManifest) { m.Exit++ }) }, "diverged"},
		{"trace hash", func(dir string) {
			editManifest(t, dir, func(m *recordManifest) { m.TraceHash = strings.Repeat("0", 64) })
		}, "diverged"},
		{"argv", func(dir string) {
			editManifest(t, dir, func(m *recordManifest) { m.Args[0] += ".missing" })
		}, "diverged"},
		{"escaping path", func(dir string) {
			editManifest(t, dir, func(m *recordManifest) { m.Files[0].Path = "/../../etc/x" })
		}, "bad recorded path"},
		{"output flag", func(dir string) {
			editManifest(t, dir, func(m *recordManifest) { m.Flags = append(m.Flags, "-trace="+filepath.Join(dir, "t")) })
		}, "not one a recording holds"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "copy")
			if err := os.CopyFS(dir, os.DirFS(rec)); err != nil {
				t.Fatal(err)
			}
			c.change(dir)
			_, e, code, _ := recordRun(t, "", "replay", dir)
			if code != replayDiverged || !strings.Contains(e, c.want) {
				t.Errorf("status %d (want %d), stderr lacks %q:\n%s", code, replayDiverged, c.want, e)
			}
		})
	}
}

// TestRecordLimit: a recording past --record-limit fails clearly and
// leaves no manifest; so does --record without --det or with --root.
func TestRecordLimit(t *testing.T) {
	dir := t.TempDir()
	bin, _ := filepath.Abs("../../testdata/bin/amd64/recread")
	rec := filepath.Join(dir, "rec")
	_, e, code, _ := recordRun(t, "", "run", "--clean-env", "--det", "--record", rec, "--record-limit", "64K", bin)
	if code != 2 || !strings.Contains(e, "exceed the recording limit of 65536 bytes") {
		t.Errorf("over the limit: status %d, stderr:\n%s", code, e)
	}
	if _, err := os.Stat(filepath.Join(rec, "manifest.json")); err == nil {
		t.Error("a recording over the limit has a manifest")
	}
	for _, args := range [][]string{
		{"run", "--record", filepath.Join(dir, "r1"), bin},
		{"run", "--det", "--root", dir, "--record", filepath.Join(dir, "r2"), bin},
		{"run", "--det", "--record", filepath.Join(dir, "r3"), "--record-limit", "0", bin},
	} {
		if _, e, code, _ := recordRun(t, "", args...); code != 2 || !strings.Contains(e, "--record") {
			t.Errorf("%v: status %d, stderr:\n%s", args, code, e)
		}
	}
}

// TestReplayGDB: uvm replay DIR -g debugs the recorded run, reverse
// execution included, and the run still matches the recording.
func TestReplayGDB(t *testing.T) {
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) { testReplayGDB(t, arch) })
	}
}

func testReplayGDB(t *testing.T, arch string) {
	gdb := gdbFor(t, arch)
	rec, stdout, code, hash, _, _ := recordRecread(t, arch, t.TempDir())
	sock := filepath.Join(t.TempDir(), "gdb.sock")
	var o, e lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"replay", rec, "--trace-hash", "-g", "unix:" + sock, "--gdb-wait"}, strings.NewReader(""), &o, &e)
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i == 500 {
			t.Fatalf("uvm replay did not listen on %s; stderr:\n%s", sock, e.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	bin := filepath.Join("..", "..", "testdata", "bin", arch, "recread")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g, _ := exec.CommandContext(ctx, gdb, "-q", "-batch", "-nx", "-ex", "set pagination off", "-ex", "set confirm off",
		"-ex", "file "+bin, "-ex", "target remote "+sock, "-ex", "break slurp", "-ex", "continue", "-ex", "stepi", "-ex", "set $a = $pc", "-ex", "stepi",
		"-ex", "reverse-stepi", "-ex", "printf \"back=%d\\n\", $pc == $a", "-ex", "delete", "-ex", "continue").CombinedOutput()
	var c int
	select {
	case c = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("uvm replay did not exit; gdb:\n%s\nstderr:\n%s", g, e.String())
	}
	out := string(g)
	for _, s := range []string{"Breakpoint 1, ", "back=1", "exited with code"} {
		if !strings.Contains(out, s) {
			t.Errorf("gdb output lacks %q:\n%s\nuvm stderr:\n%s", s, out, e.String())
		}
	}
	m := traceHashRE.FindStringSubmatch(e.String())
	if c != code || o.String() != stdout || m == nil || m[1] != hash || !strings.Contains(e.String(), "replay matches the recording") {
		t.Errorf("replay under gdb: status %d stdout %q hash %v; recorded: %d %q %s\nstderr:\n%s", c, o.String(), m, code, stdout, hash, e.String())
	}
}

func recordedManifest(t *testing.T, dir string) *recordManifest {
	t.Helper()
	j, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m recordManifest
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func editManifest(t *testing.T, dir string, edit func(*recordManifest)) {
	t.Helper()
	m := recordedManifest(t, dir)
	edit(m)
	j, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), j, 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeOf lists dir's files with their sizes and modes.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n", p, fi.Mode(), fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRecordStdinFile: stdin redirected from a regular file is replayed
// as a copy of that file, from the offset it was at.
func TestRecordStdinFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "stdin.txt")
	if err := os.WriteFile(in, []byte("skip:the rest is read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(5, 0); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "rec")
	bin, _ := filepath.Abs("../../testdata/bin/arm64/recread")
	var o, e bytes.Buffer
	code := run([]string{"run", "--clean-env", "--det", "--trace-hash", "--record", rec, bin}, f, &o, &e)
	m := traceHashRE.FindStringSubmatch(e.String())
	if m == nil || !strings.Contains(o.String(), "stdin: the rest is read") {
		t.Fatalf("recorded run: status %d, stdout %q, stderr:\n%s", code, o.String(), e.String())
	}
	if sf := recordedManifest(t, rec).StdinFile; sf == nil || sf.Offset != 5 || sf.Size != 22 {
		t.Errorf("stdin file recorded as %+v", sf)
	}
	os.Remove(in)
	stdout, stderr, c, h := recordRun(t, "", "replay", rec, "--trace-hash")
	if stdout != o.String() || c != code || h != m[1] {
		t.Errorf("replay: status %d hash %s stdout %q; recorded: %d %s %q\nstderr:\n%s", c, h, stdout, code, m[1], o.String(), stderr)
	}
}

// TestRecordReplayCorpus: corpus programs that change files (fileio: in a
// directory the replay must hold as it was), run threads, fork, exec
// themselves, and read /proc/self/maps (which names the program by its
// guest path under the replay's --root) and set a symlink's own times
// (memfd_file: utimensat AT_SYMLINK_NOFOLLOW, inside the root) replay
// exactly.
func TestRecordReplayCorpus(t *testing.T) {
	for _, arch := range guestArches {
		for _, prog := range []string{"fileio", "threads", "proc_fork", "proc_exec", "sysv_ipc", "procfs", "memfd_file"} {
			t.Run(arch+"/"+prog, func(t *testing.T) {
				dir := t.TempDir()
				scratch := filepath.Join(dir, "scratch")
				if err := os.Mkdir(scratch, 0o755); err != nil {
					t.Fatal(err)
				}
				bin, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "bin", arch, prog))
				rec := filepath.Join(dir, "rec")
				args := []string{"run", "--clean-env", "--det", "--trace-hash", "--record", rec, bin}
				if prog == "fileio" {
					args = append(args, scratch)
				}
				stdout, e, code, hash := recordRun(t, "", args...)
				if hash == "" || code != 0 {
					t.Fatalf("recorded run: status %d, stderr:\n%s", code, e)
				}
				os.RemoveAll(scratch) // what fileio left; the replay has its own
				o, e, c, h := recordRun(t, "", "replay", rec, "--trace-hash")
				if o != stdout || c != code || h != hash {
					t.Errorf("replay: status %d hash %s; recorded: status %d hash %s; stdout same: %v\nstderr:\n%s", c, h, code, hash, o == stdout, e)
				}
			})
		}
	}
}

// TestRecordRenamed: a host file the guest renames before reading it is
// recorded with its contents (under its old name, where the replay's
// guest finds it to rename).
func TestRecordRenamed(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "from"), filepath.Join(dir, "to")
	if err := os.WriteFile(from, []byte("moved contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, _ := filepath.Abs("../../testdata/bin/amd64/recread")
	rec := filepath.Join(dir, "rec")
	stdout, e, code, hash := recordRun(t, "", "run", "--clean-env", "--det", "--trace-hash", "--record", rec, bin, from, "", to)
	if hash == "" || !strings.Contains(stdout, "file 15 bytes") {
		t.Fatalf("recorded run: status %d, stdout %q, stderr:\n%s", code, stdout, e)
	}
	os.Remove(to)
	o, e, c, h := recordRun(t, "", "replay", rec, "--trace-hash")
	if o != stdout || c != code || h != hash {
		t.Errorf("replay: status %d hash %s stdout %q; recorded: status %d hash %s stdout %q\nstderr:\n%s", c, h, o, code, hash, stdout, e)
	}
}
