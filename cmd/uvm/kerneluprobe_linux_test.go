//go:build linux && amd64

package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// uprobePMU returns the perf PMU type of the host kernel's uprobes, or
// skips (not root, no uprobe PMU).
func uprobePMU(t *testing.T) uint32 {
	b, err := os.ReadFile("/sys/bus/event_source/devices/uprobe/type")
	if err != nil {
		t.Skip("no perf uprobe PMU on this host")
	}
	if os.Geteuid() != 0 {
		t.Skip("perf uprobes need root")
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Skip("unreadable uprobe PMU type")
	}
	return uint32(n)
}

// fileOffset is a symbol's file offset in an ELF object (what the uprobe
// PMU's probe_offset wants).
func fileOffset(t *testing.T, path, sym string) uint64 {
	f, err := elf.Open(path)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	syms, _ := f.DynamicSymbols()
	more, _ := f.Symbols()
	for _, s := range append(syms, more...) {
		if s.Name != sym || s.Value == 0 {
			continue
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && s.Value >= p.Vaddr && s.Value < p.Vaddr+p.Memsz {
				return s.Value - p.Vaddr + p.Off
			}
		}
	}
	t.Skipf("%s has no symbol %s", path, sym)
	return 0
}

// kernelHits runs argv natively with a perf uprobe (counting mode) on
// lib+off attached from its execve, as the real kernel counts them.
func kernelHits(t *testing.T, pmu uint32, lib string, off uint64, ret bool, env []string, argv []string) uint64 {
	runtime.LockOSThread() // ptrace requests must come from the tracer thread
	defer runtime.UnlockOSThread()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil || !ws.Stopped() {
		t.Fatalf("child did not stop at exec: %v %v", err, ws)
	}
	path := append([]byte(lib), 0)
	attr := unix.PerfEventAttr{Type: pmu, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Ext1: uint64(uintptr(unsafe.Pointer(&path[0]))), Ext2: off, Bits: unix.PerfBitInherit}
	if ret {
		attr.Config = 1 // config:0 is retprobe (format/retprobe)
	}
	fd, err := unix.PerfEventOpen(&attr, pid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	runtime.KeepAlive(path)
	if err != nil {
		unix.Kill(pid, unix.SIGKILL)
		unix.PtraceDetach(pid)
		cmd.Wait()
		t.Skipf("perf_event_open(uprobe): %v", err)
	}
	defer unix.Close(fd)
	if err := unix.PtraceDetach(pid); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var b [8]byte
	if _, err := unix.Read(fd, b[:]); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

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
