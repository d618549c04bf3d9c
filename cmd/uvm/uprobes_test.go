package main

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestUprobesEndToEnd runs uprobes/testdata's probetargets under uvm with
// uprobes and uretprobes on every target (each first-instruction kind the
// kernel treats differently), in every mode of the program (loops,
// recursion, longjmp, threads, SIGALRM, tgkill, SIGSEGV in a probed
// instruction, signal handlers running probed code, fork, exec), for both
// values of the SingleStepSiglock switch, and checks that the program's
// output is exactly its unprobed output and that probes were hit.
func TestUprobesEndToEnd(t *testing.T) {
	cases := readProbeCases(t)
	cases = append(cases, [2]string{"exec", "probetargets.exec.out"})
	hitLine := regexp.MustCompile(`(?m)^(\S+)\s+(uprobe|uretprobe)\s+(\d+)$`)
	for _, arch := range guestArches {
		bin, _ := filepath.Abs(filepath.Join("../../uprobes/testdata/bin", arch, "probetargets"))
		probes := []string{"--uprobe", "t_nop", "--uprobe", "t_push", "--uprobe", "t_ret", "--uprobe", "t_branch",
			"--uprobe", "t_riprel", "--uprobe", "t_store",
			"--uretprobe", "t_push", "--uretprobe", "t_recurse", "--uretprobe", "t_deep", "--uretprobe", "t_forkret"}
		if arch == "amd64" {
			probes = append(probes, "--uprobe", "t_literal") // arm64 rejects LDR (literal)
		}
		for _, siglock := range []string{"false", "true"} {
			for _, c := range cases {
				name := arch + "/siglock=" + siglock + "/" + strings.ReplaceAll(c[0], " ", "_")
				t.Run(name, func(t *testing.T) {
					want, err := os.ReadFile(filepath.Join("../../uprobes/testdata/expected", c[1]))
					if err != nil {
						t.Fatal(err)
					}
					args := append([]string{"run", "--det", "--clean-env", "--uprobe-opt", "siglock=" + siglock}, probes...)
					args = append(args, bin)
					args = append(args, strings.Fields(c[0])...)
					var o, e strings.Builder
					code := run(args, strings.NewReader(""), &o, &e)
					if code != 0 || o.String() != string(want) {
						t.Fatalf("status %d\n--- stdout\n%s\n--- want\n%s\n--- stderr\n%s", code, o.String(), want, e.String())
					}
					total := 0
					for _, m := range hitLine.FindAllStringSubmatch(e.String(), -1) {
						n, _ := strconv.Atoi(m[3])
						total += n
					}
					if total == 0 {
						t.Errorf("no probe hits:\n%s", e.String())
					}
				})
			}
		}
	}
}

// TestUprobeHitCounts: hit counts equal call counts, per probe kind.
func TestUprobeHitCounts(t *testing.T) {
	for _, arch := range guestArches {
		bin, _ := filepath.Abs(filepath.Join("../../uprobes/testdata/bin", arch, "probetargets"))
		var o, e strings.Builder
		code := run([]string{"run", "--det", "--uprobe", "t_nop", "--uprobe", "t_push", "--uprobe", "t_ret",
			"--uprobe", "t_branch", "--uprobe", "t_riprel", "--uretprobe", "t_push", bin, "loop", "1000"}, strings.NewReader(""), &o, &e)
		if code != 0 {
			t.Fatalf("%s: status %d: %s", arch, code, e.String())
		}
		for _, p := range []string{"t_nop", "t_push", "t_ret", "t_branch", "t_riprel"} {
			if !regexp.MustCompile(`(?m)^` + p + `\s+uprobe\s+1000$`).MatchString(e.String()) {
				t.Errorf("%s: %s: want 1000 hits in\n%s", arch, p, e.String())
			}
		}
		if !regexp.MustCompile(`(?m)^t_push\s+uretprobe\s+1000$`).MatchString(e.String()) {
			t.Errorf("%s: t_push uretprobe: want 1000 hits in\n%s", arch, e.String())
		}
	}
}

// TestProbeLogLocation: every --probe-log line names the probed file, the
// file offset (the kernel's inode:offset key) and the symbol with the
// offset into it, for symbol, symbol+offset and raw-address specs.
func TestProbeLogLocation(t *testing.T) {
	for _, arch := range guestArches {
		bin, _ := filepath.Abs(filepath.Join("../../uprobes/testdata/bin", arch, "probetargets"))
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.Symbols()
		f.Close()
		var push uint64
		for _, s := range syms {
			if s.Name == "t_push" {
				push = s.Value
			}
		}
		log := filepath.Join(t.TempDir(), "log")
		var o, e strings.Builder
		code := run([]string{"run", "--det", "--probe-log", log, "--uprobe", "t_nop", "--uretprobe", "t_push",
			"--uprobe", fmt.Sprintf("%#x", push), bin, "loop", "2"}, strings.NewReader(""), &o, &e)
		if code != 0 {
			t.Fatalf("%s: status %d: %s", arch, code, e.String())
		}
		b, _ := os.ReadFile(log)
		for _, want := range []string{
			`(?m)^uprobe tid=\d+ probe=t_nop file=probetargets off=0x[0-9a-f]+ sym=t_nop\+0x0 pc=`,
			`(?m)^uretprobe tid=\d+ probe=t_push file=probetargets off=0x[0-9a-f]+ sym=t_push\+0x0 func=`,
			fmt.Sprintf(`(?m)^uprobe tid=\d+ probe=%#x file=probetargets off=0x[0-9a-f]+ sym=t_push\+0x0 pc=%#x `, push, push),
		} {
			if !regexp.MustCompile(want).Match(b) {
				t.Errorf("%s: no line matching %s in\n%s", arch, want, b)
			}
		}
	}
}

// TestUprobeRejected: the kernel's refusals fail before the guest starts.
func TestUprobeRejected(t *testing.T) {
	bin, _ := filepath.Abs("../../uprobes/testdata/bin/arm64/probetargets")
	var o, e strings.Builder
	code := run([]string{"run", "--uprobe", "t_literal", bin, "loop", "1"}, strings.NewReader(""), &o, &e)
	if code != 2 || o.Len() != 0 || !strings.Contains(e.String(), "EINVAL") {
		t.Errorf("status %d, stdout %q, stderr %q: want status 2 and the kernel's reason", code, o.String(), e.String())
	}
	code = run([]string{"run", "--uprobe", "no_such_symbol", bin, "loop", "1"}, strings.NewReader(""), &o, &e)
	if code != 2 {
		t.Errorf("unknown symbol: status %d", code)
	}
}

func readProbeCases(t *testing.T) [][2]string {
	f, err := os.Open("../../uprobes/testdata/expected/probetargets.cases")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		args, file, ok := strings.Cut(sc.Text(), "\t")
		if ok {
			out = append(out, [2]string{args, file})
		}
	}
	return out
}

// TestGoUretprobeStackCopy: a uretprobe on a deeply recursive Go function
// breaks the Go runtime's stack copying ("unexpected return pc … called
// from" the trampoline), as on Linux (golang/go#22008); uvm reproduces the
// failure deterministically and says why.
func TestGoUretprobeStackCopy(t *testing.T) {
	for _, arch := range guestArches {
		bin := filepath.Join(goGuestDir(t, arch), "deeprec")
		var o, e strings.Builder
		code := run([]string{"run", "--det", "--uretprobe", "main.rec", bin}, strings.NewReader(""), &o, &e)
		if code != 2 || !strings.Contains(e.String(), "unexpected return pc") {
			t.Fatalf("%s: status %d; the Go runtime should have thrown; stderr:\n%.2000s", arch, code, e.String())
		}
		if !strings.Contains(e.String(), "golang/go#22008") {
			t.Errorf("%s: no explanation in stderr:\n%.2000s", arch, e.String())
		}
	}
}
