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
