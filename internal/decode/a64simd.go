package decode

// Scalar floating point and Advanced SIMD (Armv8.0 FP and ASIMD, FEAT_FP16
// arithmetic with a64fp16.go; crypto and dot product are in a64crypto.go and
// a64simdext.go): decoding into A64 records.
//
// Field conventions for every op below (unless its comment says otherwise):
//   - Rd, Rn, Rm, Ra: register numbers. V registers unless the comment names
//     a general register; a general register number 31 is XZR/WZR except the
//     base of a structure load/store, where it is SP.
//   - Size: element size as log2 bytes (0 = B, 1 = H, 2 = S, 3 = D). For
//     floating point it is the FP type: 1 = half, 2 = single, 3 = double.
//   - Q: 1 for a 128-bit vector, 0 for a 64-bit one (the upper half of the
//     destination is zeroed).
//   - Flags: SIMDScalar marks the Advanced SIMD scalar form (one element in
//     lane 0, the rest of the destination zeroed); SIMDByElem marks the
//     "by element" form (the second operand is lane Imm of Vm, broadcast).
//   - Imm: immediate / shift amount / lane index, as documented per op.

// Flags bits of SIMD records.
const (
	SIMDScalar   uint8 = 1 << 0 // Advanced SIMD scalar form
	SIMDByElem   uint8 = 1 << 1 // second operand is element Imm of Vm
	SIMDSignal   uint8 = 1 << 2 // FCMPE/FCCMPE: signal on quiet NaN
	SIMDZero     uint8 = 1 << 3 // FCMP with #0.0
	SIMDUnsigned uint8 = 1 << 4 // unsigned integer side (UCVTF, FCVTxU)
	SIMDLoad     uint8 = 1 << 5 // structure load (else store)
	SIMDPost     uint8 = 1 << 6 // post-indexed: Rm (31 = immediate Imm) added to Rn
)

// FP rounding selectors used in Imm2 of FRINT and FCVT-to-integer ops. The
// first four equal FPCR.RMode encodings.
const (
	FPRoundN   = 0 // to nearest, ties to even
	FPRoundP   = 1 // towards +Inf
	FPRoundM   = 2 // towards -Inf
	FPRoundZ   = 3 // towards zero
	FPRoundA   = 4 // to nearest, ties away from zero
	FPRoundX   = 5 // FPCR mode, signal inexact (FRINTX)
	FPRoundI   = 6 // FPCR mode (FRINTI); for conversions: FPCR mode
	FPRoundOdd = 7 // von Neumann rounding (FCVTXN)
)

// SIMD/FP operation numbers. All are >= A64SIMDBase.
const (
	// ---- scalar floating point (FP data-processing groups) ----

	A64FMOV       A64Op = A64SIMDBase + iota // FMOV Vd, Vn (scalar register copy)
	A64FABS                                  // FABS
	A64FNEG                                  // FNEG
	A64FSQRT                                 // FSQRT
	A64FCVT                                  // FCVT: Size = source type, Imm = destination type
	A64FRINT                                 // FRINT<r>: Imm2 = FPRound* selector
	A64FADD                                  // FADD
	A64FSUB                                  // FSUB
	A64FMUL                                  // FMUL
	A64FDIV                                  // FDIV
	A64FNMUL                                 // FNMUL
	A64FMAX                                  // FMAX
	A64FMIN                                  // FMIN
	A64FMAXNM                                // FMAXNM
	A64FMINNM                                // FMINNM
	A64FMADD                                 // FMADD Rd = Ra + Rn*Rm
	A64FMSUB                                 // FMSUB Rd = Ra - Rn*Rm
	A64FNMADD                                // FNMADD Rd = -Ra - Rn*Rm
	A64FNMSUB                                // FNMSUB Rd = -Ra + Rn*Rm
	A64FCMP                                  // FCMP(E): Flags SIMDSignal, SIMDZero
	A64FCCMP                                 // FCCMP(E): Cond, Imm = nzcv, Flags SIMDSignal
	A64FCSEL                                 // FCSEL: Cond
	A64FMOVI                                 // FMOV Vd, #imm: Imm = bit pattern of the value
	A64FCVTI                                 // FCVT<r><S|U> / FCVTZ<S|U> (fixed) Rd(general) <- Rn: Sf, Imm2 = FPRound*, Imm = fbits, Flags SIMDUnsigned
	A64ICVTF                                 // SCVTF/UCVTF Rd <- Rn(general): Sf, Imm = fbits, Flags SIMDUnsigned
	A64FMOVTOGP                              // FMOV Rd(general) <- Rn: Sf, Size, Imm = 1 for Vn.D[1]
	A64FMOVFROMGP                            // FMOV Rd <- Rn(general): Sf, Size, Imm = 1 for Vd.D[1]

	// ---- Advanced SIMD: three registers, same type (integer) ----

	A64VSHADD
	A64VUHADD
	A64VSRHADD
	A64VURHADD
	A64VSHSUB
	A64VUHSUB
	A64VSQADD
	A64VUQADD
	A64VSQSUB
	A64VUQSUB
	A64VAND
	A64VBIC
	A64VORR
	A64VORN
	A64VEOR
	A64VBSL
	A64VBIT
	A64VBIF
	A64VCMGT
	A64VCMHI
	A64VCMGE
	A64VCMHS
	A64VCMEQ
	A64VCMTST
	A64VSSHL
	A64VUSHL
	A64VSQSHL
	A64VUQSHL
	A64VSRSHL
	A64VURSHL
	A64VSQRSHL
	A64VUQRSHL
	A64VSMAX
	A64VUMAX
	A64VSMIN
	A64VUMIN
	A64VSABD
	A64VUABD
	A64VSABA
	A64VUABA
	A64VADD
	A64VSUB
	A64VMLA // also by element
	A64VMLS // also by element
	A64VMUL // also by element
	A64VPMUL
	A64VSMAXP
	A64VUMAXP
	A64VSMINP
	A64VUMINP
	A64VSQDMULH  // also by element
	A64VSQRDMULH // also by element
	A64VADDP     // also scalar (ADDP Dd, Vn.2D: Rm = Rn)

	// ---- three registers, different types: Size = narrow element size;
	// Q = 1 selects the upper halves of the narrow operands ("2" forms) ----

	A64VSADDL
	A64VUADDL
	A64VSADDW
	A64VUADDW
	A64VSSUBL
	A64VUSUBL
	A64VSSUBW
	A64VUSUBW
	A64VADDHN
	A64VRADDHN
	A64VSUBHN
	A64VRSUBHN
	A64VSABAL
	A64VUABAL
	A64VSABDL
	A64VUABDL
	A64VSMLAL // also by element
	A64VUMLAL // also by element
	A64VSMLSL // also by element
	A64VUMLSL // also by element
	A64VSMULL // also by element
	A64VUMULL // also by element
	A64VPMULL
	A64VSQDMULL // also by element
	A64VSQDMLAL // also by element
	A64VSQDMLSL // also by element

	// ---- two-register miscellaneous ----

	A64VREV64
	A64VREV32
	A64VREV16
	A64VSADDLP // Size = source element size
	A64VUADDLP
	A64VSADALP
	A64VUADALP
	A64VSUQADD
	A64VUSQADD
	A64VCLS
	A64VCLZ
	A64VCNT
	A64VNOT
	A64VRBIT
	A64VSQABS
	A64VSQNEG
	A64VCMGT0
	A64VCMGE0
	A64VCMEQ0
	A64VCMLE0
	A64VCMLT0
	A64VABS
	A64VNEG
	A64VXTN    // Size = destination (narrow) size; Q selects XTN2
	A64VSQXTN  // as XTN
	A64VUQXTN  // as XTN
	A64VSQXTUN // as XTN
	A64VSHLL   // Size = source size
	A64VFCVTN  // Size = source FP type (3: D->S, 2: S->H)
	A64VFCVTXN // D -> S, round to odd
	A64VFCVTL  // Size = destination FP type (3: S->D, 2: H->S)
	A64VFRINT  // Imm2 = FPRound*
	A64VFCVTI  // FP -> integer per element: Imm2 = FPRound*, Imm = fbits, Flags SIMDUnsigned
	A64VICVTF  // integer -> FP per element: Imm = fbits, Flags SIMDUnsigned
	A64VFCMGT0
	A64VFCMGE0
	A64VFCMEQ0
	A64VFCMLE0
	A64VFCMLT0
	A64VFABS
	A64VFNEG
	A64VFSQRT
	A64VURECPE
	A64VURSQRTE
	A64VFRECPE
	A64VFRSQRTE
	A64VFRECPX

	// ---- across lanes: Size = source element size ----

	A64VSADDLV
	A64VUADDLV
	A64VSMAXV
	A64VUMAXV
	A64VSMINV
	A64VUMINV
	A64VADDV
	A64VFMAXNMV
	A64VFMINNMV
	A64VFMAXV
	A64VFMINV

	// ---- three registers, same type (floating point); Size = FP type ----

	A64VFMAXNM
	A64VFMINNM
	A64VFMLA // also by element
	A64VFMLS // also by element
	A64VFADD
	A64VFSUB
	A64VFMULX // also by element
	A64VFCMEQ
	A64VFMAX
	A64VFMIN
	A64VFRECPS
	A64VFRSQRTS
	A64VFMAXNMP // also scalar pairwise (Rm = Rn)
	A64VFMINNMP
	A64VFADDP
	A64VFMUL // also by element
	A64VFCMGE
	A64VFACGE
	A64VFCMGT
	A64VFACGT
	A64VFMAXP
	A64VFMINP
	A64VFDIV
	A64VFABD

	// ---- copy ----

	A64VDUPE  // DUP Vd.T, Vn.T[Imm] (also the scalar MOV Vd, Vn.T[Imm])
	A64VDUPG  // DUP Vd.T, Rn(general)
	A64VINSG  // INS Vd.T[Imm], Rn(general)
	A64VINSE  // INS Vd.T[Imm], Vn.T[Imm2]
	A64VSMOV  // SMOV Rd(general), Vn.T[Imm]: Sf
	A64VUMOV  // UMOV Rd(general), Vn.T[Imm]: Sf
	A64VMOVI  // MOVI: Imm = the 64-bit pattern (replicated); Q=0 with Size 3 = MOVI Dd
	A64VMVNI  // MVNI: Imm = the 64-bit pattern before inversion
	A64VFMOVI // FMOV Vd.T, #imm: Imm = the 64-bit pattern
	A64VORRI  // ORR Vd.T, #imm: Imm = 64-bit pattern
	A64VBICI  // BIC Vd.T, #imm: Imm = 64-bit pattern

	// ---- shift by immediate: Imm = shift (or fbits); Size = element size
	// (narrowing: destination size; widening: source size) ----

	A64VSSHR
	A64VUSHR
	A64VSSRA
	A64VUSRA
	A64VSRSHR
	A64VURSHR
	A64VSRSRA
	A64VURSRA
	A64VSRI
	A64VSHL
	A64VSLI
	A64VSQSHLU
	A64VSQSHLI
	A64VUQSHLI
	A64VSHRN
	A64VRSHRN
	A64VSQSHRUN
	A64VSQRSHRUN
	A64VSQSHRN
	A64VUQSHRN
	A64VSQRSHRN
	A64VUQRSHRN
	A64VSSHLL
	A64VUSHLL

	// ---- permute / table ----

	A64VUZP1
	A64VUZP2
	A64VTRN1
	A64VTRN2
	A64VZIP1
	A64VZIP2
	A64VEXT // Imm = byte index
	A64VTBL // Imm = number of table registers (1..4)
	A64VTBX // Imm = number of table registers (1..4)

	// ---- structure loads and stores. Rd = first register Rt, Rn = base
	// (31 = SP), Rm = post-index register (31: immediate, in Imm), Flags
	// SIMDLoad and SIMDPost, Size = element size, Q.
	// Imm2 = selem | rpt<<8 | lane<<16 ----

	A64VLDST  // LD1-4 / ST1-4 (multiple structures)
	A64VLDSTL // LD1-4 / ST1-4 (single structure, one lane)
	A64VLDR   // LD1R-LD4R (single structure, replicate)

	a64SIMDEnd
)

// NumA64SIMDOps is the number of SIMD/FP ops, the ops of a64crypto.go and
// a64simdext.go included (for dense tables).
const NumA64SIMDOps = int(a64SIMDExtEnd - A64SIMDBase)

// A64SIMDOpName returns the mnemonic of a SIMD/FP op ("" for others).
func A64SIMDOpName(op A64Op) string {
	if op >= a64SIMDEnd {
		return a64CryptoName(op)
	}
	if op < A64SIMDBase {
		return ""
	}
	return a64SIMDNames[op-A64SIMDBase]
}

var a64SIMDNames = [...]string{
	A64FMOV - A64SIMDBase: "fmov", A64FABS - A64SIMDBase: "fabs", A64FNEG - A64SIMDBase: "fneg",
	A64FSQRT - A64SIMDBase: "fsqrt", A64FCVT - A64SIMDBase: "fcvt", A64FRINT - A64SIMDBase: "frint",
	A64FADD - A64SIMDBase: "fadd", A64FSUB - A64SIMDBase: "fsub", A64FMUL - A64SIMDBase: "fmul",
	A64FDIV - A64SIMDBase: "fdiv", A64FNMUL - A64SIMDBase: "fnmul", A64FMAX - A64SIMDBase: "fmax",
	A64FMIN - A64SIMDBase: "fmin", A64FMAXNM - A64SIMDBase: "fmaxnm", A64FMINNM - A64SIMDBase: "fminnm",
	A64FMADD - A64SIMDBase: "fmadd", A64FMSUB - A64SIMDBase: "fmsub", A64FNMADD - A64SIMDBase: "fnmadd",
	A64FNMSUB - A64SIMDBase: "fnmsub", A64FCMP - A64SIMDBase: "fcmp", A64FCCMP - A64SIMDBase: "fccmp",
	A64FCSEL - A64SIMDBase: "fcsel", A64FMOVI - A64SIMDBase: "fmov", A64FCVTI - A64SIMDBase: "fcvt*",
	A64ICVTF - A64SIMDBase: "cvtf", A64FMOVTOGP - A64SIMDBase: "fmov", A64FMOVFROMGP - A64SIMDBase: "fmov",

	A64VSHADD - A64SIMDBase: "shadd", A64VUHADD - A64SIMDBase: "uhadd", A64VSRHADD - A64SIMDBase: "srhadd",
	A64VURHADD - A64SIMDBase: "urhadd", A64VSHSUB - A64SIMDBase: "shsub", A64VUHSUB - A64SIMDBase: "uhsub",
	A64VSQADD - A64SIMDBase: "sqadd", A64VUQADD - A64SIMDBase: "uqadd", A64VSQSUB - A64SIMDBase: "sqsub",
	A64VUQSUB - A64SIMDBase: "uqsub", A64VAND - A64SIMDBase: "and", A64VBIC - A64SIMDBase: "bic",
	A64VORR - A64SIMDBase: "orr", A64VORN - A64SIMDBase: "orn", A64VEOR - A64SIMDBase: "eor",
	A64VBSL - A64SIMDBase: "bsl", A64VBIT - A64SIMDBase: "bit", A64VBIF - A64SIMDBase: "bif",
	A64VCMGT - A64SIMDBase: "cmgt", A64VCMHI - A64SIMDBase: "cmhi", A64VCMGE - A64SIMDBase: "cmge",
	A64VCMHS - A64SIMDBase: "cmhs", A64VCMEQ - A64SIMDBase: "cmeq", A64VCMTST - A64SIMDBase: "cmtst",
	A64VSSHL - A64SIMDBase: "sshl", A64VUSHL - A64SIMDBase: "ushl", A64VSQSHL - A64SIMDBase: "sqshl",
	A64VUQSHL - A64SIMDBase: "uqshl", A64VSRSHL - A64SIMDBase: "srshl", A64VURSHL - A64SIMDBase: "urshl",
	A64VSQRSHL - A64SIMDBase: "sqrshl", A64VUQRSHL - A64SIMDBase: "uqrshl", A64VSMAX - A64SIMDBase: "smax",
	A64VUMAX - A64SIMDBase: "umax", A64VSMIN - A64SIMDBase: "smin", A64VUMIN - A64SIMDBase: "umin",
	A64VSABD - A64SIMDBase: "sabd", A64VUABD - A64SIMDBase: "uabd", A64VSABA - A64SIMDBase: "saba",
	A64VUABA - A64SIMDBase: "uaba", A64VADD - A64SIMDBase: "add", A64VSUB - A64SIMDBase: "sub",
	A64VMLA - A64SIMDBase: "mla", A64VMLS - A64SIMDBase: "mls", A64VMUL - A64SIMDBase: "mul",
	A64VPMUL - A64SIMDBase: "pmul", A64VSMAXP - A64SIMDBase: "smaxp", A64VUMAXP - A64SIMDBase: "umaxp",
	A64VSMINP - A64SIMDBase: "sminp", A64VUMINP - A64SIMDBase: "uminp", A64VSQDMULH - A64SIMDBase: "sqdmulh",
	A64VSQRDMULH - A64SIMDBase: "sqrdmulh", A64VADDP - A64SIMDBase: "addp",

	A64VSADDL - A64SIMDBase: "saddl", A64VUADDL - A64SIMDBase: "uaddl", A64VSADDW - A64SIMDBase: "saddw",
	A64VUADDW - A64SIMDBase: "uaddw", A64VSSUBL - A64SIMDBase: "ssubl", A64VUSUBL - A64SIMDBase: "usubl",
	A64VSSUBW - A64SIMDBase: "ssubw", A64VUSUBW - A64SIMDBase: "usubw", A64VADDHN - A64SIMDBase: "addhn",
	A64VRADDHN - A64SIMDBase: "raddhn", A64VSUBHN - A64SIMDBase: "subhn", A64VRSUBHN - A64SIMDBase: "rsubhn",
	A64VSABAL - A64SIMDBase: "sabal", A64VUABAL - A64SIMDBase: "uabal", A64VSABDL - A64SIMDBase: "sabdl",
	A64VUABDL - A64SIMDBase: "uabdl", A64VSMLAL - A64SIMDBase: "smlal", A64VUMLAL - A64SIMDBase: "umlal",
	A64VSMLSL - A64SIMDBase: "smlsl", A64VUMLSL - A64SIMDBase: "umlsl", A64VSMULL - A64SIMDBase: "smull",
	A64VUMULL - A64SIMDBase: "umull", A64VPMULL - A64SIMDBase: "pmull", A64VSQDMULL - A64SIMDBase: "sqdmull",
	A64VSQDMLAL - A64SIMDBase: "sqdmlal", A64VSQDMLSL - A64SIMDBase: "sqdmlsl",

	A64VREV64 - A64SIMDBase: "rev64", A64VREV32 - A64SIMDBase: "rev32", A64VREV16 - A64SIMDBase: "rev16",
	A64VSADDLP - A64SIMDBase: "saddlp", A64VUADDLP - A64SIMDBase: "uaddlp", A64VSADALP - A64SIMDBase: "sadalp",
	A64VUADALP - A64SIMDBase: "uadalp", A64VSUQADD - A64SIMDBase: "suqadd", A64VUSQADD - A64SIMDBase: "usqadd",
	A64VCLS - A64SIMDBase: "cls", A64VCLZ - A64SIMDBase: "clz", A64VCNT - A64SIMDBase: "cnt",
	A64VNOT - A64SIMDBase: "not", A64VRBIT - A64SIMDBase: "rbit", A64VSQABS - A64SIMDBase: "sqabs",
	A64VSQNEG - A64SIMDBase: "sqneg", A64VCMGT0 - A64SIMDBase: "cmgt", A64VCMGE0 - A64SIMDBase: "cmge",
	A64VCMEQ0 - A64SIMDBase: "cmeq", A64VCMLE0 - A64SIMDBase: "cmle", A64VCMLT0 - A64SIMDBase: "cmlt",
	A64VABS - A64SIMDBase: "abs", A64VNEG - A64SIMDBase: "neg", A64VXTN - A64SIMDBase: "xtn",
	A64VSQXTN - A64SIMDBase: "sqxtn", A64VUQXTN - A64SIMDBase: "uqxtn", A64VSQXTUN - A64SIMDBase: "sqxtun",
	A64VSHLL - A64SIMDBase: "shll", A64VFCVTN - A64SIMDBase: "fcvtn", A64VFCVTXN - A64SIMDBase: "fcvtxn",
	A64VFCVTL - A64SIMDBase: "fcvtl", A64VFRINT - A64SIMDBase: "frint", A64VFCVTI - A64SIMDBase: "fcvt*",
	A64VICVTF - A64SIMDBase: "cvtf", A64VFCMGT0 - A64SIMDBase: "fcmgt", A64VFCMGE0 - A64SIMDBase: "fcmge",
	A64VFCMEQ0 - A64SIMDBase: "fcmeq", A64VFCMLE0 - A64SIMDBase: "fcmle", A64VFCMLT0 - A64SIMDBase: "fcmlt",
	A64VFABS - A64SIMDBase: "fabs", A64VFNEG - A64SIMDBase: "fneg", A64VFSQRT - A64SIMDBase: "fsqrt",
	A64VURECPE - A64SIMDBase: "urecpe", A64VURSQRTE - A64SIMDBase: "ursqrte", A64VFRECPE - A64SIMDBase: "frecpe",
	A64VFRSQRTE - A64SIMDBase: "frsqrte", A64VFRECPX - A64SIMDBase: "frecpx",

	A64VSADDLV - A64SIMDBase: "saddlv", A64VUADDLV - A64SIMDBase: "uaddlv", A64VSMAXV - A64SIMDBase: "smaxv",
	A64VUMAXV - A64SIMDBase: "umaxv", A64VSMINV - A64SIMDBase: "sminv", A64VUMINV - A64SIMDBase: "uminv",
	A64VADDV - A64SIMDBase: "addv", A64VFMAXNMV - A64SIMDBase: "fmaxnmv", A64VFMINNMV - A64SIMDBase: "fminnmv",
	A64VFMAXV - A64SIMDBase: "fmaxv", A64VFMINV - A64SIMDBase: "fminv",

	A64VFMAXNM - A64SIMDBase: "fmaxnm", A64VFMINNM - A64SIMDBase: "fminnm", A64VFMLA - A64SIMDBase: "fmla",
	A64VFMLS - A64SIMDBase: "fmls", A64VFADD - A64SIMDBase: "fadd", A64VFSUB - A64SIMDBase: "fsub",
	A64VFMULX - A64SIMDBase: "fmulx", A64VFCMEQ - A64SIMDBase: "fcmeq", A64VFMAX - A64SIMDBase: "fmax",
	A64VFMIN - A64SIMDBase: "fmin", A64VFRECPS - A64SIMDBase: "frecps", A64VFRSQRTS - A64SIMDBase: "frsqrts",
	A64VFMAXNMP - A64SIMDBase: "fmaxnmp", A64VFMINNMP - A64SIMDBase: "fminnmp", A64VFADDP - A64SIMDBase: "faddp",
	A64VFMUL - A64SIMDBase: "fmul", A64VFCMGE - A64SIMDBase: "fcmge", A64VFACGE - A64SIMDBase: "facge",
	A64VFCMGT - A64SIMDBase: "fcmgt", A64VFACGT - A64SIMDBase: "facgt", A64VFMAXP - A64SIMDBase: "fmaxp",
	A64VFMINP - A64SIMDBase: "fminp", A64VFDIV - A64SIMDBase: "fdiv", A64VFABD - A64SIMDBase: "fabd",

	A64VDUPE - A64SIMDBase: "dup", A64VDUPG - A64SIMDBase: "dup", A64VINSG - A64SIMDBase: "ins",
	A64VINSE - A64SIMDBase: "ins", A64VSMOV - A64SIMDBase: "smov", A64VUMOV - A64SIMDBase: "umov",
	A64VMOVI - A64SIMDBase: "movi", A64VMVNI - A64SIMDBase: "mvni", A64VFMOVI - A64SIMDBase: "fmov",
	A64VORRI - A64SIMDBase: "orr", A64VBICI - A64SIMDBase: "bic",

	A64VSSHR - A64SIMDBase: "sshr", A64VUSHR - A64SIMDBase: "ushr", A64VSSRA - A64SIMDBase: "ssra",
	A64VUSRA - A64SIMDBase: "usra", A64VSRSHR - A64SIMDBase: "srshr", A64VURSHR - A64SIMDBase: "urshr",
	A64VSRSRA - A64SIMDBase: "srsra", A64VURSRA - A64SIMDBase: "ursra", A64VSRI - A64SIMDBase: "sri",
	A64VSHL - A64SIMDBase: "shl", A64VSLI - A64SIMDBase: "sli", A64VSQSHLU - A64SIMDBase: "sqshlu",
	A64VSQSHLI - A64SIMDBase: "sqshl", A64VUQSHLI - A64SIMDBase: "uqshl", A64VSHRN - A64SIMDBase: "shrn",
	A64VRSHRN - A64SIMDBase: "rshrn", A64VSQSHRUN - A64SIMDBase: "sqshrun", A64VSQRSHRUN - A64SIMDBase: "sqrshrun",
	A64VSQSHRN - A64SIMDBase: "sqshrn", A64VUQSHRN - A64SIMDBase: "uqshrn", A64VSQRSHRN - A64SIMDBase: "sqrshrn",
	A64VUQRSHRN - A64SIMDBase: "uqrshrn", A64VSSHLL - A64SIMDBase: "sshll", A64VUSHLL - A64SIMDBase: "ushll",

	A64VUZP1 - A64SIMDBase: "uzp1", A64VUZP2 - A64SIMDBase: "uzp2", A64VTRN1 - A64SIMDBase: "trn1",
	A64VTRN2 - A64SIMDBase: "trn2", A64VZIP1 - A64SIMDBase: "zip1", A64VZIP2 - A64SIMDBase: "zip2",
	A64VEXT - A64SIMDBase: "ext", A64VTBL - A64SIMDBase: "tbl", A64VTBX - A64SIMDBase: "tbx",

	A64VLDST - A64SIMDBase: "ld/st", A64VLDSTL - A64SIMDBase: "ld/st lane", A64VLDR - A64SIMDBase: "ldr",
}

// bitfield helpers
func bf(raw uint32, lo, n uint) uint32 { return raw >> lo & (1<<n - 1) }

// fpSize maps an FP "ftype" field to Size (log2 bytes); ok is false for
// the reserved encoding 10. Half precision (ftype 11, Size 1) is FEAT_FP16
// arithmetic (A64.Feature reports it).
func fpSize(ftype uint32) (uint8, bool) {
	switch ftype {
	case 0:
		return 2, true
	case 1:
		return 3, true
	case 3:
		return 1, true
	}
	return 0, false
}

// decodeA64SIMD decodes the "Data Processing -- Scalar Floating-Point and
// Advanced SIMD" encoding group (op0 = x111). It returns false when the
// encoding is not one uvm implements (the caller reports it undefined).
func decodeA64SIMD(raw uint32, in *A64) bool {
	*in = A64{Raw: raw}
	if bf(raw, 25, 3) != 7 {
		return false
	}
	in.Rd = uint8(raw & 31)
	in.Rn = uint8(raw >> 5 & 31)
	in.Rm = uint8(raw >> 16 & 31)
	op0 := raw >> 28
	if op0 == 0b0100 || op0 == 0b0101 || op0 == 0b1100 {
		if decodeA64Crypto(raw, in) {
			return true
		}
	}
	var ok bool
	switch {
	case op0&0b0101 == 0b0001: // x0x1
		ok = decodeFP(raw, in)
	case op0&0b1001 == 0b0000: // 0xx0
		ok = decodeVec(raw, in, false)
	case op0&0b1101 == 0b0101: // 01x1
		ok = decodeVec(raw, in, true)
	}
	if !ok {
		*in = A64{Raw: raw}
	}
	return ok
}

// decodeFP decodes the scalar floating-point groups.
func decodeFP(raw uint32, in *A64) bool {
	if bf(raw, 29, 1) != 0 { // S
		return false
	}
	ftype := bf(raw, 22, 2)
	sf := uint8(raw >> 31)
	if bf(raw, 24, 1) == 0 && bf(raw, 21, 1) == 0 {
		// conversion between floating point and fixed point
		size, ok := fpSize(ftype)
		scale := bf(raw, 10, 6)
		if !ok || (sf == 0 && scale < 32) {
			return false
		}
		in.Size, in.Sf, in.Imm = size, sf, uint64(64-scale)
		switch bf(raw, 16, 5) { // rmode:opcode
		case 0b00010:
			in.Op = A64ICVTF
		case 0b00011:
			in.Op, in.Flags = A64ICVTF, SIMDUnsigned
		case 0b11000:
			in.Op, in.Imm2 = A64FCVTI, FPRoundZ
		case 0b11001:
			in.Op, in.Imm2, in.Flags = A64FCVTI, FPRoundZ, SIMDUnsigned
		default:
			return false
		}
		return true
	}
	if bf(raw, 24, 1) == 0 && bf(raw, 10, 6) == 0 {
		// conversion between floating point and integer
		rmode, opcode := bf(raw, 19, 2), bf(raw, 16, 3)
		in.Sf = sf
		switch opcode {
		case 0, 1, 4, 5:
			size, ok := fpSize(ftype)
			if !ok {
				return false
			}
			in.Op, in.Size = A64FCVTI, size
			if opcode&1 != 0 {
				in.Flags = SIMDUnsigned
			}
			if opcode >= 4 {
				if rmode != 0 {
					return false
				}
				in.Imm2 = FPRoundA
			} else {
				in.Imm2 = uint64(rmode) // N P M Z
			}
			return true
		case 2, 3:
			size, ok := fpSize(ftype)
			if !ok || rmode != 0 {
				return false
			}
			in.Op, in.Size = A64ICVTF, size
			if opcode == 3 {
				in.Flags = SIMDUnsigned
			}
			return true
		case 6, 7:
			if opcode == 6 && rmode == 3 && sf == 0 && ftype == 1 { // FJCVTZS (a64simdext.go)
				in.Op, in.Size = A64FJCVTZS, 3
				return true
			}
			in.Op = A64FMOVTOGP
			if opcode == 7 {
				in.Op = A64FMOVFROMGP
			}
			switch {
			case rmode == 0 && ftype == 3: // FMOV Wd|Xd, Hn / Hd, Wn|Xn (FEAT_FP16)
				in.Size = 1
			case rmode == 0 && sf == 0 && ftype == 0:
				in.Size = 2
			case rmode == 0 && sf == 1 && ftype == 1:
				in.Size = 3
			case rmode == 1 && sf == 1 && ftype == 2:
				in.Size, in.Imm = 3, 1
			default:
				return false
			}
			return true
		}
		return false
	}
	if sf != 0 { // M
		return false
	}
	if bf(raw, 24, 1) == 1 {
		// data-processing, 3 source
		size, ok := fpSize(ftype)
		if !ok {
			return false
		}
		in.Size = size
		in.Ra = uint8(raw >> 10 & 31)
		in.Op = [4]A64Op{A64FMADD, A64FMSUB, A64FNMADD, A64FNMSUB}[bf(raw, 21, 1)<<1|bf(raw, 15, 1)]
		return true
	}
	// bit 21 is 1 from here on
	switch {
	case bf(raw, 10, 5) == 0b10000: // data-processing, 1 source
		opcode := bf(raw, 15, 6)
		if opcode&0b111100 == 0b000100 { // FCVT
			var src uint8
			switch ftype {
			case 0:
				src = 2
			case 1:
				src = 3
			case 3:
				src = 1
			default:
				return false
			}
			var dst uint8
			switch opcode & 3 {
			case 0:
				dst = 2
			case 1:
				dst = 3
			case 3:
				dst = 1
			default:
				return false
			}
			if src == dst {
				return false
			}
			in.Op, in.Size, in.Imm = A64FCVT, src, uint64(dst)
			return true
		}
		size, ok := fpSize(ftype)
		if !ok {
			return false
		}
		in.Size = size
		switch opcode {
		case 0:
			in.Op = A64FMOV
		case 1:
			in.Op = A64FABS
		case 2:
			in.Op = A64FNEG
		case 3:
			in.Op = A64FSQRT
		case 8, 9, 10, 11, 12:
			in.Op, in.Imm2 = A64FRINT, uint64(opcode-8)
		case 14:
			in.Op, in.Imm2 = A64FRINT, FPRoundX
		case 15:
			in.Op, in.Imm2 = A64FRINT, FPRoundI
		case 16, 17, 18, 19: // FRINT32Z, FRINT32X, FRINT64Z, FRINT64X (a64simdext.go)
			if size == 1 {
				return false
			}
			in.Op, in.Imm2 = A64FRINTTS, uint64(opcode-16)
		default:
			return false
		}
		return true
	case bf(raw, 10, 4) == 0b1000: // compare
		size, ok := fpSize(ftype)
		if !ok || bf(raw, 14, 2) != 0 || bf(raw, 0, 3) != 0 {
			return false
		}
		in.Op, in.Size = A64FCMP, size
		if raw&0x10 != 0 {
			in.Flags |= SIMDSignal
		}
		if raw&0x08 != 0 {
			in.Flags |= SIMDZero
		}
		return true
	case bf(raw, 10, 3) == 0b100: // immediate
		size, ok := fpSize(ftype)
		if !ok || bf(raw, 5, 5) != 0 {
			return false
		}
		in.Op, in.Size, in.Rn, in.Rm = A64FMOVI, size, 0, 0
		in.Imm = vfpExpandImm(bf(raw, 13, 8), size)
		return true
	}
	size, ok := fpSize(ftype)
	if !ok {
		return false
	}
	in.Size = size
	switch bf(raw, 10, 2) {
	case 1: // conditional compare
		in.Op = A64FCCMP
		in.Cond = uint8(bf(raw, 12, 4))
		in.Imm = uint64(raw & 15)
		if raw&0x10 != 0 {
			in.Flags = SIMDSignal
		}
		return true
	case 2: // data-processing, 2 source
		opcode := bf(raw, 12, 4)
		if opcode > 8 {
			return false
		}
		in.Op = [9]A64Op{A64FMUL, A64FDIV, A64FADD, A64FSUB, A64FMAX, A64FMIN, A64FMAXNM, A64FMINNM, A64FNMUL}[opcode]
		return true
	case 3: // conditional select
		in.Op = A64FCSEL
		in.Cond = uint8(bf(raw, 12, 4))
		return true
	}
	return false
}

// vfpExpandImm is VFPExpandImm: the 8-bit FMOV immediate as a bit pattern
// of the FP type size (1: half, 2: single, 3: double).
func vfpExpandImm(imm8 uint32, size uint8) uint64 {
	sign := uint64(imm8 >> 7)
	b6 := uint64(imm8 >> 6 & 1)
	low := uint64(imm8 & 0x3f) // imm8<5:0>
	switch size {
	case 1:
		// sign : NOT(b6) : Replicate(b6,2) : imm8<5:0> : Zeros(6)
		exp := (b6^1)<<4 | b6*3<<2 | low>>4
		return sign<<15 | exp<<10 | (low&15)<<6
	case 2:
		// sign : NOT(b6) : Replicate(b6,5) : imm8<5:4> : imm8<3:0> : Zeros(19)
		exp := (b6^1)<<7 | b6*0x1f<<2 | low>>4
		return sign<<31 | exp<<23 | (low&15)<<19
	}
	exp := (b6^1)<<10 | b6*0xff<<2 | low>>4
	return sign<<63 | exp<<52 | (low&15)<<48
}

// advSIMDExpandImm is AdvSIMDExpandImm.
func advSIMDExpandImm(op, cmode, imm8 uint32) uint64 {
	i := uint64(imm8)
	rep2 := func(x uint64) uint64 { return x | x<<32 }
	rep4 := func(x uint64) uint64 { return x | x<<16 | x<<32 | x<<48 }
	switch cmode >> 1 {
	case 0:
		return rep2(i)
	case 1:
		return rep2(i << 8)
	case 2:
		return rep2(i << 16)
	case 3:
		return rep2(i << 24)
	case 4:
		return rep4(i)
	case 5:
		return rep4(i << 8)
	case 6:
		if cmode&1 == 0 {
			return rep2(i<<8 | 0xff)
		}
		return rep2(i<<16 | 0xffff)
	}
	switch {
	case cmode&1 == 0 && op == 0:
		return i * 0x0101010101010101
	case cmode&1 == 0 && op == 1:
		var r uint64
		for b := 0; b < 8; b++ {
			if i>>b&1 != 0 {
				r |= 0xff << (8 * b)
			}
		}
		return r
	case cmode&1 == 1 && op == 0:
		return rep2(vfpExpandImm(imm8, 2))
	}
	return vfpExpandImm(imm8, 3)
}

// size masks for the tables below: bit s set means element size s allowed.
const (
	sB    = 1
	sH    = 2
	sS    = 4
	sD    = 8
	sBHS  = sB | sH | sS
	sBHSD = sBHS | sD
	sHS   = sH | sS
)

type vop struct {
	op    A64Op
	sizes uint8
}

// threeSame[U][opcode] for integer opcodes 0..23 (opcode 3 is logic).
var threeSame = [2][24]vop{
	{
		{A64VSHADD, sBHS}, {A64VSQADD, sBHSD}, {A64VSRHADD, sBHS}, {},
		{A64VSHSUB, sBHS}, {A64VSQSUB, sBHSD}, {A64VCMGT, sBHSD}, {A64VCMGE, sBHSD},
		{A64VSSHL, sBHSD}, {A64VSQSHL, sBHSD}, {A64VSRSHL, sBHSD}, {A64VSQRSHL, sBHSD},
		{A64VSMAX, sBHS}, {A64VSMIN, sBHS}, {A64VSABD, sBHS}, {A64VSABA, sBHS},
		{A64VADD, sBHSD}, {A64VCMTST, sBHSD}, {A64VMLA, sBHS}, {A64VMUL, sBHS},
		{A64VSMAXP, sBHS}, {A64VSMINP, sBHS}, {A64VSQDMULH, sHS}, {A64VADDP, sBHSD},
	},
	{
		{A64VUHADD, sBHS}, {A64VUQADD, sBHSD}, {A64VURHADD, sBHS}, {},
		{A64VUHSUB, sBHS}, {A64VUQSUB, sBHSD}, {A64VCMHI, sBHSD}, {A64VCMHS, sBHSD},
		{A64VUSHL, sBHSD}, {A64VUQSHL, sBHSD}, {A64VURSHL, sBHSD}, {A64VUQRSHL, sBHSD},
		{A64VUMAX, sBHS}, {A64VUMIN, sBHS}, {A64VUABD, sBHS}, {A64VUABA, sBHS},
		{A64VSUB, sBHSD}, {A64VCMEQ, sBHSD}, {A64VMLS, sBHS}, {A64VPMUL, sB},
		{A64VUMAXP, sBHS}, {A64VUMINP, sBHS}, {A64VSQRDMULH, sHS}, {},
	},
}

// threeSameFP[U<<1|a][opcode&7] for opcodes 11xxx.
var threeSameFP = [4][8]A64Op{
	{A64VFMAXNM, A64VFMLA, A64VFADD, A64VFMULX, A64VFCMEQ, 0, A64VFMAX, A64VFRECPS},
	{A64VFMINNM, A64VFMLS, A64VFSUB, 0, 0, 0, A64VFMIN, A64VFRSQRTS},
	{A64VFMAXNMP, 0, A64VFADDP, A64VFMUL, A64VFCMGE, A64VFACGE, A64VFMAXP, A64VFDIV},
	{A64VFMINNMP, 0, A64VFABD, 0, A64VFCMGT, A64VFACGT, A64VFMINP, 0},
}

// threeDiff[U][opcode] (sizes B/H/S; Size = narrow size).
var threeDiff = [2][16]A64Op{
	{A64VSADDL, A64VSADDW, A64VSSUBL, A64VSSUBW, A64VADDHN, A64VSABAL, A64VSUBHN, A64VSABDL,
		A64VSMLAL, A64VSQDMLAL, A64VSMLSL, A64VSQDMLSL, A64VSMULL, A64VSQDMULL, A64VPMULL, 0},
	{A64VUADDL, A64VUADDW, A64VUSUBL, A64VUSUBW, A64VRADDHN, A64VUABAL, A64VRSUBHN, A64VUABDL,
		A64VUMLAL, 0, A64VUMLSL, 0, A64VUMULL, 0, 0, 0},
}

// twoMisc[U][opcode] for the integer opcodes (< 0b01100 and 0b10010..0b10101).
var twoMisc = [2][24]vop{
	{
		{A64VREV64, sBHS}, {A64VREV16, sB}, {A64VSADDLP, sBHS}, {A64VSUQADD, sBHSD},
		{A64VCLS, sBHS}, {A64VCNT, sB}, {A64VSADALP, sBHS}, {A64VSQABS, sBHSD},
		{A64VCMGT0, sBHSD}, {A64VCMEQ0, sBHSD}, {A64VCMLT0, sBHSD}, {A64VABS, sBHSD},
		{}, {}, {}, {}, {}, {},
		{A64VXTN, sBHS}, {}, {A64VSQXTN, sBHS}, {}, {}, {},
	},
	{
		{A64VREV32, sB | sH}, {}, {A64VUADDLP, sBHS}, {A64VUSQADD, sBHSD},
		{A64VCLZ, sBHS}, {}, {A64VUADALP, sBHS}, {A64VSQNEG, sBHSD},
		{A64VCMGE0, sBHSD}, {A64VCMLE0, sBHSD}, {}, {A64VNEG, sBHSD},
		{}, {}, {}, {}, {}, {},
		{A64VSQXTUN, sBHS}, {A64VSHLL, sBHS}, {A64VUQXTN, sBHS}, {}, {}, {},
	},
}

// decodeVec decodes the Advanced SIMD vector (scalar == false) and scalar
// (scalar == true) groups.
func decodeVec(raw uint32, in *A64, scalar bool) bool {
	q := uint8(raw >> 30 & 1)
	u := raw >> 29 & 1
	size := bf(raw, 22, 2)
	in.Q = q
	if scalar {
		in.Flags = SIMDScalar
		in.Q = 0
	}
	if bf(raw, 24, 1) == 1 {
		if raw&(1<<10) == 0 {
			if decodeByElemExt(raw, in, scalar) { // RDM, DotProd: a64simdext.go
				return true
			}
			return decodeByElem(raw, in, scalar)
		}
		if bf(raw, 23, 1) != 0 {
			return false
		}
		if bf(raw, 19, 4) == 0 {
			if scalar {
				return false
			}
			return decodeModImm(raw, in)
		}
		return decodeShiftImm(raw, in, scalar)
	}
	if bf(raw, 21, 2) == 0b10 && bf(raw, 14, 2) == 0 && raw&(1<<10) != 0 {
		return decodeThreeSameFP16(raw, in, scalar) // a64fp16.go
	}
	if bf(raw, 21, 1) == 1 {
		switch {
		case raw&(1<<10) != 0:
			return decodeThreeSame(raw, in, scalar)
		case bf(raw, 10, 2) == 0:
			if scalar {
				return decodeScalarThreeDiff(raw, in)
			}
			op := threeDiff[u][bf(raw, 12, 4)]
			// size 3 is reserved, except PMULL 1Q (FEAT_PMULL); PMULL
			// otherwise only has byte elements.
			if op == A64VPMULL && size == 3 { // PMULL 1Q (FEAT_PMULL): a64crypto.go
				in.Op, in.Size = A64PMULL64, 3
				return true
			}
			if op == 0 || size == 3 || op == A64VPMULL && size != 0 {
				return false
			}
			if (op == A64VSQDMULL || op == A64VSQDMLAL || op == A64VSQDMLSL) && size == 0 {
				return false
			}
			in.Op, in.Size = op, uint8(size)
			return true
		case bf(raw, 10, 2) == 2:
			switch bf(raw, 17, 4) {
			case 0b0000:
				return decodeTwoMisc(raw, in, scalar, false)
			case 0b1100:
				if bf(raw, 22, 1) == 0 {
					return false
				}
				return decodeTwoMisc(raw, in, scalar, true) // FP16: a64fp16.go
			case 0b1000:
				if scalar {
					return decodeScalarPairwise(raw, in)
				}
				return decodeAcross(raw, in)
			}
		}
		return false
	}
	// bit 21 == 0
	if scalar {
		// scalar copy: DUP (element)
		if bf(raw, 21, 3) == 0 && raw&(1<<10) != 0 && bf(raw, 11, 4) == 0 && u == 0 && raw&(1<<15) == 0 {
			return decodeDupElem(raw, in)
		}
		return decodeThreeExt(raw, in, true)
	}
	if raw&(1<<15) != 0 {
		return decodeThreeExt(raw, in, false) // three-register extension: a64simdext.go
	}
	if bf(raw, 23, 2) == 0 && bf(raw, 21, 2) == 0 && raw&(1<<10) != 0 {
		return decodeCopy(raw, in)
	}
	if u == 1 {
		// EXT
		if size != 0 || raw&(1<<10) != 0 {
			return false
		}
		imm4 := bf(raw, 11, 4)
		if q == 0 && imm4 >= 8 {
			return false
		}
		in.Op, in.Imm, in.Size = A64VEXT, uint64(imm4), 0
		return true
	}
	switch bf(raw, 10, 2) {
	case 0: // TBL/TBX
		if size != 0 {
			return false
		}
		in.Op = A64VTBL
		if raw&(1<<12) != 0 {
			in.Op = A64VTBX
		}
		in.Imm = uint64(bf(raw, 13, 2) + 1)
		return true
	case 2: // permute
		if size == 3 && q == 0 {
			return false
		}
		op := [8]A64Op{0, A64VUZP1, A64VTRN1, A64VZIP1, 0, A64VUZP2, A64VTRN2, A64VZIP2}[bf(raw, 12, 3)]
		if op == 0 {
			return false
		}
		in.Op, in.Size = op, uint8(size)
		return true
	}
	return false
}

func decodeThreeSame(raw uint32, in *A64, scalar bool) bool {
	q := raw >> 30 & 1
	u := raw >> 29 & 1
	size := bf(raw, 22, 2)
	opcode := bf(raw, 11, 5)
	if opcode >= 0b11000 {
		if !scalar && size&1 == 0 && (u == 0 && opcode == 0b11101 || u == 1 && opcode == 0b11001) {
			// FMLAL, FMLSL (U = 0), FMLAL2, FMLSL2 (U = 1): FEAT_FHM,
			// a64simdext.go; size<1> selects the subtracting forms.
			in.Op = [2]A64Op{A64VFMLAL, A64VFMLSL}[size>>1]
			in.Imm2 = uint64(u) << (1 + q)
			in.Size = 2
			return true
		}
		op := threeSameFP[u<<1|size>>1][opcode&7]
		sz := size & 1
		if op == 0 || (!scalar && sz == 1 && q == 0) {
			return false
		}
		if scalar {
			switch op {
			case A64VFMULX, A64VFCMEQ, A64VFRECPS, A64VFRSQRTS, A64VFCMGE, A64VFACGE, A64VFABD, A64VFCMGT, A64VFACGT:
			default:
				return false
			}
		}
		in.Op, in.Size = op, uint8(2+sz)
		return true
	}
	if opcode == 3 {
		if scalar {
			return false
		}
		in.Op = [2][4]A64Op{{A64VAND, A64VBIC, A64VORR, A64VORN}, {A64VEOR, A64VBSL, A64VBIT, A64VBIF}}[u][size]
		return true
	}
	v := threeSame[u][opcode]
	if v.op == 0 || v.sizes&(1<<size) == 0 {
		return false
	}
	if scalar {
		switch v.op {
		case A64VSQADD, A64VUQADD, A64VSQSUB, A64VUQSUB, A64VSQSHL, A64VUQSHL, A64VSQRSHL, A64VUQRSHL:
		case A64VSQDMULH, A64VSQRDMULH:
		case A64VCMGT, A64VCMHI, A64VCMGE, A64VCMHS, A64VCMEQ, A64VCMTST, A64VSSHL, A64VUSHL,
			A64VSRSHL, A64VURSHL, A64VADD, A64VSUB:
			if size != 3 {
				return false
			}
		default:
			return false
		}
	} else if size == 3 && q == 0 {
		return false
	}
	in.Op, in.Size = v.op, uint8(size)
	return true
}

func decodeScalarThreeDiff(raw uint32, in *A64) bool {
	size := bf(raw, 22, 2)
	if raw>>29&1 != 0 || size == 0 || size == 3 {
		return false
	}
	switch bf(raw, 12, 4) {
	case 0b1001:
		in.Op = A64VSQDMLAL
	case 0b1011:
		in.Op = A64VSQDMLSL
	case 0b1101:
		in.Op = A64VSQDMULL
	default:
		return false
	}
	in.Size = uint8(size)
	return true
}

// decodeTwoMisc decodes the two-register misc group; half selects its
// FP16 form (only the floating-point opcodes, on half precision).
func decodeTwoMisc(raw uint32, in *A64, scalar, half bool) bool {
	q := raw >> 30 & 1
	u := raw >> 29 & 1
	size := bf(raw, 22, 2)
	opcode := bf(raw, 12, 5)
	sz := size & 1
	// floating-point opcodes
	fp := func(op A64Op) bool {
		if half {
			if op == A64VFRINTTS {
				return false
			}
			in.Op, in.Size = op, 1
			return true
		}
		if !scalar && sz == 1 && q == 0 {
			return false
		}
		in.Op, in.Size = op, uint8(2+sz)
		return true
	}
	if half {
		switch {
		case size>>1 == 0 && (opcode == 0b10110 || opcode == 0b10111),
			size>>1 == 1 && opcode == 0b11100:
			return false // FCVTN, FCVTXN, FCVTL, URECPE, URSQRTE have no FP16 form
		case opcode < 0b01100:
			return false
		}
	}
	if size>>1 == 0 {
		switch opcode {
		case 0b10110:
			if scalar {
				if u == 1 && sz == 1 {
					in.Op, in.Size = A64VFCVTXN, 3
					return true
				}
				return false
			}
			if u == 0 {
				in.Op, in.Size = A64VFCVTN, uint8(2+sz)
			} else {
				if sz == 0 {
					return false
				}
				in.Op, in.Size = A64VFCVTXN, 3
			}
			return true
		case 0b10111:
			if u == 1 || scalar {
				return false
			}
			in.Op, in.Size = A64VFCVTL, uint8(2+sz)
			return true
		case 0b11000, 0b11001:
			if scalar {
				return false
			}
			in.Imm2 = [2][2]uint64{{FPRoundN, FPRoundM}, {FPRoundA, FPRoundX}}[u][opcode&1]
			return fp(A64VFRINT)
		case 0b11010, 0b11011, 0b11100:
			in.Imm2 = [3]uint64{FPRoundN, FPRoundM, FPRoundA}[opcode-0b11010]
			if u == 1 {
				in.Flags |= SIMDUnsigned
			}
			return fp(A64VFCVTI)
		case 0b11101:
			if u == 1 {
				in.Flags |= SIMDUnsigned
			}
			return fp(A64VICVTF)
		case 0b11110, 0b11111: // FRINT32Z/X, FRINT64Z/X (a64simdext.go)
			if scalar {
				return false
			}
			in.Imm2 = uint64((opcode&1)<<1 | u)
			return fp(A64VFRINTTS)
		}
	} else {
		switch opcode {
		case 0b01100:
			return fp([2]A64Op{A64VFCMGT0, A64VFCMGE0}[u])
		case 0b01101:
			return fp([2]A64Op{A64VFCMEQ0, A64VFCMLE0}[u])
		case 0b01110:
			if u == 1 {
				return false
			}
			return fp(A64VFCMLT0)
		case 0b01111:
			if scalar {
				return false
			}
			return fp([2]A64Op{A64VFABS, A64VFNEG}[u])
		case 0b11000:
			if scalar || u == 1 {
				return false
			}
			in.Imm2 = FPRoundP
			return fp(A64VFRINT)
		case 0b11001:
			if scalar {
				return false
			}
			in.Imm2 = [2]uint64{FPRoundZ, FPRoundI}[u]
			return fp(A64VFRINT)
		case 0b11010, 0b11011:
			in.Imm2 = [2]uint64{FPRoundP, FPRoundZ}[opcode&1]
			if u == 1 {
				in.Flags |= SIMDUnsigned
			}
			return fp(A64VFCVTI)
		case 0b11100:
			if scalar || sz == 1 {
				return false
			}
			in.Op, in.Size = [2]A64Op{A64VURECPE, A64VURSQRTE}[u], 2
			return true
		case 0b11101:
			return fp([2]A64Op{A64VFRECPE, A64VFRSQRTE}[u])
		case 0b11111:
			if u == 1 {
				if scalar {
					return false
				}
				return fp(A64VFSQRT)
			}
			if !scalar {
				return false
			}
			return fp(A64VFRECPX)
		}
	}
	if opcode >= 24 || half {
		return false
	}
	if u == 1 && opcode == 0b00101 {
		if scalar || size > 1 {
			return false
		}
		in.Op = [2]A64Op{A64VNOT, A64VRBIT}[size]
		return true
	}
	v := twoMisc[u][opcode]
	if v.op == 0 || v.sizes&(1<<size) == 0 {
		return false
	}
	if scalar {
		switch v.op {
		case A64VSUQADD, A64VUSQADD, A64VSQABS, A64VSQNEG, A64VSQXTN, A64VUQXTN, A64VSQXTUN:
		case A64VCMGT0, A64VCMGE0, A64VCMEQ0, A64VCMLE0, A64VCMLT0, A64VABS, A64VNEG:
			if size != 3 {
				return false
			}
		default:
			return false
		}
	} else {
		switch v.op {
		case A64VXTN, A64VSQXTN, A64VUQXTN, A64VSQXTUN, A64VSHLL:
		default:
			if size == 3 && q == 0 {
				return false
			}
		}
	}
	in.Op, in.Size = v.op, uint8(size)
	return true
}

func decodeAcross(raw uint32, in *A64) bool {
	q := raw >> 30 & 1
	u := raw >> 29 & 1
	size := bf(raw, 22, 2)
	opcode := bf(raw, 12, 5)
	if opcode == 0b01100 || opcode == 0b01111 {
		switch {
		case size&1 != 0:
			return false // double
		case u == 0:
			in.Size = 1 // FP16: 4H, 8H
		case q == 0:
			return false
		default:
			in.Size = 2
		}
		if opcode == 0b01100 {
			in.Op = [2]A64Op{A64VFMAXNMV, A64VFMINNMV}[size>>1]
		} else {
			in.Op = [2]A64Op{A64VFMAXV, A64VFMINV}[size>>1]
		}
		return true
	}
	if size == 3 || (size == 2 && q == 0) {
		return false
	}
	switch opcode {
	case 0b00011:
		in.Op = [2]A64Op{A64VSADDLV, A64VUADDLV}[u]
	case 0b01010:
		in.Op = [2]A64Op{A64VSMAXV, A64VUMAXV}[u]
	case 0b11010:
		in.Op = [2]A64Op{A64VSMINV, A64VUMINV}[u]
	case 0b11011:
		if u != 0 {
			return false
		}
		in.Op = A64VADDV
	default:
		return false
	}
	in.Size = uint8(size)
	return true
}

func decodeScalarPairwise(raw uint32, in *A64) bool {
	u := raw >> 29 & 1
	size := bf(raw, 22, 2)
	opcode := bf(raw, 12, 5)
	in.Rm = in.Rn
	if u == 0 && opcode == 0b11011 {
		if size != 3 {
			return false
		}
		in.Op, in.Size = A64VADDP, 3
		return true
	}
	esize := uint8(2 + size&1)
	if u == 0 {
		if size&1 != 0 {
			return false
		}
		esize = 1 // FP16: Hd, Vn.2H
	}
	switch opcode {
	case 0b01100:
		in.Op = [2]A64Op{A64VFMAXNMP, A64VFMINNMP}[size>>1]
	case 0b01101:
		if size>>1 != 0 {
			return false
		}
		in.Op = A64VFADDP
	case 0b01111:
		in.Op = [2]A64Op{A64VFMAXP, A64VFMINP}[size>>1]
	default:
		return false
	}
	in.Size = esize
	return true
}

// imm5Size returns the element size and index from a copy imm5 field.
func imm5Size(imm5 uint32) (size uint8, index uint64, ok bool) {
	for s := uint8(0); s < 4; s++ {
		if imm5>>s&1 != 0 {
			return s, uint64(imm5 >> (s + 1)), true
		}
	}
	return 0, 0, false
}

func decodeDupElem(raw uint32, in *A64) bool {
	size, idx, ok := imm5Size(bf(raw, 16, 5))
	if !ok {
		return false
	}
	in.Op, in.Size, in.Imm, in.Rm = A64VDUPE, size, idx, 0
	return true
}

func decodeCopy(raw uint32, in *A64) bool {
	q := uint8(raw >> 30 & 1)
	op := raw >> 29 & 1
	imm4 := bf(raw, 11, 4)
	size, idx, ok := imm5Size(bf(raw, 16, 5))
	if !ok {
		return false
	}
	in.Size, in.Imm, in.Rm = size, idx, 0
	if op == 1 {
		if q == 0 {
			return false
		}
		in.Op, in.Imm2 = A64VINSE, uint64(imm4>>size)
		return true
	}
	switch imm4 {
	case 0b0000:
		if size == 3 && q == 0 {
			return false
		}
		in.Op = A64VDUPE
	case 0b0001:
		if size == 3 && q == 0 {
			return false
		}
		in.Op, in.Imm = A64VDUPG, 0
	case 0b0011:
		if q == 0 {
			return false
		}
		in.Op = A64VINSG
	case 0b0101:
		if size == 3 || (size == 2 && q == 0) {
			return false
		}
		in.Op, in.Sf = A64VSMOV, q
	case 0b0111:
		if (q == 0 && size == 3) || (q == 1 && size != 3) {
			return false
		}
		in.Op, in.Sf = A64VUMOV, q
	default:
		return false
	}
	return true
}

func decodeModImm(raw uint32, in *A64) bool {
	q := raw >> 30 & 1
	op := raw >> 29 & 1
	cmode := bf(raw, 12, 4)
	o2 := bf(raw, 11, 1)
	imm8 := bf(raw, 16, 3)<<5 | bf(raw, 5, 5)
	in.Rn, in.Rm = 0, 0
	if o2 != 0 {
		if op != 0 || cmode != 0b1111 {
			return false
		}
		in.Op, in.Size = A64VFMOVI, 1 // FMOV (vector, half precision)
		in.Imm = vfpExpandImm(imm8, 1) * 0x0001000100010001
		return true
	}
	imm := advSIMDExpandImm(op, cmode, imm8)
	in.Imm = imm
	switch {
	case cmode == 0b1111:
		if op == 1 && q == 0 {
			return false
		}
		in.Op = A64VFMOVI
		in.Size = uint8(2 + op)
	case cmode == 0b1110:
		in.Op = A64VMOVI
		in.Size = uint8(3 * op) // MOVI Dd / Vd.2D when op == 1
	case cmode&0b1001 == 0b0001 || cmode&0b1101 == 0b1001: // 0xx1, 10x1: ORR/BIC
		in.Op = [2]A64Op{A64VORRI, A64VBICI}[op]
		in.Size = uint8(2 - cmode>>3)
	default: // 0xx0, 10x0, 110x: MOVI/MVNI
		in.Op = [2]A64Op{A64VMOVI, A64VMVNI}[op]
		in.Size = 2 // 32-bit shifted (0xx0) or shifting ones (110x)
		if cmode>>2 == 0b10 {
			in.Size = 1 // 16-bit shifted (10x0)
		}
	}
	return true
}

func decodeShiftImm(raw uint32, in *A64, scalar bool) bool {
	q := raw >> 30 & 1
	u := raw >> 29 & 1
	immh := bf(raw, 19, 4)
	immhb := bf(raw, 16, 7)
	opcode := bf(raw, 11, 5)
	in.Rm = 0
	var size uint8
	for s := uint8(3); ; s-- {
		if immh>>s&1 != 0 {
			size = s
			break
		}
	}
	esize := uint32(8) << size
	right := uint64(2*esize - immhb)
	left := uint64(immhb - esize)
	in.Size = size
	plain := func(op A64Op, shift uint64) bool {
		if scalar && size != 3 {
			return false
		}
		if !scalar && size == 3 && q == 0 {
			return false
		}
		in.Op, in.Imm = op, shift
		return true
	}
	narrow := func(op A64Op) bool {
		if size == 3 {
			return false
		}
		in.Op, in.Imm = op, right
		return true
	}
	switch opcode {
	case 0b00000:
		return plain([2]A64Op{A64VSSHR, A64VUSHR}[u], right)
	case 0b00010:
		return plain([2]A64Op{A64VSSRA, A64VUSRA}[u], right)
	case 0b00100:
		return plain([2]A64Op{A64VSRSHR, A64VURSHR}[u], right)
	case 0b00110:
		return plain([2]A64Op{A64VSRSRA, A64VURSRA}[u], right)
	case 0b01000:
		if u == 0 {
			return false
		}
		return plain(A64VSRI, right)
	case 0b01010:
		return plain([2]A64Op{A64VSHL, A64VSLI}[u], left)
	case 0b01100, 0b01110:
		if !scalar && size == 3 && q == 0 {
			return false
		}
		if opcode == 0b01100 {
			if u == 0 {
				return false
			}
			in.Op = A64VSQSHLU
		} else {
			in.Op = [2]A64Op{A64VSQSHLI, A64VUQSHLI}[u]
		}
		in.Imm = left
		return true
	case 0b10000:
		if scalar && u == 0 {
			return false
		}
		return narrow([2]A64Op{A64VSHRN, A64VSQSHRUN}[u])
	case 0b10001:
		if scalar && u == 0 {
			return false
		}
		return narrow([2]A64Op{A64VRSHRN, A64VSQRSHRUN}[u])
	case 0b10010:
		return narrow([2]A64Op{A64VSQSHRN, A64VUQSHRN}[u])
	case 0b10011:
		return narrow([2]A64Op{A64VSQRSHRN, A64VUQRSHRN}[u])
	case 0b10100:
		if scalar || size == 3 {
			return false
		}
		in.Op, in.Imm = [2]A64Op{A64VSSHLL, A64VUSHLL}[u], left
		return true
	case 0b11100, 0b11111:
		if size < 1 || (!scalar && size == 3 && q == 0) {
			return false // size 1: half precision (FEAT_FP16)
		}
		if u == 1 {
			in.Flags |= SIMDUnsigned
		}
		in.Imm = right
		if opcode == 0b11100 {
			in.Op = A64VICVTF
		} else {
			in.Op, in.Imm2 = A64VFCVTI, FPRoundZ
		}
		return true
	}
	return false
}

func decodeByElem(raw uint32, in *A64, scalar bool) bool {
	q := raw >> 30 & 1
	u := raw >> 29 & 1
	size := bf(raw, 22, 2)
	l, m, h := bf(raw, 21, 1), bf(raw, 20, 1), bf(raw, 11, 1)
	opcode := bf(raw, 12, 4)
	in.Flags |= SIMDByElem
	// FP forms
	if opcode == 0b0001 || opcode == 0b0101 || opcode == 0b1001 {
		if opcode != 0b1001 && u == 1 {
			return false
		}
		in.Rm = uint8(m<<4 | bf(raw, 16, 4))
		switch size {
		case 0: // half precision (FEAT_FP16): Vm is v0..v15
			in.Imm = uint64(h<<2 | l<<1 | m)
			in.Rm = uint8(bf(raw, 16, 4))
			size = 1
		case 2:
			in.Imm = uint64(h<<1 | l)
		case 3:
			if l != 0 || (!scalar && q == 0) {
				return false
			}
			in.Imm = uint64(h)
		default:
			return false
		}
		in.Size = uint8(size)
		switch opcode {
		case 0b0001:
			in.Op = A64VFMLA
		case 0b0101:
			in.Op = A64VFMLS
		default:
			in.Op = [2]A64Op{A64VFMUL, A64VFMULX}[u]
		}
		return true
	}
	// integer forms
	switch size {
	case 1:
		in.Imm = uint64(h<<2 | l<<1 | m)
		in.Rm = uint8(bf(raw, 16, 4))
	case 2:
		in.Imm = uint64(h<<1 | l)
		in.Rm = uint8(m<<4 | bf(raw, 16, 4))
	default:
		return false
	}
	in.Size = uint8(size)
	var op A64Op
	if u == 0 {
		op = [16]A64Op{0, 0, A64VSMLAL, A64VSQDMLAL, 0, 0, A64VSMLSL, A64VSQDMLSL,
			A64VMUL, 0, A64VSMULL, A64VSQDMULL, A64VSQDMULH, A64VSQRDMULH, 0, 0}[opcode]
	} else {
		op = [16]A64Op{A64VMLA, 0, A64VUMLAL, 0, A64VMLS, 0, A64VUMLSL, 0,
			0, 0, A64VUMULL, 0, 0, 0, 0, 0}[opcode]
	}
	if op == 0 {
		return false
	}
	if scalar {
		switch op {
		case A64VSQDMLAL, A64VSQDMLSL, A64VSQDMULL, A64VSQDMULH, A64VSQRDMULH:
		default:
			return false
		}
	}
	in.Op = op
	return true
}

// decodeA64SIMDLdSt decodes the Advanced SIMD load/store structure groups
// (LD1..LD4/ST1..ST4 multiple and single structures, LD1R…). Plain
// LDR/STR/LDP/STP/LDUR of B/H/S/D/Q registers are decoded by the main
// load/store decoder.
func decodeA64SIMDLdSt(raw uint32, in *A64) bool {
	*in = A64{Raw: raw}
	if raw>>31 != 0 || bf(raw, 24, 6) != 0b001100 && bf(raw, 24, 6) != 0b001101 {
		return false
	}
	q := uint8(raw >> 30 & 1)
	post := bf(raw, 23, 1) == 1
	load := bf(raw, 22, 1) == 1
	single := bf(raw, 24, 1) == 1
	rm := uint8(bf(raw, 16, 5))
	if !post && rm != 0 {
		return false
	}
	in.Rd = uint8(raw & 31)
	in.Rn = uint8(raw >> 5 & 31)
	in.Rm = 31
	in.Q = q
	if load {
		in.Flags |= SIMDLoad
	}
	if post {
		in.Flags |= SIMDPost
		in.Rm = rm
	}
	opcode := bf(raw, 12, 4)
	size := uint8(bf(raw, 10, 2))
	var total uint64 // bytes transferred
	if !single {
		if bf(raw, 21, 1) != 0 {
			return false
		}
		var rpt, selem uint64
		switch opcode {
		case 0b0000:
			rpt, selem = 1, 4
		case 0b0010:
			rpt, selem = 4, 1
		case 0b0100:
			rpt, selem = 1, 3
		case 0b0110:
			rpt, selem = 3, 1
		case 0b0111:
			rpt, selem = 1, 1
		case 0b1000:
			rpt, selem = 1, 2
		case 0b1010:
			rpt, selem = 2, 1
		default:
			return false
		}
		if size == 3 && q == 0 && selem != 1 {
			return false
		}
		in.Op, in.Size = A64VLDST, size
		in.Imm2 = selem | rpt<<8
		total = rpt * selem * (8 << q)
	} else {
		r := bf(raw, 21, 1)
		s := bf(raw, 12, 1)
		op3 := bf(raw, 13, 3)
		selem := uint64(op3&1<<1|r) + 1
		var index uint64
		switch op3 >> 1 {
		case 0: // byte
			size = 0
			index = uint64(q)<<3 | uint64(s)<<2 | uint64(bf(raw, 10, 2))
		case 1: // half
			if bf(raw, 10, 1) != 0 {
				return false
			}
			size = 1
			index = uint64(q)<<2 | uint64(s)<<1 | uint64(bf(raw, 11, 1))
		case 2:
			switch bf(raw, 10, 2) {
			case 0:
				size = 2
				index = uint64(q)<<1 | uint64(s)
			case 1:
				if s != 0 {
					return false
				}
				size = 3
				index = uint64(q)
			default:
				return false
			}
		case 3: // replicate
			if !load || s != 0 {
				return false
			}
			in.Op, in.Size = A64VLDR, size
			in.Imm2 = selem
			total = selem << size
		}
		if in.Op == 0 {
			in.Op, in.Size = A64VLDSTL, size
			in.Imm2 = selem | index<<16
			total = selem << size
		}
	}
	if post && rm == 31 {
		in.Imm = total
	}
	return true
}
