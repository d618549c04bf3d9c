// Package amd64 is uvm's x86-64 interpreter. It executes from the
// predecoded pages of package icache and reports every event (syscall,
// breakpoint, fault, undefined instruction) as a vm.Exit value.
package amd64

// Regs is the architectural user state of one x86-64 CPU. Signal frames
// (sigcontext, the fxsave area) are built from and restored into it.
type Regs struct {
	// GPR: rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15 (encoding order).
	GPR    [16]uint64
	RIP    uint64
	RFLAGS uint64 // materialised flags (see the interpreter's lazy flags)
	FSBase uint64
	GSBase uint64
	// XMM holds xmm0..xmm15, XMM[i][0] = low 64 bits.
	XMM [16][2]uint64
	// YMMH holds the upper halves of ymm0..ymm15 (bits 255:128,
	// YMMH[i][0] = bits 191:128). Legacy SSE instructions leave them
	// alone; VEX-encoded instructions write them (VEX.128 zeroes them).
	YMMH  [16][2]uint64
	MXCSR uint32
	// x87 state (fxsave layout fields).
	FCW, FSW uint16
	FTW      uint8  // abridged tag word as in fxsave
	ST       [8]F80 // physical registers R0..R7 (not stack order)
	// FOP, FIP, FDP: the last x87 opcode, instruction and data pointer
	// (x87trap.go).
	FOP      uint16
	FIP, FDP uint64
}

// F80 is an x87 80-bit extended-precision value: 64-bit significand with
// explicit integer bit, 15-bit exponent and sign in SignExp.
type F80 struct {
	Mant    uint64
	SignExp uint16
}
