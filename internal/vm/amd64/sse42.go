package amd64

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// pcmpstr executes PCMPESTRI/PCMPESTRM/PCMPISTRI/PCMPISTRM (SDM vol. 2,
// 4.1 "Imm8 control byte operation for PCMPESTRI / PCMPESTRM /
// PCMPISTRI / PCMPISTRM").
func (c *CPU) pcmpstr(in *decode.X86) sseResult {
	b, res := c.readVM(in, &in.Args[1])
	if res != sseOK {
		return res
	}
	a := c.regs.XMM[in.Args[0].Reg&15]
	imm := in.Imm
	signed := imm&2 != 0
	size, n := 1, 16
	if imm&1 != 0 {
		size, n = 2, 8
	}
	elem := func(v vec, i int) int64 {
		x := lane(v, size, i)
		if signed {
			return signExt(x, size)
		}
		return int64(x)
	}
	var la, lb int
	switch in.Op {
	case decode.SSEPcmpestri, decode.SSEPcmpestrm:
		w64 := in.Aux&decode.SSEAuxW64 != 0
		la = explicitLen(c.regs.GPR[0], w64, n)
		lb = explicitLen(c.regs.GPR[2], w64, n)
	default:
		la, lb = n, n
		for i := range n {
			if lane(a, size, i) == 0 {
				la = i
				break
			}
		}
		for i := range n {
			if lane(b, size, i) == 0 {
				lb = i
				break
			}
		}
	}

	var res1 uint32
	switch (imm >> 2) & 3 {
	case 0: // equal any: is b[j] in the set a[0..la)?
		for j := range lb {
			for i := range la {
				if elem(a, i) == elem(b, j) {
					res1 |= 1 << j
					break
				}
			}
		}
	case 1: // ranges: a holds (low, high) pairs
		for j := range lb {
			for i := 0; i+1 < la; i += 2 {
				if elem(a, i) <= elem(b, j) && elem(b, j) <= elem(a, i+1) {
					res1 |= 1 << j
					break
				}
			}
		}
	case 2: // equal each
		for i := range n {
			va, vb := i < la, i < lb
			if (!va && !vb) || (va && vb && elem(a, i) == elem(b, i)) {
				res1 |= 1 << i
			}
		}
	case 3: // equal ordered: does a[0..la) occur in b at j?
		for j := range n {
			match := true
			for i := 0; i < n-j && match; i++ {
				k := j + i
				switch {
				case i >= la: // a invalid: true
				case k >= lb: // a valid, b invalid: false
					match = false
				default:
					match = elem(a, i) == elem(b, k)
				}
			}
			if match {
				res1 |= 1 << j
			}
		}
	}
	res2 := res1
	switch (imm >> 4) & 3 {
	case 1:
		res2 = ^res1 & (uint32(1)<<n - 1)
	case 3:
		res2 = res1 ^ (uint32(1)<<lb - 1)
	}

	switch in.Op {
	case decode.SSEPcmpestri, decode.SSEPcmpistri:
		idx := n
		if res2 != 0 {
			if imm&0x40 != 0 {
				idx = 31 - bits.LeadingZeros32(res2)
			} else {
				idx = bits.TrailingZeros32(res2)
			}
		}
		c.regs.GPR[1] = uint64(idx)
	default:
		var m vec
		if imm&0x40 != 0 {
			for i := range n {
				if res2>>i&1 != 0 {
					setLane(&m, size, i, ^uint64(0))
				}
			}
		} else {
			m[0] = uint64(res2)
		}
		c.regs.XMM[0] = m
	}
	var f uint64
	if res2 != 0 {
		f |= flagCF
	}
	if lb < n {
		f |= flagZF
	}
	if la < n {
		f |= flagSF
	}
	if res2&1 != 0 {
		f |= flagOF
	}
	c.sseSetFlags(f)
	return sseOK
}

// explicitLen is the element count given in EAX/EDX (RAX/RDX with
// REX.W): its absolute value saturated to n.
func explicitLen(v uint64, w64 bool, n int) int {
	x := int64(v)
	if !w64 {
		x = int64(int32(v))
	}
	if x < 0 {
		x = -x
		if x < 0 { // most negative value
			return n
		}
	}
	return int(min(x, int64(n)))
}

// ---- FXSAVE / FXRSTOR ----

// FXSave writes the 512-byte FXSAVE image of the x87/SSE state (the
// layout Linux also uses in signal frames). uvm does not track the last
// x87 instruction/operand pointers or opcode, so FIP/FDP/FOP are zero in
// both the FXSAVE and FXSAVE64 layouts.
func (r *Regs) FXSave(b *[512]byte) {
	*b = [512]byte{}
	put16 := func(off int, v uint16) { b[off], b[off+1] = byte(v), byte(v>>8) }
	put32 := func(off int, v uint32) {
		for i := range 4 {
			b[off+i] = byte(v >> (8 * i))
		}
	}
	put16(0, r.FCW)
	put16(2, r.FSW)
	b[4] = r.FTW
	put32(24, r.MXCSR)
	put32(28, MXCSRMask)
	top := int(r.FSW>>11) & 7
	for i := range 8 {
		st := r.ST[(top+i)&7]
		putLE64(b[32+16*i:], st.Mant)
		put16(32+16*i+8, st.SignExp)
	}
	for i := range 16 {
		putLE64(b[160+16*i:], r.XMM[i][0])
		putLE64(b[160+16*i+8:], r.XMM[i][1])
	}
}

// FXRestore loads the state from an FXSAVE image. It returns false (and
// changes nothing) when the MXCSR image has reserved bits set, which
// makes FXRSTOR raise #GP (and Linux's sigreturn fail).
func (r *Regs) FXRestore(b *[512]byte) bool {
	get16 := func(off int) uint16 { return uint16(b[off]) | uint16(b[off+1])<<8 }
	get64 := func(off int) uint64 {
		var v uint64
		for i := range 8 {
			v |= uint64(b[off+i]) << (8 * i)
		}
		return v
	}
	mx := uint32(get16(24)) | uint32(get16(26))<<16
	if mx&^MXCSRMask != 0 {
		return false
	}
	r.MXCSR = mx
	r.FCW = get16(0)
	r.FSW = get16(2)
	r.FTW = b[4]
	top := int(r.FSW>>11) & 7
	for i := range 8 {
		r.ST[(top+i)&7] = F80{Mant: get64(32 + 16*i), SignExp: get16(32 + 16*i + 8)}
	}
	for i := range 16 {
		r.XMM[i] = vec{get64(160 + 16*i), get64(160 + 16*i + 8)}
	}
	return true
}

func (c *CPU) fxsave(in *decode.X86) sseResult {
	addr := c.sseEA(in, &in.Args[0])
	if addr&15 != 0 {
		return sseGP
	}
	var b [512]byte
	c.regs.FXSave(&b)
	if !c.tlb.StoreBytes(addr, b[:]) {
		return sseFault
	}
	return sseOK
}

func (c *CPU) fxrstor(in *decode.X86) sseResult {
	addr := c.sseEA(in, &in.Args[0])
	if addr&15 != 0 {
		return sseGP
	}
	var b [512]byte
	if !c.tlb.LoadBytes(addr, b[:]) {
		return sseFault
	}
	if !c.regs.FXRestore(&b) {
		return sseGP
	}
	return sseOK
}
