package uprobes

// A table-driven x86-64 instruction layout decoder in the spirit of the
// kernel's arch/x86/lib/insn.c: it finds the prefixes, REX/VEX/EVEX, the
// opcode, ModRM, SIB, displacement and immediate of an instruction
// without knowing its semantics, which is all the uprobe analysis needs
// (the kernel analyses instructions it cannot execute either). Only
// 64-bit mode is modelled (uvm runs no compat tasks).

// x86Insn is the layout of one decoded instruction.
type x86Insn struct {
	length int

	// Legacy prefixes in order (insn->prefixes; unique values).
	prefixes  [4]byte
	nprefixes int
	rawPfx    int // number of legacy prefix bytes, with repeats

	rex    byte // REX byte, 0 when absent
	rexOff int
	rex2   byte // REX2 (D5) payload, when rex2N is 2
	rex2N  int

	// VEX/EVEX: vexN is 2 (C5), 3 (C4) or 4 (EVEX 62); vex holds the
	// prefix bytes with byte 2 faked for VEX2 as the kernel does
	// (second byte & 0x7f) so vvvv is always in vex[2] bits 6..3.
	vexN   int
	vexOff int
	vex    [4]byte
	vexMap byte // 1: 0F, 2: 0F38, 3: 0F3A

	// Opcode bytes (insn->opcode): for legacy encodings 1..3 bytes
	// (0F, 0F 38, 0F 3A escapes included); for VEX/EVEX the one opcode
	// byte after the prefix (nbytes = 1).
	opcode [3]byte
	opN    int
	opOff  int

	hasModRM bool
	modrm    byte
	modrmOff int
	hasSIB   bool
	dispN    int
	immOff   int
	immN     int
	imm      int64 // first immediate, sign-extended (insn->immediate.value)
}

func (x *x86Insn) hasPrefix(p byte) bool {
	for i := 0; i < x.nprefixes; i++ {
		if x.prefixes[i] == p {
			return true
		}
	}
	return false
}

// opcode1/opcode2 are OPCODE1()/OPCODE2().
func (x *x86Insn) opcode1() byte { return x.opcode[0] }
func (x *x86Insn) opcode2() byte { return x.opcode[1] }

func (x *x86Insn) modrmReg() byte { return x.modrm >> 3 & 7 }

// ripRelative is insn_rip_relative: ModRM mod=00, rm=101.
func (x *x86Insn) ripRelative() bool {
	return x.hasModRM && x.modrm>>6 == 0 && x.modrm&7 == 5
}

func isLegacyPrefix(b byte) bool {
	switch b {
	case 0x66, 0x67, 0xF0, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65:
		return true
	}
	return false
}

// oneByteModRM reports whether a one-byte opcode takes a ModRM byte.
func oneByteModRM(op byte) bool {
	switch {
	case op < 0x40:
		return op&7 < 4
	case op == 0x62, op == 0x63, op == 0x69, op == 0x6B:
		return true
	case op >= 0x80 && op <= 0x8F:
		return true
	case op == 0xC0, op == 0xC1, op == 0xC6, op == 0xC7:
		return true
	case op >= 0xD0 && op <= 0xD3, op >= 0xD8 && op <= 0xDF:
		return true
	case op == 0xF6, op == 0xF7, op == 0xFE, op == 0xFF:
		return true
	}
	return false
}

// twoByteModRM reports whether 0F op takes a ModRM byte.
func twoByteModRM(op byte) bool {
	switch {
	case op >= 0x04 && op <= 0x0C:
		return false // invalid, SYSCALL, CLTS, SYSRET, INVD, WBINVD, UD2
	case op == 0x0E:
		return false // FEMMS
	case op >= 0x30 && op <= 0x37:
		return false // WRMSR … GETSEC
	case op == 0x39, op >= 0x3B && op <= 0x3F:
		return false // reserved
	case op == 0x77:
		return false // EMMS
	case op >= 0x80 && op <= 0x8F:
		return false // Jcc rel32
	case op == 0xA0, op == 0xA1, op == 0xA2, op == 0xA8, op == 0xA9, op == 0xAA:
		return false // PUSH/POP FS/GS, CPUID, RSM
	case op >= 0xC8 && op <= 0xCF:
		return false // BSWAP
	}
	return true
}

// decodeX86 decodes the layout of the instruction at the start of b.
// ok is false when the bytes do not hold a complete instruction of at
// most 15 bytes (the kernel's insn_decode failing: -ENOEXEC).
func decodeX86(b []byte) (x x86Insn, ok bool) {
	n := len(b)
	if n > 15 {
		n = 15
	}
	i := 0
	opsz, adsz := 4, 8
	// Legacy prefixes.
	for i < n && isLegacyPrefix(b[i]) {
		p := b[i]
		if !x.hasPrefix(p) && x.nprefixes < len(x.prefixes) {
			x.prefixes[x.nprefixes] = p
			x.nprefixes++
		}
		switch p {
		case 0x66:
			opsz = 2
		case 0x67:
			adsz = 4
		}
		i++
	}
	x.rawPfx = i
	if i >= n {
		return x, false
	}
	// REX (must be the last prefix).
	if b[i]&0xF0 == 0x40 {
		x.rex, x.rexOff = b[i], i
		if b[i]&8 != 0 {
			opsz = 8
		}
		i++
		if i >= n {
			return x, false
		}
	}
	// REX2 (APX, D5 payload; v6.10's decoder): OPCODE1 is the byte after
	// the payload, in map 0 or, with payload bit 7 (M0), map 1 (0F xx).
	// D5 is AAD in 32-bit code only, so the kernel accepts "d5 ..." by
	// the table entry of the next opcode (verified on v6.18.44).
	if x.rex == 0 && b[i] == 0xD5 {
		if i+2 >= n {
			return x, false
		}
		x.rex2, x.rex2N = b[i+1], 2
		if x.rex2&8 != 0 {
			opsz = 8
		}
		i += 2
		op := b[i]
		x.opOff = i
		x.opcode[0] = op
		x.opN = 1
		i++
		if x.rex2&0x80 != 0 {
			x.hasModRM = twoByteModRM(op)
			switch {
			case op >= 0x70 && op <= 0x73, op == 0xA4, op == 0xAC, op == 0xBA, op == 0xC2, op == 0xC4, op == 0xC5, op == 0xC6:
				x.immN = 1
			case op >= 0x80 && op <= 0x8F:
				x.immN = 4
			}
		} else {
			x.hasModRM = oneByteModRM(op)
			x.immN = oneByteImm(op, opsz, adsz)
			if op == 0xF6 || op == 0xF7 {
				x.immN = -int(op)
			}
		}
		return x.finish(b, i, n)
	}
	// VEX / EVEX (always in 64-bit mode).
	switch b[i] {
	case 0xC5:
		if i+2 >= n || x.rex != 0 {
			return x, false
		}
		x.vexN, x.vexOff = 2, i
		x.vex[0], x.vex[1], x.vex[2] = b[i], b[i+1], b[i+1]&0x7F
		x.vexMap = 1
		i += 2
	case 0xC4:
		if i+3 >= n || x.rex != 0 {
			return x, false
		}
		x.vexN, x.vexOff = 3, i
		x.vex[0], x.vex[1], x.vex[2] = b[i], b[i+1], b[i+2]
		x.vexMap = b[i+1] & 0x1F
		i += 3
	case 0x62:
		if i+4 >= n || x.rex != 0 {
			return x, false
		}
		x.vexN, x.vexOff = 4, i
		x.vex[0], x.vex[1], x.vex[2], x.vex[3] = b[i], b[i+1], b[i+2], b[i+3]
		x.vexMap = b[i+1] & 0x07
		i += 4
	}
	x.opOff = i
	if x.vexN != 0 {
		if x.vexMap < 1 || x.vexMap > 3 {
			return x, false
		}
		if x.vex[2]&0x80 != 0 {
			opsz = 8
		}
		x.opcode[0] = b[i]
		x.opN = 1
		i++
		op := x.opcode[0]
		x.hasModRM = !(x.vexMap == 1 && op == 0x77)
		switch {
		case x.vexMap == 3:
			x.immN = 1
		case x.vexMap == 1 && (op >= 0x70 && op <= 0x73 || op == 0xC2 || op == 0xC4 || op == 0xC5 || op == 0xC6):
			x.immN = 1
		}
		return x.finish(b, i, n)
	}
	op := b[i]
	x.opcode[0] = op
	x.opN = 1
	i++
	if op != 0x0F {
		x.hasModRM = oneByteModRM(op)
		x.immN = oneByteImm(op, opsz, adsz)
		if op == 0xF6 || op == 0xF7 {
			// TEST r/m, imm only for /0 and /1: known after ModRM.
			x.immN = -int(op)
		}
		return x.finish(b, i, n)
	}
	if i >= n {
		return x, false
	}
	op2 := b[i]
	x.opcode[1] = op2
	x.opN = 2
	i++
	switch op2 {
	case 0x38, 0x3A:
		if i >= n {
			return x, false
		}
		x.opcode[2] = b[i]
		x.opN = 3
		i++
		x.hasModRM = true
		if op2 == 0x3A {
			x.immN = 1
		}
		return x.finish(b, i, n)
	}
	x.hasModRM = twoByteModRM(op2)
	switch {
	case op2 >= 0x70 && op2 <= 0x73, op2 == 0xA4, op2 == 0xAC, op2 == 0xBA,
		op2 == 0xC2, op2 == 0xC4, op2 == 0xC5, op2 == 0xC6, op2 == 0x0F:
		x.immN = 1
	case op2 >= 0x80 && op2 <= 0x8F:
		x.immN = 4 // Jcc rel32 (force64: 66 does not shrink it)
	}
	return x.finish(b, i, n)
}

// oneByteImm is the immediate size of a one-byte opcode in 64-bit mode.
func oneByteImm(op byte, opsz, adsz int) int {
	iz := 4
	if opsz == 2 {
		iz = 2
	}
	switch {
	case op < 0x40 && op&7 == 4:
		return 1
	case op < 0x40 && op&7 == 5:
		return iz
	case op == 0x68, op == 0x69, op == 0x81, op == 0xA9, op == 0xC7:
		return iz
	case op == 0x6A, op == 0x6B, op == 0x80, op == 0x82, op == 0x83, op == 0xA8,
		op == 0xC0, op == 0xC1, op == 0xC6, op == 0xCD, op == 0xD4, op == 0xD5, op == 0xEB:
		return 1
	case op >= 0x70 && op <= 0x7F, op >= 0xB0 && op <= 0xB7, op >= 0xE0 && op <= 0xE7:
		return 1
	case op >= 0xA0 && op <= 0xA3:
		return adsz // moffs
	case op >= 0xB8 && op <= 0xBF:
		if opsz == 8 {
			return 8
		}
		return iz
	case op == 0xC2, op == 0xCA:
		return 2
	case op == 0xC8:
		return 3 // iw, ib
	case op == 0xE8, op == 0xE9:
		return 4 // rel32 (force64)
	case op == 0x9A, op == 0xEA:
		return 6 // ptr16:32 (invalid in 64-bit mode)
	}
	return 0
}

// finish decodes ModRM, SIB, displacement and immediate from b[i:].
func (x *x86Insn) finish(b []byte, i, n int) (x86Insn, bool) {
	if x.hasModRM {
		if i >= n {
			return *x, false
		}
		x.modrm, x.modrmOff = b[i], i
		i++
		mod, rm := x.modrm>>6, x.modrm&7
		if mod != 3 {
			if rm == 4 {
				if i >= n {
					return *x, false
				}
				x.hasSIB = true
				if mod == 0 && b[i]&7 == 5 {
					x.dispN = 4
				}
				i++
			}
			switch {
			case mod == 1:
				x.dispN = 1
			case mod == 2:
				x.dispN = 4
			case mod == 0 && rm == 5:
				x.dispN = 4
			}
		}
	}
	i += x.dispN
	if x.immN < 0 {
		// F6/F7: TEST has an immediate.
		x.immN = 0
		if x.modrmReg() < 2 {
			if x.opcode[0] == 0xF6 {
				x.immN = 1
			} else if x.hasPrefix(0x66) && x.rex&8 == 0 {
				x.immN = 2
			} else {
				x.immN = 4
			}
		}
	}
	x.immOff = i
	i += x.immN
	if i > n {
		return *x, false
	}
	if x.immN > 0 {
		var v uint64
		k := x.immN
		if k > 8 {
			k = 8
		}
		if k == 6 || k == 3 {
			k = 2
		}
		for j := k - 1; j >= 0; j-- {
			v = v<<8 | uint64(b[x.immOff+j])
		}
		x.imm = sext(v, uint(k*8))
	}
	x.length = i
	return *x, true
}
