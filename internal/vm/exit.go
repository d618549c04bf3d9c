package vm

import "fmt"

// ExitReason says why an interpreter returned to its caller. Exits are
// routine values, never panics.
type ExitReason uint8

const (
	// ExitBudget: the instruction budget given to Run was used up, or the
	// CPU was asked to stop (Interrupt). PC is the next instruction.
	ExitBudget ExitReason = iota
	// ExitSyscall: SVC #0 / SYSCALL executed. PC is the instruction after it
	// (where Linux resumes), Insn holds the syscall instruction's address.
	ExitSyscall
	// ExitBreakpoint: BRK (arm64, Code = imm16) or INT3 (x86). PC is the
	// address of the breakpoint instruction itself (x86: the INT3 byte, not
	// after it), registers as before it.
	ExitBreakpoint
	// ExitFault: a memory access failed. PC is the faulting instruction and
	// the register state is the state before it. Fault describes it.
	ExitFault
	// ExitUndefined: an undecodable or unimplemented instruction at PC
	// (Linux would send SIGILL). Raw holds its bytes.
	ExitUndefined
	// ExitStep: single-step mode retired one instruction.
	ExitStep
	// ExitDivide: x86 divide error (#DE → SIGFPE, FPE_INTDIV). PC is the
	// faulting DIV/IDIV.
	ExitDivide
	// ExitPrivileged: an instruction that faults with #GP in user mode
	// (x86 HLT, IN/OUT, CLI …). Linux sends SIGSEGV with si_code SI_KERNEL.
	ExitPrivileged
	// ExitAlignment: an alignment fault (SIGBUS, BUS_ADRALN) at Fault.Addr.
	ExitAlignment
)

var exitNames = [...]string{"budget", "syscall", "breakpoint", "fault", "undefined", "step", "divide", "privileged", "alignment"}

func (r ExitReason) String() string {
	if int(r) < len(exitNames) {
		return exitNames[r]
	}
	return fmt.Sprintf("exit(%d)", r)
}

// Exit is what CPU.Run returns.
type Exit struct {
	Reason ExitReason
	PC     uint64
	// Code: BRK immediate on arm64; on x86 the si_code of an
	// ExitDivide from #XM or #MF (amd64.FPECodeX87 set) and the #GP
	// error code of an ExitPrivileged.
	Code uint32
	// Fault is set for ExitFault and ExitAlignment.
	Fault Fault
	// Raw holds the instruction bytes for ExitUndefined (RawLen valid bytes).
	Raw    [16]byte
	RawLen uint8
	// Reason text for ExitUndefined when the bytes decoded but the
	// instruction is not implemented (e.g. "unimplemented FCVTZS (vector)").
	Why string
}

// Retired instruction accounting and the CPU contract.

// CPU is the interface both interpreters implement. A CPU is owned by one
// goroutine at a time.
type CPU interface {
	// Run executes until an exit or until about budget instructions have
	// retired (budget is checked at block boundaries, so it may overrun by
	// one block). Interrupt makes it return ExitBudget early.
	Run(budget int64) Exit
	// Step executes exactly one instruction (ExitStep) unless that
	// instruction exits otherwise.
	Step() Exit
	// Interrupt asks a running Run to return soon; safe from any goroutine.
	Interrupt()
	// Retired is the number of instructions retired so far.
	Retired() uint64

	PC() uint64
	SetPC(uint64)
	SP() uint64
	SetSP(uint64)
	// Reg reads a general register by the architecture's number (arm64:
	// x0..x30; x86-64: rax=0, rcx=1, rdx=2, rbx=3, rsp=4, rbp=5, rsi=6,
	// rdi=7, r8..r15).
	Reg(i int) uint64
	SetReg(i int, v uint64)
	// TLS reads/writes the thread pointer (arm64 TPIDR_EL0, x86-64 FS base).
	TLS() uint64
	SetTLS(uint64)

	// Clone returns a copy of the register state bound to mm with a new TLB
	// (for clone/fork).
	Clone(mm *MM) CPU
	// MM is the address space the CPU executes in.
	MM() *MM
	// TLB returns the CPU's translation cache.
	TLB() *TLB

	// Disasm disassembles the instruction at pc for messages and traces.
	Disasm(pc uint64) string
	// TraceLine formats the register state like shared/tools/qemu-trace.
	TraceLine() string
}

// TrapAction is a TrapHandler's answer.
type TrapAction uint8

const (
	// TrapExit: nothing was done; Run returns the exit as without a
	// handler.
	TrapExit TrapAction = iota
	// TrapResume: the trap was handled and nothing is pending; execution
	// goes on at the CPU's PC without leaving Run.
	TrapResume
	// TrapLeave: the trap was handled and work is pending (a signal, a
	// stop, the thread's end); Run returns ExitBudget at the CPU's PC.
	TrapLeave
)

// TrapHandler is the kernel's fast way back to user mode: Linux returns
// from a syscall or a breakpoint trap straight to the interrupted code
// when no thread flag asks for work on the way out (syscall_exit_to_user_mode,
// irqentry_exit_to_user_mode). A CPU with a handler (SetTrapHandler) calls
// Trap at a SYSCALL/SVC or INT3/BRK instead of returning from Run, so the
// caller's run loop is not unwound and re-entered for each call. It never
// does so from Step, when the budget is used up by the trapping
// instruction (Run returns as usual, so quanta end where they did), or
// with a cache model attached.
//
// Trap gets the exit's reason (ExitSyscall or ExitBreakpoint), its PC and
// Code as in Exit, and left, the instructions Run may still retire (at
// least 1). The handler may Step the CPU (a uprobe's out-of-line single
// step), fewer than left times; Run counts those instructions against its
// budget. When it is called the CPU's state is what Run's return
// would have left: PC (x86 INT3: the INT3 byte), registers and flags stored,
// Retired counting every instruction up to the trap, and the TLB outside
// guest execution (Leave), so the handler may block, take address-space
// locks or change mappings; the CPU resynchronises its TLB and decoded
// pages before it goes on. Trap may change any register, PC included.
type TrapHandler interface {
	Trap(reason ExitReason, pc uint64, code uint32, left uint64) TrapAction
}
