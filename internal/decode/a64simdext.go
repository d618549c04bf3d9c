package decode

// Advanced SIMD and FP extensions after Armv8.0: FEAT_RDM (SQRDMLAH,
// SQRDMLSH: vector, scalar and by element), FEAT_DotProd (SDOT, UDOT:
// vector and by element), FEAT_FRINTTS (FRINT32Z/X, FRINT64Z/X: scalar and
// vector), FEAT_JSCVT (FJCVTZS), FEAT_FCMA (FCMLA, FCADD; half, single
// and double precision, the half forms with FEAT_FP16) and FEAT_FHM
// (FMLAL, FMLAL2, FMLSL, FMLSL2: vector and by element, decoded by
// decodeThreeSame and decodeByElemExt). Field conventions as in a64simd.go: Size is the element size
// of the destination (H or S for RDM; S for the dot products, whose sources
// are bytes), Flags SIMDScalar/SIMDByElem, Imm the element index.
const (
	A64VSQRDMLAH A64Op = a64CryptoEnd + iota // Rd = sat(Rd + round(2*Rn*Rm >> esize))
	A64VSQRDMLSH                             // Rd = sat(Rd - …)
	A64VSDOT                                 // Rd.S[i] += Σ sext(Rn.B[4i+k]) * sext(Rm.B[4i+k])
	A64VUDOT                                 // unsigned
	A64FRINTTS                               // FRINT32Z/32X/64Z/64X (scalar): Imm2 bit 0 = X (FPCR rounding, else toward zero), bit 1 = 64-bit range
	A64VFRINTTS                              // the vector forms, Imm2 as for A64FRINTTS
	A64FJCVTZS                               // Rd(general, W) = JavaScript conversion of Dn; NZCV = 0Z00
	A64VFCMLA                                // complex multiply-accumulate (FEAT_FCMA): Imm2 = rotation/90 (0..3); Size 2 or 3
	A64VFCADD                                // complex add: Imm2 = 1 (#90) or 3 (#270)
	A64VFMLAL                                // Rd.S[i] += Rn.H[i+p] * Rm.H[i+p] widened, one rounding (FEAT_FHM): Imm2 = p, 0 (FMLAL) or the element count (FMLAL2); Size 2
	A64VFMLSL                                // Rd.S[i] -= …: FMLSL, FMLSL2

	a64SIMDExtEnd
)

var a64SIMDExtNames = [...]string{"sqrdmlah", "sqrdmlsh", "sdot", "udot", "frint32/64", "frint32/64", "fjcvtzs", "fcmla", "fcadd", "fmlal", "fmlsl"}

func a64SIMDExtName(op A64Op) string {
	if op < a64CryptoEnd || op >= a64SIMDExtEnd {
		return ""
	}
	return a64SIMDExtNames[op-a64CryptoEnd]
}

// decodeThreeExt decodes "Advanced SIMD (scalar) three same extra":
// (0 Q | 01) U 0111(0|1)0 size 0 Rm 1 opcode 1 Rn Rd. It changes in only
// when it accepts the word.
func decodeThreeExt(raw uint32, in *A64, scalar bool) bool {
	if raw&(1<<10) == 0 || raw&(1<<15) == 0 || raw&(1<<21) != 0 {
		return false
	}
	u := raw >> 29 & 1
	size := bf(raw, 22, 2)
	d := *in
	switch opcode := bf(raw, 11, 4); {
	case opcode <= 1 && u == 1 && (size == 1 || size == 2):
		d.Op = A64VSQRDMLAH + A64Op(opcode)
		d.Size = uint8(size)
	case opcode == 2 && size == 2 && !scalar:
		d.Op = A64VSDOT + A64Op(u)
		d.Size = 2
	case opcode&0b1100 == 0b1000 && u == 1 && !scalar && fcmaSize(size, d.Q): // FCMLA
		d.Op = A64VFCMLA
		d.Size = uint8(size)
		d.Imm2 = uint64(opcode & 3)
	case opcode&0b1101 == 0b1100 && u == 1 && !scalar && fcmaSize(size, d.Q): // FCADD
		d.Op = A64VFCADD
		d.Size = uint8(size)
		d.Imm2 = uint64(1 + opcode&2)
	default:
		return false
	}
	*in = d
	return true
}

// fcmaSize: FCMLA/FCADD of halves (4H, 8H; FEAT_FCMA with FEAT_FP16),
// singles (2S, 4S) and doubles (2D only).
func fcmaSize(size uint32, q uint8) bool { return size == 1 || size == 2 || size == 3 && q == 1 }

// decodeByElemExt decodes the by-element forms of RDM, DotProd, FCMLA
// and FMLAL/FMLSL:
// (0 Q | 01) U 0111(1|1)1 size L M Rm opcode H 0 Rn Rd. It changes in only
// when it accepts the word.
func decodeByElemExt(raw uint32, in *A64, scalar bool) bool {
	u := raw >> 29 & 1
	size := bf(raw, 22, 2)
	l, m, h := bf(raw, 21, 1), bf(raw, 20, 1), bf(raw, 11, 1)
	d := *in
	switch opcode := bf(raw, 12, 4); {
	case (opcode == 0b1101 || opcode == 0b1111) && u == 1:
		d.Op = A64VSQRDMLAH
		if opcode == 0b1111 {
			d.Op = A64VSQRDMLSH
		}
		switch size {
		case 1:
			d.Imm = uint64(h<<2 | l<<1 | m)
			d.Rm = uint8(bf(raw, 16, 4))
		case 2:
			d.Imm = uint64(h<<1 | l)
			d.Rm = uint8(m<<4 | bf(raw, 16, 4))
		default:
			return false
		}
	case opcode == 0b1110 && size == 2 && !scalar:
		d.Op = A64VSDOT + A64Op(u)
		d.Imm = uint64(h<<1 | l)
		d.Rm = uint8(m<<4 | bf(raw, 16, 4))
	case opcode&0b1001 == 0b0001 && u == 1 && (size == 1 || size == 2) && !scalar: // FCMLA (by element)
		// Imm indexes a complex pair of Vm, not an element: H:L of the
		// four half pairs (H = 0 for 4H, which has two), H of the two
		// single pairs (L = 0, 4S only).
		idx := h<<1 | l
		if size == 2 && (l != 0 || d.Q == 0) || size == 1 && h != 0 && d.Q == 0 {
			return false
		}
		if size == 2 {
			idx = h
		}
		d.Op = A64VFCMLA
		d.Imm = uint64(idx)
		d.Imm2 = uint64(opcode >> 1 & 3)
		d.Rm = uint8(m<<4 | bf(raw, 16, 4))
		d.Size = uint8(size)
		d.Flags |= SIMDByElem
		*in = d
		return true
	case opcode&0b0011 == 0 && opcode>>3 == u && size == 2 && !scalar: // FMLAL/FMLSL(2) (by element, FEAT_FHM)
		// opcode 0000 FMLAL, 0100 FMLSL, 1000 FMLAL2, 1100 FMLSL2; U is
		// opcode<3>. Vm is v0..v15, the index H:L:M of its eight halves.
		d.Op = A64VFMLAL
		if opcode&0b0100 != 0 {
			d.Op = A64VFMLSL
		}
		d.Imm = uint64(h<<2 | l<<1 | m)
		d.Rm = uint8(bf(raw, 16, 4))
		d.Imm2 = uint64(u) << (1 + d.Q)
		d.Size = 2
		d.Flags |= SIMDByElem
		*in = d
		return true
	default:
		return false
	}
	d.Size = uint8(size)
	d.Flags |= SIMDByElem
	*in = d
	return true
}
