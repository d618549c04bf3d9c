package amd64

import (
	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The AVX/AVX2/FMA/F16C half of the interpreter (ops >= decode.X86AVXBase,
// decoded by decode/x86vex.go). A 256-bit YMM register is XMM[i] (bits
// 127:0) and YMMH[i] (bits 255:128). Every VEX-encoded instruction that
// writes a vector register writes all 256 bits: a VEX.128 form zeroes
// bits 255:128, which is the difference from legacy SSE (which leaves
// them alone). The 128-bit lane arithmetic is the SSE code's (sseIntOp,
// (*Regs).sseFPOp); VEX.256 applies it to each lane.

// ymm is one YMM value as two 128-bit lanes.
type ymm = [2]vec

func (c *CPU) getY(r uint8) ymm { return ymm{c.regs.XMM[r&15], c.regs.YMMH[r&15]} }

// setY writes a YMM register; width 16 zeroes the upper lane.
func (c *CPU) setY(r uint8, v ymm, width uint8) {
	c.regs.XMM[r&15] = v[0]
	if width == 32 {
		c.regs.YMMH[r&15] = v[1]
	} else {
		c.regs.YMMH[r&15] = vec{}
	}
}

// avxLoad reads n bytes (1..32) at addr; align requires natural
// alignment of the 16/32-byte operand (#GP otherwise).
func (c *CPU) avxLoad(in *decode.X86, addr uint64, n int, align bool) (ymm, sseResult) {
	var v ymm
	if n < 16 {
		x, r := c.readMem(in, addr, n)
		v[0] = x
		return v, r
	}
	if align && addr&uint64(n-1) != 0 {
		return v, sseGP
	}
	var ok bool
	for i := 0; i < n/8; i++ {
		if v[i>>1][i&1], ok = c.tlb.Load64(addr + uint64(8*i)); !ok {
			return v, sseFault
		}
	}
	if c.cm != nil {
		c.cmData(addr, uint64(n), false)
	}
	return v, sseOK
}

// avxStore writes the low n bytes of v at addr; a failing store writes
// nothing.
func (c *CPU) avxStore(in *decode.X86, addr uint64, v ymm, n int, align bool) sseResult {
	if n < 16 {
		return c.writeMem(in, addr, v[0], n)
	}
	if align && addr&uint64(n-1) != 0 {
		return sseGP
	}
	if addr&vm.PageMask <= vm.PageSize-uint64(n) {
		for i := 0; i < n/8; i++ {
			if !c.tlb.Store64(addr+uint64(8*i), v[i>>1][i&1]) {
				return sseFault
			}
		}
	} else {
		var b [32]byte
		for i := 0; i < n/8; i++ {
			putLE64(b[8*i:], v[i>>1][i&1])
		}
		if !c.tlb.StoreBytes(addr, b[:n]) {
			return sseFault
		}
	}
	if c.cm != nil {
		c.cmData(addr, uint64(n), true)
	}
	return sseOK
}

// avxSrc reads a vector or memory operand (a.Size bytes of memory).
func (c *CPU) avxSrc(in *decode.X86, a *decode.X86Arg) (ymm, sseResult) {
	switch a.Kind {
	case decode.ArgXMM:
		v := c.getY(a.Reg)
		if a.Size < 32 {
			v[1] = vec{}
		}
		return v, sseOK
	case decode.ArgMem:
		return c.avxLoad(in, c.ea(in, a), int(a.Size), in.Op == decode.AVXMov && in.Aux&decode.AVXAuxAlign != 0)
	}
	return ymm{}, sseOK
}

// isSSEFP reports the ops (*Regs).sseFPOp computes.
func isSSEFP(op decode.X86Op) bool {
	return op >= decode.SSEAddps && op <= decode.SSECvtpd2ps ||
		op >= decode.SSEAddsubps && op <= decode.SSEHsubpd ||
		op >= decode.SSERoundps && op <= decode.SSEDppd
}

// avxLaneOp computes one 128-bit lane of an AVXLane op.
func (r *Regs) avxLaneOp(op decode.X86Op, a, s vec, imm int64) (vec, bool) {
	switch op {
	case decode.SSECmpps, decode.SSECmppd, decode.SSECmpss, decode.SSECmpsd:
		return r.avxCmp(op, a, s, imm), true
	case decode.SSEMovddup:
		return vec{s[0], s[0]}, true
	case decode.SSEMovshdup, decode.SSEMovsldup:
		sh := 0
		if op == decode.SSEMovshdup {
			sh = 32
		}
		lo, hi := s[0]>>sh&0xFFFFFFFF, s[1]>>sh&0xFFFFFFFF
		return vec{lo | lo<<32, hi | hi<<32}, true
	}
	if isSSEFP(op) {
		return r.sseFPOp(op, a, s, imm)
	}
	var x0 vec
	d := a
	ok := sseIntOp(op, &d, s, imm, &x0)
	return d, ok
}

// avxCmpPred evaluates VEX compare predicate p (0-31) on an ordering
// (-1, 0, 1, 2 = unordered): predicates 8-15 invert the unordered case of
// 0-7, and 16-31 repeat 0-15 with the other signalling behaviour.
func avxCmpPred(p int64, ord int) bool {
	return cmpPred(p&7, ord) != (p&8 != 0 && ord == 2)
}

func avxCmpSignals(p int64) bool { return cmpSignals(p&7) != (p&16 != 0) }

// avxCmp is VCMPPS/PD/SS/SD on one lane.
func (r *Regs) avxCmp(op decode.X86Op, a, s vec, imm int64) vec {
	d := a
	sig := avxCmpSignals(imm)
	switch op {
	case decode.SSECmpps, decode.SSECmpss:
		n := 4
		if op == decode.SSECmpss {
			n = 1
		}
		for i := range n {
			setLane(&d, 4, i, boolMask(avxCmpPred(imm, r.cmp32(uint32(lane(a, 4, i)), uint32(lane(s, 4, i)), sig))))
		}
	default:
		n := 2
		if op == decode.SSECmpsd {
			n = 1
		}
		for i := range n {
			d[i] = boolMask(avxCmpPred(imm, r.cmp64(a[i], s[i], sig)))
		}
	}
	return d
}

// execAVX executes one AVX op. Like execSSE it changes no architectural
// state unless it returns sseOK (MXCSR flags aside, on sseFPE).
func (c *CPU) execAVX(in *decode.X86) sseResult {
	if !c.avx {
		c.why = "AVX instruction with the x86-64-v2 CPU model (run with --cpu x86-64-v3)"
		return sseUndefined
	}
	r := &c.regs
	a0, a1, a2 := &in.Args[0], &in.Args[1], &in.Args[2]
	w := in.Width
	nl := int(w / 16)
	switch in.Op {
	case decode.AVXLane:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		a := c.avxSrc1(a1)
		op := decode.X86Op(in.Imm2)
		old := r.MXCSR
		var d ymm
		imm := in.Imm
		for k := range nl {
			if k == 1 && in.Aux&decode.AVXAuxImmHi != 0 {
				imm >>= in.Aux >> decode.AVXAuxImmShift & 7
			}
			var ok bool
			if d[k], ok = r.avxLaneOp(op, a[k], s[k], imm); !ok {
				return sseUndefined
			}
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.setY(a0.Reg, d, w)
		return sseOK
	case decode.AVXShift:
		return c.avxShift(in)
	case decode.AVXShiftV:
		return c.avxShiftV(in)
	case decode.AVXMov:
		if a0.Kind == decode.ArgMem {
			return c.avxStore(in, c.ea(in, a0), c.getY(a2.Reg), int(w), in.Aux&decode.AVXAuxAlign != 0)
		}
		v, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		c.setY(a0.Reg, v, w)
		return sseOK
	case decode.AVXMovSS:
		n := int(in.Aux)
		switch {
		case a0.Kind == decode.ArgMem:
			return c.writeMem(in, c.ea(in, a0), r.XMM[a2.Reg&15], n)
		case a2.Kind == decode.ArgMem:
			v, res := c.readMem(in, c.ea(in, a2), n)
			if res != sseOK {
				return res
			}
			c.setY(a0.Reg, ymm{v}, 16)
		default:
			d := r.XMM[a1.Reg&15]
			s := r.XMM[a2.Reg&15]
			if n == 8 {
				d[0] = s[0]
			} else {
				d[0] = d[0]&^0xFFFFFFFF | s[0]&0xFFFFFFFF
			}
			c.setY(a0.Reg, ymm{d}, 16)
		}
		return sseOK
	case decode.AVXMovZX:
		if a0.Kind == decode.ArgXMM {
			var v uint64
			if a2.Kind == decode.ArgXMM {
				v = r.XMM[a2.Reg&15][0]
			} else {
				var res sseResult
				if v, res = c.readGPM(in, a2); res != sseOK {
					return res
				}
			}
			c.setY(a0.Reg, ymm{{v, 0}}, 16)
			return sseOK
		}
		return c.writeGPM(in, a0, r.XMM[a2.Reg&15][0])
	case decode.AVXMovLP, decode.AVXMovHP:
		h := 0
		if in.Op == decode.AVXMovHP {
			h = 1
		}
		if a0.Kind == decode.ArgMem {
			return c.writeMem(in, c.ea(in, a0), vec{r.XMM[a2.Reg&15][h]}, 8)
		}
		v, res := c.readMem(in, c.ea(in, a2), 8)
		if res != sseOK {
			return res
		}
		d := r.XMM[a1.Reg&15]
		d[h] = v[0]
		c.setY(a0.Reg, ymm{d}, 16)
		return sseOK
	case decode.AVXMovHLPS:
		c.setY(a0.Reg, ymm{{r.XMM[a2.Reg&15][1], r.XMM[a1.Reg&15][1]}}, 16)
		return sseOK
	case decode.AVXMovLHPS:
		c.setY(a0.Reg, ymm{{r.XMM[a1.Reg&15][0], r.XMM[a2.Reg&15][0]}}, 16)
		return sseOK
	case decode.AVXMovmsk:
		s := c.getY(a2.Reg)
		var m uint64
		for k := range nl {
			var x uint64
			switch in.Aux {
			case 4:
				x = s[k][0]>>31&1 | s[k][0]>>62&2 | s[k][1]>>29&4 | s[k][1]>>60&8
				m |= x << (4 * k)
			case 8:
				x = s[k][0]>>63 | s[k][1]>>62&2
				m |= x << (2 * k)
			default:
				x = movmsk8(s[k][0]) | movmsk8(s[k][1])<<8
				m |= x << (16 * k)
			}
		}
		c.writeGPR(a0, m)
		return sseOK
	case decode.AVXPextr:
		size := int(in.Aux)
		v := lane(r.XMM[a2.Reg&15], size, int(in.Imm)&(16/size-1))
		if a0.Kind == decode.ArgReg {
			c.writeGPR(a0, v)
			return sseOK
		}
		return c.writeMem(in, c.ea(in, a0), vec{v}, size)
	case decode.AVXPinsr:
		size := int(in.Aux)
		v, res := c.readGPM(in, a2)
		if res != sseOK {
			return res
		}
		d := r.XMM[a1.Reg&15]
		setLane(&d, size, int(in.Imm)&(16/size-1), v)
		c.setY(a0.Reg, ymm{d}, 16)
		return sseOK
	case decode.AVXInsertps:
		var s uint64
		if a2.Kind == decode.ArgXMM {
			s = lane(r.XMM[a2.Reg&15], 4, int(in.Imm>>6)&3)
		} else {
			v, res := c.readMem(in, c.ea(in, a2), 4)
			if res != sseOK {
				return res
			}
			s = v[0]
		}
		d := r.XMM[a1.Reg&15]
		setLane(&d, 4, int(in.Imm>>4)&3, s)
		for i := range 4 {
			if in.Imm>>i&1 != 0 {
				setLane(&d, 4, i, 0)
			}
		}
		c.setY(a0.Reg, ymm{d}, 16)
		return sseOK
	case decode.AVXBroadcast:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		size := int(in.Aux)
		var d ymm
		if size == 16 {
			d = ymm{s[0], s[0]}
		} else {
			x := lane(s[0], size, 0)
			for k := range nl {
				for i := range 16 / size {
					setLane(&d[k], size, i, x)
				}
			}
		}
		c.setY(a0.Reg, d, w)
		return sseOK
	case decode.AVXInsert128:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		d := c.getY(a1.Reg)
		d[in.Imm&1] = s[0]
		c.setY(a0.Reg, d, 32)
		return sseOK
	case decode.AVXExtract128:
		v := c.getY(a2.Reg)[in.Imm&1]
		if a0.Kind == decode.ArgMem {
			return c.avxStore(in, c.ea(in, a0), ymm{v}, 16, false)
		}
		c.setY(a0.Reg, ymm{v}, 16)
		return sseOK
	case decode.AVXPerm2:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		a := c.getY(a1.Reg)
		src := [4]vec{a[0], a[1], s[0], s[1]}
		var d ymm
		for k := range 2 {
			ctl := in.Imm >> (4 * k)
			if ctl&8 == 0 {
				d[k] = src[ctl&3]
			}
		}
		c.setY(a0.Reg, d, 32)
		return sseOK
	case decode.AVXPermQ:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		q := [4]uint64{s[0][0], s[0][1], s[1][0], s[1][1]}
		var d ymm
		for i := range 4 {
			d[i>>1][i&1] = q[in.Imm>>(2*i)&3]
		}
		c.setY(a0.Reg, d, 32)
		return sseOK
	case decode.AVXPermD:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		idx := c.getY(a1.Reg)
		var d ymm
		for i := range 8 {
			j := int(lane(idx[i>>2], 4, i&3)) & 7
			setLane(&d[i>>2], 4, i&3, lane(s[j>>2], 4, j&3))
		}
		c.setY(a0.Reg, d, 32)
		return sseOK
	case decode.AVXPermilVar, decode.AVXPermilImm:
		var ctl ymm
		var src ymm
		if in.Op == decode.AVXPermilVar {
			var res sseResult
			if ctl, res = c.avxSrc(in, a2); res != sseOK {
				return res
			}
			src = c.getY(a1.Reg)
		} else {
			var res sseResult
			if src, res = c.avxSrc(in, a2); res != sseOK {
				return res
			}
		}
		var d ymm
		for k := range nl {
			if in.Aux == 4 {
				for i := range 4 {
					sel := int(in.Imm>>(2*i)) & 3
					if in.Op == decode.AVXPermilVar {
						sel = int(lane(ctl[k], 4, i)) & 3
					}
					setLane(&d[k], 4, i, lane(src[k], 4, sel))
				}
			} else {
				for i := range 2 {
					sel := int(in.Imm>>(2*k+i)) & 1
					if in.Op == decode.AVXPermilVar {
						sel = int(ctl[k][i]>>1) & 1
					}
					d[k][i] = src[k][sel]
				}
			}
		}
		c.setY(a0.Reg, d, w)
		return sseOK
	case decode.AVXMaskLoad, decode.AVXMaskStore:
		return c.avxMaskMov(in)
	case decode.AVXWiden:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		op := decode.X86Op(in.Imm2)
		// The source lanes: the low and high halves of the source bytes.
		half := uint(64)
		if op == decode.SSEPmovsx || op == decode.SSEPmovzx {
			half = uint(16/(in.Aux>>4&15)*(in.Aux&15)) * 8 // bits per lane of the 128-bit form
		}
		src := [2]vec{s[0], shr128(s[0][1], s[0][0], half)}
		var d ymm
		old := r.MXCSR
		for k := range nl {
			if op == decode.SSEPmovsx || op == decode.SSEPmovzx {
				from, to := int(in.Aux&15), int(in.Aux>>4)
				for i := range 16 / to {
					x := lane(src[k], from, i)
					if op == decode.SSEPmovsx {
						x = uint64(signExt(x, from))
					}
					setLane(&d[k], to, i, x)
				}
				continue
			}
			var ok bool
			if d[k], ok = r.sseFPOp(op, vec{}, src[k], 0); !ok {
				return sseUndefined
			}
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.setY(a0.Reg, d, w)
		return sseOK
	case decode.AVXNarrow:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		op := decode.X86Op(in.Imm2)
		old := r.MXCSR
		var d vec
		for k := range nl {
			x, ok := r.sseFPOp(op, vec{}, s[k], 0)
			if !ok {
				return sseUndefined
			}
			d[k] = x[0]
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.setY(a0.Reg, ymm{d}, 16)
		return sseOK
	case decode.AVXPtest:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		a := c.getY(a0.Reg)
		var m uint64 = ^uint64(0)
		switch in.Aux {
		case 4:
			m = hi32
		case 8:
			m = 1 << 63
		}
		var and, andn uint64
		for k := range nl {
			for i := range 2 {
				and |= a[k][i] & s[k][i] & m
				andn |= ^a[k][i] & s[k][i] & m
			}
		}
		var f uint64
		if and == 0 {
			f |= flagZF
		}
		if andn == 0 {
			f |= flagCF
		}
		c.sseSetFlags(f)
		return sseOK
	case decode.AVXComis:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		a := r.XMM[a0.Reg&15]
		old := r.MXCSR
		var o int
		switch op := decode.X86Op(in.Imm2); op {
		case decode.SSEComiss, decode.SSEUcomiss:
			o = r.cmp32(uint32(a[0]), uint32(s[0][0]), op == decode.SSEComiss)
		default:
			o = r.cmp64(a[0], s[0][0], op == decode.SSEComisd)
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.sseSetFlags(comisFlags(o))
		return sseOK
	case decode.AVXCvtsi2s:
		v, res := c.readGPM(in, a2)
		if res != sseOK {
			return res
		}
		iv := int64(v)
		if a2.Size == 4 {
			iv = int64(int32(v))
		}
		old := r.MXCSR
		d := r.XMM[a1.Reg&15]
		if decode.X86Op(in.Imm2) == decode.SSECvtsi2ss {
			setLane(&d, 4, 0, uint64(r.cvtIntToF32(iv)))
		} else {
			d[0] = r.cvtIntToF64(iv)
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.setY(a0.Reg, ymm{d}, 16)
		return sseOK
	case decode.AVXCvts2si:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		op := decode.X86Op(in.Imm2)
		old := r.MXCSR
		size := 8 * int(a0.Size)
		trunc := op == decode.SSECvttss2si || op == decode.SSECvttsd2si
		var v int64
		if op == decode.SSECvtss2si || op == decode.SSECvttss2si {
			v = r.cvtF32ToInt(uint32(s[0][0]), size, trunc)
		} else {
			v = r.cvtF64ToInt(s[0][0], size, trunc)
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.writeGPR(a0, uint64(v))
		return sseOK
	case decode.AVXBlendv:
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		a := c.getY(a1.Reg)
		m := c.getY(uint8(in.Imm>>4) & 15)
		op := decode.X86Op(in.Imm2)
		var d ymm
		for k := range nl {
			d[k] = a[k]
			sseIntOp(op, &d[k], s[k], 0, &m[k])
		}
		c.setY(a0.Reg, d, w)
		return sseOK
	case decode.AVXFMA:
		return c.avxFMA(in)
	case decode.AVXVzeroupper:
		r.YMMH = [16][2]uint64{}
		return sseOK
	case decode.AVXVzeroall:
		r.YMMH = [16][2]uint64{}
		r.XMM = [16][2]uint64{}
		return sseOK
	case decode.AVXLdmxcsr:
		v, res := c.readMem(in, c.ea(in, a0), 4)
		if res != sseOK {
			return res
		}
		if v[0]&^MXCSRMask != 0 {
			return sseGP
		}
		r.MXCSR = uint32(v[0])
		return sseOK
	case decode.AVXStmxcsr:
		return c.writeMem(in, c.ea(in, a0), vec{uint64(r.MXCSR)}, 4)
	case decode.AVXLegacy:
		// Run the SSE op on a two-operand copy of the record, then zero
		// the upper half of the register it wrote.
		leg := *in
		leg.Op = decode.X86Op(in.Imm2)
		leg.Args[1] = *a2
		leg.Args[2] = decode.X86Arg{}
		leg.NArgs = 2
		leg.Aux &= decode.SSEAuxW64
		res := c.execSSE(&leg, 0)
		if res == sseOK {
			switch leg.Op {
			case decode.SSEPcmpestrm, decode.SSEPcmpistrm:
				r.YMMH[0] = vec{}
			case decode.SSEPhminposuw:
				r.YMMH[a0.Reg&15] = vec{}
			}
		}
		return res
	case decode.AVXCvtph2ps, decode.AVXCvtps2ph:
		return c.avxF16C(in)
	case decode.AVXGather:
		return c.avxGather(in)
	case decode.X86Xgetbv:
		return c.xgetbv()
	case decode.X86Xsave, decode.X86Xsavec, decode.X86Xsaveopt:
		return c.xsave(in)
	case decode.X86Xrstor:
		return c.xrstor(in)
	}
	return sseUndefined
}

// avxSrc1 reads the VEX.vvvv operand (zero when the form has none).
func (c *CPU) avxSrc1(a *decode.X86Arg) ymm {
	if a.Kind != decode.ArgXMM {
		return ymm{}
	}
	return c.getY(a.Reg)
}

// avxShift executes VPSLL/VPSRL/VPSRA W/D/Q and VPSLLDQ/VPSRLDQ.
func (c *CPU) avxShift(in *decode.X86) sseResult {
	a0, a1, a2 := &in.Args[0], &in.Args[1], &in.Args[2]
	var src ymm
	var count uint64
	if a1.Kind == decode.ArgImm {
		src = c.getY(a2.Reg)
		count = uint64(in.Imm & 0xFF)
	} else {
		src = c.getY(a1.Reg)
		s, res := c.avxSrc(in, a2)
		if res != sseOK {
			return res
		}
		count = s[0][0]
	}
	op := decode.X86Op(in.Imm2)
	var d ymm
	for k := range int(in.Width / 16) {
		d[k] = shiftLane(op, src[k], count)
	}
	c.setY(a0.Reg, d, in.Width)
	return sseOK
}

// shiftLane shifts one 128-bit lane (the SSE shift semantics).
func shiftLane(op decode.X86Op, x vec, count uint64) vec {
	switch op {
	case decode.SSEPslldq:
		return shl128(x[1], x[0], uint(min(count, 16)*8))
	case decode.SSEPsrldq:
		return shr128(x[1], x[0], uint(min(count, 16)*8))
	}
	size := laneSize(op)
	bitsz := uint64(8 * size)
	var out vec
	for i := range 16 / size {
		e := lane(x, size, i)
		switch op {
		case decode.SSEPsllw, decode.SSEPslld, decode.SSEPsllq:
			if count < bitsz {
				e <<= count
			} else {
				e = 0
			}
		case decode.SSEPsrlw, decode.SSEPsrld, decode.SSEPsrlq:
			if count < bitsz {
				e >>= count
			} else {
				e = 0
			}
		default:
			e = uint64(signExt(e, size) >> min(count, bitsz-1))
		}
		setLane(&out, size, i, e)
	}
	return out
}

// avxShiftV executes VPSLLV/VPSRLV D/Q and VPSRAVD.
func (c *CPU) avxShiftV(in *decode.X86) sseResult {
	s, res := c.avxSrc(in, &in.Args[2])
	if res != sseOK {
		return res
	}
	a := c.getY(in.Args[1].Reg)
	size := int(in.Aux & 15)
	kind := in.Aux >> 4
	bitsz := uint64(8 * size)
	var d ymm
	for k := range int(in.Width / 16) {
		for i := range 16 / size {
			x, n := lane(a[k], size, i), lane(s[k], size, i)
			switch kind {
			case 0:
				if n < bitsz {
					x <<= n
				} else {
					x = 0
				}
			case 1:
				if n < bitsz {
					x >>= n
				} else {
					x = 0
				}
			default:
				x = uint64(signExt(x, size) >> min(n, bitsz-1))
			}
			setLane(&d[k], size, i, x)
		}
	}
	c.setY(in.Args[0].Reg, d, in.Width)
	return sseOK
}

// avxMaskMov executes VMASKMOVPS/PD and VPMASKMOVD/Q. Masked-off
// elements are not accessed (no fault from them); a load zeroes them.
func (c *CPU) avxMaskMov(in *decode.X86) sseResult {
	size := int(in.Aux)
	m := c.getY(in.Args[1].Reg)
	n := int(in.Width) / size
	sel := func(i int) bool {
		return lane(m[i*size/16], size, i%(16/size))>>(8*size-1) != 0
	}
	if in.Op == decode.AVXMaskLoad {
		addr := c.ea(in, &in.Args[2])
		var d ymm
		for i := range n {
			if !sel(i) {
				continue
			}
			v, res := c.readMem(in, addr+uint64(i*size), size)
			if res != sseOK {
				return res
			}
			setLane(&d[i*size/16], size, i%(16/size), v[0])
		}
		c.setY(in.Args[0].Reg, d, in.Width)
		return sseOK
	}
	addr := c.ea(in, &in.Args[0])
	v := c.getY(in.Args[2].Reg)
	// Check every selected element first so that a fault writes nothing.
	for i := range n {
		if sel(i) {
			if _, ok := c.tlb.Load8(addr + uint64(i*size)); !ok {
				return sseFault
			}
			if _, ok := c.tlb.Load8(addr + uint64(i*size+size-1)); !ok {
				return sseFault
			}
		}
	}
	for i := range n {
		if sel(i) {
			if res := c.writeMem(in, addr+uint64(i*size), vec{lane(v[i*size/16], size, i%(16/size))}, size); res != sseOK {
				return res
			}
		}
	}
	return sseOK
}

// avxGather executes VGATHER*/VPGATHER*: element i (with its mask
// element's sign set) is loaded from base + index[i]*scale + disp; the
// mask is cleared element by element as loads complete, so a fault
// leaves the completed elements loaded and their mask bits clear (the
// architectural restart state); the whole mask register is zero at the
// end.
func (c *CPU) avxGather(in *decode.X86) sseResult {
	idxSize := int(in.Aux & 15)
	dataSize := int(in.Aux >> 4)
	mem := in.Args[2]
	vi := mem.Index
	mem.Index = decode.NoReg
	base := c.ea(in, &mem)
	idx := c.getY(vi)
	n := int(in.Width) / max(idxSize, dataSize)
	if dataSize < idxSize {
		n = int(in.Width) / idxSize // VGATHERQPS ymm index: 4 elements into xmm
	}
	dst := c.getY(in.Args[0].Reg)
	mask := c.getY(in.Args[1].Reg)
	dw := in.Width
	if dataSize < idxSize {
		dw = 16
	}
	for i := range n {
		ms := lane(mask[i*dataSize/16], dataSize, i%(16/dataSize))
		if ms>>(8*dataSize-1) == 0 {
			continue
		}
		ix := lane(idx[i*idxSize/16], idxSize, i%(16/idxSize))
		off := uint64(signExt(ix, idxSize)) * uint64(mem.Scale)
		v, res := c.readMem(in, base+off, dataSize)
		if res != sseOK {
			c.setY(in.Args[0].Reg, dst, dw)
			c.setY(in.Args[1].Reg, mask, dw)
			return res
		}
		setLane(&dst[i*dataSize/16], dataSize, i%(16/dataSize), v[0])
		setLane(&mask[i*dataSize/16], dataSize, i%(16/dataSize), 0)
	}
	c.setY(in.Args[0].Reg, dst, dw)
	c.setY(in.Args[1].Reg, ymm{}, dw)
	return sseOK
}
