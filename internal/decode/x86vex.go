package decode

import "strconv"

// uvm's own decoder for VEX-encoded instructions (AVX, AVX2, FMA3, F16C)
// and for the XSAVE family and XGETBV. x86asm decodes only a handful of
// VEX forms and has no notion of VEX.vvvv or VEX.L, so DecodeX86Into asks
// decodeX86Ext first; what it does not claim (BMI1/BMI2 and every other
// VEX encoding without an entry below) goes on to x86asm as before.
//
// Record layout of the AVX ops (Op >= X86AVXBase):
//   - Width is the vector length: 16 (VEX.L=0) or 32 (VEX.L=1).
//   - Args[0] is the destination, Args[1] the VEX.vvvv register (ArgXMM,
//     or ArgNone when the form has none), Args[2] the ModRM.rm operand
//     (ArgXMM, ArgMem or ArgReg). NArgs is 3. Store forms (VEX "W, V")
//     have the memory or register destination in Args[0] and the source
//     register in Args[2].
//   - A memory operand's Size is the number of bytes accessed.
//   - Imm is the imm8 (zero-extended); for the four-operand blends its
//     bits 7:4 name the mask register.
//   - Imm2 is the SSE op (SSEAddps …) whose 128-bit lane arithmetic the
//     AVX op applies, for the ops that say so.
//   - Aux holds the op's parameters (AVXAux* bits, element sizes).

// X86AVXBase is the first AVX op number (above every SSE/x87 op).
const X86AVXBase X86Op = 1800

// AVX ops (see the record layout above).
const (
	// AVXLane: for each 128-bit lane, dst = Imm2(src1, src2, Imm) with
	// the SSE op's semantics (src1 = Args[1], or zero when absent);
	// VEX.128 zeroes bits 255:128. Aux&AVXAuxImmHi: the upper lane uses
	// Imm >> (Aux>>AVXAuxImmShift & 7) (VBLENDPS/PD, VSHUFPD, VMPSADBW).
	AVXLane       X86Op = X86AVXBase + iota
	AVXShift            // VPSLL/SRL/SRA W/D/Q: Args[0] ← Args[1] shifted by Args[2] (V/M128 low 64 bits, or ArgImm); Imm2 the SSE op
	AVXShiftV           // VPSLLV/VPSRLV/VPSRAV: per-element counts; Aux = size | kind<<4 (0 sll, 1 srl, 2 sra)
	AVXMov              // full-width move: V←V/M, M←V (AVXAuxAlign for the aligned forms)
	AVXMovSS            // VMOVSS/VMOVSD: Aux = 4 or 8; reg form merges Args[1]
	AVXMovZX            // VMOVD/VMOVQ into xmm (zero-extended, Args[2].Size bytes) or to GPR/M (Args[0])
	AVXMovLP            // VMOVLPS/PD V,H,M64 (dst.lo = m, dst.hi = H.hi) or M64←V.lo
	AVXMovHP            // VMOVHPS/PD V,H,M64 (dst.hi = m, dst.lo = H.lo) or M64←V.hi
	AVXMovHLPS          // dst.lo = W.hi, dst.hi = H.hi
	AVXMovLHPS          // dst.lo = H.lo, dst.hi = W.lo
	AVXMovmsk           // GPR ← sign bits of the Aux-byte elements of Args[2]
	AVXPextr            // GPR/M ← element Imm of Args[2]; Aux = element size
	AVXPinsr            // dst = Args[1] with element Imm ← GPR/M Args[2]; Aux = element size
	AVXInsertps         // VINSERTPS V,H,W/M32,imm
	AVXBroadcast        // dst ← element 0 of Args[2] in every element; Aux = element size (16: VBROADCASTF128/I128)
	AVXInsert128        // dst = Args[1] with 128-bit lane Imm&1 ← Args[2]
	AVXExtract128       // Args[0] (xmm/m128) ← lane Imm&1 of Args[2]
	AVXPerm2            // VPERM2F128/I128
	AVXPermQ            // VPERMQ/VPERMPD ymm, ymm/m256, imm
	AVXPermD            // VPERMD/VPERMPS: dst[i] = Args[2][Args[1][i] & 7]
	AVXPermilVar        // VPERMILPS/PD with a vector of selectors (Args[2]); Aux = element size
	AVXPermilImm        // VPERMILPS/PD with imm8; Aux = element size
	AVXMaskLoad         // VMASKMOVPS/PD, VPMASKMOVD/Q load: dst ← M where Args[1] element sign set; Aux = size
	AVXMaskStore        // store: M (Args[0]) ← Args[2] where Args[1] element sign set; Aux = size
	AVXWiden            // lane op whose source is half as wide (VCVTPS2PD, VCVTDQ2PD, VPMOVSX/ZX): Imm2, Aux as the SSE op
	AVXNarrow           // VCVTPD2PS, VCVT(T)PD2DQ: 128-bit dst from a 128/256-bit source; Imm2
	AVXPtest            // VPTEST/VTESTPS/VTESTPD: flags; Aux = 0 (whole bits), 4 or 8 (sign bits)
	AVXComis            // VCOMISS/VUCOMISS/VCOMISD/VUCOMISD: Imm2
	AVXCvtsi2s          // VCVTSI2SS/SD V,H,E: Imm2
	AVXCvts2si          // VCVT(T)SS2SI/SD2SI G,W: Imm2
	AVXBlendv           // VBLENDVPS/PD, VPBLENDVB V,H,W,L (mask register Imm>>4): Imm2
	AVXFMA              // FMA3: Aux = AVXFMA* fields
	AVXVzeroupper
	AVXVzeroall
	AVXLdmxcsr // VLDMXCSR m32 (Args[0])
	AVXStmxcsr // VSTMXCSR m32 (Args[0])
	AVXLegacy  // VEX.128 form of a two-operand SSE op: run Imm2 on Args[0], Args[2], then zero bits 255:128 of the written xmm
	AVXCvtph2ps
	AVXCvtps2ph // Args[0] (xmm/m64/m128) ← Args[2] converted, rounding Imm
	AVXGather   // VGATHER/VPGATHER: dst Args[0], mask Args[1], VSIB Args[2] (Index is the vector register); Aux = index size | data size<<4
	// XSAVE family (legacy encoding, listed here with the AVX state).
	X86Xgetbv
	X86Xsave    // Aux: AVXAuxW64; Args[0] memory
	X86Xsavec   //
	X86Xsaveopt //
	X86Xrstor   //

	AVXOpEnd
)

// Aux bits of the AVX ops.
const (
	AVXAuxAlign    = 1 << 0 // SSEAuxAlign: the full-width memory operand must be aligned to its size
	AVXAuxImmHi    = 1 << 7 // AVXLane: the upper lane's imm is shifted (see AVXLane)
	AVXAuxImmShift = 8
	AVXAuxW64      = 1 << 6 // SSEAuxW64: REX.W/VEX.W form (XSAVE64 …)

	// FMA3 fields.
	AVXFMAOrderMask = 3 // 0: 132, 1: 213, 2: 231
	AVXFMAKindShift = 2 // AVXFMA{Madd,Msub,Nmadd,Nmsub,Maddsub,Msubadd}
	AVXFMAKindMask  = 7 << AVXFMAKindShift
	AVXFMADouble    = 1 << 5 // elements are doubles (VEX.W1)
	AVXFMAScalar    = 1 << 6 // only element 0; the rest from the destination
)

// FMA3 kinds.
const (
	AVXFMAMadd = iota
	AVXFMAMsub
	AVXFMANmadd
	AVXFMANmsub
	AVXFMAMaddsub // odd elements add, even subtract
	AVXFMAMsubadd
)

// Operand shapes of the table entries.
const (
	vshVHW    = iota // dst reg, vvvv, rm
	vshVHWI          // + imm8
	vshVW            // dst reg, rm (vvvv = 1111)
	vshVWI           // + imm8
	vshWV            // rm ← reg (stores)
	vshWVI           // rm ← reg, imm8
	vshVHWL          // dst, vvvv, rm, is4 register in imm8[7:4]
	vshGW            // GPR dst (reg), vector rm
	vshGWI           // + imm8
	vshVHE           // dst, vvvv, GPR/mem rm (VEX.W: 64-bit)
	vshVHEI          // + imm8
	vshEVI           // GPR/mem rm ← vector reg, imm8
	vshVE            // dst, GPR/mem rm (vvvv = 1111)
	vshEV            // GPR/mem rm ← vector reg
	vshVHM           // dst, vvvv, memory only
	vshMHV           // memory ← reg, vvvv mask
	vshM             // memory only, vvvv = 1111
	vshNone          // no operands (VZEROUPPER)
	vshShiftI        // VEX.NDD group 71/72/73: vvvv ← rm (register), imm8
)

// Entry flags.
const (
	vfL0        = 1 << iota // VEX.L must be 0
	vfL1                    // VEX.L must be 1
	vfW0                    // VEX.W must be 0
	vfW1                    // VEX.W must be 1
	vfReg                   // rm must be a register
	vfMem                   // rm must be memory
	vfAlign                 // aligned full-width memory operand
	vfMemHalf               // memory operand is half the vector width
	vfMemQtr                // a quarter
	vfMemEighth             // an eighth
	vfXmmSrc                // the rm register operand is an xmm (128 bits) even with L=1
	vfLIG                   // scalar form: VEX.L is ignored (executes as 128-bit)
)

type vexEntry struct {
	op    X86Op
	sse   X86Op
	shape uint8
	flags uint16
	mem   uint8 // fixed memory operand size (0: from the vector width and flags)
	aux   uint32
}

// vexTable is indexed by map (0: 0F, 1: 0F38, 2: 0F3A), pp, opcode.
var vexTable [3][4][256]*vexEntry

// vexGroup holds the 0F 71/72/73 shift groups: [opcode-0x71][reg].
var vexGroup [3][8]*vexEntry

func vexAdd(m, pp int, opc byte, e vexEntry) {
	vexTable[m][pp][opc] = &e
}

const (
	ppNone = 0
	pp66   = 1
	ppF3   = 2
	ppF2   = 3
)

func init() {
	lane := func(m, pp int, opc byte, sse X86Op, shape uint8, flags uint16, mem uint8) {
		if mem != 0 {
			flags |= vfLIG
		}
		vexAdd(m, pp, opc, vexEntry{op: AVXLane, sse: sse, shape: shape, flags: flags, mem: mem})
	}
	// ---- map 0F ----
	for _, x := range []struct {
		opc            byte
		ps, pd, ss, sd X86Op
		shapeP, shapeS uint8
		noScalar, noPD bool
	}{
		{opc: 0x58, ps: SSEAddps, pd: SSEAddpd, ss: SSEAddss, sd: SSEAddsd},
		{opc: 0x59, ps: SSEMulps, pd: SSEMulpd, ss: SSEMulss, sd: SSEMulsd},
		{opc: 0x5C, ps: SSESubps, pd: SSESubpd, ss: SSESubss, sd: SSESubsd},
		{opc: 0x5D, ps: SSEMinps, pd: SSEMinpd, ss: SSEMinss, sd: SSEMinsd},
		{opc: 0x5E, ps: SSEDivps, pd: SSEDivpd, ss: SSEDivss, sd: SSEDivsd},
		{opc: 0x5F, ps: SSEMaxps, pd: SSEMaxpd, ss: SSEMaxss, sd: SSEMaxsd},
	} {
		lane(0, ppNone, x.opc, x.ps, vshVHW, 0, 0)
		lane(0, pp66, x.opc, x.pd, vshVHW, 0, 0)
		lane(0, ppF3, x.opc, x.ss, vshVHW, 0, 4)
		lane(0, ppF2, x.opc, x.sd, vshVHW, 0, 8)
	}
	lane(0, ppNone, 0x51, SSESqrtps, vshVW, 0, 0)
	lane(0, pp66, 0x51, SSESqrtpd, vshVW, 0, 0)
	lane(0, ppF3, 0x51, SSESqrtss, vshVHW, 0, 4)
	lane(0, ppF2, 0x51, SSESqrtsd, vshVHW, 0, 8)
	lane(0, ppNone, 0x52, SSERsqrtps, vshVW, 0, 0)
	lane(0, ppF3, 0x52, SSERsqrtss, vshVHW, 0, 4)
	lane(0, ppNone, 0x53, SSERcpps, vshVW, 0, 0)
	lane(0, ppF3, 0x53, SSERcpss, vshVHW, 0, 4)
	for pp, op := range map[int]X86Op{ppNone: SSEPand, pp66: SSEPand} {
		lane(0, pp, 0x54, op, vshVHW, 0, 0)
		lane(0, pp, 0x55, SSEAndnps, vshVHW, 0, 0)
		lane(0, pp, 0x56, SSEPor, vshVHW, 0, 0)
		lane(0, pp, 0x57, SSEPxor, vshVHW, 0, 0)
	}
	lane(0, ppNone, 0x14, SSEUnpcklps, vshVHW, 0, 0)
	lane(0, ppNone, 0x15, SSEUnpckhps, vshVHW, 0, 0)
	lane(0, pp66, 0x14, SSEPunpcklqdq, vshVHW, 0, 0)
	lane(0, pp66, 0x15, SSEPunpckhqdq, vshVHW, 0, 0)
	lane(0, ppNone, 0xC2, SSECmpps, vshVHWI, 0, 0)
	lane(0, pp66, 0xC2, SSECmppd, vshVHWI, 0, 0)
	lane(0, ppF3, 0xC2, SSECmpss, vshVHWI, 0, 4)
	lane(0, ppF2, 0xC2, SSECmpsd, vshVHWI, 0, 8)
	lane(0, ppNone, 0xC6, SSEShufps, vshVHWI, 0, 0)
	vexAdd(0, pp66, 0xC6, vexEntry{op: AVXLane, sse: SSEShufpd, shape: vshVHWI, aux: AVXAuxImmHi | 2<<AVXAuxImmShift})
	lane(0, pp66, 0x7C, SSEHaddpd, vshVHW, 0, 0)
	lane(0, pp66, 0x7D, SSEHsubpd, vshVHW, 0, 0)
	lane(0, ppF2, 0x7C, SSEHaddps, vshVHW, 0, 0)
	lane(0, ppF2, 0x7D, SSEHsubps, vshVHW, 0, 0)
	lane(0, pp66, 0xD0, SSEAddsubpd, vshVHW, 0, 0)
	lane(0, ppF2, 0xD0, SSEAddsubps, vshVHW, 0, 0)
	lane(0, ppNone, 0x5B, SSECvtdq2ps, vshVW, 0, 0)
	lane(0, pp66, 0x5B, SSECvtps2dq, vshVW, 0, 0)
	lane(0, ppF3, 0x5B, SSECvttps2dq, vshVW, 0, 0)
	vexAdd(0, ppNone, 0x5A, vexEntry{op: AVXWiden, sse: SSECvtps2pd, shape: vshVW, flags: vfMemHalf | vfXmmSrc})
	vexAdd(0, ppF3, 0xE6, vexEntry{op: AVXWiden, sse: SSECvtdq2pd, shape: vshVW, flags: vfMemHalf | vfXmmSrc})
	vexAdd(0, pp66, 0x5A, vexEntry{op: AVXNarrow, sse: SSECvtpd2ps, shape: vshVW})
	vexAdd(0, ppF2, 0xE6, vexEntry{op: AVXNarrow, sse: SSECvtpd2dq, shape: vshVW})
	vexAdd(0, pp66, 0xE6, vexEntry{op: AVXNarrow, sse: SSECvttpd2dq, shape: vshVW})
	lane(0, ppF3, 0x5A, SSECvtss2sd, vshVHW, 0, 4)
	lane(0, ppF2, 0x5A, SSECvtsd2ss, vshVHW, 0, 8)
	lane(0, ppF3, 0x12, SSEMovsldup, vshVW, 0, 0)
	lane(0, ppF3, 0x16, SSEMovshdup, vshVW, 0, 0)
	vexAdd(0, ppF2, 0x12, vexEntry{op: AVXLane, sse: SSEMovddup, shape: vshVW, flags: 0})
	for pp, op := range map[int]X86Op{ppNone: SSEComiss, pp66: SSEComisd} {
		vexAdd(0, pp, 0x2F, vexEntry{op: AVXComis, sse: op, shape: vshVW, flags: vfLIG, mem: uint8(4 << (pp & 1))})
	}
	vexAdd(0, ppNone, 0x2E, vexEntry{op: AVXComis, sse: SSEUcomiss, shape: vshVW, flags: vfLIG, mem: 4})
	vexAdd(0, pp66, 0x2E, vexEntry{op: AVXComis, sse: SSEUcomisd, shape: vshVW, flags: vfLIG, mem: 8})
	vexAdd(0, ppF3, 0x2A, vexEntry{op: AVXCvtsi2s, sse: SSECvtsi2ss, shape: vshVHE, flags: vfLIG})
	vexAdd(0, ppF2, 0x2A, vexEntry{op: AVXCvtsi2s, sse: SSECvtsi2sd, shape: vshVHE, flags: vfLIG})
	vexAdd(0, ppF3, 0x2C, vexEntry{op: AVXCvts2si, sse: SSECvttss2si, shape: vshGW, flags: vfLIG, mem: 4})
	vexAdd(0, ppF3, 0x2D, vexEntry{op: AVXCvts2si, sse: SSECvtss2si, shape: vshGW, flags: vfLIG, mem: 4})
	vexAdd(0, ppF2, 0x2C, vexEntry{op: AVXCvts2si, sse: SSECvttsd2si, shape: vshGW, flags: vfLIG, mem: 8})
	vexAdd(0, ppF2, 0x2D, vexEntry{op: AVXCvts2si, sse: SSECvtsd2si, shape: vshGW, flags: vfLIG, mem: 8})

	// Moves.
	for _, x := range []struct {
		pp      int
		ld, st  byte
		aligned bool
	}{
		{ppNone, 0x10, 0x11, false}, {pp66, 0x10, 0x11, false}, // vmovups/upd
		{ppNone, 0x28, 0x29, true}, {pp66, 0x28, 0x29, true}, // vmovaps/apd
		{pp66, 0x6F, 0x7F, true}, {ppF3, 0x6F, 0x7F, false}, // vmovdqa/dqu
	} {
		var f uint16
		if x.aligned {
			f = vfAlign
		}
		vexAdd(0, x.pp, x.ld, vexEntry{op: AVXMov, shape: vshVW, flags: f})
		vexAdd(0, x.pp, x.st, vexEntry{op: AVXMov, shape: vshWV, flags: f})
	}
	vexAdd(0, ppNone, 0x2B, vexEntry{op: AVXMov, shape: vshWV, flags: vfAlign | vfMem})
	vexAdd(0, pp66, 0x2B, vexEntry{op: AVXMov, shape: vshWV, flags: vfAlign | vfMem})
	vexAdd(0, pp66, 0xE7, vexEntry{op: AVXMov, shape: vshWV, flags: vfAlign | vfMem})
	vexAdd(0, ppF2, 0xF0, vexEntry{op: AVXMov, shape: vshVW, flags: vfMem})
	vexAdd(1, pp66, 0x2A, vexEntry{op: AVXMov, shape: vshVW, flags: vfAlign | vfMem})
	vexAdd(0, ppF3, 0x10, vexEntry{op: AVXMovSS, aux: 4})
	vexAdd(0, ppF3, 0x11, vexEntry{op: AVXMovSS, aux: 4})
	vexAdd(0, ppF2, 0x10, vexEntry{op: AVXMovSS, aux: 8})
	vexAdd(0, ppF2, 0x11, vexEntry{op: AVXMovSS, aux: 8})
	vexAdd(0, pp66, 0x6E, vexEntry{op: AVXMovZX, shape: vshVE, flags: vfL0})
	vexAdd(0, pp66, 0x7E, vexEntry{op: AVXMovZX, shape: vshEV, flags: vfL0})
	vexAdd(0, ppF3, 0x7E, vexEntry{op: AVXMovZX, shape: vshVW, flags: vfLIG, mem: 8})
	vexAdd(0, pp66, 0xD6, vexEntry{op: AVXMovZX, shape: vshWV, flags: vfL0, mem: 8})
	for pp := ppNone; pp <= pp66; pp++ {
		vexAdd(0, pp, 0x12, vexEntry{op: AVXMovLP, shape: vshVHW, flags: vfL0, mem: 8}) // reg form: VMOVHLPS (pp 0)
		vexAdd(0, pp, 0x13, vexEntry{op: AVXMovLP, shape: vshWV, flags: vfL0 | vfMem, mem: 8})
		vexAdd(0, pp, 0x16, vexEntry{op: AVXMovHP, shape: vshVHW, flags: vfL0, mem: 8}) // reg form: VMOVLHPS (pp 0)
		vexAdd(0, pp, 0x17, vexEntry{op: AVXMovHP, shape: vshWV, flags: vfL0 | vfMem, mem: 8})
	}
	vexAdd(0, ppNone, 0x50, vexEntry{op: AVXMovmsk, shape: vshGW, flags: vfReg, aux: 4})
	vexAdd(0, pp66, 0x50, vexEntry{op: AVXMovmsk, shape: vshGW, flags: vfReg, aux: 8})
	vexAdd(0, pp66, 0xD7, vexEntry{op: AVXMovmsk, shape: vshGW, flags: vfReg, aux: 1})
	vexAdd(0, pp66, 0xC5, vexEntry{op: AVXPextr, shape: vshGWI, flags: vfReg | vfL0, aux: 2})
	vexAdd(0, pp66, 0xC4, vexEntry{op: AVXPinsr, shape: vshVHEI, flags: vfL0, aux: 2})
	vexAdd(0, pp66, 0xF7, vexEntry{op: AVXLegacy, sse: SSEMaskmovdqu, shape: vshVW, flags: vfL0 | vfReg})
	vexAdd(0, ppNone, 0x77, vexEntry{op: AVXVzeroupper, shape: vshNone})

	// Packed integer ops of map 0F with pp 66 (VEX.256 is AVX2).
	for opc, op := range map[byte]X86Op{
		0x60: SSEPunpcklbw, 0x61: SSEPunpcklwd, 0x62: SSEPunpckldq, 0x63: SSEPacksswb,
		0x64: SSEPcmpgtb, 0x65: SSEPcmpgtw, 0x66: SSEPcmpgtd, 0x67: SSEPackuswb,
		0x68: SSEPunpckhbw, 0x69: SSEPunpckhwd, 0x6A: SSEPunpckhdq, 0x6B: SSEPackssdw,
		0x6C: SSEPunpcklqdq, 0x6D: SSEPunpckhqdq,
		0x74: SSEPcmpeqb, 0x75: SSEPcmpeqw, 0x76: SSEPcmpeqd,
		0xD4: SSEPaddq, 0xD5: SSEPmullw, 0xD8: SSEPsubusb, 0xD9: SSEPsubusw,
		0xDA: SSEPminub, 0xDB: SSEPand, 0xDC: SSEPaddusb, 0xDD: SSEPaddusw, 0xDE: SSEPmaxub, 0xDF: SSEPandn,
		0xE0: SSEPavgb, 0xE3: SSEPavgw, 0xE4: SSEPmulhuw, 0xE5: SSEPmulhw,
		0xE8: SSEPsubsb, 0xE9: SSEPsubsw, 0xEA: SSEPminsw, 0xEB: SSEPor,
		0xEC: SSEPaddsb, 0xED: SSEPaddsw, 0xEE: SSEPmaxsw, 0xEF: SSEPxor,
		0xF4: SSEPmuludq, 0xF5: SSEPmaddwd, 0xF6: SSEPsadbw,
		0xF8: SSEPsubb, 0xF9: SSEPsubw, 0xFA: SSEPsubd, 0xFB: SSEPsubq,
		0xFC: SSEPaddb, 0xFD: SSEPaddw, 0xFE: SSEPaddd,
	} {
		lane(0, pp66, opc, op, vshVHW, 0, 0)
	}
	lane(0, pp66, 0x70, SSEPshufd, vshVWI, 0, 0)
	lane(0, ppF3, 0x70, SSEPshufhw, vshVWI, 0, 0)
	lane(0, ppF2, 0x70, SSEPshuflw, vshVWI, 0, 0)
	for opc, op := range map[byte]X86Op{
		0xD1: SSEPsrlw, 0xD2: SSEPsrld, 0xD3: SSEPsrlq, 0xE1: SSEPsraw, 0xE2: SSEPsrad,
		0xF1: SSEPsllw, 0xF2: SSEPslld, 0xF3: SSEPsllq,
	} {
		vexAdd(0, pp66, opc, vexEntry{op: AVXShift, sse: op, shape: vshVHW, flags: vfXmmSrc, mem: 16})
	}
	sh := func(g int, reg int, op X86Op) {
		vexGroup[g][reg] = &vexEntry{op: AVXShift, sse: op, shape: vshShiftI, flags: vfReg}
	}
	sh(0, 2, SSEPsrlw)
	sh(0, 4, SSEPsraw)
	sh(0, 6, SSEPsllw)
	sh(1, 2, SSEPsrld)
	sh(1, 4, SSEPsrad)
	sh(1, 6, SSEPslld)
	sh(2, 2, SSEPsrlq)
	sh(2, 3, SSEPsrldq)
	sh(2, 6, SSEPsllq)
	sh(2, 7, SSEPslldq)

	// ---- map 0F38 (pp 66) ----
	for opc, op := range map[byte]X86Op{
		0x00: SSEPshufb, 0x01: SSEPhaddw, 0x02: SSEPhaddd, 0x03: SSEPhaddsw, 0x04: SSEPmaddubsw,
		0x05: SSEPhsubw, 0x06: SSEPhsubd, 0x07: SSEPhsubsw, 0x08: SSEPsignb, 0x09: SSEPsignw,
		0x0A: SSEPsignd, 0x0B: SSEPmulhrsw, 0x28: SSEPmuldq, 0x29: SSEPcmpeqq, 0x2B: SSEPackusdw,
		0x37: SSEPcmpgtq, 0x38: SSEPminsb, 0x39: SSEPminsd, 0x3A: SSEPminuw, 0x3B: SSEPminud,
		0x3C: SSEPmaxsb, 0x3D: SSEPmaxsd, 0x3E: SSEPmaxuw, 0x3F: SSEPmaxud, 0x40: SSEPmulld,
	} {
		lane(1, pp66, opc, op, vshVHW, 0, 0)
	}
	lane(1, pp66, 0x1C, SSEPabsb, vshVW, 0, 0)
	lane(1, pp66, 0x1D, SSEPabsw, vshVW, 0, 0)
	lane(1, pp66, 0x1E, SSEPabsd, vshVW, 0, 0)
	vexAdd(1, pp66, 0x41, vexEntry{op: AVXLegacy, sse: SSEPhminposuw, shape: vshVW, flags: vfL0})
	for i, m := range []struct {
		op       X86Op
		from, to uint32
	}{
		{SSEPmovsx, 1, 2}, {SSEPmovsx, 1, 4}, {SSEPmovsx, 1, 8}, {SSEPmovsx, 2, 4}, {SSEPmovsx, 2, 8}, {SSEPmovsx, 4, 8},
	} {
		ratio := m.to / m.from
		f := uint16(vfXmmSrc | vfMemHalf)
		switch ratio {
		case 4:
			f = vfXmmSrc | vfMemQtr
		case 8:
			f = vfXmmSrc | vfMemEighth
		}
		vexAdd(1, pp66, byte(0x20+i), vexEntry{op: AVXWiden, sse: SSEPmovsx, shape: vshVW, flags: f, aux: m.from | m.to<<4})
		vexAdd(1, pp66, byte(0x30+i), vexEntry{op: AVXWiden, sse: SSEPmovzx, shape: vshVW, flags: f, aux: m.from | m.to<<4})
	}
	vexAdd(1, pp66, 0x0C, vexEntry{op: AVXPermilVar, shape: vshVHW, flags: vfW0, aux: 4})
	vexAdd(1, pp66, 0x0D, vexEntry{op: AVXPermilVar, shape: vshVHW, flags: vfW0, aux: 8})
	vexAdd(1, pp66, 0x0E, vexEntry{op: AVXPtest, shape: vshVW, flags: vfW0, aux: 4})
	vexAdd(1, pp66, 0x0F, vexEntry{op: AVXPtest, shape: vshVW, flags: vfW0, aux: 8})
	vexAdd(1, pp66, 0x17, vexEntry{op: AVXPtest, shape: vshVW})
	vexAdd(1, pp66, 0x13, vexEntry{op: AVXCvtph2ps, shape: vshVW, flags: vfW0 | vfMemHalf | vfXmmSrc})
	vexAdd(1, pp66, 0x16, vexEntry{op: AVXPermD, shape: vshVHW, flags: vfW0 | vfL1})
	vexAdd(1, pp66, 0x36, vexEntry{op: AVXPermD, shape: vshVHW, flags: vfW0 | vfL1})
	vexAdd(1, pp66, 0x18, vexEntry{op: AVXBroadcast, shape: vshVW, flags: vfW0 | vfXmmSrc, mem: 4, aux: 4})
	vexAdd(1, pp66, 0x19, vexEntry{op: AVXBroadcast, shape: vshVW, flags: vfW0 | vfL1 | vfXmmSrc, mem: 8, aux: 8})
	vexAdd(1, pp66, 0x1A, vexEntry{op: AVXBroadcast, shape: vshVW, flags: vfW0 | vfL1 | vfMem, mem: 16, aux: 16})
	vexAdd(1, pp66, 0x5A, vexEntry{op: AVXBroadcast, shape: vshVW, flags: vfW0 | vfL1 | vfMem, mem: 16, aux: 16})
	vexAdd(1, pp66, 0x58, vexEntry{op: AVXBroadcast, shape: vshVW, flags: vfW0 | vfXmmSrc, mem: 4, aux: 4})
	vexAdd(1, pp66, 0x59, vexEntry{op: AVXBroadcast, shape: vshVW, flags: vfW0 | vfXmmSrc, mem: 8, aux: 8})
	vexAdd(1, pp66, 0x78, vexEntry{op: AVXBroadcast, shape: vshVW, flags: vfW0 | vfXmmSrc, mem: 1, aux: 1})
	vexAdd(1, pp66, 0x79, vexEntry{op: AVXBroadcast, shape: vshVW, flags: vfW0 | vfXmmSrc, mem: 2, aux: 2})
	vexAdd(1, pp66, 0x2C, vexEntry{op: AVXMaskLoad, shape: vshVHM, flags: vfW0, aux: 4})
	vexAdd(1, pp66, 0x2D, vexEntry{op: AVXMaskLoad, shape: vshVHM, flags: vfW0, aux: 8})
	vexAdd(1, pp66, 0x2E, vexEntry{op: AVXMaskStore, shape: vshMHV, flags: vfW0, aux: 4})
	vexAdd(1, pp66, 0x2F, vexEntry{op: AVXMaskStore, shape: vshMHV, flags: vfW0, aux: 8})
	vexAdd(1, pp66, 0x8C, vexEntry{op: AVXMaskLoad, shape: vshVHM, aux: 4})  // W selects d/q
	vexAdd(1, pp66, 0x8E, vexEntry{op: AVXMaskStore, shape: vshMHV, aux: 4}) // W selects d/q
	vexAdd(1, pp66, 0x45, vexEntry{op: AVXShiftV, shape: vshVHW, aux: 4 | 1<<4})
	vexAdd(1, pp66, 0x46, vexEntry{op: AVXShiftV, shape: vshVHW, flags: vfW0, aux: 4 | 2<<4})
	vexAdd(1, pp66, 0x47, vexEntry{op: AVXShiftV, shape: vshVHW, aux: 4 | 0<<4})
	for opc := byte(0x90); opc <= 0x93; opc++ {
		vexAdd(1, pp66, opc, vexEntry{op: AVXGather, shape: vshVHM})
	}
	// FMA3: 96..9F, A6..AF, B6..BF.
	for base, order := range map[byte]uint32{0x90: 0, 0xA0: 1, 0xB0: 2} {
		for lo, k := range map[byte][2]uint32{
			0x6: {AVXFMAMaddsub, 0}, 0x7: {AVXFMAMsubadd, 0},
			0x8: {AVXFMAMadd, 0}, 0x9: {AVXFMAMadd, AVXFMAScalar},
			0xA: {AVXFMAMsub, 0}, 0xB: {AVXFMAMsub, AVXFMAScalar},
			0xC: {AVXFMANmadd, 0}, 0xD: {AVXFMANmadd, AVXFMAScalar},
			0xE: {AVXFMANmsub, 0}, 0xF: {AVXFMANmsub, AVXFMAScalar},
		} {
			e := vexEntry{op: AVXFMA, shape: vshVHW, aux: order | k[0]<<AVXFMAKindShift | k[1]}
			if k[1] != 0 {
				e.flags = vfLIG
			}
			vexAdd(1, pp66, base+lo, e)
		}
	}

	// ---- map 0F3A (pp 66) ----
	vexAdd(2, pp66, 0x00, vexEntry{op: AVXPermQ, shape: vshVWI, flags: vfW1 | vfL1})
	vexAdd(2, pp66, 0x01, vexEntry{op: AVXPermQ, shape: vshVWI, flags: vfW1 | vfL1})
	vexAdd(2, pp66, 0x02, vexEntry{op: AVXLane, sse: SSEBlendps, shape: vshVHWI, flags: vfW0, aux: AVXAuxImmHi | 4<<AVXAuxImmShift})
	vexAdd(2, pp66, 0x04, vexEntry{op: AVXPermilImm, shape: vshVWI, flags: vfW0, aux: 4})
	vexAdd(2, pp66, 0x05, vexEntry{op: AVXPermilImm, shape: vshVWI, flags: vfW0, aux: 8})
	vexAdd(2, pp66, 0x06, vexEntry{op: AVXPerm2, shape: vshVHWI, flags: vfW0 | vfL1})
	vexAdd(2, pp66, 0x46, vexEntry{op: AVXPerm2, shape: vshVHWI, flags: vfW0 | vfL1})
	lane(2, pp66, 0x08, SSERoundps, vshVWI, 0, 0)
	lane(2, pp66, 0x09, SSERoundpd, vshVWI, 0, 0)
	lane(2, pp66, 0x0A, SSERoundss, vshVHWI, 0, 4)
	lane(2, pp66, 0x0B, SSERoundsd, vshVHWI, 0, 8)
	vexAdd(2, pp66, 0x0C, vexEntry{op: AVXLane, sse: SSEBlendps, shape: vshVHWI, aux: AVXAuxImmHi | 4<<AVXAuxImmShift})
	vexAdd(2, pp66, 0x0D, vexEntry{op: AVXLane, sse: SSEBlendpd, shape: vshVHWI, aux: AVXAuxImmHi | 2<<AVXAuxImmShift})
	lane(2, pp66, 0x0E, SSEPblendw, vshVHWI, 0, 0)
	lane(2, pp66, 0x0F, SSEPalignr, vshVHWI, 0, 0)
	vexAdd(2, pp66, 0x14, vexEntry{op: AVXPextr, shape: vshEVI, flags: vfL0, aux: 1})
	vexAdd(2, pp66, 0x15, vexEntry{op: AVXPextr, shape: vshEVI, flags: vfL0, aux: 2})
	vexAdd(2, pp66, 0x16, vexEntry{op: AVXPextr, shape: vshEVI, flags: vfL0, aux: 4}) // W1: 8
	vexAdd(2, pp66, 0x17, vexEntry{op: AVXPextr, shape: vshEVI, flags: vfL0, aux: 4 | 1<<8})
	vexAdd(2, pp66, 0x20, vexEntry{op: AVXPinsr, shape: vshVHEI, flags: vfL0, aux: 1})
	vexAdd(2, pp66, 0x22, vexEntry{op: AVXPinsr, shape: vshVHEI, flags: vfL0, aux: 4}) // W1: 8
	vexAdd(2, pp66, 0x21, vexEntry{op: AVXInsertps, shape: vshVHWI, flags: vfL0, mem: 4})
	vexAdd(2, pp66, 0x18, vexEntry{op: AVXInsert128, shape: vshVHWI, flags: vfW0 | vfL1 | vfXmmSrc, mem: 16})
	vexAdd(2, pp66, 0x38, vexEntry{op: AVXInsert128, shape: vshVHWI, flags: vfW0 | vfL1 | vfXmmSrc, mem: 16})
	vexAdd(2, pp66, 0x19, vexEntry{op: AVXExtract128, shape: vshWVI, flags: vfW0 | vfL1, mem: 16})
	vexAdd(2, pp66, 0x39, vexEntry{op: AVXExtract128, shape: vshWVI, flags: vfW0 | vfL1, mem: 16})
	vexAdd(2, pp66, 0x1D, vexEntry{op: AVXCvtps2ph, shape: vshWVI, flags: vfW0 | vfMemHalf})
	lane(2, pp66, 0x40, SSEDpps, vshVHWI, 0, 0)
	lane(2, pp66, 0x41, SSEDppd, vshVHWI, vfL0, 0)
	vexAdd(2, pp66, 0x42, vexEntry{op: AVXLane, sse: SSEMpsadbw, shape: vshVHWI, aux: AVXAuxImmHi | 3<<AVXAuxImmShift})
	vexAdd(2, pp66, 0x4A, vexEntry{op: AVXBlendv, sse: SSEBlendvps, shape: vshVHWL, flags: vfW0})
	vexAdd(2, pp66, 0x4B, vexEntry{op: AVXBlendv, sse: SSEBlendvpd, shape: vshVHWL, flags: vfW0})
	vexAdd(2, pp66, 0x4C, vexEntry{op: AVXBlendv, sse: SSEPblendvb, shape: vshVHWL, flags: vfW0})
	for opc, op := range map[byte]X86Op{0x60: SSEPcmpestrm, 0x61: SSEPcmpestri, 0x62: SSEPcmpistrm, 0x63: SSEPcmpistri} {
		vexAdd(2, pp66, opc, vexEntry{op: AVXLegacy, sse: op, shape: vshVWI, flags: vfL0})
	}
}

// decodeX86VEX decodes the instructions uvm decodes itself: VEX
// encodings with a vexTable entry, XGETBV and the XSAVE family. ok is
// false when mem is none of these (the caller goes on to x86asm).
func decodeX86VEX(mem []byte, pc uint64, out *X86) (ok bool, err error) {
	if len(mem) > maxX86Len {
		mem = mem[:maxX86Len]
	}
	i := 0
	var seg uint8
	a32, bad := false, false
	rex := byte(0)
	for i < len(mem) {
		b := mem[i]
		switch b {
		case 0x67:
			a32 = true
		case 0x64:
			seg = SegFS
		case 0x65:
			seg = SegGS
		case 0x2E, 0x3E, 0x26, 0x36:
		case 0x66, 0xF2, 0xF3, 0xF0:
			bad = true
		default:
			if b&0xF0 == 0x40 {
				rex = b
				bad = true
				i++
				if i < len(mem) && (mem[i] == 0xC4 || mem[i] == 0xC5) {
					goto vex
				}
				goto legacy
			}
			goto vex
		}
		i++
	}
	return false, nil
vex:
	if i >= len(mem) {
		return false, nil
	}
	if mem[i] != 0xC4 && mem[i] != 0xC5 {
		goto legacy
	}
	return decodeVEX(mem, i, pc, a32, seg, bad, out)
legacy:
	return decodeXsave(mem, i, pc, a32, seg, rex, bad, out)
}

// vexCursor reads an instruction's bytes with truncation tracking.
type vexCursor struct {
	mem   []byte
	i     int
	trunc bool
	// sib is set when the operand had a SIB byte; sibIndex is its index
	// field with REX.X/VEX.X (4 included, for VSIB).
	sib      bool
	sibIndex uint8
}

func (c *vexCursor) byte() byte {
	if c.i >= len(c.mem) {
		c.trunc = true
		c.i++
		return 0
	}
	b := c.mem[c.i]
	c.i++
	return b
}

// modrm decodes a ModRM operand (with SIB and displacement). rex holds
// the REX.R/X/B bits (as in a REX byte). It returns the reg field
// (with R) and the rm operand; RIP-relative operands are resolved by the
// caller once the length is known (rip is set).
func (c *vexCursor) modrm(rex byte, a32 bool, seg uint8) (reg uint8, rm X86Arg, rip bool) {
	m := c.byte()
	mod, r, low := m>>6, (m>>3)&7, m&7
	reg = r | (rex&4)<<1
	if mod == 3 {
		return reg, X86Arg{Kind: ArgXMM, Reg: low | (rex&1)<<3, Index: NoReg}, false
	}
	rm = X86Arg{Kind: ArgMem, Reg: NoReg, Index: NoReg, Scale: 1}
	if a32 {
		rm.Flags |= ArgA32
	}
	rm.Flags |= seg << ArgSegShift
	switch {
	case low == 4:
		sib := c.byte()
		rm.Scale = 1 << (sib >> 6)
		c.sib = true
		c.sibIndex = (sib>>3)&7 | (rex&2)<<2
		if idx := c.sibIndex; idx != 4 {
			rm.Index = idx
		}
		base := sib & 7
		if base == 5 && mod == 0 {
			rm.Disp = int64(int32(c.le32()))
			return reg, rm, false
		}
		rm.Reg = base | (rex&1)<<3
	case low == 5 && mod == 0:
		rm.Disp = int64(int32(c.le32()))
		return reg, rm, true
	default:
		rm.Reg = low | (rex&1)<<3
	}
	switch mod {
	case 1:
		rm.Disp = int64(int8(c.byte()))
	case 2:
		rm.Disp = int64(int32(c.le32()))
	}
	return reg, rm, false
}

func (c *vexCursor) le32() uint32 {
	return uint32(c.byte()) | uint32(c.byte())<<8 | uint32(c.byte())<<16 | uint32(c.byte())<<24
}

// finish sets the length and resolves a RIP-relative operand.
func finishExt(out *X86, cur *vexCursor, rip bool, pc uint64) error {
	if cur.trunc {
		if len(cur.mem) < maxX86Len {
			return ErrTruncated
		}
		out.Op = X86Undefined
		out.Len = maxX86Len
		return ErrUndefined
	}
	if cur.i > maxX86Len {
		out.Op = X86Undefined
		out.Len = maxX86Len
		return ErrUndefined
	}
	out.Len = uint8(cur.i)
	for k := range out.Args {
		a := &out.Args[k]
		if a.Kind != ArgMem {
			continue
		}
		if rip {
			a.Disp = int64(pc) + int64(out.Len) + a.Disp
			if a.Flags&ArgA32 != 0 {
				a.Disp = int64(uint32(a.Disp))
			}
		}
		out.Seg = (a.Flags & ArgSegMask) >> ArgSegShift
	}
	return nil
}

// undef marks out undefined with the bytes consumed so far.
func undefExt(out *X86, cur *vexCursor) (bool, error) {
	if cur.trunc && len(cur.mem) < maxX86Len {
		return true, ErrTruncated
	}
	*out = X86{Op: X86Undefined, Len: uint8(min(max(cur.i, 1), maxX86Len))}
	return true, ErrUndefined
}

func decodeVEX(mem []byte, at int, pc uint64, a32 bool, seg uint8, bad bool, out *X86) (bool, error) {
	cur := vexCursor{mem: mem, i: at}
	var rex byte // R X B in REX positions, W at bit 3
	var vvvv, l, pp, mmmmm byte
	if cur.byte() == 0xC5 {
		b1 := cur.byte()
		rex = (^b1 >> 5) & 4 // R
		vvvv = (^b1 >> 3) & 15
		l = (b1 >> 2) & 1
		pp = b1 & 3
		mmmmm = 1
	} else {
		b1 := cur.byte()
		b2 := cur.byte()
		rex = (^b1 >> 5) & 7 // R X B
		mmmmm = b1 & 0x1F
		rex |= (b2 >> 4) & 8 // W
		vvvv = (^b2 >> 3) & 15
		l = (b2 >> 2) & 1
		pp = b2 & 3
	}
	if cur.trunc {
		if len(mem) < maxX86Len {
			return true, ErrTruncated
		}
		return undefExt(out, &cur)
	}
	if mmmmm < 1 || mmmmm > 3 {
		return false, nil
	}
	opc := cur.byte()
	if cur.trunc {
		return undefExt(out, &cur)
	}
	w := rex&8 != 0
	// VZEROUPPER/VZEROALL have no ModRM byte.
	if mmmmm == 1 && opc == 0x77 && pp == 0 {
		if bad || vvvv != 0 {
			return undefExt(out, &cur)
		}
		*out = X86{Op: AVXVzeroupper, Width: 16, NArgs: 0}
		if l == 1 {
			out.Op = AVXVzeroall
			out.Width = 32
		}
		return true, finishExt(out, &cur, false, pc)
	}
	if mmmmm == 1 && opc == 0xAE && pp == 0 {
		// VLDMXCSR (/2) and VSTMXCSR (/3).
		if cur.i >= len(mem) {
			return undefExt(out, &vexCursor{mem: mem, i: cur.i + 1, trunc: true})
		}
		r := (mem[cur.i] >> 3) & 7
		if r != 2 && r != 3 {
			return false, nil
		}
		*out = X86{Op: AVXLdmxcsr + X86Op(r-2), Width: 4, NArgs: 1}
		_, rm, rip := cur.modrm(rex, a32, seg)
		if bad || l != 0 || vvvv != 0 || rm.Kind != ArgMem {
			return undefExt(out, &cur)
		}
		rm.Size = 4
		out.Args[0] = rm
		return true, finishExt(out, &cur, rip, pc)
	}
	var e *vexEntry
	grp := mmmmm == 1 && pp == 1 && opc >= 0x71 && opc <= 0x73
	if grp {
		if cur.i >= len(mem) {
			return undefExt(out, &vexCursor{mem: mem, i: cur.i + 1, trunc: true})
		}
		e = vexGroup[opc-0x71][(mem[cur.i]>>3)&7]
	} else {
		e = vexTable[mmmmm-1][pp][opc]
	}
	if e == nil {
		return false, nil // not an AVX instruction uvm knows: x86asm (BMI …)
	}
	*out = X86{Op: e.op, Imm2: int64(e.sse), Aux: e.aux, NArgs: 3, Width: 16 << l}
	out.Args[1] = X86Arg{Kind: ArgNone, Reg: NoReg, Index: NoReg}
	reg, rm, rip := cur.modrm(rex, a32, seg)
	if e.op == AVXGather {
		if rip {
			return undefExt(out, &cur)
		}
		return decodeGather(out, &cur, opc, reg, rm, vvvv, l, w, bad, pc)
	}
	// VMOVSS/VMOVSD: the register form has three operands.
	shape := e.shape
	if e.op == AVXMovSS {
		switch {
		case opc == 0x10 && rm.Kind == ArgXMM:
			shape = vshVHW
		case opc == 0x10:
			shape = vshVW
		case rm.Kind == ArgXMM:
			shape = vshVHW
			reg, rm.Reg = rm.Reg, reg // 11 /r: rm is the destination
		default:
			shape = vshWV
		}
		e = &vexEntry{op: AVXMovSS, shape: shape, flags: vfLIG, mem: uint8(e.aux), aux: e.aux}
	}
	f := e.flags
	if f&vfLIG != 0 {
		l = 0
		out.Width = 16
	}
	switch {
	case bad,
		f&vfL0 != 0 && l != 0, f&vfL1 != 0 && l != 1,
		f&vfW0 != 0 && w, f&vfW1 != 0 && !w,
		f&vfReg != 0 && rm.Kind != ArgXMM, f&vfMem != 0 && rm.Kind != ArgMem:
		return undefExt(out, &cur)
	}
	vreg := X86Arg{Kind: ArgXMM, Reg: vvvv, Index: NoReg, Size: 16 << l}
	dreg := X86Arg{Kind: ArgXMM, Reg: reg, Index: NoReg, Size: 16 << l}
	if rm.Kind == ArgXMM {
		rm.Size = 16 << l
		if f&vfXmmSrc != 0 {
			rm.Size = 16
		}
	} else {
		switch {
		case e.mem != 0:
			rm.Size = e.mem
		case f&vfMemHalf != 0:
			rm.Size = 8 << l
		case f&vfMemQtr != 0:
			rm.Size = 4 << l
		case f&vfMemEighth != 0:
			rm.Size = 2 << l
		default:
			rm.Size = 16 << l
		}
		if e.sse == SSEMovddup && l == 0 {
			rm.Size = 8
		}
	}
	if f&vfAlign != 0 {
		out.Aux |= AVXAuxAlign
	}
	gpr := func(a X86Arg, size uint8) X86Arg {
		if a.Kind == ArgXMM {
			a.Kind = ArgReg
		}
		a.Size = size
		return a
	}
	gsize := uint8(4)
	if w {
		gsize = 8
	}
	noV := vvvv != 0 // forms without vvvv require 1111
	switch shape {
	case vshVHW, vshVHWI, vshVHWL:
		out.Args[0], out.Args[1], out.Args[2] = dreg, vreg, rm
	case vshVW, vshVWI:
		if noV {
			return undefExt(out, &cur)
		}
		out.Args[0], out.Args[2] = dreg, rm
	case vshWV, vshWVI:
		if noV {
			return undefExt(out, &cur)
		}
		out.Args[0], out.Args[2] = rm, dreg
		if e.op == AVXExtract128 || e.op == AVXCvtps2ph {
			if rm.Kind == ArgXMM {
				out.Args[0].Size = 16
			}
		}
	case vshGW, vshGWI:
		if noV {
			return undefExt(out, &cur)
		}
		out.Args[0] = gpr(X86Arg{Kind: ArgReg, Reg: reg, Index: NoReg}, gsize)
		if e.op == AVXMovmsk || e.op == AVXPextr {
			out.Args[0].Size = 4 // the 64-bit forms write the same zero-extended value
			if w {
				out.Args[0].Size = 8
			}
		}
		out.Args[2] = rm
	case vshVHE, vshVHEI:
		out.Args[0], out.Args[1] = dreg, vreg
		out.Args[2] = gpr(rm, gsize)
	case vshEVI:
		if noV {
			return undefExt(out, &cur)
		}
		out.Args[0], out.Args[2] = gpr(rm, gsize), dreg
	case vshVE:
		if noV {
			return undefExt(out, &cur)
		}
		out.Args[0], out.Args[2] = dreg, gpr(rm, gsize)
	case vshEV:
		if noV {
			return undefExt(out, &cur)
		}
		out.Args[0], out.Args[2] = gpr(rm, gsize), dreg
	case vshVHM:
		if rm.Kind != ArgMem {
			return undefExt(out, &cur)
		}
		out.Args[0], out.Args[1], out.Args[2] = dreg, vreg, rm
	case vshMHV:
		if rm.Kind != ArgMem {
			return undefExt(out, &cur)
		}
		out.Args[0], out.Args[1], out.Args[2] = rm, vreg, dreg
	case vshShiftI:
		out.Args[0], out.Args[2] = vreg, rm
		out.Args[1] = X86Arg{Kind: ArgImm, Reg: NoReg, Index: NoReg}
	}
	switch shape {
	case vshVHWI, vshVWI, vshWVI, vshVHEI, vshEVI, vshVHWL, vshShiftI, vshGWI:
		out.Imm = int64(cur.byte())
	}
	// Per-op operand fix-ups.
	switch e.op {
	case AVXPextr:
		size := e.aux & 0xF
		if size == 4 && w {
			size = 8
		}
		if e.aux>>8 == 1 { // VEXTRACTPS
			size = 4
		}
		out.Aux = size
		if out.Args[0].Kind == ArgMem {
			out.Args[0].Size = uint8(size)
		} else if size < 8 {
			out.Args[0].Size = 4
		} else {
			out.Args[0].Size = 8
		}
	case AVXPinsr:
		size := e.aux
		if size == 4 && w {
			size = 8
		}
		out.Aux = size
		a := &out.Args[2]
		if a.Kind == ArgMem {
			a.Size = uint8(size)
		} else {
			a.Size = max(uint8(size), 4)
		}
	case AVXMaskLoad, AVXMaskStore:
		if opc == 0x8C || opc == 0x8E {
			if w {
				out.Aux = 8
			}
		}
	case AVXShiftV:
		if w {
			if e.aux>>4 == 2 {
				return undefExt(out, &cur) // VPSRAVQ is AVX-512
			}
			out.Aux = 8 | e.aux&0xF0
		}
	case AVXFMA:
		if w {
			out.Aux |= AVXFMADouble
		}
		if e.aux&AVXFMAScalar != 0 && rm.Kind == ArgMem {
			out.Args[2].Size = 4
			if w {
				out.Args[2].Size = 8
			}
		}
	case AVXLegacy:
		if w && (e.sse == SSEPcmpestri || e.sse == SSEPcmpestrm) {
			out.Aux |= SSEAuxW64
		}
	case AVXMovLP, AVXMovHP:
		if shape == vshVHW && rm.Kind == ArgXMM {
			if pp != 0 {
				return undefExt(out, &cur)
			}
			if e.op == AVXMovLP {
				out.Op = AVXMovHLPS
			} else {
				out.Op = AVXMovLHPS
			}
		}
	}
	return true, finishExt(out, &cur, rip, pc)
}

// decodeGather decodes VGATHERDPS/DPD/QPS/QPD and VPGATHERDD/DQ/QD/QQ
// (VEX.DDS): dst (reg), VSIB memory operand, mask (vvvv). The index is a
// vector register (Args[2].Index); Aux = index size | data size<<4.
func decodeGather(out *X86, cur *vexCursor, opc byte, reg uint8, rm X86Arg, vvvv, l byte, w, bad bool, pc uint64) (bool, error) {
	if bad || rm.Kind != ArgMem || !cur.sib {
		return undefExt(out, cur)
	}
	rm.Index = cur.sibIndex // VSIB: index 100 names a vector register too
	idxSize, dataSize := uint32(8), uint32(4)
	if opc == 0x90 || opc == 0x92 {
		idxSize = 4
	}
	if w {
		dataSize = 8
	}
	out.Aux = idxSize | dataSize<<4
	if reg == vvvv || reg == rm.Index || vvvv == rm.Index {
		return undefExt(out, cur) // #UD when any two of dst, mask and index coincide
	}
	rm.Size = uint8(dataSize)
	out.Args[0] = X86Arg{Kind: ArgXMM, Reg: reg, Index: NoReg, Size: 16 << l}
	out.Args[1] = X86Arg{Kind: ArgXMM, Reg: vvvv, Index: NoReg, Size: 16 << l}
	out.Args[2] = rm
	return true, finishExt(out, cur, false, pc)
}

// decodeXsave decodes XGETBV (0F 01 D0) and XSAVE/XSAVE64 (0F AE /4),
// XRSTOR (0F AE /5), XSAVEOPT (0F AE /6), XSAVEC (0F C7 /4), memory
// forms, without 66/F2/F3 prefixes.
func decodeXsave(mem []byte, at int, pc uint64, a32 bool, seg uint8, rex byte, bad bool, out *X86) (bool, error) {
	if at+2 > len(mem) || mem[at] != 0x0F {
		return false, nil
	}
	opc := mem[at+1]
	switch opc {
	case 0x01:
		if at+2 < len(mem) && mem[at+2] == 0xD0 {
			for _, b := range mem[:at] {
				if b == 0x66 || b == 0xF2 || b == 0xF3 || b == 0xF0 {
					return false, nil
				}
			}
			*out = X86{Op: X86Xgetbv, Len: uint8(at + 3), Width: 4}
			return true, nil
		}
		return false, nil
	case 0xAE, 0xC7:
	default:
		return false, nil
	}
	if at+2 >= len(mem) {
		return false, nil
	}
	m := mem[at+2]
	r := (m >> 3) & 7
	if m>>6 == 3 {
		return false, nil
	}
	var op X86Op
	switch {
	case opc == 0xAE && r == 4:
		op = X86Xsave
	case opc == 0xAE && r == 5:
		op = X86Xrstor
	case opc == 0xAE && r == 6:
		op = X86Xsaveopt
	case opc == 0xC7 && r == 4:
		op = X86Xsavec
	default:
		return false, nil
	}
	// Prefixes 66/F2/F3/F0 select other instructions (or are invalid).
	for _, b := range mem[:at] {
		switch b {
		case 0x66, 0xF2, 0xF3, 0xF0:
			return false, nil
		}
	}
	cur := vexCursor{mem: mem, i: at + 2}
	*out = X86{Op: op, Width: 8, NArgs: 1}
	_, rm, rip := cur.modrm(rex&7, a32, seg)
	rm.Size = 0
	out.Args[0] = rm
	if rex&8 != 0 {
		out.Aux |= AVXAuxW64
	}
	if err := finishExt(out, &cur, rip, pc); err != nil {
		return true, err
	}
	return true, nil
}

var avxOpNames = [...]string{
	AVXLane - X86AVXBase: "vlane", AVXShift - X86AVXBase: "vshift", AVXShiftV - X86AVXBase: "vshiftv",
	AVXMov - X86AVXBase: "vmov", AVXMovSS - X86AVXBase: "vmovss", AVXMovZX - X86AVXBase: "vmovq",
	AVXMovLP - X86AVXBase: "vmovlp", AVXMovHP - X86AVXBase: "vmovhp", AVXMovHLPS - X86AVXBase: "vmovhlps",
	AVXMovLHPS - X86AVXBase: "vmovlhps", AVXMovmsk - X86AVXBase: "vmovmsk", AVXPextr - X86AVXBase: "vpextr",
	AVXPinsr - X86AVXBase: "vpinsr", AVXInsertps - X86AVXBase: "vinsertps", AVXBroadcast - X86AVXBase: "vbroadcast",
	AVXInsert128 - X86AVXBase: "vinsert128", AVXExtract128 - X86AVXBase: "vextract128", AVXPerm2 - X86AVXBase: "vperm2",
	AVXPermQ - X86AVXBase: "vpermq", AVXPermD - X86AVXBase: "vpermd", AVXPermilVar - X86AVXBase: "vpermilvar",
	AVXPermilImm - X86AVXBase: "vpermilimm", AVXMaskLoad - X86AVXBase: "vmaskload", AVXMaskStore - X86AVXBase: "vmaskstore",
	AVXWiden - X86AVXBase: "vwiden", AVXNarrow - X86AVXBase: "vnarrow", AVXPtest - X86AVXBase: "vptest",
	AVXComis - X86AVXBase: "vcomis", AVXCvtsi2s - X86AVXBase: "vcvtsi2s", AVXCvts2si - X86AVXBase: "vcvts2si",
	AVXBlendv - X86AVXBase: "vblendv", AVXFMA - X86AVXBase: "vfma", AVXVzeroupper - X86AVXBase: "vzeroupper",
	AVXVzeroall - X86AVXBase: "vzeroall", AVXLdmxcsr - X86AVXBase: "vldmxcsr", AVXStmxcsr - X86AVXBase: "vstmxcsr",
	AVXLegacy - X86AVXBase: "vlegacy", AVXCvtph2ps - X86AVXBase: "vcvtph2ps", AVXCvtps2ph - X86AVXBase: "vcvtps2ph",
	AVXGather - X86AVXBase: "vgather", X86Xgetbv - X86AVXBase: "xgetbv", X86Xsave - X86AVXBase: "xsave",
	X86Xsavec - X86AVXBase: "xsavec", X86Xsaveopt - X86AVXBase: "xsaveopt", X86Xrstor - X86AVXBase: "xrstor",
}

func avxOpName(op X86Op) string {
	if i := int(op - X86AVXBase); i < len(avxOpNames) && avxOpNames[i] != "" {
		return avxOpNames[i]
	}
	return "avx" + strconv.Itoa(int(op-X86AVXBase))
}
