package tasks

import (
	"debug/elf"
	"errors"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvm-emu/uvm/internal/vdso"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The vDSO, as Linux's arch_setup_additional_pages maps it: every process
// gets its arch's image (package vdso) as "[vdso]", announced by
// AT_SYSINFO_EHDR, and one page below it the kernel's data page "[vvar]",
// which the image's functions read to tell the time without a syscall.
//
//   - [vvar] is one vm.SharedObject for the whole Kernel, mapped read-only
//     into every process (Linux's vvar is one kernel page too); it cannot
//     be made writable or executable (mprotect: EACCES, as a special
//     mapping without VM_MAYWRITE/VM_MAYEXEC), discarded (madvise: EINVAL)
//     or reached through /proc/PID/mem (EIO).
//   - [vdso] is a private mapping of the image's bytes: it may be
//     mprotected and written (the process's own copy), and MADV_DONTNEED
//     brings the image back, as Linux's special-mapping fault does.
//
// The clock: the data page maps the machine-wide cycle counter (RDTSC,
// CNTVCT_EL0; 1 GHz, setupClock) onto CLOCK_MONOTONIC and CLOCK_REALTIME
// with Mult 1, Shift 0, CycleLast 0. In --det the counter is the virtual
// clock itself (global virtual time plus the reading thread's
// instructions not yet accounted), so the page never changes and a vDSO
// read gives exactly what clock_gettime(2) would give at the same
// instant. In parallel mode the counter is host monotonic time since the
// kernel started; RealBase is the wall clock at counter 0 and is
// republished (under Seq) when the host's wall clock has been stepped
// against its monotonic clock by more than vvarStepNs.
//
// vDSO calls make no syscall, so --strace does not show them and
// --stats counts them apart: the counter-reading instruction of each
// function reports its pc, and a read inside [vdso] counts one call of
// that function (clock_gettime, gettimeofday, time). getcpu and
// clock_getres read no counter and are not counted; their fallback
// syscalls, like every syscall, are.

// vdsoStackGap is the space between the stack and the vDSO (Linux's
// stack_guard_gap, 256 pages).
const vdsoStackGap = 256 * vm.PageSize

// vvarStepNs is how far the host's wall clock may drift from
// RealBase+counter before the data page is rewritten.
const vvarStepNs = int64(time.Millisecond)

// vvarRefreshExits is how many run-loop exits (syscalls, traps) a thread
// makes between two refreshVvar checks; a budget exit (every runBudget
// instructions) always checks. Reading the host clock on every exit was a
// fifth of a getpid round trip; a wall-clock step still reaches the vDSO
// within 64 exits or one budget.
const vvarRefreshExits = 63

// vdsoState is the kernel's side of the vDSO.
type vdsoState struct {
	// images by arch (read-only).
	x86, a64 *vdso.Image
	// vvar holds the data page.
	vvar *vm.SharedObject
	// mu serialises updates of the data page; data is what it holds
	// (protected by mu).
	mu   sync.Mutex
	data vdso.Data
	// realBase is data.RealBase, read without mu by the staleness check.
	realBase atomic.Int64
	// calls counts vDSO calls by function (the map is read-only after
	// NewKernel).
	calls map[string]*atomic.Uint64
}

var vdsoImages = sync.OnceValues(func() ([2]*vdso.Image, error) {
	x, err := vdso.Build(elf.EM_X86_64)
	if err != nil {
		return [2]*vdso.Image{}, err
	}
	a, err := vdso.Build(elf.EM_AARCH64)
	return [2]*vdso.Image{x, a}, err
})

// initVDSO builds the vDSO state of k (nil with Options.NoVDSO).
func (k *Kernel) initVDSO() {
	if k.opts.NoVDSO {
		return
	}
	imgs, err := vdsoImages()
	if err != nil {
		panic(err) // the generator's own inputs: a uvm bug, caught by its tests
	}
	s := &vdsoState{x86: imgs[0], a64: imgs[1], vvar: vm.NewSharedObject(nil), calls: map[string]*atomic.Uint64{}}
	for _, im := range imgs {
		for _, fn := range im.CounterReads {
			if s.calls[fn] == nil {
				s.calls[fn] = new(atomic.Uint64)
			}
		}
	}
	s.data = vdso.Data{Mult: 1, Shift: 0, CycleLast: 0, MonoBase: uint64(monoBase)}
	if k.det != nil {
		s.data.RealBase = uint64(DetEpoch.UnixNano())
	} else {
		s.data.RealBase = uint64(k.start.UnixNano())
	}
	s.realBase.Store(int64(s.data.RealBase))
	s.vvar.WriteAt(s.data.Encode(), 0)
	k.vdso = s
}

func (s *vdsoState) image(a vm.Arch) *vdso.Image {
	if a == vm.ArchARM64 {
		return s.a64
	}
	return s.x86
}

// vdsoImageBase is where the image of im is mapped; the data page is the page
// below.
func vdsoImageBase(im *vdso.Image) uint64 {
	return vm.StackTop - vm.StackSize - vdsoStackGap - uint64(len(im.Bytes))
}

// mapVDSO maps the vDSO of arch a into mm and returns AT_SYSINFO_EHDR (0
// without a vDSO). With Options.NoVDSO, arm64 still gets the one-page
// signal-return trampoline.
func (k *Kernel) mapVDSO(mm *vm.MM, a vm.Arch) (uint64, error) {
	if k.vdso == nil {
		if a == vm.ArchARM64 {
			return 0, mapARM64VDSO(mm)
		}
		return 0, nil
	}
	im := k.vdso.image(a)
	base := vdsoImageBase(im)
	if err := mm.Map(vm.VMA{Start: base - vm.PageSize, End: base, Prot: vm.ProtRead, Name: "[vvar]", Obj: k.vdso.vvar}); err != nil {
		return 0, err
	}
	if err := mm.Map(vm.VMA{Start: base, End: base + uint64(len(im.Bytes)), Prot: vm.ProtRead | vm.ProtExec, Name: "[vdso]", File: vdsoFile(im.Bytes)}); err != nil {
		return 0, err
	}
	return base, nil
}

// sigtramp is the arm64 signal return address of the process: the vDSO's
// __kernel_rt_sigreturn.
func (k *Kernel) arm64Sigtramp() uint64 {
	if k.vdso == nil {
		return arm64Sigtramp
	}
	off, _ := k.vdso.a64.Symbol("__kernel_rt_sigreturn")
	return vdsoImageBase(k.vdso.a64) + off
}

// countVDSO counts a counter read at pc when it is a vDSO function's.
func (k *Kernel) countVDSO(a vm.Arch, pc uint64) {
	im := k.vdso.image(a)
	base := vdsoImageBase(im)
	if pc-base >= uint64(len(im.Bytes)) {
		return
	}
	if fn, ok := im.CounterReads[pc-base]; ok {
		k.vdso.calls[fn].Add(1)
	}
}

// refreshVvar republishes RealBase when the host's wall clock has moved
// against its monotonic clock (parallel mode only; Linux's timekeeping
// update of the vDSO data).
func (k *Kernel) refreshVvar() {
	s := k.vdso
	now := time.Now()
	base := now.UnixNano() - int64(now.Sub(k.start))
	if d := base - s.realBase.Load(); d > -vvarStepNs && d < vvarStepNs {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.Seq++ // odd: update in progress
	s.vvar.WriteAt(s.data.Encode()[:4], vdso.VvarSeq)
	s.data.RealBase = uint64(base)
	s.vvar.WriteAt(s.data.Encode()[4:], 4)
	s.data.Seq++
	s.vvar.WriteAt(s.data.Encode()[:4], vdso.VvarSeq)
	s.realBase.Store(base)
}

// vdsoCalls returns the vDSO calls by function, for --stats.
func (k *Kernel) vdsoCalls() (names []string, counts []uint64) {
	if k.vdso == nil {
		return nil, nil
	}
	for n := range k.vdso.calls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		counts = append(counts, k.vdso.calls[n].Load())
	}
	return names, counts
}

// vdsoSpecial reports whether [start, end) touches the data page (the
// special mapping that cannot change its protection or be discarded).
func vdsoSpecial(mm *vm.MM, start, end uint64) bool {
	for _, v := range mm.VMAs() {
		if v.Start < end && start < v.End && v.Name == "[vvar]" {
			return true
		}
	}
	return false
}

// vdsoFile backs the [vdso] mapping with the image's bytes.
type vdsoFile []byte

func (f vdsoFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(f)) {
		return 0, io.EOF
	}
	n := copy(p, f[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f vdsoFile) WriteAt(p []byte, off int64) (int, error) {
	return 0, errors.New("vdso: the image is read-only")
}

func (f vdsoFile) Size() (int64, error) { return int64(len(f)), nil }

func init() {
	registerSyscall("getcpu", func(t *Task, a [6]uint64) uint64 { return t.sysGetcpu(a[0], a[1]) })
}

// sysGetcpu reports the CPU and NUMA node the thread runs on: its
// virtual CPU (vcpu, the value RDTSCP, RDPID and the x86 vDSO's getcpu
// read from TSC_AUX) and its node (vnode).
func (t *Task) sysGetcpu(cpu, node uint64) uint64 {
	if cpu != 0 {
		if e := t.putU32(cpu, t.vcpu()); e != 0 {
			return errRet(e)
		}
	}
	if node != 0 {
		if e := t.putU32(node, t.vnode()); e != 0 {
			return errRet(e)
		}
	}
	return 0
}
