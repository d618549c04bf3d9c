package amd64

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// Lazy flag evaluation: arithmetic instructions record their operands and
// result (masked to the operation width) instead of computing six status
// flags; Jcc/SETcc/CMOVcc evaluate only the condition they need, and
// anything that reads RFLAGS as a whole materialises it.
//
// Undefined flags follow QEMU's choices (so that lockstep traces against
// qemu-x86_64 agree): AF = 0 after logic ops, shifts and multiplies; after
// MUL/IMUL SF, ZF and PF are computed from the low half of the result.

const (
	lfNone  = iota // c.flags is complete
	lfAdd          // la + lb = lr
	lfAdc          // la + lb + lc = lr
	lfSub          // la - lb = lr (also CMP, NEG uses lfNeg)
	lfSbb          // la - lb - lc = lr
	lfLogic        // lr; CF = OF = AF = 0
	lfInc          // la + 1 = lr, CF = lc
	lfDec          // la - 1 = lr, CF = lc
	lfNeg          // 0 - la = lr
	lfMul          // lr = low half; CF = OF = lc
	lfShl          // SHL by a non-zero count: la = value shifted by count-1
	lfShr          // SHR/SAR by a non-zero count: la = value shifted by count-1
)

// parityTable[b] is rfPF when b has an even number of set bits.
var parityTable = func() (t [256]uint8) {
	for i := range t {
		if bits.OnesCount8(uint8(i))%2 == 0 {
			t[i] = rfPF
		}
	}
	return
}()

// signBit returns the sign bit of width w (bytes).
func signBit(w uint8) uint64 { return 1 << (8*uint(w) - 1) }

// szp computes SF, ZF and PF of a result masked to width w.
func szp(r uint64, w uint8) uint64 {
	f := uint64(parityTable[uint8(r)])
	if r == 0 {
		f |= rfZF
	}
	if r&signBit(w) != 0 {
		f |= rfSF
	}
	return f
}

// lazyStatus computes CF PF AF ZF SF OF from the lazy state.
func (c *CPU) lazyStatus() uint64 {
	w := c.lw
	a, b, r := c.la, c.lb, c.lr
	sign := signBit(w)
	f := szp(r, w)
	switch c.lop {
	case lfAdd:
		if r < a {
			f |= rfCF
		}
		if (a^r)&(b^r)&sign != 0 {
			f |= rfOF
		}
		f |= (a ^ b ^ r) & rfAF
	case lfAdc:
		if r < a || (c.lc != 0 && r == a) {
			f |= rfCF
		}
		if (a^r)&(b^r)&sign != 0 {
			f |= rfOF
		}
		f |= (a ^ b ^ r) & rfAF
	case lfSub:
		if a < b {
			f |= rfCF
		}
		if (a^b)&(a^r)&sign != 0 {
			f |= rfOF
		}
		f |= (a ^ b ^ r) & rfAF
	case lfSbb:
		if a < b || (c.lc != 0 && a == b) {
			f |= rfCF
		}
		if (a^b)&(a^r)&sign != 0 {
			f |= rfOF
		}
		f |= (a ^ b ^ r) & rfAF
	case lfLogic:
	case lfInc:
		f |= c.lc & rfCF
		if r == sign {
			f |= rfOF
		}
		f |= (a ^ 1 ^ r) & rfAF
	case lfDec:
		f |= c.lc & rfCF
		if a == sign {
			f |= rfOF
		}
		f |= (a ^ 1 ^ r) & rfAF
	case lfNeg:
		if a != 0 {
			f |= rfCF
		}
		if a == sign {
			f |= rfOF
		}
		f |= (a ^ r) & rfAF
	case lfMul:
		if c.lc != 0 {
			f |= rfCF | rfOF
		}
	case lfShl:
		f |= (a >> (8*uint(w) - 1)) & 1
		f |= (((a ^ r) >> (8*uint(w) - 1)) & 1) << 11
	case lfShr:
		f |= a & 1
		f |= (((a ^ r) >> (8*uint(w) - 1)) & 1) << 11
	}
	return f
}

// rflags returns the materialised RFLAGS.
func (c *CPU) rflags() uint64 {
	if c.lop == lfNone {
		return c.flags
	}
	return c.flags&^statusMask | c.lazyStatus()
}

// materialize folds the lazy state into c.flags.
func (c *CPU) materialize() {
	if c.lop != lfNone {
		c.flags = c.flags&^statusMask | c.lazyStatus()
		c.lop = lfNone
	}
}

// setStatusFlags replaces CF PF AF ZF SF OF with the bits of f.
func (c *CPU) setStatusFlags(f uint64) {
	c.materialize()
	c.flags = c.flags&^statusMask | f&statusMask
}

// cf returns the carry flag as 0 or 1.
func (c *CPU) cf() uint64 {
	switch c.lop {
	case lfNone:
		return c.flags & rfCF
	case lfAdd:
		if c.lr < c.la {
			return 1
		}
		return 0
	case lfSub:
		if c.la < c.lb {
			return 1
		}
		return 0
	case lfLogic:
		return 0
	case lfInc, lfDec:
		return c.lc & 1
	case lfAdc:
		if c.lr < c.la || (c.lc != 0 && c.lr == c.la) {
			return 1
		}
		return 0
	case lfSbb:
		if c.la < c.lb || (c.lc != 0 && c.la == c.lb) {
			return 1
		}
		return 0
	case lfNeg:
		if c.la != 0 {
			return 1
		}
		return 0
	case lfMul:
		if c.lc != 0 {
			return 1
		}
		return 0
	case lfShl:
		return (c.la >> (8*uint(c.lw) - 1)) & 1
	case lfShr:
		return c.la & 1
	}
	return c.lazyStatus() & rfCF
}

// cond evaluates condition code cc (0..15). CMP/SUB and logic results,
// the common producers before a Jcc, are evaluated without materialising
// the flags.
func (c *CPU) cond(cc uint8) bool {
	switch c.lop {
	case lfSub:
		a, b := c.la, c.lb
		switch cc {
		case 0x2:
			return a < b
		case 0x3:
			return a >= b
		case 0x4:
			return a == b
		case 0x5:
			return a != b
		case 0x6:
			return a <= b
		case 0x7:
			return a > b
		case 0xC, 0xD, 0xE, 0xF:
			sh := 64 - 8*uint(c.lw)
			sa, sb := int64(a<<sh), int64(b<<sh)
			switch cc {
			case 0xC:
				return sa < sb
			case 0xD:
				return sa >= sb
			case 0xE:
				return sa <= sb
			default:
				return sa > sb
			}
		}
	case lfLogic:
		r := c.lr
		neg := r&signBit(c.lw) != 0
		switch cc {
		case 0x0, 0x2: // O, B
			return false
		case 0x1, 0x3: // NO, AE
			return true
		case 0x4, 0x6: // E, BE
			return r == 0
		case 0x5, 0x7: // NE, A
			return r != 0
		case 0x8, 0xC: // S, L
			return neg
		case 0x9, 0xD: // NS, GE
			return !neg
		case 0xE: // LE
			return r == 0 || neg
		case 0xF: // G
			return r != 0 && !neg
		}
	}
	return condFlags(c.rflags(), cc)
}

// condFlags evaluates a condition code on materialised flags.
func condFlags(f uint64, cc uint8) bool {
	var t bool
	switch cc >> 1 {
	case 0:
		t = f&rfOF != 0
	case 1:
		t = f&rfCF != 0
	case 2:
		t = f&rfZF != 0
	case 3:
		t = f&(rfCF|rfZF) != 0
	case 4:
		t = f&rfSF != 0
	case 5:
		t = f&rfPF != 0
	case 6:
		t = (f&rfSF != 0) != (f&rfOF != 0)
	default:
		t = f&rfZF != 0 || (f&rfSF != 0) != (f&rfOF != 0)
	}
	return t != (cc&1 != 0)
}

// Flag setters used by the ALU ops (operands and result already masked).

func (c *CPU) setAdd(a, b, r uint64, w uint8) {
	c.lop, c.lw, c.la, c.lb, c.lr = lfAdd, w, a, b, r
}

func (c *CPU) setSub(a, b, r uint64, w uint8) {
	c.lop, c.lw, c.la, c.lb, c.lr = lfSub, w, a, b, r
}

func (c *CPU) setLogic(r uint64, w uint8) {
	c.lop, c.lw, c.lr = lfLogic, w, r
}

// aluResult computes op (X86Add..X86Test) on masked operands; cin is the
// carry for ADC/SBB and m the width mask.
func aluResult(op decode.X86Op, a, b, cin uint64, m uint64) uint64 {
	switch op {
	case decode.X86Add:
		return (a + b) & m
	case decode.X86Or:
		return a | b
	case decode.X86Adc:
		return (a + b + cin) & m
	case decode.X86Sbb:
		return (a - b - cin) & m
	case decode.X86And, decode.X86Test:
		return a & b
	case decode.X86Sub, decode.X86Cmp:
		return (a - b) & m
	case decode.X86Xor:
		return a ^ b
	}
	return 0
}

// setAluFlags records the flags of an ALU op.
func (c *CPU) setAluFlags(op decode.X86Op, a, b, r, cin uint64, w uint8) {
	switch op {
	case decode.X86Add:
		c.setAdd(a, b, r, w)
	case decode.X86Adc:
		c.lop, c.lw, c.la, c.lb, c.lr, c.lc = lfAdc, w, a, b, r, cin
	case decode.X86Sbb:
		c.lop, c.lw, c.la, c.lb, c.lr, c.lc = lfSbb, w, a, b, r, cin
	case decode.X86Sub, decode.X86Cmp:
		c.setSub(a, b, r, w)
	default:
		c.setLogic(r, w)
	}
}
