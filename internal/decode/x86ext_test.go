package decode

import (
	"encoding/hex"
	"testing"
)

// TestX86ExtDecode checks the records of the MMX, BMI, ADX, RDPID and
// FSGSBASE translators (encodings from GNU as).
func TestX86ExtDecode(t *testing.T) {
	for _, c := range []struct {
		hex   string
		op    X86Op
		aux   X86Op // MMXInt/MMXShift: the SSE op
		nargs uint8
		len   uint8
	}{
		{"0ffcc1", MMXInt, SSEPaddb, 2, 3},        // paddb mm0, mm1
		{"0f6fc1", MMXMovIn, 0, 2, 3},             // movq mm0, mm1
		{"0f6241 10", MMXInt, SSEPunpckldq, 2, 4}, // punpckldq mm0, [rcx+0x10] (m32)
		{"0f3800c1", MMXInt, SSEPshufb, 2, 4},     // pshufb mm0, mm1
		{"0f3a0fc103", MMXInt, SSEPalignr, 3, 5},  // palignr mm0, mm1, 3
		{"0f71d003", MMXShift, SSEPsrlw, 2, 4},    // psrlw mm0, 3
		{"0fd3c1", MMXShift, SSEPsrlq, 2, 3},      // psrlq mm0, mm1
		{"0f70c11b", MMXPshufw, 0, 3, 4},          // pshufw mm0, mm1, 0x1b
		{"0f77", SSEEmms, 0, 0, 2},                // emms
		{"f30fd6c1", MMXMovq2dq, 0, 2, 4},         // movq2dq xmm0, mm1
		{"660f2d00", MMXCvtpd2pi, 0, 2, 4},        // cvtpd2pi mm0, [rax]
		{"660ffcc1", SSEPaddb, 0, 2, 4},           // paddb xmm0, xmm1 stays SSE
		{"c4e260f2c1", X86Andn, 0, 3, 5},          // andn eax, ebx, ecx
		{"c4e3fbf0c30d", X86Rorx, 0, 3, 6},        // rorx rax, rbx, 13
		{"66490f38f600", X86Adcx, 0, 2, 6},        // adcx rax, [r8]
		{"f3480f38f6c3", X86Adox, 0, 2, 6},        // adox rax, rbx
		{"f3410fc7f8", X86Rdpid, 0, 1, 5},         // rdpid r8
		{"0f01f9", X86Rdtscp, 0, 0, 3},            // rdtscp
		{"f3480faedb", X86Wrgsbase, 0, 1, 5},      // wrgsbase rbx
	} {
		b, _ := hex.DecodeString(stripSpaces(c.hex))
		x, err := DecodeX86(b, 0x1000)
		if err != nil || x.Op != c.op || x.NArgs != c.nargs || x.Len != c.len ||
			(c.aux != 0 && X86Op(x.Aux) != c.aux) {
			t.Errorf("%s: op %v aux %v nargs %d len %d err %v; want %v %v %d %d",
				c.hex, x.Op, X86Op(x.Aux), x.NArgs, x.Len, err, c.op, c.aux, c.nargs, c.len)
		}
	}
	// Not instructions: VEX.L=1 BMI, ADCX with LOCK, MMX forms that do not
	// exist, MOVNTQ to a register.
	for _, h := range []string{"c4e264f2c1", "f0660f38f6c3", "0fd6c1", "0fe7c1", "0f73f803"} {
		b, _ := hex.DecodeString(h)
		if x, err := DecodeX86(b, 0); err == nil {
			t.Errorf("%s: decoded as %v, want an error", h, x.Op)
		}
	}
	// Truncated inside ADCX/RDPID.
	for _, h := range []string{"66", "660f", "660f38", "660f38f6", "f30fc7"} {
		b, _ := hex.DecodeString(h)
		if _, err := DecodeX86(b, 0); err != ErrTruncated {
			t.Errorf("%s: err %v, want ErrTruncated", h, err)
		}
	}
}

func stripSpaces(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			out = append(out, s[i])
		}
	}
	return string(out)
}
