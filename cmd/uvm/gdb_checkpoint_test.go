package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Tests of reverse execution from checkpoints (--checkpoint-interval;
// internal/tasks/checkpoint.go) with a real gdb: the registers and
// memory after reverse-stepi and reverse-continue are those of the
// forward run, and the same as with re-execution from the start, on a
// guest whose threads compute across the checkpoints while main reads a
// host file; the history bound (--checkpoint-mem) stops at the oldest
// checkpoint with gdb's and uvm's messages; ^C abandons a long
// reverse-continue.

// ckptArgs are ckpt_mt's arguments: its own source as the file, and
// iterations enough for threads still running at the breakpoint.
var ckptArgs = []string{filepath.Join("..", "..", "testdata", "src", "ckpt_mt.c"), "20000"}

func TestGDBReverseCheckpoints(t *testing.T) {
	if raceEnabled {
		t.Skip("single-stepped threaded runs are too slow under -race")
	}
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			gdbFor(t, arch)
			plain := []string{"--quantum", "5000"}
			hash, stdout, code := plainRunOpts(t, arch, "ckpt_mt", "", plain, ckptArgs...)
			regs := `"%s=%lx %lx %lx %lx %lx %lx | %lx %lx %lx %lx %ld\n", $pc, $sp, $rax, $rdi, $rsi, $xmm0.v2_int64[0], ((unsigned long *)&result)[0], ((unsigned long *)&result)[1], ((unsigned long *)&result)[2], ((unsigned long *)&result)[3], *(long *)&reads`
			if arch == "arm64" {
				regs = `"%s=%lx %lx %lx %lx %lx %lx | %lx %lx %lx %lx %ld\n", $pc, $sp, $x0, $x1, $x30, $v0.d.u[0], ((unsigned long *)&result)[0], ((unsigned long *)&result)[1], ((unsigned long *)&result)[2], ((unsigned long *)&result)[3], *(long *)&reads`
			}
			pr := func(name string) string { return "printf " + strings.Replace(regs, `%s`, name, 1) }
			cmds := []string{"break read", "ignore 1 39", "continue", pr("a"), "continue", pr("b"), `printf "thr=%d\n", $_thread`}
			for i := 1; i <= 3; i++ {
				cmds = append(cmds, "stepi", pr(fmt.Sprintf("f%d", i)))
			}
			for i := 1; i <= 3; i++ {
				cmds = append(cmds, "reverse-stepi", pr(fmt.Sprintf("r%d", i)))
			}
			cmds = append(cmds, "reverse-continue", pr("c"), "info threads", "delete", "continue")
			vals := map[string]map[string]string{}
			for _, every := range []string{"20000", "0"} {
				flags := append([]string{"--det", "--trace-hash", "--checkpoint-interval", every}, plain...)
				r := runUnderGDB(t, arch, flags, "ckpt_mt", ckptArgs, cmds...)
				v := map[string]string{}
				for _, m := range regexp.MustCompile(`(?m)^(\w+)=(.*)$`).FindAllStringSubmatch(r.gdb, -1) {
					v[m[1]] = m[2]
				}
				vals[every] = v
				for _, n := range []string{"a", "b", "c", "f1", "f2", "f3", "r1", "r2", "r3"} {
					if v[n] == "" {
						t.Fatalf("checkpoint interval %s: no %s in gdb output:\n%s\nuvm stderr:\n%s", every, n, r.gdb, r.stderr)
					}
				}
				for i, want := range []string{"f2", "f1", "b"} {
					if got := v[fmt.Sprintf("r%d", i+1)]; got != v[want] {
						t.Errorf("interval %s: after %d reverse-stepi: %s, forward %s", every, i+1, got, v[want])
					}
				}
				if v["c"] != v["a"] {
					t.Errorf("interval %s: reverse-continue to the 40th read: %s, forward %s", every, v["c"], v["a"])
				}
				if v["a"] == v["b"] {
					t.Errorf("interval %s: the 40th and 41st reads look the same: %s", every, v["a"])
				}
				if strings.Count(r.gdb, "Thread ") < 4 {
					t.Errorf("interval %s: not every thread alive at the breakpoint:\n%s", every, r.gdb)
				}
				fallback := strings.Contains(r.stderr, "re-executing from the start")
				if every != "0" && fallback {
					t.Errorf("checkpoints were not used:\n%s", r.stderr)
				}
				mustContain(t, r, "exited normally")
				sameRun(t, r, hash, stdout, code)
			}
			for n, x := range vals["0"] {
				if vals["20000"][n] != x {
					t.Errorf("%s: %s from checkpoints, %s from the start", n, vals["20000"][n], x)
				}
			}
		})
	}
}

// TestGDBReverseHistoryBound: with --checkpoint-mem too small for every
// checkpoint, reverse-continue with no breakpoint stops at the oldest
// one kept, not at the program's start, and says so.
func TestGDBReverseHistoryBound(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			gdbFor(t, arch)
			hash, stdout, code := plainRunOpts(t, arch, "fib", "", []string{"--quantum", "5000"}, "22")
			r := runUnderGDB(t, arch, []string{"--det", "--trace-hash", "--quantum", "5000", "--checkpoint-interval", "50000", "--checkpoint-mem", "2M"}, "fib", []string{"22"},
				"break printf", "continue", "delete", "reverse-continue", "info symbol $pc", "reverse-stepi", "continue")
			mustContain(t, r, "No more reverse-execution history.", "exited normally")
			if strings.Contains(r.gdb, "_start in section") {
				t.Errorf("went back to the program's start:\n%s", r.gdb)
			}
			if !strings.Contains(r.stderr, "history before instruction") || !strings.Contains(r.stderr, "is not available") {
				t.Errorf("uvm did not say where history starts:\n%s", r.stderr)
			}
			sameRun(t, r, hash, stdout, code)
		})
	}
}

// rsp is a minimal GDB remote protocol client (acknowledged mode).
type rsp struct {
	c net.Conn
	r *bufio.Reader
}

func (p *rsp) send(t *testing.T, pkt string) {
	t.Helper()
	var sum byte
	for i := 0; i < len(pkt); i++ {
		sum += pkt[i]
	}
	if _, err := fmt.Fprintf(p.c, "$%s#%02x", pkt, sum); err != nil {
		t.Fatal(err)
	}
}

// reply reads the next packet (acknowledging it), skipping acks.
func (p *rsp) reply(t *testing.T, timeout time.Duration) string {
	t.Helper()
	p.c.SetReadDeadline(time.Now().Add(timeout))
	for {
		b, err := p.r.ReadByte()
		if err != nil {
			t.Fatalf("no reply: %v", err)
		}
		if b != '$' {
			continue
		}
		body, err := p.r.ReadString('#')
		if err != nil {
			t.Fatal(err)
		}
		var cs [2]byte
		if _, err := p.r.Read(cs[:1]); err != nil {
			t.Fatal(err)
		}
		if _, err := p.r.Read(cs[1:]); err != nil {
			t.Fatal(err)
		}
		p.c.Write([]byte("+"))
		return strings.TrimSuffix(body, "#")
	}
}

// TestGDBReverseInterrupt: ^C (0x03) during a long reverse-continue
// (no checkpoints: it re-executes from the start one instruction at a
// time, looking for breakpoint hits) stops it: a SIGINT stop at once,
// the registers as before, and the session goes on (k ends it).
func TestGDBReverseInterrupt(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			bin := filepath.Join("..", "..", "testdata", "bin", arch, "fib")
			sock := filepath.Join(t.TempDir(), "gdb.sock")
			var o, e lockedBuffer
			done := make(chan int, 1)
			go func() {
				done <- run([]string{"run", "--clean-env", "--det", "--checkpoint-interval", "0", "-g", "unix:" + sock, "--gdb-wait", bin, "38"}, strings.NewReader(""), &o, &e)
			}()
			var c net.Conn
			for i := 0; ; i++ {
				var err error
				if c, err = net.Dial("unix", sock); err == nil {
					break
				}
				if i == 500 {
					t.Fatalf("uvm did not listen: %s", e.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			defer c.Close()
			p := &rsp{c: c, r: bufio.NewReader(c)}
			p.send(t, "?")
			if st := p.reply(t, 10*time.Second); !strings.HasPrefix(st, "T05") {
				t.Fatalf("first stop %q", st)
			}
			// Run forward for a while (fib 38 takes minutes).
			p.send(t, "vCont;c")
			time.Sleep(300 * time.Millisecond)
			c.Write([]byte{3})
			if st := p.reply(t, 30*time.Second); !strings.HasPrefix(st, "T02") {
				t.Fatalf("interrupt: stop %q", st)
			}
			p.send(t, "g")
			before := p.reply(t, 10*time.Second)
			p.send(t, "Z0,400000,4") // a breakpoint the search looks for (never hit)
			p.reply(t, 10*time.Second)
			p.send(t, "bc")
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			c.Write([]byte{3})
			st := p.reply(t, 60*time.Second)
			if !strings.HasPrefix(st, "T02") {
				t.Fatalf("^C during reverse-continue: stop %q", st)
			}
			t.Logf("stopped %v after the ^C", time.Since(start))
			p.send(t, "g")
			if after := p.reply(t, 10*time.Second); after != before {
				t.Errorf("registers changed by the abandoned reverse-continue:\n%s\n%s", before, after)
			}
			p.send(t, "k")
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("uvm did not exit after k: %s", e.String())
			}
			if strings.Contains(e.String(), "panic") {
				t.Errorf("uvm stderr: %s", e.String())
			}
			_ = os.Remove(sock)
		})
	}
}
