package arm64

// The CPU ID registers (HWCAP_CPUID). Linux lets EL0 read the ID space
// op0=3, op1=0, CRn=0 by trapping MRS and emulating it
// (arch/arm64/kernel/cpufeature.c: emulate_mrs): MIDR_EL1 reads the CPU's
// value, MPIDR_EL1 reads SYS_MPIDR_SAFE_VAL (bit 31 only), REVIDR_EL1 0;
// every other register of CRm 2..7 reads its sanitised value with only the
// user-visible fields (FTR_VISIBLE) shown and the hidden fields set to
// their safe values, and registers the kernel does not track read as 0.
// Other op2 values of CRm 0, CRm 1, and MSR to any of them are undefined
// (SIGILL); the decoder rejects those.
//
// One source of truth: the visible fields below are computed from the CPU
// model's HWCAP and HWCAP2 (hwcap.go, model.go), so AT_HWCAP and the ID
// registers cannot disagree; TestIDRegsMatchHWCAP derives the HWCAPs back
// from these registers with Linux's rules (arm64_elf_hwcaps) and requires
// equality for every model.

import "github.com/uvm-emu/uvm/internal/decode"

// midrUVM is MIDR_EL1: implementer 0x00 ("reserved for software use"),
// architecture 0xf (features are identified by the ID registers), part
// number and revision 0. glibc's CPU-specific string routines key on the
// implementer and part number and so take their generic variants.
const midrUVM = 0xf << 16

// mpidrSafe is SYS_MPIDR_SAFE_VAL: Linux hides the topology from EL0.
const mpidrSafe = 1 << 31

// ID register numbers in the A64SysID space (CRm<<3 | op2).
const (
	idMIDR       = 0<<3 | 0
	idMPIDR      = 0<<3 | 5
	idREVIDR     = 0<<3 | 6
	idAA64PFR0   = 4<<3 | 0
	idAA64PFR1   = 4<<3 | 1
	idAA64ZFR0   = 4<<3 | 4
	idAA64SMFR0  = 4<<3 | 5
	idAA64DFR0   = 5<<3 | 0
	idAA64ISAR0  = 6<<3 | 0
	idAA64ISAR1  = 6<<3 | 1
	idAA64ISAR2  = 6<<3 | 2
	idAA64MMFR0  = 7<<3 | 0
	idAA64MMFR1  = 7<<3 | 1
	idAA64MMFR2  = 7<<3 | 2
	idRegsNumber = 8 << 3
)

// idRegsOf returns the value of every register of the emulated ID space
// for a CPU with these HWCAPs and MIDR, indexed by CRm<<3 | op2.
// Registers not set here read as zero: the AArch32 ID registers (CRm 2 and
// 3; uvm has no AArch32, where Linux's sanitised values are all zero) and
// the untracked or reserved ones.
func idRegsOf(hwcap, hwcap2, midr uint64) (r [idRegsNumber]uint64) {
	// hw is 1 when hwcap has every bit of mask, else 0.
	hw := func(mask uint64) uint64 {
		if hwcap&mask == mask {
			return 1
		}
		return 0
	}
	hw2 := func(mask uint64) uint64 {
		if hwcap2&mask == mask {
			return 1
		}
		return 0
	}
	r[idMIDR] = midr
	r[idMPIDR] = mpidrSafe
	// ID_AA64PFR0_EL1: EL0 and EL1 are hidden with safe value 1 (AArch64
	// only); FP and AdvSIMD are signed: 0 = implemented, 1 = with FP16
	// arithmetic, 0xf = not implemented.
	r[idAA64PFR0] = 1<<0 | 1<<4 |
		((1-hw(HWCAPFP))*0xf+hw(HWCAPFPHP))<<16 |
		((1-hw(HWCAPASIMD))*0xf+hw(HWCAPASIMDHP))<<20 |
		hw(HWCAPDIT)<<24 | hw(HWCAPSVE)<<32
	r[idAA64PFR1] = hw(HWCAPSSBS) * 2 << 4
	// ID_AA64DFR0_EL1: DebugVer is hidden with safe value 6 (Armv8.0 debug).
	r[idAA64DFR0] = 6
	r[idAA64ISAR0] = (hw(HWCAPAES)+hw(HWCAPPMULL))<<4 |
		hw(HWCAPSHA1)<<8 |
		(hw(HWCAPSHA2)+hw(HWCAPSHA512))<<12 |
		hw(HWCAPCRC32)<<16 |
		hw(HWCAPATOMICS)*2<<20 |
		hw(HWCAPASIMDRDM)<<28 |
		hw(HWCAPSHA3)<<32 |
		hw(HWCAPSM3)<<36 |
		hw(HWCAPSM4)<<40 |
		hw(HWCAPASIMDDP)<<44 |
		hw(HWCAPASIMDFHM)<<48 |
		(hw(HWCAPFLAGM)+hw2(HWCAP2FLAGM2))<<52
	r[idAA64ISAR1] = (hw(HWCAPDCPOP)+hw2(HWCAP2DCPODP))<<0 |
		hw(HWCAPJSCVT)<<12 |
		hw(HWCAPFCMA)<<16 |
		(hw(HWCAPLRCPC)+hw(HWCAPILRCPC))<<20 |
		hw2(HWCAP2FRINT)<<32 |
		hw(HWCAPSB)<<36
	// ID_AA64MMFR0_EL1: only hidden fields with non-zero safe values:
	// TGran4 and TGran64 0xf (not implemented), TGran16_2, TGran64_2 and
	// TGran4_2 1; the value every Linux EL0 reads.
	r[idAA64MMFR0] = 0xf<<28 | 0xf<<24 | 1<<32 | 1<<36 | 1<<40
	r[idAA64MMFR2] = hw(HWCAPUSCAT) << 32
	return r
}

// idRegs are the ID registers of the max model (HWCAP, HWCAP2).
var idRegs = idRegsOf(HWCAP, HWCAP2, midrUVM)

// idReg is MRS of ID register id (decode.A64SysID + CRm<<3 | op2) on the
// CPU's model.
func (c *CPU) idReg(id uint64) uint64 {
	i := id - decode.A64SysID
	if i >= idRegsNumber {
		return 0
	}
	return c.model.idRegs[i]
}
