package tasks

import (
	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The legacy x86-64 vsyscall page (arch/x86/entry/vsyscall/vsyscall_64.c)
// in the kernel's default mode, vsyscall=xonly: nothing is mapped there, a
// read faults, and an instruction fetch from one of the three entry points
// (gettimeofday at +0x000, time at +0x400, getcpu at +0x800) is emulated by
// the page-fault handler: the call is performed and the CPU returns to the
// caller as if the entry had executed `ret`.
const (
	vsyscallAddr = 0xffffffffff600000
	// taskSizeMax is x86-64's TASK_SIZE_MAX: access_ok's limit.
	taskSizeMax = 1<<47 - 4096
)

// vsyscallMapsLine is the page's line in /proc/PID/maps (it is always
// listed, last, whatever the mode).
const vsyscallMapsLine = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"

// emulateVsyscall is emulate_vsyscall: it reports whether ex, an
// instruction-fetch fault, was a vsyscall (performed, or answered with the
// kernel's SIGSEGV); false leaves the fault to the usual signal.
func (t *Task) emulateVsyscall(ex vm.Exit) bool {
	if !t.tg.arch.vsyscall || ex.Fault.Access != vm.AccessExec || ex.PC&^0xfff != vsyscallAddr || ex.Fault.Addr != ex.PC {
		return false
	}
	c := t.cpu
	// addr_to_vsyscall_nr: only the three entry points themselves.
	nr := (ex.PC & 0xc00) >> 10
	if ex.PC&^0xc00 != vsyscallAddr || nr > 2 {
		t.vsyscallSigsegv() // "misaligned vsyscall"
		return true
	}
	sp := c.SP()
	caller, e := t.getU64(sp)
	if e != 0 {
		t.vsyscallSigsegv() // "vsyscall with bad stack"
		return true
	}
	// write_ok_or_segv: a pointer past TASK_SIZE_MAX is a SIGSEGV at it
	// before anything runs; other bad pointers fail inside the call.
	writeOK := func(ptr, size uint64) bool {
		if ptr != 0 && (ptr > taskSizeMax || size > taskSizeMax-ptr) {
			t.forceSignal(signals.FaultInfo(signals.SIGSEGV, signals.SEGV_MAPERR, ptr))
			return false
		}
		return true
	}
	a0, a1 := c.Reg(7), c.Reg(6) // rdi, rsi
	var ret uint64
	switch nr {
	case 0:
		if !writeOK(a0, 16) || !writeOK(a1, 8) {
			return true
		}
		ret = t.sysGettimeofday(a0, a1)
	case 1:
		if !writeOK(a0, 8) {
			return true
		}
		ret = t.sysTime(a0)
	case 2:
		if !writeOK(a0, 4) || !writeOK(a1, 4) {
			return true
		}
		ret = t.sysGetcpu(a0, a1)
	}
	if ret == errRet(EFAULT) {
		t.vsyscallSigsegv() // "vsyscall fault (exploit attempt?)"
		return true
	}
	c.SetReg(0, ret) // rax
	c.SetPC(caller)
	c.SetSP(sp + 8)
	return true
}

// vsyscallSigsegv is the handler's force_sig(SIGSEGV): SI_KERNEL, no
// address, the registers as they were at the fault.
func (t *Task) vsyscallSigsegv() {
	t.forceSignal(signals.KernelInfo(signals.SIGSEGV))
}
