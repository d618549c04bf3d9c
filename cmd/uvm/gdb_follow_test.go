package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGDBFollowForkChild: with `set follow-fork-mode child` gdb detaches
// the parent at the fork event and debugs the child, which has not run
// yet: a breakpoint in the child stops there with the child's memory
// (the parent's counter, 15, then the child's own bump to 115), and the
// child's exit ends the session while the parent ran on untraced.
func TestGDBFollowForkChild(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		for _, det := range []bool{false, true} {
			name := arch
			var flags []string
			if det {
				name, flags = arch+"-det", []string{"--det"}
			}
			t.Run(name, func(t *testing.T) {
				arg := "$x0"
				if arch == "amd64" {
					arg = "$rdi"
				}
				cmds := []string{"set follow-fork-mode child", "break bump if " + arg + " == 100", "continue",
					"printf \"arg=%d counter=%d\\n\", " + arg + ", *(long *)&counter", "info inferiors"}
				if det {
					// Reverse execution re-executes the first process:
					// refused in a followed child, the pc stays.
					cmds = append(cmds, "reverse-stepi", "printf \"pc-at-bump=%d\\n\", $pc == bump")
				}
				cmds = append(cmds, "finish", "printf \"after=%d\\n\", *(long *)&counter", "continue")
				r := runUnderGDB(t, arch, flags, "gdbwatch", []string{"fork"}, cmds...)
				if det {
					mustContain(t, r, "this session follows a fork child", "pc-at-bump=1\n")
				}
				mustContain(t, r, "[Attaching after ", " fork to child ", "[Detaching after fork from parent process ",
					"hit Breakpoint 1, ", " in bump ()", "arg=100 counter=15\n", "after=115\n", "exited normally]")
				if strings.Contains(r.gdb, "arg=1 ") {
					t.Errorf("the breakpoint's condition stopped in the parent:\n%s", r.gdb)
				}
				if r.code != 0 || r.stdout != "child counter=115\ncounter=15 ppid-positive=1\n" {
					t.Errorf("uvm status %d, stdout %q", r.code, r.stdout)
				}
			})
		}
	}
}

// TestGDBDetachOnForkOff: gdb keeping both processes is not supported;
// the stub says so (an O packet gdb prints) and the child runs on.
func TestGDBDetachOnForkOff(t *testing.T) {
	r := runUnderGDB(t, "amd64", nil, "gdbwatch", []string{"fork"},
		"set detach-on-fork off", "catch fork", "continue", "continue")
	mustContain(t, r, "Catchpoint 1 (forked process ", "is not debugged (one process at a time: detach-on-fork off is not supported)")
	if r.code != 0 || r.stdout != "child counter=115\ncounter=15 ppid-positive=1\n" {
		t.Errorf("uvm status %d, stdout %q", r.code, r.stdout)
	}
}

// TestGDBFollowVforkChild: with `set follow-fork-mode child` gdb switches
// to the vfork child at the vfork event and resumes it alone, keeping the
// parent, which stays suspended in vfork until the child execs or exits
// and which gdb then detaches. The child has not run at the event: a
// breakpoint in it stops with the parent's memory (counter 15, then its
// own bump to 115, which the parent sees afterwards); after its exec gdb
// loads the new program, after its exit the session ends, and the parent
// runs on untraced in both cases.
func TestGDBFollowVforkChild(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		for _, mode := range []string{"vforkexec", "vfork"} {
			name := arch + "-" + mode
			var flags []string
			if mode == "vfork" {
				name, flags = name+"-det", []string{"--det"}
			}
			t.Run(name, func(t *testing.T) {
				arg := "$x0"
				if arch == "amd64" {
					arg = "$rdi"
				}
				cmds := []string{"set follow-fork-mode child", "break bump if " + arg + " == 100", "continue",
					"printf \"arg=%d counter=%d\\n\", " + arg + ", *(long *)&counter", "info inferiors"}
				if flags != nil {
					// Reverse execution re-executes the first process:
					// refused in a followed child, the pc stays.
					cmds = append(cmds, "reverse-stepi", "printf \"pc-at-bump=%d\\n\", $pc == bump")
				}
				cmds = append(cmds, "finish", "printf \"after=%d\\n\", *(long *)&counter", "continue")
				r := runUnderGDB(t, arch, flags, "gdbwatch", []string{mode}, cmds...)
				if flags != nil {
					mustContain(t, r, "this session follows a fork child", "pc-at-bump=1\n")
				}
				mustContain(t, r, "[Attaching after ", " vfork to child ", "hit Breakpoint 1, ", " in bump ()",
					"arg=100 counter=15\n", "is vfork child of inferior 1", "after=115\n")
				want := "vfork child status 7\ncounter=115 ppid-positive=1\n"
				if mode == "vforkexec" {
					mustContain(t, r, "[Detaching vfork parent process ", " after child exec]", " is executing new program: ", "exited normally]")
					want = "counter=15 ppid-positive=1\nvfork child status 0\ncounter=115 ppid-positive=1\n"
				} else {
					mustContain(t, r, "[Detaching vfork parent process ", " after child exit]", "exited with code 07]")
				}
				if strings.Contains(r.gdb, "arg=1 ") || strings.Contains(r.gdb, "not debugged") {
					t.Errorf("stopped in the parent, or the stub refused to follow:\n%s", r.gdb)
				}
				if r.code != 0 || r.stdout != want {
					t.Errorf("uvm status %d, stdout %q, want %q; stderr:\n%s", r.code, r.stdout, want, r.stderr)
				}
			})
		}
	}
}

// TestGDBFollowVforkNoExecEvents: without exec events gdb hears of no
// exec and detaches the vfork parent only at the child's exit, so the
// parent must not wait for gdb once its child exec'd: in --det (with
// short slices, so the parent gets the baton while the exec'd child
// still runs) the run would otherwise stop until gdb gave up.
func TestGDBFollowVforkNoExecEvents(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			arg := "$x0"
			if arch == "amd64" {
				arg = "$rdi"
			}
			r := runUnderGDB(t, arch, []string{"--det", "--quantum", "1000"}, "gdbwatch", []string{"vforkexec"},
				"-iex set remote exec-event-feature-packet off", "set follow-fork-mode child",
				"break bump if "+arg+" == 100", "continue", "continue")
			mustContain(t, r, " vfork to child ", "hit Breakpoint 1, ", "[Detaching vfork parent process ", " after child exit]", "exited normally]")
			if want := "counter=15 ppid-positive=1\nvfork child status 0\ncounter=115 ppid-positive=1\n"; r.code != 0 || r.stdout != want {
				t.Errorf("uvm status %d, stdout %q, want %q", r.code, r.stdout, want)
			}
		})
	}
}

// TestGDBVforkParent: following the parent (gdb's default), the vfork
// event comes as soon as the child exists, before it ran (counter 15 at
// the catchpoint), gdb detaches the child, resumes the parent until
// vforkdone and stops it afterwards with the child's write (115).
func TestGDBVforkParent(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			r := runUnderGDB(t, arch, []string{"--det"}, "gdbwatch", []string{"vforkexec"},
				"catch vfork", "continue", "printf \"at-vfork=%d\\n\", *(long *)&counter",
				"break waitpid", "continue", "printf \"at-waitpid=%d\\n\", *(long *)&counter", "continue")
			mustContain(t, r, "Catchpoint 1 (vforked process ", "at-vfork=15\n", "[Detaching after vfork from child process ",
				"Breakpoint 2, ", "at-waitpid=115\n", "exited normally]")
			if want := "counter=15 ppid-positive=1\nvfork child status 0\ncounter=115 ppid-positive=1\n"; r.code != 0 || r.stdout != want {
				t.Errorf("uvm status %d, stdout %q, want %q", r.code, r.stdout, want)
			}
		})
	}
}

// TestGDBFollowVforkTraceHash: in --det, following a vfork child (the
// parent held until gdb detaches it), stopping and stepping in it leaves
// the run's schedule as without gdb: same trace hash, output and status.
func TestGDBFollowVforkTraceHash(t *testing.T) {
	hashRE := regexp.MustCompile(`trace-hash ([0-9a-f]+)`)
	for _, arch := range []string{"arm64", "amd64"} {
		for _, mode := range []string{"vfork", "vforkexec"} {
			t.Run(arch+"-"+mode, func(t *testing.T) {
				gdbFor(t, arch)
				flags := []string{"--det", "--quantum", "5000", "--trace-hash"}
				var o, e bytes.Buffer
				code := run(append(append([]string{"run", "--clean-env"}, flags...), filepath.Join("..", "..", "testdata", "bin", arch, "gdbwatch"), mode), strings.NewReader(""), &o, &e)
				m := hashRE.FindStringSubmatch(e.String())
				if m == nil {
					t.Fatalf("no trace hash without gdb: %s", e.String())
				}
				arg := "$x0"
				if arch == "amd64" {
					arg = "$rdi"
				}
				r := runUnderGDB(t, arch, flags, "gdbwatch", []string{mode},
					"set follow-fork-mode child", "break bump if "+arg+" == 100", "continue", "stepi", "continue")
				mustContain(t, r, " vfork to child ", "hit Breakpoint 1, ", "[Detaching vfork parent process ")
				g := hashRE.FindStringSubmatch(r.stderr)
				if g == nil || g[1] != m[1] || r.stdout != o.String() || r.code != code {
					t.Errorf("with gdb: hash %v status %d stdout %q; without: hash %s status %d stdout %q\ngdb:\n%s",
						g, r.code, r.stdout, m[1], code, o.String(), r.gdb)
				}
			})
		}
	}
}
