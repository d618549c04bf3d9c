package arm64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// linuxHWCAPs derives AT_HWCAP and AT_HWCAP2 from ID register values with
// the rules of Linux's arm64_elf_hwcaps (arch/arm64/kernel/cpufeature.c):
// a HWCAP is set when its field is at least the given value (signed fields
// for FP and AdvSIMD).
func linuxHWCAPs(reg func(crm, op2 uint64) uint64) (hwcap, hwcap2 uint64) {
	field := func(v uint64, shift uint) uint64 { return v >> shift & 15 }
	signed := func(v uint64, shift uint) int64 { return int64(v<<(60-shift)) >> 60 }
	pfr0, pfr1 := reg(4, 0), reg(4, 1)
	isar0, isar1 := reg(6, 0), reg(6, 1)
	mmfr2 := reg(7, 2)
	set := func(ok bool, bit uint64) {
		if ok {
			hwcap |= bit
		}
	}
	set2 := func(ok bool, bit uint64) {
		if ok {
			hwcap2 |= bit
		}
	}
	set(signed(pfr0, 16) >= 0, HWCAPFP)
	set(signed(pfr0, 16) >= 1, HWCAPFPHP)
	set(signed(pfr0, 20) >= 0, HWCAPASIMD)
	set(signed(pfr0, 20) >= 1, HWCAPASIMDHP)
	set(field(pfr0, 24) >= 1, HWCAPDIT)
	set(field(pfr0, 32) >= 1, HWCAPSVE)
	set(field(pfr1, 4) >= 2, HWCAPSSBS)
	set(field(isar0, 4) >= 1, HWCAPAES)
	set(field(isar0, 4) >= 2, HWCAPPMULL)
	set(field(isar0, 8) >= 1, HWCAPSHA1)
	set(field(isar0, 12) >= 1, HWCAPSHA2)
	set(field(isar0, 12) >= 2, HWCAPSHA512)
	set(field(isar0, 16) >= 1, HWCAPCRC32)
	set(field(isar0, 20) >= 2, HWCAPATOMICS)
	set(field(isar0, 28) >= 1, HWCAPASIMDRDM)
	set(field(isar0, 32) >= 1, HWCAPSHA3)
	set(field(isar0, 36) >= 1, HWCAPSM3)
	set(field(isar0, 40) >= 1, HWCAPSM4)
	set(field(isar0, 44) >= 1, HWCAPASIMDDP)
	set(field(isar0, 48) >= 1, HWCAPASIMDFHM)
	set(field(isar0, 52) >= 1, HWCAPFLAGM)
	set2(field(isar0, 52) >= 2, HWCAP2FLAGM2)
	set(field(isar1, 0) >= 1, HWCAPDCPOP)
	set2(field(isar1, 0) >= 2, HWCAP2DCPODP)
	set(field(isar1, 12) >= 1, HWCAPJSCVT)
	set(field(isar1, 16) >= 1, HWCAPFCMA)
	set(field(isar1, 20) >= 1, HWCAPLRCPC)
	set(field(isar1, 20) >= 2, HWCAPILRCPC)
	set2(field(isar1, 32) >= 1, HWCAP2FRINT)
	set(field(isar1, 36) >= 1, HWCAPSB)
	set(field(mmfr2, 32) >= 1, HWCAPUSCAT)
	hwcap |= HWCAPCPUID // Linux always emulates the ID registers
	return hwcap, hwcap2
}

// TestIDRegsMatchHWCAP: AT_HWCAP/AT_HWCAP2 are exactly what Linux would
// derive from the emulated ID registers.
func TestIDRegsMatchHWCAP(t *testing.T) {
	for _, name := range ModelNames() {
		c := NewCPU(vm.NewMM())
		if !c.SetCPUModel(name) {
			t.Fatalf("model %s unknown", name)
		}
		m := c.CPUModel()
		h, h2 := linuxHWCAPs(func(crm, op2 uint64) uint64 { return c.idReg(decode.A64SysID + crm<<3 | op2) })
		if h != m.HWCAP || h2 != m.HWCAP2 {
			t.Errorf("%s: ID registers imply HWCAP %#x HWCAP2 %#x; advertised %#x %#x", name, h, h2, m.HWCAP, m.HWCAP2)
		}
	}
	if m := LookupModel(""); m.HWCAP != HWCAP || m.HWCAP2 != HWCAP2 {
		t.Errorf("default model %s: HWCAP %#x %#x, want the max model's %#x %#x", m.Name, m.HWCAP, m.HWCAP2, HWCAP, HWCAP2)
	}
}

// TestMRSIDRegs executes MRS of the ID registers and checks the values an
// EL0 program reads on Linux, and that registers outside the emulated
// space, and MSR to it, are undefined.
func TestMRSIDRegs(t *testing.T) {
	mrs := func(op1, crn, crm, op2 uint32) uint32 {
		return 0xd5380000 | op1<<16 | crn<<12 | crm<<8 | op2<<5 // mrs x0, s3_op1_cCRn_cCRm_op2
	}
	for _, tc := range []struct {
		name string
		insn uint32
		want uint64
	}{
		{"MIDR_EL1", mrs(0, 0, 0, 0), midrUVM},
		{"MPIDR_EL1", mrs(0, 0, 0, 5), 0x80000000},
		{"REVIDR_EL1", mrs(0, 0, 0, 6), 0},
		{"ID_AA64PFR0_EL1", mrs(0, 0, 4, 0), 0x110011}, // FP = AdvSIMD = 1: with FP16
		{"ID_AA64DFR0_EL1", mrs(0, 0, 5, 0), 6},
		{"ID_AA64ISAR0_EL1", mrs(0, 0, 6, 0), idRegs[idAA64ISAR0]},
		{"ID_AA64MMFR0_EL1", mrs(0, 0, 7, 0), 0x00000111ff000000},
		{"ID_AA64ZFR0_EL1", mrs(0, 0, 4, 4), 0},
		{"ID_ISAR0_EL1 (AArch32)", mrs(0, 0, 2, 0), 0},
		{"reserved s3_0_c0_c3_7", mrs(0, 0, 3, 7), 0},
	} {
		c := runCode(t, []uint32{tc.insn}, 0x5555)
		if got := c.Reg(0); got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
	if v := idRegs[idAA64ISAR0]; v>>20&15 != 2 || v>>16&15 != 1 {
		t.Errorf("ID_AA64ISAR0_EL1 %#x: want Atomic=2 (LSE), CRC32=1", v)
	}
	for _, tc := range []struct {
		name string
		insn uint32
	}{
		{"s3_0_c0_c0_1", mrs(0, 0, 0, 1)},
		{"ID_PFR0_EL1 (CRm 1)", mrs(0, 0, 1, 0)},
		{"CCSIDR_EL1 (op1 1)", mrs(1, 0, 0, 0)},
		{"msr ID_AA64ISAR0_EL1", 0xd5180600},
		{"msr MIDR_EL1", 0xd5180000},
	} {
		c := newTestCPU(t, []uint32{tc.insn, brk0})
		if e := c.Run(10); e.Reason != vm.ExitUndefined || e.PC != tCode {
			t.Errorf("%s: exit %v at %#x, want undefined", tc.name, e.Reason, e.PC)
		}
	}
}
