package arm64

import "github.com/uvm-emu/uvm/internal/decode"

// CPU models (--cpu), as amd64's SetCPUModel does for x86-64: a model is
// the set of optional features the CPU has. AT_HWCAP/AT_HWCAP2, the ID
// registers (idregs.go), /proc/cpuinfo and FPCR's writable bits follow
// it, and an instruction of a feature outside it is undefined (SIGILL, as
// on such a CPU): the address space's instruction cache decodes it as
// A64Undefined (icache.A64Cache.SetFeatures, decode.A64RestrictFeatures).
//
//   - max (the default): everything uvm implements (HWCAP, HWCAP2).
//   - armv8.0: FP and Advanced SIMD only (and CPUID, which is the kernel's).
//   - armv8.1: adds what Armv8.1-A makes mandatory: CRC32, LSE atomics, RDM.
//   - armv8.2: armv8.1 with FEAT_FP16 (FPHP, ASIMDHP), the Armv8.2-A
//     configuration of every 8.2 core shipped (-march=armv8.2-a+fp16).
//   - neoverse-n1: the features of an Arm Neoverse N1 (AWS Graviton2) that
//     uvm implements: armv8.2 with AES, PMULL, SHA1, SHA2, LRCPC, DotProd;
//     MIDR_EL1 reads the N1's (implementer 0x41, part 0xd0c, r4p1). A
//     real N1 also lists evtstrm, dcpop and ssbs, which uvm does not
//     implement.

// Model is an arm64 CPU model.
type Model struct {
	Name          string
	HWCAP, HWCAP2 uint64
	MIDR          uint64
	feat          decode.A64Feature
	fpcrMask      uint32
	idRegs        [idRegsNumber]uint64
}

const (
	hwcapV80 = HWCAPFP | HWCAPASIMD | HWCAPCPUID
	hwcapV81 = hwcapV80 | HWCAPCRC32 | HWCAPATOMICS | HWCAPASIMDRDM
	hwcapV82 = hwcapV81 | HWCAPFPHP | HWCAPASIMDHP
	hwcapN1  = hwcapV82 | HWCAPAES | HWCAPPMULL | HWCAPSHA1 | HWCAPSHA2 | HWCAPLRCPC | HWCAPASIMDDP

	midrNeoverseN1 = 0x41<<24 | 4<<20 | 0xf<<16 | 0xd0c<<4 | 1 // r4p1, as qemu-aarch64 -cpu neoverse-n1
)

// models[0] is the default.
var models = func() []Model {
	m := []Model{
		{Name: "max", HWCAP: HWCAP, HWCAP2: HWCAP2, MIDR: midrUVM},
		{Name: "armv8.0", HWCAP: hwcapV80, MIDR: midrUVM},
		{Name: "armv8.1", HWCAP: hwcapV81, MIDR: midrUVM},
		{Name: "armv8.2", HWCAP: hwcapV82, MIDR: midrUVM},
		{Name: "neoverse-n1", HWCAP: hwcapN1, MIDR: midrNeoverseN1},
	}
	for i := range m {
		m[i].feat = featuresOf(m[i].HWCAP, m[i].HWCAP2)
		m[i].fpcrMask = fpcrMask
		if m[i].HWCAP&HWCAPFPHP == 0 {
			m[i].fpcrMask &^= fpcrFZ16 // FZ16 is RES0 without FEAT_FP16
		}
		m[i].idRegs = idRegsOf(m[i].HWCAP, m[i].HWCAP2, m[i].MIDR)
	}
	return m
}()

// featuresOf maps HWCAPs to the decoder's feature set.
func featuresOf(hwcap, hwcap2 uint64) decode.A64Feature {
	var f decode.A64Feature
	for _, p := range []struct {
		cap  uint64
		feat decode.A64Feature
	}{
		{HWCAPCRC32, decode.A64FeatCRC32}, {HWCAPATOMICS, decode.A64FeatLSE},
		{HWCAPASIMDRDM, decode.A64FeatRDM}, {HWCAPFPHP | HWCAPASIMDHP, decode.A64FeatFP16},
		{HWCAPASIMDDP, decode.A64FeatDotProd}, {HWCAPAES, decode.A64FeatAES},
		{HWCAPPMULL, decode.A64FeatPMULL}, {HWCAPSHA1, decode.A64FeatSHA1},
		{HWCAPSHA2, decode.A64FeatSHA256}, {HWCAPSHA512, decode.A64FeatSHA512},
		{HWCAPSHA3, decode.A64FeatSHA3}, {HWCAPLRCPC, decode.A64FeatLRCPC},
		{HWCAPILRCPC, decode.A64FeatLRCPC2}, {HWCAPFLAGM, decode.A64FeatFlagM},
		{HWCAPJSCVT, decode.A64FeatJSCVT}, {HWCAPFCMA, decode.A64FeatFCMA},
		{HWCAPASIMDFHM, decode.A64FeatFHM},
	} {
		if hwcap&p.cap == p.cap {
			f |= p.feat
		}
	}
	if hwcap2&HWCAP2FLAGM2 != 0 {
		f |= decode.A64FeatFlagM2
	}
	if hwcap2&HWCAP2FRINT != 0 {
		f |= decode.A64FeatFRINTTS
	}
	return f
}

// ModelNames lists the CPU models, the default first.
func ModelNames() []string {
	var n []string
	for i := range models {
		n = append(n, models[i].Name)
	}
	return n
}

// LookupModel returns the model called name ("" is the default), or nil.
func LookupModel(name string) *Model {
	if name == "" {
		return &models[0]
	}
	for i := range models {
		if models[i].Name == name {
			return &models[i]
		}
	}
	return nil
}

// SetCPUModel selects the CPU model by name ("" is the default, max) and
// reports false for an unknown name. It also restricts the address space's
// instruction cache to the model's instructions, so every thread of the
// address space must have the same model; set it before the CPU runs.
func (c *CPU) SetCPUModel(name string) bool {
	m := LookupModel(name)
	if m == nil {
		return false
	}
	c.model = m
	c.regs.FPCR &= m.fpcrMask
	c.cache.SetFeatures(m.feat)
	return true
}

// CPUModel returns the CPU's model.
func (c *CPU) CPUModel() *Model { return c.model }

// FPCRMask is the set of FPCR bits the model implements (others are RES0):
// what MSR FPCR and sigreturn can set.
func (m *Model) FPCRMask() uint32 { return m.fpcrMask }
