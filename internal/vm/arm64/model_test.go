package arm64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// TestCPUModelSIGILL: under armv8.0 an LSE atomic (and CRC32, FP16, a
// crypto op) is undefined at its own pc, changing nothing; armv8.1 runs
// the atomic; a clone keeps the model; FZ16 is RES0 without FP16.
func TestCPUModelSIGILL(t *testing.T) {
	for _, tc := range []struct {
		name  string
		insn  uint32
		model string
		undef bool
	}{
		{"ldaddal armv8.0", ldaddalX1X0X2, "armv8.0", true},
		{"ldaddal armv8.1", ldaddalX1X0X2, "armv8.1", false},
		{"crc32b armv8.0", 0x1ac24020, "armv8.0", true}, // crc32b w0, w1, w2
		{"crc32b armv8.1", 0x1ac24020, "armv8.1", false},
		{"fadd h armv8.1", 0x1ee22820, "armv8.1", true}, // fadd h0, h1, h2
		{"fadd h armv8.2", 0x1ee22820, "armv8.2", false},
		{"fadd s armv8.0", 0x1e222820, "armv8.0", false}, // fadd s0, s1, s2
		{"aese armv8.2", 0x4e284820, "armv8.2", true},    // aese v0.16b, v1.16b
		{"aese neoverse-n1", 0x4e284820, "neoverse-n1", false},
		{"sha512h neoverse-n1", 0xce608000, "neoverse-n1", true}, // sha512h q0, q0, v0.2d
		{"sha512h max", 0xce608000, "max", false},
	} {
		c := newTestCPU(t, []uint32{tc.insn, brk0})
		if !c.SetCPUModel(tc.model) {
			t.Fatalf("model %s unknown", tc.model)
		}
		c.SetReg(1, 5)
		c.SetReg(2, tData)
		e := c.Run(10)
		switch {
		case tc.undef && (e.Reason != vm.ExitUndefined || e.PC != tCode || c.Reg(0) != 0):
			t.Errorf("%s: exit %v at %#x, x0 %d; want undefined at %#x", tc.name, e.Reason, e.PC, c.Reg(0), uint64(tCode))
		case !tc.undef && e.Reason != vm.ExitBreakpoint:
			t.Errorf("%s: exit %v (%s), want it to run", tc.name, e.Reason, e.Why)
		}
	}
	c := newTestCPU(t, []uint32{ldaddalX1X0X2, brk0})
	c.SetCPUModel("armv8.0")
	n := c.Clone(c.MM()).(*CPU)
	if n.CPUModel().Name != "armv8.0" {
		t.Errorf("clone has model %s", n.CPUModel().Name)
	}
	if e := n.Run(10); e.Reason != vm.ExitUndefined {
		t.Errorf("clone: exit %v, want undefined", e.Reason)
	}
	if LookupModel("armv8.0").FPCRMask()&fpcrFZ16 != 0 || LookupModel("armv8.2").FPCRMask()&fpcrFZ16 == 0 {
		t.Error("FPCR.FZ16 must be writable exactly with FEAT_FP16")
	}
	if LookupModel("armv7") != nil || c.SetCPUModel("armv7") {
		t.Error("armv7 accepted")
	}
}
