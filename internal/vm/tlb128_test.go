package vm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoad128 checks Load128 against two Load64s at every offset near the
// page boundaries of a two-page mapping (one probe on a page, the slow
// path across pages and into the unmapped page after), with a cold and a
// warm TLB.
func TestLoad128(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x12000, Prot: ProtRead | ProtWrite}))
	var img [0x2000]byte
	for i := range img {
		img[i] = byte(i*7 + i>>8)
	}
	require.NoError(t, mm.WriteAt(img[:], 0x10000))
	for _, base := range []uint64{0x10000, 0x10fe0, 0x11fe0} {
		for off := uint64(0); off < 0x30; off++ {
			addr := base + off
			for _, warm := range []bool{false, true} {
				tlb, ref := NewTLB(mm), NewTLB(mm)
				if warm {
					tlb.Load8(addr)
				}
				lo, hi, ok := tlb.Load128(addr)
				wlo, want := ref.Load64(addr)
				var whi uint64
				if want {
					whi, want = ref.Load64(addr + 8)
				}
				require.Equal(t, want, ok, "addr %#x", addr)
				if !ok {
					require.Equal(t, ref.Fault, tlb.Fault, "addr %#x", addr)
					continue
				}
				require.Equal(t, [2]uint64{wlo, whi}, [2]uint64{lo, hi}, "addr %#x", addr)
			}
		}
	}
}

// TestStore128 checks Store128 against StoreBytes of the same 16 bytes at
// every offset near the page boundaries of a writable page followed by a
// read-only one (one probe on a page, the slow path across pages, and a
// fault that writes nothing), with a cold and a warm TLB.
func TestStore128(t *testing.T) {
	for _, base := range []uint64{0x10000, 0x10fe0, 0x11fe0} {
		for off := uint64(0); off < 0x30; off++ {
			addr := base + off
			for _, warm := range []bool{false, true} {
				var mms [2]*MM
				for i := range mms {
					mms[i] = NewMM()
					require.NoError(t, mms[i].Map(VMA{Start: 0x10000, End: 0x12000, Prot: ProtRead | ProtWrite}))
					require.NoError(t, mms[i].Map(VMA{Start: 0x12000, End: 0x13000, Prot: ProtRead}))
				}
				tlb, ref := NewTLB(mms[0]), NewTLB(mms[1])
				if warm {
					tlb.Store8(addr, 0)
					ref.Store8(addr, 0)
				}
				lo, hi := 0x0706050403020100+addr, 0x0f0e0d0c0b0a0908^addr
				var b [16]byte
				for i := 0; i < 8; i++ {
					b[i], b[8+i] = byte(lo>>(8*i)), byte(hi>>(8*i))
				}
				ok, want := tlb.Store128(addr, lo, hi), ref.StoreBytes(addr, b[:])
				require.Equal(t, want, ok, "addr %#x", addr)
				if !ok {
					require.Equal(t, ref.Fault, tlb.Fault, "addr %#x", addr)
				}
				var got, exp [0x3000]byte
				require.NoError(t, mms[0].Peek(got[:], 0x10000))
				require.NoError(t, mms[1].Peek(exp[:], 0x10000))
				require.Equal(t, exp, got, "addr %#x", addr)
			}
		}
	}
}
