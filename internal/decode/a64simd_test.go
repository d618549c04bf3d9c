package decode

import (
	"math"
	"math/rand"
	"testing"
)

// simdDecodeCases: GNU as encodings and the record fields they must give.
var simdDecodeCases = []struct {
	raw  uint32
	text string
	want A64
}{
	{0x1f420c20, "fmadd d0, d1, d2, d3", A64{Op: A64FMADD, Rd: 0, Rn: 1, Rm: 2, Ra: 3, Size: 3}},
	{0x1f27a0c5, "fnmsub s5, s6, s7, s8", A64{Op: A64FNMSUB, Rd: 5, Rn: 6, Rm: 7, Ra: 8, Size: 2}},
	{0x1e6e1009, "fmov d9, #1.0", A64{Op: A64FMOVI, Rd: 9, Size: 3, Imm: math.Float64bits(1)}},
	{0x1e381003, "fmov s3, #-0.125", A64{Op: A64FMOVI, Rd: 3, Size: 2, Imm: uint64(math.Float32bits(-0.125))}},
	{0x6f05e4a1, "movi v1.2d, #0xff00ff0000ff00ff", A64{Op: A64VMOVI, Rd: 1, Q: 1, Size: 3, Imm: 0xff00ff0000ff00ff}},
	{0x4f002642, "movi v2.4s, #0x12, lsl #8", A64{Op: A64VMOVI, Rd: 2, Q: 1, Size: 2, Imm: 0x0000120000001200}},
	{0x6f01a683, "mvni v3.8h, #0x34, lsl #8", A64{Op: A64VMVNI, Rd: 3, Q: 1, Size: 1, Imm: 0x3400340034003400}},
	{0x4f02d6c4, "movi v4.4s, #0x56, msl #16", A64{Op: A64VMOVI, Rd: 4, Q: 1, Size: 2, Imm: 0x0056ffff0056ffff}},
	{0x6f037705, "bic v5.4s, #0x78, lsl #24", A64{Op: A64VBICI, Rd: 5, Q: 1, Size: 2, Imm: 0x7800000078000000}},
	{0x6f00f486, "fmov v6.2d, #2.5", A64{Op: A64VFMOVI, Rd: 6, Q: 1, Size: 3, Imm: math.Float64bits(2.5)}},
	{0x4cdf2000, "ld1 {v0.16b-v3.16b}, [x0], #64", A64{Op: A64VLDST, Rd: 0, Rn: 0, Rm: 31, Q: 1, Size: 0,
		Flags: SIMDLoad | SIMDPost, Imm: 64, Imm2: 1 | 4<<8}},
	{0x4c400bfe, "ld4 {v30.4s, v31.4s, v0.4s, v1.4s}, [sp]", A64{Op: A64VLDST, Rd: 30, Rn: 31, Rm: 31, Q: 1, Size: 2,
		Flags: SIMDLoad, Imm2: 4 | 1<<8}},
	{0x4d8a8527, "st1 {v7.d}[1], [x9], x10", A64{Op: A64VLDSTL, Rd: 7, Rn: 9, Rm: 10, Q: 1, Size: 3,
		Flags: SIMDPost, Imm2: 1 | 1<<16}},
	{0x4d40c568, "ld1r {v8.8h}, [x11]", A64{Op: A64VLDR, Rd: 8, Rn: 11, Rm: 31, Q: 1, Size: 1, Flags: SIMDLoad, Imm2: 1}},
	{0x4ddf3441, "ld3 {v1.b-v3.b}[13], [x2], #3", A64{Op: A64VLDSTL, Rd: 1, Rn: 2, Rm: 31, Q: 1, Size: 0,
		Flags: SIMDLoad | SIMDPost, Imm: 3, Imm2: 3 | 13<<16}},
	{0x4e183c24, "mov x4, v1.d[1]", A64{Op: A64VUMOV, Rd: 4, Rn: 1, Q: 1, Sf: 1, Size: 3, Imm: 1}},
	{0x0e0e2c45, "smov w5, v2.h[3]", A64{Op: A64VSMOV, Rd: 5, Rn: 2, Size: 1, Imm: 3}},
	{0x4e1404e6, "dup v6.4s, v7.s[2]", A64{Op: A64VDUPE, Rd: 6, Rn: 7, Q: 1, Size: 2, Imm: 2}},
	{0x4e010d28, "dup v8.16b, w9", A64{Op: A64VDUPG, Rd: 8, Rn: 9, Q: 1, Size: 0}},
	{0x6e1c256a, "mov v10.s[3], v11.s[1]", A64{Op: A64VINSE, Rd: 10, Rn: 11, Q: 1, Size: 2, Imm: 3, Imm2: 1}},
	{0x4e1e1dac, "mov v12.h[7], w13", A64{Op: A64VINSG, Rd: 12, Rn: 13, Q: 1, Size: 1, Imm: 7}},
	{0x9e42d041, "scvtf d1, x2, #12", A64{Op: A64ICVTF, Rd: 1, Rn: 2, Rm: 2, Sf: 1, Size: 3, Imm: 12}},
	{0x1e198883, "fcvtzu w3, s4, #30", A64{Op: A64FCVTI, Rd: 3, Rn: 4, Rm: 25, Size: 2, Imm: 30, Imm2: FPRoundZ, Flags: SIMDUnsigned}},
	{0x9e7000c5, "fcvtms x5, d6", A64{Op: A64FCVTI, Rd: 5, Rn: 6, Rm: 16, Sf: 1, Size: 3, Imm2: FPRoundM}},
	{0x4fa99907, "fmul v7.4s, v8.4s, v9.s[3]", A64{Op: A64VFMUL, Rd: 7, Rn: 8, Rm: 9, Q: 1, Size: 2, Imm: 3, Flags: SIMDByElem}},
	{0x6f7c096a, "mla v10.8h, v11.8h, v12.h[7]", A64{Op: A64VMLA, Rd: 10, Rn: 11, Rm: 12, Q: 1, Size: 1, Imm: 7, Flags: SIMDByElem}},
	{0x6f4005cd, "ushr v13.2d, v14.2d, #64", A64{Op: A64VUSHR, Rd: 13, Rn: 14, Q: 1, Size: 3, Imm: 64}},
	{0x0f0f560f, "shl v15.8b, v16.8b, #7", A64{Op: A64VSHL, Rd: 15, Rn: 16, Size: 0, Imm: 7}},
	{0x4f0d8651, "shrn2 v17.16b, v18.8h, #3", A64{Op: A64VSHRN, Rd: 17, Rn: 18, Q: 1, Size: 0, Imm: 3}},
	{0x0f3fa693, "sshll v19.2d, v20.2s, #31", A64{Op: A64VSSHLL, Rd: 19, Rn: 20, Size: 2, Imm: 31}},
	{0x6e177ad5, "ext v21.16b, v22.16b, v23.16b, #15", A64{Op: A64VEXT, Rd: 21, Rn: 22, Rm: 23, Q: 1, Imm: 15}},
	{0x4e1d6338, "tbl v24.16b, {v25.16b-v28.16b}, v29.16b", A64{Op: A64VTBL, Rd: 24, Rn: 25, Rm: 29, Q: 1, Imm: 4}},
	{0x1e202028, "fcmp s1, #0.0", A64{Op: A64FCMP, Rd: 8, Rn: 1, Size: 2, Flags: SIMDZero}},
	{0x1e63a459, "fccmpe d2, d3, #9, ge", A64{Op: A64FCCMP, Rd: 25, Rn: 2, Rm: 3, Size: 3, Cond: 10, Imm: 9, Flags: SIMDSignal}},
	{0x5ef1b820, "addp d0, v1.2d", A64{Op: A64VADDP, Rd: 0, Rn: 1, Rm: 1, Size: 3, Flags: SIMDScalar}},
	{0x7e30d862, "faddp s2, v3.2s", A64{Op: A64VFADDP, Rd: 2, Rn: 3, Rm: 3, Size: 2, Flags: SIMDScalar}},
	{0x5e1f04a4, "mov b4, v5.b[15]", A64{Op: A64VDUPE, Rd: 4, Rn: 5, Size: 0, Imm: 15, Flags: SIMDScalar}},
}

func TestDecodeA64SIMDFields(t *testing.T) {
	for _, tc := range simdDecodeCases {
		var in A64
		var ok bool
		if tc.raw>>25&7 == 7 {
			ok = decodeA64SIMD(tc.raw, &in)
		} else {
			ok = decodeA64SIMDLdSt(tc.raw, &in)
		}
		want := tc.want
		want.Raw = tc.raw
		if !ok || in != want {
			t.Errorf("%08x %s:\n got  %+v (ok %v)\n want %+v", tc.raw, tc.text, in, ok, want)
		}
	}
}

// TestDecodeA64SIMDUndefined: encodings uvm must refuse (
// SM3/SM4, dot product, reserved sizes).
func TestDecodeA64SIMDUndefined(t *testing.T) {
	for _, raw := range []uint32{
		0xce400000,         // sm3ss1 v0.4s, v0.4s, v0.4s, v0.4s (FEAT_SM3)
		0xcec08400,         // sm4e v0.4s, v0.4s (FEAT_SM4)
		0x5e007000,         // SHA three-register opcode 111: unallocated
		0x0ee08420,         // add v0.1d, v1.1d, v0.1d: reserved (size 3, Q 0)
		0x4e809c20,         // usdot v0.4s, v1.16b, v0.16b (FEAT_I8MM)
		0x2e61e820,         // frint32x .1d (Q=0 with D elements): reserved
		0x0c407000 | 1<<21, // LD1 multiple with bit 21 set
	} {
		var in A64
		if decodeA64SIMD(raw, &in) || decodeA64SIMDLdSt(raw, &in) {
			t.Errorf("%08x decoded as %s, want undefined", raw, A64SIMDOpName(in.Op))
		}
		if in.Op != A64Undefined || in.Raw != raw {
			t.Errorf("%08x: failed decode left %+v", raw, in)
		}
	}
}

func TestA64SIMDOpNames(t *testing.T) {
	for op := A64SIMDBase; op < a64SIMDExtEnd; op++ {
		if A64SIMDOpName(op) == "" {
			t.Errorf("op %d has no name", op)
		}
	}
	if len(a64SIMDNames)+len(a64CryptoNames)+len(a64SIMDExtNames) != NumA64SIMDOps {
		t.Errorf("name tables have %d+%d+%d entries for %d ops", len(a64SIMDNames), len(a64CryptoNames), len(a64SIMDExtNames), NumA64SIMDOps)
	}
}

// TestDecodeA64SIMDNoPanic decodes random words of the SIMD groups; every
// accepted record must have an op in range and registers below 32.
func TestDecodeA64SIMDNoPanic(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	for i := 0; i < n; i++ {
		checkSIMDDecode(t, rng.Uint32())
	}
}

func checkSIMDDecode(t *testing.T, raw uint32) {
	var in A64
	for _, f := range []func(uint32, *A64) bool{decodeA64SIMD, decodeA64SIMDLdSt} {
		if !f(raw, &in) {
			continue
		}
		if in.Op < A64SIMDBase || in.Op >= a64SIMDExtEnd || in.Rd > 31 || in.Rn > 31 || in.Rm > 31 || in.Ra > 31 || in.Size > 3 || in.Q > 1 {
			t.Fatalf("%08x: bad record %+v", raw, in)
		}
	}
}

func FuzzDecodeA64SIMD(f *testing.F) {
	for _, tc := range simdDecodeCases {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, raw uint32) {
		checkSIMDDecode(t, raw)
	})
}
