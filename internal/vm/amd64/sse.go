package amd64

import (
	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// sseResult is what execSSE reports to the main loop.
type sseResult uint8

const (
	sseOK        sseResult = iota // retired
	sseFault                      // memory fault: c.tlb.Fault is set, state unchanged
	sseUndefined                  // not implemented: raise an undefined-instruction exit
	sseDivide                     // unused by SSE; reserved for x87 integer ops
	// sseGP: #GP in user mode (a misaligned 16-byte operand of a legacy
	// SSE instruction that requires alignment, a misaligned FXSAVE area,
	// reserved bits in LDMXCSR/FXRSTOR's MXCSR). Linux sends SIGSEGV with
	// si_code SI_KERNEL and si_addr 0. State unchanged.
	sseGP
	// sseFPE: an unmasked SIMD floating-point exception (#XM). MXCSR has
	// the exception flag set, the destination is unchanged. Linux sends
	// SIGFPE with si_code SIMDFPECode(MXCSR).
	sseFPE
	// sseMF: an x87 waiting instruction found an unmasked x87 exception
	// pending (FSW.ES): #MF before it executes (x87trap.go).
	sseMF
)

// SIMDFPECode returns the SIGFPE si_code Linux reports for an unmasked
// SIMD floating-point exception with this MXCSR (arch/x86/kernel/traps.c,
// fpu__exception_code): FPE_FLTINV 7, FPE_FLTDIV 3, FPE_FLTOVF 4,
// FPE_FLTUND 5, FPE_FLTRES 6; 0 when no unmasked flag is set.
func SIMDFPECode(mxcsr uint32) int {
	return fpeCode(mxcsr & ^(mxcsr >> mxMaskSh) & fpAll)
}

// fpeCode is the si_code for a set of unmasked exception flags (the
// fpIE…fpPE bits, the same in the x87 status word and MXCSR), in the
// kernel's priority order.
func fpeCode(err uint32) int {
	switch {
	case err&fpIE != 0:
		return 7
	case err&fpZE != 0:
		return 3
	case err&fpOE != 0:
		return 4
	case err&(fpUE|fpDE) != 0:
		return 5
	case err&fpPE != 0:
		return 6
	}
	return 0
}

// vec is one XMM register value, [0] the low 64 bits.
type vec = [2]uint64

// InitFPU sets the SSE and x87 state to its state at exec: MXCSR 0x1F80,
// FCW 0x37F, empty x87 stack.
func (r *Regs) InitFPU() {
	r.MXCSR = MXCSRDefault
	r.FCW = 0x37F
	r.FSW = 0
	r.FTW = 0
	r.ST = [8]F80{}
}

// ---- operand access ----

// sseEA returns the effective address of memory operand a.
func (c *CPU) sseEA(in *decode.X86, a *decode.X86Arg) uint64 {
	return c.ea(in, a)
}

// readVM reads operand a: an XMM register, or a.Size bytes of memory
// zero-extended (16-byte operands checked for alignment when the
// instruction requires it).
func (c *CPU) readVM(in *decode.X86, a *decode.X86Arg) (vec, sseResult) {
	if a.Kind == decode.ArgXMM {
		return c.regs.XMM[a.Reg&15], sseOK
	}
	return c.readMem(in, c.sseEA(in, a), int(a.Size))
}

// readMem loads n (1, 2, 4, 8, 16) bytes at addr.
func (c *CPU) readMem(in *decode.X86, addr uint64, n int) (vec, sseResult) {
	var v vec
	var ok bool
	switch n {
	case 16:
		if in.Aux&decode.SSEAuxAlign != 0 && addr&15 != 0 {
			return v, sseGP
		}
		if v[0], v[1], ok = c.tlb.Load128(addr); !ok {
			return vec{}, sseFault
		}
	case 8:
		if v[0], ok = c.tlb.Load64(addr); !ok {
			return v, sseFault
		}
	case 4:
		var x uint32
		if x, ok = c.tlb.Load32(addr); !ok {
			return v, sseFault
		}
		v[0] = uint64(x)
	case 2:
		var x uint16
		if x, ok = c.tlb.Load16(addr); !ok {
			return v, sseFault
		}
		v[0] = uint64(x)
	case 1:
		var x uint8
		if x, ok = c.tlb.Load8(addr); !ok {
			return v, sseFault
		}
		v[0] = uint64(x)
	default:
		return v, sseUndefined
	}
	if c.cm != nil {
		c.cmData(addr, uint64(n), false)
	}
	return v, sseOK
}

// writeMem stores the low n bytes of v at addr. A store that fails
// writes nothing.
func (c *CPU) writeMem(in *decode.X86, addr uint64, v vec, n int) sseResult {
	switch n {
	case 16:
		if in.Aux&decode.SSEAuxAlign != 0 && addr&15 != 0 {
			return sseGP
		}
		if addr&vm.PageMask <= vm.PageSize-16 {
			// One page: the first store succeeding means the second will.
			if !c.tlb.Store64(addr, v[0]) || !c.tlb.Store64(addr+8, v[1]) {
				return sseFault
			}
			if c.cm != nil {
				c.cmData(addr, 16, true)
			}
			return sseOK
		}
		var b [16]byte
		putLE64(b[:8], v[0])
		putLE64(b[8:], v[1])
		if !c.tlb.StoreBytes(addr, b[:]) {
			return sseFault
		}
	case 8:
		if !c.tlb.Store64(addr, v[0]) {
			return sseFault
		}
	case 4:
		if !c.tlb.Store32(addr, uint32(v[0])) {
			return sseFault
		}
	case 2:
		if !c.tlb.Store16(addr, uint16(v[0])) {
			return sseFault
		}
	case 1:
		if !c.tlb.Store8(addr, uint8(v[0])) {
			return sseFault
		}
	default:
		return sseUndefined
	}
	if c.cm != nil {
		c.cmData(addr, uint64(n), true)
	}
	return sseOK
}

func putLE64(b []byte, v uint64) {
	_ = b[7]
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

// readGPM reads a GPR or memory operand of a.Size (1, 2, 4, 8) bytes.
func (c *CPU) readGPM(in *decode.X86, a *decode.X86Arg) (uint64, sseResult) {
	if a.Kind == decode.ArgReg {
		v := c.regs.GPR[a.Reg&15]
		if a.Size < 8 {
			v &= 1<<(8*a.Size) - 1
		}
		return v, sseOK
	}
	v, r := c.readMem(in, c.sseEA(in, a), int(a.Size))
	return v[0], r
}

// writeGPR writes v to a 32- or 64-bit GPR (32-bit writes zero-extend).
func (c *CPU) writeGPR(a *decode.X86Arg, v uint64) {
	if a.Size == 4 {
		v = uint64(uint32(v))
	}
	c.regs.GPR[a.Reg&15] = v
}

// writeGPM writes the low a.Size bytes of v to a GPR (zero-extending
// 32-bit writes) or to memory.
func (c *CPU) writeGPM(in *decode.X86, a *decode.X86Arg, v uint64) sseResult {
	if a.Kind == decode.ArgReg {
		c.writeGPR(a, v)
		return sseOK
	}
	return c.writeMem(in, c.sseEA(in, a), vec{v}, int(a.Size))
}

// ---- dispatcher ----

// execSSE executes one SSE/SSE2/SSE3/SSSE3/SSE4.1/SSE4.2/x87 instruction
// (Op >= decode.X86SSEBase). It does not change architectural state when
// it returns anything but sseOK.
func (c *CPU) execSSE(in *decode.X86, pc uint64) sseResult {
	_ = pc
	op := in.Op
	switch {
	case op >= decode.X86AVXBase:
		return c.execAVX(in) // avx.go
	case op >= decode.SSEEmms: // EMMS and the MMX ops (mmx.go)
		return c.execMMX(in)
	case op >= decode.X87Fld:
		return c.execX87(in)
	case op >= decode.SSEAddps && op <= decode.SSECvtpd2ps,
		op >= decode.SSEAddsubps && op <= decode.SSEHsubpd,
		op >= decode.SSERoundps && op <= decode.SSEDppd:
		return c.execSSEFP(in)
	}
	a0 := &in.Args[0]
	a1 := &in.Args[1]
	switch op {
	case decode.SSEMov128:
		if a0.Kind == decode.ArgXMM {
			v, r := c.readVM(in, a1)
			if r != sseOK {
				return r
			}
			c.regs.XMM[a0.Reg&15] = v
			return sseOK
		}
		return c.writeMem(in, c.sseEA(in, a0), c.regs.XMM[a1.Reg&15], 16)
	case decode.SSEMovSS, decode.SSEMovSD:
		n := 4
		if op == decode.SSEMovSD {
			n = 8
		}
		switch {
		case a0.Kind == decode.ArgMem:
			return c.writeMem(in, c.sseEA(in, a0), c.regs.XMM[a1.Reg&15], n)
		case a1.Kind == decode.ArgMem:
			v, r := c.readMem(in, c.sseEA(in, a1), n)
			if r != sseOK {
				return r
			}
			c.regs.XMM[a0.Reg&15] = v
		default:
			d := &c.regs.XMM[a0.Reg&15]
			s := c.regs.XMM[a1.Reg&15]
			if n == 8 {
				d[0] = s[0]
			} else {
				d[0] = d[0]&^0xFFFFFFFF | s[0]&0xFFFFFFFF
			}
		}
		return sseOK
	case decode.SSEMovZX:
		return c.movZX(in, a0, a1)
	case decode.SSEMovLP, decode.SSEMovHP:
		h := 0
		if op == decode.SSEMovHP {
			h = 1
		}
		if a0.Kind == decode.ArgMem {
			return c.writeMem(in, c.sseEA(in, a0), vec{c.regs.XMM[a1.Reg&15][h]}, 8)
		}
		v, r := c.readMem(in, c.sseEA(in, a1), 8)
		if r != sseOK {
			return r
		}
		c.regs.XMM[a0.Reg&15][h] = v[0]
		return sseOK
	case decode.SSEMovHLPS:
		c.regs.XMM[a0.Reg&15][0] = c.regs.XMM[a1.Reg&15][1]
		return sseOK
	case decode.SSEMovLHPS:
		c.regs.XMM[a0.Reg&15][1] = c.regs.XMM[a1.Reg&15][0]
		return sseOK
	case decode.SSEMovmskps:
		s := c.regs.XMM[a1.Reg&15]
		c.writeGPR(a0, s[0]>>31&1|s[0]>>62&2|s[1]>>29&4|s[1]>>60&8)
		return sseOK
	case decode.SSEMovmskpd:
		s := c.regs.XMM[a1.Reg&15]
		c.writeGPR(a0, s[0]>>63|s[1]>>62&2)
		return sseOK
	case decode.SSEPmovmskb:
		s := c.regs.XMM[a1.Reg&15]
		c.writeGPR(a0, movmsk8(s[0])|movmsk8(s[1])<<8)
		return sseOK
	case decode.SSEMaskmovdqu:
		return c.maskmovdqu(in)
	case decode.SSEPextr, decode.SSEExtractps:
		size := int(in.Aux)
		if op == decode.SSEExtractps {
			size = 4
		}
		idx := int(in.Imm) & (16/size - 1)
		v := lane(c.regs.XMM[a1.Reg&15], size, idx)
		if a0.Kind == decode.ArgReg {
			c.writeGPR(a0, v) // zero-extended into the 32/64-bit register
			return sseOK
		}
		return c.writeMem(in, c.sseEA(in, a0), vec{v}, size)
	case decode.SSEPinsr:
		size := int(in.Aux)
		v, r := c.readGPM(in, a1)
		if r != sseOK {
			return r
		}
		setLane(&c.regs.XMM[a0.Reg&15], size, int(in.Imm)&(16/size-1), v)
		return sseOK
	case decode.SSEInsertps:
		var s uint64
		if a1.Kind == decode.ArgXMM {
			s = lane(c.regs.XMM[a1.Reg&15], 4, int(in.Imm>>6)&3)
		} else {
			v, r := c.readMem(in, c.sseEA(in, a1), 4)
			if r != sseOK {
				return r
			}
			s = v[0]
		}
		d := &c.regs.XMM[a0.Reg&15]
		setLane(d, 4, int(in.Imm>>4)&3, s)
		for i := range 4 {
			if in.Imm>>i&1 != 0 {
				setLane(d, 4, i, 0)
			}
		}
		return sseOK
	case decode.SSEMovddup:
		v, r := c.readVM(in, a1)
		if r != sseOK {
			return r
		}
		c.regs.XMM[a0.Reg&15] = vec{v[0], v[0]}
		return sseOK
	case decode.SSEMovshdup, decode.SSEMovsldup:
		v, r := c.readVM(in, a1)
		if r != sseOK {
			return r
		}
		sh := 0
		if op == decode.SSEMovshdup {
			sh = 32
		}
		lo, hi := v[0]>>sh&0xFFFFFFFF, v[1]>>sh&0xFFFFFFFF
		c.regs.XMM[a0.Reg&15] = vec{lo | lo<<32, hi | hi<<32}
		return sseOK
	case decode.SSEPmovsx, decode.SSEPmovzx:
		v, r := c.readVM(in, a1)
		if r != sseOK {
			return r
		}
		from, to := int(in.Aux&15), int(in.Aux>>4)
		var d vec
		for i := range 16 / to {
			x := lane(v, from, i)
			if op == decode.SSEPmovsx {
				x = uint64(signExt(x, from))
			}
			setLane(&d, to, i, x)
		}
		c.regs.XMM[a0.Reg&15] = d
		return sseOK
	case decode.SSELdmxcsr:
		v, r := c.readMem(in, c.sseEA(in, a0), 4)
		if r != sseOK {
			return r
		}
		if v[0]&^MXCSRMask != 0 {
			return sseGP
		}
		c.regs.MXCSR = uint32(v[0])
		return sseOK
	case decode.SSEStmxcsr:
		return c.writeMem(in, c.sseEA(in, a0), vec{uint64(c.regs.MXCSR)}, 4)
	case decode.SSEFxsave:
		return c.fxsave(in)
	case decode.SSEFxrstor:
		return c.fxrstor(in)
	case decode.SSECrc32:
		v, r := c.readGPM(in, a1)
		if r != sseOK {
			return r
		}
		c.regs.GPR[a0.Reg&15] = uint64(crc32c(uint32(c.regs.GPR[a0.Reg&15]), v, int(a1.Size)))
		return sseOK
	case decode.SSEPcmpestri, decode.SSEPcmpestrm, decode.SSEPcmpistri, decode.SSEPcmpistrm:
		return c.pcmpstr(in)
	case decode.SSEPtest:
		b, r := c.readVM(in, a1)
		if r != sseOK {
			return r
		}
		a := c.regs.XMM[a0.Reg&15]
		var f uint64
		if a[0]&b[0]|a[1]&b[1] == 0 {
			f |= flagZF
		}
		if ^a[0]&b[0]|^a[1]&b[1] == 0 {
			f |= flagCF
		}
		c.sseSetFlags(f)
		return sseOK
	}
	if op >= decode.SSEPsllw && op <= decode.SSEPsrldq {
		return c.sseShift(in)
	}
	// Everything else: d = f(d, s[, imm]) on whole vectors.
	s, r := c.readVM(in, a1)
	if r != sseOK {
		return r
	}
	if !sseIntOp(op, &c.regs.XMM[a0.Reg&15], s, in.Imm, &c.regs.XMM[0]) {
		return sseUndefined
	}
	return sseOK
}

// ---- lane helpers ----

// lane returns element i of size bytes (1, 2, 4, 8).
func lane(v vec, size, i int) uint64 {
	bit := i * size * 8
	x := v[(bit>>6)&1] >> (bit & 63)
	if size < 8 {
		x &= 1<<(8*size) - 1
	}
	return x
}

// setLane sets element i of size bytes.
func setLane(v *vec, size, i int, x uint64) {
	bit := i * size * 8
	w := &v[(bit>>6)&1]
	if size == 8 {
		*w = x
		return
	}
	m := uint64(1)<<(8*size) - 1
	*w = *w&^(m<<(bit&63)) | (x&m)<<(bit&63)
}

// signExt sign-extends the low size bytes of x.
func signExt(x uint64, size int) int64 {
	s := 64 - 8*size
	return int64(x<<s) >> s
}

// movmsk8 gathers the top bit of each byte of x into 8 bits.
func movmsk8(x uint64) uint64 {
	return (x & 0x8080808080808080) * 0x0002040810204081 >> 56
}

// cmpeq8 returns 0xFF in every byte where a and b are equal.
func cmpeq8(a, b uint64) uint64 {
	x := a ^ b
	t := ((x & 0x7F7F7F7F7F7F7F7F) + 0x7F7F7F7F7F7F7F7F) | x
	return (^t & 0x8080808080808080) >> 7 * 0xFF
}

// mapLanes applies f to every element pair of size bytes.
func mapLanes(d *vec, s vec, size int, f func(a, b uint64) uint64) {
	a := *d
	var out vec
	for i := range 16 / size {
		setLane(&out, size, i, f(lane(a, size, i), lane(s, size, i)))
	}
	*d = out
}

func satS(x int64, size int) uint64 {
	lo, hi := int64(-1)<<(8*size-1), int64(1)<<(8*size-1)-1
	return uint64(min(max(x, lo), hi))
}

func satU(x int64, size int) uint64 {
	hi := int64(1)<<(8*size) - 1
	return uint64(min(max(x, 0), hi))
}

func boolMask(b bool) uint64 {
	if b {
		return ^uint64(0)
	}
	return 0
}

// sseIntOp computes the packed integer and shuffle ops d = op(d, s, imm).
// x0 is XMM0 (the implicit BLENDV mask).
func sseIntOp(op decode.X86Op, d *vec, s vec, imm int64, x0 *vec) bool {
	if sseIntFast(op, d, s, imm) {
		return true
	}
	a := *d
	switch op {
	case decode.SSEPaddb:
		*d = vec{add8(a[0], s[0]), add8(a[1], s[1])}
	case decode.SSEPsubb:
		*d = vec{sub8(a[0], s[0]), sub8(a[1], s[1])}
	case decode.SSEPaddw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return x + y })
	case decode.SSEPaddd:
		mapLanes(d, s, 4, func(x, y uint64) uint64 { return x + y })
	case decode.SSEPsubw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return x - y })
	case decode.SSEPsubd:
		mapLanes(d, s, 4, func(x, y uint64) uint64 { return x - y })
	case decode.SSEPaddsb:
		mapLanes(d, s, 1, func(x, y uint64) uint64 { return satS(signExt(x, 1)+signExt(y, 1), 1) })
	case decode.SSEPaddsw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return satS(signExt(x, 2)+signExt(y, 2), 2) })
	case decode.SSEPaddusb:
		mapLanes(d, s, 1, func(x, y uint64) uint64 { return satU(int64(x+y), 1) })
	case decode.SSEPaddusw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return satU(int64(x+y), 2) })
	case decode.SSEPsubsb:
		mapLanes(d, s, 1, func(x, y uint64) uint64 { return satS(signExt(x, 1)-signExt(y, 1), 1) })
	case decode.SSEPsubsw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return satS(signExt(x, 2)-signExt(y, 2), 2) })
	case decode.SSEPsubusb:
		mapLanes(d, s, 1, func(x, y uint64) uint64 { return satU(int64(x)-int64(y), 1) })
	case decode.SSEPsubusw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return satU(int64(x)-int64(y), 2) })
	case decode.SSEPmullw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return x * y })
	case decode.SSEPmulhw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return uint64(signExt(x, 2) * signExt(y, 2) >> 16) })
	case decode.SSEPmulhuw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return x * y >> 16 })
	case decode.SSEPmuludq:
		*d = vec{(a[0] & 0xFFFFFFFF) * (s[0] & 0xFFFFFFFF), (a[1] & 0xFFFFFFFF) * (s[1] & 0xFFFFFFFF)}
	case decode.SSEPmuldq:
		*d = vec{uint64(signExt(a[0], 4) * signExt(s[0], 4)), uint64(signExt(a[1], 4) * signExt(s[1], 4))}
	case decode.SSEPmulld:
		mapLanes(d, s, 4, func(x, y uint64) uint64 { return x * y })
	case decode.SSEPmaddwd:
		var out vec
		for i := range 4 {
			p := signExt(lane(a, 2, 2*i), 2)*signExt(lane(s, 2, 2*i), 2) +
				signExt(lane(a, 2, 2*i+1), 2)*signExt(lane(s, 2, 2*i+1), 2)
			setLane(&out, 4, i, uint64(p))
		}
		*d = out
	case decode.SSEPmaddubsw:
		var out vec
		for i := range 8 {
			p := int64(lane(a, 1, 2*i))*signExt(lane(s, 1, 2*i), 1) +
				int64(lane(a, 1, 2*i+1))*signExt(lane(s, 1, 2*i+1), 1)
			setLane(&out, 2, i, satS(p, 2))
		}
		*d = out
	case decode.SSEPmulhrsw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 {
			return uint64((signExt(x, 2)*signExt(y, 2)>>14 + 1) >> 1)
		})
	case decode.SSEPavgb:
		mapLanes(d, s, 1, func(x, y uint64) uint64 { return (x + y + 1) >> 1 })
	case decode.SSEPavgw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return (x + y + 1) >> 1 })
	case decode.SSEPminub:
		*d = vec{minu8(a[0], s[0]), minu8(a[1], s[1])}
	case decode.SSEPmaxub, decode.SSEPmaxuw, decode.SSEPmaxud:
		mapLanes(d, s, laneSize(op), func(x, y uint64) uint64 { return max(x, y) })
	case decode.SSEPminuw, decode.SSEPminud:
		mapLanes(d, s, laneSize(op), func(x, y uint64) uint64 { return min(x, y) })
	case decode.SSEPmaxsb, decode.SSEPmaxsw, decode.SSEPmaxsd:
		size := laneSize(op)
		mapLanes(d, s, size, func(x, y uint64) uint64 {
			if signExt(x, size) > signExt(y, size) {
				return x
			}
			return y
		})
	case decode.SSEPminsb, decode.SSEPminsw, decode.SSEPminsd:
		size := laneSize(op)
		mapLanes(d, s, size, func(x, y uint64) uint64 {
			if signExt(x, size) < signExt(y, size) {
				return x
			}
			return y
		})
	case decode.SSEPsadbw:
		var out vec
		for h := range 2 {
			var sum uint64
			for i := range 8 {
				x, y := lane(a, 1, 8*h+i), lane(s, 1, 8*h+i)
				sum += max(x, y) - min(x, y)
			}
			out[h] = sum
		}
		*d = out
	case decode.SSEPcmpeqb:
		*d = vec{cmpeq8(a[0], s[0]), cmpeq8(a[1], s[1])}
	case decode.SSEPcmpeqw:
		mapLanes(d, s, 2, func(x, y uint64) uint64 { return boolMask(x == y) })
	case decode.SSEPcmpeqd:
		mapLanes(d, s, 4, func(x, y uint64) uint64 { return boolMask(x == y) })
	case decode.SSEPcmpeqq:
		*d = vec{boolMask(a[0] == s[0]), boolMask(a[1] == s[1])}
	case decode.SSEPcmpgtb, decode.SSEPcmpgtw, decode.SSEPcmpgtd, decode.SSEPcmpgtq:
		size := laneSize(op)
		mapLanes(d, s, size, func(x, y uint64) uint64 { return boolMask(signExt(x, size) > signExt(y, size)) })
	case decode.SSEPunpcklbw, decode.SSEPunpcklwd, decode.SSEPunpckldq, decode.SSEPunpcklqdq, decode.SSEUnpcklps:
		*d = interleave(a, s, laneSize(op), 0)
	case decode.SSEPunpckhbw, decode.SSEPunpckhwd, decode.SSEPunpckhdq, decode.SSEPunpckhqdq, decode.SSEUnpckhps:
		size := laneSize(op)
		*d = interleave(a, s, size, 8/size)
	case decode.SSEPacksswb, decode.SSEPackssdw, decode.SSEPackuswb, decode.SSEPackusdw:
		from := 2
		if op == decode.SSEPackssdw || op == decode.SSEPackusdw {
			from = 4
		}
		uns := op == decode.SSEPackuswb || op == decode.SSEPackusdw
		n := 16 / from
		var out vec
		for i := range 2 * n {
			src := a
			if i >= n {
				src = s
			}
			x := signExt(lane(src, from, i%n), from)
			if uns {
				setLane(&out, from/2, i, satU(x, from/2))
			} else {
				setLane(&out, from/2, i, satS(x, from/2))
			}
		}
		*d = out
	case decode.SSEPshufd:
		var out vec
		for i := range 4 {
			setLane(&out, 4, i, lane(s, 4, int(imm>>(2*i))&3))
		}
		*d = out
	case decode.SSEPshuflw, decode.SSEPshufhw:
		out := s
		base := 0
		if op == decode.SSEPshufhw {
			base = 4
		}
		for i := range 4 {
			setLane(&out, 2, base+i, lane(s, 2, base+int(imm>>(2*i))&3))
		}
		*d = out
	case decode.SSEShufps:
		var out vec
		setLane(&out, 4, 0, lane(a, 4, int(imm)&3))
		setLane(&out, 4, 1, lane(a, 4, int(imm>>2)&3))
		setLane(&out, 4, 2, lane(s, 4, int(imm>>4)&3))
		setLane(&out, 4, 3, lane(s, 4, int(imm>>6)&3))
		*d = out
	case decode.SSEShufpd:
		*d = vec{a[imm&1], s[imm>>1&1]}
	case decode.SSEPshufb:
		var out vec
		for i := range 16 {
			c := lane(s, 1, i)
			if c&0x80 == 0 {
				setLane(&out, 1, i, lane(a, 1, int(c&15)))
			}
		}
		*d = out
	case decode.SSEPalignr:
		// (a:s) >> imm*8, 32 bytes wide.
		var out vec
		for i := range 16 {
			k := i + int(imm)
			var b uint64
			switch {
			case k < 16:
				b = lane(s, 1, k)
			case k < 32:
				b = lane(a, 1, k-16)
			}
			setLane(&out, 1, i, b)
		}
		*d = out
	case decode.SSEPhaddw, decode.SSEPhaddd, decode.SSEPhaddsw, decode.SSEPhsubw, decode.SSEPhsubd, decode.SSEPhsubsw:
		size := 2
		if op == decode.SSEPhaddd || op == decode.SSEPhsubd {
			size = 4
		}
		n := 16 / size
		var out vec
		for i := range n {
			src, j := a, 2*i
			if i >= n/2 {
				src, j = s, 2*(i-n/2)
			}
			x, y := signExt(lane(src, size, j), size), signExt(lane(src, size, j+1), size)
			var v uint64
			switch op {
			case decode.SSEPhaddw, decode.SSEPhaddd:
				v = uint64(x + y)
			case decode.SSEPhsubw, decode.SSEPhsubd:
				v = uint64(x - y)
			case decode.SSEPhaddsw:
				v = satS(x+y, 2)
			default:
				v = satS(x-y, 2)
			}
			setLane(&out, size, i, v)
		}
		*d = out
	case decode.SSEPsignb, decode.SSEPsignw, decode.SSEPsignd:
		size := laneSize(op)
		mapLanes(d, s, size, func(x, y uint64) uint64 {
			switch sy := signExt(y, size); {
			case sy < 0:
				return -x
			case sy == 0:
				return 0
			}
			return x
		})
	case decode.SSEPabsb, decode.SSEPabsw, decode.SSEPabsd:
		size := laneSize(op)
		mapLanes(d, s, size, func(_, y uint64) uint64 {
			if v := signExt(y, size); v < 0 {
				return uint64(-v)
			}
			return y
		})
	case decode.SSEPhminposuw:
		best, idx := lane(s, 2, 0), 0
		for i := 1; i < 8; i++ {
			if v := lane(s, 2, i); v < best {
				best, idx = v, i
			}
		}
		*d = vec{best | uint64(idx)<<16, 0}
	case decode.SSEBlendps, decode.SSEBlendpd, decode.SSEPblendw:
		size := laneSize(op)
		out := a
		for i := range 16 / size {
			if imm>>i&1 != 0 {
				setLane(&out, size, i, lane(s, size, i))
			}
		}
		*d = out
	case decode.SSEBlendvps, decode.SSEBlendvpd, decode.SSEPblendvb:
		size := laneSize(op)
		m := *x0
		out := a
		for i := range 16 / size {
			if lane(m, size, i)>>(8*size-1) != 0 {
				setLane(&out, size, i, lane(s, size, i))
			}
		}
		*d = out
	case decode.SSEMpsadbw:
		var out vec
		ao := 4 * int(imm>>2&1)
		bo := 4 * int(imm&3)
		for i := range 8 {
			var sum uint64
			for j := range 4 {
				x, y := lane(a, 1, ao+i+j), lane(s, 1, bo+j)
				sum += max(x, y) - min(x, y)
			}
			setLane(&out, 2, i, sum)
		}
		*d = out
	default:
		return false
	}
	return true
}

// interleave returns the elements of a and s of size bytes interleaved,
// starting at element `from` of each (0 for the low halves).
func interleave(a, s vec, size, from int) vec {
	var out vec
	n := 8 / size
	for i := range n {
		setLane(&out, size, 2*i, lane(a, size, from+i))
		setLane(&out, size, 2*i+1, lane(s, size, from+i))
	}
	return out
}

// add8 and sub8 are bytewise add/sub without carries between bytes.
func add8(a, b uint64) uint64 {
	const h = 0x8080808080808080
	return ((a &^ h) + (b &^ h)) ^ ((a ^ b) & h)
}

func sub8(a, b uint64) uint64 {
	const h = 0x8080808080808080
	return ((a | h) - (b &^ h)) ^ ((a ^ ^b) & h)
}

// minu8 is the bytewise unsigned minimum.
func minu8(a, b uint64) uint64 {
	var out uint64
	for i := 0; i < 64; i += 8 {
		x, y := a>>i&0xFF, b>>i&0xFF
		out |= min(x, y) << i
	}
	return out
}

// sseShift executes PSLL/PSRL/PSRA and PSLLDQ/PSRLDQ.
func (c *CPU) sseShift(in *decode.X86) sseResult {
	op := in.Op
	a1 := &in.Args[1]
	var count uint64
	if a1.Kind == decode.ArgImm {
		count = uint64(in.Imm & 0xFF)
	} else {
		s, r := c.readVM(in, a1)
		if r != sseOK {
			return r
		}
		count = s[0]
	}
	d := &c.regs.XMM[in.Args[0].Reg&15]
	switch op {
	case decode.SSEPslldq, decode.SSEPsrldq:
		n := uint(min(count, 16) * 8)
		if op == decode.SSEPslldq {
			*d = shl128(d[1], d[0], n)
		} else {
			*d = shr128(d[1], d[0], n)
		}
		return sseOK
	}
	size := laneSize(op)
	bitsz := uint64(8 * size)
	if f := sseShiftSWAR(op, size, count, d); f {
		return sseOK
	}
	var out vec
	for i := range 16 / size {
		x := lane(*d, size, i)
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
		setLane(&out, size, i, x)
	}
	*d = out
	return sseOK
}

// laneRep holds, for lane sizes 2, 4 and 8 bytes, the mask of every
// lane's bit 0 (multiplying a lane value by it repeats it in each lane).
var laneRep = [9]uint64{2: 0x0001000100010001, 4: 0x0000000100000001, 8: 1}

// sseShiftSWAR is sseShift's PSLL/PSRL/PSRA W/D/Q with whole-word
// arithmetic: one shift of each 64-bit half and a mask that drops the
// bits crossing into the next lane (and, for PSRA, fills the vacated
// top bits of negative lanes). It reports false for the other ops.
func sseShiftSWAR(op decode.X86Op, size int, count uint64, d *vec) bool {
	if size != 2 && size != 4 && size != 8 {
		return false
	}
	bits := uint64(8 * size)
	rep := laneRep[size]
	lane := ^uint64(0) >> (64 - bits) // one lane's mask
	switch op {
	case decode.SSEPsllw, decode.SSEPslld, decode.SSEPsllq:
		if count >= bits {
			*d = vec{}
			return true
		}
		m := (lane << count & lane) * rep
		*d = vec{d[0] << count & m, d[1] << count & m}
	case decode.SSEPsrlw, decode.SSEPsrld, decode.SSEPsrlq:
		if count >= bits {
			*d = vec{}
			return true
		}
		m := (lane >> count) * rep
		*d = vec{d[0] >> count & m, d[1] >> count & m}
	case decode.SSEPsraw, decode.SSEPsrad:
		c := min(count, bits-1)
		m := (lane >> c) * rep             // the shifted lane bits
		top := (lane &^ (lane >> c)) * rep // the vacated top bits
		sra := func(x uint64) uint64 {
			neg := (x >> (bits - 1) & rep) * lane // all ones in negative lanes
			return x>>c&m | neg&top
		}
		*d = vec{sra(d[0]), sra(d[1])}
	default:
		return false
	}
	return true
}

// shl128 and shr128 shift the 128-bit hi:lo by n bits (n <= 128).
func shl128(hi, lo uint64, n uint) vec {
	switch {
	case n >= 128:
		return vec{}
	case n >= 64:
		return vec{0, lo << (n - 64)}
	case n == 0:
		return vec{lo, hi}
	}
	return vec{lo << n, hi<<n | lo>>(64-n)}
}

func shr128(hi, lo uint64, n uint) vec {
	switch {
	case n >= 128:
		return vec{}
	case n >= 64:
		return vec{hi >> (n - 64), 0}
	case n == 0:
		return vec{lo, hi}
	}
	return vec{lo>>n | hi<<(64-n), hi >> n}
}

// maskmovdqu stores the bytes of Args[0] whose mask byte (Args[1]) has
// its top bit set to [RDI] (FS/GS overrides apply). Every selected byte
// is checked for a mapping before any is written; a write-protected but
// readable page can still leave earlier bytes written (as a page-crossing
// MASKMOVDQU may on hardware).
func (c *CPU) maskmovdqu(in *decode.X86) sseResult {
	v := c.regs.XMM[in.Args[0].Reg&15]
	m := c.regs.XMM[in.Args[1].Reg&15]
	mem := decode.X86Arg{Kind: decode.ArgMem, Reg: 7, Index: decode.NoReg, Scale: 1, Size: 16}
	mem.Flags = in.Seg << decode.ArgSegShift
	addr := c.sseEA(in, &mem)
	for i := range 16 {
		if lane(m, 1, i)&0x80 != 0 {
			if _, ok := c.tlb.Load8(addr + uint64(i)); !ok {
				return sseFault
			}
		}
	}
	for i := range 16 {
		if lane(m, 1, i)&0x80 != 0 {
			if !c.tlb.Store8(addr+uint64(i), uint8(lane(v, 1, i))) {
				return sseFault
			}
		}
	}
	return sseOK
}

// crc32c folds the low n bytes of v into crc (CRC-32C, reflected, as the
// CRC32 instruction computes it: no pre/post inversion).
func crc32c(crc uint32, v uint64, n int) uint32 {
	for i := range n {
		crc ^= uint32(v >> (8 * i) & 0xFF)
		for range 8 {
			crc = crc>>1 ^ 0x82F63B78&-(crc&1)
		}
	}
	return crc
}

// sseLaneSizes is the element size in bytes of the ops that share code
// between element sizes (indexed by op - X86SSEBase).
var sseLaneSizes [decode.SSEOpEnd - decode.X86SSEBase]uint8

func init() {
	for op, n := range map[decode.X86Op]uint8{
		decode.SSEBlendpd: 8, decode.SSEBlendps: 4, decode.SSEPblendw: 2,
		decode.SSEBlendvpd: 8, decode.SSEBlendvps: 4, decode.SSEPblendvb: 1,
		decode.SSEPabsb: 1, decode.SSEPabsw: 2, decode.SSEPabsd: 4,
		decode.SSEPsignb: 1, decode.SSEPsignw: 2, decode.SSEPsignd: 4,
		decode.SSEPcmpgtb: 1, decode.SSEPcmpgtw: 2, decode.SSEPcmpgtd: 4, decode.SSEPcmpgtq: 8,
		decode.SSEPmaxsb: 1, decode.SSEPmaxsw: 2, decode.SSEPmaxsd: 4,
		decode.SSEPmaxub: 1, decode.SSEPmaxuw: 2, decode.SSEPmaxud: 4,
		decode.SSEPminsb: 1, decode.SSEPminsw: 2, decode.SSEPminsd: 4,
		decode.SSEPminuw: 2, decode.SSEPminud: 4,
		decode.SSEPsllw: 2, decode.SSEPslld: 4, decode.SSEPsllq: 8,
		decode.SSEPsrlw: 2, decode.SSEPsrld: 4, decode.SSEPsrlq: 8,
		decode.SSEPsraw: 2, decode.SSEPsrad: 4,
		decode.SSEPunpcklbw: 1, decode.SSEPunpcklwd: 2, decode.SSEPunpckldq: 4, decode.SSEPunpcklqdq: 8,
		decode.SSEPunpckhbw: 1, decode.SSEPunpckhwd: 2, decode.SSEPunpckhdq: 4, decode.SSEPunpckhqdq: 8,
		decode.SSEUnpcklps: 4, decode.SSEUnpckhps: 4,
	} {
		sseLaneSizes[op-decode.X86SSEBase] = n
	}
}

// laneSize returns the element size of op.
func laneSize(op decode.X86Op) int { return int(sseLaneSizes[op-decode.X86SSEBase]) }

// SWAR lane masks: the top bit of every 16- and 32-bit lane.
const (
	hi16 = 0x8000800080008000
	hi32 = 0x8000000080000000
)

// sseIntFast computes the hottest packed integer ops (compiled C's
// vectorised loops) with whole-word arithmetic instead of lane loops; it
// reports false for every other op (sseIntOp then does the work).
func sseIntFast(op decode.X86Op, d *vec, s vec, imm int64) bool {
	a := *d
	switch op {
	case decode.SSEPand:
		*d = vec{a[0] & s[0], a[1] & s[1]}
	case decode.SSEPandn, decode.SSEAndnps:
		*d = vec{^a[0] & s[0], ^a[1] & s[1]}
	case decode.SSEPor:
		*d = vec{a[0] | s[0], a[1] | s[1]}
	case decode.SSEPxor:
		*d = vec{a[0] ^ s[0], a[1] ^ s[1]}
	case decode.SSEPaddq:
		*d = vec{a[0] + s[0], a[1] + s[1]}
	case decode.SSEPsubq:
		*d = vec{a[0] - s[0], a[1] - s[1]}
	case decode.SSEPaddw:
		*d = vec{(a[0]&^hi16 + s[0]&^hi16) ^ (a[0]^s[0])&hi16, (a[1]&^hi16 + s[1]&^hi16) ^ (a[1]^s[1])&hi16}
	case decode.SSEPaddd:
		*d = vec{(a[0]&^hi32 + s[0]&^hi32) ^ (a[0]^s[0])&hi32, (a[1]&^hi32 + s[1]&^hi32) ^ (a[1]^s[1])&hi32}
	case decode.SSEPsubw:
		*d = vec{(a[0] | hi16 - s[0]&^hi16) ^ (a[0]^^s[0])&hi16, (a[1] | hi16 - s[1]&^hi16) ^ (a[1]^^s[1])&hi16}
	case decode.SSEPsubd:
		*d = vec{(a[0] | hi32 - s[0]&^hi32) ^ (a[0]^^s[0])&hi32, (a[1] | hi32 - s[1]&^hi32) ^ (a[1]^^s[1])&hi32}
	case decode.SSEPmullw:
		*d = vec{mul16x4(a[0], s[0]), mul16x4(a[1], s[1])}
	case decode.SSEPmulhw:
		*d = vec{mulh16x4(a[0], s[0]), mulh16x4(a[1], s[1])}
	case decode.SSEPmulhuw:
		*d = vec{mulhu16x4(a[0], s[0]), mulhu16x4(a[1], s[1])}
	case decode.SSEPcmpgtd:
		gt := func(x, y uint64) uint64 {
			var r uint64
			if int32(x) > int32(y) {
				r = 0xFFFFFFFF
			}
			if int32(x>>32) > int32(y>>32) {
				r |= 0xFFFFFFFF << 32
			}
			return r
		}
		*d = vec{gt(a[0], s[0]), gt(a[1], s[1])}
	case decode.SSEPunpcklwd:
		*d = vec{zip16(a[0], s[0]), zip16(a[0]>>32, s[0]>>32)}
	case decode.SSEPunpckhwd:
		*d = vec{zip16(a[1], s[1]), zip16(a[1]>>32, s[1]>>32)}
	case decode.SSEPunpckldq, decode.SSEUnpcklps:
		*d = vec{a[0]&0xFFFFFFFF | s[0]<<32, a[0]>>32 | s[0]&^0xFFFFFFFF}
	case decode.SSEPunpckhdq, decode.SSEUnpckhps:
		*d = vec{a[1]&0xFFFFFFFF | s[1]<<32, a[1]>>32 | s[1]&^0xFFFFFFFF}
	case decode.SSEPunpcklqdq:
		*d = vec{a[0], s[0]}
	case decode.SSEPunpckhqdq:
		*d = vec{a[1], s[1]}
	case decode.SSEPshufd:
		dw := func(i int64) uint64 { return s[i>>1&1] >> (32 * (i & 1)) & 0xFFFFFFFF }
		*d = vec{dw(imm&3) | dw(imm>>2&3)<<32, dw(imm>>4&3) | dw(imm>>6&3)<<32}
	default:
		return false
	}
	return true
}

// mul16x4 multiplies four 16-bit lanes, keeping the low halves. The
// lanes are spelt out (constant shifts, no loop): pmullw is among
// compiled CoreMark's hottest SSE ops.
func mul16x4(a, b uint64) uint64 {
	return uint64(uint16(a)*uint16(b)) |
		uint64(uint16(a>>16)*uint16(b>>16))<<16 |
		uint64(uint16(a>>32)*uint16(b>>32))<<32 |
		uint64(uint16(a>>48)*uint16(b>>48))<<48
}

// mulh16x4 multiplies four signed 16-bit lanes, keeping the high halves.
func mulh16x4(a, b uint64) uint64 {
	h := func(x, y uint64) uint64 { return uint64(uint16(int32(int16(x)) * int32(int16(y)) >> 16)) }
	return h(a, b) | h(a>>16, b>>16)<<16 | h(a>>32, b>>32)<<32 | h(a>>48, b>>48)<<48
}

// mulhu16x4 multiplies four unsigned 16-bit lanes, keeping the high halves.
func mulhu16x4(a, b uint64) uint64 {
	h := func(x, y uint64) uint64 { return uint64(uint32(uint16(x)) * uint32(uint16(y)) >> 16) }
	return h(a, b) | h(a>>16, b>>16)<<16 | h(a>>32, b>>32)<<32 | h(a>>48, b>>48)<<48
}

// zip16 interleaves the low two 16-bit lanes of a and b: a0 b0 a1 b1.
func zip16(a, b uint64) uint64 {
	return a&0xFFFF | (b&0xFFFF)<<16 | (a>>16&0xFFFF)<<32 | (b>>16&0xFFFF)<<48
}

// movZX is MOVD/MOVQ between XMM and a general register or memory: into
// an XMM register the value is zero-extended to 128 bits; out of one its
// low lane is written (execSSE and execSSEHot share it).
func (c *CPU) movZX(in *decode.X86, a0, a1 *decode.X86Arg) sseResult {
	if a0.Kind != decode.ArgXMM {
		return c.writeGPM(in, a0, c.regs.XMM[a1.Reg&15][0])
	}
	var v uint64
	if a1.Kind == decode.ArgXMM {
		v = c.regs.XMM[a1.Reg&15][0]
	} else {
		var r sseResult
		if v, r = c.readGPM(in, a1); r != sseOK {
			return r
		}
	}
	c.regs.XMM[a0.Reg&15] = vec{v, 0}
	return sseOK
}
