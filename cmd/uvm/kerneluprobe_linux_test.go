//go:build linux && amd64

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestUprobesMatchKernel compares uvm's uprobe and uretprobe hit counts on
// shared-library functions with the host kernel's, on the same dynamic
// x86-64 programs and libc: perf_event_open with the uprobe PMU in
// counting mode, attached at the program's execve. Deterministic,
// single-threaded programs only; skips where perf uprobes are unavailable.
func TestUprobesMatchKernel(t *testing.T) {
	pmu := uprobePMU(t)
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		t.Skip("no " + libc)
	}
	dir := t.TempDir()
	os.WriteFile(dir+"/a", []byte("b\na\nc\n"), 0o644)
	os.WriteFile(dir+"/b", []byte("x\n"), 0o644)
	dyn, _ := os.Getwd()
	dyn += "/../../testdata/bin/amd64/dynhello"
	env := []string{"LC_ALL=C"}
	programs := [][]string{
		{dyn, "x", "y"},
		{"/bin/ls", "-l", dir},
		{"/usr/bin/sort", dir + "/a"},
		{"/bin/echo", "hello"},
	}
	for _, argv := range programs {
		if _, err := os.Stat(argv[0]); err != nil {
			continue
		}
		for _, sym := range []string{"malloc", "free", "memcpy", "strlen"} {
			for _, ret := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/ret=%v", argv[0][strings.LastIndexByte(argv[0], '/')+1:], sym, ret)
				t.Run(name, func(t *testing.T) {
					off := fileOffset(t, libc, sym)
					want := kernelHits(t, pmu, libc, off, ret, env, argv)
					flag := "--uprobe"
					if ret {
						flag = "--uretprobe"
					}
					spec := fmt.Sprintf("%s:%#x", libc, off)
					var o, e bytes.Buffer
					args := append([]string{"run", "--clean-env", "-E", "LC_ALL=C", flag, spec}, argv...)
					run(args, nil, &o, &e)
					got := uint64(0)
					for _, line := range strings.Split(e.String(), "\n") {
						if f := strings.Fields(line); len(f) == 3 && f[0] == spec {
							got, _ = strconv.ParseUint(f[2], 10, 64)
						}
					}
					if got != want {
						t.Errorf("uvm counts %d hits, the kernel %d\n%s", got, want, e.String())
					}
				})
			}
		}
	}
}
