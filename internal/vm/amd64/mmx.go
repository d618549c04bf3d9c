package amd64

import (
	"github.com/uvm-emu/uvm/internal/decode"
)

// MMX. The eight MMX registers are the x87 physical registers R0..R7:
// mmN is the 64-bit significand of RN, and an MMX write sets RN's
// sign/exponent to all ones (as hardware does, so an x87 instruction
// reading it sees a NaN). Every MMX instruction except EMMS first moves
// the x87 unit into MMX mode: TOS = 0 and every register tagged valid;
// EMMS tags them all empty. The integer ops are the SSE ones computed on
// a 64-bit vector (sseIntOp with a zero high half) and folded back where
// the XMM form pairs the two halves differently (pack, horizontal add,
// PSHUFB, PALIGNR, the high unpacks).

// mm returns MMX register i.
func (r *Regs) mm(i uint8) uint64 { return r.ST[i&7].Mant }

// setMM writes MMX register i.
func (r *Regs) setMM(i uint8, v uint64) { r.ST[i&7] = F80{Mant: v, SignExp: 0xFFFF} }

// mmxMode is the x87 → MMX transition of every MMX instruction.
func (r *Regs) mmxMode() {
	r.FSW &^= swTop
	r.FTW = 0xFF
}

// MM returns MMX register i (x87 physical register i's significand).
func (r *Regs) MM(i int) uint64 { return r.mm(uint8(i)) }

// readMMXM reads an mm or memory operand (a.Size bytes, zero-extended:
// the low unpacks read m32).
func (c *CPU) readMMXM(in *decode.X86, a *decode.X86Arg) (uint64, sseResult) {
	if a.Kind == decode.ArgMMX {
		return c.regs.mm(a.Reg), sseOK
	}
	v, r := c.readMem(in, c.sseEA(in, a), int(a.Size))
	return v[0], r
}

// execMMX executes EMMS and the MMX ops (decode.MMXInt …).
func (c *CPU) execMMX(in *decode.X86) sseResult {
	r := &c.regs
	a0, a1 := &in.Args[0], &in.Args[1]
	switch in.Op {
	case decode.SSEEmms:
		r.FTW = 0
		return sseOK
	case decode.MMXInt:
		s, res := c.readMMXM(in, a1)
		if res != sseOK {
			return res
		}
		v, ok := mmxIntOp(decode.X86Op(in.Aux), r.mm(a0.Reg), s, in.Imm)
		if !ok {
			return sseUndefined
		}
		r.mmxMode()
		r.setMM(a0.Reg, v)
	case decode.MMXShift:
		count := uint64(in.Imm & 0xFF)
		if a1.Kind != decode.ArgImm {
			var res sseResult
			if count, res = c.readMMXM(in, a1); res != sseOK {
				return res
			}
		}
		r.mmxMode()
		r.setMM(a0.Reg, mmxShift(decode.X86Op(in.Aux), r.mm(a0.Reg), count))
	case decode.MMXMovIn:
		var v uint64
		if a1.Kind == decode.ArgMMX {
			v = r.mm(a1.Reg)
		} else {
			var res sseResult
			if v, res = c.readGPM(in, a1); res != sseOK {
				return res
			}
		}
		r.mmxMode()
		r.setMM(a0.Reg, v)
	case decode.MMXMovOut:
		v := r.mm(a1.Reg)
		if a0.Kind == decode.ArgMem {
			if res := c.writeMem(in, c.sseEA(in, a0), vec{v}, int(a0.Size)); res != sseOK {
				return res
			}
		} else {
			c.writeGPR(a0, v)
		}
		r.mmxMode()
	case decode.MMXPshufw:
		s, res := c.readMMXM(in, a1)
		if res != sseOK {
			return res
		}
		var v uint64
		for i := range 4 {
			v |= (s >> (16 * (in.Imm >> (2 * i) & 3)) & 0xFFFF) << (16 * i)
		}
		r.mmxMode()
		r.setMM(a0.Reg, v)
	case decode.MMXPextrw:
		v := r.mm(a1.Reg) >> (16 * (in.Imm & 3)) & 0xFFFF
		r.mmxMode()
		c.writeGPR(a0, v)
	case decode.MMXPinsrw:
		s, res := c.readGPM(in, a1)
		if res != sseOK {
			return res
		}
		sh := 16 * (in.Imm & 3)
		v := r.mm(a0.Reg)&^(0xFFFF<<sh) | (s&0xFFFF)<<sh
		r.mmxMode()
		r.setMM(a0.Reg, v)
	case decode.MMXPmovmskb:
		v := movmsk8(r.mm(a1.Reg))
		r.mmxMode()
		c.writeGPR(a0, v)
	case decode.MMXMaskmovq:
		if res := c.maskmovq(in); res != sseOK {
			return res
		}
		r.mmxMode()
	case decode.MMXMovq2dq:
		v := r.mm(a1.Reg)
		r.mmxMode()
		r.XMM[a0.Reg&15] = vec{v, 0}
	case decode.MMXMovdq2q:
		v := r.XMM[a1.Reg&15][0]
		r.mmxMode()
		r.setMM(a0.Reg, v)
	case decode.MMXCvtpi2ps, decode.MMXCvtpi2pd:
		s, res := c.readMMXM(in, a1)
		if res != sseOK {
			return res
		}
		old := r.MXCSR
		d := r.XMM[a0.Reg&15]
		if in.Op == decode.MMXCvtpi2ps {
			d[0] = uint64(r.cvtIntToF32(signExt(s, 4))) | uint64(r.cvtIntToF32(signExt(s>>32, 4)))<<32
		} else {
			d = vec{r.cvtIntToF64(signExt(s, 4)), r.cvtIntToF64(signExt(s>>32, 4))}
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		if a1.Kind == decode.ArgMMX {
			r.mmxMode()
		}
		r.XMM[a0.Reg&15] = d
	case decode.MMXCvtps2pi, decode.MMXCvtpd2pi:
		trunc := in.Aux&decode.MMXAuxTrunc != 0
		var s vec
		if a1.Kind == decode.ArgXMM {
			s = r.XMM[a1.Reg&15]
		} else {
			n := 8
			if in.Op == decode.MMXCvtpd2pi {
				n = 16
			}
			var res sseResult
			if s, res = c.readMem(in, c.sseEA(in, a1), n); res != sseOK {
				return res
			}
		}
		old := r.MXCSR
		var lo, hi int64
		if in.Op == decode.MMXCvtps2pi {
			lo, hi = r.cvtF32ToInt(uint32(s[0]), 32, trunc), r.cvtF32ToInt(uint32(s[0]>>32), 32, trunc)
		} else {
			lo, hi = r.cvtF64ToInt(s[0], 32, trunc), r.cvtF64ToInt(s[1], 32, trunc)
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		r.mmxMode()
		r.setMM(a0.Reg, uint64(uint32(lo))|uint64(uint32(hi))<<32)
	default:
		return sseUndefined
	}
	return sseOK
}

// mmxIntOp computes the SSE integer op on 64-bit MMX vectors a, s.
func mmxIntOp(op decode.X86Op, a, s uint64, imm int64) (uint64, bool) {
	var x0 vec
	switch op {
	case decode.SSEPunpckhbw, decode.SSEPunpckhwd, decode.SSEPunpckhdq:
		// The high halves, interleaved like the low ones.
		d := vec{a >> 32}
		ok := sseIntOp(op-decode.SSEPunpckhbw+decode.SSEPunpcklbw, &d, vec{s >> 32}, imm, &x0)
		return d[0], ok
	case decode.SSEPshufb:
		// Index bits 2:0 select within the 8 bytes (bit 7 zeroes).
		d := vec{a}
		ok := sseIntOp(op, &d, vec{s & 0x8787878787878787}, imm, &x0)
		return d[0], ok
	case decode.SSEPalignr:
		return shr128(a, s, uint(min(uint64(imm&0xFF), 16)*8))[0], true
	}
	d := vec{a}
	if !sseIntOp(op, &d, vec{s}, imm, &x0) {
		return 0, false
	}
	switch op {
	case decode.SSEPacksswb, decode.SSEPackssdw, decode.SSEPackuswb,
		decode.SSEPhaddw, decode.SSEPhaddd, decode.SSEPhaddsw,
		decode.SSEPhsubw, decode.SSEPhsubd, decode.SSEPhsubsw:
		// The XMM form puts the destination's results in the low and the
		// source's in the high qword.
		return d[0]&0xFFFFFFFF | d[1]<<32, true
	}
	return d[0], true
}

// mmxShift shifts the lanes of a by count (PSLL/PSRL/PSRA W/D/Q).
func mmxShift(op decode.X86Op, a, count uint64) uint64 {
	size := laneSize(op)
	bitsz := uint64(8 * size)
	var out uint64
	for i := 0; i < 8/size; i++ {
		sh := uint(i * 8 * size)
		x := a >> sh
		if size < 8 {
			x &= 1<<bitsz - 1
		}
		switch op {
		case decode.SSEPsllw, decode.SSEPslld, decode.SSEPsllq:
			if count < bitsz {
				x <<= count
			} else {
				x = 0
			}
		case decode.SSEPsrlw, decode.SSEPsrld, decode.SSEPsrlq:
			if count < bitsz {
				x >>= count
			} else {
				x = 0
			}
		default:
			x = uint64(signExt(x, size) >> min(count, bitsz-1))
		}
		if size < 8 {
			x &= 1<<bitsz - 1
		}
		out |= x << sh
	}
	return out
}

// maskmovq stores the bytes of Args[0] whose mask byte (Args[1]) has its
// top bit set to [RDI] (segment overrides apply), as maskmovdqu.
func (c *CPU) maskmovq(in *decode.X86) sseResult {
	v := c.regs.mm(in.Args[0].Reg)
	m := c.regs.mm(in.Args[1].Reg)
	mem := decode.X86Arg{Kind: decode.ArgMem, Reg: 7, Index: decode.NoReg, Scale: 1, Size: 8}
	mem.Flags = in.Seg << decode.ArgSegShift
	addr := c.sseEA(in, &mem)
	for i := range 8 {
		if m>>(8*i+7)&1 != 0 {
			if _, ok := c.tlb.Load8(addr + uint64(i)); !ok {
				return sseFault
			}
		}
	}
	for i := range 8 {
		if m>>(8*i+7)&1 != 0 {
			if !c.tlb.Store8(addr+uint64(i), uint8(v>>(8*i))) {
				return sseFault
			}
		}
	}
	return sseOK
}
