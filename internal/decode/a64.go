package decode

// A64 is one decoded A64 instruction: a fixed-size, pointer-free record.
// Aliases are decoded as their underlying instruction (MOV → ORR, LSL →
// UBFM, CMP → SUBS …), so one semantic routine covers every alias.
//
// Field use depends on Op and is documented next to each Op constant.
//
// Register fields of integer, load/store, branch and system ops (Op <
// A64SIMDBase) hold *resolved* general register numbers: 0..30 = x0..x30,
// A64RegSP (31) = SP, A64RegZR (32) = a read of XZR/WZR (always 0) and
// A64RegDiscard (33) = a write to XZR/WZR. The interpreter indexes one
// register array with them and never tests for register 31. Registers
// that name SIMD&FP registers (Rd of LDRV/STRV/LDPV/STPV, and everything in
// the FP/SIMD group decoded by decodeA64SIMD) hold 0..31 as encoded.
// FP/SIMD ops decoded by decodeA64SIMD/decodeA64SIMDLdSt keep the encoded
// 0..31 for general registers as well (31 meaning SP or ZR per op).
type A64 struct {
	Op     A64Op  // what to execute; A64Undefined for unknown encodings
	Rd     uint8  // destination (Rt for loads/stores)
	Rn     uint8  // first source / base register
	Rm     uint8  // second source / index register
	Ra     uint8  // third source (MADD), Rt2 for pairs, Rs for exclusives
	Sf     uint8  // 1 = 64-bit operation, 0 = 32-bit (or element size for SIMD)
	Cond   uint8  // condition code for B.cond/CSEL/CCMP; nzcv for CCMP in Amount
	Shift  uint8  // shift type (LSL/LSR/ASR/ROR) or extend type
	Amount uint8  // shift amount / extend left shift / log2 access size
	Flags  uint8  // op-specific bits (set flags, writeback, pre/post, signed…)
	Q      uint8  // SIMD: 128-bit (1) or 64-bit (0) vector; other ops: free
	Size   uint8  // SIMD element size / FP type; loads/stores: log2 bytes
	Imm    uint64 // immediate, branch target offset, bitmask, etc.
	Imm2   uint64 // second immediate (bitfield imms/immr, TBZ bit…)
	Raw    uint32 // the instruction word
	// Class is the timing class (set by DecodeA64; it fills padding, so
	// the record's size is unchanged).
	Class InsnClass
}

// A64Op is a dense operation number for the interpreter's dispatch switch.
// Integer, load/store, branch and system ops are below A64SIMDBase; scalar
// FP and Advanced SIMD ops (decoded by decodeA64SIMD / decodeA64SIMDLdSt in
// a64simd.go) are at or above it.
type A64Op uint16

// Resolved general register numbers (see A64).
const (
	A64RegSP      = 31
	A64RegZR      = 32
	A64RegDiscard = 33
	// A64NumRegs is the size of the interpreter's general register array.
	A64NumRegs = 34
)

// Shift field values for shifted-register operands (ADDR, ANDR, …). The
// 32-bit forms of LSR, ASR and ROR have their own values so that the
// interpreter can shift the 64-bit register value (whose upper half may be
// non-zero) without looking at Sf; LSL needs none because 32-bit results
// are truncated anyway.
const (
	A64ShiftLSL   = 0
	A64ShiftLSR   = 1
	A64ShiftASR   = 2
	A64ShiftROR   = 3
	A64ShiftLSR32 = 5
	A64ShiftASR32 = 6
	A64ShiftROR32 = 7
)

// Extend field values for extended-register operands (ADDX…, register
// offset loads/stores): the encoded option field.
const (
	A64ExtUXTB = 0
	A64ExtUXTH = 1
	A64ExtUXTW = 2
	A64ExtUXTX = 3 // also LSL
	A64ExtSXTB = 4
	A64ExtSXTH = 5
	A64ExtSXTW = 6
	A64ExtSXTX = 7
)

// Addressing modes of loads and stores, in Flags&A64ModeMask.
const (
	A64ModeOffset = 0 // address = Rn + Imm
	A64ModePre    = 1 // address = Rn + Imm; Rn = address
	A64ModePost   = 2 // address = Rn; Rn = Rn + Imm
	A64ModeReg    = 3 // address = Rn + (extend(Rm, Shift) << Amount)
	A64ModeLit    = 4 // address = PC + Imm
	A64ModeMask   = 7
	// A64FlagAcquire (exclusives, LDAR): acquire/release semantics.
	A64FlagAcquire = 8
)

// Flags bits of other ops.
const (
	A64FlagInvert = 1 // logical register ops: Rm is inverted (BIC, ORN, EON, BICS)
	A64FlagImm    = 2 // CCMP/CCMN: second operand is Imm, not Rm
	A64FlagCRC32C = 1 // CRC32: the Castagnoli polynomial (CRC32C*)
)

// System register numbers in Imm of A64MRS/A64MSR.
const (
	A64SysNZCV = iota + 1
	A64SysFPCR
	A64SysFPSR
	A64SysTPIDR   // TPIDR_EL0 (read/write)
	A64SysTPIDRRO // TPIDRRO_EL0 (read only, 0 for native tasks)
	A64SysCTR     // CTR_EL0
	A64SysDCZID   // DCZID_EL0
	A64SysCNTVCT  // CNTVCT_EL0
	A64SysCNTFRQ  // CNTFRQ_EL0
)

// A64SysID is the first of the ID register numbers in Imm of A64MRS: MRS of
// the CPU ID space op0=3, op1=0, CRn=0 that Linux emulates for EL0
// (MIDR_EL1, MPIDR_EL1, REVIDR_EL1 with CRm=0; CRm 2..7 for the rest) is
// A64SysID + CRm<<3 | op2.
const A64SysID = 64

// Integer, load/store, branch and system operations. "Rd(SP)" means Rd
// may be A64RegSP; otherwise register 31 decodes as A64RegZR/A64RegDiscard.
// Sf selects 32/64-bit operation: 32-bit results are zero-extended.
const (
	_ A64Op = iota // A64Undefined

	// Data processing, immediate.
	A64ADDI  // Rd(SP) = Rn(SP) + Imm (SUB immediate is decoded with Imm negated)
	A64ADDSI // Rd = Rn(SP) + Imm, sets NZCV (ADDS/CMN immediate)
	A64SUBSI // Rd = Rn(SP) - Imm, sets NZCV (SUBS/CMP immediate)
	A64ADR   // Rd = PC + Imm
	A64ADRP  // Rd = (PC &^ 0xfff) + Imm
	A64ANDI  // Rd(SP) = Rn & Imm (Imm is the decoded bitmask)
	A64ORRI  // Rd(SP) = Rn | Imm
	A64EORI  // Rd(SP) = Rn ^ Imm
	A64ANDSI // Rd = Rn & Imm, sets NZCV (ANDS/TST immediate)
	A64MOVI  // Rd(SP) = Imm (MOVZ, MOVN, and MOV (bitmask) = ORR Rd, ZR, #imm; Imm is final)
	A64MOVK  // Rd = Rd&Imm2 | Imm
	A64UBFM  // Rd = ROR(Rn, Amount) & Imm (Imm = wmask & tmask); generic UBFM
	A64SBFM  // Rd = SBFM(Rn): bot = ROR(Rn, Amount) & Imm, tmask Imm2, sign bit Cond
	A64BFM   // Rd = BFM(Rd, Rn): ROR(Rn, Amount), wmask Imm, tmask Imm2
	A64LSLI  // Rd = Rn << Amount (UBFM alias LSL)
	A64LSRI  // Rd = Rn >> Amount (UBFM alias LSR)
	A64ASRI  // Rd = Rn >>s Amount (SBFM alias ASR)
	A64SXTW  // Rd = sign-extend(Rn, 32) (SBFM alias SXTW); also SXTB (Amount=8), SXTH (16): Amount = source bits
	A64EXTR  // Rd = (Rn:Rm) >> Amount

	// Data processing, register.
	A64ADDR  // Rd = Rn + shift(Rm, Shift, Amount)
	A64ADDSR // … sets NZCV
	A64SUBR  // Rd = Rn - shift(Rm)
	A64SUBSR // … sets NZCV
	A64ADDX  // Rd(SP) = Rn(SP) + extend(Rm, Shift) << Amount
	A64ADDSX // Rd = … sets NZCV
	A64SUBX  // Rd(SP) = Rn(SP) - extend(Rm) << Amount
	A64SUBSX // Rd = … sets NZCV
	A64ANDR  // Rd = Rn & shift(Rm) (^ if Flags&A64FlagInvert: BIC)
	A64ORRR  // Rd = Rn | shift(Rm) (ORN)
	A64EORR  // Rd = Rn ^ shift(Rm) (EON)
	A64ANDSR // Rd = Rn & shift(Rm), sets NZCV (ANDS, TST, BICS)
	A64MOVR  // Rd = Rm (MOV register = ORR Rd, ZR, Rm)
	A64ADC   // Rd = Rn + Rm + C
	A64ADCS  // … sets NZCV
	A64SBC   // Rd = Rn - Rm - !C
	A64SBCS  // … sets NZCV
	A64CCMN  // if Cond { NZCV = flags(Rn + op2) } else { NZCV = Amount }; op2 = Imm if Flags&A64FlagImm else Rm
	A64CCMP  // … Rn - op2
	A64CSEL  // Rd = Cond ? Rn : Rm
	A64CSINC // Rd = Cond ? Rn : Rm+1
	A64CSINV // Rd = Cond ? Rn : ^Rm
	A64CSNEG // Rd = Cond ? Rn : -Rm
	A64MADD  // Rd = Ra + Rn*Rm
	A64MSUB  // Rd = Ra - Rn*Rm
	A64SMADDL
	A64SMSUBL
	A64UMADDL
	A64UMSUBL
	A64SMULH
	A64UMULH
	A64UDIV
	A64SDIV
	A64LSLV
	A64LSRV
	A64ASRV
	A64RORV
	A64CRC32 // Rd = CRC32(Rn, Rm) over 1<<Size bytes; Flags&A64FlagCRC32C: Castagnoli
	A64RBIT
	A64REV16
	A64REV32 // 64-bit REV32 (32-bit REV is A64REV with Sf=0)
	A64REV
	A64CLZ
	A64CLS

	// Loads and stores. Rd is Rt, Ra is Rt2; Flags&A64ModeMask is the
	// addressing mode; Size is log2 of the access size in bytes; Sf is the
	// width of the destination for sign-extending loads.
	A64LDRB
	A64LDRH
	A64LDRW
	A64LDRX
	A64LDRSB
	A64LDRSH
	A64LDRSW
	A64STRB
	A64STRH
	A64STRW
	A64STRX
	A64LDRV // SIMD&FP register Rd (0..31) = zero-extended load of 1<<Size bytes (Size 0..4)
	A64STRV // store the low 1<<Size bytes of V[Rd]
	A64LDP  // Rd, Ra = two 1<<Size byte loads (Size 2, 3)
	A64LDPSW
	A64STP
	A64LDPV // SIMD&FP pair (Size 2, 3, 4)
	A64STPV
	A64PRFM // prefetch: no effect
	A64LDXR // load exclusive of 1<<Size bytes at Rn(SP) (Flags&A64FlagAcquire: LDAXR)
	A64STXR // Ra(status) = store exclusive of Rd (STLXR with A64FlagAcquire)
	A64LDXP // load exclusive pair Rd, Ra (Size 2, 3)
	A64STXP // Rm(status) = store exclusive pair Rd, Ra
	A64LDAR // load-acquire (LDAR, LDAPR)
	A64STLR // store-release

	// Branches. Imm is the signed offset from the instruction.
	A64B
	A64BL
	A64BCOND // if Cond: PC += Imm
	A64CBZ   // if Rd == 0 (Sf width)
	A64CBNZ
	A64TBZ // if bit Amount of Rd == 0
	A64TBNZ
	A64BR  // PC = Rn
	A64BLR // x30 = PC+4; PC = Rn
	A64RET // PC = Rn

	// Exceptions and system.
	A64SVC // Imm = imm16 (Linux ignores it)
	A64BRK // Imm = imm16
	A64NOP // NOP and every HINT (YIELD, WFE, BTI, PACIASP, …)
	A64CLREX
	A64DMB // DMB and DSB
	A64ISB
	A64MRS   // Rd = system register Imm (A64Sys…)
	A64MSR   // system register Imm = Rd
	A64DCZVA // zero the 64-byte block at Rd
	A64DCCVA // DC CVAU/CVAC/CIVAC at Rd: checks the address, no other effect
	A64ICIVAU

	// LSE atomics (a64lse.go). Rn(SP) is the base; Size is log2 of the
	// access size; Flags A64FlagAcquire/A64FlagRelease.
	A64LDOP // Rd(write) = old [Rn]; [Rn] = op(old, Rm); Imm = A64Atomic* kind (LDADD … LDUMIN, SWP)
	A64CAS  // Ra(write) = old [Rn]; if old == Rm { [Rn] = Rd }: Rm/Ra are Rs read/written, Rd is Rt
	A64CASP // pair: Rm, Ra = Rs, Rs+1 (read); Imm, Imm2 = Rs, Rs+1 (write); Rd, Shift = Rt, Rt+1; Size 2 or 3 per register

	// LRCPC2 and FlagM (a64flagm.go).
	A64LDAPUR // Rd = load-acquire (RCpc) of 1<<Size bytes at Rn(SP) + Imm; Flags&A64FlagSigned: sign-extend to Sf width
	A64STLUR  // store-release of Rd at Rn(SP) + Imm
	A64FLAGM  // NZCV manipulation: Imm = A64Flag* kind (CFINV, XAFLAG, AXFLAG, RMIF, SETF8/16)

	a64NumOps
)

const (
	A64Undefined A64Op = 0
	// A64SIMDBase is the first op number of the FP/SIMD group.
	A64SIMDBase A64Op = 1000
)

var a64OpNames = [...]string{
	A64Undefined: "undefined",
	A64ADDI:      "ADD(imm)", A64ADDSI: "ADDS(imm)", A64SUBSI: "SUBS(imm)", A64ADR: "ADR", A64ADRP: "ADRP",
	A64ANDI: "AND(imm)", A64ORRI: "ORR(imm)", A64EORI: "EOR(imm)", A64ANDSI: "ANDS(imm)",
	A64MOVI: "MOV(imm)", A64MOVK: "MOVK", A64UBFM: "UBFM", A64SBFM: "SBFM", A64BFM: "BFM",
	A64LSLI: "LSL(imm)", A64LSRI: "LSR(imm)", A64ASRI: "ASR(imm)", A64SXTW: "SXT", A64EXTR: "EXTR",
	A64ADDR: "ADD(reg)", A64ADDSR: "ADDS(reg)", A64SUBR: "SUB(reg)", A64SUBSR: "SUBS(reg)",
	A64ADDX: "ADD(ext)", A64ADDSX: "ADDS(ext)", A64SUBX: "SUB(ext)", A64SUBSX: "SUBS(ext)",
	A64ANDR: "AND(reg)", A64ORRR: "ORR(reg)", A64EORR: "EOR(reg)", A64ANDSR: "ANDS(reg)", A64MOVR: "MOV(reg)",
	A64ADC: "ADC", A64ADCS: "ADCS", A64SBC: "SBC", A64SBCS: "SBCS", A64CCMN: "CCMN", A64CCMP: "CCMP",
	A64CSEL: "CSEL", A64CSINC: "CSINC", A64CSINV: "CSINV", A64CSNEG: "CSNEG",
	A64MADD: "MADD", A64MSUB: "MSUB", A64SMADDL: "SMADDL", A64SMSUBL: "SMSUBL", A64UMADDL: "UMADDL",
	A64UMSUBL: "UMSUBL", A64SMULH: "SMULH", A64UMULH: "UMULH", A64UDIV: "UDIV", A64SDIV: "SDIV",
	A64LSLV: "LSLV", A64LSRV: "LSRV", A64ASRV: "ASRV", A64RORV: "RORV", A64CRC32: "CRC32",
	A64RBIT: "RBIT", A64REV16: "REV16", A64REV32: "REV32", A64REV: "REV", A64CLZ: "CLZ", A64CLS: "CLS",
	A64LDRB: "LDRB", A64LDRH: "LDRH", A64LDRW: "LDR(W)", A64LDRX: "LDR(X)", A64LDRSB: "LDRSB",
	A64LDRSH: "LDRSH", A64LDRSW: "LDRSW", A64STRB: "STRB", A64STRH: "STRH", A64STRW: "STR(W)",
	A64STRX: "STR(X)", A64LDRV: "LDR(V)", A64STRV: "STR(V)", A64LDP: "LDP", A64LDPSW: "LDPSW",
	A64STP: "STP", A64LDPV: "LDP(V)", A64STPV: "STP(V)", A64PRFM: "PRFM",
	A64LDXR: "LDXR", A64STXR: "STXR", A64LDXP: "LDXP", A64STXP: "STXP", A64LDAR: "LDAR", A64STLR: "STLR",
	A64B: "B", A64BL: "BL", A64BCOND: "B.cond", A64CBZ: "CBZ", A64CBNZ: "CBNZ", A64TBZ: "TBZ",
	A64TBNZ: "TBNZ", A64BR: "BR", A64BLR: "BLR", A64RET: "RET",
	A64SVC: "SVC", A64BRK: "BRK", A64NOP: "NOP", A64CLREX: "CLREX", A64DMB: "DMB", A64ISB: "ISB",
	A64MRS: "MRS", A64MSR: "MSR", A64DCZVA: "DC ZVA", A64DCCVA: "DC CVA*", A64ICIVAU: "IC IVAU",
	A64LDOP: "LD<op>/SWP", A64CAS: "CAS", A64CASP: "CASP",
	A64LDAPUR: "LDAPUR", A64STLUR: "STLUR", A64FLAGM: "FLAGM",
}

// String names the operation (the underlying instruction, not an alias).
func (op A64Op) String() string {
	if op >= A64SIMDBase {
		return A64SIMDOpName(op)
	}
	if int(op) < len(a64OpNames) && a64OpNames[op] != "" {
		return a64OpNames[op]
	}
	return "op?"
}

// Reasons for A64Undefined, in Imm of an undefined record.
const (
	A64WhyUnallocated = iota // not an instruction
	A64WhyLSE                // unused since FEAT_LSE is implemented (a64lse.go); kept so the numbers stay stable
	A64WhySVE
	A64WhyPAC     // pointer authentication outside the HINT space
	A64WhyMTE     // memory tagging
	A64WhyPriv    // not available at EL0 (HVC, SMC, ERET, MSR DAIF, DC IVAC, IC IALLU, …)
	A64WhySysReg  // MRS/MSR of a system register uvm does not provide (outside the ID space Linux emulates, e.g. CCSIDR_EL1)
	A64WhyFeature // an optional extension uvm does not implement
	A64WhySIMD    // an FP/SIMD encoding the FP/SIMD decoder does not implement
	A64WhyModel   // an instruction of a feature the CPU model (--cpu) does not have (A64RestrictFeatures)
)

var a64WhyText = [...]string{
	A64WhyUnallocated: "unallocated encoding",
	A64WhyLSE:         "LSE atomic instruction not implemented (HWCAP_ATOMICS not advertised)",
	A64WhySVE:         "SVE/SME instruction not implemented",
	A64WhyPAC:         "pointer authentication not implemented",
	A64WhyMTE:         "memory tagging not implemented",
	A64WhyPriv:        "instruction not available at EL0",
	A64WhySysReg:      "system register not implemented",
	A64WhyFeature:     "optional architecture extension not implemented",
	A64WhySIMD:        "FP/SIMD instruction not implemented",
	A64WhyModel:       "instruction of a feature outside the CPU model (--cpu)",
}

// A64UndefinedWhy explains why an A64Undefined record is undefined.
func A64UndefinedWhy(in *A64) string {
	if in.Imm < uint64(len(a64WhyText)) {
		return a64WhyText[in.Imm]
	}
	return "undefined instruction"
}
