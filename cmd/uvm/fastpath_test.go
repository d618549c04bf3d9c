package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFastTrapsSameRun: the kernel's fast path (tasks/fastpath.go: syscalls
// and uprobe breakpoints handled inside the CPU's Run) changes nothing a
// guest or a user can see. Each deterministic run, with and without it
// (--slow-traps), gives the same output, the same event-stream hash and
// the same --stats: per-thread retired counts, context switches, virtual
// time, syscall counts and probe hits. The guests cover threads and
// futexes, signals interrupting and restarting syscalls, interval timers,
// fork and wait, ptrace (whose tracee takes the slow way) and uprobes and
// uretprobes of every kind, under fixed and seeded random quanta.
func TestFastTrapsSameRun(t *testing.T) {
	type guest struct {
		name string
		args []string
	}
	guests := []guest{
		{"threads", nil}, {"sysloop", nil}, {"sig_restart", nil}, {"sig_alarm", nil},
		{"sig_tgkill", nil}, {"timers", nil}, {"futex_shared", nil}, {"forkbench", []string{"1", "3"}},
		{"ptrace", nil}, {"epoll_wake", nil}, {"sock_unix", nil},
	}
	modes := [][]string{
		{"--det"},
		{"--det-chaos", "--quantum", "700", "--seed", "3"},
	}
	runOnce := func(t *testing.T, args []string) (string, string) {
		t.Helper()
		var o, e strings.Builder
		code := run(args, strings.NewReader(""), &o, &e)
		if code != 0 {
			t.Fatalf("uvm %s: status %d\n%s", strings.Join(args, " "), code, e.String())
		}
		return o.String(), e.String()
	}
	compare := func(t *testing.T, args []string) {
		t.Helper()
		fastOut, fastErr := runOnce(t, append([]string{"run"}, args...))
		slowOut, slowErr := runOnce(t, append([]string{"run", "--slow-traps"}, args...))
		if fastOut != slowOut {
			t.Errorf("stdout differs\n--- fast path\n%s\n--- slow traps\n%s", fastOut, slowOut)
		}
		if fastErr != slowErr {
			t.Errorf("stderr (stats, hash) differs\n--- fast path\n%s\n--- slow traps\n%s", fastErr, slowErr)
		}
		if !strings.Contains(fastErr, "trace-hash") || !strings.Contains(fastErr, "instructions retired") {
			t.Errorf("no hash or stats in stderr:\n%s", fastErr)
		}
	}
	for _, arch := range guestArches {
		for _, g := range guests {
			bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, g.name))
			for _, m := range modes {
				t.Run(arch+"/"+g.name+"/"+m[0], func(t *testing.T) {
					args := append(append(append([]string{}, m...), "--clean-env", "--trace-hash", "--stats", bin), g.args...)
					compare(t, args)
				})
			}
		}
		bin, _ := filepath.Abs(filepath.Join("../../uprobes/testdata/bin", arch, "probetargets"))
		probes := []string{"--uprobe", "t_nop", "--uprobe", "t_push", "--uprobe", "t_ret", "--uprobe", "t_branch",
			"--uprobe", "t_riprel", "--uprobe", "t_store",
			"--uretprobe", "t_push", "--uretprobe", "t_recurse", "--uretprobe", "t_deep", "--uretprobe", "t_forkret"}
		for _, c := range readProbeCases(t) {
			for _, m := range modes {
				t.Run(arch+"/probetargets/"+strings.ReplaceAll(c[0], " ", "_")+"/"+m[0], func(t *testing.T) {
					args := append(append(append(append([]string{}, m...), "--clean-env", "--trace-hash", "--stats"), probes...), bin)
					compare(t, append(args, strings.Fields(c[0])...))
				})
			}
		}
	}
}
