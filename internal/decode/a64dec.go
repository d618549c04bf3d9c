package decode

import "math/bits"

// DecodeA64 decodes one A64 instruction word. It never fails: encodings
// uvm does not implement come back as A64Undefined with a reason in Imm
// (see A64UndefinedWhy). The first-level dispatch is on bits 28:25 (op0 in
// the Arm ARM's "Top-level encodings for A64").
func DecodeA64(raw uint32) A64 {
	in := A64{Raw: raw}
	switch (raw >> 25) & 0xf {
	case 0x8, 0x9: // 100x: data processing, immediate
		decodeDPImm(raw, &in)
	case 0xa, 0xb: // 101x: branches, exception generation, system
		decodeBranchSys(raw, &in)
	case 0x4, 0x6, 0xc, 0xe: // x1x0: loads and stores
		decodeLdSt(raw, &in)
	case 0x5, 0xd: // x101: data processing, register
		decodeDPReg(raw, &in)
	case 0x7, 0xf: // x111: scalar FP and Advanced SIMD
		if !decodeA64SIMD(raw, &in) {
			in = A64{Raw: raw, Imm: A64WhySIMD}
		}
	case 0x2: // 0010: SVE
		undef(&in, A64WhySVE)
	default: // 0000 (UDF, SME), 0001, 0011
		undef(&in, A64WhyUnallocated)
	}
	in.Class = a64ClassOf(&in)
	return in
}

func undef(in *A64, why uint64) {
	*in = A64{Raw: in.Raw, Imm: why}
}

// rd resolves a register number that is read with 31 = ZR.
func rZR(n uint32) uint8 {
	if n == 31 {
		return A64RegZR
	}
	return uint8(n)
}

// wZR resolves a register number that is written with 31 = ZR.
func wZR(n uint32) uint8 {
	if n == 31 {
		return A64RegDiscard
	}
	return uint8(n)
}

// sext sign-extends the low n bits of v.
func sext(v uint32, n uint) uint64 {
	return uint64(int64(int32(v<<(32-n)) >> (32 - n)))
}

// regMask is the all-ones value of the operation size.
func regMask(sf uint8) uint64 {
	if sf != 0 {
		return ^uint64(0)
	}
	return 0xffffffff
}

// decodeBitMasks is the Arm ARM's DecodeBitMasks. Masks are replicated to
// 64 bits and cut to 32 bits for 32-bit operations.
func decodeBitMasks(n, imms, immr uint32, immediate bool, sf uint8) (wmask, tmask uint64, ok bool) {
	v := n<<6 | (^imms & 0x3f)
	if v == 0 {
		return 0, 0, false
	}
	length := uint(bits.Len32(v) - 1)
	if length < 1 {
		return 0, 0, false
	}
	levels := uint32(1)<<length - 1
	if immediate && imms&levels == levels {
		return 0, 0, false
	}
	s := imms & levels
	r := immr & levels
	d := (s - r) & levels
	esize := uint(1) << length
	welem := uint64(1)<<(s+1) - 1
	telem := uint64(1)<<(d+1) - 1
	emask := uint64(1)<<esize - 1
	if r != 0 {
		welem = (welem>>r | welem<<(esize-uint(r))) & emask
	}
	for e := esize; e < 64; e *= 2 {
		welem |= welem << e
		telem |= telem << e
	}
	if sf == 0 {
		welem &= 0xffffffff
		telem &= 0xffffffff
	}
	return welem, telem, true
}

// shiftType maps an encoded shift type to the Shift field value.
func shiftType(t uint32, sf uint8) uint8 {
	if sf == 0 && t >= 1 {
		return uint8(t) + 4
	}
	return uint8(t)
}

func decodeDPImm(raw uint32, in *A64) {
	sf := uint8(raw >> 31)
	rd := raw & 31
	rn := (raw >> 5) & 31
	in.Sf = sf
	switch (raw >> 23) & 7 {
	case 0, 1: // PC-relative addressing
		imm := sext((raw>>5&0x7ffff)<<2|raw>>29&3, 21)
		in.Rd = wZR(rd)
		in.Sf = 1
		if raw>>31 == 0 {
			in.Op = A64ADR
			in.Imm = imm
		} else {
			in.Op = A64ADRP
			in.Imm = imm << 12
		}
	case 2: // add/subtract (immediate)
		imm := uint64(raw >> 10 & 0xfff)
		if raw>>22&1 != 0 {
			imm <<= 12
		}
		sub := raw>>30&1 != 0
		in.Rn = uint8(rn)
		if raw>>29&1 == 0 {
			in.Op = A64ADDI
			in.Rd = uint8(rd)
			in.Imm = imm
			if sub {
				in.Imm = -imm
			}
			return
		}
		in.Rd = wZR(rd)
		in.Imm = imm
		in.Op = A64ADDSI
		if sub {
			in.Op = A64SUBSI
		}
	case 3: // add/subtract (immediate, with tags): MTE
		if sf == 1 {
			undef(in, A64WhyMTE)
		} else {
			undef(in, A64WhyUnallocated)
		}
	case 4: // logical (immediate)
		n := raw >> 22 & 1
		if sf == 0 && n == 1 {
			undef(in, A64WhyUnallocated)
			return
		}
		wmask, _, ok := decodeBitMasks(n, raw>>10&0x3f, raw>>16&0x3f, true, sf)
		if !ok {
			undef(in, A64WhyUnallocated)
			return
		}
		in.Imm = wmask
		in.Rn = rZR(rn)
		in.Rd = uint8(rd)
		switch raw >> 29 & 3 {
		case 0:
			in.Op = A64ANDI
		case 1:
			in.Op = A64ORRI
			if rn == 31 {
				in.Op = A64MOVI
			}
		case 2:
			in.Op = A64EORI
		case 3:
			in.Op = A64ANDSI
			in.Rd = wZR(rd)
		}
	case 5: // move wide (immediate)
		opc := raw >> 29 & 3
		hw := raw >> 21 & 3
		if opc == 1 || (sf == 0 && hw >= 2) {
			undef(in, A64WhyUnallocated)
			return
		}
		v := uint64(raw>>5&0xffff) << (16 * hw)
		in.Rd = wZR(rd)
		switch opc {
		case 0: // MOVN
			in.Op = A64MOVI
			in.Imm = ^v & regMask(sf)
		case 2: // MOVZ
			in.Op = A64MOVI
			in.Imm = v
		case 3: // MOVK
			in.Op = A64MOVK
			in.Imm = v
			in.Imm2 = ^(uint64(0xffff) << (16 * hw)) & regMask(sf)
		}
	case 6: // bitfield
		opc := raw >> 29 & 3
		n := raw >> 22 & 1
		immr := raw >> 16 & 0x3f
		imms := raw >> 10 & 0x3f
		if opc == 3 || n != uint32(sf) || (sf == 0 && (immr|imms)&0x20 != 0) {
			undef(in, A64WhyUnallocated)
			return
		}
		wmask, tmask, ok := decodeBitMasks(n, imms, immr, false, sf)
		if !ok {
			undef(in, A64WhyUnallocated)
			return
		}
		top := uint32(31)
		if sf == 1 {
			top = 63
		}
		in.Rn = rZR(rn)
		in.Rd = wZR(rd)
		in.Amount = uint8(immr)
		switch opc {
		case 0: // SBFM
			switch {
			case imms == top:
				in.Op = A64ASRI
			case immr == 0 && (imms == 7 || imms == 15 || imms == 31):
				in.Op = A64SXTW
				in.Amount = uint8(imms + 1)
			default:
				in.Op = A64SBFM
				in.Cond = uint8(imms)
				in.Imm = wmask
				in.Imm2 = tmask
			}
		case 1: // BFM
			in.Op = A64BFM
			in.Rm = rZR(rd)
			in.Imm = wmask
			in.Imm2 = tmask
		case 2: // UBFM
			switch {
			case imms == top:
				in.Op = A64LSRI
			case imms+1 == immr:
				in.Op = A64LSLI
				in.Amount = uint8(top - imms)
			default:
				in.Op = A64UBFM
				in.Imm = wmask & tmask
			}
		}
	case 7: // extract
		imms := raw >> 10 & 0x3f
		if raw>>29&3 != 0 || raw>>21&1 != 0 || raw>>22&1 != uint32(sf) || (sf == 0 && imms >= 32) {
			undef(in, A64WhyUnallocated)
			return
		}
		in.Op = A64EXTR
		in.Rd = wZR(rd)
		in.Rn = rZR(rn)
		in.Rm = rZR(raw >> 16 & 31)
		in.Amount = uint8(imms)
	}
}

// sysKey packs op0<0>, op1, CRn, CRm, op2 as in bits 19:5 of MRS/MSR.
func sysKey(op0, op1, crn, crm, op2 uint32) uint32 {
	return (op0&1)<<14 | op1<<11 | crn<<7 | crm<<3 | op2
}

var (
	keyNZCV    = sysKey(3, 3, 4, 2, 0)
	keyFPCR    = sysKey(3, 3, 4, 4, 0)
	keyFPSR    = sysKey(3, 3, 4, 4, 1)
	keyTPIDR   = sysKey(3, 3, 13, 0, 2)
	keyTPIDRRO = sysKey(3, 3, 13, 0, 3)
	keyCTR     = sysKey(3, 3, 0, 0, 1)
	keyDCZID   = sysKey(3, 3, 0, 0, 7)
	keyCNTVCT  = sysKey(3, 3, 14, 0, 2)
	keyCNTFRQ  = sysKey(3, 3, 14, 0, 0)
)

func decodeBranchSys(raw uint32, in *A64) {
	switch {
	case raw&0x7c000000 == 0x14000000: // B, BL
		in.Imm = sext(raw&0x3ffffff, 26) << 2
		in.Op = A64B
		if raw>>31 != 0 {
			in.Op = A64BL
		}
	case raw&0x7e000000 == 0x34000000: // CBZ, CBNZ
		in.Sf = uint8(raw >> 31)
		in.Rd = rZR(raw & 31)
		in.Imm = sext(raw>>5&0x7ffff, 19) << 2
		in.Op = A64CBZ
		if raw>>24&1 != 0 {
			in.Op = A64CBNZ
		}
	case raw&0x7e000000 == 0x36000000: // TBZ, TBNZ
		in.Rd = rZR(raw & 31)
		in.Amount = uint8(raw>>31<<5 | raw>>19&31)
		in.Sf = uint8(raw >> 31)
		in.Imm = sext(raw>>5&0x3fff, 14) << 2
		in.Op = A64TBZ
		if raw>>24&1 != 0 {
			in.Op = A64TBNZ
		}
	case raw&0xff000010 == 0x54000000: // B.cond
		in.Op = A64BCOND
		in.Cond = uint8(raw & 15)
		in.Imm = sext(raw>>5&0x7ffff, 19) << 2
	case raw&0xff000000 == 0xd4000000: // exception generation
		decodeException(raw, in)
	case raw&0xffc00000 == 0xd5000000: // system
		decodeSystem(raw, in)
	case raw&0xfe000000 == 0xd6000000: // unconditional branch (register)
		decodeBranchReg(raw, in)
	default:
		undef(in, A64WhyUnallocated)
	}
}

func decodeException(raw uint32, in *A64) {
	opc := raw >> 21 & 7
	op2 := raw >> 2 & 7
	ll := raw & 3
	imm := uint64(raw >> 5 & 0xffff)
	if op2 != 0 {
		undef(in, A64WhyUnallocated)
		return
	}
	switch {
	case opc == 0 && ll == 1:
		in.Op = A64SVC
		in.Imm = imm
	case opc == 0 && ll != 0: // HVC, SMC
		undef(in, A64WhyPriv)
	case opc == 1 && ll == 0:
		in.Op = A64BRK
		in.Imm = imm
	case opc == 2 && ll == 0: // HLT: undefined unless halting debug is enabled
		undef(in, A64WhyPriv)
	case opc == 3 && ll == 0: // TSTART/TCANCEL (TME)
		undef(in, A64WhyFeature)
	case opc == 5 && ll != 0: // DCPS1-3
		undef(in, A64WhyPriv)
	default:
		undef(in, A64WhyUnallocated)
	}
}

func decodeSystem(raw uint32, in *A64) {
	l := raw >> 21 & 1
	op0 := raw >> 19 & 3
	op1 := raw >> 16 & 7
	crn := raw >> 12 & 15
	crm := raw >> 8 & 15
	op2 := raw >> 5 & 7
	rt := raw & 31
	switch {
	case op0 == 0 && l == 0:
		switch {
		case crn == 2 && op1 == 3 && rt == 31: // hints: NOP, YIELD, WFE, WFI, BTI, PACIASP, …
			in.Op = A64NOP
		case crn == 3 && op1 == 3 && rt == 31: // barriers
			switch op2 {
			case 2:
				in.Op = A64CLREX
			case 4:
				in.Op = A64DMB // DSB (incl. SSBB, PSSBB)
			case 5:
				in.Op = A64DMB
			case 6:
				in.Op = A64ISB
			case 1, 3, 7: // DSB nXS, TCOMMIT, SB
				undef(in, A64WhyFeature)
			default:
				undef(in, A64WhyUnallocated)
			}
		case crn == 4 && rt == 31 && op1 == 0 && crm == 0 && op2 <= 2: // CFINV, XAFLAG, AXFLAG
			in.Op = A64FLAGM
			in.Imm = uint64(op2) // A64FlagCFINV, A64FlagXAFLAG, A64FlagAXFLAG
		case crn == 4 && rt == 31: // MSR (immediate) to PSTATE
			if op1 == 3 || op1 == 0 {
				undef(in, A64WhyFeature)
			} else {
				undef(in, A64WhyPriv)
			}
		case crn == 1 && op1 == 3: // WFET, WFIT
			undef(in, A64WhyFeature)
		default:
			undef(in, A64WhyUnallocated)
		}
	case op0 == 1: // SYS, SYSL
		if l == 1 {
			undef(in, A64WhyPriv)
			return
		}
		in.Rd = rZR(rt)
		switch {
		case op1 == 3 && crn == 7 && crm == 4 && op2 == 1:
			in.Op = A64DCZVA
		case op1 == 3 && crn == 7 && (crm == 11 || crm == 10 || crm == 14) && op2 == 1: // DC CVAU, CVAC, CIVAC
			in.Op = A64DCCVA
		case op1 == 3 && crn == 7 && crm == 5 && op2 == 1:
			in.Op = A64ICIVAU
		case op1 == 3 && crn == 7 && crm == 4 && (op2 == 3 || op2 == 4): // DC GVA, GZVA
			undef(in, A64WhyMTE)
		case op1 == 3:
			undef(in, A64WhyFeature) // DC CVAP/CVADP, CFP/DVP/CPP RCTX, …
		default:
			undef(in, A64WhyPriv) // IC IALLU(IS), DC IVAC/ISW/…, TLBI, AT
		}
	case op0 >= 2: // MRS, MSR (register)
		key := raw >> 5 & 0x7fff
		var id uint64
		ro := false
		switch key {
		case keyNZCV:
			id = A64SysNZCV
		case keyFPCR:
			id = A64SysFPCR
		case keyFPSR:
			id = A64SysFPSR
		case keyTPIDR:
			id = A64SysTPIDR
		case keyTPIDRRO:
			id, ro = A64SysTPIDRRO, true
		case keyCTR:
			id, ro = A64SysCTR, true
		case keyDCZID:
			id, ro = A64SysDCZID, true
		case keyCNTVCT:
			id, ro = A64SysCNTVCT, true
		case keyCNTFRQ:
			id, ro = A64SysCNTFRQ, true
		default:
			if !a64IsEmulatedID(op0, op1, crn, crm, op2) {
				undef(in, A64WhySysReg)
				return
			}
			id, ro = A64SysID+uint64(crm<<3|op2), true
		}
		in.Imm = id
		if l == 1 {
			in.Op = A64MRS
			in.Rd = wZR(rt)
		} else {
			if ro {
				undef(in, A64WhyPriv)
				return
			}
			in.Op = A64MSR
			in.Rd = rZR(rt)
		}
	default:
		undef(in, A64WhyUnallocated)
	}
}

// a64IsEmulatedID reports whether MRS of the system register is one Linux
// emulates at EL0 (arch/arm64/kernel/cpufeature.c: is_emulated and
// emulate_id_reg): op0=3, op1=0, CRn=0 with CRm 2..7, or CRm 0 for
// MIDR_EL1 (op2 0), MPIDR_EL1 (5) and REVIDR_EL1 (6).
func a64IsEmulatedID(op0, op1, crn, crm, op2 uint32) bool {
	if op0 != 3 || op1 != 0 || crn != 0 {
		return false
	}
	return crm >= 2 && crm <= 7 || crm == 0 && (op2 == 0 || op2 == 5 || op2 == 6)
}

func decodeBranchReg(raw uint32, in *A64) {
	opc := raw >> 21 & 15
	op2 := raw >> 16 & 31
	op3 := raw >> 10 & 63
	op4 := raw & 31
	rn := raw >> 5 & 31
	if op2 != 31 {
		undef(in, A64WhyUnallocated)
		return
	}
	if op3 == 0 && op4 == 0 {
		in.Rn = rZR(rn)
		switch opc {
		case 0:
			in.Op = A64BR
			return
		case 1:
			in.Op = A64BLR
			return
		case 2:
			in.Op = A64RET
			return
		}
	}
	switch {
	case opc == 4 || opc == 5: // ERET, DRPS
		undef(in, A64WhyPriv)
	case (opc <= 2 || opc == 8 || opc == 9) && (op3 == 2 || op3 == 3): // BRAA, BLRAA, RETAA, …
		undef(in, A64WhyPAC)
	default:
		undef(in, A64WhyUnallocated)
	}
}

func decodeDPReg(raw uint32, in *A64) {
	sf := uint8(raw >> 31)
	op0 := raw >> 30 & 1
	op1 := raw >> 28 & 1
	op2 := raw >> 21 & 15
	op3 := raw >> 10 & 63
	rd := raw & 31
	rn := raw >> 5 & 31
	rm := raw >> 16 & 31
	in.Sf = sf
	if op1 == 0 {
		imm6 := raw >> 10 & 63
		switch {
		case op2&8 == 0: // logical (shifted register)
			if sf == 0 && imm6 >= 32 {
				undef(in, A64WhyUnallocated)
				return
			}
			in.Rd = wZR(rd)
			in.Rn = rZR(rn)
			in.Rm = rZR(rm)
			in.Shift = shiftType(raw>>22&3, sf)
			in.Amount = uint8(imm6)
			in.Flags = uint8(raw >> 21 & 1) // A64FlagInvert
			switch raw >> 29 & 3 {
			case 0:
				in.Op = A64ANDR
			case 1:
				in.Op = A64ORRR
				if rn == 31 && in.Flags == 0 && imm6 == 0 && raw>>22&3 == 0 {
					in.Op = A64MOVR
				}
			case 2:
				in.Op = A64EORR
			case 3:
				in.Op = A64ANDSR
			}
		case op2&1 == 0: // add/subtract (shifted register)
			if raw>>22&3 == 3 || (sf == 0 && imm6 >= 32) {
				undef(in, A64WhyUnallocated)
				return
			}
			in.Rd = wZR(rd)
			in.Rn = rZR(rn)
			in.Rm = rZR(rm)
			in.Shift = shiftType(raw>>22&3, sf)
			in.Amount = uint8(imm6)
			in.Op = [4]A64Op{A64ADDR, A64ADDSR, A64SUBR, A64SUBSR}[raw>>29&3]
		default: // add/subtract (extended register)
			imm3 := raw >> 10 & 7
			if raw>>22&3 != 0 || imm3 > 4 {
				undef(in, A64WhyUnallocated)
				return
			}
			in.Rn = uint8(rn)
			in.Rm = rZR(rm)
			in.Shift = uint8(raw >> 13 & 7)
			in.Amount = uint8(imm3)
			if raw>>29&1 != 0 {
				in.Rd = wZR(rd)
			} else {
				in.Rd = uint8(rd)
			}
			in.Op = [4]A64Op{A64ADDX, A64ADDSX, A64SUBX, A64SUBSX}[raw>>29&3]
		}
		return
	}
	s := raw >> 29 & 1
	switch {
	case op2 == 0: // add/subtract with carry, RMIF, SETF
		switch {
		case op3 == 0:
			in.Rd = wZR(rd)
			in.Rn = rZR(rn)
			in.Rm = rZR(rm)
			in.Op = [4]A64Op{A64ADC, A64ADCS, A64SBC, A64SBCS}[raw>>29&3]
		case op3&0x1f == 1 || op3&0xf == 2:
			decodeFlagMReg(raw, in) // RMIF, SETF8, SETF16
		default:
			undef(in, A64WhyUnallocated)
		}
	case op2 == 2: // conditional compare
		if s == 0 || raw>>10&1 != 0 || raw>>4&1 != 0 {
			undef(in, A64WhyUnallocated)
			return
		}
		in.Rn = rZR(rn)
		in.Cond = uint8(raw >> 12 & 15)
		in.Amount = uint8(raw & 15)
		if raw>>11&1 != 0 {
			in.Flags = A64FlagImm
			in.Imm = uint64(rm)
		} else {
			in.Rm = rZR(rm)
		}
		in.Op = A64CCMN
		if op0 != 0 {
			in.Op = A64CCMP
		}
	case op2 == 4: // conditional select
		o2 := raw >> 10 & 3
		if s != 0 || o2 >= 2 {
			undef(in, A64WhyUnallocated)
			return
		}
		in.Rd = wZR(rd)
		in.Rn = rZR(rn)
		in.Rm = rZR(rm)
		in.Cond = uint8(raw >> 12 & 15)
		in.Op = [4]A64Op{A64CSEL, A64CSINC, A64CSINV, A64CSNEG}[op0<<1|o2]
	case op2 == 6 && op0 == 0: // data processing (2 source)
		decodeDP2(raw, in, sf, s, rd, rn, rm)
	case op2 == 6: // data processing (1 source)
		decodeDP1(raw, in, sf, s, rd, rn)
	case op2&8 != 0: // data processing (3 source)
		decodeDP3(raw, in, sf, rd, rn, rm)
	default:
		undef(in, A64WhyUnallocated)
	}
}

func decodeDP2(raw uint32, in *A64, sf uint8, s, rd, rn, rm uint32) {
	opcode := raw >> 10 & 63
	if s != 0 {
		if sf == 1 && opcode == 0 { // SUBPS
			undef(in, A64WhyMTE)
		} else {
			undef(in, A64WhyUnallocated)
		}
		return
	}
	in.Rd = wZR(rd)
	in.Rn = rZR(rn)
	in.Rm = rZR(rm)
	switch opcode {
	case 2:
		in.Op = A64UDIV
	case 3:
		in.Op = A64SDIV
	case 8:
		in.Op = A64LSLV
	case 9:
		in.Op = A64LSRV
	case 10:
		in.Op = A64ASRV
	case 11:
		in.Op = A64RORV
	case 16, 17, 18, 19, 20, 21, 22, 23: // CRC32[C]B/H/W/X
		sz := opcode & 3
		if (sz == 3) != (sf == 1) {
			undef(in, A64WhyUnallocated)
			return
		}
		in.Op = A64CRC32
		in.Size = uint8(sz)
		in.Flags = uint8(opcode >> 2 & 1)
	case 0, 4, 5, 6: // SUBP, IRG, GMI (MTE)
		if sf == 1 {
			undef(in, A64WhyMTE)
		} else {
			undef(in, A64WhyUnallocated)
		}
	case 12: // PACGA
		if sf == 1 {
			undef(in, A64WhyPAC)
		} else {
			undef(in, A64WhyUnallocated)
		}
	case 24, 25, 26, 27: // SMAX, UMAX, SMIN, UMIN (FEAT_CSSC)
		undef(in, A64WhyFeature)
	default:
		undef(in, A64WhyUnallocated)
	}
}

func decodeDP1(raw uint32, in *A64, sf uint8, s, rd, rn uint32) {
	opcode2 := raw >> 16 & 31
	opcode := raw >> 10 & 63
	if s != 0 {
		undef(in, A64WhyUnallocated)
		return
	}
	if opcode2 == 1 {
		if sf == 1 {
			undef(in, A64WhyPAC)
		} else {
			undef(in, A64WhyUnallocated)
		}
		return
	}
	if opcode2 != 0 {
		undef(in, A64WhyUnallocated)
		return
	}
	in.Rd = wZR(rd)
	in.Rn = rZR(rn)
	switch opcode {
	case 0:
		in.Op = A64RBIT
	case 1:
		in.Op = A64REV16
	case 2:
		if sf == 1 {
			in.Op = A64REV32
		} else {
			in.Op = A64REV
		}
	case 3:
		if sf == 0 {
			undef(in, A64WhyUnallocated)
			return
		}
		in.Op = A64REV
	case 4:
		in.Op = A64CLZ
	case 5:
		in.Op = A64CLS
	case 6, 7, 8: // CTZ, CNT, ABS (FEAT_CSSC)
		undef(in, A64WhyFeature)
	default:
		undef(in, A64WhyUnallocated)
	}
}

func decodeDP3(raw uint32, in *A64, sf uint8, rd, rn, rm uint32) {
	op54 := raw >> 29 & 3
	op31 := raw >> 21 & 7
	o0 := raw >> 15 & 1
	ra := raw >> 10 & 31
	if op54 != 0 {
		undef(in, A64WhyUnallocated)
		return
	}
	in.Rd = wZR(rd)
	in.Rn = rZR(rn)
	in.Rm = rZR(rm)
	in.Ra = rZR(ra)
	switch {
	case op31 == 0:
		in.Op = A64MADD
		if o0 != 0 {
			in.Op = A64MSUB
		}
	case sf == 0:
		undef(in, A64WhyUnallocated)
	case op31 == 1:
		in.Op = A64SMADDL
		if o0 != 0 {
			in.Op = A64SMSUBL
		}
	case op31 == 5:
		in.Op = A64UMADDL
		if o0 != 0 {
			in.Op = A64UMSUBL
		}
	case op31 == 2 && o0 == 0:
		in.Op = A64SMULH
	case op31 == 6 && o0 == 0:
		in.Op = A64UMULH
	default:
		undef(in, A64WhyUnallocated)
	}
}

func decodeLdSt(raw uint32, in *A64) {
	op0 := raw >> 28
	op1 := raw >> 26 & 1
	op2 := raw >> 23 & 3
	op3 := raw >> 16 & 63
	op4 := raw >> 10 & 3
	switch {
	case op0&0xb == 0 && op1 == 1: // 0x00 1: Advanced SIMD load/store structures
		if !decodeA64SIMDLdSt(raw, in) {
			*in = A64{Raw: raw, Imm: A64WhySIMD}
		}
	case op0&3 == 0: // xx00
		if op1 == 1 {
			undef(in, A64WhyUnallocated)
		} else if op2 >= 2 {
			undef(in, A64WhyFeature) // LSE128, RCpc3 …
		} else {
			decodeExclusive(raw, in)
		}
	case op0&3 == 1: // xx01
		if op2 >= 2 {
			switch {
			case op0 == 0xd && op1 == 0 && op3&0x20 != 0: // load/store memory tags
				undef(in, A64WhyMTE)
			case op1 == 0 && op3&0x20 == 0 && op4 == 0: // LDAPUR/STLUR (RCpc2)
				decodeLRCPC2(raw, in)
			default:
				undef(in, A64WhyFeature) // RCpc3, …
			}
			return
		}
		decodeLiteral(raw, in)
	case op0&3 == 2: // xx10: load/store pair
		decodePair(raw, in)
	default: // xx11: load/store register
		switch {
		case op2 >= 2:
			decodeLdStReg(raw, in, 0)
		case op3&0x20 == 0:
			decodeLdStReg(raw, in, 1+op4)
		case op4 == 2:
			decodeLdStReg(raw, in, 5)
		case op4 == 0:
			decodeAtomic(raw, in)
		default: // LDRAA/LDRAB
			if raw>>30 == 3 && op1 == 0 {
				undef(in, A64WhyPAC)
			} else {
				undef(in, A64WhyUnallocated)
			}
		}
	}
}

func decodeExclusive(raw uint32, in *A64) {
	size := raw >> 30
	o2 := raw >> 23 & 1
	l := raw >> 22 & 1
	o1 := raw >> 21 & 1
	rs := raw >> 16 & 31
	o0 := raw >> 15 & 1
	rt2 := raw >> 10 & 31
	rn := raw >> 5 & 31
	rt := raw & 31
	in.Size = uint8(size)
	in.Rn = uint8(rn)
	in.Sf = uint8(size >> 1 & size & 1)
	if o0 != 0 {
		in.Flags = A64FlagAcquire
	}
	switch {
	case o2 == 0 && o1 == 0:
		if l == 1 {
			in.Op = A64LDXR
			in.Rd = wZR(rt)
		} else {
			in.Op = A64STXR
			in.Rd = rZR(rt)
			in.Ra = wZR(rs)
		}
	case o2 == 0 && size >= 2:
		if l == 1 {
			in.Op = A64LDXP
			in.Rd = wZR(rt)
			in.Ra = wZR(rt2)
		} else {
			in.Op = A64STXP
			in.Rd = rZR(rt)
			in.Ra = rZR(rt2)
			in.Rm = wZR(rs)
		}
	case o2 == 1 && o1 == 0:
		if o0 == 0 { // LDLAR, STLLR (LORegions)
			undef(in, A64WhyFeature)
			return
		}
		if l == 1 {
			in.Op = A64LDAR
			in.Rd = wZR(rt)
		} else {
			in.Op = A64STLR
			in.Rd = rZR(rt)
		}
	default: // CAS, CASP
		decodeCAS(raw, in)
	}
}

func decodeLiteral(raw uint32, in *A64) {
	opc := raw >> 30
	rt := raw & 31
	in.Imm = sext(raw>>5&0x7ffff, 19) << 2
	in.Flags = A64ModeLit
	if raw>>26&1 != 0 {
		if opc == 3 {
			undef(in, A64WhyUnallocated)
			return
		}
		in.Op = A64LDRV
		in.Rd = uint8(rt)
		in.Size = uint8(opc + 2)
		return
	}
	in.Rd = wZR(rt)
	switch opc {
	case 0:
		in.Op, in.Size = A64LDRW, 2
	case 1:
		in.Op, in.Size, in.Sf = A64LDRX, 3, 1
	case 2:
		in.Op, in.Size, in.Sf = A64LDRSW, 2, 1
	case 3:
		in.Op = A64PRFM
		in.Rd = 0
	}
}

func decodePair(raw uint32, in *A64) {
	opc := raw >> 30
	v := raw >> 26 & 1
	mode := raw >> 23 & 3
	l := raw >> 22 & 1
	rt := raw & 31
	rn := raw >> 5 & 31
	rt2 := raw >> 10 & 31
	var size uint32
	if v == 1 {
		if opc == 3 {
			undef(in, A64WhyUnallocated)
			return
		}
		size = opc + 2
		in.Rd = uint8(rt)
		in.Ra = uint8(rt2)
		in.Op = A64STPV
		if l == 1 {
			in.Op = A64LDPV
		}
	} else {
		switch opc {
		case 0:
			size = 2
			in.Op = A64STP
			if l == 1 {
				in.Op = A64LDP
			}
		case 2:
			size = 3
			in.Sf = 1
			in.Op = A64STP
			if l == 1 {
				in.Op = A64LDP
			}
		case 1:
			if l == 0 {
				if mode == 0 {
					undef(in, A64WhyUnallocated)
				} else {
					undef(in, A64WhyMTE) // STGP
				}
				return
			}
			if mode == 0 {
				undef(in, A64WhyUnallocated)
				return
			}
			size = 2
			in.Sf = 1
			in.Op = A64LDPSW
		default:
			undef(in, A64WhyUnallocated)
			return
		}
		if l == 1 {
			in.Rd = wZR(rt)
			in.Ra = wZR(rt2)
		} else {
			in.Rd = rZR(rt)
			in.Ra = rZR(rt2)
		}
	}
	in.Size = uint8(size)
	in.Rn = uint8(rn)
	in.Imm = sext(raw>>15&0x7f, 7) << size
	switch mode {
	case 0, 2:
		in.Flags = A64ModeOffset
	case 1:
		in.Flags = A64ModePost
	case 3:
		in.Flags = A64ModePre
	}
}

// decodeLdStReg decodes the load/store register classes. form: 0 unsigned
// offset, 1 unscaled, 2 post-index, 3 unprivileged, 4 pre-index, 5
// register offset.
func decodeLdStReg(raw uint32, in *A64, form uint32) {
	size := raw >> 30
	v := raw >> 26 & 1
	opc := raw >> 22 & 3
	rt := raw & 31
	in.Rn = uint8(raw >> 5 & 31)
	prfm := false
	if v == 1 {
		if form == 3 {
			undef(in, A64WhyUnallocated)
			return
		}
		if opc >= 2 {
			if size != 0 {
				undef(in, A64WhyUnallocated)
				return
			}
			size = 4
		}
		in.Op = A64STRV
		if opc&1 != 0 {
			in.Op = A64LDRV
		}
		in.Rd = uint8(rt)
	} else {
		load := true
		switch opc {
		case 0:
			load = false
			in.Op = [4]A64Op{A64STRB, A64STRH, A64STRW, A64STRX}[size]
		case 1:
			in.Op = [4]A64Op{A64LDRB, A64LDRH, A64LDRW, A64LDRX}[size]
		case 2:
			switch size {
			case 0:
				in.Op = A64LDRSB
			case 1:
				in.Op = A64LDRSH
			case 2:
				in.Op = A64LDRSW
			case 3:
				prfm = true
				in.Op = A64PRFM
			}
			in.Sf = 1
		case 3:
			switch size {
			case 0:
				in.Op = A64LDRSB
			case 1:
				in.Op = A64LDRSH
			default:
				undef(in, A64WhyUnallocated)
				return
			}
		}
		if size == 3 && opc == 1 {
			in.Sf = 1
		}
		if prfm && (form == 2 || form == 3 || form == 4) {
			undef(in, A64WhyUnallocated)
			return
		}
		if prfm {
			in.Rd = 0
		} else if load {
			in.Rd = wZR(rt)
		} else {
			in.Rd = rZR(rt)
		}
	}
	in.Size = uint8(size)
	switch form {
	case 0:
		in.Imm = uint64(raw>>10&0xfff) << size
		in.Flags = A64ModeOffset
	case 1, 3:
		in.Imm = sext(raw>>12&0x1ff, 9)
		in.Flags = A64ModeOffset
	case 2:
		in.Imm = sext(raw>>12&0x1ff, 9)
		in.Flags = A64ModePost
	case 4:
		in.Imm = sext(raw>>12&0x1ff, 9)
		in.Flags = A64ModePre
	case 5:
		option := raw >> 13 & 7
		if option&2 == 0 {
			undef(in, A64WhyUnallocated)
			return
		}
		in.Flags = A64ModeReg
		in.Rm = rZR(raw >> 16 & 31)
		in.Shift = uint8(option)
		if raw>>12&1 != 0 {
			in.Amount = uint8(size)
		}
	}
	if prfm {
		in.Flags = 0
		in.Imm = 0
		in.Rn, in.Rm, in.Shift, in.Amount = 0, 0, 0, 0
	}
}

// decodeAtomic handles the "atomic memory operations" class: LDAPR
// (FEAT_LRCPC) here, the LSE operations in a64lse.go.
func decodeAtomic(raw uint32, in *A64) {
	v := raw >> 26 & 1
	if v == 1 {
		undef(in, A64WhyUnallocated)
		return
	}
	// LDAPR{B,H}: size 111 0 00 1 0 1 11111 1 100 00 Rn Rt
	if raw&0x3fff_fc00 == 0x38bf_c000 {
		in.Op = A64LDAR
		in.Size = uint8(raw >> 30)
		in.Sf = uint8(raw >> 30 >> 1 & raw >> 30 & 1)
		in.Rn = uint8(raw >> 5 & 31)
		in.Rd = wZR(raw & 31)
		in.Flags = A64FlagAcquire
		return
	}
	decodeLSEAtomic(raw, in)
}
