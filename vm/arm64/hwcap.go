package arm64

// Linux arm64 AT_HWCAP bits (arch/arm64/include/uapi/asm/hwcap.h).
const (
	HWCAPFP      = 1 << 0
	HWCAPASIMD   = 1 << 1
	HWCAPEVTSTRM = 1 << 2
	HWCAPAES     = 1 << 3
	HWCAPPMULL   = 1 << 4
	HWCAPSHA1    = 1 << 5
	HWCAPSHA2    = 1 << 6
	HWCAPCRC32   = 1 << 7
	HWCAPATOMICS = 1 << 8
	HWCAPFPHP    = 1 << 9
	HWCAPASIMDHP = 1 << 10
	HWCAPCPUID   = 1 << 11
	HWCAPLRCPC   = 1 << 15
	HWCAPSHA512  = 1 << 21
	HWCAPSVE     = 1 << 22
	HWCAPDIT     = 1 << 24
	HWCAPPACA    = 1 << 30
	HWCAPPACG    = 1 << 31
)

// HWCAP is the AT_HWCAP value uvm's arm64 CPU advertises: exactly the
// optional features it implements. FP and ASIMD are the FP/SIMD unit
// (simd.go); CRC32 (CRC32*/CRC32C* instructions) and LRCPC (LDAPR*) are
// implemented by the integer interpreter. Deliberately absent: CPUID (MRS
// of MIDR_EL1 and other ID registers is undefined), ATOMICS (no LSE), SVE,
// PAC (PACIASP and friends in the HINT space execute as NOPs), DIT,
// FPHP/ASIMDHP, SHA512/SHA3, EVTSTRM (WFE never waits). AES, PMULL, SHA1
// and SHA2 are to be added here once the FP/SIMD unit implements them.
const HWCAP uint64 = HWCAPFP | HWCAPASIMD | HWCAPCRC32 | HWCAPLRCPC

// HWCAP2 is the AT_HWCAP2 value: no HWCAP2 feature is implemented.
const HWCAP2 uint64 = 0
