package arm64

import (
	"encoding/binary"
	"math"
	"testing"

	"uvm/vm"
)

// simdCPU maps code at 0x400000 (BRK #0 appended) and 64 KiB of data at
// 0x600000, and returns a CPU at the first instruction.
func simdCPU(t testing.TB, code ...uint32) *CPU {
	t.Helper()
	mm := vm.NewMM()
	for _, v := range []vm.VMA{
		{Start: 0x400000, End: 0x410000, Prot: vm.ProtRead | vm.ProtExec},
		{Start: 0x600000, End: 0x610000, Prot: vm.ProtRead | vm.ProtWrite},
	} {
		if err := mm.Map(v); err != nil {
			t.Fatal(err)
		}
	}
	code = append(code, 0xd4200000)
	b := make([]byte, 4*len(code))
	for i, w := range code {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	if err := mm.Poke(b, 0x400000); err != nil {
		t.Fatal(err)
	}
	c := NewCPU(mm)
	c.SetPC(0x400000)
	c.SetSP(0x610000)
	return c
}

func simdRun(t testing.TB, c *CPU) {
	t.Helper()
	e := c.Run(1 << 40)
	if e.Reason != vm.ExitBreakpoint {
		t.Fatalf("exit %v at %#x: %s", e.Reason, e.PC, e.Why)
	}
}

// simdLoop is a loop of common FP/SIMD instructions; x0 counts iterations,
// x3/x5 point to data.
var simdLoop = []uint32{
	0x1f420020, // fmadd d0, d1, d2, d0
	0x1e612863, // fadd d3, d3, d1
	0x1e632000, // fcmp d0, d3
	0x1e63cc04, // fcsel d4, d0, d3, gt
	0x9e620025, // scvtf d5, x1
	0x9e7800a2, // fcvtzs x2, d5
	0x4c407060, // ld1 {v0.16b}, [x3]
	0x6e228c01, // cmeq v1.16b, v0.16b, v2.16b
	0x4e21bc21, // addp v1.16b, v1.16b, v1.16b
	0x4e083c24, // mov x4, v1.d[0]
	0x0e2058c6, // cnt v6.8b, v6.8b
	0x2e3038c6, // uaddlv h6, v6.8b
	0x6e68dce7, // fmul v7.2d, v7.2d, v8.2d
	0x4c0070a0, // st1 {v0.16b}, [x5]
	0xf1000400, // subs x0, x0, #1
	0x54fffe21, // b.ne loop
}

func setupSIMDLoop(t testing.TB, iters uint64) *CPU {
	c := simdCPU(t, simdLoop...)
	r := c.Regs()
	r.X[0] = iters
	r.X[1] = 12345
	r.X[3] = 0x600000
	r.X[5] = 0x600100
	r.V[1][0] = math.Float64bits(1.25)
	r.V[2][0] = math.Float64bits(0.999)
	r.V[7] = [2]uint64{math.Float64bits(1.0000001), math.Float64bits(0.9999999)}
	r.V[8] = r.V[7]
	return c
}

func TestSIMDLoopNoAllocs(t *testing.T) {
	c := setupSIMDLoop(t, 1000)
	simdRun(t, c) // warm up: decode, TLB
	allocs := testing.AllocsPerRun(10, func() {
		r := c.Regs()
		r.X[0] = 1000
		r.PC = 0x400000
		simdRun(t, c)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run of 16000 instructions", allocs)
	}
	if got := math.Float64frombits(c.Regs().V[5][0]); got != 12345 {
		t.Errorf("d5 = %v", got)
	}
	if c.Regs().X[2] != 12345 {
		t.Errorf("x2 = %d", c.Regs().X[2])
	}
}

func BenchmarkSIMDLoop(b *testing.B) {
	c := setupSIMDLoop(b, 1)
	simdRun(b, c)
	b.ResetTimer()
	r := c.Regs()
	r.X[0] = uint64(b.N)
	r.PC = 0x400000
	simdRun(b, c)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(simdLoop)), "ns/insn")
}
