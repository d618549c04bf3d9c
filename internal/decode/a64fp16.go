package decode

// FEAT_FP16: half-precision floating-point arithmetic. The scalar forms
// are the FP groups with ftype 11 (fpSize); the Advanced SIMD forms reuse
// the single/double ops with Size 1: three same (FP16) below, two-register
// misc (FP16) in decodeTwoMisc, across lanes (FMAXV…, U = 0), scalar
// pairwise (FADDP…, U = 0), by element (size 00, Vm limited to v0..v15,
// index H:L:M), fixed-point conversions by immediate (immh 001x) and FMOV
// (vector, immediate) with o2 = 1. A64.Feature reports A64FeatFP16 for
// every such record.

// decodeThreeSameFP16 decodes "Advanced SIMD (scalar) three same FP16":
// 0 Q U 0111 0 a 10 Rm 00 opcode 1 Rn Rd (scalar: 01 U 11110 …).
func decodeThreeSameFP16(raw uint32, in *A64, scalar bool) bool {
	u := raw >> 29 & 1
	a := raw >> 23 & 1
	op := threeSameFP[u<<1|a][bf(raw, 11, 3)]
	if op == 0 {
		return false
	}
	if scalar {
		switch op {
		case A64VFMULX, A64VFCMEQ, A64VFRECPS, A64VFRSQRTS, A64VFCMGE, A64VFACGE, A64VFABD, A64VFCMGT, A64VFACGT:
		default:
			return false
		}
	}
	in.Op, in.Size = op, 1
	return true
}

// A64Feature is a set of optional architecture features (FEAT_*) beyond
// Armv8.0's FP and Advanced SIMD. A CPU model that lacks a feature treats
// the instructions that need it as undefined (see A64.Feature).
type A64Feature uint32

// The optional features of uvm's instructions.
const (
	A64FeatCRC32   A64Feature = 1 << iota // CRC32*, CRC32C*
	A64FeatLSE                            // LDADD…, SWP, CAS, CASP
	A64FeatRDM                            // SQRDMLAH, SQRDMLSH
	A64FeatFP16                           // half-precision arithmetic
	A64FeatDotProd                        // SDOT, UDOT
	A64FeatAES                            // AESE, AESD, AESMC, AESIMC
	A64FeatPMULL                          // PMULL/PMULL2 1Q
	A64FeatSHA1                           // SHA1*
	A64FeatSHA256                         // SHA256*
	A64FeatSHA512                         // SHA512*
	A64FeatSHA3                           // EOR3, RAX1, XAR, BCAX
	A64FeatLRCPC                          // LDAPR
	A64FeatLRCPC2                         // LDAPUR, STLUR
	A64FeatFlagM                          // CFINV, RMIF, SETF8, SETF16
	A64FeatFlagM2                         // AXFLAG, XAFLAG
	A64FeatJSCVT                          // FJCVTZS
	A64FeatFCMA                           // FCMLA, FCADD
	A64FeatFRINTTS                        // FRINT32Z/X, FRINT64Z/X
	A64FeatFHM                            // FMLAL, FMLAL2, FMLSL, FMLSL2
)

// fp16Ops marks the FP ops (indexed by op - A64SIMDBase) whose Size 1
// (half precision) forms are FEAT_FP16 arithmetic. FCVT, FCVTN and FCVTL
// are absent: conversions to and from half precision are Armv8.0.
var fp16Ops = func() (m [NumA64SIMDOps]bool) {
	for _, op := range []A64Op{
		A64FMOV, A64FABS, A64FNEG, A64FSQRT, A64FRINT, A64FADD, A64FSUB, A64FMUL, A64FDIV,
		A64FNMUL, A64FMAX, A64FMIN, A64FMAXNM, A64FMINNM, A64FMADD, A64FMSUB, A64FNMADD,
		A64FNMSUB, A64FCMP, A64FCCMP, A64FCSEL, A64FMOVI, A64FCVTI, A64ICVTF, A64FMOVTOGP,
		A64FMOVFROMGP,
		A64VFRINT, A64VFCVTI, A64VICVTF, A64VFCMGT0, A64VFCMGE0, A64VFCMEQ0, A64VFCMLE0,
		A64VFCMLT0, A64VFABS, A64VFNEG, A64VFSQRT, A64VFRECPE, A64VFRSQRTE, A64VFRECPX,
		A64VFMAXNMV, A64VFMINNMV, A64VFMAXV, A64VFMINV,
		A64VFMAXNM, A64VFMINNM, A64VFMLA, A64VFMLS, A64VFADD, A64VFSUB, A64VFMULX, A64VFCMEQ,
		A64VFMAX, A64VFMIN, A64VFRECPS, A64VFRSQRTS, A64VFMAXNMP, A64VFMINNMP, A64VFADDP,
		A64VFMUL, A64VFCMGE, A64VFACGE, A64VFCMGT, A64VFACGT, A64VFMAXP, A64VFMINP, A64VFDIV,
		A64VFABD, A64VFMOVI, A64VFCMLA, A64VFCADD,
	} {
		m[op-A64SIMDBase] = true
	}
	return m
}()

// Feature reports the optional features the instruction needs (zero for
// Armv8.0 instructions and for undefined records).
func (in *A64) Feature() A64Feature {
	op := in.Op
	if op >= A64SIMDBase {
		var f A64Feature
		if i := int(op - A64SIMDBase); i < len(fp16Ops) && fp16Ops[i] && in.Size == 1 {
			f = A64FeatFP16
		}
		switch op {
		case A64AESE, A64AESD, A64AESMC, A64AESIMC:
			f |= A64FeatAES
		case A64PMULL64:
			f |= A64FeatPMULL
		case A64SHA1C, A64SHA1P, A64SHA1M, A64SHA1SU0, A64SHA1H, A64SHA1SU1:
			f |= A64FeatSHA1
		case A64SHA256H, A64SHA256H2, A64SHA256SU0, A64SHA256SU1:
			f |= A64FeatSHA256
		case A64SHA512H, A64SHA512H2, A64SHA512SU0, A64SHA512SU1:
			f |= A64FeatSHA512
		case A64RAX1, A64EOR3, A64BCAX, A64XAR:
			f |= A64FeatSHA3
		case A64VSQRDMLAH, A64VSQRDMLSH:
			f |= A64FeatRDM
		case A64VSDOT, A64VUDOT:
			f |= A64FeatDotProd
		case A64FRINTTS, A64VFRINTTS:
			f |= A64FeatFRINTTS
		case A64FJCVTZS:
			f |= A64FeatJSCVT
		case A64VFCMLA, A64VFCADD:
			f |= A64FeatFCMA
		case A64VFMLAL, A64VFMLSL:
			f |= A64FeatFHM
		}
		return f
	}
	switch op {
	case A64CRC32:
		return A64FeatCRC32
	case A64LDOP, A64CAS, A64CASP:
		return A64FeatLSE
	case A64LDAR:
		if in.Raw&0x3fff_fc00 == 0x38bf_c000 { // LDAPR
			return A64FeatLRCPC
		}
	case A64LDAPUR, A64STLUR:
		return A64FeatLRCPC2
	case A64FLAGM:
		if in.Imm == A64FlagXAFLAG || in.Imm == A64FlagAXFLAG {
			return A64FeatFlagM2
		}
		return A64FeatFlagM
	}
	return 0
}

// A64RestrictFeatures returns in, or an undefined record (reason
// A64WhyModel) when in needs a feature outside have.
func A64RestrictFeatures(in A64, have A64Feature) A64 {
	if in.Feature()&^have != 0 {
		u := A64{Raw: in.Raw, Imm: A64WhyModel}
		u.Class = a64ClassOf(&u)
		return u
	}
	return in
}
