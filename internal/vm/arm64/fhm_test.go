package arm64

// FEAT_FHM (FMLAL, FMLAL2, FMLSL, FMLSL2: vector and by element) and the
// half-precision forms of FEAT_FCMA (FCMLA .4H/.8H vector and by element,
// FCADD .4H/.8H) against qemu-aarch64 -cpu max, on half-precision lanes,
// single-precision accumulators (with lanes that cancel the product
// exactly) and FPCR states drawn over RMode, FZ, FZ16, DN and AHP; and
// hand-computed cases that need no oracle.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// fhmWord is a random instruction word of one of the families: 0..3
// FMLAL/FMLSL(2) vector, 4..7 by element, 8 FCMLA .4H/.8H vector, 9 FCADD,
// 10 FCMLA by element.
func fhmWord(rng *rand.Rand, kind int) uint32 {
	q := uint32(rng.Intn(2))
	rd, rn, rm := uint32(rng.Intn(32)), uint32(rng.Intn(32)), uint32(rng.Intn(32))
	regs := q<<30 | rn<<5 | rd
	switch {
	case kind < 4: // U = kind&1 (the "2" forms), S = kind>>1 (FMLSL)
		u, s := uint32(kind&1), uint32(kind>>1)
		base := uint32(0x0e20ec00)
		if u == 1 {
			base = 0x2e20cc00
		}
		return base | s<<23 | rm<<16 | regs
	case kind < 8:
		u, s := uint32(kind&1), uint32(kind>>1&1)
		return 0x0f800000 | u<<29 | rng.Uint32()&(1<<21|1<<20|1<<11) | (rm&15)<<16 | u<<15 | s<<14 | regs
	case kind == 8:
		return 0x2e40c400 | rm<<16 | uint32(rng.Intn(4))<<11 | regs
	case kind == 9:
		return 0x2e40e400 | rm<<16 | uint32(rng.Intn(2))<<12 | regs
	}
	hl := uint32(rng.Intn(2 + 2*int(q))) // pair index H:L: 0..1 for 4H, 0..3 for 8H
	return 0x2f401000 | (hl&1)<<21 | rm<<16 | uint32(rng.Intn(4))<<13 | hl>>1<<11 | regs
}

const fhmKinds = 11

// makeFHMCase is makeFP16Case with an FPCR drawn more often away from the
// default, and for FMLAL/FMLSL single-precision accumulator lanes: the
// specials, structured singles, or minus the exact product of the lane's
// halves (plus or minus an ulp or two), which cancels.
func makeFHMCase(w uint32, seed int64) simdCase {
	c := makeFP16Case(w, seed)
	rng := rand.New(rand.NewSource(seed ^ 0xf4f))
	if rng.Intn(10) < 7 {
		c.FPCR = uint64(rng.Intn(4)) << 22
		for _, bit := range []uint{19, 24, 25, 26} { // FZ16, FZ, DN, AHP
			if rng.Intn(2) == 0 {
				c.FPCR |= 1 << bit
			}
		}
	}
	in := decode.DecodeA64(w)
	if in.Op != decode.A64VFMLAL && in.Op != decode.A64VFMLSL {
		return c
	}
	var fpcrForWiden uint32 // the products below ignore FZ16; close enough for cancellation
	for e := 0; e < 4; e++ {
		var v uint32
		switch rng.Intn(4) {
		case 0:
			v = simdF32Specials[rng.Intn(len(simdF32Specials))]
		case 1:
			v = uint32(rng.Intn(2))<<31 | uint32(simdRandExp(rng, 255, 127))<<23 | rng.Uint32()>>(9+uint(rng.Intn(3))*8)
		case 2:
			k := e + int(in.Imm2)
			h2 := elem(&c.V[in.Rm], k, 1)
			if in.Flags&decode.SIMDByElem != 0 {
				h2 = elem(&c.V[in.Rm], int(in.Imm), 1)
			}
			p := math.Float32frombits(uint32(fpWidenHalf(elem(&c.V[in.Rn], k, 1), fpcrForWiden))) *
				math.Float32frombits(uint32(fpWidenHalf(h2, fpcrForWiden)))
			if in.Op == decode.A64VFMLAL {
				p = -p
			}
			v = math.Float32bits(p) + uint32(rng.Intn(5)) - 2
		default:
			v = uint32(simdRandLane(rng))
		}
		setElem(&c.V[in.Rd], e, 2, uint64(v))
	}
	return c
}

func fhmCases(rng *rand.Rand, n int) []simdCase {
	cases := make([]simdCase, n)
	for i := range cases {
		cases[i] = makeFHMCase(fhmWord(rng, i%fhmKinds), rng.Int63())
	}
	return cases
}

func TestFHMAgainstQEMU(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not installed")
	}
	if _, err := os.Stat("testdata/simdoracle"); err != nil {
		t.Skip("testdata/simdoracle missing (run testdata/build-simdoracle.sh)")
	}
	n := 20000
	if testing.Short() {
		n = 4000
	}
	if s := os.Getenv("UVM_SIMD_CASES"); s != "" {
		fmt.Sscan(s, &n)
	}
	seed := int64(23)
	if s := os.Getenv("UVM_SIMD_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	cases := fhmCases(rand.New(rand.NewSource(seed)), n)
	want, ok := simdRunOracle(t, qemu, cases)
	bad := 0
	perOp := map[decode.A64Op]int{}
	for i := range cases {
		c := &cases[i]
		if !ok[i] {
			t.Errorf("%08x %s: killed the oracle", c.Insn, decode.DisasmA64(c.Insn, simdOracleCode))
			bad++
			continue
		}
		got, e := simdRunUVM(t, c)
		if e.Reason != vm.ExitBreakpoint {
			t.Errorf("%08x %s: uvm exit %v (%s)", c.Insn, decode.DisasmA64(c.Insn, simdOracleCode), e.Reason, e.Why)
			bad++
		} else if d := simdDiffState(c, &want[i], &got); d != "" {
			t.Errorf("%08x %s: %s\n%s", c.Insn, decode.DisasmA64(c.Insn, simdOracleCode), simdInputsOf(c), d)
			bad++
		}
		perOp[decode.DecodeA64(c.Insn).Op]++
		if bad >= 30 {
			t.Fatal("too many mismatches")
		}
	}
	for _, op := range []decode.A64Op{decode.A64VFMLAL, decode.A64VFMLSL, decode.A64VFCMLA, decode.A64VFCADD} {
		if perOp[op] == 0 {
			t.Errorf("no %s cases compared", decode.A64SIMDOpName(op))
		}
	}
	t.Logf("%d cases compared: %v", len(cases), perOp)
}

const fhmGoldenFile = "testdata/fhm_golden.txt"

// TestFHMGolden replays testdata/fhm_golden.txt, qemu's results for
// makeFHMCase states of every family, so that the instructions are checked
// without qemu too. UVM_SIMD_GOLDEN=update regenerates it with qemu.
func TestFHMGolden(t *testing.T) {
	if os.Getenv("UVM_SIMD_GOLDEN") == "update" {
		qemu, err := exec.LookPath("qemu-aarch64")
		if err != nil {
			t.Fatal("updating the golden file needs qemu-aarch64")
		}
		rng := rand.New(rand.NewSource(2323))
		var cases []simdCase
		var seeds []int64
		for i := 0; i < 60*fhmKinds; i++ {
			w := fhmWord(rng, i%fhmKinds)
			seed := rng.Int63()
			cases = append(cases, makeFHMCase(w, seed))
			seeds = append(seeds, seed)
		}
		want, ok := simdRunOracle(t, qemu, cases)
		var b strings.Builder
		for i := range cases {
			if ok[i] {
				b.WriteString(simdGoldenLine(&cases[i], seeds[i], &want[i]))
				b.WriteByte('\n')
			}
		}
		if err := os.WriteFile(fhmGoldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.ReadFile(fhmGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	lines := strings.Split(strings.TrimSpace(string(f)), "\n")
	for _, line := range lines {
		var w uint32
		var seed int64
		if _, err := fmt.Sscanf(line, "%x %d", &w, &seed); err != nil {
			t.Fatalf("bad line %q", line)
		}
		c := makeFHMCase(w, seed)
		got, e := simdRunUVM(t, &c)
		if e.Reason != vm.ExitBreakpoint {
			t.Errorf("%08x %s: uvm exit %v (%s)", w, decode.DisasmA64(w, simdOracleCode), e.Reason, e.Why)
			bad++
		} else if g := simdGoldenLine(&c, seed, &got); g != line {
			t.Errorf("%08x %s: %s\n  want %s\n  got  %s", w, decode.DisasmA64(w, simdOracleCode), simdInputsOf(&c), line, g)
			bad++
		}
		if bad >= 30 {
			t.Fatal("too many mismatches")
		}
	}
	if len(lines) < 60*fhmKinds {
		t.Errorf("only %d FHM golden cases", len(lines))
	}
}

// runOne executes the word w once on the given registers and returns the
// CPU's registers afterwards.
func fhmRunOne(t *testing.T, w uint32, v map[int][2]uint64, fpcr uint32) *Regs {
	t.Helper()
	mm := vm.NewMM()
	if err := mm.Map(vm.VMA{Start: simdOracleCode, End: simdOracleCode + vm.PageSize, Prot: vm.ProtRead | vm.ProtExec}); err != nil {
		t.Fatal(err)
	}
	var code [8]byte
	binary.LittleEndian.PutUint32(code[0:], w)
	binary.LittleEndian.PutUint32(code[4:], 0xd4200000) // BRK #0
	if err := mm.Poke(code[:], simdOracleCode); err != nil {
		t.Fatal(err)
	}
	cpu := NewCPU(mm)
	r := cpu.Regs()
	for i, x := range v {
		r.V[i] = x
	}
	r.FPCR, r.PC = fpcr, simdOracleCode
	if e := cpu.Run(10); e.Reason != vm.ExitBreakpoint {
		t.Fatalf("%08x: exit %v (%s)", w, e.Reason, e.Why)
	}
	return r
}

// halves packs four halves into a 64-bit lane group.
func halves(h0, h1, h2, h3 uint16) uint64 {
	return uint64(h0) | uint64(h1)<<16 | uint64(h2)<<32 | uint64(h3)<<48
}

// TestFMLALByHand: results worked out from the architecture's definition,
// independent of any oracle.
func TestFMLALByHand(t *testing.T) {
	const (
		fmlal4s  = 0x4e22ec20 // fmlal  v0.4s, v1.4h, v2.4h
		fmlal24s = 0x6e22cc20 // fmlal2 v0.4s, v1.4h, v2.4h
		fmlsl4s  = 0x4ea2ec20 // fmlsl  v0.4s, v1.4h, v2.4h
		fmlal2s  = 0x0e22ec20 // fmlal  v0.2s, v1.2h, v2.2h
		fmlalE7  = 0x4fb20820 // fmlal  v0.4s, v1.4h, v2.h[7]
		fpcrRP   = 1 << 22
		fpcrRZ   = 3 << 22
	)
	one := uint64(0x3f800000)
	for _, tc := range []struct {
		name       string
		w          uint32
		n, m, d    [2]uint64
		fpcr       uint32
		want       [2]uint64
		fpsr, mask uint32
	}{
		// (1+2^-10)^2 = 1 + 2^-9 + 2^-20: exact in single (no rounding to
		// half in between); 2*3 = 6; 65504^2 = 2^32 - 2^22 + 2^10 exactly
		// (far above the half range); (-2)*0.5 + 1 = +0 (round to nearest).
		{"exact", fmlal4s, [2]uint64{halves(0x3c01, 0x4000, 0x7bff, 0xc000), 0}, [2]uint64{halves(0x3c01, 0x4200, 0x7bff, 0x3800), 0},
			[2]uint64{0, one << 32}, 0, [2]uint64{0x3f804008 | 0x40c00000<<32, 0x4f7fc004}, 0, 0x9f},
		// the upper halves (elements 4..7) for FMLAL2 .4S
		{"upper", fmlal24s, [2]uint64{0, halves(0x3c00, 0x3c00, 0x3c00, 0x3c00)}, [2]uint64{0, halves(0x4000, 0x4200, 0x4400, 0x4500)},
			[2]uint64{0, 0}, 0, [2]uint64{0x40000000 | 0x40400000<<32, 0x40800000 | 0x40a00000<<32}, 0, 0x9f},
		// FMLSL: 1 - 1*1 = +0 (RN), -0 under round toward minus infinity is
		// not tested here; 1 - 2*2 = -3.
		{"fmlsl", fmlsl4s, [2]uint64{halves(0x3c00, 0x4000, 0, 0), 0}, [2]uint64{halves(0x3c00, 0x4000, 0, 0), 0},
			[2]uint64{one | one<<32, 0}, 0, [2]uint64{0xc0400000 << 32, 0}, 0, 0x9f},
		// 1 + 2^-24 * 2^-24 = 1 + 2^-48: inexact; RN gives 1, RP the next
		// single up, RZ 1.
		{"rn", fmlal2s, [2]uint64{0x0001, 0}, [2]uint64{0x0001, 0}, [2]uint64{one, 0}, 0, [2]uint64{one, 0}, fpsrIXC, 0x9f},
		{"rp", fmlal2s, [2]uint64{0x0001, 0}, [2]uint64{0x0001, 0}, [2]uint64{one, 0}, fpcrRP, [2]uint64{one + 1, 0}, fpsrIXC, 0x9f},
		{"rz", fmlal2s, [2]uint64{0x0001, 0}, [2]uint64{0x0001, 0}, [2]uint64{one, 0}, fpcrRZ, [2]uint64{one, 0}, fpsrIXC, 0x9f},
		// a half denormal times 1: 2^-24 exactly (a normal single, not
		// flushed by FZ); FZ16 flushes it to +0 without IDC, so 0 + +0 = +0.
		{"denormal", fmlal2s, [2]uint64{0x0001, 0}, [2]uint64{0x3c00, 0}, [2]uint64{0, 0}, fpcrFZ, [2]uint64{0x33800000, 0}, 0, 0x9f},
		{"fz16", fmlal2s, [2]uint64{0x0001, 0}, [2]uint64{0x3c00, 0}, [2]uint64{0, 0}, fpcrFZ16, [2]uint64{0, 0}, 0, 0x9f},
		// a signalling half NaN is quieted and widened (payload << 13),
		// IOC; with DN the default NaN; an infinity times zero with a quiet
		// NaN addend is the default NaN and IOC.
		{"snan", fmlal2s, [2]uint64{0x7d01, 0}, [2]uint64{0x3c00, 0}, [2]uint64{one, 0}, 0, [2]uint64{0x7fe02000, 0}, fpsrIOC, 0x9f},
		{"snan dn", fmlal2s, [2]uint64{0x7d01, 0}, [2]uint64{0x3c00, 0}, [2]uint64{one, 0}, fpcrDN, [2]uint64{0x7fc00000, 0}, fpsrIOC, 0x9f},
		{"inf*0", fmlal2s, [2]uint64{0x7c00, 0}, [2]uint64{0x0000, 0}, [2]uint64{0x7fc00123, 0}, 0, [2]uint64{0x7fc00000, 0}, fpsrIOC, 0x9f},
		// by element: every lane uses Vm.H[7] = 2
		{"elem", fmlalE7, [2]uint64{halves(0x3c00, 0x4000, 0x4200, 0x4400), 0}, [2]uint64{0, 0x4000 << 48},
			[2]uint64{0, 0}, 0, [2]uint64{0x40000000 | 0x40800000<<32, 0x40c00000 | 0x41000000<<32}, 0, 0x9f},
	} {
		r := fhmRunOne(t, tc.w, map[int][2]uint64{0: tc.d, 1: tc.n, 2: tc.m}, tc.fpcr)
		if r.V[0] != tc.want || r.FPSR&tc.mask != tc.fpsr {
			t.Errorf("%s: %s: got %016x_%016x fpsr %#x, want %016x_%016x fpsr %#x", tc.name, decode.DisasmA64(tc.w, 0),
				r.V[0][1], r.V[0][0], r.FPSR&tc.mask, tc.want[1], tc.want[0], tc.fpsr)
		}
	}
}

// TestFCMAHalfByHand: (1+2i)*(3+4i) = -5+10i with FCMLA #0 then #90, in
// half precision, vector and by element; FCADD #90 and #270.
func TestFCMAHalfByHand(t *testing.T) {
	a := halves(0x3c00, 0x4000, 0x3c00, 0x4000)                               // 1+2i, 1+2i
	b := halves(0x4200, 0x4400, 0x4200, 0x4400)                               // 3+4i, 3+4i
	r := fhmRunOne(t, 0x2e42c420, map[int][2]uint64{1: {a, 0}, 2: {b, 0}}, 0) // fcmla v0.4h, v1.4h, v2.4h, #0
	if want := halves(0x4200, 0x4400, 0x4200, 0x4400); r.V[0][0] != want || r.V[0][1] != 0 {
		t.Errorf("fcmla #0: %016x_%016x, want %016x", r.V[0][1], r.V[0][0], want)
	}
	// Vd = re(a)*b = 3+4i; then #90 adds i*im(a)*b = -8+6i: -5+10i
	r = fhmRunOne(t, 0x2e42cc20, map[int][2]uint64{0: {halves(0x4200, 0x4400, 0x4200, 0x4400), 0}, 1: {a, 0}, 2: {b, 0}}, 0)
	if want := halves(0xc500, 0x4900, 0xc500, 0x4900); r.V[0][0] != want {
		t.Errorf("fcmla #90: %016x, want %016x", r.V[0][0], want)
	}
	// by element: pair 3 of v2 (the high pair of the upper half) = 3+4i
	// times every pair of v1 (1+2i) rotated by 90 degrees adds -8+6i.
	r = fhmRunOne(t, 0x6f623820, map[int][2]uint64{0: {halves(0x4200, 0x4400, 0, 0), 0}, 1: {a, a}, 2: {0, halves(0, 0, 0x4200, 0x4400)}}, 0) // fcmla v0.8h, v1.8h, v2.h[3], #90
	if want := [2]uint64{halves(0xc500, 0x4900, 0xc800, 0x4600), halves(0xc800, 0x4600, 0xc800, 0x4600)}; r.V[0] != want {
		t.Errorf("fcmla by element #90: %016x_%016x, want %016x", r.V[0][1], r.V[0][0], want)
	}
	// fcadd #90: a + i*b = (1-4) + (2+3)i; #270: a - i*b = 5 - i
	r = fhmRunOne(t, 0x2e42e420, map[int][2]uint64{1: {a, 0}, 2: {b, 0}}, 0)
	if want := halves(0xc200, 0x4500, 0xc200, 0x4500); r.V[0][0] != want {
		t.Errorf("fcadd #90: %016x, want %016x", r.V[0][0], want)
	}
	r = fhmRunOne(t, 0x2e42f420, map[int][2]uint64{1: {a, 0}, 2: {b, 0}}, 0)
	if want := halves(0x4500, 0xbc00, 0x4500, 0xbc00); r.V[0][0] != want {
		t.Errorf("fcadd #270: %016x, want %016x", r.V[0][0], want)
	}
}

// TestFHMDecode: the undefined neighbours stay undefined, and the models
// without the features reject the instructions.
func TestFHMDecode(t *testing.T) {
	for _, tc := range []struct {
		w    uint32
		op   decode.A64Op
		feat decode.A64Feature
	}{
		{0x4e22ec20, decode.A64VFMLAL, decode.A64FeatFHM},
		{0x6ea2cc20, decode.A64VFMLSL, decode.A64FeatFHM},
		{0x6fa2c020, decode.A64VFMLSL, decode.A64FeatFHM},
		{0x2e42cc20, decode.A64VFCMLA, decode.A64FeatFCMA | decode.A64FeatFP16},
		{0x6f7f5820, decode.A64VFCMLA, decode.A64FeatFCMA | decode.A64FeatFP16},
		{0x2e42f420, decode.A64VFCADD, decode.A64FeatFCMA | decode.A64FeatFP16},
		{0x4e62ec20, decode.A64Undefined, 0}, // FMLAL with sz = 1
		{0x2f621820, decode.A64Undefined, 0}, // FCMLA .4H by element, H = 1
		{0x0fd20820, decode.A64Undefined, 0}, // FMLAL by element, size 11
	} {
		in := decode.DecodeA64(tc.w)
		if in.Op != tc.op || in.Feature() != tc.feat {
			t.Errorf("%08x: op %v feature %#x, want %v %#x", tc.w, in.Op, in.Feature(), tc.op, tc.feat)
		}
	}
	for _, m := range []string{"armv8.2", "neoverse-n1"} {
		if LookupModel(m).feat&decode.A64FeatFHM != 0 || LookupModel(m).HWCAP&HWCAPASIMDFHM != 0 {
			t.Errorf("%s has FEAT_FHM", m)
		}
	}
	if LookupModel("max").feat&(decode.A64FeatFHM|decode.A64FeatFCMA|decode.A64FeatFP16) != decode.A64FeatFHM|decode.A64FeatFCMA|decode.A64FeatFP16 {
		t.Error("max lacks FHM, FCMA or FP16")
	}
}

// TestFHMNoAllocs: the new instructions execute without allocating.
func TestFHMNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for k := 0; k < fhmKinds; k++ {
		w := fhmWord(rng, k)
		c := makeFHMCase(w, 1)
		mm := vm.NewMM()
		if err := mm.Map(vm.VMA{Start: simdOracleCode, End: simdOracleCode + vm.PageSize, Prot: vm.ProtRead | vm.ProtExec}); err != nil {
			t.Fatal(err)
		}
		var code [8]byte
		binary.LittleEndian.PutUint32(code[0:], w)
		binary.LittleEndian.PutUint32(code[4:], 0xd4200000)
		if err := mm.Poke(code[:], simdOracleCode); err != nil {
			t.Fatal(err)
		}
		cpu := NewCPU(mm)
		r := cpu.Regs()
		run := func() {
			r.V = c.V
			r.FPCR, r.FPSR, r.PC = uint32(c.FPCR), uint32(c.FPSR), simdOracleCode
			if e := cpu.Run(100); e.Reason != vm.ExitBreakpoint {
				t.Fatalf("%08x: exit %v", w, e.Reason)
			}
		}
		run()
		if a := testing.AllocsPerRun(3, run); a != 0 {
			t.Errorf("%08x %s: %v allocations", w, decode.DisasmA64(w, simdOracleCode), a)
		}
	}
}
