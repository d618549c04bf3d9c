package uprobes

import (
	"sync"
	"time"
)

// This file declares what the model needs from its host (the interfaces
// package tasks implements) and the architecture constants.

// Arch is a guest architecture.
type Arch uint8

const (
	ArchARM64 Arch = iota + 1 // AArch64
	ArchAMD64                 // x86-64 (64-bit tasks only)
)

func (a Arch) String() string {
	switch a {
	case ArchARM64:
		return "arm64"
	case ArchAMD64:
		return "x86-64"
	}
	return "arch?"
}

// Breakpoint instructions (spec §2.1).
const (
	// ARM64SWBP is UPROBE_SWBP_INSN on arm64: BRK #5
	// (AARCH64_BREAK_MON | UPROBES_BRK_IMM << 5), little-endian in memory
	// as A0 00 20 D4.
	ARM64SWBP uint32 = 0xD42000A0
	// ARM64BRKImm is the BRK immediate of uprobes (brk-imm.h).
	ARM64BRKImm = 0x005
	// X86SWBP is UPROBE_SWBP_INSN on x86: INT3.
	X86SWBP byte = 0xCC
)

// Per-architecture XOL and address-space parameters (4 KiB pages).
const (
	PageSize = 4096

	// UPROBE_XOL_SLOT_BYTES: 128 on x86 ("cache aligned"), 4 on arm64.
	X86XOLSlotBytes   = 128
	ARM64XOLSlotBytes = 4

	// TASK_SIZE of a 64-bit task: the XOL area's placement hint is
	// TASK_SIZE - PAGE_SIZE (spec §4.1).
	X86TaskSize   = 0x7ffffffff000 // (1 << 47) - PAGE_SIZE
	ARM64TaskSize = 1 << 48        // 48-bit VA
)

// Signal numbers (the same on arm64 and x86-64).
const (
	SIGILL  = 4
	SIGTRAP = 5
	SIGSEGV = 11
)

// Thread-flag bits this package sets and clears. They equal
// signals.TIF_SIGPENDING and signals.TIF_UPROBE (uvm's flag word), so a
// *signals.ThreadFlags can be passed as ThreadFlags directly.
const (
	TIF_SIGPENDING uint32 = 1 << 0
	TIF_UPROBE     uint32 = 1 << 2
)

// Regs is the register state of a stopped thread (Linux's pt_regs), read
// and written by the breakpoint handler, the simulators and the XOL
// fixups. The thread is not running while any method of this package
// that takes a Regs executes.
//
// Register numbers are the architecture's: arm64 x0..x30 (31 is XZR in
// the simulators and never passed here); x86-64 rax=0, rcx=1, rdx=2,
// rbx=3, rsp=4, rbp=5, rsi=6, rdi=7, r8..r15 = 8..15 (the numbering of
// vm.CPU.Reg).
//
// Flags is the architecture's flag register: arm64 PSTATE in SPSR layout
// (NZCV in bits 31..28, BTYPE in bits 11..10); x86-64 RFLAGS (TF is bit
// 8).
type Regs interface {
	PC() uint64
	SetPC(uint64)
	SP() uint64
	SetSP(uint64)
	Reg(i int) uint64
	SetReg(i int, v uint64)
	Flags() uint64
	SetFlags(uint64)
}

// FileID identifies a mapped file (the kernel keys uprobes by inode).
// Two mappings map the same file when their FileIDs are equal; use
// FileIdentity (host stat) for both the executable and the VMAs.
type FileID struct {
	Dev, Inode uint64
}

// IsZero reports whether id is the identity of no file (anonymous
// memory).
func (id FileID) IsZero() bool { return id == FileID{} }

// VMA describes one mapping of an address space, as the uprobe code sees
// vm_area_struct. uvm has no noexec mounts, so every file mapping is
// VM_MAYEXEC; MAP_SHARED sets VM_MAYSHARE.
type VMA struct {
	Start, End uint64 // [Start, End), page aligned
	Offset     uint64 // file offset of Start (vm_pgoff << PAGE_SHIFT)
	File       FileID // zero for anonymous memory
	Read       bool
	Write      bool
	Exec       bool
	Shared     bool // MAP_SHARED (VM_MAYSHARE)
}

// fileOffset is vaddr_to_offset.
func (v *VMA) fileOffset(vaddr uint64) uint64 { return v.Offset + (vaddr - v.Start) }

// vaddrOf is offset_to_vaddr.
func (v *VMA) vaddrOf(off uint64) uint64 { return v.Start + off - v.Offset }

// AddrSpace is one process's address space (mm_struct) as the uprobe
// code needs it. vm.MM provides Peek, Poke, ReadAt, WriteAt and Unmap with
// exactly these signatures; package tasks adds the rest in an adapter.
type AddrSpace interface {
	// FindVMA returns the mapping containing addr (vma_lookup).
	FindVMA(addr uint64) (VMA, bool)
	// VMAs returns every mapping, sorted by Start.
	VMAs() []VMA
	// Peek and Poke access memory ignoring protections, as ptrace and
	// /proc/pid/mem do (FOLL_FORCE). Used to write breakpoints into the
	// process's private copy of text pages and to fill the XOL slots. A
	// Poke to a page that holds predecoded code must invalidate it
	// (vm.MM.Poke bumps Page.CodeVersion).
	Peek(b []byte, addr uint64) error
	Poke(b []byte, addr uint64) error
	// ReadAt and WriteAt are copy_from_user/copy_to_user: they honour
	// protections and fail on unmapped memory. Used for the return
	// address on the x86 stack, emulated pushes and SDT counters.
	ReadAt(b []byte, addr uint64) error
	WriteAt(b []byte, addr uint64) error
	// MapXOL maps the XOL area: one zero-filled page named "[uprobes]",
	// PROT_EXEC only (not readable: VM_EXEC|VM_MAYEXEC|VM_DONTCOPY|VM_IO),
	// at hint when that page is free and otherwise where mmap would put
	// it (get_unmapped_area, top-down). It returns the address.
	MapXOL(hint uint64) (uint64, error)
	// Unmap removes [start, end). Used on a fork child for the copied
	// "[uprobes]" mapping, which Linux does not copy (VM_DONTCOPY).
	Unmap(start, end uint64)
	// FlushICache performs the architecture's cache maintenance after
	// code at [addr, addr+n) was written: on arm64 DC CVAU + IC IVAU of
	// the lines, broadcast to every CPU of the process (sync_icache_aliases
	// / __sync_icache_dcache). Never called for x86 (flush_dcache_page is
	// a no-op there).
	FlushICache(addr uint64, n int)
}

// ThreadFlags is a thread's flag word (thread_info.flags);
// *signals.ThreadFlags implements it.
type ThreadFlags interface {
	Set(mask uint32)
	Clear(mask uint32)
	Test(mask uint32) bool
}

// Thread is what the uprobe code needs from the thread it runs on
// (current). Methods are called on the thread's own goroutine.
type Thread interface {
	// Flags is the thread-flag word holding TIF_UPROBE and TIF_SIGPENDING.
	// It is called once, by NewTask: the word is the thread's for life.
	Flags() ThreadFlags
	// Siglock is the thread group's sighand->siglock. Taken only with
	// Options.SingleStepSiglock.
	Siglock() sync.Locker
	// RecalcSigpending is recalc_sigpending(): set TIF_SIGPENDING when an
	// unblocked signal is pending for the thread or its group, clear it
	// otherwise. Called with Siglock held.
	RecalcSigpending()
	// FatalSignalPending is __fatal_signal_pending: SIGKILL is pending
	// (or the group is being killed).
	FatalSignalPending() bool
	// SendSignal sends sig to the thread: force_sig (force true: the
	// signal cannot be blocked or ignored, as for SIGILL/SIGTRAP/SIGSEGV
	// raised by the uprobe code) or send_sig (force false). si_code is
	// SI_KERNEL.
	SendSignal(sig int, force bool)
}

// Exiter is an optional interface of Thread: Exiting is PF_EXITING, the
// thread has begun do_exit (the fork child's dup_xol_work then does
// nothing).
type Exiter interface {
	Exiting() bool
}

// Waiter is an optional interface of Thread: when the XOL area has no
// free slot, the thread sleeps in Wait until ready returns true. ready
// takes a slot when it returns true (it has a side effect, like the
// kernel's wait_event condition) and is safe to call from any goroutine.
// A deterministic scheduler implements Wait by re-evaluating ready at its
// switches (nothing wakes it explicitly). Without a Waiter the thread
// blocks its goroutine on the area's own wait queue, which a slot release
// wakes.
type Waiter interface {
	Wait(ready func() bool)
}

// Clock creates timers (ri_timer). Deterministic runs drive them from the
// virtual clock.
type Clock interface {
	// AfterFunc returns a timer that calls f once, d from now, on some
	// goroutine, unless stopped or reset first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a timer made by a Clock (time.Timer's methods).
type Timer interface {
	// Reset re-arms the timer to fire d from now (mod_timer).
	Reset(d time.Duration) bool
	// Stop cancels the timer. A callback already running may still be
	// running when Stop returns.
	Stop() bool
}

// hostClock is the default Clock: host time.
type hostClock struct{}

func (hostClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
