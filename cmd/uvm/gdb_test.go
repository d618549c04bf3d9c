package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests of `uvm run -g` that drive a real gdb (gdb-multiarch: Debian's
// package of that name; plain gdb for x86-64 guests on an x86-64 host)
// in batch mode against the committed guests.

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// gdbFor returns the gdb that debugs arch's guests, or skips.
func gdbFor(t *testing.T, arch string) string {
	t.Helper()
	if p, err := exec.LookPath("gdb-multiarch"); err == nil {
		return p
	}
	if p, err := exec.LookPath("gdb"); err == nil && arch == "amd64" {
		if out, _ := exec.Command(p, "-batch", "-ex", "show architecture").CombinedOutput(); strings.Contains(string(out), "x86-64") {
			return p
		}
	}
	t.Skip("no gdb for " + arch + " guests (apt-get install gdb-multiarch)")
	return ""
}

type gdbRun struct {
	gdb            string // gdb's output
	stdout, stderr string // uvm's
	code           int    // uvm's exit status
}

// runUnderGDB runs `uvm run -g unix:SOCK --gdb-wait FLAGS PROG ARGS` and
// gdb with the commands (after target remote; one written "-iex CMD"
// runs before it), and returns both outputs.
func runUnderGDB(t *testing.T, arch string, uvmFlags []string, prog string, args []string, cmds ...string) gdbRun {
	t.Helper()
	return runUnderGDBIn(t, "", arch, uvmFlags, prog, args, cmds...)
}

// runUnderGDBIn is runUnderGDB with the guest's stdin.
func runUnderGDBIn(t *testing.T, stdin, arch string, uvmFlags []string, prog string, args []string, cmds ...string) gdbRun {
	t.Helper()
	gdb := gdbFor(t, arch)
	bin := filepath.Join("..", "..", "testdata", "bin", arch, prog)
	sock := filepath.Join(t.TempDir(), "gdb.sock")
	argv := append([]string{"run", "--clean-env", "-g", "unix:" + sock, "--gdb-wait"}, uvmFlags...)
	argv = append(append(argv, bin), args...)
	var o, e lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(argv, strings.NewReader(stdin), &o, &e) }()
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i == 500 {
			t.Fatalf("uvm did not listen on %s; stderr:\n%s", sock, e.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	gargs := []string{"-q", "-batch", "-nx", "-ex", "set pagination off", "-ex", "set confirm off", "-ex", "target remote " + sock}
	for _, c := range cmds {
		if early, ok := strings.CutPrefix(c, "-iex "); ok {
			// Before target remote (a setting of the connection).
			gargs = append([]string{"-iex", early}, gargs...)
			continue
		}
		gargs = append(gargs, "-ex", c)
	}
	gargs = append(gargs, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, gdb, gargs...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("gdb timed out; output:\n%s\nuvm stderr:\n%s", out, e.String())
	}
	_ = err // gdb's status reflects the last command; the output is checked
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("uvm did not exit after the gdb session; gdb output:\n%s\nuvm stderr:\n%s", out, e.String())
	}
	return gdbRun{gdb: string(out), stdout: o.String(), stderr: e.String(), code: code}
}

func mustContain(t *testing.T, r gdbRun, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.gdb, s) {
			t.Errorf("gdb output lacks %q:\n%s\nuvm stderr:\n%s", s, r.gdb, r.stderr)
		}
	}
}

func TestGDBBreakStepFinish(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			arg, pc := "$x0", "pc"
			if arch == "amd64" {
				arg, pc = "$rdi", "rip"
			}
			r := runUnderGDB(t, arch, []string{"--det"}, "fib", []string{"10"},
				"break fib", "continue",
				"printf \"arg=%d\\n\", "+arg, // fib(10): the first argument is 10
				"info registers", "x/8i $pc", "bt",
				"stepi", "printf \"stepped=%d\\n\", $pc - fib",
				"delete", "finish", "info symbol $pc", "continue")
			mustContain(t, r, "Breakpoint 1, ", " in fib ()", "arg=10", "#1 ", " in main ()", "main + ", "exited normally")
			if !regexp.MustCompile(`(?m)^` + pc + ` +0x[0-9a-f]+ +0x[0-9a-f]+ <fib`).MatchString(r.gdb) {
				t.Errorf("info registers: no %s in fib:\n%s", pc, r.gdb)
			}
			if n := strings.Count(r.gdb, "\n   0x") + strings.Count(r.gdb, "=> 0x"); n < 8 {
				t.Errorf("x/8i: %d instructions:\n%s", n, r.gdb)
			}
			if m := regexp.MustCompile(`stepped=(\d+)`).FindStringSubmatch(r.gdb); m == nil || m[1] == "0" {
				t.Errorf("stepi did not move the pc:\n%s", r.gdb)
			}
			if r.code != 0 || r.stdout != "fib(10) = 55\n" {
				t.Errorf("uvm: status %d, stdout %q", r.code, r.stdout)
			}
		})
	}
}

func TestGDBExitAndSignal(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			r := runUnderGDB(t, arch, nil, "exitcode", nil, "continue")
			mustContain(t, r, "exited with code 052")
			if r.code != 42 {
				t.Errorf("exitcode: uvm status %d, want 42", r.code)
			}
			// A fault is reported before delivery; passing it on kills
			// the guest as without a debugger.
			r = runUnderGDB(t, arch, nil, "segv", nil, "continue", "bt 1", "continue")
			mustContain(t, r, "received signal SIGSEGV", "terminated with signal SIGSEGV")
			if r.code != 139 {
				t.Errorf("segv: uvm status %d, want 139", r.code)
			}
		})
	}
}

func TestGDBThreads(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "expected", "threads.out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			r := runUnderGDB(t, arch, []string{"--det"}, "threads", nil,
				"break worker", "continue", "continue", "info threads", "thread 1", "bt 1", "delete", "continue")
			mustContain(t, r, "Breakpoint 1, ", "Switching to thread 1 ")
			if n := len(regexp.MustCompile(`(?m)^[ *] +\d+ +Thread `).FindAllString(r.gdb, -1)); n < 3 {
				t.Errorf("info threads lists %d threads, want at least 3 (main and two workers):\n%s", n, r.gdb)
			}
			if r.code != 0 || r.stdout != string(want) {
				t.Errorf("uvm: status %d, stdout %q", r.code, r.stdout)
			}
		})
	}
}

// TestGDBDetTraceHash: in --det, a debugger session that stops at
// breakpoints, steps and continues to the end leaves the run exactly as
// it was: same output and the same --trace-hash as without a debugger,
// for a threaded guest too (slices keep their length while breakpoints
// make the threads execute one instruction at a time).
func TestGDBDetTraceHash(t *testing.T) {
	hashRE := regexp.MustCompile(`trace-hash ([0-9a-f]+)`)
	for _, arch := range []string{"arm64", "amd64"} {
		for _, prog := range []string{"fib", "threads"} {
			t.Run(arch+"/"+prog, func(t *testing.T) {
				gdbFor(t, arch)
				if raceEnabled && prog == "threads" {
					// gdb keeps a breakpoint on _dl_debug_state, so the
					// whole run single-steps: minutes under -race.
					t.Skip("single-stepped threaded run is too slow under -race")
				}
				sym, args := "fib", []string{"12"}
				if prog == "threads" {
					sym, args = "worker", nil
				}
				bin := filepath.Join("..", "..", "testdata", "bin", arch, prog)
				var o, e bytes.Buffer
				code := run(append([]string{"run", "--clean-env", "--det", "--quantum", "5000", "--trace-hash", bin}, args...), strings.NewReader(""), &o, &e)
				m := hashRE.FindStringSubmatch(e.String())
				if m == nil {
					t.Fatalf("no trace hash without gdb: %s", e.String())
				}
				r := runUnderGDB(t, arch, []string{"--det", "--quantum", "5000", "--trace-hash"}, prog, args,
					"break "+sym, "continue", "continue", "stepi", "continue", "delete", "continue")
				mustContain(t, r, "Breakpoint 1, ")
				g := hashRE.FindStringSubmatch(r.stderr)
				if g == nil || g[1] != m[1] || r.stdout != o.String() || r.code != code {
					t.Errorf("with gdb: hash %v status %d; without: hash %s status %d; stdout equal: %v\ngdb:\n%s",
						g, r.code, m[1], code, r.stdout == o.String(), r.gdb)
				}
			})
		}
	}
}

// TestGDBWatch: hardware watchpoints (Z2/Z3/Z4) stop where the hardware
// would report them to gdb — on x86-64 after the storing instruction, on
// arm64 before it (gdb then steps it) — so gdb shows each old and new
// value and the pc after the store; a read watchpoint catches the loop's
// reads of limit. In --det the session leaves the run's trace hash as it
// was.
func TestGDBWatch(t *testing.T) {
	hashRE := regexp.MustCompile(`trace-hash ([0-9a-f]+)`)
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			gdbFor(t, arch)
			bin := filepath.Join("..", "..", "testdata", "bin", arch, "gdbwatch")
			var o, e bytes.Buffer
			code := run([]string{"run", "--clean-env", "--det", "--trace-hash", bin}, strings.NewReader(""), &o, &e)
			m := hashRE.FindStringSubmatch(e.String())
			if m == nil {
				t.Fatalf("no trace hash without gdb: %s", e.String())
			}
			r := runUnderGDB(t, arch, []string{"--det", "--trace-hash"}, "gdbwatch", nil,
				"watch *(long *)&counter", "continue", "continue", "info symbol $pc", "x/1i $pc",
				"delete", "rwatch *(long *)&limit", "continue", "awatch *(long *)&counter", "continue",
				"delete", "continue")
			mustContain(t, r, "Hardware watchpoint 1: *(long *)&counter",
				"Old value = 0\nNew value = 1\n", "Old value = 1\nNew value = 3\n",
				"Hardware read watchpoint 2: *(long *)&limit\n\nValue = 5\n",
				"Hardware access (read/write) watchpoint 3: *(long *)&counter\n\nValue = 3\n",
				"exited normally")
			// The stop is after the store: at bump's return. (gdb names
			// the object file once it has more than one: the vDSO it
			// reads through the host I/O packets.)
			ret := "ret"
			if !regexp.MustCompile(`bump \+ \d+ in section .text( of \S+)?\n=> 0x[0-9a-f]+ <bump\+\d+>:\s+` + ret).MatchString(r.gdb) {
				t.Errorf("watchpoint stop not just after the store (at bump's %s):\n%s", ret, r.gdb)
			}
			g := hashRE.FindStringSubmatch(r.stderr)
			if g == nil || g[1] != m[1] || r.stdout != o.String() || r.code != code {
				t.Errorf("with gdb: hash %v status %d stdout %q; without: hash %s status %d stdout %q\ngdb:\n%s",
					g, r.code, r.stdout, m[1], code, o.String(), r.gdb)
			}
		})
	}
}

// TestGDBCatchSyscall: `catch syscall` (QCatchSyscalls) stops at the
// entry and the return of the caught syscall only, with the result in the
// return register at the return stop.
func TestGDBCatchSyscall(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			ret := "$x0"
			if arch == "amd64" {
				ret = "$rax"
			}
			r := runUnderGDB(t, arch, nil, "gdbwatch", nil,
				"catch syscall getppid", "continue", "continue", "printf \"ret=%d\\n\", "+ret,
				"delete", "catch syscall write", "continue", "delete", "continue")
			mustContain(t, r, "(call to syscall getppid), ", "(returned from syscall getppid), ",
				"(call to syscall write), ", " in write ()", "exited normally")
			if m := regexp.MustCompile(`ret=(-?\d+)`).FindStringSubmatch(r.gdb); m == nil || m[1] == "0" || m[1][0] == '-' {
				t.Errorf("getppid's return value at the return stop: %v\n%s", m, r.gdb)
			}
			if n := strings.Count(r.gdb, "syscall getppid), "); n != 2 {
				t.Errorf("%d getppid stops, want 2:\n%s", n, r.gdb)
			}
			if r.code != 0 || r.stdout != "counter=15 ppid-positive=1\n" {
				t.Errorf("uvm: status %d, stdout %q", r.code, r.stdout)
			}
		})
	}
}

// TestGDBForkExec: fork, vfork and exec events (multiprocess+,
// fork-events+, vfork-events+, exec-events+): gdb's catchpoints stop in
// the parent, the child runs on detached (gdb's default), and after an
// exec gdb loads the new program and stops at its breakpoints.
func TestGDBForkExec(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			r := runUnderGDB(t, arch, nil, "gdbwatch", []string{"fork"}, "catch fork", "continue", "info inferiors", "continue")
			mustContain(t, r, "Catchpoint 1 (forked process ", " in _Fork ()", "[Detaching after fork from child process ", "exited normally")
			if r.code != 0 || r.stdout != "child counter=115\ncounter=15 ppid-positive=1\n" {
				t.Errorf("fork: uvm status %d, stdout %q", r.code, r.stdout)
			}
			r = runUnderGDB(t, arch, nil, "gdbwatch", []string{"vfork"}, "catch vfork", "continue", "continue")
			mustContain(t, r, "Catchpoint 1 (vforked process ", "[Detaching after vfork from child process ", "exited normally")
			if r.code != 0 || r.stdout != "vfork child status 7\ncounter=115 ppid-positive=1\n" {
				t.Errorf("vfork: uvm status %d, stdout %q", r.code, r.stdout)
			}
			r = runUnderGDB(t, arch, nil, "gdbwatch", []string{"exec"}, "catch exec", "continue", "break bump", "continue", "bt 1", "delete", "continue")
			mustContain(t, r, "is executing new program: ", "Catchpoint 1 (exec'd ", "Breakpoint 2, ", " in bump ()", "exited normally")
			if r.code != 0 || r.stdout != "counter=15 ppid-positive=1\n" {
				t.Errorf("exec: uvm status %d, stdout %q", r.code, r.stdout)
			}
		})
	}
}
