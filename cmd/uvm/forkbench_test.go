package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkForkRoundTrip: fork+_exit+wait and fork+execve+wait round trips
// per second from a parent with a large resident heap (issue 23), under uvm
// and under qemu-user on the same host, with the ratios. The guest is
// testdata/bin/ARCH/forkbench; it times its own loops and checks every
// child's status. Sizes: UVM_FORKBENCH_MIB (default 1024) and
// UVM_FORKBENCH_N round trips per run (default 50). UVM_FORKBENCH_UVM names
// another uvm binary to measure instead of this one (a build from before
// copy-on-write fork, for the before/after table). Run with
//
//	go test ./cmd/uvm -run '^$' -bench ForkRoundTrip -benchtime 1x
func BenchmarkForkRoundTrip(b *testing.B) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		b.Skip("qemu-user and the amd64 guest's native run need an x86-64 Linux host")
	}
	mib := envInt(b, "UVM_FORKBENCH_MIB", 1024)
	n := envInt(b, "UVM_FORKBENCH_N", 50)
	uvmArgv := []string{"", "run", "-U", asUVMEnv, "--clean-env"}
	uvmEnv := []string{asUVMEnv + "=1", "HOME=/"}
	if alt := os.Getenv("UVM_FORKBENCH_UVM"); alt != "" {
		uvmArgv = []string{alt, "run", "--clean-env"}
		uvmEnv = []string{"HOME=/"}
	} else {
		exe, err := os.Executable()
		if err != nil {
			b.Fatal(err)
		}
		uvmArgv[0] = exe
	}
	for _, c := range []struct{ arch, qemu string }{
		{"arm64", "qemu-aarch64"},
		{"amd64", "qemu-x86_64"},
	} {
		b.Run(c.arch, func(b *testing.B) {
			bin, err := filepath.Abs(filepath.Join("..", "..", "testdata", "bin", c.arch, "forkbench"))
			if err != nil {
				b.Fatal(err)
			}
			args := []string{bin, strconv.Itoa(mib), strconv.Itoa(n)}
			ue, ux := forkRates(b, append(append([]string{}, uvmArgv...), args...), uvmEnv)
			b.ReportMetric(ue, "uvm-fork+exit/s")
			b.ReportMetric(ux, "uvm-fork+exec/s")
			q, err := exec.LookPath(c.qemu)
			if err != nil {
				b.Log(c.qemu + " not installed: no qemu-user comparison")
				return
			}
			// The qemu guest's child execs qemu with the program, as
			// binfmt_misc would (qemu-user does not follow execve).
			qe, qx := forkRates(b, append([]string{q}, append(args, q)...), []string{"HOME=/"})
			b.ReportMetric(qe, "qemu-fork+exit/s")
			b.ReportMetric(qx, "qemu-fork+exec/s")
			b.ReportMetric(ue/qe, "uvm/qemu-exit")
			b.ReportMetric(ux/qx, "uvm/qemu-exec")
		})
	}
}

// forkRates runs the forkbench command line b.N times and returns the mean
// of the rates it prints (fork_exit_per_s, fork_exec_per_s).
func forkRates(b *testing.B, argv, env []string) (exitRate, execRate float64) {
	b.Helper()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%v: %v\n%s%s", argv, err, out, stderr.Bytes())
		}
		got := map[string]float64{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				got[k] = f
			}
		}
		e, ok1 := got["fork_exit_per_s"]
		x, ok2 := got["fork_exec_per_s"]
		if !ok1 || !ok2 {
			b.Fatalf("%v: no rates in the output:\n%s%s", argv, out, stderr.Bytes())
		}
		exitRate += e
		execRate += x
	}
	return exitRate / float64(b.N), execRate / float64(b.N)
}

// envInt reads a positive integer from the environment variable name, or
// returns def when it is unset.
func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		tb.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}
