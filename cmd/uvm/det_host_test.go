package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvm-emu/uvm/internal/tasks"
)

// The promise of --det is that the same program, arguments, environment
// and seed give the same bytes whatever the host: its GOMAXPROCS, its
// cores and the affinity uvm runs with, its load. A run inside the test
// process cannot vary any of that, so the determinism tests run uvm in
// subprocesses — the test binary itself, re-executed as uvm (TestMain) —
// over a matrix of host conditions, and compare everything the guest
// produced: stdout, stderr (with --trace-hash: the hash of every syscall
// with its arguments and result, every signal and thread event) and the
// exit status.

// asUVMEnv makes the re-executed test binary act as the uvm command.
const asUVMEnv = "UVM_TEST_AS_UVM"

func TestMain(m *testing.M) {
	if os.Getenv(asUVMEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// hostVariant is one host condition of the matrix.
type hostVariant struct {
	gomaxprocs int
	taskset    bool // pinned to host CPU 0 (taskset -c 0)
	burn       bool // CPU-burning neighbours run meanwhile
}

func (v hostVariant) String() string {
	s := fmt.Sprintf("GOMAXPROCS=%d", v.gomaxprocs)
	if v.taskset {
		s = "taskset -c 0 " + s
	}
	if v.burn {
		s += " +burner"
	}
	return s
}

var tasksetOK = sync.OnceValue(func() bool {
	p, err := exec.LookPath("taskset")
	return err == nil && exec.Command(p, "-c", "0", "true").Run() == nil
})

// hostMatrix is the set of host conditions every determinism test runs
// its guest under: GOMAXPROCS 1, 2 and 8, each with and without taskset
// -c 0 (skipped where taskset is missing or refused), and GOMAXPROCS 8
// beside CPU burners. -short keeps the extremes; -race (about ten times
// slower) GOMAXPROCS 1, pinned 8 and 8 beside burners.
func hostMatrix(t *testing.T) []hostVariant {
	if raceEnabled {
		return []hostVariant{{gomaxprocs: 1}, {gomaxprocs: 8, taskset: tasksetOK()}, {gomaxprocs: 8, burn: true}}
	}
	procs := []int{1, 2, 8}
	if testing.Short() {
		procs = []int{1, 8}
	}
	var vs []hostVariant
	for _, pinned := range []bool{false, true} {
		if pinned && !tasksetOK() {
			t.Logf("taskset -c 0 unavailable: pinned variants skipped")
			break
		}
		for _, p := range procs {
			vs = append(vs, hostVariant{gomaxprocs: p, taskset: pinned})
		}
	}
	return append(vs, hostVariant{gomaxprocs: 8, burn: true})
}

type uvmResult struct {
	stdout, stderr string
	code           int
}

// runUVMHost runs `uvm ARGS` as a subprocess under v. The environment is
// fixed (HOME only, plus GOMAXPROCS), and the guest inherits it: that
// uvm's GOMAXPROCS is not the guest's is part of what is tested.
func runUVMHost(t *testing.T, v hostVariant, args []string, stdin []byte) uvmResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{exe, "run", "-U", asUVMEnv}, args...)
	if v.taskset {
		argv = append([]string{"taskset", "-c", "0"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{asUVMEnv + "=1", "HOME=/", fmt.Sprintf("GOMAXPROCS=%d", v.gomaxprocs)}
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if v.burn {
		stop := burnCPUs()
		defer stop()
	}
	err = cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", v, err)
		}
		code = ee.ExitCode()
	}
	return uvmResult{o.String(), e.String(), code}
}

// burnCPUs keeps every host CPU busy until stop is called.
func burnCPUs() (stop func()) {
	var quit atomic.Bool
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(1)
			for !quit.Load() {
				for range 1 << 12 {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			_ = x
		}()
	}
	return func() { quit.Store(true); wg.Wait() }
}

// detHostMatrix runs `uvm ARGS` (ARGS should contain --det or
// --det-chaos, and usually --trace-hash) under every host variant, fails
// the test at the first variant whose result differs from the first one,
// and returns the common result.
func detHostMatrix(t *testing.T, args []string, stdin []byte) uvmResult {
	t.Helper()
	var first uvmResult
	var firstV hostVariant
	for i, v := range hostMatrix(t) {
		r := runUVMHost(t, v, args, stdin)
		if i == 0 {
			first, firstV = r, v
			continue
		}
		if r != first {
			t.Fatalf("uvm %s is not host-independent:\n--- %s: status %d\nstdout %q\nstderr %q\n--- %s: status %d\nstdout %q\nstderr %q\n(rerun both with --trace FILE and diff)",
				strings.Join(args, " "), firstV, first.code, first.stdout, first.stderr, v, r.code, r.stdout, r.stderr)
		}
	}
	return first
}

// TestDetHostIndependent runs multi-threaded guests over the host matrix
// on both guest arches: detfib (8 goroutines of CPU-bound work: the Go
// runtime sizes itself from the CPU count, parks and wakes threads on
// futexes, preempts goroutines with SIGURG and reads the clock) in plain
// --det and with chaos quanta, go-preempt (preemption and a
// stop-the-world while a goroutine spins), sig_alarm (an interval
// timer on the virtual clock) and timers (POSIX, CPU-time, timerfd and
// signalfd timers). TestDetChaos and TestVirtualClock run the
// matrix over threads and clockloop.
func TestDetHostIndependent(t *testing.T) {
	chaos := []string{"--det-chaos", "--quantum", "3000", "--seed", "5"}
	type guest struct {
		name  string
		want  string // expected stdout; "" = testdata/expected/NAME.out
		modes [][]string
	}
	guests := []guest{
		{"go-detfib", detfibWant(), [][]string{{"--det"}, chaos}},
		{"go-preempt", "", [][]string{{"--det"}}},
		{"go-httpdet", "", [][]string{{"--det"}}},
		{"sig_alarm", "", [][]string{{"--det"}}},
		{"timers", "", [][]string{{"--det"}}},
	}
	if testing.Short() || raceEnabled {
		guests = guests[:1]
	}
	if raceEnabled {
		guests[0].modes = guests[0].modes[:1]
	}
	start := time.Now()
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			for _, g := range guests {
				t.Run(g.name, func(t *testing.T) {
					var bin string
					if n, ok := strings.CutPrefix(g.name, "go-"); ok {
						bin = filepath.Join(goGuestDir(t, arch), n)
					} else {
						bin, _ = filepath.Abs(filepath.Join("../../testdata/bin", arch, g.name))
					}
					want := g.want
					if want == "" {
						b, err := os.ReadFile("../../testdata/expected/" + g.name + ".out")
						if err != nil {
							t.Fatal(err)
						}
						want = string(b)
					}
					for _, mode := range g.modes {
						args := append(append([]string{}, mode...), "--trace-hash", bin)
						r := detHostMatrix(t, args, nil)
						if r.code != 0 || r.stdout != want || !strings.Contains(r.stderr, "trace-hash") {
							t.Errorf("%v: status %d, stdout %q (want %q), stderr %q", mode, r.code, r.stdout, want, r.stderr)
						}
					}
				})
			}
		})
	}
	t.Logf("%d host variants each: %v", len(hostMatrix(t)), time.Since(start))
}

// detfibWant is detfib's output: the guest sees tasks.DetCPUs CPUs (and so
// runs at GOMAXPROCS 4) whatever uvm's own GOMAXPROCS and the host's cores.
func detfibWant() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cpus %d gomaxprocs %d\n", tasks.DetCPUs, tasks.DetCPUs)
	for w := range 8 {
		fmt.Fprintf(&b, "%d [6765 10946 17711 28657 46368]\n", w)
	}
	return b.String()
}
