package decode

import "strconv"

// X86 is one decoded x86-64 instruction: a fixed-size, pointer-free record
// produced once per instruction-cache fill from golang.org/x/arch's
// x86asm.Inst by a fix-up wrapper (see x86wrap.go). The interpreter never
// calls x86asm.
//
// Conventions (the wrapper guarantees them for every record it returns):
//   - Args are in Intel order, destination first; NArgs of them are valid.
//   - Width is the operation size in bytes (1, 2, 4, 8; 16 for XMM-sized
//     operations). Stack operations, near branches, CALL/RET are 8.
//   - Each Args[i].Size is that operand's own size in bytes (MOVZX/MOVSX:
//     source size differs from Width).
//   - Memory operands are fully resolved: RIP-relative addressing has been
//     turned into an absolute address (Reg = NoReg, Disp = absolute
//     address); Reg/Index are NoReg when absent.
//   - Imm is masked (zero-extended) to Width for ALU/MOV/IMUL/PUSH-style
//     operands, so it can be used directly as the second operand. Branch
//     targets (JMP/Jcc/CALL rel, JRCXZ, LOOP) are absolute and stored in Imm.
type X86 struct {
	Op    X86Op
	Len   uint8 // instruction length in bytes, 1..15
	Width uint8 // operand width in bytes: 1, 2, 4, 8 (16 for XMM)
	// Operands: up to 3 (destination first, Intel order).
	Args  [3]X86Arg
	NArgs uint8
	Rep   uint8 // 0, RepF3 (REP/REPE) or RepF2 (REPNE)
	Lock  bool
	Seg   uint8  // segment override for memory operands: 0, SegFS, SegGS
	Cond  uint8  // condition code for Jcc/SETcc/CMOVcc (low nibble of opcode)
	Imm   int64  // immediate (sign-extended, masked to width as needed)
	Imm2  int64  // second immediate (ENTER)
	Aux   uint32 // op-specific extra data (see the op constants)

	// Run is set by the instruction cache (icache.X86Page.DecodeRun):
	// the number of records that follow this one in memory and are its
	// sequential successors (each starts where the previous one ends),
	// so an interpreter walks a straight-line run without an index
	// lookup per instruction. 0 from the decoder.
	Run uint8
	// Class is the timing class (set by DecodeX86Into; it fills padding,
	// so the record's size is unchanged).
	Class InsnClass
	// PC is the instruction's address, set by the instruction cache
	// (0 from the decoder).
	PC uint64
}

// X86ArgKind says what an operand is.
type X86ArgKind uint8

const (
	ArgNone    X86ArgKind = iota
	ArgReg                // general register: Reg = 0..15 (rax..r15), Width from X86.Width or Size
	ArgRegHigh            // legacy high-byte register AH/CH/DH/BH: Reg = 0..3 (Shift = 8)
	ArgMem                // memory: Reg (base)/Index/Scale/Disp, absolute after RIP fix-up
	ArgImm                // immediate in X86.Imm
	ArgXMM                // XMM register Reg = 0..15
	ArgX87                // x87 stack register ST(Reg)
	ArgMMX                // MMX register Reg = 0..7
	ArgSeg                // segment register (Reg: 0 ES, 1 CS, 2 SS, 3 DS, 4 FS, 5 GS)
)

// X86Arg is one operand.
type X86Arg struct {
	Kind  X86ArgKind
	Reg   uint8 // register number; for ArgMem: base register (NoReg when absent)
	Index uint8 // ArgMem index register (NoReg when absent)
	Scale uint8 // ArgMem scale 1,2,4,8
	Size  uint8 // operand size in bytes (memory: bytes accessed)
	// Shift is 8 for the high-byte registers AH/CH/DH/BH (ArgRegHigh),
	// else 0: the operand is (GPR[Reg] >> Shift) & mask(Size).
	Shift uint8
	// Flags: ArgA32 (0x67 prefix: the effective address wraps to 32
	// bits), and the segment of a memory operand in ArgSegMask
	// (0, SegFS or SegGS shifted by ArgSegShift).
	Flags uint8
	Disp  int64 // ArgMem displacement; for RIP-relative the absolute address
}

// X86Arg.Flags bits.
const (
	ArgA32      = 0x01 // 32-bit address size (0x67)
	ArgSegShift = 1
	ArgSegMask  = 0x06 // (Flags & ArgSegMask) >> ArgSegShift is 0, SegFS or SegGS
)

// Register numbering for X86Arg.Reg.
const (
	NoReg  = 0xFF
	RegRIP = 16 // not produced: RIP-relative operands are resolved to absolute addresses
	SegFS  = 1
	SegGS  = 2
	RepF3  = 1
	RepF2  = 2
)

// X86Op is a dense operation number. Integer/system ops are below
// X86SSEBase; SSE/x87 ops (translated by translateX86SSE in x86sse.go) are
// at or above it.
type X86Op uint16

const (
	X86Undefined X86Op = 0
	X86SSEBase   X86Op = 1000
)

// Integer and system operations. Unless noted, Args[0] is the destination
// (register or memory), Args[1] the source (register, memory or immediate)
// and Width the operation size.
const (
	_ X86Op = iota
	// The eight classic ALU operations, in /r encoding order (ADD=0 … CMP=7)
	// so that X86Add+n is the operation of opcode group 1 /n.
	X86Add
	X86Or
	X86Adc
	X86Sbb
	X86And
	X86Sub
	X86Xor
	X86Cmp
	X86Test
	X86Inc // Args[0]
	X86Dec
	X86Neg
	X86Not
	// Shifts and rotates, in /r encoding order of group 2 (ROL=0 … SAR=7;
	// /6 is an alias of SHL). Args[1] is an immediate count or CL.
	X86Rol
	X86Ror
	X86Rcl
	X86Rcr
	X86Shl
	X86Shr
	X86Sal // never produced (decoded as X86Shl); keeps the /r order
	X86Sar
	X86Shld // Args: dst, src reg, count (imm or CL)
	X86Shrd
	X86Mov
	X86Movzx  // Args[1].Size is the source size
	X86Movsx  // also MOVSXD
	X86Lea    // Args[1] is ArgMem; no segment base is added
	X86Xchg   // memory form is implicitly locked
	X86Cmov   // Cond
	X86Setcc  // Cond; Args[0] is a byte operand
	X86Bswap  // Args[0] register
	X86Cbw    // CBW/CWDE/CDQE by Width (2/4/8)
	X86Cwd    // CWD/CDQ/CQO by Width
	X86Push   // Args[0]: register, memory or immediate; Width 8 or 2
	X86Pop    // Args[0]: register or memory
	X86Pushf  // Width 8 (PUSHFQ) or 2
	X86Popf   // Width 8 (POPFQ) or 2
	X86Leave  // Width 8 (or 2 with 0x66)
	X86Enter  // Imm = frame size, Imm2 = nesting level
	X86Xlat   // AL = [RBX + AL]; Args[0] is the memory operand (segment)
	X86Lahf   //
	X86Sahf   //
	X86Mul    // Args[0] source; RDX:RAX = RAX * src (by width)
	X86Imul1  // one-operand IMUL, as X86Mul
	X86Imul   // Args: dst reg, src (reg/mem), optional imm (NArgs 3)
	X86Div    // Args[0] divisor
	X86Idiv   //
	X86Bt     // Args: bit base (reg/mem), bit offset (reg/imm)
	X86Bts    //
	X86Btr    //
	X86Btc    //
	X86Bsf    // Args: dst reg, src
	X86Bsr    //
	X86Tzcnt  // F3 0F BC: executes as BSF when BMI1 is not advertised
	X86Lzcnt  // F3 0F BD: executes as BSR when ABM is not advertised
	X86Popcnt //
	X86Jmp    // Imm = absolute target
	X86JmpInd // Args[0] = target register/memory
	X86Jcc    // Cond, Imm = absolute target
	X86Jrcxz  // Imm = target; Aux = address size in bytes (8 or 4)
	X86Loop   // Imm = target; Aux = address size
	X86Loope  //
	X86Loopne //
	X86Call   // Imm = absolute target
	X86CallInd
	X86Ret  // Imm = bytes to release after popping the return address
	X86Iret // IRETQ (user-mode same-privilege return)
	X86Movs // string ops: Width = element size; Rep; Aux = address size;
	X86Stos // Seg (per-operand in Args Flags) applies to the [RSI] side
	X86Lods //
	X86Scas //
	X86Cmps //
	X86Clc  //
	X86Stc  //
	X86Cmc  //
	X86Cld  //
	X86Std  //
	X86Syscall
	X86Cpuid
	X86Rdtsc
	X86Pause
	X86Nop   // also hint NOPs (0F 1F, 0F 18..1F), ENDBR64/32, RDSSP, INCSSP
	X86Fence // MFENCE/LFENCE/SFENCE
	X86Prefetch
	X86Int3
	X86Int     // INT n (n != 3): Imm = n; #GP in Linux user mode
	X86Ud      // UD0/UD1/UD2 and decoded-but-invalid: raises ExitUndefined
	X86Priv    // privileged instruction: raises ExitPrivileged
	X86Cmpxchg // Args: dst (reg/mem), src reg; compares with RAX
	X86Cmpxchg8b
	X86Cmpxchg16b
	X86Xadd
	X86MovSeg  // MOV r/m, Sreg (Args[1] ArgSeg): reads the selector value
	X86Clflush // Args[0] memory: no architectural effect besides access check
	X86Movbe   // Args: dst, src (one is memory)

	// Segment registers and far transfers (vm/amd64 segs.go). Width is
	// the operand size in bytes.
	X86PushSeg  // PUSH FS/GS (Args[0] ArgSeg); Width 8 or 2
	X86PopSeg   // POP FS/GS (Args[0] ArgSeg)
	X86MovToSeg // MOV Sreg, r/m16 (Args[0] ArgSeg, Args[1] source)
	X86Lret     // far RET: pops the offset (Width) and CS; Imm bytes released after
	X86FarJmp   // JMP m16:16/32/64 (Args[0] memory: offset then selector)
	X86FarCall  // CALL m16:16/32/64

	// BMI1/BMI2/ADX/RDTSCP/RDPID/FSGSBASE (decoded in x86bmi.go). Width
	// is 4 or 8; VEX operands in Intel order (see each op).
	X86Andn     // dst, src1 (vvvv), src2 r/m: dst = ^src1 & src2
	X86Bextr    // dst, src r/m, control (vvvv)
	X86Blsi     // dst (vvvv), src r/m
	X86Blsmsk   //
	X86Blsr     //
	X86Bzhi     // dst, src r/m, index (vvvv)
	X86Mulx     // hi dst, lo dst (vvvv), src r/m; multiplies by RDX/EDX
	X86Pdep     // dst, src1 (vvvv), mask r/m
	X86Pext     //
	X86Rorx     // dst, src r/m, Imm
	X86Sarx     // dst, src r/m, count (vvvv)
	X86Shlx     //
	X86Shrx     //
	X86Adcx     // dst reg, src r/m: CF-only add with carry
	X86Adox     // as ADCX with OF as the carry
	X86Rdtscp   // EDX:EAX = TSC, ECX = TSC_AUX
	X86Rdpid    // Args[0] 64-bit register = TSC_AUX
	X86Rdfsbase // Args[0] register (Size 4 or 8) = FS base
	X86Rdgsbase //
	X86Wrfsbase // FS base = Args[0] register
	X86Wrgsbase //

	// Specialised forms of the hottest instructions. The wrapper picks one
	// when the operands fit (Width 4 or 8, or also 1 and 2 for CMP and
	// TEST, which write no register; general registers without high-byte
	// forms, no LOCK); everything else uses the generic op above.
	// Base() maps a specialised op back to its generic op.
	X86MovRR  // mov reg, reg
	X86MovRI  // mov reg, imm
	X86MovLd  // mov reg, [mem]
	X86MovSt  // mov [mem], reg
	X86MovStI // mov [mem], imm
	X86AddRR  // add reg, reg
	X86AddRI  // add reg, imm
	X86SubRR
	X86SubRI
	X86CmpRR
	X86CmpRI
	X86AndRR
	X86AndRI
	X86OrRR
	X86OrRI
	X86XorRR
	X86XorRI
	X86TestRR
	X86TestRI
	X86AdcRR
	X86AdcRI
	X86SbbRR
	X86SbbRI
	X86LeaR  // lea reg, [mem] (no 0x67)
	X86ShlRI // shl reg, imm (count already masked, non-zero)
	X86ShrRI // shr reg, imm
	X86SarRI // sar reg, imm
	X86AluRM // Aux (an ALU op X86Add..X86Test except ADC/SBB) reg, [mem]
	X86CmpMR // cmp [mem], reg   (Aux = X86Cmp or X86Test)
	X86CmpMI // cmp [mem], imm   (Aux = X86Cmp or X86Test)
	// X86MovzxLd and X86MovsxLd load Args[1].Size (1, 2, or 4 for
	// MOVSXD) bytes from memory, extend them to Width (4 or 8) and write
	// the whole register (a 4-byte Width zero-extends to 64 bits).
	X86MovzxLd // movzx reg, [mem]
	X86MovsxLd // movsx/movsxd reg, [mem]
	// X86MovzxRR and X86MovsxRR extend general register Args[1] (Size
	// 1, 2 or 4, not a high-byte register) to Width (4 or 8).
	X86MovzxRR // movzx reg, reg
	X86MovsxRR // movsx/movsxd reg, reg
	X86SetccR  // setcc reg8 (Cond; not a high-byte register)
	X86CmovRR  // cmovcc reg, reg (Cond; Width 4 or 8)
	// X86Jo … X86Jg are Jcc with the condition in the op (X86Jo + Cond).
	X86Jo
	X86Jno
	X86Jb
	X86Jae
	X86Je
	X86Jne
	X86Jbe
	X86Ja
	X86Js
	X86Jns
	X86Jp
	X86Jnp
	X86Jl
	X86Jge
	X86Jle
	X86Jg

	// X86IntOpCount is one past the last integer op.
	X86IntOpCount
)

// Base returns the generic op of a specialised form (X86AddRR → X86Add,
// X86Je → X86Jcc, X86MovLd → X86Mov …) and any other op unchanged.
func (op X86Op) Base() X86Op {
	switch {
	case op >= X86MovRR && op <= X86MovStI:
		return X86Mov
	case op == X86LeaR:
		return X86Lea
	case op >= X86ShlRI && op <= X86SarRI:
		return [...]X86Op{X86Shl, X86Shr, X86Sar}[op-X86ShlRI]
	case op >= X86AddRR && op <= X86SbbRI:
		return [...]X86Op{X86Add, X86Sub, X86Cmp, X86And, X86Or, X86Xor, X86Test, X86Adc, X86Sbb}[(op-X86AddRR)/2]
	case op == X86CmpMR || op == X86CmpMI || op == X86AluRM:
		return X86Undefined // depends on Aux; use (*X86).BaseOp
	case op == X86MovzxLd, op == X86MovzxRR:
		return X86Movzx
	case op == X86MovsxLd, op == X86MovsxRR:
		return X86Movsx
	case op == X86SetccR:
		return X86Setcc
	case op == X86CmovRR:
		return X86Cmov
	case op >= X86Jo && op <= X86Jg:
		return X86Jcc
	}
	return op
}

// BaseOp is Base for a record (it resolves the forms that keep their
// generic op in Aux).
func (in *X86) BaseOp() X86Op {
	switch in.Op {
	case X86CmpMR, X86CmpMI, X86AluRM:
		return X86Op(in.Aux)
	}
	return in.Op.Base()
}

// Condition codes (X86.Cond), as in the low nibble of Jcc/SETcc/CMOVcc.
const (
	CondO  = 0x0
	CondNO = 0x1
	CondB  = 0x2
	CondAE = 0x3
	CondE  = 0x4
	CondNE = 0x5
	CondBE = 0x6
	CondA  = 0x7
	CondS  = 0x8
	CondNS = 0x9
	CondP  = 0xA
	CondNP = 0xB
	CondL  = 0xC
	CondGE = 0xD
	CondLE = 0xE
	CondG  = 0xF
)

var x86OpNames = [...]string{
	X86Undefined: "undefined",
	X86Add:       "add", X86Or: "or", X86Adc: "adc", X86Sbb: "sbb", X86And: "and", X86Sub: "sub", X86Xor: "xor", X86Cmp: "cmp",
	X86Test: "test", X86Inc: "inc", X86Dec: "dec", X86Neg: "neg", X86Not: "not",
	X86Rol: "rol", X86Ror: "ror", X86Rcl: "rcl", X86Rcr: "rcr", X86Shl: "shl", X86Shr: "shr", X86Sal: "sal", X86Sar: "sar",
	X86Shld: "shld", X86Shrd: "shrd", X86Mov: "mov", X86Movzx: "movzx", X86Movsx: "movsx", X86Lea: "lea", X86Xchg: "xchg",
	X86Cmov: "cmov", X86Setcc: "setcc", X86Bswap: "bswap", X86Cbw: "cbw", X86Cwd: "cwd", X86Push: "push", X86Pop: "pop",
	X86Pushf: "pushf", X86Popf: "popf", X86Leave: "leave", X86Enter: "enter", X86Xlat: "xlat", X86Lahf: "lahf", X86Sahf: "sahf",
	X86Mul: "mul", X86Imul1: "imul1", X86Imul: "imul", X86Div: "div", X86Idiv: "idiv",
	X86Bt: "bt", X86Bts: "bts", X86Btr: "btr", X86Btc: "btc", X86Bsf: "bsf", X86Bsr: "bsr", X86Tzcnt: "tzcnt", X86Lzcnt: "lzcnt", X86Popcnt: "popcnt",
	X86Jmp: "jmp", X86JmpInd: "jmp*", X86Jcc: "jcc", X86Jrcxz: "jrcxz", X86Loop: "loop", X86Loope: "loope", X86Loopne: "loopne",
	X86Call: "call", X86CallInd: "call*", X86Ret: "ret", X86Iret: "iretq",
	X86Movs: "movs", X86Stos: "stos", X86Lods: "lods", X86Scas: "scas", X86Cmps: "cmps",
	X86Clc: "clc", X86Stc: "stc", X86Cmc: "cmc", X86Cld: "cld", X86Std: "std",
	X86Syscall: "syscall", X86Cpuid: "cpuid", X86Rdtsc: "rdtsc", X86Pause: "pause", X86Nop: "nop", X86Fence: "fence", X86Prefetch: "prefetch",
	X86Int3: "int3", X86Int: "int", X86Ud: "ud", X86Priv: "privileged",
	X86Cmpxchg: "cmpxchg", X86Cmpxchg8b: "cmpxchg8b", X86Cmpxchg16b: "cmpxchg16b", X86Xadd: "xadd",
	X86MovSeg: "mov-sreg", X86PushSeg: "push-sreg", X86PopSeg: "pop-sreg",
	X86MovToSeg: "mov-to-sreg", X86Lret: "lret", X86FarJmp: "ljmp", X86FarCall: "lcall", X86Clflush: "clflush", X86Movbe: "movbe",
	X86Andn: "andn", X86Bextr: "bextr", X86Blsi: "blsi", X86Blsmsk: "blsmsk", X86Blsr: "blsr", X86Bzhi: "bzhi",
	X86Mulx: "mulx", X86Pdep: "pdep", X86Pext: "pext", X86Rorx: "rorx", X86Sarx: "sarx", X86Shlx: "shlx", X86Shrx: "shrx",
	X86Adcx: "adcx", X86Adox: "adox", X86Rdtscp: "rdtscp", X86Rdpid: "rdpid",
	X86Rdfsbase: "rdfsbase", X86Rdgsbase: "rdgsbase", X86Wrfsbase: "wrfsbase", X86Wrgsbase: "wrgsbase",
}

// String names the op (for tests and messages); specialised forms print
// as their generic op.
func (op X86Op) String() string {
	switch {
	case op >= X86MovRR && op <= X86SarRI, op >= X86MovzxLd && op <= X86CmovRR, op >= X86Jo && op <= X86Jg:
		op = op.Base()
	case op == X86AluRM:
		return "alu-rm"
	case op == X86CmpMR || op == X86CmpMI:
		return "cmp-m"
	}
	if int(op) < len(x86OpNames) && x86OpNames[op] != "" {
		return x86OpNames[op]
	}
	if op >= X86AVXBase {
		return avxOpName(op)
	}
	if op >= X86SSEBase {
		return "sse" + strconv.Itoa(int(op-X86SSEBase))
	}
	return "op" + strconv.Itoa(int(op))
}
