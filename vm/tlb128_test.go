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
