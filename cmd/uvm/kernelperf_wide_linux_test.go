//go:build linux && amd64

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// System-wide perf uprobes: one event per online CPU (pid -1), so that
// every hit in every process and thread that maps the probed file is
// counted. The task-bound, inherited events of kernelRun are not an
// oracle for programs that fork or make threads: on this kernel (6.18)
// they counted 10 of the 410 hits of progs threads and 10 of the 17 of
// progs fork (the parent's own hits). A system-wide event has no task
// filter: it counts what the uprobes core does.

// kernelProbeReq is one probe of a kernelRunWide run.
type kernelProbeReq struct {
	Lib    string
	Off    uint64
	Ret    bool // uretprobe (config bit 0)
	Sample bool // record rax at every hit (PERF_SAMPLE_REGS_USER)
}

// kernelProbeResult is one probe's answer.
type kernelProbeResult struct {
	Errno syscall.Errno // perf_event_open refused the probe
	Hits  uint64
	RAX   []uint64 // Sample: rax at each hit, in time order
}

// kernelWideRun is one native run under system-wide probes.
type kernelWideRun struct {
	Probes []kernelProbeResult
	Stdout []byte
	Status int
}

// onlineCPUs parses /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	var cpus []int
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, found := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, err
		}
		z := a
		if found {
			if z, err = strconv.Atoi(hi); err != nil {
				return nil, err
			}
		}
		for c := a; c <= z && c < 4096; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// wideEvent is one probe's event on one CPU.
type wideEvent struct {
	fd  int
	buf []byte // the ring buffer (Sample), nil otherwise
}

const wideRingPages = 64

// kernelRunWide runs argv natively (stopped at its execve while the probes
// are opened) under system-wide perf uprobes. Start failures are fatal;
// a probe the kernel refuses has its Errno set and the program does not
// run.
func kernelRunWide(t *testing.T, pmu uint32, reqs []kernelProbeReq, env, argv []string) kernelWideRun {
	cpus, err := onlineCPUs()
	if err != nil {
		t.Skip(err)
	}
	runtime.LockOSThread()
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
	res := kernelWideRun{Probes: make([]kernelProbeResult, len(reqs))}
	events := make([][]wideEvent, len(reqs))
	defer func() {
		for _, evs := range events {
			for _, e := range evs {
				if e.buf != nil {
					unix.Munmap(e.buf)
				}
				unix.Close(e.fd)
			}
		}
	}()
	page := os.Getpagesize()
	for i, rq := range reqs {
		path := append([]byte(rq.Lib), 0)
		attr := unix.PerfEventAttr{Type: pmu, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Ext1: uint64(uintptr(unsafe.Pointer(&path[0]))), Ext2: rq.Off}
		if rq.Ret {
			attr.Config = 1 // config:0 is retprobe (format/retprobe)
		}
		if rq.Sample {
			attr.Sample = 1
			attr.Sample_type = unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_REGS_USER
			attr.Sample_regs_user = 1 << 0 // PERF_REG_X86_AX
		}
		for _, cpu := range cpus {
			fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
			runtime.KeepAlive(path)
			if err != nil {
				unix.Kill(pid, unix.SIGKILL)
				unix.PtraceDetach(pid)
				cmd.Wait()
				if !errors.As(err, &res.Probes[i].Errno) {
					t.Fatalf("perf_event_open(uprobe): %v", err)
				}
				return res
			}
			e := wideEvent{fd: fd}
			if rq.Sample {
				b, err := unix.Mmap(fd, 0, (1+wideRingPages)*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
				if err != nil {
					unix.Close(fd)
					t.Fatalf("mmap of the perf ring buffer: %v", err)
				}
				e.buf = b
			}
			events[i] = append(events[i], e)
		}
	}
	if err := unix.PtraceDetach(pid); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		res.Status = st.ExitStatus()
		if st.Signaled() {
			res.Status = 128 + int(st.Signal())
		}
	}
	res.Stdout = out.Bytes()
	for i, evs := range events {
		type sample struct{ time, rax uint64 }
		var samples []sample
		for _, e := range evs {
			var b [8]byte
			if _, err := unix.Read(e.fd, b[:]); err != nil {
				t.Fatal(err)
			}
			res.Probes[i].Hits += binary.LittleEndian.Uint64(b[:])
			if e.buf == nil {
				continue
			}
			mp := (*unix.PerfEventMmapPage)(unsafe.Pointer(&e.buf[0]))
			head := atomic.LoadUint64(&mp.Data_head)
			data := e.buf[mp.Data_offset : mp.Data_offset+mp.Data_size]
			if head > mp.Data_size {
				t.Fatalf("perf ring buffer overflow (%d bytes of samples)", head)
			}
			for p := uint64(0); p+8 <= head; {
				typ := binary.LittleEndian.Uint32(data[p:])
				size := uint64(binary.LittleEndian.Uint16(data[p+6:]))
				if size < 8 || p+size > head {
					t.Fatalf("bad perf record at %d", p)
				}
				switch typ {
				case unix.PERF_RECORD_SAMPLE:
					// pid, tid; time; abi; regs[AX]
					r := data[p+8 : p+size]
					if len(r) < 32 || binary.LittleEndian.Uint64(r[16:]) == 0 {
						t.Fatalf("perf sample without user registers (%d bytes)", len(r))
					}
					samples = append(samples, sample{binary.LittleEndian.Uint64(r[8:]), binary.LittleEndian.Uint64(r[24:])})
				case unix.PERF_RECORD_LOST:
					t.Fatalf("the kernel lost perf samples")
				}
				p += size
			}
		}
		sort.SliceStable(samples, func(a, b int) bool { return samples[a].time < samples[b].time })
		for _, s := range samples {
			res.Probes[i].RAX = append(res.Probes[i].RAX, s.rax)
		}
		if reqs[i].Sample && uint64(len(samples)) != res.Probes[i].Hits {
			t.Fatalf("%d samples for %d hits", len(samples), res.Probes[i].Hits)
		}
	}
	return res
}
