package amd64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// avxMixCode is a block of AVX/AVX2/FMA/F16C instructions (assembled with
// GNU as) working on memory at RDI: 256-bit loads/stores, integer and FP
// lane ops, cross-lane permutes, blends, variable shifts, FMA, compares,
// broadcasts, conversions, VPTEST and VZEROUPPER.
const avxMixCode = "c5fe6f07c5fe6f4f20c5fdfed1c4e26d00d9c4e3fd00e31bc5dd74e8c5fdd7c5c4e37d4cf150" +
	"c4e24d47f9c5c571d703c57c5bc0c4423db8c0c4413d58c8c4413359d1c4413cc2d911c4627d186704" +
	"c4631d46e821c4437d39ee01c4427d30fec4627d17f8c4637d1dc104c57e7f7f40c5f877"

// TestAVXNoAllocs guards the zero-allocation rule for the AVX half.
func TestAVXNoAllocs(t *testing.T) {
	c := newTestCPU(t, h(avxMixCode), false)
	c.SetCPUModel("x86-64-v3")
	var data [128]byte
	for i := range data {
		data[i] = byte(i*37 + 5)
	}
	if err := c.mm.Poke(data[:], tData); err != nil {
		t.Fatal(err)
	}
	for _, mxcsr := range []uint32{MXCSRDefault, MXCSRDefault | fpPE} {
		run := func() {
			c.SetPC(tCode)
			c.SetSP(tStackTop - 8)
			c.SetReg(7, tData)
			c.regs.MXCSR = mxcsr
			if e := c.Run(1 << 30); e.Reason != vm.ExitBreakpoint {
				t.Fatalf("exit %v at %#x (%s) %s", e.Reason, e.PC, c.Disasm(e.PC), e.Why)
			}
		}
		run()
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("mxcsr %#x: %v allocations per run", mxcsr, a)
		}
	}
}

// BenchmarkAVXMix measures the block above.
func BenchmarkAVXMix(b *testing.B) {
	c := newTestCPU(b, h(avxMixCode), false)
	c.SetCPUModel("x86-64-v3")
	b.ReportAllocs()
	for b.Loop() {
		c.SetPC(tCode)
		c.SetSP(tStackTop - 8)
		c.SetReg(7, tData)
		c.regs.MXCSR = MXCSRDefault | fpPE
		if e := c.Run(1 << 30); e.Reason != vm.ExitBreakpoint {
			b.Fatalf("exit %v", e.Reason)
		}
	}
}
