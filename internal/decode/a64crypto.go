package decode

// The Armv8 cryptographic extensions: FEAT_AES (AESE, AESD, AESMC,
// AESIMC), FEAT_PMULL (PMULL/PMULL2 of 64-bit elements), FEAT_SHA1,
// FEAT_SHA256, FEAT_SHA512 and FEAT_SHA3 (EOR3, RAX1, XAR, BCAX). SM3 and
// SM4 are not implemented (rejected as FP/SIMD encodings uvm lacks).
//
// Register fields are V registers 0..31 as encoded; the ops write all 128
// bits of Rd (SHA1H writes the S register, zeroing the rest).

// Crypto op numbers, after the Armv8.0 FP/SIMD ops.
const (
	A64AESE      A64Op = a64SIMDEnd + iota // Rd = SubBytes(ShiftRows(Rd ^ Rn))
	A64AESD                                // Rd = InvSubBytes(InvShiftRows(Rd ^ Rn))
	A64AESMC                               // Rd = MixColumns(Rn)
	A64AESIMC                              // Rd = InvMixColumns(Rn)
	A64PMULL64                             // Rd.1Q = Rn.D[Q] clmul Rm.D[Q] (PMULL, PMULL2 with Q = 1)
	A64SHA1C                               // Qd, Sn, Vm.4S
	A64SHA1P                               //
	A64SHA1M                               //
	A64SHA1SU0                             // Vd, Vn, Vm
	A64SHA256H                             // Qd, Qn, Vm.4S
	A64SHA256H2                            //
	A64SHA256SU1                           // Vd, Vn, Vm
	A64SHA1H                               // Sd = ROL(Sn, 30)
	A64SHA1SU1                             // Vd, Vn
	A64SHA256SU0                           // Vd, Vn
	A64SHA512H                             // Qd, Qn, Vm.2D
	A64SHA512H2                            //
	A64SHA512SU1                           // Vd.2D, Vn.2D, Vm.2D
	A64SHA512SU0                           // Vd.2D, Vn.2D
	A64RAX1                                // Vd.2D = Vn ^ ROL(Vm, 1)
	A64EOR3                                // Vd.16B = Vn ^ Vm ^ Va (Ra)
	A64BCAX                                // Vd.16B = Vn ^ (Vm &^ Va)
	A64XAR                                 // Vd.2D = ROR(Vn ^ Vm, Imm)

	a64CryptoEnd
)

// A64CryptoBase is the first crypto op; ops from it on (the crypto ops and
// the later SIMD extensions of a64simdext.go) are executed outside the
// interpreter's Armv8.0 FP/SIMD switch.
const A64CryptoBase = A64AESE

var a64CryptoNames = [...]string{
	"aese", "aesd", "aesmc", "aesimc", "pmull", "sha1c", "sha1p", "sha1m", "sha1su0",
	"sha256h", "sha256h2", "sha256su1", "sha1h", "sha1su1", "sha256su0",
	"sha512h", "sha512h2", "sha512su1", "sha512su0", "rax1", "eor3", "bcax", "xar",
}

// a64CryptoName names a crypto op ("" for others).
func a64CryptoName(op A64Op) string {
	if op >= a64CryptoEnd {
		return a64SIMDExtName(op)
	}
	if op < A64CryptoBase {
		return ""
	}
	return a64CryptoNames[op-A64CryptoBase]
}

// decodeA64Crypto decodes the cryptographic extension groups; it returns
// false for every other word.
func decodeA64Crypto(raw uint32, in *A64) bool {
	d := A64{Raw: raw, Rd: uint8(raw & 31), Rn: uint8(raw >> 5 & 31), Rm: uint8(raw >> 16 & 31), Q: 1}
	switch {
	case raw&0xfffe0c00 == 0x4e280800: // AES: 0100 1110 00 10100 opcode 10 Rn Rd
		op := raw >> 12 & 31
		if op < 4 || op > 7 {
			return false
		}
		d.Op = A64AESE + A64Op(op-4)
	case raw&0xffe08c00 == 0x5e000000: // SHA three-register: 0101 1110 00 0 Rm 0 opcode 00 Rn Rd
		op := raw >> 12 & 7
		if op == 7 {
			return false
		}
		d.Op = A64SHA1C + A64Op(op)
	case raw&0xfffe0c00 == 0x5e280800: // SHA two-register: 0101 1110 00 10100 opcode 10 Rn Rd
		op := raw >> 12 & 31
		if op > 2 {
			return false
		}
		d.Op = A64SHA1H + A64Op(op)
	case raw&0xffe0b000 == 0xce608000: // SHA512 three-register: 1100 1110 011 Rm 1 O 00 opcode Rn Rd
		if raw>>14&1 != 0 { // SM3PARTW1/2, SM4EKEY
			return false
		}
		d.Op = [4]A64Op{A64SHA512H, A64SHA512H2, A64SHA512SU1, A64RAX1}[raw>>10&3]
	case raw&0xfffffc00 == 0xcec08000: // SHA512SU0 (SM4E is opcode 01)
		d.Op = A64SHA512SU0
	case raw&0xffc08000 == 0xce000000: // crypto four-register (EOR3, BCAX; SM3SS1 has Op0 10): 1100 1110 0 Op0 Rm 0 Ra Rn Rd
		d.Op = A64EOR3
		if raw>>21&1 != 0 {
			d.Op = A64BCAX
		}
		d.Ra = uint8(raw >> 10 & 31)
	case raw&0xffe00000 == 0xce800000: // XAR: 1100 1110 100 Rm imm6 Rn Rd
		d.Op = A64XAR
		d.Imm = uint64(raw >> 10 & 63)
	default:
		return false
	}
	*in = d
	return true
}
