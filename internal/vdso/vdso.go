// Package vdso builds uvm's virtual dynamic shared objects: the ELF images
// the kernel maps into every process (Linux's arch/x86/entry/vdso and
// arch/arm64/kernel/vdso), and the layout of the data page they read.
//
// An image is generated here, byte by byte: the machine code of each
// function comes from a small encoder for just the instructions it needs
// (x86.go, a64.go), the ELF structure — program headers, dynamic section,
// .dynsym/.dynstr, DT_HASH and DT_GNU_HASH tables, symbol versions
// (.gnu.version, .gnu.version_d) and the "Linux" note — from elf.go. The
// result is what glibc's setup_vdso/dl_vdso_vsym and Go's
// runtime/vdso_linux.go look symbols up in: a prelinked ET_DYN linked at
// address 0, one PT_LOAD covering the whole file, every lookup-relevant
// address relative to that base.
//
// The functions read the vvar data page, mapped read-only one page below
// the image (Linux's [vvar]), as Linux's generic vDSO does
// (lib/vdso/gettimeofday.c): under a sequence count, take the hardware
// counter (RDTSC on x86-64, CNTVCT_EL0 on arm64), subtract CycleLast,
// scale by Mult >> Shift and add the clock's base. Clocks the page does not
// cover (the CPU-time clocks, dynamic clock ids, invalid ids) fall back to
// the real system call with the caller's arguments, as Linux's do.
//
// The clock ids each function serves and what it answers mirror uvm's own
// clock syscalls (tasks/sysproc.go): CLOCK_REALTIME and REALTIME_COARSE
// read RealBase, MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE and BOOTTIME
// read MonoBase (uvm's syscall gives all four the same value), and the
// coarse clocks read the counter too, so that a vDSO call and the syscall
// agree to the nanosecond at the same counter value.
package vdso

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"
)

// PageSize is the guest page size the image and the data page use.
const PageSize = 4096

// Layout of the vvar data page (byte offsets, little-endian). The kernel
// writes it under Seq: odd while an update is in progress, bumped again
// when it is complete; a reader retries while Seq is odd or changed.
const (
	VvarSeq       = 0  // uint32 sequence count (4…7 unused)
	VvarMult      = 8  // uint32 counter→ns multiplier
	VvarShift     = 12 // uint32 counter→ns shift
	VvarCycleLast = 16 // uint64 counter value the bases refer to
	VvarMonoBase  = 24 // uint64 CLOCK_MONOTONIC in ns at CycleLast
	VvarRealBase  = 32 // uint64 CLOCK_REALTIME in ns at CycleLast
	VvarSize      = 40
)

// Data is the contents of the vvar page.
type Data struct {
	Seq                uint32
	Mult, Shift        uint32
	CycleLast          uint64
	MonoBase, RealBase uint64
}

// Encode returns the page bytes that hold d.
func (d Data) Encode() []byte {
	b := make([]byte, VvarSize)
	le := binary.LittleEndian
	le.PutUint32(b[VvarSeq:], d.Seq)
	le.PutUint32(b[VvarMult:], d.Mult)
	le.PutUint32(b[VvarShift:], d.Shift)
	le.PutUint64(b[VvarCycleLast:], d.CycleLast)
	le.PutUint64(b[VvarMonoBase:], d.MonoBase)
	le.PutUint64(b[VvarRealBase:], d.RealBase)
	return b
}

// Nanoseconds is what the vDSO computes for a clock with base base at
// counter value cycles (the reference model of the generated code).
func (d Data) Nanoseconds(base, cycles uint64) uint64 {
	return base + (cycles-d.CycleLast)*uint64(d.Mult)>>d.Shift
}

// Resolutions clock_getres reports: the high-resolution clocks count
// nanoseconds, the coarse ones tick at HZ=250 (TICK_NSEC), as uvm's
// clock_getres(2) says.
const (
	HresNs   = 1
	CoarseNs = 4_000_000
)

// Clock sets, as bit masks over clock ids 0..7 (include/uapi/linux/time.h).
const (
	realClocks   = 1<<0 | 1<<5               // REALTIME, REALTIME_COARSE
	monoClocks   = 1<<1 | 1<<4 | 1<<6 | 1<<7 // MONOTONIC, _RAW, _COARSE, BOOTTIME
	hresClocks   = 1<<0 | 1<<1 | 1<<4 | 1<<7
	coarseClocks = 1<<5 | 1<<6
	maxClock     = 7
)

// LinuxVersionCode is the kernel version in the image's "Linux" note:
// 6.8.0, the release uvm's uname(2) reports.
const LinuxVersionCode = 6<<16 | 8<<8 // | 0 (patch level)

// Func is one exported function of an image.
type Func struct {
	Name   string
	Offset uint64 // from the start of the image
	Size   uint64
	// Aliases are further names for the same code (x86-64 exports
	// clock_gettime next to __vdso_clock_gettime, as weak symbols).
	Aliases []string
}

// Image is a generated vDSO.
type Image struct {
	Machine elf.Machine
	// Bytes is the ELF file, a whole number of pages; the data page is
	// mapped at Bytes' address minus PageSize.
	Bytes []byte
	// Version is the symbol version every function is defined in
	// (LINUX_2.6 on x86-64, LINUX_2.6.39 on arm64).
	Version string
	// Funcs are the exported functions, by offset.
	Funcs []Func
	// Text is the [start, end) of the code, as image offsets.
	TextStart, TextEnd uint64
	// CounterReads are the image offsets of the instructions that read
	// the hardware counter, with the function each belongs to: uvm counts
	// vDSO calls there (a call makes no syscall to count).
	CounterReads map[uint64]string
	// Listing is the intended assembly of every instruction, by image
	// offset (for the tests that disassemble the image).
	Listing []Insn
}

// Insn is one emitted instruction: where it is, its bytes and what it was
// meant to be.
type Insn struct {
	Offset uint64
	Bytes  []byte
	// Asm is the instruction in the disassembler's syntax, with "{}" for
	// a PC-relative operand whose image offset is Target.
	Asm    string
	Target int64
}

// Symbol returns the image offset of an exported function or alias.
func (im *Image) Symbol(name string) (uint64, bool) {
	for _, f := range im.Funcs {
		if f.Name == name {
			return f.Offset, true
		}
		for _, a := range f.Aliases {
			if a == name {
				return f.Offset, true
			}
		}
	}
	return 0, false
}

// FuncAt returns the function whose code holds image offset off.
func (im *Image) FuncAt(off uint64) (Func, bool) {
	i := sort.Search(len(im.Funcs), func(i int) bool { return im.Funcs[i].Offset+im.Funcs[i].Size > off })
	if i < len(im.Funcs) && im.Funcs[i].Offset <= off {
		return im.Funcs[i], true
	}
	return Func{}, false
}

// Build generates the vDSO for machine (elf.EM_X86_64 or elf.EM_AARCH64).
func Build(machine elf.Machine) (*Image, error) {
	switch machine {
	case elf.EM_X86_64:
		return link(machine, "LINUX_2.6", x86Funcs())
	case elf.EM_AARCH64:
		return link(machine, "LINUX_2.6.39", a64Funcs())
	}
	return nil, fmt.Errorf("vdso: no vDSO for %v", machine)
}

// funcCode is one function as the encoders produce it: code relative to
// the function's start, with PC-relative references to the data page
// left for link to patch once the function's address is known.
type funcCode struct {
	name    string
	aliases []string
	code    []byte
	// vvarRefs patch the data page's address into the code.
	vvarRefs []vvarRef
	// counterReads are offsets (in code) of counter-reading instructions.
	counterReads []uint64
	listing      []Insn // offsets relative to the function
	labels       map[string]int
}

// vvarRef is a PC-relative reference to the data page at code offset at:
// patch writes the displacement from the instruction (at image offset pc)
// to the data page (at image offset -PageSize).
type vvarRef struct {
	at    int
	patch func(code []byte, at int, pc, target int64) error
}
