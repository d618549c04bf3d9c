package arm64

// Linux arm64 AT_HWCAP bits (arch/arm64/include/uapi/asm/hwcap.h).
const (
	HWCAPFP       = 1 << 0
	HWCAPASIMD    = 1 << 1
	HWCAPEVTSTRM  = 1 << 2
	HWCAPAES      = 1 << 3
	HWCAPPMULL    = 1 << 4
	HWCAPSHA1     = 1 << 5
	HWCAPSHA2     = 1 << 6
	HWCAPCRC32    = 1 << 7
	HWCAPATOMICS  = 1 << 8
	HWCAPFPHP     = 1 << 9
	HWCAPASIMDHP  = 1 << 10
	HWCAPCPUID    = 1 << 11
	HWCAPASIMDRDM = 1 << 12
	HWCAPJSCVT    = 1 << 13
	HWCAPFCMA     = 1 << 14
	HWCAPLRCPC    = 1 << 15
	HWCAPDCPOP    = 1 << 16
	HWCAPSHA3     = 1 << 17
	HWCAPSM3      = 1 << 18
	HWCAPSM4      = 1 << 19
	HWCAPASIMDDP  = 1 << 20
	HWCAPSHA512   = 1 << 21
	HWCAPSVE      = 1 << 22
	HWCAPASIMDFHM = 1 << 23
	HWCAPDIT      = 1 << 24
	HWCAPUSCAT    = 1 << 25
	HWCAPILRCPC   = 1 << 26
	HWCAPFLAGM    = 1 << 27
	HWCAPSSBS     = 1 << 28
	HWCAPSB       = 1 << 29
	HWCAPPACA     = 1 << 30
	HWCAPPACG     = 1 << 31
)

// Linux arm64 AT_HWCAP2 bits.
const (
	HWCAP2DCPODP = 1 << 0
	HWCAP2FLAGM2 = 1 << 7
	HWCAP2FRINT  = 1 << 8
)

// HWCAP is the AT_HWCAP value uvm's arm64 CPU advertises: exactly the
// optional features it implements. FP and ASIMD are the FP/SIMD unit
// (simd.go); CRC32 (CRC32*/CRC32C* instructions) and LRCPC (LDAPR*) are
// implemented by the integer interpreter, ATOMICS (FEAT_LSE) by lse.go,
// CPUID (MRS of the ID registers, emulated as Linux does) by idregs.go,
// whose ID register values are derived from these bits; AES, PMULL, SHA1,
// SHA2, SHA512 and SHA3 by crypto.go, ASIMDRDM (SQRDMLAH/SQRDMLSH) and
// ASIMDDP (SDOT/UDOT), JSCVT (FJCVTZS), FCMA (FCMLA/FCADD, in half
// precision too), ASIMDFHM (FMLAL/FMLAL2/FMLSL/FMLSL2) and HWCAP2
// FRINT (FRINT32/64) by simdext.go, ILRCPC (LDAPUR/STLUR), FLAGM and
// HWCAP2 FLAGM2 (CFINV, RMIF, SETF8/16, AXFLAG, XAFLAG) by flagm.go,
// FPHP and ASIMDHP (FEAT_FP16 half-precision arithmetic, scalar and
// vector, with FPCR.FZ16) by the FP/SIMD unit (simd.go, simdsoftfp.go).
// Deliberately absent: SVE, PAC
// (PACIASP and friends in the HINT space execute as NOPs), DIT,
// SM3/SM4, EVTSTRM (WFE never waits).
const HWCAP uint64 = HWCAPFP | HWCAPASIMD | HWCAPCRC32 | HWCAPLRCPC | HWCAPATOMICS | HWCAPCPUID |
	HWCAPAES | HWCAPPMULL | HWCAPSHA1 | HWCAPSHA2 | HWCAPSHA512 | HWCAPSHA3 |
	HWCAPASIMDRDM | HWCAPASIMDDP | HWCAPILRCPC | HWCAPFLAGM | HWCAPJSCVT | HWCAPFCMA |
	HWCAPFPHP | HWCAPASIMDHP | HWCAPASIMDFHM

// HWCAP2 is the AT_HWCAP2 value.
const HWCAP2 uint64 = HWCAP2FLAGM2 | HWCAP2FRINT
