package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A guest that touches memory forever under --mem-limit dies by the OOM
// killer's SIGKILL (status 137) instead of taking the host down, in both
// schedulers and on both arches.
func TestMemLimitOOMKill(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		for _, det := range []bool{true, false} {
			args := []string{"run", "--mem-limit", "32M"}
			if det {
				args = append(args, "--det")
			}
			args = append(args, "../../testdata/bin/"+arch+"/hostile", "--memhog")
			var o, e bytes.Buffer
			code := run(args, nil, &o, &e)
			if code != 137 || !strings.Contains(e.String(), "out of memory (limit 32 MiB): killed process") {
				t.Errorf("%s det=%v: status %d, stderr %q, stdout %q", arch, det, code, e.String(), o.String())
			}
		}
	}
}

// An exec of something that is not a regular file (an endless device) is
// refused before anything is read.
func TestRunDevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	var o, e bytes.Buffer
	if code := run([]string{"run", "/dev/zero"}, nil, &o, &e); code != 126 || !strings.Contains(e.String(), "not a regular file") {
		t.Fatalf("status %d, stderr %q", code, e.String())
	}
}

func TestLimitFlags(t *testing.T) {
	for _, c := range []struct {
		val  string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"256M", 256 << 20, true}, {"2g", 2 << 30, true}, {"50%", 500, true},
		{"101%", 0, false}, {"-1", 0, false}, {"12Q", 0, false}, {"99999999999T", 0, false},
	} {
		got, err := parseMemLimit(c.val, 1000)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%q: %d, %v", c.val, got, err)
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"run", "--mem-limit", "lots", "../../testdata/bin/amd64/hello"}, nil, &o, &e); code != 2 || !strings.Contains(e.String(), "--mem-limit") {
		t.Errorf("bad --mem-limit: status %d, %q", code, e.String())
	}
	if code := run([]string{"run", "--max-procs", "-3", "../../testdata/bin/amd64/hello"}, nil, &o, &e); code != 2 {
		t.Errorf("negative --max-procs: status %d", code)
	}
}

// Many blocked threads and many short-lived processes: every thread starts
// and is joined, every child is reaped, in both schedulers (a reaped
// process leaves nothing behind; the corpus' memory stays bounded).
func TestManyThreadsAndForks(t *testing.T) {
	n := "1000"
	if testing.Short() {
		n = "200"
	}
	for _, arch := range []string{"arm64", "amd64"} {
		for _, mode := range [][]string{{"--det"}, {}} {
			for _, c := range []struct{ flag, want string }{
				{"--threads", "threads: " + n + " of " + n + " started, all blocked, all joined\n"},
				{"--forks", "forks: " + n + " of " + n + " reaped\n"},
			} {
				args := append(append([]string{"run"}, mode...), "../../testdata/bin/"+arch+"/hostile", c.flag, n)
				var o, e bytes.Buffer
				if code := run(args, nil, &o, &e); code != 0 || o.String() != c.want {
					t.Errorf("%s %v %s: status %d, %q, stderr %q", arch, mode, c.flag, code, o.String(), e.String())
				}
			}
		}
	}
	// The thread cap: clone gets EAGAIN past --max-threads.
	var o, e bytes.Buffer
	run([]string{"run", "--det", "--max-threads", "50", "../../testdata/bin/amd64/hostile", "--threads", "100"}, nil, &o, &e)
	if o.String() != "threads: 49 of 100 started, all blocked, all joined\n" {
		t.Errorf("--max-threads 50: %q", o.String())
	}
}

// A guest whose every thread blocks forever hangs as on Linux (killable
// from outside) in parallel mode; it must not abort uvm with Go's "all
// goroutines are asleep" (a host crash). --det reports the deadlock and
// kills the guest. Runs uvm as a subprocess: the Go runtime's deadlock
// check sees the whole process.
func TestGuestHangIsNotAHostCrash(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		cmd := exec.Command(exe, "run", "../../testdata/bin/"+arch+"/hostile", "--hang")
		cmd.Env = append(os.Environ(), asUVMEnv+"=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		hanging := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "hanging" {
					close(hanging)
				}
			}
			exited <- cmd.Wait()
		}()
		// The guest prints "hanging" just before its last thread blocks;
		// Go's deadlock abort follows at once, so a process still running
		// a second after that line hangs (not a timing assertion: a slow
		// host only delays the line).
		select {
		case err := <-exited:
			t.Errorf("%s: uvm exited (%v) before hanging; stderr:\n%s", arch, err, firstLines(stderr.String(), 8))
			continue
		case <-hanging:
		}
		select {
		case err := <-exited:
			t.Errorf("%s: uvm exited (%v) instead of hanging; stderr:\n%s", arch, err, firstLines(stderr.String(), 8))
			continue
		case <-time.After(time.Second):
		}
		cmd.Process.Kill()
		<-exited

		var o, e bytes.Buffer
		code := run([]string{"run", "--det", "../../testdata/bin/" + arch + "/hostile", "--hang"}, nil, &o, &e)
		if code != 137 || !strings.Contains(e.String(), "deadlock") {
			t.Errorf("%s --det: status %d, stderr %q", arch, code, e.String())
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
