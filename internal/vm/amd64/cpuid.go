package amd64

// The CPU model uvm presents to x86-64 guests through CPUID.
//
// It is a virtual "GenuineIntel" family 6 model 15 CPU with the brand
// string "uvm virtual x86-64 CPU", at the x86-64-v2 level. Feature bits
// advertise exactly what uvm implements: the x86-64 baseline (FPU, TSC,
// CX8, CMOV, MMX, FXSR, SSE, SSE2, CLFLUSH, SYSCALL, NX, LM, LAHF/SAHF),
// CMPXCHG16B and POPCNT, plus the SSE extensions listed below as the
// SSE/x87 half of the interpreter (sse*.go) implements them (SSE3, SSSE3,
// SSE4.1, SSE4.2 incl. CRC32 and PCMPxSTRx: all implemented and checked
// against a host CPU by sse_native_test.go), and the scalar integer
// extensions MOVBE, LZCNT (ABM), BMI1, BMI2, ADX, RDTSCP, RDPID and
// FSGSBASE (leaf 7). AVX and the VEX/EVEX-encoded vector set, SHA,
// RDRAND/RDSEED, OSXSAVE/XSAVE, ERMS/FSRM and CET are not advertised.
// Leaf 4 describes a plausible cache hierarchy (glibc sizes its memcpy
// thresholds from it). Leaves above the maximum return the highest basic
// leaf, as Intel CPUs do.

// SSE extensions advertised in CPUID.1:ECX. Set one to true only when
// execSSE implements every instruction of that extension.
const (
	hasSSE3  = true
	hasSSSE3 = true
	hasSSE41 = true
	hasSSE42 = true
)

// Integer extensions (decided here). POPCNT, MOVBE, LZCNT (ABM) and
// TZCNT are in ops.go, BMI1/BMI2/ADX/RDTSCP/RDPID/FSGSBASE in bmi.go;
// all are checked against the host CPU by bmi_native_test.go. With
// BMI1/ABM off TZCNT/LZCNT would execute as BSF/BSR, as on CPUs without
// them.
const (
	hasPOPCNT   = true
	hasBMI1     = true
	hasBMI2     = true
	hasABM      = true
	hasMOVBE    = true
	hasADX      = true
	hasRDTSCP   = true
	hasRDPID    = true
	hasFSGSBASE = true
	hasCX16     = true
)

// CPUID.7.0:EBX/ECX bits.
const (
	cpuid7FSGSBASE = 1 << 0  // EBX
	cpuid7BMI1     = 1 << 3  // EBX
	cpuid7BMI2     = 1 << 8  // EBX
	cpuid7ADX      = 1 << 19 // EBX
	cpuid7RDPID    = 1 << 22 // ECX
)

var cpuid7EBX = bit(hasFSGSBASE, cpuid7FSGSBASE) | bit(hasBMI1, cpuid7BMI1) | bit(hasBMI2, cpuid7BMI2) |
	bit(hasADX, cpuid7ADX)

var cpuid7ECX = bit(hasRDPID, cpuid7RDPID)

// HWCAP2 returns the value Linux puts in AT_HWCAP2 on x86-64
// (arch/x86/include/uapi/asm/hwcap2.h): HWCAP2_FSGSBASE (bit 1) when the
// kernel enabled CR4.FSGSBASE.
func HWCAP2() uint64 { return uint64(bit(hasFSGSBASE, 1<<1)) }

// CPUID.1:EDX bits.
const (
	cpuidFPU   = 1 << 0
	cpuidDE    = 1 << 2
	cpuidPSE   = 1 << 3
	cpuidTSC   = 1 << 4
	cpuidMSR   = 1 << 5
	cpuidPAE   = 1 << 6
	cpuidMCE   = 1 << 7
	cpuidCX8   = 1 << 8
	cpuidAPIC  = 1 << 9
	cpuidSEP   = 1 << 11
	cpuidMTRR  = 1 << 12
	cpuidPGE   = 1 << 13
	cpuidMCA   = 1 << 14
	cpuidCMOV  = 1 << 15
	cpuidPAT   = 1 << 16
	cpuidPSE36 = 1 << 17
	cpuidCLFSH = 1 << 19
	cpuidMMX   = 1 << 23
	cpuidFXSR  = 1 << 24
	cpuidSSE   = 1 << 25
	cpuidSSE2  = 1 << 26
)

// CPUID.1:ECX bits.
const (
	cpuidSSE3   = 1 << 0
	cpuidSSSE3  = 1 << 9
	cpuidCX16   = 1 << 13
	cpuidSSE41  = 1 << 19
	cpuidSSE42  = 1 << 20
	cpuidMOVBE  = 1 << 22
	cpuidPOPCNT = 1 << 23
)

const cpuid1EDX = cpuidFPU | cpuidDE | cpuidPSE | cpuidTSC | cpuidMSR | cpuidPAE | cpuidMCE |
	cpuidCX8 | cpuidAPIC | cpuidSEP | cpuidMTRR | cpuidPGE | cpuidMCA | cpuidCMOV | cpuidPAT |
	cpuidPSE36 | cpuidCLFSH | cpuidMMX | cpuidFXSR | cpuidSSE | cpuidSSE2

func bit(b bool, v uint32) uint32 {
	if b {
		return v
	}
	return 0
}

var cpuid1ECX = bit(hasSSE3, cpuidSSE3) | bit(hasSSSE3, cpuidSSSE3) | bit(hasCX16, cpuidCX16) |
	bit(hasSSE41, cpuidSSE41) | bit(hasSSE42, cpuidSSE42) | bit(hasMOVBE, cpuidMOVBE) |
	bit(hasPOPCNT, cpuidPOPCNT)

// HWCAP returns the value Linux puts in AT_HWCAP on x86-64: CPUID.1:EDX.
func HWCAP() uint64 { return cpuid1EDX }

const (
	cpuidMaxBasic = 7
	cpuidMaxExt   = 0x80000008
	// Family 6, model 15, stepping 11.
	cpuidSignature = 6<<8 | 15<<4 | 11
)

var cpuidBrand = func() (b [48]byte) {
	copy(b[:], "uvm virtual x86-64 CPU")
	return
}()

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// cpuid returns EAX, EBX, ECX, EDX for leaf eax, subleaf ecx.
func cpuid(eax, ecx uint32) (a, b, c, d uint32) {
	switch {
	case eax > cpuidMaxBasic && eax < 0x80000000, eax > cpuidMaxExt:
		return cpuid(cpuidMaxBasic, ecx)
	}
	switch eax {
	case 0:
		v := []byte("GenuineIntel")
		return cpuidMaxBasic, le32(v[0:]), le32(v[8:]), le32(v[4:])
	case 1:
		// EBX: CLFLUSH line size 8 (×8 = 64 bytes), 1 logical processor.
		return cpuidSignature, 8<<8 | 1<<16, cpuid1ECX, cpuid1EDX
	case 2:
		// One descriptor byte 0xFF: "use leaf 4".
		return 0x0000FF01, 0, 0, 0
	case 4:
		// Deterministic cache parameters: type | level<<5 | self-init.
		// EBX = (ways-1)<<22 | (partitions-1)<<12 | (line-1); ECX = sets-1.
		switch ecx {
		case 0: // L1d 32 KiB, 8-way
			return 1 | 1<<5 | 1<<8, 7<<22 | 63, 63, 0
		case 1: // L1i 32 KiB, 8-way
			return 2 | 1<<5 | 1<<8, 7<<22 | 63, 63, 0
		case 2: // L2 256 KiB, 8-way
			return 3 | 2<<5 | 1<<8, 7<<22 | 63, 511, 0
		case 3: // L3 8 MiB, 16-way
			return 3 | 3<<5 | 1<<8, 15<<22 | 63, 8191, 0
		}
		return 0, 0, 0, 0
	case 7:
		if ecx != 0 {
			return 0, 0, 0, 0
		}
		return 0, cpuid7EBX, cpuid7ECX, 0
	case 0x80000000:
		return cpuidMaxExt, 0, 0, 0
	case 0x80000001:
		ecx := uint32(1) // LAHF/SAHF in 64-bit mode
		if hasABM {
			ecx |= 1 << 5
		}
		edx := uint32(1<<11 | 1<<20 | 1<<29) // SYSCALL, NX, LM
		edx |= bit(hasRDTSCP, 1<<27)
		return 0, 0, ecx, edx
	case 0x80000002, 0x80000003, 0x80000004:
		o := (eax - 0x80000002) * 16
		b := cpuidBrand[o : o+16]
		return le32(b[0:]), le32(b[4:]), le32(b[8:]), le32(b[12:])
	case 0x80000006:
		// L2: 256 KiB, 8-way (code 6), 64-byte lines.
		return 0, 0, 256<<16 | 6<<12 | 64, 0
	case 0x80000008:
		// 40 physical, 48 virtual address bits.
		return 0x3028, 0, 0, 0
	}
	return 0, 0, 0, 0
}
