package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uvm-emu/uvm/internal/tasks"
)

// Guest benchmarks: whole programs under uvm, reporting guest MIPS and
// ns per guest instruction, and, where qemu-user is on PATH (and for
// x86-64 guests on an x86-64 host, natively), the same program's time
// there as the ratio x-qemu (x-native) = uvm time / qemu time. Run with
//
//	go test ./cmd/uvm -run '^$' -bench Guest -benchtime 3x
//
// scripts/bench-compare runs these and the round-trip benchmarks below
// against a saved baseline.
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
			{"go-fib", []string{"27"}, false},
		} {
			label := arch + "/" + c.name
			if c.det {
				label += "-det"
			}
			b.Run(label, func(b *testing.B) {
				bin := benchBin(b, arch, c.name)
				var insns uint64
				var elapsed time.Duration
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					d, n := runBenchGuest(b, bin, c.args, c.det)
					elapsed += d
					insns += n
				}
				b.ReportMetric(float64(insns)/elapsed.Seconds()/1e6, "MIPS")
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(insns), "ns/insn")
				b.ReportMetric(float64(insns)/float64(b.N), "insns/op")
				if !c.det {
					reportOracleRatios(b, arch, bin, c.args, b.N, elapsed)
				}
			})
		}
	}
}

// benchBin is the guest program name on arch: a committed C binary, or
// (go-NAME) a Go guest built for the test run.
func benchBin(b *testing.B, arch, name string) string {
	if strings.HasPrefix(name, "go-") {
		return filepath.Join(goGuestDir(b, arch), strings.TrimPrefix(name, "go-"))
	}
	bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, name))
	return bin
}

// runBenchGuest runs bin with args in-process to its exit (status 0
// required) and returns the wall time from start to exit and the
// instructions it retired.
func runBenchGuest(b *testing.B, bin string, args []string, det bool) (time.Duration, uint64) {
	k := tasks.NewKernel(tasks.Options{Stdout: io.Discard, Stderr: io.Discard, Deterministic: det})
	start := time.Now()
	tg, err := k.Start(bin, append([]string{filepath.Base(bin)}, args...))
	if err != nil {
		b.Fatal(err)
	}
	if st := tg.Wait(); st.ShellCode() != 0 {
		b.Fatalf("status %d", st.ShellCode())
	}
	return time.Since(start), tg.Retired()
}

// reportOracleRatios runs the program n times under qemu-user (when
// qemu-ARCH is on PATH) and natively (when the host is arch) with the
// timer stopped, and reports uvm's time over theirs: x-qemu, x-native.
func reportOracleRatios(b *testing.B, arch, bin string, args []string, n int, uvm time.Duration) {
	b.StopTimer()
	defer b.StartTimer()
	qemu := map[string]string{"amd64": "qemu-x86_64", "arm64": "qemu-aarch64"}[arch]
	if q, err := exec.LookPath(qemu); err == nil {
		if d, ok := timeHostRuns(b, n, q, append([]string{bin}, args...)); ok {
			b.ReportMetric(float64(uvm)/float64(d), "x-qemu")
		}
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == arch {
		if d, ok := timeHostRuns(b, n, bin, args); ok {
			b.ReportMetric(float64(uvm)/float64(d), "x-native")
		}
	}
}

// timeHostRuns runs name args n times as a host process and returns the
// total wall time (ok false, logged, if a run fails).
func timeHostRuns(b *testing.B, n int, name string, args []string) (time.Duration, bool) {
	var total time.Duration
	for i := 0; i < n; i++ {
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Logf("%s %v: %v", name, args, err)
			return 0, false
		}
		total += time.Since(start)
	}
	return total, true
}

// BenchmarkSyscall is the syscall round trip: the guest's syscall/svc,
// uvm's exit from the interpreter, the kernel's dispatch and handler, and
// re-entry; one op is one getpid (testdata/src/sysloop.c, b.N calls in one
// guest run, so start-up is amortised). allocs/op are per getpid.
func BenchmarkSyscall(b *testing.B) {
	benchSysloop(b, "getpid")
}

// BenchmarkSignal is the signal round trip: one op is a self-directed
// tgkill(SIGUSR1), its delivery to a handler (frame set-up) and the
// handler's rt_sigreturn.
func BenchmarkSignal(b *testing.B) {
	benchSysloop(b, "signal")
}

func benchSysloop(b *testing.B, mode string) {
	for _, arch := range guestArches {
		b.Run(arch, func(b *testing.B) {
			bin := benchBin(b, arch, "sysloop")
			args := []string{mode, strconv.Itoa(b.N)}
			b.ReportAllocs()
			b.ResetTimer()
			d, insns := runBenchGuest(b, bin, args, false)
			b.ReportMetric(float64(insns)/float64(b.N), "insns/op")
			reportOracleRatios(b, arch, bin, args, 1, d)
		})
	}
}

// BenchmarkUprobeHit is one uprobe (uretprobe) hit: the embedded trigger
// guest calls uprobe_target_nop b.N times with a probe whose consumer
// counts; one op is one hit (entry trap, handler chain, and for the
// uretprobe the trampoline's second trap).
func BenchmarkUprobeHit(b *testing.B) {
	for _, arch := range guestArches {
		for _, name := range []string{"trig-uprobe-nop", "trig-uretprobe-nop"} {
			var def benchDef
			for _, d := range benchDefs {
				if d.name == name {
					def = d
				}
			}
			b.Run(arch+"/"+strings.TrimPrefix(name, "trig-"), func(b *testing.B) {
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				r, err := runOneBench(def, benchConfig{arch: arch, producers: 1, iters: uint64(b.N)}, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				d := time.Since(start)
				if r.Hits != uint64(b.N) {
					b.Fatalf("%d hits, want %d", r.Hits, b.N)
				}
				b.ReportMetric(float64(b.N)/d.Seconds()/1e6, "Mhits/s")
			})
		}
	}
}

// TestSyscallNoAllocs: a getpid round trip and a signal round trip
// (tgkill, delivery to a handler, rt_sigreturn) allocate nothing (the
// difference between 1000 and 21000 calls of one guest, per call).
func TestSyscallNoAllocs(t *testing.T) {
	for _, mode := range []string{"getpid", "signal"} {
		testRoundTripNoAllocs(t, mode)
	}
}

func testRoundTripNoAllocs(t *testing.T, mode string) {
	for _, arch := range guestArches {
		bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "sysloop"))
		mallocs := func(n int) uint64 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			k := tasks.NewKernel(tasks.Options{Stdout: io.Discard, Stderr: os.Stderr})
			tg, err := k.Start(bin, []string{"sysloop", mode, strconv.Itoa(n)})
			if err != nil {
				t.Fatal(err)
			}
			if st := tg.Wait(); st.ShellCode() != 0 {
				t.Fatalf("%s: status %d", arch, st.ShellCode())
			}
			runtime.ReadMemStats(&after)
			return after.Mallocs - before.Mallocs
		}
		mallocs(1000) // warm
		small, big := mallocs(1000), mallocs(21000)
		if per := (float64(big) - float64(small)) / 20000; per > 0.01 {
			t.Errorf("%s: %.3f allocations per %s (%d for 1000 calls, %d for 21000)", arch, per, mode, small, big)
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
