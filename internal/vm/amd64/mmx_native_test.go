package amd64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// Differential test of MMX and the SSE-on-MMX forms against the host CPU
// with the SSE harness (sse_native_test.go): templates load mm0/mm1 from
// the memory window, and the FNSAVE image the harness takes afterwards
// compares the x87 view (TOS, tag word, the eight aliased registers), so
// the x87 ↔ MMX transitions are checked too.
// mmxInit gives all eight physical x87 registers known contents and
// empties the stack (the harness's FNINIT leaves stale contents, which MMX
// mode makes visible by tagging every register valid).
const mmxInit = "movq mm0, [rsi+32]; movq mm1, [rsi+40]; movq mm2, [rsi+48]; movq mm3, [rsi+56]; " +
	"movq mm4, [rsi+64]; movq mm5, [rsi+72]; movq mm6, [rsi+80]; movq mm7, [rsi+88]; emms; "

var mmxTemplates = []sseTemplate{
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; paddb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; paddw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; paddd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; paddq mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psubb mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psubw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psubd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psubq mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; paddsb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; paddsw mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; paddusb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; paddusw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psubsb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psubsw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psubusb mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psubusw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmullw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmulhw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmulhuw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmuludq mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmaddwd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pavgb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pavgw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmaxub mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmaxsw mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pminub mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pminsw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psadbw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pcmpeqb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pcmpeqw mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pcmpeqd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pcmpgtb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pcmpgtw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pcmpgtd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pand mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pandn mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; por mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pxor mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; punpcklbw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; punpcklwd mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; punpckldq mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; punpckhbw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; punpckhwd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; punpckhdq mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; packsswb mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; packssdw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; packuswb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pshufb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; phaddw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; phaddd mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; phaddsw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; phsubw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; phsubd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; phsubsw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmaddubsw mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmulhrsw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psignb mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psignw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psignd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pabsb mm0, [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pabsw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pabsd mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psllw mm0, 3"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psllw mm0, 17"},
	{kind: skCnt, asm: mmxInit + "movq mm0, [rsi]; movdq2q mm1, xmm1; psllw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pslld mm0, 3"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pslld mm0, 17"},
	{kind: skCnt, asm: mmxInit + "movq mm0, [rsi]; movdq2q mm1, xmm1; pslld mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psllq mm0, 40"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psllq mm0, 63"},
	{kind: skCnt, asm: mmxInit + "movq mm0, [rsi]; movdq2q mm1, xmm1; psllq mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psrlw mm0, 3"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psrlw mm0, 17"},
	{kind: skCnt, asm: mmxInit + "movq mm0, [rsi]; movdq2q mm1, xmm1; psrlw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psrld mm0, 3"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psrld mm0, 17"},
	{kind: skCnt, asm: mmxInit + "movq mm0, [rsi]; movdq2q mm1, xmm1; psrld mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psrlq mm0, 40"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psrlq mm0, 63"},
	{kind: skCnt, asm: mmxInit + "movq mm0, [rsi]; movdq2q mm1, xmm1; psrlq mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psraw mm0, 3"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psraw mm0, 17"},
	{kind: skCnt, asm: mmxInit + "movq mm0, [rsi]; movdq2q mm1, xmm1; psraw mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psrad mm0, 3"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psrad mm0, 17"},
	{kind: skCnt, asm: mmxInit + "movq mm0, [rsi]; movdq2q mm1, xmm1; psrad mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; psllw mm0, qword ptr [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; palignr mm0, mm1, 3"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; palignr mm0, mm1, 12"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; palignr mm0, [rsi+16], 8"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pshufw mm0, mm1, 0x1b"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pshufw mm2, [rsi+16], 0xe4"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pextrw eax, mm1, 2"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pinsrw mm0, eax, 3"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pinsrw mm0, word ptr [rsi+16], 1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; pmovmskb eax, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; maskmovq mm0, mm1"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; movq [rdi], mm1; movd [rdi+8], mm0; movntq [rdi+16], mm0"},
	{kind: skInt, asm: mmxInit + "movd mm0, eax; movq mm1, rbx; movd mm2, [rsi]; movd ecx, mm1; movq rdx, mm0; movq mm3, mm2"},
	{kind: skInt, asm: mmxInit + "movq mm5, [rsi]; movq2dq xmm3, mm5; movdq2q mm6, xmm4"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; emms"},
	{kind: skInt, asm: mmxInit + "fld1; fldpi; movq mm0, [rsi]"},
	{kind: skInt, asm: mmxInit + "fld1; movq mm3, [rsi]; emms; fld qword ptr [rsi+8]; fldpi"},
	{kind: skInt, asm: mmxInit + "movq mm2, [rsi]; fld st(2)"},
	{kind: skInt, asm: mmxInit + "fldz; fld1; fstp st(0); movq mm1, [rsi]; fld qword ptr [rsi+16]"},
	{kind: skInt, asm: mmxInit + "movq mm0, [rsi]; movq mm1, [rsi+8]; fxsave [rdi]; emms; fxrstor [rdi]; paddb mm0, mm1", ignore: [][2]int{{6, 24}, {28, 32}}},
	{kind: skF32, asm: mmxInit + "cvtps2pi mm0, xmm1"},
	{kind: skF32, asm: mmxInit + "cvttps2pi mm0, xmm1"},
	{kind: skF32, asm: mmxInit + "cvtps2pi mm3, [rsi]"},
	{kind: skInt, asm: mmxInit + "movq mm1, [rsi]; cvtpi2ps xmm0, mm1"},
	{kind: skInt, asm: mmxInit + "cvtpi2ps xmm0, [rsi]"},
	{kind: skInt, asm: mmxInit + "movq mm1, [rsi]; cvtpi2pd xmm0, mm1"},
	{kind: skInt, asm: mmxInit + "cvtpi2pd xmm2, [rsi]"},
	{kind: skF64, asm: mmxInit + "cvtpd2pi mm0, xmm1"},
	{kind: skF64, asm: mmxInit + "cvttpd2pi mm0, xmm1"},
	{kind: skF64, asm: mmxInit + "cvttpd2pi mm4, [rsi]"},
}

func TestMMXNativeDifferential(t *testing.T) { sseNativeRun(t, mmxTemplates) }

// mmxBMIMixCode is a block of MMX, SSE-on-MMX and BMI/ADX/MOVBE/LZCNT/
// RDTSCP/RDPID/FSGSBASE instructions (assembled with GNU as) working on
// memory at RDI.
const mmxBMIMixCode = "0f6f070f6f4f080ffcc10ff547100f68c80f63c10f3800c10f3a0fc1030f3801c10f73f0070fe2c80f70d01b" +
	"0fc5c2010fc4d0030fd7caf30fd6c20f2aca0f2dd90f7f5f200f7ec10f77c4e260f2c1c4e270f7c3c4e2f8f3cb" +
	"c4e2f0f5c3c4e2e3f6c1c4e2e3f5c1c4e2e2f5c1c4e3fbf0c303c4e2f1f7c366480f38f6c3f3480f38f6c3480f38f007" +
	"f3480fbdc3f3480fbcc30f01f9f30fc7f8f3480faec0f3480faed8"

// TestMMXBMINoAllocs guards the zero-allocation rule for the MMX and
// scalar-extension ops.
func TestMMXBMINoAllocs(t *testing.T) {
	c := newTestCPU(t, h(mmxBMIMixCode), false)
	run := func() {
		c.SetPC(tCode)
		c.SetSP(tStackTop - 8)
		c.SetReg(7, tData)
		c.SetReg(3, 0x123456789)
		c.SetReg(1, 0x0c05)
		if e := c.Run(1 << 30); e.Reason != vm.ExitBreakpoint {
			t.Fatalf("exit %v at %#x (%s) %s", e.Reason, e.PC, c.Disasm(e.PC), e.Why)
		}
	}
	run()
	if a := testing.AllocsPerRun(50, run); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}

// BenchmarkMMXBMIMix measures the block above.
func BenchmarkMMXBMIMix(b *testing.B) {
	c := newTestCPU(b, h(mmxBMIMixCode), false)
	b.ReportAllocs()
	for b.Loop() {
		c.SetPC(tCode)
		c.SetSP(tStackTop - 8)
		c.SetReg(7, tData)
		if e := c.Run(1 << 30); e.Reason != vm.ExitBreakpoint {
			b.Fatalf("exit %v", e.Reason)
		}
	}
}
