package amd64

import "github.com/uvm-emu/uvm/internal/decode"

// x87 floating-point exceptions (#MF).
//
// An x87 exception unmasked in FCW sets its flag and FSW.ES/B when it
// happens; the CPU raises #MF at the next waiting x87 instruction (FWAIT
// or any x87 instruction other than FNINIT, FNCLEX, FNSTCW, FNSTSW,
// FNSTENV, FNSAVE), before that instruction executes. Linux's math_error
// sends SIGFPE with the si_code of the highest-priority unmasked flag
// (X87FPECode), si_addr the waiting instruction, trap_nr 16, and the
// saved FPU state (status word, FOP, FIP) in the signal frame.
//
// With the exception unmasked the instruction that raised it delivers
// the unmasked response: an invalid operation, division by zero or
// denormal operand (and a stack fault) leave the destination and the
// stack as they were; an overflow or underflow with a register
// destination stores the result with its exponent adjusted by 24576
// (sse_softfloat.go's oeBias/ueBias); a store to memory that overflows,
// underflows or is invalid writes nothing and does not pop; a precision
// exception stores the rounded result. FLD of a denormal single or double
// still loads it (measured on Intel).
//
// FIP is the address of the last x87 non-control instruction; FOP and FDP
// are updated only by a non-control instruction that raises an unmasked
// exception (Intel's behaviour with FOP compatibility off and
// FDP_EXCPTN_ONLY, measured); FNINIT and FNSAVE clear all three. They are
// saved in signal frames; FXSAVE/FNSTENV images still hold zero.
//
// Approximation: the transcendental instructions, FSCALE, FXTRACT,
// FPREM and FBSTP apply the masked response even when the exception is
// unmasked (the flags, ES and the later #MF are right).

// FPECodeX87 is set in an ExitDivide's Code for an x87 #MF (trap 16),
// above the si_code; without it a Code is the #XM si_code.
const FPECodeX87 = 1 << 16

// x87BiasAdjust is the exponent adjustment of an unmasked x87 overflow
// or underflow result.
const x87BiasAdjust = 24576

// X87FPECode returns the SIGFPE si_code for the x87 status and control
// words (fpu__exception_code with X86_TRAP_MF): FPE_FLTINV, FPE_FLTDIV,
// FPE_FLTOVF, FPE_FLTUND (denormal or underflow), FPE_FLTRES; 0 when no
// unmasked exception is flagged.
func X87FPECode(fsw, fcw uint16) int {
	return fpeCode(uint32(fsw &^ fcw)) // FSW's flags sit where MXCSR's do
}

// x87NoWait reports the non-waiting x87 instructions (no #MF check).
func x87NoWait(op decode.X86Op) bool {
	switch op {
	case decode.X87Fninit, decode.X87Fnclex, decode.X87Fnstcw, decode.X87Fnstsw,
		decode.X87Fnstenv, decode.X87Fnsave:
		return true
	}
	return false
}

// x87Control reports the x87 control instructions, which leave FIP, FOP
// and FDP alone.
func x87Control(op decode.X86Op) bool {
	switch op {
	case decode.X87Fldcw, decode.X87Fldenv, decode.X87Frstor, decode.X87Fwait:
		return true
	}
	return x87NoWait(op)
}

// execX87 executes one x87 instruction: the #MF check, the instruction,
// then the last-instruction pointers.
func (c *CPU) execX87(in *decode.X86) sseResult {
	r := &c.regs
	if r.FSW&swES != 0 && !x87NoWait(in.Op) {
		return sseMF
	}
	res := c.execX87Op(in)
	if res != sseOK {
		return res
	}
	switch {
	case in.Op == decode.X87Fninit || in.Op == decode.X87Fnsave:
		r.FOP, r.FIP, r.FDP = 0, 0, 0
	case x87Control(in.Op):
	default:
		r.FIP = in.PC
		if r.FSW&swES != 0 {
			// ES was clear before (else #MF): this instruction raised
			// an unmasked exception.
			r.FOP = c.x87Opcode(in.PC)
			r.FDP = 0
			for i := 0; i < int(in.NArgs); i++ {
				if in.Args[i].Kind == decode.ArgMem {
					r.FDP = c.sseEA(in, &in.Args[i])
				}
			}
		}
	}
	return sseOK
}

// x87Opcode returns FOP for the x87 instruction at pc: the low three bits
// of its D8-DF opcode byte and the ModRM byte (prefixes skipped).
func (c *CPU) x87Opcode(pc uint64) uint16 {
	var b [16]byte
	n := 0
	for n < len(b) && c.mm.Peek(b[n:n+1], pc+uint64(n)) == nil {
		n++
	}
	for i := 0; i+1 < n; i++ {
		if b[i] >= 0xD8 && b[i] <= 0xDF {
			return uint16(b[i]&7)<<8 | uint16(b[i+1])
		}
	}
	return 0
}

// x87Unmasked reports whether one of the flags in mask is set and
// unmasked in FSW (raised by the current instruction: a pending one would
// have taken #MF before it).
func (r *Regs) x87Unmasked(mask uint16) bool { return r.FSW&^r.FCW&mask != 0 }

// x87Suppress is the flags whose unmasked response leaves a register
// destination and the stack unchanged.
const x87Suppress = fpIE | fpZE | fpDE
