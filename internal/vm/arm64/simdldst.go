package arm64

import (
	"encoding/binary"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// execSIMDLdSt executes LD1-4/ST1-4 (multiple structures, single lane)
// and LD1R-LD4R. Loads read all bytes before any register is written and
// stores check every page before any byte is written, so a fault leaves
// the state unchanged.
func (c *CPU) execSIMDLdSt(in *decode.A64) simdResult {
	r := &c.regs
	base := c.xregSP(in.Rn)
	selem := int(in.Imm2 & 0xff)
	sz := in.Size
	eb := 1 << sz
	load := in.Flags&decode.SIMDLoad != 0
	t := int(in.Rd)
	var acc int // bytes accessed, for the cache model
	switch in.Op {
	case decode.A64VLDST:
		rpt := int(in.Imm2 >> 8 & 0xff)
		regBytes := 8 << in.Q
		total := rpt * selem * regBytes
		acc = total
		nregs := rpt * selem
		if selem == 1 {
			// Registers are consecutive memory images: no element order.
			if !c.ldst1(base, t, nregs, in.Q, load) {
				return simdFault
			}
			break
		}
		var buf [64]byte
		elems := regBytes >> sz
		if load {
			if !c.tlb.LoadBytes(base, buf[:total]) {
				return simdFault
			}
			var regs [4][2]uint64
			off := 0
			for e := 0; e < elems; e++ {
				for s := 0; s < selem; s++ {
					setElem(&regs[s], e, sz, leBytes(buf[off:], eb))
					off += eb
				}
			}
			for k := 0; k < nregs; k++ {
				r.V[(t+k)%32] = regs[k]
			}
		} else {
			off := 0
			for e := 0; e < elems; e++ {
				for s := 0; s < selem; s++ {
					putLE(buf[off:], eb, elem(&r.V[(t+s)%32], e, sz))
					off += eb
				}
			}
			if !c.tlb.StoreBytes(base, buf[:total]) {
				return simdFault
			}
		}
	case decode.A64VLDSTL:
		index := int(in.Imm2 >> 16)
		total := selem * eb
		acc = total
		var buf [32]byte
		if load {
			if !c.tlb.LoadBytes(base, buf[:total]) {
				return simdFault
			}
			for s := 0; s < selem; s++ {
				setElem(&r.V[(t+s)%32], index, sz, leBytes(buf[s*eb:], eb))
			}
		} else {
			for s := 0; s < selem; s++ {
				putLE(buf[s*eb:], eb, elem(&r.V[(t+s)%32], index, sz))
			}
			if !c.tlb.StoreBytes(base, buf[:total]) {
				return simdFault
			}
		}
	case decode.A64VLDR:
		total := selem * eb
		acc = total
		if selem == 1 { // LD1R: one element, no byte buffer
			if !c.ld1r(in) {
				return simdFault
			}
			return simdOK
		}
		var buf [32]byte
		if !c.tlb.LoadBytes(base, buf[:total]) {
			return simdFault
		}
		for s := 0; s < selem; s++ {
			r.setVec(uint8((t+s)%32), dupElem(leBytes(buf[s*eb:], eb), sz), in.Q)
		}
	default:
		return simdUndefined
	}
	if c.cm != nil {
		c.cmData(base, uint64(acc), !load)
	}
	if in.Flags&decode.SIMDPost != 0 {
		off := in.Imm
		if in.Rm != 31 {
			off = c.xreg(in.Rm)
		}
		c.setXregSP(in.Rn, base+off)
	}
	return simdOK
}

// ldst1 loads or stores n consecutive registers (64 or 128 bits each) from
// or to consecutive memory at addr.
func (c *CPU) ldst1(addr uint64, t, n int, q uint8, load bool) bool {
	r := &c.regs
	tlb := c.tlb
	words := n << q // 64-bit words
	if load {
		var w [8]uint64
		for i := 0; i < words; i++ {
			v, ok := tlb.Load64(addr + uint64(8*i))
			if !ok {
				return false
			}
			w[i] = v
		}
		for k := 0; k < n; k++ {
			if q == 1 {
				r.V[(t+k)%32] = [2]uint64{w[2*k], w[2*k+1]}
			} else {
				r.V[(t+k)%32] = [2]uint64{w[k], 0}
			}
		}
		return true
	}
	var w [8]uint64
	for k := 0; k < n; k++ {
		v := &r.V[(t+k)%32]
		if q == 1 {
			w[2*k], w[2*k+1] = v[0], v[1]
		} else {
			w[k] = v[0]
		}
	}
	if addr&vm.PageMask+uint64(8*words) <= vm.PageSize {
		// One page: if the first store succeeds, all do.
		for i := 0; i < words; i++ {
			if !tlb.Store64(addr+uint64(8*i), w[i]) {
				return false
			}
		}
		return true
	}
	var buf [64]byte
	for i := 0; i < words; i++ {
		binary.LittleEndian.PutUint64(buf[8*i:], w[i])
	}
	return tlb.StoreBytes(addr, buf[:8*words])
}

// leBytes reads an n-byte little-endian value (n = 1, 2, 4 or 8).
func leBytes(b []byte, n int) uint64 {
	switch n {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// putLE writes an n-byte little-endian value.
func putLE(b []byte, n int, v uint64) {
	switch n {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// ld1r executes LD1R (one register, Imm2&0xff == 1: decode.A64VLDR) with
// its cache-model access and post-index writeback, or reports false,
// changing nothing, on a fault. The loop calls it directly (it reads no
// PC or NZCV), without execSIMD's dispatch; out of line, so that it does
// not take part in the loop's register allocation.
//
//go:noinline
func (c *CPU) ld1r(in *decode.A64) bool {
	base := c.xregSP(in.Rn)
	var v uint64
	var ok bool
	switch in.Size {
	case 0:
		var b uint8
		b, ok = c.tlb.Load8(base)
		v = uint64(b)
	case 1:
		var h uint16
		h, ok = c.tlb.Load16(base)
		v = uint64(h)
	case 2:
		var w uint32
		w, ok = c.tlb.Load32(base)
		v = uint64(w)
	default:
		v, ok = c.tlb.Load64(base)
	}
	if !ok {
		return false
	}
	c.regs.setVec(in.Rd, dupElem(v, in.Size), in.Q)
	if c.cm != nil {
		c.cmData(base, 1<<in.Size, false)
	}
	if in.Flags&decode.SIMDPost != 0 {
		off := in.Imm
		if in.Rm != 31 {
			off = c.xreg(in.Rm)
		}
		c.setXregSP(in.Rn, base+off)
	}
	return true
}
