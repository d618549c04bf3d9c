package tasks

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/uvm-emu/uvm/internal/vm"
)

// fuzzDenied are syscalls the fuzzer does not make because they would
// change the host's file system (uvm has no confinement without a root):
// what they do with hostile arguments is covered by the corpus instead.
var fuzzDenied = map[string]bool{
	"unlink": true, "unlinkat": true, "rmdir": true, "rename": true, "renameat": true, "renameat2": true,
	"mkdir": true, "mkdirat": true, "truncate": true, "chmod": true, "fchmodat": true, "fchmodat2": true,
	"fchmod": true, "chown": true, "fchownat": true, "lchown": true, "fchown": true, "link": true,
	"linkat": true, "symlink": true, "symlinkat": true, "utime": true, "utimes": true, "utimensat": true,
	"futimesat": true, "mknod": true, "mknodat": true, "creat": true, "chdir": true, "fchdir": true,
	"chroot": true, "execve": true, "execveat": true,
}

const fuzzScratch = 0x10000000 // a page of fuzz bytes, then an unmapped page

// fuzzArg turns a selector and the input into an argument that probes an
// edge: small numbers and fds, pointers into and just before the end of
// the scratch page, unmapped and kernel addresses, lengths near 2^63 and
// 2^64, raw 64-bit values.
func fuzzArg(sel byte, in []byte) (uint64, []byte) {
	next := func() byte {
		if len(in) == 0 {
			return 0
		}
		b := in[0]
		in = in[1:]
		return b
	}
	switch sel % 9 {
	case 0:
		return uint64(next()), in
	case 1:
		return fuzzScratch + uint64(next())*16, in
	case 2:
		return 1<<63 - uint64(next()), in
	case 3:
		return ^uint64(0) - uint64(next()), in
	case 4:
		var b [8]byte
		for i := range b {
			b[i] = next()
		}
		return binary.LittleEndian.Uint64(b[:]), in
	case 5:
		return fuzzScratch + vm.PageSize - uint64(next()), in
	case 6:
		return uint64(next()) << 4, in
	case 7:
		return vm.TaskSize - uint64(next()), in
	default:
		return uint64(int64(-int8(next()))), in
	}
}

// FuzzSyscalls makes random syscalls with hostile arguments against a live
// guest address space, on both arches, in deterministic mode (where every
// blocking call ends: time jumps to a deadline, or the deadlock detector
// ends the guest). The property: the host never panics or hangs, and the
// kernel stays usable.
func FuzzSyscalls(f *testing.F) {
	f.Add([]byte("\x00/proc/self/maps\x00\x00\x00\x00\x00\x00\x00\x00\x38\x00\x00\x9c\x01\x00\x00\x00"))
	f.Add([]byte("\x01hello\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x14\x00\x01\x00\x01\x03\x00\x00"))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xd7\x00\x01\x00\x02\x00\x00\x00\xe8\x00\x01\x00\x03\x00"))
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x03\x00\x00\x03\x00\x00\x19\x00\x01\x00\x03\x00\x03\x00\x02\x00\x01\x00"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 1 {
			return
		}
		prog := "../../testdata/bin/arm64/hello"
		if in[0]&1 == 1 {
			prog = "../../testdata/bin/amd64/hello"
		}
		in = in[1:]
		scratch := in[:min(len(in), 16)]
		in = in[len(scratch):]
		k := NewKernel(Options{Deterministic: true, Cwd: dir, Limits: Limits{MemBytes: 256 << 20, MaxProcs: 8, MaxThreads: 16}})
		task, err := k.load(prog, []string{"hello"})
		if err != nil {
			t.Fatal(err)
		}
		tg := task.tg
		if err := tg.mm.Map(vm.VMA{Start: fuzzScratch, End: fuzzScratch + vm.PageSize, Prot: vm.ProtRead | vm.ProtWrite}); err != nil {
			t.Fatal(err)
		}
		tg.mm.WriteAt(scratch, fuzzScratch)
		k.det.add(task)
		k.det.acquire(task)
		defer func() {
			tg.exitGroup(ExitStatus{Signal: sigKILL})
			task.exited()
			<-tg.done
		}()
		a := tg.arch
		for calls := 0; calls < 8 && len(in) >= 2 && !task.killed.Load(); calls++ {
			nr := uint64(binary.LittleEndian.Uint16(in)) % 512
			in = in[2:]
			name := a.names[nr]
			if fuzzDenied[name] || name == "" {
				continue
			}
			var args [6]uint64
			for i := range args {
				if len(in) == 0 {
					break
				}
				sel := in[0]
				args[i], in = fuzzArg(sel, in[1:])
			}
			if name == "open" || name == "openat" || name == "openat2" {
				// Read-only opens only (no O_CREAT, O_TRUNC, writes).
				fi := 1
				if name == "open" {
					fi = 0
				}
				args[fi] &^= 0o1003 | 0o100 | 0o2000
			}
			task.cpu.SetReg(a.nr, nr)
			for i, r := range a.args {
				task.cpu.SetReg(r, args[i])
			}
			stop, sc, restartable := task.syscall()
			if stop {
				return
			}
			if task.flags.Load() != 0 {
				var scp *syscallResult
				if restartable {
					scp = &sc
				}
				if !task.exitToUser(scp) {
					return
				}
			}
		}
	})
}

// FuzzStart loads and runs arbitrary program files: ELF parsing, the
// initial stack and auxv, and the first instructions of whatever loads,
// under a small CPU limit on the virtual clock. The property: a clear
// error or a guest exit, never a host panic or hang.
func FuzzStart(f *testing.F) {
	// Small seeds keep the fuzzer fast: a minimal static ELF per arch
	// (exit(0), then a loop) and a script header.
	f.Add(tinyELF(183, []byte{0xa8, 0x0b, 0x80, 0xd2, 0x00, 0x00, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4, 0x00, 0x00, 0x00, 0x14}))
	f.Add(tinyELF(62, []byte{0xb8, 0x3c, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05, 0xeb, 0xfe}))
	f.Add([]byte("#!/bin/sh\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, prog []byte) {
		path := filepath.Join(dir, "prog")
		if err := os.WriteFile(path, prog, 0o755); err != nil {
			t.Fatal(err)
		}
		k := NewKernel(Options{Deterministic: true, Quantum: 1000, NsPerInsn: 1e6, Cwd: dir,
			Limits: Limits{MemBytes: 64 << 20, MaxProcs: 4, MaxThreads: 8, CPUSeconds: 1}})
		tg, err := k.Start(path, []string{"prog"})
		if err != nil {
			return
		}
		// Every guest ends: its CPU limit (1 s of virtual time) kills it.
		// A run that has not ended after minutes of host time is a hang:
		// fail with the stacks instead of stalling the fuzzer.
		select {
		case <-tg.Done():
		case <-time.After(2 * time.Minute):
			buf := make([]byte, 1<<20)
			t.Fatalf("guest did not end:\n%s", buf[:runtime.Stack(buf, true)])
		}
		tg.Wait()
	})
}

// tinyELF builds a static ELF64 executable for machine whose one PT_LOAD
// segment holds the headers and code, entered at the code.
func tinyELF(machine uint16, code []byte) []byte {
	const base, hdr = 0x400000, 64 + 56
	b := make([]byte, hdr+len(code))
	le := binary.LittleEndian
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[16:], 2) // ET_EXEC
	le.PutUint16(b[18:], machine)
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[24:], base+hdr) // entry
	le.PutUint64(b[32:], 64)       // phoff
	le.PutUint16(b[52:], 64)       // ehsize
	le.PutUint16(b[54:], 56)       // phentsize
	le.PutUint16(b[56:], 1)        // phnum
	ph := b[64:]
	le.PutUint32(ph[0:], 1) // PT_LOAD
	le.PutUint32(ph[4:], 5) // R|X
	le.PutUint64(ph[16:], base)
	le.PutUint64(ph[24:], base)
	le.PutUint64(ph[32:], uint64(len(b)))
	le.PutUint64(ph[40:], uint64(len(b)))
	le.PutUint64(ph[48:], 0x1000)
	copy(b[hdr:], code)
	return b
}

// The fuzzers' seed programs really run (so FuzzStart starts from a
// working program): exit(0) on both arches.
func TestTinyELF(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		machine uint16
		code    []byte
	}{
		{183, []byte{0xa8, 0x0b, 0x80, 0xd2, 0x00, 0x00, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}},
		{62, []byte{0xb8, 0x3c, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05}},
	} {
		path := filepath.Join(dir, "prog")
		if err := os.WriteFile(path, tinyELF(c.machine, append(c.code, 7, 7, 7, 7)), 0o755); err != nil {
			t.Fatal(err)
		}
		st, err := NewKernel(Options{Deterministic: true}).Run(path, []string{"prog"})
		if err != nil || st != (ExitStatus{}) {
			t.Errorf("machine %d: %+v, %v", c.machine, st, err)
		}
	}
}
