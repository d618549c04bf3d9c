package arm64

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// NZCV is kept in the interpreter as a 4-bit value N<<3 | Z<<2 | C<<1 | V
// (PSTATE bits 31..28 shifted down).
const (
	flagV = 1
	flagC = 2
	flagZ = 4
	flagN = 8
)

// condTab[cond] has bit nzcv set when condition cond holds for flags nzcv.
var condTab = func() (t [16]uint16) {
	for c := 0; c < 16; c++ {
		for f := uint64(0); f < 16; f++ {
			if condHoldsSlow(uint8(c), f) {
				t[c] |= 1 << f
			}
		}
	}
	return
}()

// condHoldsSlow is the Arm ARM's ConditionHolds.
func condHoldsSlow(cond uint8, nzcv uint64) bool {
	n, z, c, v := nzcv>>3&1, nzcv>>2&1, nzcv>>1&1, nzcv&1
	var r bool
	switch cond >> 1 {
	case 0:
		r = z == 1
	case 1:
		r = c == 1
	case 2:
		r = n == 1
	case 3:
		r = v == 1
	case 4:
		r = c == 1 && z == 0
	case 5:
		r = n == v
	case 6:
		r = n == v && z == 0
	default:
		r = true
	}
	if cond&1 == 1 && cond != 15 {
		r = !r
	}
	return r
}

// condHolds evaluates condition cond (0..15) on the 4-bit flags.
func condHolds(cond uint8, nzcv uint64) bool {
	return condTab[cond&15]>>(nzcv&15)&1 != 0
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// wmask is the all-ones value of the operation width (sf 0: 32 bits).
//
// A table load costs the hot loop fewer instructions than the arithmetic
// (Sf is 0 or 1; 256 entries need no bounds check).
func wmask(sf uint8) uint64 {
	return wmaskTab[sf]
}

var wmaskTab = [256]uint64{0xffffffff, ^uint64(0)}

// addFlags returns a + b + cin truncated to the width and its NZCV
// (AddWithCarry in the Arm ARM). Subtraction is addFlags(a, ^b, 1).
// 32-bit operations are done in the top half of a 64-bit addition: the
// operands are shifted up by 32 and the carry-in enters through an
// all-ones low half, so one 64-bit add yields the exact 32-bit flags.
func addFlags(a, b, cin uint64, sf uint8) (uint64, uint64) {
	sh := uint(sf^1) << 5 & 63
	a = a<<sh | (1<<sh-1)&-cin
	b <<= sh
	res, c := bits.Add64(a, b, cin)
	nzcv := res>>63<<3 | c<<1 | (a^res)&(b^res)>>63
	if res == 0 {
		nzcv |= flagZ
	}
	return res >> sh, nzcv
}

// logicFlags is NZCV of a logical result (C = V = 0).
func logicFlags(res uint64, sf uint8) uint64 {
	if sf != 0 {
		return res>>63<<3 | b2u(res == 0)<<2
	}
	return res>>31&1<<3 | b2u(uint32(res) == 0)<<2
}

// shiftOp applies a decoded shift (decode.A64Shift*) to a register value.
func shiftOp(v uint64, typ, amt uint8) uint64 {
	switch typ {
	case decode.A64ShiftLSL:
		return v << amt
	case decode.A64ShiftLSR:
		return v >> amt
	case decode.A64ShiftASR:
		return uint64(int64(v) >> amt)
	case decode.A64ShiftROR:
		return bits.RotateLeft64(v, -int(amt))
	case decode.A64ShiftLSR32:
		return uint64(uint32(v) >> amt)
	case decode.A64ShiftASR32:
		return uint64(uint32(int32(v) >> amt))
	default: // ROR32
		return uint64(bits.RotateLeft32(uint32(v), -int(amt)))
	}
}

// extendOp applies a decoded extend (decode.A64Ext*) to a register value.
func extendOp(v uint64, opt uint8) uint64 {
	switch opt & 7 {
	case decode.A64ExtUXTB:
		return uint64(uint8(v))
	case decode.A64ExtUXTH:
		return uint64(uint16(v))
	case decode.A64ExtUXTW:
		return uint64(uint32(v))
	case decode.A64ExtSXTB:
		return uint64(int64(int8(v)))
	case decode.A64ExtSXTH:
		return uint64(int64(int16(v)))
	case decode.A64ExtSXTW:
		return uint64(int64(int32(v)))
	default: // UXTX, SXTX
		return v
	}
}

// rep32 makes a value whose rotation by r < 32 is the 32-bit rotation of
// its low half (sf 0); for sf 1 it is v itself.
func rep32(v uint64, sf uint8) uint64 {
	if sf != 0 {
		return v
	}
	v &= 0xffffffff
	return v | v<<32
}

// bitfield implements SBFM and BFM (UBFM is simpler and done inline).
func sbfm(in *decode.A64, src uint64) uint64 {
	bot := bits.RotateLeft64(rep32(src, in.Sf), -int(in.Amount)) & in.Imm
	top := -(src >> in.Cond & 1)
	return (top&^in.Imm2 | bot&in.Imm2) & wmask(in.Sf)
}

func bfm(in *decode.A64, dst, src uint64) uint64 {
	bot := dst&^in.Imm | bits.RotateLeft64(rep32(src, in.Sf), -int(in.Amount))&in.Imm
	return (dst&^in.Imm2 | bot&in.Imm2) & wmask(in.Sf)
}

func cls(v uint64, sf uint8) uint64 {
	if sf != 0 {
		return uint64(bits.LeadingZeros64((v^v<<1)>>1) - 1)
	}
	w := uint32(v)
	return uint64(bits.LeadingZeros32((w^w<<1)>>1) - 1)
}

func sdiv(a, b uint64, sf uint8) uint64 {
	if sf != 0 {
		x, y := int64(a), int64(b)
		switch {
		case y == 0:
			return 0
		case y == -1:
			return uint64(-x) // MinInt64 / -1 = MinInt64
		}
		return uint64(x / y)
	}
	x, y := int32(a), int32(b)
	switch {
	case y == 0:
		return 0
	case y == -1:
		return uint64(uint32(-x))
	}
	return uint64(uint32(x / y))
}

func udiv(a, b uint64, sf uint8) uint64 {
	if sf != 0 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	x, y := uint32(a), uint32(b)
	if y == 0 {
		return 0
	}
	return uint64(x / y)
}

func rev16(v uint64) uint64 {
	return (v&0x00ff00ff00ff00ff)<<8 | (v>>8)&0x00ff00ff00ff00ff
}

func rev32(v uint64) uint64 {
	return uint64(bits.ReverseBytes32(uint32(v))) | uint64(bits.ReverseBytes32(uint32(v>>32)))<<32
}

func smulh(a, b uint64) uint64 {
	hi, _ := bits.Mul64(a, b)
	// Signed correction: hi(a*b) - (a<0 ? b : 0) - (b<0 ? a : 0).
	hi -= b & uint64(int64(a)>>63)
	hi -= a & uint64(int64(b)>>63)
	return hi
}
