package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Tests of reverse execution under `uvm run --det -g` (gdb_reverse.go)
// with a real gdb: reverse-stepi returns to the forward run's registers,
// reverse-continue to a watchpoint stops before the earlier write with
// the old value, the re-executed run prints nothing twice and computes
// what a run without gdb computes (its trace hash).

// plainRun runs gdbwatch under --det --trace-hash without gdb.
func plainRun(t *testing.T, arch, stdin string, args ...string) (hash, stdout string, code int) {
	t.Helper()
	return plainRunOf(t, arch, "gdbwatch", stdin, args...)
}

func plainRunOf(t *testing.T, arch, prog, stdin string, args ...string) (hash, stdout string, code int) {
	t.Helper()
	return plainRunOpts(t, arch, prog, stdin, nil, args...)
}

// plainRunOpts is plainRunOf with more uvm flags.
func plainRunOpts(t *testing.T, arch, prog, stdin string, flags []string, args ...string) (hash, stdout string, code int) {
	t.Helper()
	bin := filepath.Join("..", "..", "testdata", "bin", arch, prog)
	var o, e bytes.Buffer
	argv := append(append([]string{"run", "--clean-env", "--det", "--trace-hash"}, flags...), bin)
	code = run(append(argv, args...), strings.NewReader(stdin), &o, &e)
	m := traceHashRE.FindStringSubmatch(e.String())
	if m == nil {
		t.Fatalf("no trace hash without gdb: %s", e.String())
	}
	return m[1], o.String(), code
}

// sameRun checks that the debugged run (after reverse execution) ended
// as the plain one.
func sameRun(t *testing.T, r gdbRun, hash, stdout string, code int) {
	t.Helper()
	g := traceHashRE.FindStringSubmatch(r.stderr)
	if g == nil || g[1] != hash || r.stdout != stdout || r.code != code {
		t.Errorf("with gdb: hash %v status %d stdout %q; without: hash %s status %d stdout %q\ngdb:\n%s\nuvm stderr:\n%s",
			g, r.code, r.stdout, hash, code, stdout, r.gdb, r.stderr)
	}
}

// TestGDBReverseStepi: with the default quantum and with a short one
// (the re-executions then run most slices at full speed, far from the
// point they go to).
func TestGDBReverseStepi(t *testing.T) {
	for _, c := range []struct{ arch, quantum string }{{"arm64", ""}, {"amd64", ""}, {"arm64", "300"}, {"amd64", "300"}} {
		arch := c.arch
		t.Run(arch+"/quantum="+c.quantum, func(t *testing.T) {
			gdbFor(t, arch)
			flags := []string{"--det", "--trace-hash"}
			var plain []string
			if c.quantum != "" {
				flags = append(flags, "--quantum", c.quantum)
				plain = []string{"--quantum", c.quantum}
			}
			hash, stdout, code := plainRunOpts(t, arch, "gdbwatch", "", plain)
			regs := `"%s=%lx %lx %lx %lx %lx\n", $pc, $sp, $rax, $rdi, $rsi`
			if arch == "arm64" {
				regs = `"%s=%lx %lx %lx %lx %lx\n", $pc, $sp, $x0, $x1, $x30`
			}
			cmds := []string{"break bump", "continue", "continue", "printf " + strings.Replace(regs, `%s`, `f0`, 1)}
			for i := 1; i <= 3; i++ {
				cmds = append(cmds, "stepi", "printf "+strings.Replace(regs, `%s`, "f"+string(rune('0'+i)), 1))
			}
			for i := 1; i <= 3; i++ {
				cmds = append(cmds, "reverse-stepi", "printf "+strings.Replace(regs, `%s`, "r"+string(rune('0'+i)), 1))
			}
			// reverse-finish (gdb's breakpoint at bump and reverse steps):
			// back to the call in main.
			cmds = append(cmds, "reverse-finish", "x/1i $pc", "delete", "continue")
			r := runUnderGDB(t, arch, flags, "gdbwatch", nil, cmds...)
			val := func(name string) string {
				m := regexp.MustCompile(`(?m)^` + name + `=(.*)$`).FindStringSubmatch(r.gdb)
				if m == nil {
					t.Fatalf("no %s in gdb output:\n%s\nuvm stderr:\n%s", name, r.gdb, r.stderr)
				}
				return m[1]
			}
			for i, want := range []string{"f2", "f1", "f0"} {
				rn := "r" + string(rune('1'+i))
				if got, w := val(rn), val(want); got != w {
					t.Errorf("after %d reverse-stepi: %s, forward %s", i+1, got, w)
				}
			}
			if val("f0") == val("f1") || val("f1") == val("f2") {
				t.Errorf("stepi did not change the registers: %s / %s / %s", val("f0"), val("f1"), val("f2"))
			}
			if !regexp.MustCompile(`=> 0x[0-9a-f]+ <main\+\d+>:\s+(call|bl)\s+0x[0-9a-f]+ <bump>`).MatchString(r.gdb) {
				t.Errorf("reverse-finish: not at the call of bump:\n%s", r.gdb)
			}
			mustContain(t, r, "exited normally")
			sameRun(t, r, hash, stdout, code)
		})
	}
}

func TestGDBReverseWatch(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			gdbFor(t, arch)
			hash, stdout, code := plainRun(t, arch, "")
			r := runUnderGDB(t, arch, []string{"--det", "--trace-hash"}, "gdbwatch", nil,
				"watch *(long *)&counter", "continue", "continue",
				"reverse-continue", `printf "back1=%ld\n", *(long *)&counter`, "info symbol $pc",
				"reverse-continue", `printf "back2=%ld\n", *(long *)&counter`,
				"reverse-continue", "continue", `printf "fwd=%ld\n", *(long *)&counter`,
				"delete", "continue")
			mustContain(t, r, "Old value = 0\nNew value = 1\n", "Old value = 1\nNew value = 3\n",
				// Backwards: before the write of 3, then before that of 1.
				"Old value = 3\nNew value = 1\n", "back1=1\n", "bump + ", "Old value = 1\nNew value = 0\n", "back2=0\n",
				"No more reverse-execution history.", "fwd=1\n", "exited normally")
			sameRun(t, r, hash, stdout, code)
		})
	}
}

// TestGDBReverseStdin: a re-execution reads the stdin the run read (the
// host stream is consumed) and does not write again what was written.
func TestGDBReverseStdin(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			gdbFor(t, arch)
			const in = "7\n9\n"
			hash, stdout, code := plainRun(t, arch, in, "stdin")
			arg := "$x0"
			if arch == "amd64" {
				arg = "$rdi"
			}
			// bump runs for 1..5, then for each number read: stop at
			// bump(9), after "read 7" was written, and go back to bump(7).
			r := runUnderGDBIn(t, in, arch, []string{"--det", "--trace-hash"}, "gdbwatch", []string{"stdin"},
				"break bump", "ignore 1 6", "continue", `printf "at=%ld\n", `+arg,
				"reverse-continue", `printf "back=%ld\n", `+arg, "delete", "continue")
			mustContain(t, r, "at=9\n", "back=7\n", "exited normally")
			if stdout != "read 7\nread 9\ncounter=31 ppid-positive=1\n" {
				t.Errorf("plain run: stdout %q", stdout)
			}
			sameRun(t, r, hash, stdout, code)
		})
	}
}

// TestGDBReverseRefused: without --det, and after the session changed
// the run, reverse commands fail with a message and the run goes on.
func TestGDBReverseRefused(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			r := runUnderGDB(t, arch, nil, "gdbwatch", nil, "break bump", "continue", "reverse-stepi", "reverse-continue", "delete", "continue")
			mustContain(t, r, "Remote failure reply: E.reverse execution needs a deterministic run (uvm run --det)", "exited normally")
			r = runUnderGDB(t, arch, []string{"--det"}, "gdbwatch", nil,
				"break bump", "continue", "set var *(long *)&counter = 40", "reverse-stepi", "delete", "continue")
			mustContain(t, r, "E.reverse execution: this session changed the run", "exited normally")
			if r.stdout != "counter=55 ppid-positive=1\n" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
}

// TestGDBReverseThreads: reverse-continue in a threaded guest goes back
// to the previous breakpoint hit in another thread, and the run
// re-executed from there ends as one without gdb.
func TestGDBReverseThreads(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			gdbFor(t, arch)
			if raceEnabled {
				t.Skip("single-stepped threaded runs are too slow under -race")
			}
			hash, stdout, code := plainRunOf(t, arch, "threads", "")
			r := runUnderGDB(t, arch, []string{"--det", "--trace-hash"}, "threads", nil,
				"break worker", "continue", `printf "first=%d\n", $_thread`, "continue", `printf "second=%d\n", $_thread`,
				"reverse-continue", `printf "back=%d\n", $_thread`, "reverse-stepi", "delete", "continue")
			first := regexp.MustCompile(`first=(\d+)`).FindStringSubmatch(r.gdb)
			second := regexp.MustCompile(`second=(\d+)`).FindStringSubmatch(r.gdb)
			back := regexp.MustCompile(`back=(\d+)`).FindStringSubmatch(r.gdb)
			if first == nil || second == nil || back == nil || first[1] == second[1] || back[1] != first[1] {
				t.Errorf("threads at the hits: first %v second %v back %v\n%s", first, second, back, r.gdb)
			}
			mustContain(t, r, "exited normally")
			sameRun(t, r, hash, stdout, code)

			// reverse-stepi of the main thread, blocked in pthread_join
			// since long before the fifth printf (with a short quantum
			// the re-executions run most slices at full speed): back to
			// its last instruction, the futex syscall.
			hash, stdout, code = plainRunOpts(t, arch, "threads", "", []string{"--quantum", "300"})
			r = runUnderGDB(t, arch, []string{"--det", "--trace-hash", "--quantum", "300"}, "threads", nil,
				"break printf", "ignore 1 4", "continue", "thread 1", "set scheduler-locking on",
				`printf "t1=%lx\n", $pc`, "reverse-stepi", `printf "t1back=%lx\n", $pc`, "x/1i $pc",
				"set scheduler-locking off", "delete", "continue")
			pcs := regexp.MustCompile(`(?m)^t1(|back)=([0-9a-f]+)$`).FindAllStringSubmatch(r.gdb, -1)
			insn, size := `syscall`, uint64(2)
			if arch == "arm64" {
				insn, size = `svc\s+#0x0`, 4
			}
			if len(pcs) != 2 {
				t.Fatalf("main thread's pc: %v\n%s", pcs, r.gdb)
			}
			at, _ := strconv.ParseUint(pcs[0][2], 16, 64)
			backPC, _ := strconv.ParseUint(pcs[1][2], 16, 64)
			if backPC != at-size || !regexp.MustCompile(`=> 0x[0-9a-f]+ <[^>]+>:\s+`+insn).MatchString(r.gdb) {
				t.Errorf("reverse-stepi of the blocked main thread: %x -> %x, not to its syscall instruction:\n%s", at, backPC, r.gdb)
			}
			mustContain(t, r, "exited normally")
			sameRun(t, r, hash, stdout, code)
		})
	}
}
