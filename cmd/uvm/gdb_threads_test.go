package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rspCmd sends one packet and returns the reply (console output packets
// skipped).
func rspCmd(t *testing.T, p *rsp, pkt string) string {
	t.Helper()
	p.send(t, pkt)
	for {
		if r := p.reply(t, 60*time.Second); r == "OK" || !strings.HasPrefix(r, "O") {
			return r
		}
	}
}

// TestGDBThreadEvents: with QThreadEvents:1 (gdbserver's thread create
// and exit events, which gdb asks for in non-stop mode) every thread the
// program creates stops it before its first instruction (T05create:, the
// new thread listed, its clone return value 0) and every thread that
// exits while others remain stops it with its exit status (w00;, the
// thread no longer listed); the run's output is unchanged, and in --det
// its trace hash too.
func TestGDBThreadEvents(t *testing.T) {
	hashRE := regexp.MustCompile(`trace-hash ([0-9a-f]+)`)
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "expected", "threads.out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"arm64", "amd64"} {
		for _, det := range []bool{false, true} {
			if !det && raceEnabled {
				// Guest threads share guest memory without host
				// synchronisation, which the race detector reports.
				continue
			}
			name := arch
			argv := []string{"run", "--clean-env"}
			if det {
				name += "-det"
				argv = append(argv, "--det", "--quantum", "5000", "--trace-hash")
			}
			t.Run(name, func(t *testing.T) {
				bin := filepath.Join("..", "..", "testdata", "bin", arch, "threads")
				var hash []string // without the debugger
				if det {
					var o, e bytes.Buffer
					run(append(argv[:len(argv):len(argv)], bin), strings.NewReader(""), &o, &e)
					if hash = hashRE.FindStringSubmatch(e.String()); hash == nil {
						t.Fatalf("no trace hash: %s", e.String())
					}
				}
				sock := filepath.Join(t.TempDir(), "gdb.sock")
				argv := append(argv, "-g", "unix:"+sock, "--gdb-wait", bin)
				var o, e lockedBuffer
				done := make(chan int, 1)
				go func() { done <- run(argv, strings.NewReader(""), &o, &e) }()
				var c net.Conn
				for i := 0; ; i++ {
					if c, err = net.Dial("unix", sock); err == nil {
						break
					}
					if i == 500 {
						t.Fatalf("uvm did not listen on %s; stderr:\n%s", sock, e.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
				defer c.Close()
				p := &rsp{c: c, r: bufio.NewReader(c)}
				cmd := func(pkt string) string { t.Helper(); return rspCmd(t, p, pkt) }
				if r := cmd("qSupported:multiprocess+;QThreadEvents+"); !strings.Contains(r, ";QThreadEvents+") {
					t.Fatalf("qSupported: %q", r)
				}
				if r := cmd("QThreadEvents:1"); r != "OK" {
					t.Fatalf("QThreadEvents:1: %q", r)
				}
				first := cmd("?")
				pid, _, _ := strings.Cut(strings.TrimPrefix(first[strings.Index(first, "thread:"):], "thread:p"), ".")
				created, exited := map[string]bool{}, map[string]bool{}
				var last string
				for i := 0; i < 100; i++ {
					r := cmd("vCont;c")
					if strings.HasPrefix(r, "W") || strings.HasPrefix(r, "X") {
						last = r
						break
					}
					threads := cmd("qfThreadInfo")
					switch {
					case strings.HasPrefix(r, "T05create:;thread:p"+pid+"."):
						tid := strings.TrimSuffix(strings.TrimPrefix(r, "T05create:;thread:p"+pid+"."), ";")
						if created[tid] || !strings.Contains(threads+",", "p"+pid+"."+tid+",") {
							t.Errorf("create of %s: again, or not listed in %q", tid, threads)
						}
						created[tid] = true
						if r := cmd("Hgp" + pid + "." + tid); r != "OK" {
							t.Fatalf("Hg %s: %q", tid, r)
						}
						if r := cmd("p0"); r != "0000000000000000" {
							t.Errorf("new thread %s: return register %s, want 0 (it has not run)", tid, r)
						}
					case strings.HasPrefix(r, "w0;p"+pid+"."):
						tid := strings.TrimPrefix(r, "w0;p"+pid+".")
						if !created[tid] || exited[tid] || strings.Contains(threads+",", "p"+pid+"."+tid+",") {
							t.Errorf("exit of %s: not created, twice, or still listed in %q", tid, threads)
						}
						exited[tid] = true
						if r := cmd("?"); !strings.HasPrefix(r, "T05thread:p"+pid+".") {
							t.Errorf("? after a thread exit: %q", r)
						}
					default:
						t.Fatalf("unexpected stop %q", r)
					}
				}
				if len(created) != 4 || len(exited) != 4 || last != "W00;process:"+pid {
					t.Errorf("created %v, exited %v, last stop %q", created, exited, last)
				}
				c.Close()
				if code := <-done; code != 0 || o.String() != string(want) {
					t.Errorf("uvm status %d, stdout %q; stderr:\n%s", code, o.String(), e.String())
				}
				// In --det the stops leave the schedule as it was.
				if g := hashRE.FindStringSubmatch(e.String()); det && (g == nil || g[1] != hash[1]) {
					t.Errorf("trace hash with thread events %v, without the debugger %s", g, hash[1])
				}
			})
		}
	}
}
