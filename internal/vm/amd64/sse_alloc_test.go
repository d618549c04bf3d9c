package amd64

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// sseMixCode is a block of SSE, SSE4.2 and x87 instructions (assembled
// with GNU as) working on memory at RDI: vector loads/stores, compares,
// shuffles, scalar and packed FP, conversions, PCMPISTRI, CRC32, x87
// loads/arithmetic/stores and control-word traffic.
const sseMixCode = "f30f6f07660f6f4f10660f74c1660fd7c0660fdac1660ffec1660f70d01b660f60d1660f3800d1" +
	"660f3a0fd105660ff6d1660f67d1660f73da03660feed1660f66d1660f72e203f30f7f5720b803000000" +
	"f20f2ad8f20f58dbf20f59dbf20f5e5f30f20f51e3f20f5de3f20fc2e301660f2edcf2480f2cc3f20f5aeb" +
	"0f58ed660f59db660f3a0bdb09660f3a630f0cf20f38f007dd4730db6f40dec1d8c8d9e5dfe0dd5f50d9e8" +
	"db5f60d97f64d96f640fae5f680fae5768660fc5c103660fc4c805"

// TestSSENoAllocs guards the zero-allocation rule for the SSE/x87 half,
// through both the host fast path and the soft-float paths.
func TestSSENoAllocs(t *testing.T) {
	c := newTestCPU(t, h(sseMixCode), false)
	var data [128]byte
	for i := range 32 {
		data[i] = byte('a' + i%7)
	}
	binary.LittleEndian.PutUint64(data[48:], math.Float64bits(7))
	binary.LittleEndian.PutUint64(data[64:], 0xC000000000000000) // 1.5 as F80
	binary.LittleEndian.PutUint16(data[72:], 0x3FFF)
	if err := c.mm.Poke(data[:], tData); err != nil {
		t.Fatal(err)
	}
	for _, mxcsr := range []uint32{MXCSRDefault, MXCSRDefault | fpPE, 0x7F80} {
		run := func() {
			c.SetPC(tCode)
			c.SetSP(tStackTop - 8)
			c.SetReg(7, tData)
			c.regs.MXCSR = mxcsr
			c.regs.InitFPU()
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

// BenchmarkSSEMix measures the block above (run with -benchtime=1x in CI).
func BenchmarkSSEMix(b *testing.B) {
	c := newTestCPU(b, h(sseMixCode), false)
	b.ReportAllocs()
	for b.Loop() {
		c.SetPC(tCode)
		c.SetSP(tStackTop - 8)
		c.SetReg(7, tData)
		c.regs.InitFPU()
		c.regs.MXCSR |= fpPE
		if e := c.Run(1 << 30); e.Reason != vm.ExitBreakpoint {
			b.Fatalf("exit %v", e.Reason)
		}
	}
}
