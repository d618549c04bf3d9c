//go:build linux && amd64

package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Helpers that ask the host kernel's uprobes (perf_event_open with the
// uprobe PMU, counting mode) for their verdict on native programs. They
// register nothing global: each probe lives as long as its perf fd.

// uprobePMUType returns the perf PMU type of the host kernel's uprobes, or
// the reason there is none (not root, no uprobe PMU).
func uprobePMUType() (uint32, string) {
	b, err := os.ReadFile("/sys/bus/event_source/devices/uprobe/type")
	if err != nil {
		return 0, "no perf uprobe PMU on this host"
	}
	if os.Geteuid() != 0 {
		return 0, "perf uprobes need root"
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, "unreadable uprobe PMU type"
	}
	return uint32(n), ""
}

// uprobePMU returns the perf PMU type of the host kernel's uprobes, or
// skips.
func uprobePMU(t *testing.T) uint32 {
	n, why := uprobePMUType()
	if why != "" {
		t.Skip(why)
	}
	return n
}

// fileOffset is a symbol's file offset in an ELF object (what the uprobe
// PMU's probe_offset wants).
func fileOffset(t *testing.T, path, sym string) uint64 {
	off, err := elfFileOffset(path, sym)
	if err != nil {
		t.Skip(err)
	}
	return off
}

func elfFileOffset(path, sym string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
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
				return s.Value - p.Vaddr + p.Off, nil
			}
		}
	}
	return 0, errors.New(path + " has no symbol " + sym)
}

// kernelProbe is one native run of a program under a real-kernel probe.
type kernelProbe struct {
	Errno  syscall.Errno // perf_event_open's error: the kernel rejected the probe (the program did not run)
	Hits   uint64
	Stdout []byte
	Status int // exit status, or 128+signal
	// TimedOut: the program ran past kernelRunTimeout and was killed (an
	// instruction this host's CPU and kernel never return from, such as
	// SYSENTER in 64-bit mode on some Intel hosts).
	TimedOut bool
}

// kernelRunTimeout bounds one native run; the oracle's programs finish
// in milliseconds.
const kernelRunTimeout = 30 * time.Second

// kernelRun runs argv natively with a perf uprobe (or uretprobe) on
// lib+off attached from its execve (inherited by its threads and
// children), as the real kernel counts them. off == noProbe runs it
// without a probe. Start failures are fatal.
func kernelRun(t *testing.T, pmu uint32, lib string, off uint64, ret bool, env, argv []string) kernelProbe {
	runtime.LockOSThread() // ptrace requests must come from the tracer thread
	defer runtime.UnlockOSThread()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil || !ws.Stopped() {
		t.Fatalf("child did not stop at exec: %v %v", err, ws)
	}
	var res kernelProbe
	fd := -1
	if off != noProbe {
		path := append([]byte(lib), 0)
		attr := unix.PerfEventAttr{Type: pmu, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Ext1: uint64(uintptr(unsafe.Pointer(&path[0]))), Ext2: off, Bits: unix.PerfBitInherit}
		if ret {
			attr.Config = 1 // config:0 is retprobe (format/retprobe)
		}
		var err error
		fd, err = unix.PerfEventOpen(&attr, pid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		runtime.KeepAlive(path)
		if err != nil {
			unix.Kill(pid, unix.SIGKILL)
			unix.PtraceDetach(pid)
			cmd.Wait()
			errors.As(err, &res.Errno)
			if res.Errno == 0 {
				t.Fatalf("perf_event_open(uprobe): %v", err)
			}
			return res
		}
		defer unix.Close(fd)
	}
	if err := unix.PtraceDetach(pid); err != nil {
		t.Fatal(err)
	}
	var timedOut atomic.Bool
	watchdog := time.AfterFunc(kernelRunTimeout, func() { timedOut.Store(true); unix.Kill(pid, unix.SIGKILL) })
	cmd.Wait()
	watchdog.Stop()
	res.TimedOut = timedOut.Load()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		res.Status = st.ExitStatus()
		if st.Signaled() {
			res.Status = 128 + int(st.Signal())
		}
	}
	res.Stdout = out.Bytes()
	if fd >= 0 {
		var b [8]byte
		if _, err := unix.Read(fd, b[:]); err != nil {
			t.Fatal(err)
		}
		res.Hits = binary.LittleEndian.Uint64(b[:])
	}
	return res
}

// noProbe as kernelRun's offset runs the program without a probe.
const noProbe = ^uint64(0)

// kernelHits is kernelRun's hit count; it skips when the kernel refuses
// the probe.
func kernelHits(t *testing.T, pmu uint32, lib string, off uint64, ret bool, env []string, argv []string) uint64 {
	r := kernelRun(t, pmu, lib, off, ret, env, argv)
	if r.Errno != 0 {
		t.Skipf("perf_event_open(uprobe): %v", r.Errno)
	}
	if r.TimedOut {
		t.Fatalf("%v ran natively for over %v", argv, kernelRunTimeout)
	}
	return r.Hits
}
