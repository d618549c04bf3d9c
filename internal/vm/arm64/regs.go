// Package arm64 is uvm's A64 interpreter. It executes from the predecoded
// pages of package icache and reports every event (syscall, breakpoint,
// fault, undefined instruction) as a vm.Exit value.
package arm64

// Regs is the architectural user state of one A64 CPU. Signal frames
// (sigcontext, fpsimd_context) are built from and restored into it.
//
// Layout contract (used by the interpreter, checked in init): X, SP, ZR and
// Discard are consecutive, so that the general registers can be indexed as
// one array by the register numbers the decoder produces: 0..30 = x0..x30,
// decode.A64RegSP (31) = SP, decode.A64RegZR (32) = the zero register (always
// 0) and decode.A64RegDiscard (33) = where writes to the zero register go.
type Regs struct {
	X  [31]uint64 // x0..x30
	SP uint64
	// ZR is always zero: reads of XZR/WZR in integer instructions index it.
	ZR uint64
	// Discard receives writes to XZR/WZR; its value is meaningless.
	Discard uint64
	PC      uint64
	NZCV    uint64 // PSTATE.NZCV in bits 31..28, as MRS NZCV reads it
	// V holds the 32 128-bit SIMD&FP registers, V[i][0] = low 64 bits.
	V    [32][2]uint64
	FPCR uint32
	FPSR uint32
	// TPIDR is TPIDR_EL0, the thread pointer.
	TPIDR uint64
}

// simdResult is what execSIMD reports to the main loop.
type simdResult uint8

const (
	simdOK        simdResult = iota // retired; PC advanced by the main loop
	simdFault                       // memory fault: c.tlb.Fault is set, state unchanged
	simdUndefined                   // not implemented: raise an undefined-instruction exit
)
