package amd64

import "github.com/uvm-emu/uvm/internal/decode"

// The hot SSE forms. Compiled C's vectorised loops (CoreMark: a fifth of
// the retired instructions) are mostly 128-bit moves, MOVD/MOVQ and a
// few packed-integer ops with an XMM destination. execSSEHot does those
// with one table load to select it, one operand-kind test and one switch,
// instead of execSSE's range cascade, its large frame and the second
// dispatch in sseIntOp; every other op and form goes to execSSE. The
// results, faults and alignment checks are execSSE's: the same helpers
// (readMem, writeMem, readGPM, writeGPM, sseIntFast) do the work.

// sseHot marks the ops execSSEHot handles (indexed by op - X86SSEBase).
var sseHot [decode.SSEOpEnd - decode.X86SSEBase]bool

func init() {
	for _, op := range []decode.X86Op{
		decode.SSEMov128, decode.SSEMovZX,
		decode.SSEPand, decode.SSEPandn, decode.SSEAndnps, decode.SSEPor, decode.SSEPxor,
		decode.SSEPaddw, decode.SSEPaddd, decode.SSEPaddq, decode.SSEPsubw, decode.SSEPsubd, decode.SSEPsubq,
		decode.SSEPmullw, decode.SSEPmulhw,
		decode.SSEPunpcklwd, decode.SSEPunpckhwd, decode.SSEPunpckldq, decode.SSEPunpckhdq,
		decode.SSEUnpcklps, decode.SSEUnpckhps, decode.SSEPunpcklqdq, decode.SSEPunpckhqdq,
		decode.SSEPshufd,
	} {
		sseHot[op-decode.X86SSEBase] = true
	}
}

// isSSEHot reports whether execSSEHot handles op (any op >= X86SSEBase).
func isSSEHot(op decode.X86Op) bool {
	i := uint(op - decode.X86SSEBase)
	return i < uint(len(sseHot)) && sseHot[i]
}

// execSSEHot executes an op for which isSSEHot is true, as execSSE would.
func (c *CPU) execSSEHot(in *decode.X86) sseResult {
	a0, a1 := &in.Args[0], &in.Args[1]
	if in.Op == decode.SSEMovZX {
		return c.movZX(in, a0, a1)
	}
	if a0.Kind != decode.ArgXMM { // MOVDQA/MOVUPS … m128, xmm
		return c.writeMem(in, c.ea(in, a0), c.regs.XMM[a1.Reg&15], 16)
	}
	var s vec
	if a1.Kind == decode.ArgXMM {
		s = c.regs.XMM[a1.Reg&15]
	} else if a1.Size == 16 { // readMem's 16-byte case, inline
		addr := c.ea(in, a1)
		if in.Aux&decode.SSEAuxAlign != 0 && addr&15 != 0 {
			return sseGP
		}
		var ok bool
		if s[0], s[1], ok = c.tlb.Load128(addr); !ok {
			return sseFault
		}
		if c.cm != nil {
			c.cmData(addr, 16, false)
		}
	} else {
		var r sseResult
		if s, r = c.readMem(in, c.ea(in, a1), int(a1.Size)); r != sseOK {
			return r
		}
	}
	d := &c.regs.XMM[a0.Reg&15]
	if in.Op == decode.SSEMov128 {
		*d = s
		return sseOK
	}
	if !sseIntFast(in.Op, d, s, in.Imm) {
		return sseUndefined // not reached: sseHot lists only sseIntFast's ops
	}
	return sseOK
}
