package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProcfs checks uvm's synthetic /proc with testdata/src/procfs.c on
// both arches:
//   - its checks (own, thread and child directories, fd/fdinfo, the
//     machine files against what the process knows otherwise) pass in
//     both modes, as natively (expected/procfs.out, recorded natively);
//   - `procfs dump` under --det prints the machine files and the
//     process's own files byte for byte as expected/procfs-dump.ARCH.out
//     (the program's path is replaced by @BIN@), the same whatever the
//     host's GOMAXPROCS (uvm in subprocesses at GOMAXPROCS 1 and 4);
//   - without a --mem-limit, --det reports DetMemTotal, not the host's;
//   - x86-64 cpuinfo flags follow --cpu;
//   - as root (outside --det the guest is the host user), `procfs perm`
//     checks the ptrace-access rule of environ, auxv, mem, maps, cwd, fd/.
func TestProcfs(t *testing.T) {
	want, err := os.ReadFile("../../testdata/expected/procfs.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			bin := cacheGuest(t, arch, "procfs")
			for _, det := range []bool{true, false} {
				if !det && raceEnabled {
					continue // the guest's own races on its memory (README)
				}
				out, stderr, code := runUVM(t, det, nil, bin)
				if code != 0 || out != string(want) {
					t.Errorf("det=%v: exit %d, output:\n%s\nwant:\n%s\nstderr: %s", det, code, out, want, stderr)
				}
			}

			golden, err := os.ReadFile("../../testdata/expected/procfs-dump." + arch + ".out")
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"--clean-env", "--det", "--mem-limit", "256M", bin, "dump"}
			var first string
			for _, procs := range []int{1, 4} {
				r := runUVMHost(t, hostVariant{gomaxprocs: procs}, args, nil)
				if r.code != 0 {
					t.Fatalf("GOMAXPROCS=%d: exit %d, stderr: %s", procs, r.code, r.stderr)
				}
				if procs == 1 {
					first = r.stdout
				} else if r.stdout != first {
					t.Errorf("--det dump differs between host GOMAXPROCS 1 and 4:\n%s\n----\n%s", first, r.stdout)
				}
			}
			got := normProcfsDump(first, bin)
			if os.Getenv("UVM_UPDATE_GOLDEN") == "1" {
				if err := os.WriteFile(filepath.Join("../../testdata/expected", "procfs-dump."+arch+".out"), []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if got != string(golden) {
				t.Errorf("--det dump differs from expected/procfs-dump.%s.out (UVM_UPDATE_GOLDEN=1 rewrites it):\n%s", arch, got)
			}

			out, stderr, code := runUVM(t, true, nil, bin, "dump")
			if code != 0 || !strings.Contains(out, "MemTotal:        8388608 kB\n") {
				t.Errorf("--det without --mem-limit: exit %d, stderr %s, meminfo:\n%s", code, stderr, out)
			}

			if arch == "amd64" {
				v2, _, _ := runUVM(t, true, []string{"--cpu", "x86-64-v2"}, bin, "dump")
				hasAVX2 := func(s string) bool {
					for _, l := range strings.Split(s, "\n") {
						if strings.HasPrefix(l, "flags\t\t:") {
							return strings.Contains(l+" ", " avx2 ")
						}
					}
					return false
				}
				if hasAVX2(v2) || !hasAVX2(first) {
					t.Errorf("cpuinfo flags: avx2 with x86-64-v2 %v, with the default x86-64-v3 %v", hasAVX2(v2), hasAVX2(first))
				}
			}

			if os.Geteuid() != 0 || raceEnabled {
				t.Log("not root, or -race (parallel mode): the perm part is skipped")
				return
			}
			out, stderr, code = runUVM(t, false, nil, bin, "perm")
			if code != 0 || out != "perm: ok\n" {
				t.Errorf("perm: exit %d, output:\n%s\nstderr: %s", code, out, stderr)
			}
		})
	}
}

// normProcfsDump replaces the guest binary's path (a temporary directory
// of varying length) with @BIN@ and, in the sections that named it, the
// byte count of the section header, which depends on that length.
func normProcfsDump(dump, bin string) string {
	sections := strings.SplitAfter(dump, "\n== ")
	for i, sec := range sections {
		if !strings.Contains(sec, bin) {
			continue
		}
		sec = strings.ReplaceAll(sec, bin, "@BIN@")
		if nl := strings.IndexByte(sec, '\n'); nl > 0 {
			head := sec[:nl]
			if open := strings.LastIndex(head, " ("); open > 0 && strings.HasSuffix(head, ")") {
				head = head[:open] + " (@BIN@-dependent)"
			}
			sec = head + sec[nl:]
		}
		sections[i] = sec
	}
	return strings.Join(sections, "")
}
