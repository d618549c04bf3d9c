package decode

import "golang.org/x/arch/x86/x86asm"

// MMX and the SSE-on-MMX forms (0F xx without a 66 prefix, x86asm names
// their registers M0..M7). The integer ops reuse the SSE op numbers in
// Aux: the executor computes them on 64-bit vectors with the SSE lane
// code.

// MMXAuxTrunc marks the truncating conversions (CVTTPS2PI, CVTTPD2PI).
const MMXAuxTrunc = 1 << 7

// mmxIntOps are the SSE integer ops that have an MMX form (MMX, SSE's
// integer additions, SSE2's PADDQ/PSUBQ/PMULUDQ, SSSE3).
var mmxIntOps = map[X86Op]bool{
	SSEPaddb: true, SSEPaddw: true, SSEPaddd: true, SSEPaddq: true,
	SSEPsubb: true, SSEPsubw: true, SSEPsubd: true, SSEPsubq: true,
	SSEPaddsb: true, SSEPaddsw: true, SSEPaddusb: true, SSEPaddusw: true,
	SSEPsubsb: true, SSEPsubsw: true, SSEPsubusb: true, SSEPsubusw: true,
	SSEPmullw: true, SSEPmulhw: true, SSEPmulhuw: true, SSEPmuludq: true, SSEPmaddwd: true,
	SSEPavgb: true, SSEPavgw: true, SSEPmaxub: true, SSEPmaxsw: true, SSEPminub: true, SSEPminsw: true,
	SSEPsadbw: true, SSEPcmpeqb: true, SSEPcmpeqw: true, SSEPcmpeqd: true,
	SSEPcmpgtb: true, SSEPcmpgtw: true, SSEPcmpgtd: true,
	SSEPand: true, SSEPandn: true, SSEPor: true, SSEPxor: true,
	SSEPunpcklbw: true, SSEPunpcklwd: true, SSEPunpckldq: true,
	SSEPunpckhbw: true, SSEPunpckhwd: true, SSEPunpckhdq: true,
	SSEPacksswb: true, SSEPackssdw: true, SSEPackuswb: true,
	SSEPshufb: true, SSEPhaddw: true, SSEPhaddd: true, SSEPhaddsw: true,
	SSEPhsubw: true, SSEPhsubd: true, SSEPhsubsw: true, SSEPmaddubsw: true, SSEPmulhrsw: true,
	SSEPsignb: true, SSEPsignw: true, SSEPsignd: true, SSEPabsb: true, SSEPabsw: true, SSEPabsd: true,
	SSEPalignr: true,
}

// translateX86MMX fills out for the MMX instructions and the conversions
// between MMX and XMM registers. It returns false for everything else.
func translateX86MMX(inst *x86asm.Inst, out *X86) bool {
	if p := inst.Prefix[0]; p.IsVEX() || p.IsEVEX() {
		return false
	}
	args := out.Args[:out.NArgs]
	n := len(args)
	kind := func(i int) X86ArgKind {
		if i < n {
			return args[i].Kind
		}
		return ArgNone
	}
	isMM := func(i int) bool { return kind(i) == ArgMMX }
	isM := func(i int) bool { return kind(i) == ArgMem }
	isV := func(i int) bool { return kind(i) == ArgXMM }
	isG := func(i int) bool { return kind(i) == ArgReg && (args[i].Size == 4 || args[i].Size == 8) }
	size := func(i int, s uint8) bool { return !isM(i) || args[i].Size == s }
	hasMM := false
	for i := range args {
		hasMM = hasMM || isMM(i)
	}
	iop := inst.Op
	set := func(op X86Op) bool {
		out.Op = op
		out.Width = 8
		out.Imm &= 0xFF
		return true
	}
	switch iop {
	case x86asm.CVTPI2PS, x86asm.CVTPI2PD:
		if n != 2 || !isV(0) || !(isMM(1) || isM(1)) || !size(1, 8) {
			return false
		}
		if iop == x86asm.CVTPI2PS {
			return set(MMXCvtpi2ps)
		}
		return set(MMXCvtpi2pd)
	case x86asm.CVTPS2PI, x86asm.CVTTPS2PI, x86asm.CVTPD2PI, x86asm.CVTTPD2PI:
		if n != 2 || !isMM(0) || !(isV(1) || isM(1)) {
			return false
		}
		out.Aux = 0
		if iop == x86asm.CVTTPS2PI || iop == x86asm.CVTTPD2PI {
			out.Aux = MMXAuxTrunc
		}
		if iop == x86asm.CVTPS2PI || iop == x86asm.CVTTPS2PI {
			return size(1, 8) && set(MMXCvtps2pi)
		}
		if !size(1, 16) {
			return false
		}
		if isM(1) {
			out.Aux |= SSEAuxAlign // a legacy SSE2 m128 operand
		}
		return set(MMXCvtpd2pi)
	}
	if !hasMM {
		return false
	}
	if op, ok := sseSimple[iop]; ok && mmxIntOps[op] {
		low := op == SSEPunpcklbw || op == SSEPunpcklwd || op == SSEPunpckldq // m32 source
		if n != 2 || !isMM(0) || !(isMM(1) || isM(1)) || !(size(1, 8) || low && size(1, 4)) {
			return false
		}
		out.Aux = uint32(op)
		return set(MMXInt)
	}
	if op, ok := sseImm[iop]; ok && mmxIntOps[op] { // PALIGNR
		if n != 3 || !isMM(0) || !(isMM(1) || isM(1)) || !size(1, 8) || kind(2) != ArgImm {
			return false
		}
		out.Aux = uint32(op)
		return set(MMXInt)
	}
	if op, ok := sseShift[iop]; ok && op != SSEPslldq && op != SSEPsrldq {
		if n != 2 || !isMM(0) || !(kind(1) == ArgImm || isMM(1) || isM(1)) || !size(1, 8) {
			return false
		}
		out.Aux = uint32(op)
		return set(MMXShift)
	}
	switch iop {
	case x86asm.MOVD, x86asm.MOVQ, x86asm.MOVNTQ:
		if n != 2 {
			return false
		}
		switch {
		case isMM(0) && (isMM(1) || isM(1) || isG(1)):
			if iop == x86asm.MOVNTQ {
				return false
			}
			if isMM(1) {
				args[1].Size = 8
			}
			if (isM(1) || isG(1)) && args[1].Size != 4 && args[1].Size != 8 {
				return false
			}
			return set(MMXMovIn)
		case (isM(0) || isG(0)) && isMM(1):
			if args[0].Size != 4 && args[0].Size != 8 || (iop == x86asm.MOVNTQ && !isM(0)) {
				return false
			}
			return set(MMXMovOut)
		}
		return false
	case x86asm.PSHUFW:
		if n != 3 || !isMM(0) || !(isMM(1) || isM(1)) || !size(1, 8) || kind(2) != ArgImm {
			return false
		}
		return set(MMXPshufw)
	case x86asm.PEXTRW:
		if n != 3 || !isG(0) || !isMM(1) || kind(2) != ArgImm {
			return false
		}
		return set(MMXPextrw)
	case x86asm.PINSRW:
		if n != 3 || !isMM(0) || !(isG(1) || isM(1)) || kind(2) != ArgImm {
			return false
		}
		if isM(1) {
			args[1].Size = 2
		} else {
			args[1].Size = 4
		}
		return set(MMXPinsrw)
	case x86asm.PMOVMSKB:
		if n != 2 || !isG(0) || !isMM(1) {
			return false
		}
		return set(MMXPmovmskb)
	case x86asm.MASKMOVQ:
		if n != 2 || !isMM(0) || !isMM(1) || inst.AddrSize != 64 {
			return false
		}
		return set(MMXMaskmovq)
	case x86asm.MOVQ2DQ:
		if n != 2 || !isV(0) || !isMM(1) {
			return false
		}
		return set(MMXMovq2dq)
	case x86asm.MOVDQ2Q:
		if n != 2 || !isMM(0) || !isV(1) {
			return false
		}
		return set(MMXMovdq2q)
	}
	return false
}
