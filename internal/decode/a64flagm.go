package decode

import "fmt"

// FEAT_LRCPC2 (LDAPUR*, STLUR*: load-acquire RCpc / store-release with an
// unscaled signed offset) and FEAT_FlagM/FlagM2 (CFINV, RMIF, SETF8,
// SETF16, AXFLAG, XAFLAG).

// A64FLAGM kinds, in Imm of an A64FLAGM record.
const (
	A64FlagCFINV  = iota // C = !C
	A64FlagXAFLAG        // external to Arm flag format
	A64FlagAXFLAG        // Arm to external flag format
	A64FlagRMIF          // NZCV bits in Cond (mask) = ROR(Rn, Amount)<3:0>
	A64FlagSETF          // N, Z, V from the low Amount (8 or 16) bits of Rn
)

// decodeLRCPC2 decodes "LDAPR/STLR (unscaled immediate)": size 011001 opc
// 0 imm9 00 Rn Rt (the caller has checked bits 29:24, 21 and 11:10).
func decodeLRCPC2(raw uint32, in *A64) {
	size := raw >> 30
	opc := raw >> 22 & 3
	rt := raw & 31
	in.Rn = uint8(raw >> 5 & 31)
	in.Imm = sext(raw>>12&0x1ff, 9)
	in.Size = uint8(size)
	switch {
	case opc == 0: // STLURB/H/W/X
		in.Op = A64STLUR
		in.Rd = rZR(rt)
		return
	case opc == 1: // LDAPURB/H/W/X: zero-extended
		in.Sf = uint8(size >> 1 & size & 1)
	case opc == 2 && size < 3: // LDAPURSB/SH/SW to 64 bits
		in.Flags = A64FlagSigned
		in.Sf = 1
	case opc == 3 && size < 2: // LDAPURSB/SH to 32 bits
		in.Flags = A64FlagSigned
	default:
		undef(in, A64WhyUnallocated)
		return
	}
	in.Op = A64LDAPUR
	in.Rd = wZR(rt)
}

// A64FlagSigned (A64LDAPUR): sign-extend the loaded value to Sf width.
const A64FlagSigned = 1

// decodeFlagMReg decodes RMIF (sf=1 op=0 S=1 11010000 imm6 00001 Rn 0
// mask) and SETF8/SETF16 (sf=0 op=0 S=1 11010000 000000 sz 0010 Rn 0 1101),
// the words of "add/subtract with carry" with op3 = xxx001 or xx0010.
func decodeFlagMReg(raw uint32, in *A64) {
	*in = A64{Raw: raw}
	switch {
	case raw&0xffe07c10 == 0xba000400: // RMIF
		in.Op = A64FLAGM
		in.Imm = A64FlagRMIF
		in.Rn = rZR(raw >> 5 & 31)
		in.Amount = uint8(raw >> 15 & 63)
		in.Cond = uint8(raw & 15)
	case raw&0xffffbc1f == 0x3a00080d: // SETF8, SETF16
		in.Op = A64FLAGM
		in.Imm = A64FlagSETF
		in.Rn = rZR(raw >> 5 & 31)
		in.Amount = 8
		if raw>>14&1 != 0 {
			in.Amount = 16
		}
	default:
		undef(in, A64WhyUnallocated)
	}
}

// disasmFlagM renders LDAPUR*, STLUR* and FlagM records (arm64asm does not
// know them).
func disasmFlagM(in *A64) string {
	switch in.Op {
	case A64FLAGM:
		switch in.Imm {
		case A64FlagCFINV:
			return "cfinv"
		case A64FlagXAFLAG:
			return "xaflag"
		case A64FlagAXFLAG:
			return "axflag"
		case A64FlagRMIF:
			return fmt.Sprintf("rmif %s, #%d, #%d", a64RegName(in.Rn, true), in.Amount, in.Cond)
		}
		return fmt.Sprintf("setf%d %s", in.Amount, a64RegName(in.Rn, false))
	case A64STLUR:
		return fmt.Sprintf("stlur%s %s, [%s, #%d]", [4]string{"b", "h", "", ""}[in.Size], a64RegName(in.Rd, in.Size == 3),
			a64RegName(in.Rn, true), int64(in.Imm))
	}
	name := "ldapur" + [4]string{"b", "h", "", ""}[in.Size]
	if in.Flags&A64FlagSigned != 0 {
		name = "ldapurs" + [4]string{"b", "h", "w", ""}[in.Size]
	}
	return fmt.Sprintf("%s %s, [%s, #%d]", name, a64RegName(in.Rd, in.Sf == 1), a64RegName(in.Rn, true), int64(in.Imm))
}
