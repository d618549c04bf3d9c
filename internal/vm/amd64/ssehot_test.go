package amd64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
)

// TestSSEHotMatchesExecSSE runs every form of every op execSSEHot handles
// (register, aligned and misaligned memory source, memory destination,
// page-crossing accesses inside and at the end of the data mapping) from random
// states through execSSEHot and execSSE and requires the same result,
// registers and memory.
func TestSSEHotMatchesExecSSE(t *testing.T) {
	// ModRM 0xca: xmm1, xmm2 (or ecx/rcx, xmm1 for the GPR forms);
	// 0x0f: xmm1, [rdi].
	codes := []string{
		"660f6fca", "660f6f0f", "660f7f0f", "f30f6f0f", "f30f7f0f", "0f10ca", "0f100f", "0f290f", "0f280f",
		"660f6ec8", "660f6e0f", "660f7ec8", "660f7e0f", "66480f6ec8", "66480f7ec8", "f30f7eca", "f30f7e0f", "660fd60f",
		"660fdbca", "660fdb0f", "660fdfca", "660fdf0f", "0f55ca", "0f550f", "660febca", "660feb0f", "660fefca", "660fef0f",
		"660ffdca", "660ffd0f", "660ffeca", "660ffe0f", "660fd4ca", "660fd40f",
		"660ff9ca", "660ff90f", "660ffaca", "660ffa0f", "660ffbca", "660ffb0f",
		"660fd5ca", "660fd50f", "660fe5ca", "660fe50f",
		"660f61ca", "660f610f", "660f69ca", "660f690f", "660f62ca", "660f620f", "660f6aca", "660f6a0f",
		"0f14ca", "0f140f", "0f15ca", "0f150f", "660f6cca", "660f6c0f", "660f6dca", "660f6d0f",
		"660f70ca1b", "660f700f4e", "660f70cae4",
	}
	covered := map[decode.X86Op]bool{}
	rng := newXorshift(19)
	hot := newTestCPU(t, []byte{0x90}, false)
	ref := newTestCPU(t, []byte{0x90}, false)
	for _, code := range codes {
		in, err := decode.DecodeX86(h(code), tCode)
		if err != nil || !isSSEHot(in.Op) {
			t.Fatalf("%s (%s): op %v err %v is not a hot SSE op", code, decode.DisasmX86(h(code), tCode), in.Op, err)
		}
		covered[in.Op] = true
		for i := range 64 {
			var st Regs
			for r := range st.GPR {
				st.GPR[r] = rng.next()
			}
			for r := range st.XMM {
				st.XMM[r] = vec{rng.next(), rng.next()}
			}
			st.MXCSR = MXCSRDefault
			switch i % 4 {
			case 0: // aligned
				st.GPR[7] = tData + rng.next()%48&^15
			case 1: // misaligned
				st.GPR[7] = tData + rng.next()%48
			case 2: // crossing a page boundary, or the end of the mapping
				if i%8 == 2 {
					st.GPR[7] = tData + 4096 - 1 - rng.next()%15
					break
				}
				st.GPR[7] = tData + tDataSize - 1 - rng.next()%15
			default: // unmapped
				st.GPR[7] = rng.next()
			}
			var mem [64]byte
			for j := range mem {
				mem[j] = byte(rng.next())
			}
			for _, c := range []*CPU{hot, ref} {
				c.regs = st
				if err := c.mm.Poke(mem[:], tData+tDataSize-64); err != nil {
					t.Fatal(err)
				}
				if err := c.mm.Poke(mem[:], tData); err != nil {
					t.Fatal(err)
				}
				if err := c.mm.Poke(mem[:], tData+4096-32); err != nil {
					t.Fatal(err)
				}
			}
			rh := hot.execSSEHot(&in)
			rr := ref.execSSE(&in, tCode)
			if rh != rr || hot.regs != ref.regs {
				t.Fatalf("%s (%s) rdi %#x: hot %v %x, execSSE %v %x", code, decode.DisasmX86(h(code), tCode),
					st.GPR[7], rh, hot.regs.XMM[1], rr, ref.regs.XMM[1])
			}
			if rh == sseFault && hot.tlb.Fault != ref.tlb.Fault {
				t.Fatalf("%s: fault %+v, execSSE %+v", code, hot.tlb.Fault, ref.tlb.Fault)
			}
			for _, at := range []uint64{tData, tData + 4096 - 32, tData + tDataSize - 64} {
				var a, b [64]byte
				if hot.mm.Peek(a[:], at) != nil || ref.mm.Peek(b[:], at) != nil || a != b {
					t.Fatalf("%s (%s) rdi %#x: memory at %#x differs", code, decode.DisasmX86(h(code), tCode), st.GPR[7], at)
				}
			}
		}
	}
	for i, on := range sseHot {
		if op := decode.X86Op(i) + decode.X86SSEBase; on && !covered[op] {
			t.Errorf("hot op %v has no case here", op)
		}
	}
}
