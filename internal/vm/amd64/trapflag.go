package amd64

import "github.com/uvm-emu/uvm/internal/vm"

// The trap flag and alignment checking.
//
// RFLAGS.TF: the CPU takes a single-step trap (#DB) after each instruction
// that starts with TF set, so the POPF that sets it does not trap and the
// one that clears it does. uvm's interpreter does not test TF per
// instruction: a POPF or IRETQ that leaves TF (or AC) set ends the run
// (trapFlagsExit), and the thread's loop then single-steps with StepTrap
// while TF is set, raising the trap itself (tasks/x86trap.go).
//
// RFLAGS.AC: Linux runs user code with CR0.AM set, so with AC set a
// misaligned data access raises #AC (SIGBUS, BUS_ADRALN). The thread's
// loop steps the instructions while AC is set, and each step checks its
// data accesses first (StepAligned, alignment.go).

// TrapFlag reports RFLAGS.TF without materialising the lazily kept
// arithmetic flags (the uprobes model checks it on every emulated hit).
func (c *CPU) TrapFlag() bool { return c.flags&rfTF != 0 }

// TakeSSShadow reports and clears whether an instruction since the last
// call loaded SS: MOV SS inhibits the single-step trap (and interrupts)
// until the next instruction completes (SDM vol. 3, 6.8.3), so a step
// that loaded SS runs one more instruction before the trap.
func (c *CPU) TakeSSShadow() bool {
	s := c.ssShadow
	c.ssShadow = false
	return s
}

// AlignCheck reports RFLAGS.AC.
func (c *CPU) AlignCheck() bool { return c.flags&rfAC != 0 }

// trapFlagsExit is the exit after an instruction that left TF or AC set,
// at pc: ExitStep in single-step mode (the instruction retired), else
// ExitBudget so the caller looks at the flags.
func (c *CPU) trapFlagsExit(pc uint64, step bool) vm.Exit {
	if step {
		return vm.Exit{Reason: vm.ExitStep, PC: pc}
	}
	return vm.Exit{Reason: vm.ExitBudget, PC: pc}
}
