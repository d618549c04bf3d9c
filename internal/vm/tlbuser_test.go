package vm

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTLBUserAccess: ReadUser and WriteUser (uprobes' copy_from_user /
// copy_to_user fast path) copy only through translations the TLB holds
// for the current generation, never across a page, and leave the TLB
// outside guest execution; every other case reports false and touches
// nothing, for the caller's MM path.
func TestTLBUserAccess(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x12000, Prot: ProtRead | ProtWrite}))
	tlb := NewTLB(mm)
	var b [8]byte

	// Cold TLB: nothing cached, so both report false.
	require.False(t, tlb.ReadUser(b[:], 0x10100))
	require.False(t, tlb.WriteUser(b[:], 0x10100))

	// The guest's own store caches both sides of the page.
	require.True(t, tlb.Store64(0x10100, 0x1122334455667788))
	require.True(t, tlb.ReadUser(b[:], 0x10100))
	require.Equal(t, [8]byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, b)
	require.True(t, tlb.WriteUser([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 0x10100))
	v, ok := tlb.Load64(0x10100)
	require.True(t, ok)
	require.Equal(t, uint64(0x0807060504030201), v)
	require.Zero(t, atomic.LoadUint64(&tlb.active), "left the TLB announced as executing")

	// A range running off the cached page is refused, even though the
	// next page is mapped (MM's path splits it).
	require.False(t, tlb.ReadUser(b[:], 0x10ffc))
	require.False(t, tlb.WriteUser(b[:], 0x10ffc))
	require.False(t, tlb.ReadUser(nil, 0x10100))

	// mprotect read-only: the generation moves, the write entry goes.
	require.NoError(t, mm.Protect(0x10000, 0x11000, ProtRead))
	require.False(t, tlb.WriteUser(b[:], 0x10100))
	require.True(t, tlb.Load8Ok(0x10100))
	require.True(t, tlb.ReadUser(b[:], 0x10100))
	require.False(t, tlb.WriteUser(b[:], 0x10100), "wrote a read-only page")

	// Fork makes the page copy-on-write: the parent's cached write
	// translation must not be used, or the child would see the store.
	require.NoError(t, mm.Protect(0x10000, 0x11000, ProtRead|ProtWrite))
	require.True(t, tlb.Store64(0x10100, 42))
	child, err := mm.Fork()
	require.NoError(t, err)
	require.False(t, tlb.WriteUser([]byte{9, 9, 9, 9, 9, 9, 9, 9}, 0x10100))
	require.NoError(t, child.ReadAt(b[:], 0x10100))
	require.Equal(t, [8]byte{42}, b)

	// Unmapped: the read entry goes with the mapping.
	require.True(t, tlb.Load8Ok(0x11000))
	mm.Unmap(0x11000, 0x12000)
	require.False(t, tlb.ReadUser(b[:], 0x11000))
}

// Load8Ok is Load8's ok, for the test above.
func (t *TLB) Load8Ok(addr uint64) bool { _, ok := t.Load8(addr); return ok }

// TestTLBUserWords: ReadUserWords, WriteUserWords and SwapUserWord hit
// and miss exactly where ReadUser and WriteUser of the same bytes do,
// little-endian, and leave the TLB outside guest execution.
func TestTLBUserWords(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x12000, Prot: ProtRead | ProtWrite}))
	tlb := NewTLB(mm)
	w := make([]uint64, 3)

	require.False(t, tlb.ReadUserWords(w, 0x10100))
	require.False(t, tlb.WriteUserWords(w, 0x10100))
	_, read, written := tlb.SwapUserWord(0x10100, 7)
	require.False(t, read)
	require.False(t, written)

	require.True(t, tlb.Store64(0x10100, 0x1122334455667788))
	require.True(t, tlb.WriteUserWords([]uint64{1, 2, 3}, 0x10104)) // unaligned
	require.True(t, tlb.ReadUserWords(w, 0x10104))
	require.Equal(t, []uint64{1, 2, 3}, w)
	var b [4]byte
	require.True(t, tlb.ReadUser(b[:], 0x10100))
	require.Equal(t, [4]byte{0x88, 0x77, 0x66, 0x55}, b)

	old, read, written := tlb.SwapUserWord(0x10104, 9)
	require.Equal(t, []any{uint64(1), true, true}, []any{old, read, written})
	old, read, written = tlb.SwapUserWord(0x10104, 9) // already there
	require.Equal(t, []any{uint64(9), true, true}, []any{old, read, written})
	require.Zero(t, atomic.LoadUint64(&tlb.active), "left the TLB announced as executing")

	// Off the page, or none: refused.
	require.False(t, tlb.ReadUserWords(w, 0x10ff0))
	require.False(t, tlb.WriteUserWords(w, 0x10ff0))
	require.False(t, tlb.ReadUserWords(nil, 0x10100))
	_, read, _ = tlb.SwapUserWord(0x10ffc, 1)
	require.False(t, read)

	// Read-only: reads hit, writes and the swap's write miss (nothing
	// written).
	require.NoError(t, mm.Protect(0x10000, 0x11000, ProtRead))
	require.False(t, tlb.WriteUserWords(w[:1], 0x10104)) // resyncs: the write entry goes
	require.True(t, tlb.Load8Ok(0x10100))
	require.True(t, tlb.ReadUserWords(w[:1], 0x10104))
	require.False(t, tlb.WriteUserWords(w[:1], 0x10104))
	old, read, written = tlb.SwapUserWord(0x10104, 5)
	require.Equal(t, []any{uint64(9), true, false}, []any{old, read, written})
	require.True(t, tlb.ReadUserWords(w[:1], 0x10104))
	require.Equal(t, uint64(9), w[0])
}
