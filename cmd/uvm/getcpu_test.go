package main

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"testing"
)

var getcpuLine = regexp.MustCompile(`(?m)^tid (\d+): syscall 0 cpu (\d+) node (\d+), sched_getcpu (-?\d+)(?:, rdpid (\d+), tsc_aux (\d+))?$`)

// TestGetcpu runs the getcpu guest (seven threads, each reporting its CPU
// by the getcpu system call, glibc's sched_getcpu and, on x86-64, RDPID
// and RDTSCP) and checks that every route names the thread's virtual CPU:
// in --det thread id mod DetCPUs (4), with --model the CPU the model
// placed it on and that CPU's NUMA node (kunpeng916: 64 CPUs, 16 per
// node; the first thread on the last CPU, then 0, 1, …), in parallel
// mode a CPU below the guest's CPU count.
func TestGetcpu(t *testing.T) {
	for _, arch := range guestArches {
		for _, mode := range []string{"det", "model", "parallel"} {
			t.Run(arch+"/"+mode, func(t *testing.T) {
				args := []string{"run"}
				switch mode {
				case "det":
					args = append(args, "--det")
				case "model":
					args = append(args, "--det", "--model", "kunpeng916")
				}
				var o, e bytes.Buffer
				if code := run(append(args, "../../testdata/bin/"+arch+"/getcpu"), nil, &o, &e); code != 0 {
					t.Fatalf("status %d: %s", code, e.String())
				}
				lines := getcpuLine.FindAllStringSubmatch(o.String(), -1)
				if len(lines) != 7 {
					t.Fatalf("want 7 thread lines:\n%s", o.String())
				}
				for i, m := range lines {
					tid, cpu, node := getcpuAtoi(t, m[1]), getcpuAtoi(t, m[2]), getcpuAtoi(t, m[3])
					want, wantNode := -1, 0
					switch mode {
					case "det":
						want = tid % 4
					case "model":
						want = i - 1
						if i == 0 {
							want = 63
						}
						wantNode = want / 16
					case "parallel":
						if cpu >= runtime.NumCPU() {
							t.Errorf("%s: cpu %d of %d", m[0], cpu, runtime.NumCPU())
						}
						want = cpu
					}
					if cpu != want || node != wantNode || getcpuAtoi(t, m[4]) != cpu {
						t.Errorf("%s: want cpu %d node %d by every route", m[0], want, wantNode)
					}
					if arch == "amd64" {
						aux := fmt.Sprint(node<<12 | cpu)
						if m[5] != aux || m[6] != aux {
							t.Errorf("%s: want rdpid and tsc_aux %s (node << 12 | cpu)", m[0], aux)
						}
					}
				}
			})
		}
	}
}

func getcpuAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
