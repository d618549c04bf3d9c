package arm64

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
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

// Encodings used by the table tests (operands d0/x0 = result, d1/x1, d2,
// d3 = inputs).
const (
	siFADD    = 0x1e622820 // fadd d0, d1, d2
	siFSUB    = 0x1e623820 // fsub d0, d1, d2
	siFMUL    = 0x1e620820 // fmul d0, d1, d2
	siFDIV    = 0x1e621820 // fdiv d0, d1, d2
	siFSQRT   = 0x1e61c020 // fsqrt d0, d1
	siFMADD   = 0x1f420c20 // fmadd d0, d1, d2, d3
	siFNMUL   = 0x1e628820 // fnmul d0, d1, d2
	siFCVTZS  = 0x9e780020 // fcvtzs x0, d1
	siFCVTZU  = 0x9e790020 // fcvtzu x0, d1
	siFCVTNS  = 0x9e600020 // fcvtns x0, d1
	siFCVTAS  = 0x9e640020 // fcvtas x0, d1
	siFCVTMS  = 0x9e700020 // fcvtms x0, d1
	siFCVTPS  = 0x9e680020 // fcvtps x0, d1
	siFCVTZSW = 0x1e780020 // fcvtzs w0, d1
	siSCVTF   = 0x9e620020 // scvtf d0, x1
	siUCVTF   = 0x9e630020 // ucvtf d0, x1
	siSCVTFS  = 0x9e220020 // scvtf s0, x1
	siFCMP    = 0x1e622020 // fcmp d1, d2
	siFCMPE   = 0x1e622030 // fcmpe d1, d2
	siFCMP0   = 0x1e602028 // fcmp d1, #0.0
	siFRINTX  = 0x1e674020 // frintx d0, d1
	siFRINTA  = 0x1e664020 // frinta d0, d1
	siFRINTN  = 0x1e644020 // frintn d0, d1
	siFCVTDS  = 0x1e624020 // fcvt s0, d1
	siFCVTSD  = 0x1e22c020 // fcvt d0, s1
	siFMAX    = 0x1e624820 // fmax d0, d1, d2
	siFMIN    = 0x1e625820 // fmin d0, d1, d2
	siFMAXNM  = 0x1e626820 // fmaxnm d0, d1, d2
	siFADDS   = 0x1e222820 // fadd s0, s1, s2
	siFMADDS  = 0x1f020c20 // fmadd s0, s1, s2, s3
	siFCVTZS4 = 0x9e58f020 // fcvtzs x0, d1, #4
	siSCVTF4  = 0x9e42f020 // scvtf d0, x1, #4
	siFMOVI   = 0x1e7e9000 // fmov d0, #-1.25
	siFMOVXD  = 0x9e660020 // fmov x0, d1
	siFMOVDX  = 0x9e670020 // fmov d0, x1
	siFMOVXV1 = 0x9eae0020 // fmov x0, v1.d[1]
	siFCCMP   = 0x1e620425 // fccmp d1, d2, #5, eq
	siFCSEL   = 0x1e62bc20 // fcsel d0, d1, d2, lt
)

// FPCR values
const (
	sRN = 0
	sRP = 1 << 22
	sRM = 2 << 22
	sRZ = 3 << 22
	sFZ = 1 << 24
	sDN = 1 << 25
)

// FPSR flags
const (
	sIOC = 1 << 0
	sDZC = 1 << 1
	sOFC = 1 << 2
	sUFC = 1 << 3
	sIXC = 1 << 4
	sIDC = 1 << 7
)

func sf64(x float64) uint64 { return math.Float64bits(x) }
func sf32(x float32) uint64 { return uint64(math.Float32bits(x)) }

const (
	sQNaN     = 0x7ff8000000000000
	sSNaN     = 0x7ff0000000000001
	sInf      = 0x7ff0000000000000
	sNInf     = 0xfff0000000000000
	sNegZ     = 0x8000000000000000
	sMinSub   = 0x0000000000000001
	sMinNorm  = 0x0010000000000000
	sMaxFloat = 0x7fefffffffffffff
)

type simdFPCase struct {
	name       string
	insn       uint32
	fpcr       uint32
	d1, d2, d3 uint64 // inputs (also x1 = d1)
	want       uint64 // d0 (or x0 for conversions to integer, nzcv for compares)
	flags      uint32 // FPSR after, starting from 0
}

var simdFPCases = []simdFPCase{
	// rounding modes: 1 + 2^-60 and 1/3
	{"add RN", siFADD, sRN, sf64(1), sf64(0x1p-60), 0, sf64(1), sIXC},
	{"add RP", siFADD, sRP, sf64(1), sf64(0x1p-60), 0, sf64(1) + 1, sIXC},
	{"add RM", siFADD, sRM, sf64(1), sf64(0x1p-60), 0, sf64(1), sIXC},
	{"add RZ neg", siFADD, sRZ, sf64(-1), sf64(-0x1p-60), 0, sf64(-1), sIXC},
	{"add RM neg", siFADD, sRM, sf64(-1), sf64(-0x1p-60), 0, sf64(-1) + 1, sIXC},
	{"add exact", siFADD, sRN, sf64(1.5), sf64(2.25), 0, sf64(3.75), 0},
	{"div RN", siFDIV, sRN, sf64(1), sf64(3), 0, 0x3fd5555555555555, sIXC},
	{"div RP", siFDIV, sRP, sf64(1), sf64(3), 0, 0x3fd5555555555556, sIXC},
	{"div RZ", siFDIV, sRZ, sf64(1), sf64(3), 0, 0x3fd5555555555555, sIXC},
	{"div RM neg", siFDIV, sRM, sf64(-1), sf64(3), 0, 0xbfd5555555555556, sIXC},
	// x - x is +0, except -0 when rounding towards -Inf
	{"sub zero", siFSUB, sRN, sf64(5), sf64(5), 0, 0, 0},
	{"sub zero RM", siFSUB, sRM, sf64(5), sf64(5), 0, sNegZ, 0},
	// exceptions
	{"div by zero", siFDIV, sRN, sf64(1), 0, 0, sInf, sDZC},
	{"div -1/0", siFDIV, sRN, sf64(-1), 0, 0, sNInf, sDZC},
	{"0/0", siFDIV, sRN, 0, 0, 0, sQNaN, sIOC},
	{"sInf-sInf", siFSUB, sRN, sInf, sInf, 0, sQNaN, sIOC},
	{"0*sInf", siFMUL, sRN, 0, sInf, 0, sQNaN, sIOC},
	{"sqrt -1", siFSQRT, sRN, sf64(-1), 0, 0, sQNaN, sIOC},
	{"sqrt 2", siFSQRT, sRN, sf64(2), 0, 0, sf64(math.Sqrt2), sIXC},
	{"sqrt 2 RM", siFSQRT, sRM, sf64(2), 0, 0, sf64(math.Sqrt2) - 1, sIXC}, // Sqrt2 is above the true root
	{"sqrt 4", siFSQRT, sRN, sf64(4), 0, 0, sf64(2), 0},
	{"sqrt -0", siFSQRT, sRN, sNegZ, 0, 0, sNegZ, 0},
	{"overflow", siFMUL, sRN, sMaxFloat, sf64(2), 0, sInf, sOFC | sIXC},
	{"overflow RZ", siFMUL, sRZ, sMaxFloat, sf64(2), 0, sMaxFloat, sOFC | sIXC},
	{"overflow RM", siFMUL, sRM, sMaxFloat, sf64(2), 0, sMaxFloat, sOFC | sIXC},
	{"overflow RM neg", siFMUL, sRM, sMaxFloat, sf64(-2), 0, sNInf, sOFC | sIXC},
	{"underflow to 0", siFMUL, sRN, sf64(1e-200), sf64(1e-200), 0, 0, sUFC | sIXC},
	{"underflow RP", siFMUL, sRP, sf64(1e-200), sf64(1e-200), 0, sMinSub, sUFC | sIXC},
	{"exact subnormal", siFMUL, sRN, sMinNorm, sf64(0.5), 0, sMinNorm >> 1, 0},
	{"inexact subnormal", siFMUL, sRN, sMinNorm + 1, sf64(0.5), 0, sMinNorm >> 1, sUFC | sIXC},
	// tiny before rounding: rounds up to the smallest normal, still UFC
	{"round up to min normal", siFMUL, sRN, sMinNorm - 1, sf64(1 + 0x1p-52), 0, sMinNorm, sUFC | sIXC},
	// NaN propagation
	{"sQNaN + 1", siFADD, sRN, sQNaN | 5, sf64(1), 0, sQNaN | 5, 0},
	{"1 + sSNaN", siFADD, sRN, sf64(1), sSNaN, 0, sQNaN | 1, sIOC},
	{"sQNaN + sSNaN", siFADD, sRN, sQNaN | 7, sSNaN, 0, sQNaN | 1, sIOC},
	{"sSNaN DN", siFADD, sDN, sSNaN, sf64(1), 0, sQNaN, sIOC},
	{"sQNaN DN", siFADD, sDN, sQNaN | 9, sf64(1), 0, sQNaN, 0},
	{"neg nan fnmul", siFNMUL, sRN, sQNaN | 3, sf64(1), 0, (sQNaN | 3) ^ sNegZ, 0},
	// flush to zero
	{"FZ input", siFADD, sFZ, sMinSub, sf64(1), 0, sf64(1), sIDC},
	{"FZ output", siFMUL, sFZ, sMinNorm, sf64(0.5), 0, 0, sUFC},
	{"FZ off subnormal", siFADD, sRN, sMinSub, sMinSub, 0, 2, 0},
	// fused multiply-add: (1+2^-30)(1-2^-30) - 1 = -2^-60 exactly
	{"fmadd fused", siFMADD, sRN, sf64(1 + 0x1p-30), sf64(1 - 0x1p-30), sf64(-1), sf64(-0x1p-60), 0},
	{"fmadd inexact", siFMADD, sRN, sf64(0.1), sf64(10), sf64(-1), sf64(5.551115123125783e-17), 0},
	{"fmadd 0*sInf+sQNaN", siFMADD, sRN, 0, sInf, sQNaN | 1, sQNaN, sIOC},
	{"fmadd sInf-sInf", siFMADD, sRN, sf64(1), sInf, sNInf, sQNaN, sIOC},
	// conversions to integer
	{"fcvtzs 1e20", siFCVTZS, sRN, sf64(1e20), 0, 0, math.MaxInt64, sIOC},
	{"fcvtzs -1e20", siFCVTZS, sRN, sf64(-1e20), 0, 0, 1 << 63, sIOC},
	{"fcvtzs nan", siFCVTZS, sRN, sQNaN, 0, 0, 0, sIOC},
	{"fcvtzs -1.5", siFCVTZS, sRN, sf64(-1.5), 0, 0, uint64(1<<64 - 1), sIXC},
	{"fcvtzs -2^63", siFCVTZS, sRN, sf64(-0x1p63), 0, 0, 1 << 63, 0},
	{"fcvtzs w 3e9", siFCVTZSW, sRN, sf64(3e9), 0, 0, math.MaxInt32, sIOC},
	{"fcvtzs w -7.9", siFCVTZSW, sRN, sf64(-7.9), 0, 0, uint64(uint32(0xfffffff9)), sIXC},
	{"fcvtzu -1", siFCVTZU, sRN, sf64(-1), 0, 0, 0, sIOC},
	{"fcvtzu -0.5", siFCVTZU, sRN, sf64(-0.5), 0, 0, 0, sIXC},
	{"fcvtzu 2^64", siFCVTZU, sRN, sf64(0x1p64), 0, 0, math.MaxUint64, sIOC},
	{"fcvtzu 2^63", siFCVTZU, sRN, sf64(0x1p63), 0, 0, 1 << 63, 0},
	{"fcvtns 2.5", siFCVTNS, sRN, sf64(2.5), 0, 0, 2, sIXC},
	{"fcvtns 3.5", siFCVTNS, sRN, sf64(3.5), 0, 0, 4, sIXC},
	{"fcvtas 2.5", siFCVTAS, sRN, sf64(2.5), 0, 0, 3, sIXC},
	{"fcvtas -2.5", siFCVTAS, sRN, sf64(-2.5), 0, 0, uint64(1<<64 - 3), sIXC},
	{"fcvtms -2.5", siFCVTMS, sRN, sf64(-2.5), 0, 0, uint64(1<<64 - 3), sIXC},
	{"fcvtps -2.5", siFCVTPS, sRN, sf64(-2.5), 0, 0, uint64(1<<64 - 2), sIXC},
	{"fcvtps 2.1", siFCVTPS, sRN, sf64(2.1), 0, 0, 3, sIXC},
	{"fcvtzs fixed", siFCVTZS4, sRN, sf64(1.5), 0, 0, 24, 0},
	// conversions from integer
	{"scvtf -3", siSCVTF, sRN, uint64(1<<64 - 3), 0, 0, sf64(-3), 0},
	{"scvtf 2^53+1", siSCVTF, sRN, 1<<53 + 1, 0, 0, sf64(0x1p53), sIXC},
	{"scvtf 2^53+1 RP", siSCVTF, sRP, 1<<53 + 1, 0, 0, sf64(0x1p53) + 1, sIXC},
	{"ucvtf 2^64-1", siUCVTF, sRN, math.MaxUint64, 0, 0, sf64(0x1p64), sIXC},
	{"ucvtf 2^64-1 RZ", siUCVTF, sRZ, math.MaxUint64, 0, 0, sf64(0x1p64) - 1, sIXC},
	{"scvtf s 2^24+1", siSCVTFS, sRN, 1<<24 + 1, 0, 0, sf32(0x1p24), sIXC},
	{"scvtf fixed", siSCVTF4, sRN, 24, 0, 0, sf64(1.5), 0},
	// compares: nzcv
	{"fcmp lt", siFCMP, sRN, sf64(1), sf64(2), 0, 0b1000, 0},
	{"fcmp eq", siFCMP, sRN, sf64(2), sf64(2), 0, 0b0110, 0},
	{"fcmp gt", siFCMP, sRN, sf64(3), sf64(2), 0, 0b0010, 0},
	{"fcmp -0 +0", siFCMP, sRN, sNegZ, 0, 0, 0b0110, 0},
	{"fcmp sQNaN", siFCMP, sRN, sQNaN, sf64(2), 0, 0b0011, 0},
	{"fcmp sSNaN", siFCMP, sRN, sSNaN, sf64(2), 0, 0b0011, sIOC},
	{"fcmpe sQNaN", siFCMPE, sRN, sf64(1), sQNaN, 0, 0b0011, sIOC},
	{"fcmp #0", siFCMP0, sRN, sf64(-5), 0, 0, 0b1000, 0},
	{"fcmp FZ", siFCMP, sFZ, sMinSub, 0, 0, 0b0110, sIDC},
	// round to integral
	{"frintx 2.5", siFRINTX, sRN, sf64(2.5), 0, 0, sf64(2), sIXC},
	{"frintx 2.5 RP", siFRINTX, sRP, sf64(2.5), 0, 0, sf64(3), sIXC},
	{"frintx 2", siFRINTX, sRN, sf64(2), 0, 0, sf64(2), 0},
	{"frinta -2.5", siFRINTA, sRN, sf64(-2.5), 0, 0, sf64(-3), 0},
	{"frintn -0.5", siFRINTN, sRN, sf64(-0.5), 0, 0, sNegZ, 0},
	{"frintn sSNaN", siFRINTN, sRN, sSNaN, 0, 0, sQNaN | 1, sIOC},
	// precision conversions
	{"fcvt d->s 1e40", siFCVTDS, sRN, sf64(1e40), 0, 0, sf32(float32(math.Inf(1))), sOFC | sIXC},
	{"fcvt d->s 1e-50", siFCVTDS, sRN, sf64(1e-50), 0, 0, 0, sUFC | sIXC},
	{"fcvt d->s 0.1", siFCVTDS, sRN, sf64(0.1), 0, 0, sf32(0.1), sIXC},
	{"fcvt d->s nan payload", siFCVTDS, sRN, 0xfff8000020000000, 0, 0, 0xffc00001, 0},
	{"fcvt s->d sSNaN", siFCVTSD, sRN, 0x7f800001, 0, 0, 0x7ff8000020000000, sIOC},
	// max/min
	{"fmax +0 -0", siFMAX, sRN, 0, sNegZ, 0, 0, 0},
	{"fmin +0 -0", siFMIN, sRN, 0, sNegZ, 0, sNegZ, 0},
	{"fmax sQNaN", siFMAX, sRN, sQNaN, sf64(1), 0, sQNaN, 0},
	{"fmaxnm sQNaN", siFMAXNM, sRN, sQNaN, sf64(1), 0, sf64(1), 0},
	{"fmaxnm sSNaN", siFMAXNM, sRN, sSNaN, sf64(1), 0, sQNaN | 1, sIOC},
	// single precision
	{"fadd s", siFADDS, sRN, sf32(1), sf32(0x1p-30), 0, sf32(1), sIXC},
	{"fadd s RP", siFADDS, sRP, sf32(1), sf32(0x1p-30), 0, sf32(1) + 1, sIXC},
	{"fmadd s fused", siFMADDS, sRN, sf32(1 + 0x1p-12), sf32(1 - 0x1p-12), sf32(-1), sf32(-0x1p-24), 0},
	// moves
	{"fmov imm", siFMOVI, sRN, 0, 0, 0, sf64(-1.25), 0},
	{"fmov x<-d", siFMOVXD, sRN, sf64(3.5), 0, 0, sf64(3.5), 0},
	{"fmov d<-x", siFMOVDX, sRN, sf64(3.5), 0, 0, sf64(3.5), 0},
}

// simdIntResult reports whether an instruction's result is in x0.
func simdIntResult(insn uint32) bool {
	switch insn {
	case siFCVTZS, siFCVTZU, siFCVTNS, siFCVTAS, siFCVTMS, siFCVTPS, siFCVTZSW, siFCVTZS4, siFMOVXD:
		return true
	}
	return false
}

func TestSIMDFloatTable(t *testing.T) {
	for _, tc := range simdFPCases {
		for _, ixcPreset := range []bool{false, true} {
			c := simdCPU(t, tc.insn)
			r := c.Regs()
			r.FPCR = tc.fpcr
			if ixcPreset {
				r.FPSR = sIXC // exercises the fast paths that skip the IXC check
			}
			r.V[1] = [2]uint64{tc.d1, 0xdead}
			r.V[2] = [2]uint64{tc.d2, 0xdead}
			r.V[3] = [2]uint64{tc.d3, 0xdead}
			r.V[0] = [2]uint64{0x1111, 0x2222}
			r.X[1] = tc.d1
			simdRun(t, c)
			var got uint64
			switch {
			case tc.insn == siFCMP || tc.insn == siFCMPE || tc.insn == siFCMP0:
				got = r.NZCV >> 28
			case simdIntResult(tc.insn):
				got = r.X[0]
			default:
				got = r.V[0][0]
				if r.V[0][1] != 0 {
					t.Errorf("%s: upper half of v0 not cleared: %x", tc.name, r.V[0][1])
				}
			}
			wantFlags := tc.flags
			if ixcPreset {
				wantFlags |= sIXC
			}
			if got != tc.want || r.FPSR != wantFlags {
				t.Errorf("%s (fpsr preset %v): got %#x fpsr %#x, want %#x fpsr %#x", tc.name, ixcPreset, got, r.FPSR, tc.want, wantFlags)
			}
		}
	}
}

func TestSIMDCondOps(t *testing.T) {
	// fccmp d1, d2, #5, eq: condition false -> nzcv = 5; true -> compare
	c := simdCPU(t, siFCCMP)
	r := c.Regs()
	r.V[1][0], r.V[2][0] = sf64(1), sf64(2)
	r.NZCV = 0 // Z clear: eq false
	simdRun(t, c)
	if r.NZCV>>28 != 5 {
		t.Errorf("fccmp (false) nzcv = %x", r.NZCV>>28)
	}
	c = simdCPU(t, siFCCMP)
	r = c.Regs()
	r.V[1][0], r.V[2][0] = sf64(1), sf64(2)
	r.NZCV = 0b0100 << 28
	simdRun(t, c)
	if r.NZCV>>28 != 0b1000 {
		t.Errorf("fccmp (true) nzcv = %x", r.NZCV>>28)
	}
	// fcsel d0, d1, d2, lt
	c = simdCPU(t, siFCSEL)
	r = c.Regs()
	r.V[1][0], r.V[2][0] = 111, 222
	r.NZCV = 0b1000 << 28 // N != V: lt
	simdRun(t, c)
	if r.V[0][0] != 111 {
		t.Errorf("fcsel lt: %d", r.V[0][0])
	}
	// fmov x0, v1.d[1]
	c = simdCPU(t, siFMOVXV1)
	r = c.Regs()
	r.V[1] = [2]uint64{1, 0x123456789}
	simdRun(t, c)
	if r.X[0] != 0x123456789 {
		t.Errorf("fmov x0, v1.d[1] = %x", r.X[0])
	}
}

// simdBytes builds a vector from 16 bytes (byte 0 = lowest).
func simdBytes(b ...byte) [2]uint64 {
	var v [2]uint64
	for i, x := range b {
		v[i/8] |= uint64(x) << (8 * (i % 8))
	}
	return v
}

func simdSeq(start byte) [2]uint64 {
	var b [16]byte
	for i := range b {
		b[i] = start + byte(i)
	}
	return simdBytes(b[:]...)
}

func TestSIMDStructureWrap(t *testing.T) {
	// ld4 {v30.4s, v31.4s, v0.4s, v1.4s}, [sp], #64: de-interleaves 16
	// words; the register list wraps from v31 to v0; SP is written back.
	c := simdCPU(t, 0x4cdf0bfe)
	r := c.Regs()
	sp := uint64(0x600100)
	r.SP = sp
	var mem [64]byte
	for i := 0; i < 16; i++ {
		binary.LittleEndian.PutUint32(mem[4*i:], uint32(i))
	}
	if err := c.MM().Poke(mem[:], sp); err != nil {
		t.Fatal(err)
	}
	simdRun(t, c)
	for k, reg := range []int{30, 31, 0, 1} {
		for e := 0; e < 4; e++ {
			if got := elem(&r.V[reg], e, 2); got != uint64(4*e+k) {
				t.Errorf("v%d.s[%d] = %d, want %d", reg, e, got, 4*e+k)
			}
		}
	}
	if r.SP != sp+64 {
		t.Errorf("sp = %#x, want %#x", r.SP, sp+64)
	}

	// st4 of the same registers to x1 re-interleaves them.
	c2 := simdCPU(t, 0x4c00083e)
	c2.Regs().V = r.V
	c2.Regs().X[1] = 0x600200
	simdRun(t, c2)
	var out [64]byte
	if err := c2.MM().Peek(out[:], 0x600200); err != nil {
		t.Fatal(err)
	}
	if out != mem {
		t.Errorf("st4 wrote %x, want %x", out, mem)
	}
}

func TestSIMDTableWrap(t *testing.T) {
	// tbl v0.16b, {v30.16b, v31.16b, v0.16b}, v2.16b
	c := simdCPU(t, 0x4e0243c0)
	r := c.Regs()
	r.V[30], r.V[31], r.V[0] = simdSeq(0), simdSeq(16), simdSeq(32)
	r.V[2] = simdBytes(0, 15, 16, 31, 32, 47, 48, 255, 5, 40, 1, 2, 3, 4, 17, 33)
	simdRun(t, c)
	want := simdBytes(0, 15, 16, 31, 32, 47, 0, 0, 5, 40, 1, 2, 3, 4, 17, 33)
	if r.V[0] != want {
		t.Errorf("tbl = %x, want %x", r.V[0], want)
	}
	// tbx v3.8b, {v4.16b}, v5.8b: out-of-range indices keep v3's bytes;
	// the upper half of v3 is cleared (64-bit form).
	c = simdCPU(t, 0x0e051083)
	r = c.Regs()
	r.V[3] = simdBytes(9, 9, 9, 9, 9, 9, 9, 9, 7, 7, 7, 7, 7, 7, 7, 7)
	r.V[4] = simdSeq(100)
	r.V[5] = simdBytes(0, 16, 15, 200, 1, 2, 3, 4)
	simdRun(t, c)
	if want := simdBytes(100, 9, 115, 9, 101, 102, 103, 104); r.V[3] != want {
		t.Errorf("tbx = %x, want %x", r.V[3], want)
	}
}

func TestSIMDLoadStoreFaults(t *testing.T) {
	// ld1 {v0.16b, v1.16b}, [x1] where the second register's bytes lie in
	// an unmapped page: a fault, and v0/v1 unchanged.
	c := simdCPU(t, 0x4c40a020)
	r := c.Regs()
	r.X[1] = 0x610000 - 16
	r.V[0], r.V[1] = simdSeq(1), simdSeq(2)
	e := c.Run(100)
	if e.Reason != vm.ExitFault || e.PC != 0x400000 {
		t.Fatalf("exit %v at %#x, want fault at 0x400000", e.Reason, e.PC)
	}
	if r.V[0] != simdSeq(1) || r.V[1] != simdSeq(2) {
		t.Errorf("registers changed by a faulting load")
	}
	// st1 {v0.2d, v1.2d}, [x1], x2 crossing into the unmapped page: no
	// byte written, no writeback.
	c = simdCPU(t, 0x4c82ac20)
	r = c.Regs()
	r.X[1] = 0x610000 - 16
	r.X[2] = 32
	r.V[0], r.V[1] = simdSeq(1), simdSeq(2)
	e = c.Run(100)
	if e.Reason != vm.ExitFault {
		t.Fatalf("exit %v, want fault", e.Reason)
	}
	var b [16]byte
	if err := c.MM().Peek(b[:], 0x610000-16); err != nil {
		t.Fatal(err)
	}
	if b != [16]byte{} || r.X[1] != 0x610000-16 {
		t.Errorf("faulting store wrote %x, x1 = %#x", b, r.X[1])
	}
	// the same store in range: 32 bytes and writeback by x2
	r.X[1] = 0x600000
	r.PC = 0x400000
	simdRun(t, c)
	var out [32]byte
	if err := c.MM().Peek(out[:], 0x600000); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 16; i++ {
		if out[i] != byte(1+i) || out[16+i] != byte(2+i) {
			t.Fatalf("st1 wrote %x", out)
		}
	}
	if r.X[1] != 0x600020 {
		t.Errorf("x1 = %#x after post-index", r.X[1])
	}
}

// TestSIMDStringIdioms runs the vector idioms of glibc's strlen/memchr and
// Go's IndexByte on hand-made data.
func TestSIMDStringIdioms(t *testing.T) {
	data := simdBytes('h', 'e', 'l', 'l', 'o', 0, 'x', 0, 1, 2, 3, 4, 5, 6, 7, 0)
	c := simdCPU(t,
		0x4e209801, // cmeq v1.16b, v0.16b, #0
		0x0f0c8421, // shrn v1.8b, v1.8h, #4
	)
	r := c.Regs()
	r.V[0] = data
	simdRun(t, c)
	// each input byte becomes one nibble of a 64-bit syndrome
	if r.V[1][0] != 0xf0000000f0f00000 { // nibbles 5, 7 and 15
		t.Errorf("cmeq+shrn syndrome = %#x", r.V[1][0])
	}
	if r.V[1][1] != 0 {
		t.Errorf("shrn left upper half %#x", r.V[1][1])
	}
	c = simdCPU(t,
		0x4e209801, // cmeq v1.16b, v0.16b, #0
		0x6e21a421, // umaxp v1.16b, v1.16b, v1.16b
		0x4e31b802, // addv b2, v0.16b (addv b1 with Rd=2)
	)
	r = c.Regs()
	r.V[0] = data
	simdRun(t, c)
	if want := simdBytes(0, 0, 0xff, 0xff, 0, 0, 0, 0xff, 0, 0, 0xff, 0xff, 0, 0, 0, 0xff); r.V[1] != want {
		t.Errorf("umaxp = %x, want %x", r.V[1], want)
	}
	var sum byte
	for i := 0; i < 16; i++ {
		sum += byte(elem(&data, i, 0))
	}
	if r.V[2] != [2]uint64{uint64(sum), 0} {
		t.Errorf("addv = %x, want %x", r.V[2], sum)
	}
}

func TestSIMDSaturation(t *testing.T) {
	// uqxtn v1.8b, v0.8h
	c := simdCPU(t, 0x2e214801)
	r := c.Regs()
	r.V[0] = [2]uint64{0x0100_00ff_0010_ffff, 0x0000_0001_7fff_0080}
	simdRun(t, c)
	if want := simdBytes(0xff, 0x10, 0xff, 0xff, 0x80, 0xff, 0x01, 0x00); r.V[1] != want || r.FPSR != fpsrQC {
		t.Errorf("uqxtn = %x fpsr %#x, want %x with QC", r.V[1], r.FPSR, want)
	}
	// sqadd v1.4s, v0.4s, v2.4s
	c = simdCPU(t, 0x4ea20c01)
	r = c.Regs()
	r.V[0] = [2]uint64{0x7fffffff_00000001, 0x80000000_fffffffe}
	r.V[2] = [2]uint64{0x00000001_00000002, 0xffffffff_00000001}
	simdRun(t, c)
	if want := [2]uint64{0x7fffffff_00000003, 0x80000000_ffffffff}; r.V[1] != want || r.FPSR != fpsrQC {
		t.Errorf("sqadd = %x fpsr %#x, want %x with QC", r.V[1], r.FPSR, want)
	}
}
