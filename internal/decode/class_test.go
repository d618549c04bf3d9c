package decode

import "testing"

// TestA64Class checks the timing class DecodeA64 records for one
// instruction of each class.
func TestA64Class(t *testing.T) {
	for _, tc := range []struct {
		raw  uint32
		text string
		want InsnClass
	}{
		{0x91000400, "add x0, x0, #1", ClassALU},
		{0x9b027c20, "mul x0, x1, x2", ClassMul},
		{0x9ac20820, "udiv x0, x1, x2", ClassDiv},
		{0x54000040, "b.eq .+8", ClassBranch},
		{0xd65f03c0, "ret", ClassBranch},
		{0xf9400020, "ldr x0, [x1]", ClassLoad},
		{0xf9000020, "str x0, [x1]", ClassStore},
		{0xa9bf7bfd, "stp x29, x30, [sp, #-16]!", ClassStore},
		{0xc85f7c20, "ldxr x0, [x1]", ClassAtomic},
		{0x1e622820, "fadd d0, d1, d2", ClassFP},
		{0x1e621820, "fdiv d0, d1, d2", ClassFPDiv},
		{0x4ea28420, "add v0.4s, v1.4s, v2.4s", ClassSIMD},
		{0x4c407000, "ld1 {v0.16b}, [x0]", ClassLoad},
		{0x4c007000, "st1 {v0.16b}, [x0]", ClassStore},
		{0xd5033bbf, "dmb ish", ClassBarrier},
		{0xd50b7b20, "dc cvau, x0", ClassDC},
		{0xd50b7520, "ic ivau, x0", ClassIC},
		{0xd4000001, "svc #0", ClassSystem},
		{0xd503201f, "nop", ClassSystem},
		{0x00000000, "udf #0", ClassSystem},
	} {
		in := DecodeA64(tc.raw)
		if in.Class != tc.want {
			t.Errorf("%08x %s (%v): class %v, want %v", tc.raw, tc.text, in.Op, in.Class, tc.want)
		}
	}
	for c := InsnClass(0); c < NumInsnClasses; c++ {
		if c.String() == "" || c.String() == "class?" {
			t.Errorf("class %d has no name", c)
		}
	}
}

// TestX86Class checks the timing class DecodeX86 records for one
// instruction of each class.
func TestX86Class(t *testing.T) {
	for _, tc := range []struct {
		hex  []byte
		text string
		want InsnClass
	}{
		{[]byte{0x48, 0x01, 0xd8}, "add rax, rbx", ClassALU},
		{[]byte{0x48, 0x8d, 0x04, 0x18}, "lea rax, [rax+rbx]", ClassALU},
		{[]byte{0x48, 0x0f, 0xaf, 0xc3}, "imul rax, rbx", ClassMul},
		{[]byte{0x48, 0xf7, 0xf3}, "div rbx", ClassDiv},
		{[]byte{0x75, 0x00}, "jnz .+2", ClassBranch},
		{[]byte{0xc3}, "ret", ClassBranch},
		{[]byte{0x48, 0x8b, 0x03}, "mov rax, [rbx]", ClassLoad},
		{[]byte{0x48, 0x03, 0x03}, "add rax, [rbx]", ClassLoad},
		{[]byte{0x48, 0x89, 0x03}, "mov [rbx], rax", ClassStore},
		{[]byte{0x50}, "push rax", ClassStore},
		{[]byte{0x58}, "pop rax", ClassLoad},
		{[]byte{0xf0, 0x48, 0x01, 0x03}, "lock add [rbx], rax", ClassAtomic},
		{[]byte{0x48, 0x87, 0x03}, "xchg [rbx], rax", ClassAtomic},
		{[]byte{0x66, 0x0f, 0xfe, 0xc1}, "paddd xmm0, xmm1", ClassSIMD},
		{[]byte{0x0f, 0x11, 0x03}, "movups [rbx], xmm0", ClassStore},
		{[]byte{0x0f, 0xae, 0xf0}, "mfence", ClassBarrier},
		{[]byte{0x0f, 0x05}, "syscall", ClassSystem},
		{[]byte{0xd8, 0xc1}, "fadd st0, st1", ClassFP},
	} {
		in, err := DecodeX86(tc.hex, 0x1000)
		if err != nil {
			t.Errorf("% x %s: %v", tc.hex, tc.text, err)
			continue
		}
		if in.Class != tc.want {
			t.Errorf("% x %s (%v): class %v, want %v", tc.hex, tc.text, in.Op, in.Class, tc.want)
		}
	}
}
