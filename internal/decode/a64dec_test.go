package decode

import (
	"debug/elf"
	"encoding/binary"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// a64Families maps arm64asm's mnemonic (an alias where the Arm ARM
// prefers one) to the uvm ops that implement it.
var a64Families = map[string][]A64Op{
	"ADC": {A64ADC}, "ADCS": {A64ADCS}, "SBC": {A64SBC}, "SBCS": {A64SBCS}, "NGC": {A64SBC}, "NGCS": {A64SBCS},
	"ADD":  {A64ADDI, A64ADDR, A64ADDX},
	"ADDS": {A64ADDSI, A64ADDSR, A64ADDSX}, "CMN": {A64ADDSI, A64ADDSR, A64ADDSX},
	"SUB": {A64ADDI, A64SUBR, A64SUBX}, "NEG": {A64SUBR},
	"SUBS": {A64SUBSI, A64SUBSR, A64SUBSX}, "CMP": {A64SUBSI, A64SUBSR, A64SUBSX}, "NEGS": {A64SUBSR},
	"MOV":  {A64ADDI, A64MOVR, A64MOVI},
	"MOVZ": {A64MOVI}, "MOVN": {A64MOVI}, "MOVK": {A64MOVK},
	"ADR": {A64ADR}, "ADRP": {A64ADRP},
	"AND": {A64ANDI, A64ANDR}, "BIC": {A64ANDR},
	"ANDS": {A64ANDSI, A64ANDSR}, "TST": {A64ANDSI, A64ANDSR}, "BICS": {A64ANDSR},
	"ORR": {A64ORRI, A64ORRR, A64MOVI}, "ORN": {A64ORRR}, "MVN": {A64ORRR},
	"EOR": {A64EORI, A64EORR}, "EON": {A64EORR},
	"ASR": {A64ASRI, A64ASRV}, "ASRV": {A64ASRV},
	"LSL": {A64LSLI, A64LSLV}, "LSLV": {A64LSLV},
	"LSR": {A64LSRI, A64LSRV}, "LSRV": {A64LSRV},
	"ROR": {A64EXTR, A64RORV}, "RORV": {A64RORV}, "EXTR": {A64EXTR},
	"BFM": {A64BFM}, "BFI": {A64BFM}, "BFXIL": {A64BFM},
	"SBFM": {A64SBFM}, "SBFIZ": {A64SBFM}, "SBFX": {A64SBFM},
	"SXTB": {A64SXTW}, "SXTH": {A64SXTW}, "SXTW": {A64SXTW},
	"UBFM": {A64UBFM}, "UBFIZ": {A64UBFM}, "UBFX": {A64UBFM}, "UXTB": {A64UBFM}, "UXTH": {A64UBFM},
	"CCMN": {A64CCMN}, "CCMP": {A64CCMP}, "CSEL": {A64CSEL},
	"CSINC": {A64CSINC}, "CSET": {A64CSINC}, "CINC": {A64CSINC},
	"CSINV": {A64CSINV}, "CSETM": {A64CSINV}, "CINV": {A64CSINV},
	"CSNEG": {A64CSNEG}, "CNEG": {A64CSNEG},
	"MADD": {A64MADD}, "MUL": {A64MADD}, "MSUB": {A64MSUB}, "MNEG": {A64MSUB},
	"SMADDL": {A64SMADDL}, "SMULL": {A64SMADDL}, "SMSUBL": {A64SMSUBL}, "SMNEGL": {A64SMSUBL},
	"UMADDL": {A64UMADDL}, "UMULL": {A64UMADDL}, "UMSUBL": {A64UMSUBL}, "UMNEGL": {A64UMSUBL},
	"SMULH": {A64SMULH}, "UMULH": {A64UMULH}, "UDIV": {A64UDIV}, "SDIV": {A64SDIV},
	"CRC32B": {A64CRC32}, "CRC32H": {A64CRC32}, "CRC32W": {A64CRC32}, "CRC32X": {A64CRC32},
	"CRC32CB": {A64CRC32}, "CRC32CH": {A64CRC32}, "CRC32CW": {A64CRC32}, "CRC32CX": {A64CRC32},
	"RBIT": {A64RBIT}, "REV16": {A64REV16}, "REV32": {A64REV32}, "REV": {A64REV}, "CLZ": {A64CLZ}, "CLS": {A64CLS},
	"LDR": {A64LDRW, A64LDRX, A64LDRV}, "LDUR": {A64LDRW, A64LDRX, A64LDRV}, "LDTR": {A64LDRW, A64LDRX},
	"LDRB": {A64LDRB}, "LDURB": {A64LDRB}, "LDTRB": {A64LDRB},
	"LDRH": {A64LDRH}, "LDURH": {A64LDRH}, "LDTRH": {A64LDRH},
	"LDRSB": {A64LDRSB}, "LDURSB": {A64LDRSB}, "LDTRSB": {A64LDRSB},
	"LDRSH": {A64LDRSH}, "LDURSH": {A64LDRSH}, "LDTRSH": {A64LDRSH},
	"LDRSW": {A64LDRSW}, "LDURSW": {A64LDRSW}, "LDTRSW": {A64LDRSW},
	"STR": {A64STRW, A64STRX, A64STRV}, "STUR": {A64STRW, A64STRX, A64STRV}, "STTR": {A64STRW, A64STRX},
	"STRB": {A64STRB}, "STURB": {A64STRB}, "STTRB": {A64STRB},
	"STRH": {A64STRH}, "STURH": {A64STRH}, "STTRH": {A64STRH},
	"LDP": {A64LDP, A64LDPV}, "LDNP": {A64LDP, A64LDPV}, "LDPSW": {A64LDPSW},
	"STP": {A64STP, A64STPV}, "STNP": {A64STP, A64STPV},
	"PRFM": {A64PRFM}, "PRFUM": {A64PRFM},
	"LDXR": {A64LDXR}, "LDXRB": {A64LDXR}, "LDXRH": {A64LDXR}, "LDAXR": {A64LDXR}, "LDAXRB": {A64LDXR}, "LDAXRH": {A64LDXR},
	"STXR": {A64STXR}, "STXRB": {A64STXR}, "STXRH": {A64STXR}, "STLXR": {A64STXR}, "STLXRB": {A64STXR}, "STLXRH": {A64STXR},
	"LDXP": {A64LDXP}, "LDAXP": {A64LDXP}, "STXP": {A64STXP}, "STLXP": {A64STXP},
	"LDAR": {A64LDAR}, "LDARB": {A64LDAR}, "LDARH": {A64LDAR},
	"STLR": {A64STLR}, "STLRB": {A64STLR}, "STLRH": {A64STLR},
	"B": {A64B, A64BCOND}, "BL": {A64BL}, "CBZ": {A64CBZ}, "CBNZ": {A64CBNZ}, "TBZ": {A64TBZ}, "TBNZ": {A64TBNZ},
	"BR": {A64BR}, "BLR": {A64BLR}, "RET": {A64RET},
	"SVC": {A64SVC}, "BRK": {A64BRK},
	"NOP": {A64NOP}, "HINT": {A64NOP}, "YIELD": {A64NOP}, "WFE": {A64NOP}, "WFI": {A64NOP}, "SEV": {A64NOP}, "SEVL": {A64NOP},
	"CLREX": {A64CLREX}, "DMB": {A64DMB}, "DSB": {A64DMB}, "ISB": {A64ISB},
	"MRS": {A64MRS}, "MSR": {A64MSR}, "DC": {A64DCZVA, A64DCCVA}, "IC": {A64ICIVAU},
}

// a64OnlyXArch lists mnemonics arm64asm decodes that uvm deliberately
// treats as undefined: they trap at EL0 on Linux (SIGILL), or name system
// registers and operations uvm does not provide (CCSIDR_EL1, ID registers
// outside Linux's emulated space, DC IVAC, TLBI …). MRS, MSR and DC are only accepted here
// when uvm says A64WhySysReg/A64WhyPriv/A64WhyFeature.
var a64OnlyXArch = map[string]bool{
	"HVC": true, "SMC": true, "HLT": true, "DCPS1": true, "DCPS2": true, "DCPS3": true,
	"ERET": true, "DRPS": true, "SYS": true, "SYSL": true, "TLBI": true, "AT": true,
	"MRS": true, "MSR": true, "DC": true,
}

// isSIMDWord reports whether raw belongs to helper-decoded FP/SIMD groups
// (data processing x111, Advanced SIMD structure loads/stores), which
// a64simd's own tests cover.
func isSIMDWord(raw uint32) bool {
	op0 := raw >> 25 & 0xf
	if op0&7 == 7 {
		return true
	}
	return op0&5 == 4 && raw>>28&0xb == 0 && raw>>26&1 == 1
}

// textWords returns the .text words of an ELF file.
func textWords(t *testing.T, path string) []uint32 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		return nil
	}
	s := f.Section(".text")
	if s == nil {
		return nil
	}
	b, err := s.Data()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

const testGoProgram = `package main

import (
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

func main() {
	var wg sync.WaitGroup
	var n atomic.Int64
	res := make([]float64, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res[i] = math.Sqrt(float64(i)) + math.Sin(float64(i))
			n.Add(int64(i))
		}(i)
	}
	wg.Wait()
	sort.Float64s(res)
	var b strings.Builder
	for _, r := range res {
		b.WriteString(strconv.FormatFloat(r, 'g', -1, 64))
	}
	fmt.Fprintln(os.Stdout, b.String(), n.Load(), sha256.Sum256([]byte(b.String())))
}
`

const testCProgram = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
static long counter;
static void *worker(void *p) { for (int i = 0; i < 1000; i++) __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST); return p; }
int main(int argc, char **argv) {
	pthread_t t[4];
	for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0);
	for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
	char *s = malloc(100); strcpy(s, argv[0]);
	printf("%ld %s %g\n", counter, s, atof("1.5") * argc);
	return 0;
}
`

// testBinaries returns arm64 ELF files to scan: the project's test
// programs, plus a Go program and (when the cross compiler exists) a
// static C program built now.
func testBinaries(t *testing.T) []string {
	var files []string
	for _, dir := range []string{"../../testdata/bin/arm64", "testdata"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Type().IsRegular() {
				p := filepath.Join(dir, e.Name())
				if f, err := elf.Open(p); err == nil {
					if f.Machine == elf.EM_AARCH64 {
						files = append(files, p)
					}
					f.Close()
				}
			}
		}
	}
	if testing.Short() {
		return files
	}
	tmp := t.TempDir()
	if goBin, err := exec.LookPath("go"); err == nil {
		src := filepath.Join(tmp, "goprog")
		os.MkdirAll(src, 0o755)
		os.WriteFile(filepath.Join(src, "go.mod"), []byte("module goprog\n\ngo 1.26\n"), 0o644)
		os.WriteFile(filepath.Join(src, "main.go"), []byte(testGoProgram), 0o644)
		cmd := exec.Command(goBin, "build", "-o", filepath.Join(tmp, "goprog.arm64"), ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("building the arm64 Go program failed (skipped): %v\n%s", err, out)
		} else {
			files = append(files, filepath.Join(tmp, "goprog.arm64"))
		}
	}
	if cc, err := exec.LookPath("aarch64-linux-gnu-gcc"); err == nil {
		src := filepath.Join(tmp, "cprog.c")
		os.WriteFile(src, []byte(testCProgram), 0o644)
		out := filepath.Join(tmp, "cprog.arm64")
		if b, err := exec.Command(cc, "-static", "-O2", "-pthread", "-o", out, src).CombinedOutput(); err != nil {
			t.Logf("building the arm64 C program failed (skipped): %v\n%s", err, b)
		} else {
			files = append(files, out)
		}
	}
	return files
}

// TestDecodeA64VsXArch decodes every .text word of real arm64 binaries
// with DecodeA64 and arm64asm and checks that they agree on what the
// instruction is. Deliberate differences:
//   - uvm implements LDAPR (RCpc) and IC IVAU, which arm64asm cannot
//     decode;
//   - uvm treats EL1/EL2/EL3-only and debug instructions (HVC, SMC, ERET,
//     HLT, DCPS, SYS/SYSL other than DC/IC by VA, TLBI, AT), MRS/MSR of
//     system registers it does not provide and MSR to read-only ones as
//     undefined, as Linux would (SIGILL);
//   - FP/SIMD groups are skipped here (covered by a64simd's tests).
func TestDecodeA64VsXArch(t *testing.T) {
	files := testBinaries(t)
	if len(files) == 0 {
		t.Skip("no arm64 binaries available")
	}
	seen := map[uint32]bool{}
	var words []uint32
	for _, path := range files {
		w := textWords(t, path)
		t.Logf("%s: %d words", path, len(w))
		for _, raw := range w {
			if !seen[raw] {
				seen[raw] = true
				words = append(words, raw)
			}
		}
	}
	compareWithXArch(t, words)
}

// TestDecodeA64RandomVsXArch does the same comparison on random words of
// the integer, load/store, branch and system groups, where compilers never
// go: unallocated and "should be" fields.
func TestDecodeA64RandomVsXArch(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	n := 300000
	if testing.Short() {
		n = 30000
	}
	words := make([]uint32, n)
	for i := range words {
		words[i] = rng.Uint32()
	}
	compareWithXArch(t, words)
}

func compareWithXArch(t *testing.T, words []uint32) {
	var total, simd, bothUndef, agree, onlyUvm, onlyX, reserved int
	bad := map[string]int{}
	example := map[string]string{}
	for _, raw := range words {
		total++
		if isSIMDWord(raw) {
			simd++
			continue
		}
		in := DecodeA64(raw)
		if in.Raw != raw {
			t.Fatalf("%#08x: Raw = %#08x", raw, in.Raw)
		}
		x, err := arm64asmDecode(raw)
		mine := in.Op != A64Undefined
		switch {
		case !mine && err != nil:
			bothUndef++
		case mine && err != nil:
			if in.Op == A64LDAR || in.Op == A64ICIVAU || in.Op == A64LDOP || in.Op == A64CAS || in.Op == A64CASP ||
				in.Op == A64LDAPUR || in.Op == A64STLUR || in.Op == A64FLAGM {
				onlyUvm++
				continue
			}
			key := "uvm-only " + in.Op.String()
			bad[key]++
			example[key] = DisasmA64(raw, 0) + " " + hex32(raw)
		case !mine:
			name := x.Op.String()
			why := in.Imm
			if a64OnlyXArch[name] && (why == A64WhyPriv || why == A64WhySysReg || why == A64WhyFeature || why == A64WhyMTE) {
				onlyX++
				continue
			}
			if xarchAcceptsReserved(raw) {
				reserved++
				continue
			}
			key := "xarch-only " + name + " (" + A64UndefinedWhy(&in) + ")"
			bad[key]++
			example[key] = arm64asm.GNUSyntax(x) + " " + hex32(raw)
		default:
			name := x.Op.String()
			ok := false
			for _, op := range a64Families[name] {
				if op == in.Op {
					ok = true
				}
			}
			if !ok {
				key := "family " + name + " -> " + in.Op.String()
				bad[key]++
				example[key] = arm64asm.GNUSyntax(x) + " " + hex32(raw)
				continue
			}
			if msg := checkOperands(&in, x); msg != "" {
				key := "operands " + name + ": " + msg
				bad[key]++
				example[key] = arm64asm.GNUSyntax(x) + " " + hex32(raw)
				continue
			}
			agree++
		}
	}
	t.Logf("words %d: FP/SIMD skipped %d, agree %d, both undefined %d, uvm-only (LDAPR, IC IVAU, LSE, LRCPC2, FlagM) %d, x/arch-only by design %d, reserved encodings x/arch accepts %d",
		total, simd, agree, bothUndef, onlyUvm, onlyX, reserved)
	keys := make([]string, 0, len(bad))
	for k := range bad {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("%s: %d (e.g. %s)", k, bad[k], example[k])
	}
}

// xarchAcceptsReserved recognises reserved encodings that arm64asm
// decodes anyway and uvm (correctly) treats as undefined: add/subtract
// (extended register) with a shift amount above 4, and logical
// immediates whose element is all ones.
func xarchAcceptsReserved(raw uint32) bool {
	if raw&0x1f200000 == 0x0b200000 && raw>>10&7 > 4 {
		return true
	}
	if raw&0x1f800000 == 0x12000000 {
		n, imms := raw>>22&1, raw>>10&0x3f
		v := n<<6 | (^imms & 0x3f)
		for l := 6; l >= 1; l-- {
			if v>>l&1 == 1 {
				levels := uint32(1)<<l - 1
				return imms&levels == levels
			}
		}
	}
	return false
}

func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	b := []byte("0x00000000")
	for i := 9; i >= 2; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}

// regNum returns the 0..31 number of an arm64asm general register
// operand, and whether the operand is one.
func regNum(a arm64asm.Arg) (int, bool) {
	switch r := a.(type) {
	case arm64asm.Reg:
		switch {
		case r >= arm64asm.W0 && r <= arm64asm.WZR:
			return int(r - arm64asm.W0), true
		case r >= arm64asm.X0 && r <= arm64asm.XZR:
			return int(r - arm64asm.X0), true
		}
	case arm64asm.RegSP:
		switch {
		case arm64asm.Reg(r) >= arm64asm.W0 && arm64asm.Reg(r) <= arm64asm.WZR:
			return int(arm64asm.Reg(r) - arm64asm.W0), true
		case arm64asm.Reg(r) >= arm64asm.X0 && arm64asm.Reg(r) <= arm64asm.XZR:
			return int(arm64asm.Reg(r) - arm64asm.X0), true
		}
	}
	return 0, false
}

// enc maps a resolved register back to its encoding.
func enc(r uint8) int {
	if r >= A64RegSP {
		return 31
	}
	return int(r)
}

// checkOperands compares the operands arm64asm exports with the record:
// branch and literal offsets, the first register, memory base registers
// and bitmask immediates.
func checkOperands(in *A64, x arm64asm.Inst) string {
	for i, a := range x.Args {
		if a == nil {
			break
		}
		switch v := a.(type) {
		case arm64asm.PCRel:
			if uint64(v) != in.Imm {
				return "pc-relative offset"
			}
		case arm64asm.MemImmediate:
			if n, _ := regNum(v.Base); n != enc(in.Rn) && in.Op != A64PRFM {
				return "base register"
			}
		case arm64asm.MemExtend:
			if n, _ := regNum(v.Base); n != enc(in.Rn) && in.Op != A64PRFM {
				return "base register"
			}
			if n, _ := regNum(v.Index); n != enc(in.Rm) && in.Op != A64PRFM {
				return "index register"
			}
		case arm64asm.Imm64:
			switch in.Op {
			case A64ANDI, A64ORRI, A64EORI, A64ANDSI, A64MOVI:
				if v.Imm != in.Imm {
					return "64-bit immediate"
				}
			}
		}
		if i == 0 {
			n, isReg := regNum(a)
			if !isReg {
				continue
			}
			var want int
			switch in.Op {
			case A64BR, A64BLR, A64RET:
				want = enc(in.Rn)
			case A64STXR:
				want = enc(in.Ra)
			case A64STXP:
				want = enc(in.Rm)
			case A64SUBSI, A64SUBSR, A64SUBSX, A64ADDSI, A64ADDSR, A64ADDSX, A64ANDSI, A64ANDSR, A64CCMN, A64CCMP:
				if name := x.Op.String(); name == "CMP" || name == "CMN" || name == "TST" || name == "CCMP" || name == "CCMN" {
					want = enc(in.Rn)
				} else {
					want = enc(in.Rd)
				}
			case A64LDRV, A64STRV, A64LDPV, A64STPV, A64MSR, A64PRFM:
				continue
			default:
				want = enc(in.Rd)
			}
			if n != want {
				return "first register"
			}
		}
	}
	if strings.HasPrefix(x.Op.String(), "LDR") && in.Flags&A64ModeMask == A64ModeLit && x.Args[1] == nil {
		return "literal without offset"
	}
	return ""
}

// TestDisasmA64 spot-checks the disassembler.
func TestDisasmA64(t *testing.T) {
	for _, tc := range []struct {
		raw  uint32
		pc   uint64
		want string
	}{
		{0x91000420, 0, "add x0, x1, #0x1"},
		{0x14000002, 0x1000, "b 0x1008"},
		{0x17ffffff, 0x1000, "b 0xffc"},
		{0x90000020, 0x1234, "adrp x0, 0x5000"},
		{0xf8bfc020, 0, "ldapr x0, [x1]"},
		{0xd50b7520, 0, "ic ivau, x0"},
		{0xf8e10040, 0, "ldaddal x1, x0, [x2]"},
		{0x38a183ff, 0, "swpab w1, wzr, [sp]"},
		{0xc8e1fc43, 0, "casal x1, x3, [x2]"},
		{0x48207c82, 0, "casp x0, x1, x2, x3, [x4]"},
		{0x08607ffe, 0, "caspa w0, w1, w30, wzr, [sp]"},
		{0xd95f8041, 0, "ldapur x1, [x2, #-8]"},
		{0x19c03041, 0, "ldapursb w1, [x2, #3]"},
		{0x599fe041, 0, "ldapursh x1, [x2, #-2]"},
		{0x990043e1, 0, "stlur w1, [sp, #4]"},
		{0xd500401f, 0, "cfinv"},
		{0xba018425, 0, "rmif x1, #3, #5"},
		{0x3a00484d, 0, "setf16 w2"},
	} {
		if got := DisasmA64(tc.raw, tc.pc); got != tc.want {
			t.Errorf("DisasmA64(%#08x, %#x) = %q, want %q", tc.raw, tc.pc, got, tc.want)
		}
	}
	if got := DisasmA64(0, 0); got != ".inst 0x00000000" {
		t.Errorf("DisasmA64(0) = %q", got)
	}
	in := DecodeA64(0x04000000)
	if got := A64UndefinedMessage(&in, 0); !strings.Contains(got, "SVE") || !strings.Contains(got, ".inst 0x04000000") {
		t.Errorf("undefined message %q", got)
	}
}

// FuzzDecodeA64 checks that the decoder never panics, is deterministic,
// keeps Raw, and only produces register numbers the interpreter can index.
func FuzzDecodeA64(f *testing.F) {
	for _, w := range []uint32{0, 0x91000420, 0xd65f03c0, 0xf8bfc020, 0xd50b7520, 0xa9bf7bfd, 0x1e602000, 0x4c407000} {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, raw uint32) {
		in := DecodeA64(raw)
		if in != DecodeA64(raw) {
			t.Fatal("not deterministic")
		}
		if in.Raw != raw {
			t.Fatalf("Raw = %#x", in.Raw)
		}
		if in.Op != A64Undefined && in.Op < A64SIMDBase {
			for _, r := range []uint8{in.Rd, in.Rn, in.Rm, in.Ra} {
				if r >= A64NumRegs {
					t.Fatalf("%#08x: register %d out of range", raw, r)
				}
			}
			if in.Op >= a64NumOps {
				t.Fatalf("%#08x: op %d", raw, in.Op)
			}
		}
		_ = DisasmA64(raw, 0x1000)
	})
}
