package decode

import "golang.org/x/arch/x86/x86asm"

// SSE/SSE2/SSE3/SSSE3/SSE4.1/SSE4.2 and x87 ops. translateX86SSE is
// called by the wrapper (x86wrap.go) with the operands already converted
// into out.Args (Intel order, immediates in out.Imm) for every
// instruction the integer translator does not handle; it picks the op,
// checks the operand shapes and fills Aux.
//
// Operand conventions for the ops below (checked at decode time, so the
// executor can rely on them):
//   - "V, V/M": Args[0] is ArgXMM, Args[1] ArgXMM or ArgMem whose Size
//     is the number of bytes read (16 for a full vector, 8/4/2/1 for the
//     partial forms). Aux&SSEAuxAlign is set when the memory operand
//     must be 16-byte aligned (legacy-SSE #GP rule).
//   - Imm holds the imm8 (zero-extended) for the forms that have one.
//   - GPR operands are ArgReg with Size 4 or 8.
//   - x87 memory operands carry their real size (m80 = 10, environment
//     28, FNSAVE image 108) in Args[0].Size; FXSAVE/FXRSTOR (512 bytes)
//     have Size 0.

// Aux bits of SSE and x87 ops.
const (
	// SSEAuxAlign: the 16-byte memory operand must be 16-byte aligned
	// (#GP otherwise: Linux sends SIGSEGV, SI_KERNEL).
	SSEAuxAlign = 1 << 0
	// X87AuxPop: pop the x87 stack once after the operation (FSTP,
	// FADDP, FCOMP, FUCOMIP …); X87AuxPop2 pops twice (FCOMPP, FUCOMPP).
	X87AuxPop  = 1 << 1
	X87AuxPop2 = 1 << 2
	// X87AuxInt: the memory operand is an integer (FIADD, FICOM …).
	X87AuxInt = 1 << 3
	// X87AuxRev: reversed operand order (FSUBR, FDIVR).
	X87AuxRev = 1 << 4
	// X87AuxUnordered: FUCOM*/FUCOMI* (only SNaN is invalid).
	X87AuxUnordered = 1 << 5
	// SSEAuxW64: REX.W form (FXSAVE64/FXRSTOR64, PCMPESTRx lengths in
	// RAX/RDX).
	SSEAuxW64 = 1 << 6
	// X87AuxOpShift: the x87 arithmetic operation (X87OpAdd…) in bits 8-11.
	X87AuxOpShift = 8
)

// x87 arithmetic operations in Aux bits 8-11 of X87Arith*.
const (
	X87OpAdd = iota
	X87OpMul
	X87OpSub
	X87OpDiv
)

// SSE and x87 ops (all >= X86SSEBase).
const (
	// Moves.
	SSEMov128     X86Op = X86SSEBase + iota // MOVAPS/APD/DQA/UPS/UPD/DQU, LDDQU, MOVNT*: V←V/M, M←V
	SSEMovSS                                // MOVSS: V←V merges 32 bits, V←M32 zero-extends, M32←V
	SSEMovSD                                // MOVSD: as MOVSS with 64 bits
	SSEMovZX                                // MOVD/MOVQ: V←V/GPR/M zero-extended from Args[1].Size (xmm source: 8); GPR/M←V
	SSEMovLP                                // MOVLPS/MOVLPD: V.lo←M64, M64←V.lo
	SSEMovHP                                // MOVHPS/MOVHPD: V.hi←M64, M64←V.hi
	SSEMovHLPS                              // V.lo←V2.hi
	SSEMovLHPS                              // V.hi←V2.lo
	SSEMovmskps                             // GPR←sign bits of 4 singles
	SSEMovmskpd                             // GPR←sign bits of 2 doubles
	SSEPmovmskb                             // GPR←sign bits of 16 bytes
	SSEMaskmovdqu                           // byte-masked store of Args[0] (mask Args[1]) to [RDI]
	SSEPextr                                // PEXTRB/W/D/Q: GPR/M←element Imm of Args[1]; Aux = element size
	SSEPinsr                                // PINSRB/W/D/Q: Args[0] element Imm ← GPR/M; Aux = element size
	SSEExtractps                            // GPR32/M32 ← single Imm&3
	SSEInsertps                             // INSERTPS
	SSEMovddup                              // V ← lo64,lo64
	SSEMovshdup                             // V ← s1,s1,s3,s3
	SSEMovsldup                             // V ← s0,s0,s2,s2
	SSEPmovsx                               // PMOVSX*: Aux = from size | to size<<4
	SSEPmovzx                               // PMOVZX*: Aux = from size | to size<<4

	// Packed integer arithmetic (V, V/M).
	SSEPaddb
	SSEPaddw
	SSEPaddd
	SSEPaddq
	SSEPsubb
	SSEPsubw
	SSEPsubd
	SSEPsubq
	SSEPaddsb
	SSEPaddsw
	SSEPaddusb
	SSEPaddusw
	SSEPsubsb
	SSEPsubsw
	SSEPsubusb
	SSEPsubusw
	SSEPmullw
	SSEPmulhw
	SSEPmulhuw
	SSEPmuludq
	SSEPmaddwd
	SSEPavgb
	SSEPavgw
	SSEPmaxub
	SSEPmaxsw
	SSEPminub
	SSEPminsw
	SSEPsadbw
	SSEPcmpeqb
	SSEPcmpeqw
	SSEPcmpeqd
	SSEPcmpgtb
	SSEPcmpgtw
	SSEPcmpgtd
	SSEPand // also ANDPS/ANDPD
	SSEPandn
	SSEAndnps // ANDNPS/ANDNPD: executes as PANDN
	SSEPor    // also ORPS/ORPD
	SSEPxor   // also XORPS/XORPD
	SSEPunpcklbw
	SSEPunpcklwd
	SSEPunpckldq
	SSEPunpcklqdq // also UNPCKLPD
	SSEPunpckhbw
	SSEPunpckhwd
	SSEPunpckhdq
	SSEPunpckhqdq // also UNPCKHPD
	SSEPacksswb
	SSEPackssdw
	SSEPackuswb
	SSEUnpcklps
	SSEUnpckhps

	// Shifts: Args[1] is ArgImm (count in Imm) or V/M128 (count = low 64 bits).
	SSEPsllw
	SSEPslld
	SSEPsllq
	SSEPsrlw
	SSEPsrld
	SSEPsrlq
	SSEPsraw
	SSEPsrad
	SSEPslldq // Imm bytes
	SSEPsrldq

	// Shuffles with imm8.
	SSEPshufd
	SSEPshufhw
	SSEPshuflw
	SSEShufps
	SSEShufpd

	// Floating point, packed and scalar (V, V/M).
	SSEAddps
	SSEAddpd
	SSEAddss
	SSEAddsd
	SSESubps
	SSESubpd
	SSESubss
	SSESubsd
	SSEMulps
	SSEMulpd
	SSEMulss
	SSEMulsd
	SSEDivps
	SSEDivpd
	SSEDivss
	SSEDivsd
	SSEMinps
	SSEMinpd
	SSEMinss
	SSEMinsd
	SSEMaxps
	SSEMaxpd
	SSEMaxss
	SSEMaxsd
	SSESqrtps
	SSESqrtpd
	SSESqrtss
	SSESqrtsd
	SSERcpps
	SSERcpss
	SSERsqrtps
	SSERsqrtss
	SSECmpps // Imm = predicate
	SSECmppd
	SSECmpss
	SSECmpsd
	SSEComiss
	SSEComisd
	SSEUcomiss
	SSEUcomisd

	// Conversions.
	SSECvtsi2ss  // V ← GPR/M (Args[1].Size 4 or 8)
	SSECvtsi2sd  //
	SSECvtss2si  // GPR ← V/M32 (Args[0].Size 4 or 8), MXCSR rounding
	SSECvtsd2si  //
	SSECvttss2si // truncating
	SSECvttsd2si //
	SSECvtss2sd  // V ← V/M32
	SSECvtsd2ss  // V ← V/M64
	SSECvtdq2ps
	SSECvtps2dq
	SSECvttps2dq
	SSECvtdq2pd // V ← V/M64
	SSECvtpd2dq
	SSECvttpd2dq
	SSECvtps2pd // V ← V/M64
	SSECvtpd2ps

	// MXCSR and state.
	SSELdmxcsr
	SSEStmxcsr
	SSEFxsave  // Aux&SSEAuxW64: FXSAVE64
	SSEFxrstor // Aux&SSEAuxW64: FXRSTOR64

	// SSE3.
	SSEAddsubps
	SSEAddsubpd
	SSEHaddps
	SSEHaddpd
	SSEHsubps
	SSEHsubpd

	// SSSE3.
	SSEPshufb
	SSEPhaddw
	SSEPhaddd
	SSEPhaddsw
	SSEPhsubw
	SSEPhsubd
	SSEPhsubsw
	SSEPmaddubsw
	SSEPmulhrsw
	SSEPsignb
	SSEPsignw
	SSEPsignd
	SSEPabsb
	SSEPabsw
	SSEPabsd
	SSEPalignr // Imm

	// SSE4.1.
	SSEPminsb
	SSEPminsd
	SSEPminuw
	SSEPminud
	SSEPmaxsb
	SSEPmaxsd
	SSEPmaxuw
	SSEPmaxud
	SSEPmulld
	SSEPmuldq
	SSEPcmpeqq
	SSEPackusdw
	SSEPtest
	SSEPhminposuw
	SSEBlendps  // Imm
	SSEBlendpd  // Imm
	SSEPblendw  // Imm
	SSEBlendvps // mask XMM0
	SSEBlendvpd
	SSEPblendvb
	SSERoundps // Imm
	SSERoundpd
	SSERoundss
	SSERoundsd
	SSEDpps // Imm
	SSEDppd
	SSEMpsadbw

	// SSE4.2.
	SSEPcmpgtq
	SSEPcmpestri // Imm; unaligned memory allowed
	SSEPcmpestrm
	SSEPcmpistri
	SSEPcmpistrm
	SSECrc32 // Args[0] GPR 4/8, Args[1] GPR/M of Size 1/2/4/8

	// x87.
	X87Fld      // push ST(Args[0].Reg)
	X87FldM     // push m32/m64/m80 (Args[0].Size)
	X87Fild     // push m16/m32/m64 integer
	X87FldConst // push constant Aux>>8: 0 one, 1 zero, 2 pi, 3 l2e, 4 l2t, 5 lg2, 6 ln2
	X87Fst      // ST(Args[0].Reg) ← ST(0), X87AuxPop
	X87FstM     // m32/m64/m80 ← ST(0), X87AuxPop
	X87Fist     // m16/m32/m64 ← ST(0) rounded by FCW.RC, X87AuxPop
	X87Fisttp   // m16/m32/m64 ← ST(0) truncated, pop
	X87Fbld     // push BCD m80
	X87Fbstp    // BCD m80 ← ST(0), pop
	X87ArithReg // Args[0] op= Args[1] (ST registers); op in Aux; X87AuxRev/X87AuxPop
	X87ArithMem // ST(0) op= m (real or X87AuxInt); X87AuxRev
	X87Fcom     // compare ST(0) with ST(Args[0].Reg) or m (Args[0]); C3/C2/C0; pops in Aux
	X87Fcomi    // compare ST(0), ST(Args[1].Reg) into ZF/PF/CF
	X87Ftst     // compare ST(0) with 0.0
	X87Fxam     //
	X87Fxch     // ST(0) ↔ ST(Args[0].Reg)
	X87Fchs     //
	X87Fabs     //
	X87Fsqrt    //
	X87Frndint  //
	X87Fscale   //
	X87Fxtract  //
	X87Fprem    //
	X87Fprem1   //
	X87Fnstcw   // m16 ← FCW
	X87Fldcw    // FCW ← m16
	X87Fnstsw   // AX or m16 ← FSW
	X87Fnclex   //
	X87Fninit   //
	X87Fwait    // no-op (no unmasked x87 exception is ever left pending)
	X87Fnop     //
	X87Ffree    // tag ST(Args[0].Reg) empty; X87AuxPop for FFREEP
	X87Fincstp  //
	X87Fdecstp  //
	X87Fcmov    // Cond (CondB/E/BE/P and negations) ST(0) ← ST(Args[1].Reg)
	X87Fnstenv  // m28 ← environment
	X87Fldenv   //
	X87Fnsave   // m108 ← environment + registers, then FNINIT
	X87Frstor   //
	X87Fsin     //
	X87Fcos     //
	X87Fsincos  //
	X87Fptan    //
	X87Fpatan   //
	X87F2xm1    //
	X87Fyl2x    //
	X87Fyl2xp1  //
	SSEEmms     // EMMS: x87 tag word all empty (executed with the MMX ops)

	// MMX (x86mmx.go). An ArgMMX operand mmN is the significand of the
	// x87 physical register RN; each op except EMMS moves the x87 unit
	// into MMX mode (TOS 0, all tags valid).
	MMXInt      // Aux = the SSE op, on 64-bit vectors: mm, mm/m64 [, Imm]
	MMXShift    // Aux = the SSE shift op: mm, imm or mm/m64 (count)
	MMXMovIn    // mm ← mm/m64/GPR/m32, zero-extended from Args[1].Size
	MMXMovOut   // mm/m64/GPR/m32 ← mm (MOVD/MOVQ/MOVNTQ)
	MMXPshufw   // mm, mm/m64, Imm
	MMXPextrw   // GPR ← word Imm&3 of mm
	MMXPinsrw   // mm word Imm&3 ← GPR/m16
	MMXPmovmskb // GPR ← sign bits of the 8 bytes of mm
	MMXMaskmovq // byte-masked store of Args[0] (mask Args[1]) to [RDI]
	MMXMovq2dq  // xmm ← mm, zero-extended
	MMXMovdq2q  // mm ← low qword of xmm
	MMXCvtpi2ps // xmm low two singles ← two int32 of mm/m64
	MMXCvtpi2pd // xmm ← two doubles from two int32 of mm/m64
	MMXCvtps2pi // mm ← two int32 from the low singles of xmm/m64; MMXAuxTrunc
	MMXCvtpd2pi // mm ← two int32 from the doubles of xmm/m128; MMXAuxTrunc

	SSEOpEnd // first unused op number
)

// sseSimple maps ops whose operands are "V, V/M" to their uvm op.
var sseSimple = map[x86asm.Op]X86Op{
	x86asm.PADDB: SSEPaddb, x86asm.PADDW: SSEPaddw, x86asm.PADDD: SSEPaddd, x86asm.PADDQ: SSEPaddq,
	x86asm.PSUBB: SSEPsubb, x86asm.PSUBW: SSEPsubw, x86asm.PSUBD: SSEPsubd, x86asm.PSUBQ: SSEPsubq,
	x86asm.PADDSB: SSEPaddsb, x86asm.PADDSW: SSEPaddsw, x86asm.PADDUSB: SSEPaddusb, x86asm.PADDUSW: SSEPaddusw,
	x86asm.PSUBSB: SSEPsubsb, x86asm.PSUBSW: SSEPsubsw, x86asm.PSUBUSB: SSEPsubusb, x86asm.PSUBUSW: SSEPsubusw,
	x86asm.PMULLW: SSEPmullw, x86asm.PMULHW: SSEPmulhw, x86asm.PMULHUW: SSEPmulhuw, x86asm.PMULUDQ: SSEPmuludq,
	x86asm.PMADDWD: SSEPmaddwd, x86asm.PAVGB: SSEPavgb, x86asm.PAVGW: SSEPavgw,
	x86asm.PMAXUB: SSEPmaxub, x86asm.PMAXSW: SSEPmaxsw, x86asm.PMINUB: SSEPminub, x86asm.PMINSW: SSEPminsw,
	x86asm.PSADBW:  SSEPsadbw,
	x86asm.PCMPEQB: SSEPcmpeqb, x86asm.PCMPEQW: SSEPcmpeqw, x86asm.PCMPEQD: SSEPcmpeqd,
	x86asm.PCMPGTB: SSEPcmpgtb, x86asm.PCMPGTW: SSEPcmpgtw, x86asm.PCMPGTD: SSEPcmpgtd,
	x86asm.PAND: SSEPand, x86asm.ANDPS: SSEPand, x86asm.ANDPD: SSEPand,
	x86asm.PANDN: SSEPandn, x86asm.ANDNPS: SSEAndnps, x86asm.ANDNPD: SSEAndnps,
	x86asm.POR: SSEPor, x86asm.ORPS: SSEPor, x86asm.ORPD: SSEPor,
	x86asm.PXOR: SSEPxor, x86asm.XORPS: SSEPxor, x86asm.XORPD: SSEPxor,
	x86asm.PUNPCKLBW: SSEPunpcklbw, x86asm.PUNPCKLWD: SSEPunpcklwd, x86asm.PUNPCKLDQ: SSEPunpckldq,
	x86asm.PUNPCKLQDQ: SSEPunpcklqdq, x86asm.UNPCKLPD: SSEPunpcklqdq,
	x86asm.PUNPCKHBW: SSEPunpckhbw, x86asm.PUNPCKHWD: SSEPunpckhwd, x86asm.PUNPCKHDQ: SSEPunpckhdq,
	x86asm.PUNPCKHQDQ: SSEPunpckhqdq, x86asm.UNPCKHPD: SSEPunpckhqdq,
	x86asm.UNPCKLPS: SSEUnpcklps, x86asm.UNPCKHPS: SSEUnpckhps,
	x86asm.PACKSSWB: SSEPacksswb, x86asm.PACKSSDW: SSEPackssdw, x86asm.PACKUSWB: SSEPackuswb,

	x86asm.ADDPS: SSEAddps, x86asm.ADDPD: SSEAddpd, x86asm.ADDSS: SSEAddss, x86asm.ADDSD: SSEAddsd,
	x86asm.SUBPS: SSESubps, x86asm.SUBPD: SSESubpd, x86asm.SUBSS: SSESubss, x86asm.SUBSD: SSESubsd,
	x86asm.MULPS: SSEMulps, x86asm.MULPD: SSEMulpd, x86asm.MULSS: SSEMulss, x86asm.MULSD: SSEMulsd,
	x86asm.DIVPS: SSEDivps, x86asm.DIVPD: SSEDivpd, x86asm.DIVSS: SSEDivss, x86asm.DIVSD: SSEDivsd,
	x86asm.MINPS: SSEMinps, x86asm.MINPD: SSEMinpd, x86asm.MINSS: SSEMinss, x86asm.MINSD: SSEMinsd,
	x86asm.MAXPS: SSEMaxps, x86asm.MAXPD: SSEMaxpd, x86asm.MAXSS: SSEMaxss, x86asm.MAXSD: SSEMaxsd,
	x86asm.SQRTPS: SSESqrtps, x86asm.SQRTPD: SSESqrtpd, x86asm.SQRTSS: SSESqrtss, x86asm.SQRTSD: SSESqrtsd,
	x86asm.RCPPS: SSERcpps, x86asm.RCPSS: SSERcpss, x86asm.RSQRTPS: SSERsqrtps, x86asm.RSQRTSS: SSERsqrtss,
	x86asm.COMISS: SSEComiss, x86asm.COMISD: SSEComisd, x86asm.UCOMISS: SSEUcomiss, x86asm.UCOMISD: SSEUcomisd,
	x86asm.CVTSS2SD: SSECvtss2sd, x86asm.CVTSD2SS: SSECvtsd2ss,
	x86asm.CVTDQ2PS: SSECvtdq2ps, x86asm.CVTPS2DQ: SSECvtps2dq, x86asm.CVTTPS2DQ: SSECvttps2dq,
	x86asm.CVTDQ2PD: SSECvtdq2pd, x86asm.CVTPD2DQ: SSECvtpd2dq, x86asm.CVTTPD2DQ: SSECvttpd2dq,
	x86asm.CVTPS2PD: SSECvtps2pd, x86asm.CVTPD2PS: SSECvtpd2ps,
	x86asm.MOVDDUP: SSEMovddup, x86asm.MOVSHDUP: SSEMovshdup, x86asm.MOVSLDUP: SSEMovsldup,

	x86asm.ADDSUBPS: SSEAddsubps, x86asm.ADDSUBPD: SSEAddsubpd, x86asm.HADDPS: SSEHaddps,
	x86asm.HADDPD: SSEHaddpd, x86asm.HSUBPS: SSEHsubps, x86asm.HSUBPD: SSEHsubpd,

	x86asm.PSHUFB: SSEPshufb, x86asm.PHADDW: SSEPhaddw, x86asm.PHADDD: SSEPhaddd, x86asm.PHADDSW: SSEPhaddsw,
	x86asm.PHSUBW: SSEPhsubw, x86asm.PHSUBD: SSEPhsubd, x86asm.PHSUBSW: SSEPhsubsw,
	x86asm.PMADDUBSW: SSEPmaddubsw, x86asm.PMULHRSW: SSEPmulhrsw,
	x86asm.PSIGNB: SSEPsignb, x86asm.PSIGNW: SSEPsignw, x86asm.PSIGND: SSEPsignd,
	x86asm.PABSB: SSEPabsb, x86asm.PABSW: SSEPabsw, x86asm.PABSD: SSEPabsd,

	x86asm.PMINSB: SSEPminsb, x86asm.PMINSD: SSEPminsd, x86asm.PMINUW: SSEPminuw, x86asm.PMINUD: SSEPminud,
	x86asm.PMAXSB: SSEPmaxsb, x86asm.PMAXSD: SSEPmaxsd, x86asm.PMAXUW: SSEPmaxuw, x86asm.PMAXUD: SSEPmaxud,
	x86asm.PMULLD: SSEPmulld, x86asm.PMULDQ: SSEPmuldq, x86asm.PCMPEQQ: SSEPcmpeqq,
	x86asm.PACKUSDW: SSEPackusdw, x86asm.PTEST: SSEPtest, x86asm.PHMINPOSUW: SSEPhminposuw,
	x86asm.PCMPGTQ: SSEPcmpgtq,
}

// sseImm maps the "V, V/M, imm8" ops.
var sseImm = map[x86asm.Op]X86Op{
	x86asm.PSHUFD: SSEPshufd, x86asm.PSHUFHW: SSEPshufhw, x86asm.PSHUFLW: SSEPshuflw,
	x86asm.SHUFPS: SSEShufps, x86asm.SHUFPD: SSEShufpd,
	x86asm.CMPPS: SSECmpps, x86asm.CMPPD: SSECmppd, x86asm.CMPSS: SSECmpss, x86asm.CMPSD_XMM: SSECmpsd,
	x86asm.PALIGNR: SSEPalignr, x86asm.BLENDPS: SSEBlendps, x86asm.BLENDPD: SSEBlendpd, x86asm.PBLENDW: SSEPblendw,
	x86asm.ROUNDPS: SSERoundps, x86asm.ROUNDPD: SSERoundpd, x86asm.ROUNDSS: SSERoundss, x86asm.ROUNDSD: SSERoundsd,
	x86asm.DPPS: SSEDpps, x86asm.DPPD: SSEDppd, x86asm.MPSADBW: SSEMpsadbw,
	x86asm.PCMPESTRI: SSEPcmpestri, x86asm.PCMPESTRM: SSEPcmpestrm,
	x86asm.PCMPISTRI: SSEPcmpistri, x86asm.PCMPISTRM: SSEPcmpistrm,
	x86asm.INSERTPS: SSEInsertps,
}

// sseShift maps the shift-by-imm-or-vector ops.
var sseShift = map[x86asm.Op]X86Op{
	x86asm.PSLLW: SSEPsllw, x86asm.PSLLD: SSEPslld, x86asm.PSLLQ: SSEPsllq,
	x86asm.PSRLW: SSEPsrlw, x86asm.PSRLD: SSEPsrld, x86asm.PSRLQ: SSEPsrlq,
	x86asm.PSRAW: SSEPsraw, x86asm.PSRAD: SSEPsrad,
	x86asm.PSLLDQ: SSEPslldq, x86asm.PSRLDQ: SSEPsrldq,
}

// ssePmov maps PMOVSX/PMOVZX to (op, from size, to size).
var ssePmov = map[x86asm.Op][3]uint32{
	x86asm.PMOVSXBW: {uint32(SSEPmovsx), 1, 2}, x86asm.PMOVSXBD: {uint32(SSEPmovsx), 1, 4},
	x86asm.PMOVSXBQ: {uint32(SSEPmovsx), 1, 8}, x86asm.PMOVSXWD: {uint32(SSEPmovsx), 2, 4},
	x86asm.PMOVSXWQ: {uint32(SSEPmovsx), 2, 8}, x86asm.PMOVSXDQ: {uint32(SSEPmovsx), 4, 8},
	x86asm.PMOVZXBW: {uint32(SSEPmovzx), 1, 2}, x86asm.PMOVZXBD: {uint32(SSEPmovzx), 1, 4},
	x86asm.PMOVZXBQ: {uint32(SSEPmovzx), 1, 8}, x86asm.PMOVZXWD: {uint32(SSEPmovzx), 2, 4},
	x86asm.PMOVZXWQ: {uint32(SSEPmovzx), 2, 8}, x86asm.PMOVZXDQ: {uint32(SSEPmovzx), 4, 8},
}

// x87Simple maps the operand-less x87 ops.
var x87Simple = map[x86asm.Op]X86Op{
	x86asm.FTST: X87Ftst, x86asm.FXAM: X87Fxam, x86asm.FCHS: X87Fchs, x86asm.FABS: X87Fabs,
	x86asm.FSQRT: X87Fsqrt, x86asm.FRNDINT: X87Frndint, x86asm.FSCALE: X87Fscale, x86asm.FXTRACT: X87Fxtract,
	x86asm.FPREM: X87Fprem, x86asm.FPREM1: X87Fprem1, x86asm.FNCLEX: X87Fnclex, x86asm.FNINIT: X87Fninit,
	x86asm.FWAIT: X87Fwait, x86asm.FNOP: X87Fnop, x86asm.FINCSTP: X87Fincstp, x86asm.FDECSTP: X87Fdecstp,
	x86asm.FSIN: X87Fsin, x86asm.FCOS: X87Fcos, x86asm.FSINCOS: X87Fsincos, x86asm.FPTAN: X87Fptan,
	x86asm.FPATAN: X87Fpatan, x86asm.F2XM1: X87F2xm1, x86asm.FYL2X: X87Fyl2x, x86asm.FYL2XP1: X87Fyl2xp1,
	x86asm.EMMS: SSEEmms,
}

// x87Const maps the constant loads to their X87FldConst index.
var x87Const = map[x86asm.Op]uint32{
	x86asm.FLD1: 0, x86asm.FLDZ: 1, x86asm.FLDPI: 2, x86asm.FLDL2E: 3, x86asm.FLDL2T: 4,
	x86asm.FLDLG2: 5, x86asm.FLDLN2: 6,
}

// x87Arith maps the x87 arithmetic ops to (operation, aux flags).
var x87Arith = map[x86asm.Op][2]uint32{
	x86asm.FADD: {X87OpAdd, 0}, x86asm.FADDP: {X87OpAdd, X87AuxPop}, x86asm.FIADD: {X87OpAdd, X87AuxInt},
	x86asm.FMUL: {X87OpMul, 0}, x86asm.FMULP: {X87OpMul, X87AuxPop}, x86asm.FIMUL: {X87OpMul, X87AuxInt},
	x86asm.FSUB: {X87OpSub, 0}, x86asm.FSUBP: {X87OpSub, X87AuxPop}, x86asm.FISUB: {X87OpSub, X87AuxInt},
	x86asm.FSUBR: {X87OpSub, X87AuxRev}, x86asm.FSUBRP: {X87OpSub, X87AuxRev | X87AuxPop},
	x86asm.FISUBR: {X87OpSub, X87AuxRev | X87AuxInt},
	x86asm.FDIV:   {X87OpDiv, 0}, x86asm.FDIVP: {X87OpDiv, X87AuxPop}, x86asm.FIDIV: {X87OpDiv, X87AuxInt},
	x86asm.FDIVR: {X87OpDiv, X87AuxRev}, x86asm.FDIVRP: {X87OpDiv, X87AuxRev | X87AuxPop},
	x86asm.FIDIVR: {X87OpDiv, X87AuxRev | X87AuxInt},
}

// x87Fcmov maps FCMOVcc to the integer condition codes.
var x87Fcmov = map[x86asm.Op]uint8{
	x86asm.FCMOVB: CondB, x86asm.FCMOVE: CondE, x86asm.FCMOVBE: CondBE, x86asm.FCMOVU: CondP,
	x86asm.FCMOVNB: CondAE, x86asm.FCMOVNE: CondNE, x86asm.FCMOVNBE: CondA, x86asm.FCMOVNU: CondNP,
}

// translateX86SSE fills out for the SSE/SSE2/SSE3/SSSE3/SSE4.1/SSE4.2
// and x87 instructions uvm implements. It returns false for anything else
// (MMX register forms, AVX, AES, SHA, XSAVE …), which the wrapper turns
// into ErrUndefined.
func translateX86SSE(inst *x86asm.Inst, pc uint64, out *X86) bool {
	_ = pc // operands arrive resolved (RIP-relative made absolute)
	if p := inst.Prefix[0]; p.IsVEX() || p.IsEVEX() {
		return false
	}
	args := out.Args[:out.NArgs]
	for i := range args {
		if args[i].Kind == ArgMMX {
			return false
		}
	}
	kind := func(i int) X86ArgKind {
		if i < len(args) {
			return args[i].Kind
		}
		return ArgNone
	}
	isV := func(i int) bool { return kind(i) == ArgXMM }
	isM := func(i int) bool { return kind(i) == ArgMem }
	isVM := func(i int) bool { return isV(i) || isM(i) }
	isG := func(i int) bool {
		return kind(i) == ArgReg && (args[i].Size == 4 || args[i].Size == 8)
	}
	n := len(args)
	out.Width = 16
	out.Imm &= 0xFF
	iop := inst.Op

	// alignIf16 sets SSEAuxAlign when the instruction has a 16-byte
	// memory operand (legacy SSE requires alignment for those).
	alignIf16 := func() {
		for i := range args {
			if args[i].Kind == ArgMem && args[i].Size == 16 {
				out.Aux |= SSEAuxAlign
			}
		}
	}
	set := func(op X86Op) bool {
		out.Op = op
		return true
	}

	if op, ok := sseSimple[iop]; ok {
		if n != 2 || !isV(0) || !isVM(1) {
			return false
		}
		if isM(1) && args[1].Size == 0 {
			return false
		}
		alignIf16()
		return set(op)
	}
	if op, ok := sseImm[iop]; ok {
		if n != 3 || !isV(0) || !isVM(1) || kind(2) != ArgImm {
			return false
		}
		if isM(1) && args[1].Size == 0 {
			return false
		}
		switch op {
		case SSEPcmpestri, SSEPcmpestrm:
			if inst.DataSize == 64 {
				out.Aux |= SSEAuxW64 // REX.W: lengths in RAX/RDX
			}
		case SSEPcmpistri, SSEPcmpistrm:
			// The SSE4.2 string instructions allow unaligned memory.
		default:
			alignIf16()
		}
		return set(op)
	}
	if op, ok := sseShift[iop]; ok {
		if n != 2 || !isV(0) {
			return false
		}
		switch {
		case kind(1) == ArgImm:
		case op == SSEPslldq || op == SSEPsrldq:
			return false
		case isVM(1):
			alignIf16()
		default:
			return false
		}
		return set(op)
	}
	if m, ok := ssePmov[iop]; ok {
		if n != 2 || !isV(0) || !isVM(1) {
			return false
		}
		out.Aux = m[1] | m[2]<<4
		return set(X86Op(m[0]))
	}
	if op, ok := x87Simple[iop]; ok {
		if n != 0 {
			return false
		}
		return set(op)
	}
	if c, ok := x87Const[iop]; ok {
		if n != 0 {
			return false
		}
		out.Aux = c << 8
		return set(X87FldConst)
	}
	if a, ok := x87Arith[iop]; ok {
		out.Aux = a[0]<<X87AuxOpShift | a[1]
		switch {
		case n == 2 && kind(0) == ArgX87 && kind(1) == ArgX87:
			if a[1]&X87AuxInt != 0 || (args[0].Reg != 0 && args[1].Reg != 0) {
				return false
			}
			return set(X87ArithReg)
		case n == 1 && isM(0) && a[1]&X87AuxPop == 0:
			s := args[0].Size
			if (a[1]&X87AuxInt != 0 && s != 2 && s != 4) || (a[1]&X87AuxInt == 0 && s != 4 && s != 8) {
				return false
			}
			return set(X87ArithMem)
		}
		return false
	}
	if c, ok := x87Fcmov[iop]; ok {
		if n != 2 || kind(0) != ArgX87 || kind(1) != ArgX87 || args[0].Reg != 0 {
			return false
		}
		out.Cond = c
		return set(X87Fcmov)
	}

	switch iop {
	case x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVDQA, x86asm.MOVNTPS, x86asm.MOVNTPD, x86asm.MOVNTDQ,
		x86asm.MOVNTDQA, x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQU, x86asm.LDDQU:
		if n != 2 || !isVM(0) || !isVM(1) || (isM(0) && isM(1)) {
			return false
		}
		for i := range args {
			if isM(i) && args[i].Size != 16 {
				return false
			}
		}
		switch iop {
		case x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQU, x86asm.LDDQU:
		default:
			alignIf16()
		}
		if (iop == x86asm.LDDQU || iop == x86asm.MOVNTDQA) && !isM(1) {
			return false
		}
		if (iop == x86asm.MOVNTPS || iop == x86asm.MOVNTPD || iop == x86asm.MOVNTDQ) && !isM(0) {
			return false
		}
		return set(SSEMov128)
	case x86asm.MOVSS, x86asm.MOVSD_XMM:
		if n != 2 || !isVM(0) || !isVM(1) || (isM(0) && isM(1)) {
			return false
		}
		if iop == x86asm.MOVSS {
			return set(SSEMovSS)
		}
		return set(SSEMovSD)
	case x86asm.MOVD, x86asm.MOVQ:
		if n != 2 {
			return false
		}
		switch {
		case isV(0) && (isVM(1) || isG(1)):
			if isV(1) {
				args[1].Size = 8 // MOVQ xmm, xmm
			}
		case (isG(0) || isM(0)) && isV(1):
		default:
			return false
		}
		for i := range args {
			if (isM(i) || kind(i) == ArgReg) && args[i].Size != 4 && args[i].Size != 8 {
				return false
			}
		}
		return set(SSEMovZX)
	case x86asm.MOVLPS, x86asm.MOVLPD, x86asm.MOVHPS, x86asm.MOVHPD:
		if n != 2 || !((isV(0) && isM(1)) || (isM(0) && isV(1))) {
			return false
		}
		if iop == x86asm.MOVLPS || iop == x86asm.MOVLPD {
			return set(SSEMovLP)
		}
		return set(SSEMovHP)
	case x86asm.MOVHLPS, x86asm.MOVLHPS:
		if n != 2 || !isV(0) || !isV(1) {
			return false
		}
		if iop == x86asm.MOVHLPS {
			return set(SSEMovHLPS)
		}
		return set(SSEMovLHPS)
	case x86asm.MOVMSKPS, x86asm.MOVMSKPD, x86asm.PMOVMSKB:
		if n != 2 || !isG(0) || !isV(1) {
			return false
		}
		switch iop {
		case x86asm.MOVMSKPS:
			return set(SSEMovmskps)
		case x86asm.MOVMSKPD:
			return set(SSEMovmskpd)
		}
		return set(SSEPmovmskb)
	case x86asm.MASKMOVDQU:
		if n != 2 || !isV(0) || !isV(1) || inst.AddrSize != 64 {
			return false
		}
		return set(SSEMaskmovdqu)
	case x86asm.PEXTRB, x86asm.PEXTRW, x86asm.PEXTRD, x86asm.PEXTRQ, x86asm.EXTRACTPS:
		if n != 3 || !(isG(0) || isM(0)) || !isV(1) || kind(2) != ArgImm {
			return false
		}
		var size uint32
		switch iop {
		case x86asm.PEXTRB:
			size = 1
		case x86asm.PEXTRW:
			size = 2
		case x86asm.PEXTRQ:
			size = 8
		default:
			size = 4
		}
		if isM(0) && uint32(args[0].Size) != size {
			return false
		}
		if iop == x86asm.PEXTRQ && isG(0) && args[0].Size != 8 {
			return false
		}
		out.Aux = size
		if iop == x86asm.EXTRACTPS {
			return set(SSEExtractps)
		}
		return set(SSEPextr)
	case x86asm.PINSRB, x86asm.PINSRW, x86asm.PINSRD, x86asm.PINSRQ:
		if n != 3 || !isV(0) || !(isG(1) || isM(1)) || kind(2) != ArgImm {
			return false
		}
		var size uint32
		switch iop {
		case x86asm.PINSRB:
			size = 1
		case x86asm.PINSRW:
			size = 2
		case x86asm.PINSRD:
			size = 4
		default:
			size = 8
		}
		if isM(1) && uint32(args[1].Size) != size {
			return false
		}
		out.Aux = size
		return set(SSEPinsr)
	case x86asm.BLENDVPS, x86asm.BLENDVPD, x86asm.PBLENDVB:
		// x86asm lists the implicit XMM0 as a third operand.
		if n < 2 || n > 3 || !isV(0) || !isVM(1) || (n == 3 && !(isV(2) && args[2].Reg == 0)) {
			return false
		}
		out.NArgs = 2
		alignIf16()
		switch iop {
		case x86asm.BLENDVPS:
			return set(SSEBlendvps)
		case x86asm.BLENDVPD:
			return set(SSEBlendvpd)
		}
		return set(SSEPblendvb)
	case x86asm.CVTSI2SS, x86asm.CVTSI2SD:
		if n != 2 || !isV(0) || !(isG(1) || isM(1)) || (args[1].Size != 4 && args[1].Size != 8) {
			return false
		}
		if iop == x86asm.CVTSI2SS {
			return set(SSECvtsi2ss)
		}
		return set(SSECvtsi2sd)
	case x86asm.CVTSS2SI, x86asm.CVTSD2SI, x86asm.CVTTSS2SI, x86asm.CVTTSD2SI:
		if n != 2 || !isG(0) || !isVM(1) {
			return false
		}
		out.Width = args[0].Size
		switch iop {
		case x86asm.CVTSS2SI:
			return set(SSECvtss2si)
		case x86asm.CVTSD2SI:
			return set(SSECvtsd2si)
		case x86asm.CVTTSS2SI:
			return set(SSECvttss2si)
		}
		return set(SSECvttsd2si)
	case x86asm.LDMXCSR, x86asm.STMXCSR:
		if n != 1 || !isM(0) {
			return false
		}
		args[0].Size = 4
		if iop == x86asm.LDMXCSR {
			return set(SSELdmxcsr)
		}
		return set(SSEStmxcsr)
	case x86asm.FXSAVE, x86asm.FXSAVE64, x86asm.FXRSTOR, x86asm.FXRSTOR64:
		if n != 1 || !isM(0) {
			return false
		}
		args[0].Size = 0 // 512 bytes: does not fit the uint8 Size
		if iop == x86asm.FXSAVE64 || iop == x86asm.FXRSTOR64 {
			out.Aux |= SSEAuxW64
		}
		if iop == x86asm.FXSAVE || iop == x86asm.FXSAVE64 {
			return set(SSEFxsave)
		}
		return set(SSEFxrstor)
	case x86asm.CRC32:
		if n != 2 || !isG(0) || !(kind(1) == ArgReg || isM(1)) {
			return false
		}
		if s := args[1].Size; s != 1 && s != 2 && s != 4 && s != 8 {
			return false
		}
		out.Width = args[0].Size
		return set(SSECrc32)
	}
	return translateX87(inst, args, out)
}

// translateX87 handles the x87 instructions with operands.
func translateX87(inst *x86asm.Inst, args []X86Arg, out *X86) bool {
	n := len(args)
	iop := inst.Op
	isST := func(i int) bool { return i < n && args[i].Kind == ArgX87 }
	isM := func(i int) bool { return i < n && args[i].Kind == ArgMem }
	modrm := byte(inst.Opcode >> 16)
	esc := byte(inst.Opcode >> 24)
	set := func(op X86Op) bool {
		out.Op = op
		return true
	}
	memSize := func(want ...uint8) bool {
		for _, w := range want {
			if args[0].Size == w {
				return true
			}
		}
		return false
	}
	switch iop {
	case x86asm.FLD:
		if n == 1 && isST(0) {
			return set(X87Fld)
		}
		if n != 1 || !isM(0) {
			return false
		}
		if esc == 0xDB && (modrm>>3)&7 == 5 {
			args[0].Size = 10
		}
		if !memSize(4, 8, 10) {
			return false
		}
		return set(X87FldM)
	case x86asm.FST, x86asm.FSTP:
		if iop == x86asm.FSTP {
			out.Aux |= X87AuxPop
		}
		if n == 1 && isST(0) {
			return set(X87Fst)
		}
		if n != 1 || !isM(0) {
			return false
		}
		if esc == 0xDB && (modrm>>3)&7 == 7 {
			args[0].Size = 10
		}
		if !memSize(4, 8, 10) || (args[0].Size == 10 && iop != x86asm.FSTP) {
			return false
		}
		return set(X87FstM)
	case x86asm.FILD:
		if n != 1 || !isM(0) || !memSize(2, 4, 8) {
			return false
		}
		return set(X87Fild)
	case x86asm.FIST, x86asm.FISTP:
		if n != 1 || !isM(0) || !memSize(2, 4, 8) {
			return false
		}
		if iop == x86asm.FISTP {
			out.Aux |= X87AuxPop
		} else if args[0].Size == 8 {
			return false
		}
		return set(X87Fist)
	case x86asm.FISTTP:
		if n != 1 || !isM(0) || !memSize(2, 4, 8) {
			return false
		}
		out.Aux |= X87AuxPop
		return set(X87Fisttp)
	case x86asm.FBLD, x86asm.FBSTP:
		if n != 1 || !isM(0) {
			return false
		}
		args[0].Size = 10
		if iop == x86asm.FBLD {
			return set(X87Fbld)
		}
		out.Aux |= X87AuxPop
		return set(X87Fbstp)
	case x86asm.FCOM, x86asm.FCOMP, x86asm.FUCOM, x86asm.FUCOMP, x86asm.FICOM, x86asm.FICOMP,
		x86asm.FCOMPP, x86asm.FUCOMPP:
		switch iop {
		case x86asm.FCOMP, x86asm.FUCOMP, x86asm.FICOMP:
			out.Aux |= X87AuxPop
		case x86asm.FCOMPP, x86asm.FUCOMPP:
			out.Aux |= X87AuxPop2
		}
		if iop == x86asm.FUCOM || iop == x86asm.FUCOMP || iop == x86asm.FUCOMPP {
			out.Aux |= X87AuxUnordered
		}
		if iop == x86asm.FICOM || iop == x86asm.FICOMP {
			out.Aux |= X87AuxInt
			if n != 1 || !isM(0) || !memSize(2, 4) {
				return false
			}
			return set(X87Fcom)
		}
		switch {
		case n == 0 && (iop == x86asm.FCOMPP || iop == x86asm.FUCOMPP):
			// ST(1) implied.
			out.Args[0] = X86Arg{Kind: ArgX87, Reg: 1, Size: 10, Index: NoReg}
			out.NArgs = 1
		case n == 1 && isST(0):
		case n == 2 && isST(0) && isST(1) && args[0].Reg == 0:
			out.Args[0] = args[1]
			out.NArgs = 1
		case n == 1 && isM(0) && memSize(4, 8) && iop != x86asm.FUCOM && iop != x86asm.FUCOMP:
		default:
			return false
		}
		return set(X87Fcom)
	case x86asm.FCOMI, x86asm.FCOMIP, x86asm.FUCOMI, x86asm.FUCOMIP:
		if n != 2 || !isST(0) || !isST(1) || args[0].Reg != 0 {
			return false
		}
		if iop == x86asm.FCOMIP || iop == x86asm.FUCOMIP {
			out.Aux |= X87AuxPop
		}
		if iop == x86asm.FUCOMI || iop == x86asm.FUCOMIP {
			out.Aux |= X87AuxUnordered
		}
		return set(X87Fcomi)
	case x86asm.FXCH:
		switch {
		case n == 1 && isST(0):
		case n == 2 && isST(0) && isST(1) && args[0].Reg == 0:
			out.Args[0] = args[1]
			out.NArgs = 1
		case n == 0:
			out.Args[0] = X86Arg{Kind: ArgX87, Reg: 1, Size: 10, Index: NoReg}
			out.NArgs = 1
		default:
			return false
		}
		return set(X87Fxch)
	case x86asm.FNSTCW, x86asm.FLDCW:
		if n != 1 || !isM(0) {
			return false
		}
		args[0].Size = 2
		if iop == x86asm.FNSTCW {
			return set(X87Fnstcw)
		}
		return set(X87Fldcw)
	case x86asm.FNSTSW:
		if n != 1 || !(isM(0) || (args[0].Kind == ArgReg && args[0].Reg == 0 && args[0].Size == 2)) {
			return false
		}
		args[0].Size = 2
		return set(X87Fnstsw)
	case x86asm.FFREE, x86asm.FFREEP:
		if n != 1 || !isST(0) {
			return false
		}
		if iop == x86asm.FFREEP {
			out.Aux |= X87AuxPop
		}
		return set(X87Ffree)
	case x86asm.FNSTENV, x86asm.FLDENV, x86asm.FNSAVE, x86asm.FRSTOR:
		if n != 1 || !isM(0) || inst.DataSize == 16 {
			return false
		}
		switch iop {
		case x86asm.FNSTENV:
			args[0].Size = 28
			return set(X87Fnstenv)
		case x86asm.FLDENV:
			args[0].Size = 28
			return set(X87Fldenv)
		case x86asm.FNSAVE:
			args[0].Size = 108
			return set(X87Fnsave)
		}
		args[0].Size = 108
		return set(X87Frstor)
	}
	return false
}
