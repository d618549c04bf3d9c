package tasks

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// TestVDSOMatchesSyscall runs the vDSO's machine code in the interpreters
// of a deterministic kernel and compares what each function writes with
// what uvm's syscall gives at the same instant: the virtual clock set to
// the counter value the vDSO read. Clock ids the vDSO does not serve must
// reach the syscall instruction with the caller's arguments.
func TestVDSOMatchesSyscall(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	clocks := []uint64{0, 1, 999_999_999, 1_000_000_000, 1_000_000_999, 59_999_999_999, 1 << 40, 1 << 62}
	for range 40 {
		clocks = append(clocks, rng.Uint64N(1<<62))
	}
	for _, arch := range []vm.Arch{vm.ArchAMD64, vm.ArchARM64} {
		name := map[vm.Arch]string{vm.ArchAMD64: "amd64", vm.ArchARM64: "arm64"}[arch]
		t.Run(name, func(t *testing.T) {
			k := NewKernel(Options{Deterministic: true, NsPerInsn: 3, SlowTraps: true}) // the test drives Run and sees each syscall exit
			task, err := k.load("../../testdata/bin/"+name+"/hello", []string{"hello"})
			if err != nil {
				t.Fatal(err)
			}
			im := k.vdso.image(arch)
			base := vdsoImageBase(im)
			sym := func(n string) uint64 {
				off, ok := im.Symbol(n)
				if !ok {
					t.Fatalf("no %s", n)
				}
				return base + off
			}
			prefix := map[vm.Arch]string{vm.ArchAMD64: "__vdso_", vm.ArchARM64: "__kernel_"}[arch]
			var seen uint64 // the counter value the vDSO read
			switch c := task.cpu.(type) {
			case *amd64.CPU:
				orig := c.TSC
				c.TSC = func(r, pc uint64) uint64 { seen = orig(r, pc); return seen }
			case *arm64.CPU:
				orig := c.Counter
				c.Counter = func(r, pc uint64) uint64 { seen = orig(r, pc); return seen }
			}
			mm := task.tg.mm
			sp := task.cpu.SP() - 4096
			out, out2 := sp+512, sp+1024
			const retAddr = 0x10 // unmapped: the return ends Run with a fetch fault
			// call runs fn(a0, a1) from virtual time now; it returns the exit.
			call := func(fn string, now, a0, a1 uint64) vm.Exit {
				t.Helper()
				k.det.vclock = int64(now)
				task.accounted = task.cpu.Retired()
				seen = 0
				mm.WriteAt(make([]byte, 32), out)
				c := task.cpu
				c.SetPC(sym(prefix + fn))
				c.SetReg(0, 0)
				if arch == vm.ArchAMD64 {
					c.SetSP(sp)
					var ra [8]byte
					binary.LittleEndian.PutUint64(ra[:], retAddr)
					mm.WriteAt(ra[:], sp)
					c.SetReg(7, a0) // rdi
					c.SetReg(6, a1) // rsi
				} else {
					c.SetSP(sp)
					c.SetReg(30, retAddr)
					c.SetReg(0, a0)
					c.SetReg(1, a1)
				}
				return c.Run(10000)
			}
			read := func(addr uint64) []byte {
				b := make([]byte, 16)
				mm.ReadAt(b, addr)
				return b
			}
			returned := func(ex vm.Exit) bool {
				return ex.Reason == vm.ExitFault && ex.PC == retAddr
			}
			for _, now := range clocks {
				for _, id := range []uint64{0, 1, 4, 5, 6, 7} { // 2, 3: CPU clocks, below
					ex := call("clock_gettime", now, id, out)
					if !returned(ex) || task.cpu.Reg(0) != 0 {
						t.Fatalf("clock_gettime(%d): exit %v at %#x, ret %#x", id, ex.Reason, ex.PC, task.cpu.Reg(0))
					}
					if seen < now {
						t.Fatalf("clock_gettime(%d) read counter %d before %d", id, seen, now)
					}
					k.det.vclock = int64(seen)
					task.accounted = task.cpu.Retired()
					mm.WriteAt(make([]byte, 16), out2)
					if r := task.sysClockGettime(int32(id), out2); r != 0 {
						t.Fatalf("syscall clock_gettime(%d) = %#x", id, r)
					}
					if got, want := read(out), read(out2); !bytes.Equal(got, want) {
						t.Errorf("counter %d clock %d: vDSO % x, syscall % x", seen, id, got, want)
					}
					// clock_getres
					if ex := call("clock_getres", now, id, out); !returned(ex) || task.cpu.Reg(0) != 0 {
						t.Fatalf("clock_getres(%d): %v", id, ex.Reason)
					}
					mm.WriteAt(make([]byte, 16), out2)
					task.sysClockGetres(int32(id), out2)
					if got, want := read(out), read(out2); !bytes.Equal(got, want) {
						t.Errorf("clock_getres(%d): vDSO % x, syscall % x", id, got, want)
					}
				}
				// gettimeofday, with a timezone.
				ex := call("gettimeofday", now, out, out+16)
				if !returned(ex) || task.cpu.Reg(0) != 0 {
					t.Fatalf("gettimeofday: exit %v at %#x", ex.Reason, ex.PC)
				}
				k.det.vclock = int64(seen)
				mm.WriteAt(bytes.Repeat([]byte{0xff}, 32), out2)
				task.sysGettimeofday(out2, out2+16)
				got, want := make([]byte, 24), make([]byte, 24)
				mm.ReadAt(got, out)
				mm.ReadAt(want, out2)
				if !bytes.Equal(got, want) {
					t.Errorf("counter %d gettimeofday: vDSO % x, syscall % x", seen, got, want)
				}
				if arch == vm.ArchAMD64 {
					ex := call("time", now, out, 0)
					if !returned(ex) {
						t.Fatalf("time: exit %v", ex.Reason)
					}
					k.det.vclock = int64(seen)
					if r := task.sysTime(out2); r != task.cpu.Reg(0) || !bytes.Equal(read(out)[:8], read(out2)[:8]) {
						t.Errorf("counter %d time: vDSO %d, syscall %d", seen, task.cpu.Reg(0), r)
					}
				}
			}
			// Ids the vDSO passes on: the syscall instruction with the
			// caller's arguments.
			nr := map[vm.Arch][2]uint64{vm.ArchAMD64: {228, 229}, vm.ArchARM64: {113, 114}}[arch]
			for _, id := range []uint64{2, 3, 8, 11, 100, 1 << 31, 0xfffffffa, ^uint64(0)} {
				for i, fn := range []string{"clock_gettime", "clock_getres"} {
					ex := call(fn, 5, id, out)
					sysnr := task.cpu.Reg(0)
					if arch == vm.ArchARM64 {
						sysnr = task.cpu.Reg(8)
					}
					a0, a1 := task.cpu.Reg(7), task.cpu.Reg(6)
					if arch == vm.ArchARM64 {
						a0, a1 = task.cpu.Reg(0), task.cpu.Reg(1)
					}
					if ex.Reason != vm.ExitSyscall || sysnr != nr[i] || a0 != id || a1 != out {
						t.Errorf("%s(%#x): exit %v nr %d args %#x %#x", fn, id, ex.Reason, sysnr, a0, a1)
					}
				}
			}
			// getcpu (x86-64): the CPU and node from TSC_AUX (node << 12 |
			// cpu, as the kernel loads it); either pointer may be NULL.
			if c, ok := task.cpu.(*amd64.CPU); ok {
				c.TSCAux = 1<<12 | 3
				mm.WriteAt(bytes.Repeat([]byte{0xff}, 8), out)
				if ex := call("getcpu", 0, out, out+4); !returned(ex) || !bytes.Equal(read(out)[:8], []byte{3, 0, 0, 0, 1, 0, 0, 0}) {
					t.Errorf("getcpu: %v % x", ex.Reason, read(out)[:8])
				}
				if ex := call("getcpu", 0, 0, out+4); !returned(ex) || !bytes.Equal(read(out)[4:8], []byte{1, 0, 0, 0}) {
					t.Errorf("getcpu(NULL, node): %v % x", ex.Reason, read(out)[:8])
				}
				if ex := call("getcpu", 0, out, 0); !returned(ex) || !bytes.Equal(read(out)[:4], []byte{3, 0, 0, 0}) {
					t.Errorf("getcpu(cpu, NULL): %v % x", ex.Reason, read(out)[:8])
				}
			}
		})
	}
}

// TestVDSOSpecialMappings checks the data page's special-mapping rules
// and AT_SYSINFO_EHDR through the kernel's own paths.
func TestVDSOSpecialMappings(t *testing.T) {
	for _, noVDSO := range []bool{false, true} {
		k := NewKernel(Options{Deterministic: true, NoVDSO: noVDSO})
		task, err := k.load("../../testdata/bin/amd64/hello", []string{"hello"})
		if err != nil {
			t.Fatal(err)
		}
		var vvar, vdsoStart uint64
		for _, v := range task.tg.mm.VMAs() {
			switch v.Name {
			case "[vvar]":
				vvar = v.Start
				if v.Prot != vm.ProtRead || v.End-v.Start != vm.PageSize {
					t.Errorf("[vvar] %+v", v)
				}
			case "[vdso]":
				vdsoStart = v.Start
				if v.Prot != vm.ProtRead|vm.ProtExec || v.Start != vvar+vm.PageSize {
					t.Errorf("[vdso] %+v after [vvar] at %#x", v, vvar)
				}
			}
		}
		if noVDSO {
			if vvar != 0 || vdsoStart != 0 {
				t.Errorf("--vdso=off: [vvar] %#x [vdso] %#x mapped", vvar, vdsoStart)
			}
			continue
		}
		if vvar == 0 || vdsoStart == 0 {
			t.Fatal("no [vvar] or [vdso]")
		}
		var hdr [4]byte
		if task.tg.mm.ReadAt(hdr[:], vdsoStart); string(hdr[:]) != "\x7fELF" {
			t.Errorf("[vdso] starts with % x", hdr)
		}
		if r := task.sysMprotect(vvar, vm.PageSize, 3); r != errRet(EACCES) {
			t.Errorf("mprotect([vvar], rw) = %d", int64(r))
		}
		if r := task.sysMprotect(vvar, vm.PageSize, 0); r != 0 {
			t.Errorf("mprotect([vvar], none) = %d", int64(r))
		}
		if r := task.sysMadvise(vvar, vm.PageSize, madvDontneed); r != errRet(EINVAL) {
			t.Errorf("madvise([vvar], DONTNEED) = %d", int64(r))
		}
		// [vdso] is the process's own: writable after mprotect, and
		// MADV_DONTNEED brings the image back.
		if r := task.sysMprotect(vdsoStart, vm.PageSize, 3); r != 0 {
			t.Fatalf("mprotect([vdso], rw) = %d", int64(r))
		}
		task.tg.mm.WriteAt([]byte("XXXX"), vdsoStart)
		task.sysMadvise(vdsoStart, vm.PageSize, madvDontneed)
		if task.tg.mm.ReadAt(hdr[:], vdsoStart); string(hdr[:]) != "\x7fELF" {
			t.Errorf("[vdso] after MADV_DONTNEED starts with % x", hdr)
		}
	}
}
