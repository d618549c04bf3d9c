package arm64

// Differential test of the FP/SIMD unit against qemu-aarch64 (the oracle):
// random instruction words that uvm decodes as FP/SIMD ops are executed
// on random register states by testdata/simdoracle under qemu and by uvm,
// and the resulting V/X registers, FPSR, NZCV and memory are compared. The
// test skips when qemu-aarch64 is not installed.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

const (
	simdOracleCaseIn  = 928
	simdOracleCaseOut = 912
	simdOracleScratch = 0x500000 // address of `scratch` in testdata/simdoracle
	simdOracleCode    = 0x400000
)

// simdCase is one oracle test case.
type simdCase struct {
	V    [32][2]uint64
	X    [16]uint64
	FPCR uint64
	FPSR uint64
	NZCV uint64
	Insn uint32
	Mem  [256]byte
}

// simdResultState is the state after the instruction.
type simdResultState struct {
	V    [32][2]uint64
	X    [16]uint64
	FPSR uint64
	NZCV uint64
	Mem  [256]byte
}

func (c *simdCase) encode() []byte {
	b := make([]byte, simdOracleCaseIn)
	for i := 0; i < 32; i++ {
		binary.LittleEndian.PutUint64(b[16*i:], c.V[i][0])
		binary.LittleEndian.PutUint64(b[16*i+8:], c.V[i][1])
	}
	for i := 0; i < 16; i++ {
		binary.LittleEndian.PutUint64(b[512+8*i:], c.X[i])
	}
	binary.LittleEndian.PutUint64(b[640:], c.FPCR)
	binary.LittleEndian.PutUint64(b[648:], c.FPSR)
	binary.LittleEndian.PutUint64(b[656:], c.NZCV)
	binary.LittleEndian.PutUint32(b[664:], c.Insn)
	copy(b[672:], c.Mem[:])
	return b
}

func simdDecodeResult(b []byte) simdResultState {
	var s simdResultState
	for i := 0; i < 32; i++ {
		s.V[i][0] = binary.LittleEndian.Uint64(b[16*i:])
		s.V[i][1] = binary.LittleEndian.Uint64(b[16*i+8:])
	}
	for i := 0; i < 16; i++ {
		s.X[i] = binary.LittleEndian.Uint64(b[512+8*i:])
	}
	s.FPSR = binary.LittleEndian.Uint64(b[640:])
	s.NZCV = binary.LittleEndian.Uint64(b[648:])
	copy(s.Mem[:], b[656:])
	return s
}

// simdRunOracle runs the cases under qemu. A case that kills the oracle
// (SIGILL…) gets ok = false; the remaining cases are run in a new process.
func simdRunOracle(t *testing.T, qemu string, cases []simdCase) (res []simdResultState, ok []bool) {
	t.Helper()
	return simdRunOracleCPU(t, qemu, "max", cases)
}

// simdRunOracleCPU is simdRunOracle with qemu's -cpu model cpu.
func simdRunOracleCPU(t *testing.T, qemu, cpu string, cases []simdCase) (res []simdResultState, ok []bool) {
	t.Helper()
	res = make([]simdResultState, len(cases))
	ok = make([]bool, len(cases))
	for start := 0; start < len(cases); {
		var in bytes.Buffer
		for i := start; i < len(cases); i++ {
			in.Write(cases[i].encode())
		}
		cmd := exec.Command(qemu, "-cpu", cpu, "testdata/simdoracle")
		cmd.Stdin = &in
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		b := out.Bytes()
		n := len(b) / simdOracleCaseOut
		for i := 0; i < n; i++ {
			res[start+i] = simdDecodeResult(b[i*simdOracleCaseOut:])
			ok[start+i] = true
		}
		start += n
		if err == nil && start < len(cases) {
			t.Fatalf("oracle stopped after %d cases without an error", start)
		}
		if err != nil {
			if start < len(cases) {
				t.Logf("oracle died on case %d (%08x %s): %v", start, cases[start].Insn, decode.DisasmA64(cases[start].Insn, simdOracleCode), err)
			}
			start++ // skip the case that killed it
		}
	}
	return res, ok
}

// simdRunUVM executes one case in uvm.
func simdRunUVM(t *testing.T, c *simdCase) (simdResultState, vm.Exit) {
	t.Helper()
	mm := vm.NewMM()
	for _, v := range []vm.VMA{
		{Start: simdOracleCode, End: simdOracleCode + vm.PageSize, Prot: vm.ProtRead | vm.ProtExec},
		{Start: simdOracleScratch, End: simdOracleScratch + vm.PageSize, Prot: vm.ProtRead | vm.ProtWrite},
	} {
		if err := mm.Map(v); err != nil {
			t.Fatal(err)
		}
	}
	var code [8]byte
	binary.LittleEndian.PutUint32(code[0:], c.Insn)
	binary.LittleEndian.PutUint32(code[4:], 0xd4200000) // BRK #0
	if err := mm.Poke(code[:], simdOracleCode); err != nil {
		t.Fatal(err)
	}
	if err := mm.Poke(c.Mem[:], simdOracleScratch); err != nil {
		t.Fatal(err)
	}
	cpu := NewCPU(mm)
	r := cpu.Regs()
	r.V = c.V
	copy(r.X[:], c.X[:])
	r.FPCR = uint32(c.FPCR)
	r.FPSR = uint32(c.FPSR)
	r.NZCV = c.NZCV
	r.PC = simdOracleCode
	r.SP = 0x7f0000
	e := cpu.Run(1000)
	var s simdResultState
	s.V = r.V
	copy(s.X[:], r.X[:16])
	s.FPSR = uint64(r.FPSR)
	s.NZCV = r.NZCV
	if err := mm.Peek(s.Mem[:], simdOracleScratch); err != nil {
		t.Fatal(err)
	}
	return s, e
}

// simdUsesGP reports whether the op reads or writes general registers through
// its register fields (those are limited to x0..x15 in the oracle).
func simdUsesGP(op decode.A64Op) bool {
	switch op {
	case decode.A64FCVTI, decode.A64ICVTF, decode.A64FMOVTOGP, decode.A64FMOVFROMGP,
		decode.A64VDUPG, decode.A64VINSG, decode.A64VUMOV, decode.A64VSMOV,
		decode.A64VLDST, decode.A64VLDSTL, decode.A64VLDR, decode.A64FJCVTZS:
		return true
	}
	return false
}

func simdIsMemOp(op decode.A64Op) bool {
	return op == decode.A64VLDST || op == decode.A64VLDSTL || op == decode.A64VLDR
}

// interesting FP bit patterns
var (
	simdF64Specials = []uint64{
		0, 1 << 63, math.Float64bits(1), math.Float64bits(-1), math.Float64bits(0.5), math.Float64bits(1.5),
		math.Float64bits(2), math.Float64bits(3), math.Float64bits(-2.5), math.Float64bits(1e300),
		math.Float64bits(-1e300), math.Float64bits(math.MaxFloat64), 1, 0x000fffffffffffff, 0x8000000000000001,
		0x0010000000000000, 0x8010000000000000, 0x7ff0000000000000, 0xfff0000000000000,
		0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001, 0xfff4000000000000,
		math.Float64bits(9223372036854775807), math.Float64bits(-9223372036854775808), math.Float64bits(2147483647.5),
		math.Float64bits(4294967295.5), math.Float64bits(18446744073709551615), math.Float64bits(1e-310),
		math.Float64bits(0.1), math.Float64bits(-0.7), math.Float64bits(1e-300), math.Float64bits(123456.75),
		0x3ff0000000000001, 0x43e0000000000000, 0xc3e0000000000001, 0x41e0000000000000,
	}
	simdF32Specials = []uint32{
		0, 1 << 31, math.Float32bits(1), math.Float32bits(-1), math.Float32bits(0.5), math.Float32bits(1.5),
		math.Float32bits(3), math.Float32bits(-2.5), math.Float32bits(1e30), math.Float32bits(math.MaxFloat32),
		1, 0x007fffff, 0x80000001, 0x00800000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001,
		0x7f800001, 0xffa00000, math.Float32bits(2147483648), math.Float32bits(-2147483648),
		math.Float32bits(4294967296), math.Float32bits(0.1), math.Float32bits(-0.7), math.Float32bits(1e-40),
		math.Float32bits(65504), math.Float32bits(1e-5), math.Float32bits(16777217), 0x3f800001,
	}
	simdF16Specials = []uint16{0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7d00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x3555}
)

// simdRandExp picks an exponent field near the interesting ranges of a
// format with the given maximum exponent field: around 1.0, near
// overflow, near and below the smallest normal.
func simdRandExp(rng *rand.Rand, max, bias int) uint64 {
	switch rng.Intn(4) {
	case 0:
		return uint64(bias - 4 + rng.Intn(9))
	case 1:
		return uint64(max - 1 - rng.Intn(bias/16+2))
	case 2:
		return uint64(rng.Intn(bias/16 + 2))
	}
	return uint64(1 + rng.Intn(max-1))
}

func simdRandLane(rng *rand.Rand) uint64 {
	switch rng.Intn(13) {
	case 10, 11: // structured double
		return uint64(rng.Intn(2))<<63 | simdRandExp(rng, 2047, 1023)<<52 | rng.Uint64()>>(12+uint(rng.Intn(3))*20)
	case 12: // two structured singles
		var v uint64
		for i := 0; i < 2; i++ {
			v |= (uint64(rng.Intn(2))<<31 | simdRandExp(rng, 255, 127)<<23 | uint64(rng.Uint32())>>(9+uint(rng.Intn(3))*8)) << (32 * i)
		}
		return v
	}
	switch rng.Intn(10) {
	case 0, 1, 2, 3:
		return rng.Uint64()
	case 4, 5, 6:
		return simdF64Specials[rng.Intn(len(simdF64Specials))]
	case 7, 8:
		return uint64(simdF32Specials[rng.Intn(len(simdF32Specials))]) | uint64(simdF32Specials[rng.Intn(len(simdF32Specials))])<<32
	default:
		var v uint64
		for i := 0; i < 4; i++ {
			if rng.Intn(2) == 0 {
				v |= uint64(simdF16Specials[rng.Intn(len(simdF16Specials))]) << (16 * i)
			} else {
				v |= uint64(rng.Intn(256)) << (16 * i)
			}
		}
		return v
	}
}

// simdWordPool samples instruction words for every FP/SIMD op: up to 300
// random encodings per op, so that cases can be spread evenly over ops.
func simdWordPool(rng *rand.Rand) [][]uint32 {
	pool := make([][]uint32, decode.NumA64SIMDOps)
	for i := 0; i < 3000000; i++ {
		var w uint32
		switch i % 8 {
		case 0, 1, 2:
			w = rng.Uint32()&^(7<<25) | 7<<25
		case 3, 4: // scalar FP
			w = rng.Uint32()&^(0xff<<24) | 0x1e<<24
		case 5, 6: // vector
			w = rng.Uint32()&^(0x9e<<24) | 0x0e<<24
		case 7: // structure loads/stores
			w = rng.Uint32()&^(0xbe<<24) | 0x0c<<24
		}
		in := decode.DecodeA64(w)
		if in.Op < decode.A64SIMDBase {
			continue
		}
		if simdUsesGP(in.Op) {
			w &^= 1<<4 | 1<<9 | 1<<20
			if in = decode.DecodeA64(w); in.Op < decode.A64SIMDBase {
				continue
			}
		}
		k := int(in.Op - decode.A64SIMDBase)
		if len(pool[k]) < 300 {
			pool[k] = append(pool[k], w)
		}
	}
	return pool
}

// genSIMDCases makes n random cases of FP/SIMD instructions: half of them
// with ops chosen uniformly, half with the distribution of random words.
func genSIMDCases(rng *rand.Rand, n int) []simdCase {
	pool := simdWordPool(rng)
	if only := os.Getenv("UVM_SIMD_OPS"); only != "" {
		// development knob: restrict to ops with these mnemonics
		for k := range pool {
			if !strings.Contains(","+only+",", ","+decode.A64SIMDOpName(decode.A64SIMDBase+decode.A64Op(k))+",") {
				pool[k] = nil
			}
		}
	}
	var ops []int
	for k, p := range pool {
		if len(p) > 0 {
			ops = append(ops, k)
		}
	}
	cases := make([]simdCase, 0, n)
	for len(cases) < n {
		var w uint32
		if rng.Intn(2) == 0 {
			p := pool[ops[rng.Intn(len(ops))]]
			w = p[rng.Intn(len(p))]
		} else {
			for {
				p := pool[rng.Intn(len(pool))]
				if len(p) > 0 {
					w = p[rng.Intn(len(p))]
					break
				}
			}
		}
		c := makeSIMDCase(w, rng.Int63())
		if f := os.Getenv("UVM_SIMD_FPCR"); f != "" {
			// development knob: force FPCR bits
			var v uint64
			fmt.Sscanf(f, "%x", &v)
			c.FPCR |= v
		}
		cases = append(cases, c)
	}
	return cases
}

// makeSIMDCase builds the input state of a case deterministically from
// the instruction word and a seed.
func makeSIMDCase(w uint32, seed int64) simdCase {
	rng := rand.New(rand.NewSource(seed))
	in := decode.DecodeA64(w)
	c := simdCase{Insn: w}
	for i := range c.V {
		c.V[i] = [2]uint64{simdRandLane(rng), simdRandLane(rng)}
	}
	for i := range c.X {
		switch rng.Intn(4) {
		case 0:
			c.X[i] = rng.Uint64()
		case 1:
			c.X[i] = uint64(rng.Intn(200) - 100)
		case 2:
			c.X[i] = simdF64Specials[rng.Intn(len(simdF64Specials))]
		default:
			c.X[i] = uint64(simdF32Specials[rng.Intn(len(simdF32Specials))])
		}
		if simdIsMemOp(in.Op) {
			c.X[i] = simdOracleScratch + uint64(rng.Intn(96))
		}
	}
	rng.Read(c.Mem[:])
	if rng.Intn(10) < 3 {
		c.FPCR = uint64(rng.Intn(4)) << 22
		if rng.Intn(2) == 0 {
			c.FPCR |= 1 << 24 // FZ
		}
		if rng.Intn(2) == 0 {
			c.FPCR |= 1 << 25 // DN
		}
		if rng.Intn(4) == 0 {
			c.FPCR |= 1 << 26 // AHP
		}
	}
	switch rng.Intn(3) {
	case 1:
		c.FPSR = 0x10 // IXC
	case 2:
		c.FPSR = uint64(rng.Intn(256)) & 0x9f
	}
	c.NZCV = uint64(rng.Intn(16)) << 28
	switch rng.Intn(8) {
	case 0:
		c.V[in.Rm] = c.V[in.Rn]
	case 1:
		c.V[in.Rm][0] = c.V[in.Rn][0]
	}
	if c.FPCR != 0 && rng.Intn(3) == 0 {
		c.FPCR |= 1 << 19 // FZ16 (drawn last: earlier draws stay as they were)
	}
	return c
}

const simdOracleFPSRMask = 0x0800009f

func simdDiffState(c *simdCase, want, got *simdResultState) string {
	var b strings.Builder
	for i := 0; i < 32; i++ {
		if want.V[i] != got.V[i] {
			fmt.Fprintf(&b, "  v%d: in %016x_%016x want %016x_%016x got %016x_%016x\n", i,
				c.V[i][1], c.V[i][0], want.V[i][1], want.V[i][0], got.V[i][1], got.V[i][0])
		}
	}
	for i := 0; i < 16; i++ {
		if want.X[i] != got.X[i] {
			fmt.Fprintf(&b, "  x%d: in %x want %x got %x\n", i, c.X[i], want.X[i], got.X[i])
		}
	}
	if want.FPSR&simdOracleFPSRMask != got.FPSR&simdOracleFPSRMask {
		fmt.Fprintf(&b, "  fpsr: in %x want %x got %x (fpcr %x)\n", c.FPSR, want.FPSR&simdOracleFPSRMask, got.FPSR&simdOracleFPSRMask, c.FPCR)
	}
	if want.NZCV>>28 != got.NZCV>>28 {
		fmt.Fprintf(&b, "  nzcv: in %x want %x got %x\n", c.NZCV>>28, want.NZCV>>28, got.NZCV>>28)
	}
	if want.Mem != got.Mem {
		fmt.Fprintf(&b, "  memory differs\n")
	}
	return b.String()
}

// simdInputsOf describes the source registers of a case for messages.
func simdInputsOf(c *simdCase) string {
	in := decode.DecodeA64(c.Insn)
	return fmt.Sprintf("fpcr %x fpsr %x nzcv %x | vn=v%d %016x_%016x vm=v%d %016x_%016x vd %016x_%016x va %016x",
		c.FPCR, c.FPSR, c.NZCV>>28, in.Rn, c.V[in.Rn][1], c.V[in.Rn][0], in.Rm, c.V[in.Rm][1], c.V[in.Rm][0],
		c.V[in.Rd][1], c.V[in.Rd][0], c.V[in.Ra][0])
}

func TestSIMDAgainstQEMU(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not installed")
	}
	if _, err := os.Stat("testdata/simdoracle"); err != nil {
		t.Skip("testdata/simdoracle missing (run testdata/build-simdoracle.sh)")
	}
	n := 8000
	if testing.Short() {
		n = 2000
	}
	seed := int64(1)
	if s := os.Getenv("UVM_SIMD_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	if s := os.Getenv("UVM_SIMD_CASES"); s != "" {
		fmt.Sscan(s, &n)
	}
	rng := rand.New(rand.NewSource(seed))
	cases := genSIMDCases(rng, n)
	t0 := time.Now()
	want, ok := simdRunOracle(t, qemu, cases)
	t.Logf("oracle: %d cases in %v", len(cases), time.Since(t0))
	t0 = time.Now()
	defer func() { t.Logf("uvm: %v", time.Since(t0)) }()
	bad, changed, compared := 0, 0, 0
	perOp := map[string]int{}
	defer func() {
		t.Logf("%d cases compared, %d changed a V register", compared, changed)
		if os.Getenv("UVM_SIMD_OPSTATS") != "" {
			t.Logf("cases per op: %v", perOp)
		}
	}()
	for i := range cases {
		if !ok[i] {
			continue
		}
		compared++
		perOp[decode.A64SIMDOpName(decode.DecodeA64(cases[i].Insn).Op)]++
		if want[i].V != cases[i].V {
			changed++
		}
		got, e := simdRunUVM(t, &cases[i])
		c := &cases[i]
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
}

// ---- golden file: qemu results replayed without qemu ----

const simdGoldenFile = "testdata/simd_golden.txt"

// simdGoldenLine renders a case and the state after it as one line: the word,
// the input seed, and every output field that differs from the input.
func simdGoldenLine(c *simdCase, seed int64, s *simdResultState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%08x %d", c.Insn, seed)
	for i := 0; i < 32; i++ {
		if s.V[i] != c.V[i] {
			fmt.Fprintf(&b, " v%d=%x:%x", i, s.V[i][1], s.V[i][0])
		}
	}
	for i := 0; i < 16; i++ {
		if s.X[i] != c.X[i] {
			fmt.Fprintf(&b, " x%d=%x", i, s.X[i])
		}
	}
	if s.FPSR&simdOracleFPSRMask != c.FPSR {
		fmt.Fprintf(&b, " fpsr=%x", s.FPSR&simdOracleFPSRMask)
	}
	if s.NZCV>>28 != c.NZCV>>28 {
		fmt.Fprintf(&b, " nzcv=%x", s.NZCV>>28)
	}
	if s.Mem != c.Mem {
		fmt.Fprintf(&b, " mem=%x", sha256.Sum256(s.Mem[:]))
	}
	return b.String()
}

// TestSIMDGolden replays testdata/simd_golden.txt (qemu results for a few
// random cases of every op). UVM_SIMD_GOLDEN=update regenerates it with
// qemu.
func TestSIMDGolden(t *testing.T) {
	if os.Getenv("UVM_SIMD_GOLDEN") == "update" {
		updateSIMDGolden(t)
	}
	f, err := os.ReadFile(simdGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, line := range strings.Split(strings.TrimSpace(string(f)), "\n") {
		var w uint32
		var seed int64
		if _, err := fmt.Sscanf(line, "%x %d", &w, &seed); err != nil {
			t.Fatalf("bad line %q", line)
		}
		c := makeSIMDCase(w, seed)
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
}

func updateSIMDGolden(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Fatal("updating the golden file needs qemu-aarch64")
	}
	rng := rand.New(rand.NewSource(42))
	pool := simdWordPool(rng)
	var cases []simdCase
	var seeds []int64
	for _, p := range pool {
		for k := 0; k < 8 && k < len(p); k++ {
			seed := rng.Int63()
			cases = append(cases, makeSIMDCase(p[rng.Intn(len(p))], seed))
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
	if err := os.WriteFile(simdGoldenFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d cases to %s", len(cases), simdGoldenFile)
}

// TestSIMDNoAllocs executes every non-memory op of the golden file again
// and requires zero heap allocations.
func TestSIMDNoAllocs(t *testing.T) {
	f, err := os.ReadFile(simdGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[decode.A64Op]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(f)), "\n") {
		var w uint32
		var seed int64
		fmt.Sscanf(line, "%x %d", &w, &seed)
		op := decode.DecodeA64(w).Op
		if seen[op] || simdIsMemOp(op) {
			continue
		}
		seen[op] = true
		c := makeSIMDCase(w, seed)
		_, _ = simdRunUVM(t, &c)
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
