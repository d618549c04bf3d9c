package decode

import (
	"encoding/hex"
	"math/rand"
	"strings"
	"testing"
)

// TestX86SSEDecode checks representative encodings (assembled with GNU as)
// and the operand conventions execSSE relies on.
func TestX86SSEDecode(t *testing.T) {
	tests := []struct {
		hex   string
		op    X86Op
		aux   uint32
		nargs uint8
		imm   int64
	}{
		{"660f6f06", SSEMov128, SSEAuxAlign, 2, 0},                                   // movdqa xmm0,[rsi]
		{"f30f6f06", SSEMov128, 0, 2, 0},                                             // movdqu xmm0,[rsi]
		{"0f28c1", SSEMov128, 0, 2, 0},                                               // movaps xmm0,xmm1
		{"660fd60f", SSEMovZX, 0, 2, 0},                                              // movq [rdi],xmm1
		{"f30f7ec1", SSEMovZX, 0, 2, 0},                                              // movq xmm0,xmm1
		{"66480f7ec8", SSEMovZX, 0, 2, 0},                                            // movq rax,xmm1
		{"f20f1006", SSEMovSD, 0, 2, 0},                                              // movsd xmm0,[rsi]
		{"660fefc1", SSEPxor, 0, 2, 0},                                               // pxor
		{"0f57c0", SSEPxor, 0, 2, 0},                                                 // xorps
		{"660f7406", SSEPcmpeqb, SSEAuxAlign, 2, 0},                                  // pcmpeqb xmm0,[rsi]
		{"660fd7c1", SSEPmovmskb, 0, 2, 0},                                           // pmovmskb eax,xmm1
		{"660f70c11b", SSEPshufd, 0, 3, 0x1b},                                        // pshufd
		{"660f73fa0a", SSEPslldq, 0, 2, 10},                                          // pslldq xmm2,10
		{"660ff206", SSEPslld, SSEAuxAlign, 2, 0},                                    // pslld xmm0,[rsi]
		{"f20f58c1", SSEAddsd, 0, 2, 0},                                              // addsd
		{"f20f5806", SSEAddsd, 0, 2, 0},                                              // addsd xmm0,[rsi] (m64: no alignment)
		{"660f2ec1", SSEUcomisd, 0, 2, 0},                                            // ucomisd
		{"f2480f2cc0", SSECvttsd2si, 0, 2, 0},                                        // cvttsd2si rax,xmm0
		{"f20f2ac0", SSECvtsi2sd, 0, 2, 0},                                           // cvtsi2sd xmm0,eax
		{"660f3a63071a", SSEPcmpistri, 0, 3, 0x1a},                                   // pcmpistri xmm0,[rdi],0x1a (unaligned ok)
		{"66480f3a61c10c", SSEPcmpestri, SSEAuxW64, 3, 12},                           // pcmpestri with REX.W
		{"660f3810ca", SSEPblendvb, 0, 2, 0},                                         // pblendvb xmm1,xmm2,<xmm0>
		{"660f3a0bc109", SSERoundsd, 0, 3, 9},                                        // roundsd
		{"0fae10", SSELdmxcsr, 0, 1, 0},                                              // ldmxcsr [rax]
		{"480fae00", SSEFxsave, SSEAuxW64, 1, 0},                                     // fxsave64 [rax]
		{"f20f38f007", SSECrc32, 0, 2, 0},                                            // crc32 eax, byte [rdi]
		{"db28", X87FldM, 0, 1, 0},                                                   // fld tbyte [rax]
		{"dd00", X87FldM, 0, 1, 0},                                                   // fld qword [rax]
		{"d9c3", X87Fld, 0, 1, 0},                                                    // fld st(3)
		{"db38", X87FstM, X87AuxPop, 1, 0},                                           // fstp tbyte [rax]
		{"dec1", X87ArithReg, X87OpAdd<<X87AuxOpShift | X87AuxPop, 2, 0},             // faddp st(1),st
		{"dee1", X87ArithReg, X87OpSub<<X87AuxOpShift | X87AuxPop | X87AuxRev, 2, 0}, // fsubrp
		{"da38", X87ArithMem, X87OpDiv<<X87AuxOpShift | X87AuxInt | X87AuxRev, 1, 0}, // fidivr dword
		{"dfe9", X87Fcomi, X87AuxPop | X87AuxUnordered, 2, 0},                        // fucomip
		{"ded9", X87Fcom, X87AuxPop2, 1, 0},                                          // fcompp
		{"dfe0", X87Fnstsw, 0, 1, 0},                                                 // fnstsw ax
		{"d9e8", X87FldConst, 0, 0, 0},                                               // fld1
		{"dd08", X87Fisttp, X87AuxPop, 1, 0},                                         // fisttp qword
	}
	for _, tc := range tests {
		b, _ := hex.DecodeString(tc.hex)
		x, err := DecodeX86(b, 0x1000)
		if err != nil {
			t.Errorf("%s: %v", tc.hex, err)
			continue
		}
		if x.Op != tc.op || x.Aux != tc.aux || x.NArgs != tc.nargs || x.Imm != tc.imm || int(x.Len) != len(b) {
			t.Errorf("%s: op %v aux %#x nargs %d imm %d len %d, want op %v aux %#x nargs %d imm %d len %d",
				tc.hex, x.Op, x.Aux, x.NArgs, x.Imm, x.Len, tc.op, tc.aux, tc.nargs, tc.imm, len(b))
		}
	}
	// Memory sizes the executor relies on.
	for _, c := range []struct {
		hex  string
		size uint8
	}{{"db28", 10}, {"d900", 4}, {"df00", 2}, {"df28", 8}, {"d930", 28}, {"dd30", 108}, {"f30f7e08", 8}, {"660f3a200001", 1}} {
		b, _ := hex.DecodeString(c.hex)
		x, err := DecodeX86(b, 0)
		if err != nil || x.Args[0].Size != c.size && x.Args[1].Size != c.size {
			t.Errorf("%s: size %d/%d err %v, want %d", c.hex, x.Args[0].Size, x.Args[1].Size, err, c.size)
		}
	}
}

// sseFuzzPrefixes biases random instructions towards the SSE/x87 maps.
var sseFuzzPrefixes = []string{"0f", "660f", "f20f", "f30f", "660f38", "660f3a", "0f38", "0f3a", "f20f38",
	"d8", "d9", "da", "db", "dc", "dd", "de", "df", "48", "4c0f", "66480f", "640f", "670f", "66440f"}

// TestX86SSENoPanic decodes many random SSE-map byte strings: the
// translator must never panic and every accepted SSE op must satisfy the
// operand conventions the executor relies on.
func TestX86SSENoPanic(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n := 40000
	if testing.Short() {
		n = 5000
	}
	for i := 0; i < n; i++ {
		p, _ := hex.DecodeString(sseFuzzPrefixes[rng.Intn(len(sseFuzzPrefixes))])
		b := make([]byte, 15)
		copy(b, p)
		for j := len(p); j < 15; j++ {
			b[j] = byte(rng.Intn(256))
		}
		checkSSEDecode(t, b)
	}
}

// FuzzX86SSE is the same check under the fuzzer.
func FuzzX86SSE(f *testing.F) {
	for _, s := range []string{"660f6f06", "f20f58c1", "660f3a63071a", "db28", "dec1", "0fae10", "660f73fa0a"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkSSEDecode(t, b) })
}

func checkSSEDecode(t *testing.T, b []byte) {
	x, err := DecodeX86(b, 0x400000)
	if err != nil || x.Op < X86SSEBase || x.Op >= X86AVXBase {
		return
	}
	if x.Op >= SSEOpEnd || x.NArgs > 3 {
		t.Fatalf("% x: bad op %v nargs %d", b, x.Op, x.NArgs)
	}
	for i := 0; i < int(x.NArgs); i++ {
		a := x.Args[i]
		switch a.Kind {
		case ArgXMM:
			if a.Reg > 15 {
				t.Fatalf("% x: xmm%d", b, a.Reg)
			}
		case ArgReg:
			if a.Reg > 15 {
				t.Fatalf("% x: gpr %d", b, a.Reg)
			}
		case ArgMMX:
			if a.Reg > 7 || x.Op < MMXInt && x.Op != SSEEmms {
				t.Fatalf("% x: mm%d in op %v", b, a.Reg, x.Op)
			}
		case ArgMem, ArgImm, ArgX87:
		default:
			t.Fatalf("% x: operand kind %d in SSE op %v (%s)", b, a.Kind, x.Op, strings.TrimSpace(DisasmX86(b, 0)))
		}
	}
}
