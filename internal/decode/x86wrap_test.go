package decode

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// fmtX86Arg formats an operand in the notation of testdata/x86fixups.txt.
func fmtX86Arg(a *X86Arg) string {
	switch a.Kind {
	case ArgReg:
		return fmt.Sprintf("r%d/%d", a.Reg, a.Size)
	case ArgRegHigh:
		return fmt.Sprintf("h%d", a.Reg)
	case ArgImm:
		return "imm"
	case ArgXMM:
		return fmt.Sprintf("x%d", a.Reg)
	case ArgSeg:
		return fmt.Sprintf("s%d", a.Reg)
	case ArgMem:
		var parts []string
		if a.Reg != NoReg {
			parts = append(parts, fmt.Sprintf("b%d", a.Reg))
		}
		if a.Index != NoReg {
			parts = append(parts, fmt.Sprintf("i%d*%d", a.Index, a.Scale))
		}
		s := strings.Join(parts, "+")
		switch {
		case a.Disp < 0 && len(parts) > 0:
			s += fmt.Sprintf("-0x%x", -a.Disp)
		case a.Disp != 0 && len(parts) > 0:
			s += fmt.Sprintf("+0x%x", a.Disp)
		case len(parts) == 0:
			s = fmt.Sprintf("0x%x", uint64(a.Disp))
		}
		s = "[" + s + "]"
		switch (a.Flags & ArgSegMask) >> ArgSegShift {
		case SegFS:
			s = "fs:" + s
		case SegGS:
			s = "gs:" + s
		}
		s += fmt.Sprintf("/%d", a.Size)
		if a.Flags&ArgA32 != 0 {
			s += "a32"
		}
		return s
	}
	return fmt.Sprintf("kind%d", a.Kind)
}

func TestX86Fixups(t *testing.T) {
	f, err := os.Open("testdata/x86fixups.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const pc = 0x400000
	sc := bufio.NewScanner(f)
	line := 0
	n := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.Index(text, "#"); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		n++
		b, err := hex.DecodeString(fields[0])
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		in, derr := DecodeX86(b, pc)
		where := fmt.Sprintf("line %d (%s)", line, fields[0])
		want := fields[1]
		switch want {
		case "err=truncated":
			if derr != ErrTruncated {
				t.Errorf("%s: err = %v (op %v len %d), want truncated", where, derr, in.Op, in.Len)
			}
			continue
		case "err=undefined":
			if derr != ErrUndefined {
				t.Errorf("%s: err = %v (op %v), want undefined", where, derr, in.Op)
				continue
			}
		default:
			if derr != nil {
				t.Errorf("%s: err = %v, want %s", where, derr, want)
				continue
			}
			if in.Op.String() != want {
				t.Errorf("%s: op = %v, want %s", where, in.Op, want)
			}
		}
		if len(fields) > 2 {
			wl, _ := strconv.Atoi(fields[2])
			if int(in.Len) != wl {
				t.Errorf("%s: len = %d, want %d", where, in.Len, wl)
			}
		}
		if len(fields) < 4 {
			continue
		}
		for _, kv := range fields[3:] {
			k, v, _ := strings.Cut(kv, "=")
			var got string
			switch k {
			case "w":
				got = strconv.Itoa(int(in.Width))
			case "a0", "a1", "a2":
				i := int(k[1] - '0')
				if i >= int(in.NArgs) {
					got = "none"
				} else {
					got = fmtX86Arg(&in.Args[i])
				}
			case "imm":
				got = strconv.FormatUint(uint64(in.Imm), 16)
			case "cond":
				got = strconv.FormatUint(uint64(in.Cond), 16)
			case "rep":
				got = strconv.Itoa(int(in.Rep))
			case "lock":
				got = "0"
				if in.Lock {
					got = "1"
				}
			case "seg":
				got = strconv.Itoa(int(in.Seg))
			case "aux":
				got = strconv.Itoa(int(in.Aux))
			default:
				t.Fatalf("%s: unknown key %q", where, k)
			}
			if got != v {
				t.Errorf("%s: %s = %s, want %s", where, k, got, v)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d table entries", n)
	}
}

// TestX86TruncatedPrefixes checks that every proper prefix of a valid
// instruction is reported as truncated (never as another instruction),
// which the instruction cache relies on at page boundaries.
func TestX86TruncatedPrefixes(t *testing.T) {
	for _, h := range []string{
		"48b8efcdab8967452301", "64488b042528000000", "f30f1efa", "660f1f440000",
		"0f8f00010000", "c744240800000000", "f0480fc10a", "c4e17877", "4a8b44c8f8",
		"660f73fa0a", "0fbae005", "f6c105", "d9e8",
	} {
		b, _ := hex.DecodeString(h)
		full, err := DecodeX86(b, 0x1000)
		if err != nil && err != ErrUndefined {
			t.Fatalf("%s: %v", h, err)
		}
		if int(full.Len) != len(b) {
			t.Fatalf("%s: len %d, want %d", h, full.Len, len(b))
		}
		for k := 1; k < len(b); k++ {
			if _, err := DecodeX86(b[:k], 0x1000); err != ErrTruncated {
				t.Errorf("%s[:%d]: err = %v, want truncated", h, k, err)
			}
		}
	}
}

func TestDisasmX86(t *testing.T) {
	for _, tc := range []struct{ hex, want string }{
		{"f30f1efa", "endbr64"},
		{"f3480f1ec8", "rdsspq"},
		{"4889e5", "mov rbp, rsp"},
		{"e8fbffffff", "call 0x1000"},
		{"06", "(bad) 06"},
		{"48", "(truncated) 48"},
	} {
		b, _ := hex.DecodeString(tc.hex)
		if got := DisasmX86(b, 0x1000); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.hex, got, tc.want)
		}
	}
}

// FuzzDecodeX86: never panics; a result is either an error or a record
// with a length in 1..15 (within the input) and a valid op.
func FuzzDecodeX86(f *testing.F) {
	for _, h := range []string{"f30f1efa", "c5f877c3", "48b8efcdab8967452301", "f0480fc10a", "0f1864c000", "67e300", "c5fa6f0510000000"} {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := DecodeX86(b, 0x401000)
		if err == ErrTruncated {
			return
		}
		if in.Len < 1 || in.Len > 15 || int(in.Len) > len(b) {
			t.Fatalf("% x: len %d (err %v)", b, in.Len, err)
		}
		if err == nil && (in.Op == X86Undefined || (in.Op >= X86IntOpCount && in.Op < X86SSEBase)) {
			t.Fatalf("% x: op %v without error", b, in.Op)
		}
		_ = DisasmX86(b, 0x401000)
	})
}

func BenchmarkDecodeX86(b *testing.B) {
	code, _ := hex.DecodeString("488b4424084883c0014889442408")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _ = DecodeX86(code, 0x401000)
	}
}
