package amd64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// sseStep decodes code and executes its first instruction as the
// interpreter's loop does (execSSEHot for the hot ops, else execSSE).
func sseStep(t *testing.T, c *CPU, code string) sseResult {
	t.Helper()
	in, err := decode.DecodeX86(h(code), tCode)
	if err != nil || in.Op < decode.X86SSEBase {
		t.Fatalf("%s: op %v err %v", code, in.Op, err)
	}
	if isSSEHot(in.Op) {
		return c.execSSEHot(&in)
	}
	return c.execSSE(&in, tCode)
}

func TestSSEAlignmentAndFaults(t *testing.T) {
	c := newTestCPU(t, []byte{0x90}, false)
	c.regs.GPR[7] = tData + 8 // rdi misaligned
	c.regs.XMM[1] = vec{0x1111, 0x2222}
	if r := sseStep(t, c, "660f6f0f"); r != sseGP { // movdqa xmm1,[rdi]
		t.Errorf("movdqa misaligned load: %v, want sseGP", r)
	}
	if r := sseStep(t, c, "660f7f0f"); r != sseGP { // movdqa [rdi],xmm1
		t.Errorf("movdqa misaligned store: %v, want sseGP", r)
	}
	if r := sseStep(t, c, "660ffe0f"); r != sseGP { // paddd xmm1,[rdi]
		t.Errorf("paddd misaligned: %v, want sseGP", r)
	}
	if r := sseStep(t, c, "f30f6f0f"); r != sseOK { // movdqu xmm1,[rdi]
		t.Errorf("movdqu misaligned: %v", r)
	}
	if r := sseStep(t, c, "f20f580f"); r != sseOK { // addsd xmm1,[rdi]: m64, no alignment
		t.Errorf("addsd m64 misaligned: %v", r)
	}
	// A 16-byte store crossing into an unmapped page writes nothing.
	end := uint64(tData + tDataSize)
	c.regs.GPR[7] = end - 8
	c.regs.XMM[1] = vec{0x1122334455667788, 0x99}
	if r := sseStep(t, c, "f30f7f0f"); r != sseFault { // movdqu [rdi],xmm1
		t.Fatalf("page-crossing store: %v, want sseFault", r)
	}
	var b [8]byte
	if err := c.mm.Peek(b[:], end-8); err != nil || b != [8]byte{} {
		t.Errorf("partial store: % x %v", b, err)
	}
	if c.tlb.Fault.Addr < end-8 || c.tlb.Fault.Addr > end {
		t.Errorf("fault address %#x", c.tlb.Fault.Addr)
	}
	// A faulting load leaves the destination unchanged.
	c.regs.XMM[1] = vec{5, 6}
	if r := sseStep(t, c, "f30f6f0f"); r != sseFault || c.regs.XMM[1] != (vec{5, 6}) {
		t.Errorf("faulting load: %v xmm1 %x", r, c.regs.XMM[1])
	}
	// LDMXCSR with reserved bits is #GP.
	c.regs.GPR[7] = tData
	if err := c.mm.Poke([]byte{0x80, 0x1f, 0x01, 0x00}, tData); err != nil {
		t.Fatal(err)
	}
	if r := sseStep(t, c, "0fae17"); r != sseGP || c.regs.MXCSR != MXCSRDefault { // ldmxcsr [rdi]
		t.Errorf("ldmxcsr reserved: %v mxcsr %#x", r, c.regs.MXCSR)
	}
	// An unmasked exception (#XM) leaves the destination unchanged.
	c.regs.MXCSR = MXCSRDefault &^ (fpZE << mxMaskSh)
	c.regs.XMM[0] = vec{0x3FF0000000000000, 0}
	c.regs.XMM[1] = vec{0, 0}
	if r := sseStep(t, c, "f20f5ec1"); r != sseFPE || c.regs.XMM[0][0] != 0x3FF0000000000000 { // divsd xmm0,xmm1
		t.Errorf("unmasked divide by zero: %v xmm0 %#x", r, c.regs.XMM[0][0])
	}
	if c.regs.MXCSR&fpZE == 0 || SIMDFPECode(c.regs.MXCSR) != 3 {
		t.Errorf("mxcsr %#x code %d", c.regs.MXCSR, SIMDFPECode(c.regs.MXCSR))
	}
	_ = vm.PageSize
}

func TestFXSaveRoundTrip(t *testing.T) {
	var r Regs
	r.InitFPU()
	r.MXCSR = 0x3FA5
	r.FCW = 0x27F
	r.FSW = 5 << 11
	r.FTW = 0xA0
	r.ST[5] = F80{Mant: 0xC000000000000000, SignExp: 0x3FFF}
	r.ST[7] = F80{Mant: 0x8000000000000001, SignExp: 0x8001}
	for i := range r.XMM {
		r.XMM[i] = vec{uint64(i) * 0x0101010101010101, ^uint64(i)}
	}
	var b [512]byte
	r.FXSave(&b)
	if b[0] != 0x7F || b[1] != 0x02 || b[4] != 0xA0 || b[24] != 0xA5 || b[28] != 0xFF || b[29] != 0xFF {
		t.Errorf("header % x", b[:32])
	}
	// ST(0) is physical register 5 (TOP = 5).
	if b[32+7] != 0xC0 || b[32+9] != 0x3F {
		t.Errorf("ST(0) % x", b[32:48])
	}
	var q Regs
	if !q.FXRestore(&b) || q != r {
		t.Errorf("round trip differs:\n%+v\n%+v", q, r)
	}
	b[26] = 1 // reserved MXCSR bit 16
	if q.FXRestore(&b) {
		t.Error("reserved MXCSR bits accepted")
	}
}

// TestSSEExecNoPanic executes random byte strings from the SSE and x87
// opcode maps from random register states: execSSE must never panic, and
// an instruction that does not retire must leave the state unchanged.
func TestSSEExecNoPanic(t *testing.T) {
	prefixes := [][]byte{{0x0f}, {0x66, 0x0f}, {0xf2, 0x0f}, {0xf3, 0x0f}, {0x66, 0x0f, 0x38}, {0x66, 0x0f, 0x3a},
		{0xf2, 0x0f, 0x38}, {0xd8}, {0xd9}, {0xda}, {0xdb}, {0xdc}, {0xdd}, {0xde}, {0xdf}, {0x48, 0x0f}, {0x66, 0x48, 0x0f, 0x3a}}
	c := newTestCPU(t, []byte{0x90}, false)
	rng := newXorshift(11)
	executed := 0
	n := 40000
	if testing.Short() {
		n = 5000
	}
	for i := 0; i < n; i++ {
		p := prefixes[rng.next()%uint64(len(prefixes))]
		b := make([]byte, 15)
		copy(b, p)
		for j := len(p); j < 15; j++ {
			b[j] = byte(rng.next())
		}
		in, err := decode.DecodeX86(b, tCode)
		if err != nil || in.Op < decode.X86SSEBase {
			continue
		}
		for r := range c.regs.GPR {
			c.regs.GPR[r] = tData + rng.next()%tDataSize
			if rng.next()%4 == 0 {
				c.regs.GPR[r] = rng.next()
			}
		}
		for r := range c.regs.XMM {
			c.regs.XMM[r] = vec{rng.next(), rng.next()}
		}
		c.regs.MXCSR = MXCSRDefault | uint32(rng.next()&0xE07F)
		c.regs.FCW = uint16(rng.next()&0x0F00) | 0x7F
		c.regs.FTW = uint8(rng.next())
		c.regs.FSW = uint16(rng.next() & 0x3800)
		before := c.regs
		executed++
		if res := c.execSSE(&in, tCode); res != sseOK && c.regs != before {
			t.Fatalf("% x (%s): result %v changed the state", b[:in.Len], decode.DisasmX86(b, tCode), res)
		}
	}
	if executed < n/10 {
		t.Errorf("only %d of %d random instructions were SSE/x87", executed, n)
	}
}

type xorshift uint64

func newXorshift(seed uint64) *xorshift { x := xorshift(seed*0x9E3779B97F4A7C15 | 1); return &x }

func (x *xorshift) next() uint64 {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return uint64(*x)
}
