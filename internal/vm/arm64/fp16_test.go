package arm64

// FEAT_FP16 against qemu-aarch64 -cpu max: random half-precision
// instruction words (every decoded record whose Feature has
// A64FeatFP16) on register states whose lanes are mostly structured
// half-precision values (near 1.0, overflow, the subnormal range, the
// specials), with random FPCR modes including FZ16, AHP and DN.

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// fp16WordPool samples half-precision FP words, up to 200 per op.
func fp16WordPool(rng *rand.Rand) map[decode.A64Op][]uint32 {
	pool := map[decode.A64Op][]uint32{}
	for i := 0; i < 4000000; i++ {
		var w uint32
		switch i % 4 {
		case 0:
			w = rng.Uint32()&^(7<<25) | 7<<25
		case 1: // scalar FP, ftype 11
			w = rng.Uint32()&^(0xff<<24|3<<22) | 0x1e<<24 | 3<<22
		case 2: // three same / two-reg misc FP16
			w = rng.Uint32()&^(0x9f<<24|3<<21|3<<14) | 0x0e<<24 | 2<<21
		case 3: // two-reg misc FP16 (vector and scalar)
			w = rng.Uint32()&^(0x9f<<24|0x3f<<17|3<<10) | 0x0e<<24 | 0x3c<<17 | 2<<10
			if rng.Intn(2) == 0 {
				w |= 0x50 << 24
			}
		}
		in := decode.DecodeA64(w)
		if in.Feature()&decode.A64FeatFP16 == 0 {
			continue
		}
		if simdUsesGP(in.Op) {
			w &^= 1<<4 | 1<<9 | 1<<20
			if in = decode.DecodeA64(w); in.Feature()&decode.A64FeatFP16 == 0 {
				continue
			}
		}
		if len(pool[in.Op]) < 200 {
			pool[in.Op] = append(pool[in.Op], w)
		}
	}
	return pool
}

// fp16RandHalf is a structured half-precision value.
func fp16RandHalf(rng *rand.Rand) uint64 {
	if rng.Intn(4) == 0 {
		return uint64(simdF16Specials[rng.Intn(len(simdF16Specials))])
	}
	return uint64(rng.Intn(2))<<15 | simdRandExp(rng, 31, 15)<<10 | uint64(rng.Intn(1024))>>(uint(rng.Intn(3))*4)
}

// makeFP16Case is makeSIMDCase with half-precision lanes in most V
// registers and half values in some X registers (FMOV Hd, Wn).
func makeFP16Case(w uint32, seed int64) simdCase {
	c := makeSIMDCase(w, seed)
	rng := rand.New(rand.NewSource(seed ^ 0x16))
	for i := range c.V {
		if rng.Intn(5) == 0 {
			continue
		}
		for j := 0; j < 2; j++ {
			var v uint64
			for k := 0; k < 4; k++ {
				v |= fp16RandHalf(rng) << (16 * k)
			}
			c.V[i][j] = v
		}
	}
	for i := range c.X {
		if rng.Intn(4) == 0 {
			c.X[i] = fp16RandHalf(rng) | rng.Uint64()<<16*uint64(rng.Intn(2))
		}
	}
	return c
}

func TestFP16AgainstQEMU(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not installed")
	}
	if _, err := os.Stat("testdata/simdoracle"); err != nil {
		t.Skip("testdata/simdoracle missing (run testdata/build-simdoracle.sh)")
	}
	n := 6000
	if testing.Short() {
		n = 1500
	}
	if s := os.Getenv("UVM_SIMD_CASES"); s != "" {
		fmt.Sscan(s, &n)
	}
	seed := int64(16)
	if s := os.Getenv("UVM_SIMD_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	rng := rand.New(rand.NewSource(seed))
	pool := fp16WordPool(rng)
	var ops []decode.A64Op
	for op := decode.A64SIMDBase; op < decode.A64SIMDBase+decode.A64Op(decode.NumA64SIMDOps); op++ {
		if len(pool[op]) > 0 {
			ops = append(ops, op)
		}
	}
	if len(ops) < 50 {
		t.Fatalf("only %d FP16 ops sampled", len(ops))
	}
	cases := make([]simdCase, n)
	for i := range cases {
		p := pool[ops[rng.Intn(len(ops))]]
		cases[i] = makeFP16Case(p[rng.Intn(len(p))], rng.Int63())
	}
	want, ok := simdRunOracle(t, qemu, cases)
	bad, compared := 0, 0
	for i := range cases {
		if !ok[i] {
			t.Errorf("%08x %s: killed the oracle", cases[i].Insn, decode.DisasmA64(cases[i].Insn, simdOracleCode))
			bad++
			continue
		}
		compared++
		c := &cases[i]
		got, e := simdRunUVM(t, c)
		if e.Reason != vm.ExitBreakpoint {
			t.Errorf("%08x %s: uvm exit %v (%s)", c.Insn, decode.DisasmA64(c.Insn, simdOracleCode), e.Reason, e.Why)
			bad++
		} else if d := simdDiffState(c, &want[i], &got); d != "" {
			t.Errorf("%08x %s: %s\n%s", c.Insn, decode.DisasmA64(c.Insn, simdOracleCode), simdInputsOf(c), d)
			bad++
		}
		if bad >= 30 {
			t.Fatal("too many mismatches")
		}
	}
	t.Logf("%d FP16 ops, %d cases compared", len(ops), compared)
}

// TestFP16NoAllocs: every sampled FP16 op executes without allocating.
func TestFP16NoAllocs(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	pool := fp16WordPool(rng)
	for op, words := range pool {
		if simdIsMemOp(op) {
			continue
		}
		w := words[0]
		c := makeFP16Case(w, 1)
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
			copy(r.X[:], c.X[:])
			r.FPCR, r.FPSR, r.NZCV, r.PC = uint32(c.FPCR), uint32(c.FPSR), c.NZCV, simdOracleCode
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

const fp16GoldenFile = "testdata/fp16_golden.txt"

// TestFP16Golden replays testdata/fp16_golden.txt: qemu's results for 6
// random cases of every FP16 op (makeFP16Case states), so that half
// precision is checked without qemu too. UVM_SIMD_GOLDEN=update
// regenerates it with qemu.
func TestFP16Golden(t *testing.T) {
	if os.Getenv("UVM_SIMD_GOLDEN") == "update" {
		qemu, err := exec.LookPath("qemu-aarch64")
		if err != nil {
			t.Fatal("updating the golden file needs qemu-aarch64")
		}
		rng := rand.New(rand.NewSource(1616))
		pool := fp16WordPool(rng)
		var cases []simdCase
		var seeds []int64
		for op := decode.A64SIMDBase; op < decode.A64SIMDBase+decode.A64Op(decode.NumA64SIMDOps); op++ {
			for k := 0; k < 6 && k < len(pool[op]); k++ {
				seed := rng.Int63()
				cases = append(cases, makeFP16Case(pool[op][rng.Intn(len(pool[op]))], seed))
				seeds = append(seeds, seed)
			}
		}
		want, ok := simdRunOracle(t, qemu, cases)
		var b strings.Builder
		for i := range cases {
			if ok[i] {
				b.WriteString(simdGoldenLine(&cases[i], seeds[i], &want[i]))
				b.WriteByte('\n')
			}
		}
		if err := os.WriteFile(fp16GoldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.ReadFile(fp16GoldenFile)
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
		c := makeFP16Case(w, seed)
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
	if len(lines) < 300 {
		t.Errorf("only %d FP16 golden cases", len(lines))
	}
}
