package tasks

import (
	"encoding/binary"
	"testing"

	"uvm/vm"
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
		prog := "../testdata/bin/arm64/hello"
		if in[0]&1 == 1 {
			prog = "../testdata/bin/amd64/hello"
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
