package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/uvm-emu/uvm/internal/tasks"
)

// BenchmarkLoopbackTCP: bytes/s through one in-kernel loopback TCP
// connection between two guest threads, and connections/s, under uvm
// (parallel mode) and under qemu-user on the same host (skipped without
// it); the uvm/qemu ratio is reported. Run with
//
//	go test ./cmd/uvm -run '^$' -bench LoopbackTCP -benchtime 3x
func BenchmarkLoopbackTCP(b *testing.B) {
	for _, arch := range guestArches {
		bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "sock_bench"))
		qemu := map[string]string{"amd64": "qemu-x86_64", "arm64": "qemu-aarch64"}[arch]
		for _, c := range []struct {
			mode, unit string
			n, per     int // argument; units per argument unit
		}{{"bytes", "MB/s", 64, 1 << 20}, {"conns", "conns/s", 1000, 1}} {
			var uvmRate float64
			b.Run(arch+"/"+c.mode+"/uvm", func(b *testing.B) {
				var elapsed time.Duration
				for i := 0; i < b.N; i++ {
					k := tasks.NewKernel(tasks.Options{Stdout: io.Discard, Stderr: io.Discard})
					start := time.Now()
					tg, err := k.Start(bin, []string{"sock_bench", c.mode, strconv.Itoa(c.n)})
					if err != nil {
						b.Fatal(err)
					}
					if st := tg.Wait(); st.ShellCode() != 0 {
						b.Fatalf("status %d", st.ShellCode())
					}
					elapsed += time.Since(start)
				}
				uvmRate = rate(c.n, c.per, b.N, elapsed, c.unit)
				b.ReportMetric(uvmRate, c.unit)
			})
			b.Run(arch+"/"+c.mode+"/qemu", func(b *testing.B) {
				if _, err := exec.LookPath(qemu); err != nil {
					b.Skipf("no %s", qemu)
				}
				var elapsed time.Duration
				for i := 0; i < b.N; i++ {
					start := time.Now()
					if out, err := exec.Command(qemu, bin, c.mode, strconv.Itoa(c.n)).CombinedOutput(); err != nil {
						b.Fatalf("%v: %s", err, out)
					}
					elapsed += time.Since(start)
				}
				q := rate(c.n, c.per, b.N, elapsed, c.unit)
				b.ReportMetric(q, c.unit)
				if uvmRate > 0 {
					b.ReportMetric(uvmRate/q, "uvm/qemu")
				}
			})
		}
	}
}

func rate(n, per, runs int, elapsed time.Duration, unit string) float64 {
	units := float64(n) * float64(per) * float64(runs)
	if unit == "MB/s" {
		units /= 1 << 20
	}
	return units / elapsed.Seconds()
}
