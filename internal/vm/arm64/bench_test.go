package arm64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// fibCode is a hand-assembled recursive fib(x0) ending in BRK #0.
var fibCode = []uint32{
	0x94000002, // bl fib
	0xd4200000, // brk #0
	0xf100081f, // fib: cmp x0, #2
	0x540001c3, // b.lo 1f
	0xa9be7bfd, // stp x29, x30, [sp, #-32]!
	0x910003fd, // mov x29, sp
	0xf9000bf3, // str x19, [sp, #16]
	0xaa0003f3, // mov x19, x0
	0xd1000400, // sub x0, x0, #1
	0x97fffff9, // bl fib
	0xaa0003e1, // mov x1, x0
	0xd1000a60, // sub x0, x19, #2
	0xaa0103f3, // mov x19, x1
	0x97fffff5, // bl fib
	0x8b130000, // add x0, x0, x19
	0xf9400bf3, // ldr x19, [sp, #16]
	0xa8c27bfd, // ldp x29, x30, [sp], #32
	0xd65f03c0, // 1: ret
}

// sumCode sums x3 doublewords at x0 into x1 (a load/add/count/branch loop).
var sumCode = []uint32{
	0xf8408402, // 1: ldr x2, [x0], #8
	0x8b020021, // add x1, x1, x2
	0xf1000463, // subs x3, x3, #1
	0x54ffffa1, // b.ne 1b
	brk0,
}

func TestFib(t *testing.T) {
	c := newTestCPU(t, fibCode)
	c.SetReg(0, 20)
	runToBrk(t, c)
	if c.Reg(0) != 6765 {
		t.Errorf("fib(20) = %d", c.Reg(0))
	}
}

// TestNoAllocs guards the zero-allocation rule of the hot loop.
func TestNoAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []uint32
		x0   uint64
		x3   uint64
	}{{"fib", fibCode, 15, 0}, {"sum", sumCode, tData, 1000}} {
		c := newTestCPU(t, tc.code)
		c.SetReg(0, tc.x0)
		c.SetReg(3, tc.x3)
		runToBrk(t, c) // warm the caches
		allocs := testing.AllocsPerRun(20, func() {
			c.SetPC(tCode)
			c.SetSP(tStack)
			c.SetReg(0, tc.x0)
			c.SetReg(3, tc.x3)
			if e := c.Run(1 << 40); e.Reason != vm.ExitBreakpoint {
				t.Fatalf("%+v", e)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per run", tc.name, allocs)
		}
	}
}

func benchProgram(b *testing.B, code []uint32, setup func(c *CPU)) {
	c := newTestCPU(b, code)
	setup(c)
	runToBrk(b, c)
	b.ReportAllocs()
	b.ResetTimer()
	start := c.Retired()
	for i := 0; i < b.N; i++ {
		c.SetPC(tCode)
		c.SetSP(tStack)
		setup(c)
		if e := c.Run(1 << 40); e.Reason != vm.ExitBreakpoint {
			b.Fatalf("%+v", e)
		}
	}
	b.StopTimer()
	insns := float64(c.Retired() - start)
	ns := float64(b.Elapsed().Nanoseconds())
	b.ReportMetric(ns/insns, "ns/insn")
	b.ReportMetric(insns/ns*1000, "MIPS")
}

// BenchmarkFib runs recursive fib(25) (about 1.1 M guest instructions).
func BenchmarkFib(b *testing.B) {
	benchProgram(b, fibCode, func(c *CPU) { c.SetReg(0, 25) })
}

// BenchmarkSum runs a 4-instruction load/add loop over 8 KiB.
func BenchmarkSum(b *testing.B) {
	benchProgram(b, sumCode, func(c *CPU) { c.SetReg(0, tData); c.SetReg(3, 1024) })
}
