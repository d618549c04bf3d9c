package main

import (
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/uvm-emu/uvm/tasks"
)

// Guest benchmarks: whole programs under uvm, reporting guest MIPS and
// ns per guest instruction. Run with
//
//	go test ./cmd/uvm -run '^$' -bench Guest -benchtime 3x
func BenchmarkGuest(b *testing.B) {
	for _, arch := range guestArches {
		for _, c := range []struct {
			name string
			args []string
			det  bool
		}{
			{"fib", []string{"30"}, false},
			{"coremark", []string{"300"}, false},
			{"fib", []string{"30"}, true},
			{"threads", nil, true},
		} {
			label := arch + "/" + c.name
			if c.det {
				label += "-det"
			}
			b.Run(label, func(b *testing.B) {
				bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, c.name))
				var insns uint64
				var elapsed time.Duration
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					k := tasks.NewKernel(tasks.Options{Stdout: io.Discard, Stderr: io.Discard, Deterministic: c.det})
					start := time.Now()
					tg, err := k.Start(bin, append([]string{c.name}, c.args...))
					if err != nil {
						b.Fatal(err)
					}
					if st := tg.Wait(); st.ShellCode() != 0 {
						b.Fatalf("status %d", st.ShellCode())
					}
					elapsed += time.Since(start)
					insns += tg.Retired()
				}
				b.ReportMetric(float64(insns)/elapsed.Seconds()/1e6, "MIPS")
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(insns), "ns/insn")
				b.ReportMetric(float64(insns)/float64(b.N), "insns/op")
			})
		}
	}
}

// TestDeterministic: multi-threaded guests (C pthreads with a mutex and a
// condition variable; Go goroutines with channels and a mutex) give
// identical output and trace hash over 20 deterministic runs, alternating
// GOMAXPROCS=1 and 2, and (go-goroutines) in subprocesses over the host
// matrix.
func TestDeterministic(t *testing.T) {
	for _, arch := range guestArches {
		for _, name := range []string{"threads", "go-goroutines"} {
			t.Run(arch+"/"+name, func(t *testing.T) {
				var bin string
				if strings.HasPrefix(name, "go-") {
					bin = filepath.Join(goGuestDir(t, arch), strings.TrimPrefix(name, "go-"))
				} else {
					bin, _ = filepath.Abs(filepath.Join("../../testdata/bin", arch, name))
				}
				var first, firstHash string
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
				runs := 20
				if testing.Short() {
					runs = 4
				}
				for i := 0; i < runs; i++ {
					runtime.GOMAXPROCS(1 + i%2) // the same run at any GOMAXPROCS
					var o, e strings.Builder
					code := run([]string{"run", "--clean-env", "--det", "--seed", "7", "--trace-hash", bin}, strings.NewReader(""), &o, &e)
					if code != 0 {
						t.Fatalf("status %d: %s", code, e.String())
					}
					hash := e.String()
					if i == 0 {
						first, firstHash = o.String(), hash
						continue
					}
					if o.String() != first || hash != firstHash {
						t.Fatalf("run %d differs:\nstdout %q vs %q\nhash %q vs %q", i, o.String(), first, hash, firstHash)
					}
				}
				if name == "threads" {
					return // in the host matrix with chaos quanta: TestDetChaos
				}
				// And in subprocesses under every host condition (det_host_test.go).
				if r := detHostMatrix(t, []string{"--clean-env", "--det", "--seed", "7", "--trace-hash", bin}, nil); r.stdout != first || r.stderr != firstHash {
					t.Fatalf("subprocesses differ from in-process runs:\nstdout %q vs %q\nhash %q vs %q", r.stdout, first, r.stderr, firstHash)
				}
			})
		}
	}
}
