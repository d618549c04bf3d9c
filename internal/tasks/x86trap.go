package tasks

import (
	"fmt"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
)

// x86Trap is an x86-64 thread's fault information, Linux's
// thread.trap_nr, thread.error_code and thread.cr2: set by every trap the
// kernel turns into a signal and kept until the next one, so every signal
// frame reports the last trap (a SIGUSR1 after a page fault still shows
// trapno 14). Only the thread itself touches it (its run loop).
type x86Trap struct {
	trapNr, errCode, cr2 uint64
	// rf: the pending forced signal comes from a fault, whose exception
	// frame the CPU writes with RFLAGS.RF set (SDM vol. 3 17.3.1.1); the
	// next signal frame saves RFLAGS with RF. Traps (#BP) do not set it.
	rf bool
}

// x86 exception vectors (arch/x86/include/asm/trapnr.h).
const (
	x86TrapDE = 0  // divide error
	x86TrapDB = 1  // debug (single step)
	x86TrapBP = 3  // int3
	x86TrapUD = 6  // invalid opcode
	x86TrapGP = 13 // general protection
	x86TrapPF = 14 // page fault
	x86TrapMF = 16 // x87 floating-point error
	x86TrapAC = 17 // alignment check
	x86TrapXF = 19 // SIMD floating-point exception

	rflagsRF = 1 << 16
)

// recordX86Trap records the trap an interpreter exit stands for (do_trap,
// do_error_trap, exc_page_fault, math_error set trap_nr and error_code;
// the page fault also cr2).
func (t *Task) recordX86Trap(ex vm.Exit) {
	x := &t.x86trap
	x.rf = true
	x.errCode = 0
	switch ex.Reason {
	case vm.ExitFault:
		x.trapNr, x.cr2 = x86TrapPF, ex.Fault.Addr
		x.errCode = 4 // user
		if ex.Fault.Access == vm.AccessWrite {
			x.errCode |= 2
		}
		if ex.Fault.Mapped {
			x.errCode |= 1
		}
		if ex.Fault.Access == vm.AccessExec {
			x.errCode |= 16 // X86_PF_INSTR
		}
	case vm.ExitAlignment:
		x.trapNr = x86TrapAC
	case vm.ExitUndefined:
		x.trapNr = x86TrapUD
	case vm.ExitBreakpoint:
		x.trapNr, x.rf = x86TrapBP, false
	case vm.ExitDivide:
		x.trapNr = x86TrapDE
		switch {
		case ex.Code&amd64.FPECodeX87 != 0:
			x.trapNr = x86TrapMF
		case ex.Code != 0:
			x.trapNr = x86TrapXF
		}
	case vm.ExitPrivileged: // #GP(Code): a refused selector, or 0
		x.trapNr, x.errCode = x86TrapGP, uint64(ex.Code)
	default: // the rest: #GP(0)
		x.trapNr = x86TrapGP
	}
}

// x86FrameTrap fills the frame's trap fields from the thread's last trap
// and consumes the pending RF.
func (t *Task) x86FrameTrap(ctx *signals.AMD64Context) {
	x := &t.x86trap
	ctx.Trapno, ctx.Err, ctx.CR2 = x.trapNr, x.errCode, x.cr2
	if x.rf {
		ctx.RFLAGS |= rflagsRF
		x.rf = false
	}
}

// x86TrapFlags reports whether the thread runs with RFLAGS.TF or AC set:
// the loop then steps one instruction at a time (x86Step).
func (t *Task) x86TrapFlags() bool {
	c, ok := t.cpu.(*amd64.CPU)
	return ok && (c.TrapFlag() || c.AlignCheck())
}

// x86Step executes one single step with TF or AC set. With AC the
// instruction's data accesses are checked first (#AC: SIGBUS BUS_ADRALN,
// exc_alignment_check). With TF the step is a trap-flag step (one
// iteration of a REP string instruction) and, when it completes without
// another exit, the single-step trap follows: exc_debug_user's
// send_sigtrap, SIGTRAP TRAP_TRACE with si_addr the next RIP, trap_nr 1,
// error code 0, and RF in the saved RFLAGS when a REP string instruction
// stopped between iterations (it resumes there). Exits other than the
// step (a syscall, INT3, a fault) take no single-step trap, as on Linux:
// SYSCALL clears TF for the kernel and the return restores it, INT3 and
// faults deliver their own exception, which clears TF. A step that
// loads SS (MOV SS) runs the next instruction too before the trap.
func (t *Task) x86Step() vm.Exit {
	c := t.cpu.(*amd64.CPU)
	if c.AlignCheck() {
		if ex, bad := c.AlignmentExit(); bad {
			return ex
		}
	}
	if tr := t.tg.k.opts.TraceInsn; tr != nil {
		fmt.Fprintln(tr, c.TraceLine())
	}
	if !c.TrapFlag() {
		ex := c.Step()
		if ex.Reason == vm.ExitStep {
			ex.Reason = vm.ExitBudget
		}
		return ex
	}
	c.TakeSSShadow()
	before := c.Retired()
	ex := c.StepTrap()
	if ex.Reason != vm.ExitStep {
		return ex
	}
	if c.TakeSSShadow() {
		// MOV SS: the trap comes after the next instruction.
		if c.AlignCheck() {
			if ex, bad := c.AlignmentExit(); bad {
				return ex
			}
		}
		before = c.Retired()
		if ex = c.StepTrap(); ex.Reason != vm.ExitStep {
			return ex
		}
	}
	x := &t.x86trap
	x.trapNr, x.errCode, x.rf = x86TrapDB, 0, c.Retired() == before
	t.forceSignal(signals.FaultInfo(signals.SIGTRAP, signals.TRAP_TRACE, ex.PC))
	return vm.Exit{Reason: vm.ExitBudget, PC: ex.PC}
}

func init() {
	// Set here, not in amd64ABI's declaration: recordX86Trap reaches
	// code that reads the arch table (an initialization cycle).
	amd64ABI.recordTrap = (*Task).recordX86Trap
}
