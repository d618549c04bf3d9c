package vm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func watchTLB(t *testing.T, before bool, pts ...Watchpoint) (*MM, *TLB, *WatchSet) {
	t.Helper()
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x13000, Prot: ProtRead | ProtWrite}))
	tlb := NewTLB(mm)
	// Cache the pages before the set arrives: SetWatch must drop them.
	for a := uint64(0x10000); a < 0x13000; a += PageSize {
		require.True(t, tlb.Store8(a, 1))
		_, ok := tlb.Load8(a)
		require.True(t, ok)
	}
	s, err := NewWatchSet(pts, before)
	require.NoError(t, err)
	tlb.SetWatch(s)
	tlb.Enter()
	t.Cleanup(tlb.Leave)
	return mm, tlb, s
}

// x86-64: a hit completes the access and is recorded; only overlapping
// accesses of the watched kind hit.
func TestWatchAfterAccess(t *testing.T) {
	_, tlb, s := watchTLB(t, false, Watchpoint{Addr: 0x11008, Len: 8, Kind: WatchWrite})
	require.True(t, tlb.Store64(0x11000, 5)) // same page, other bytes
	require.Zero(t, tlb.WatchHit.Kind)
	_, ok := tlb.Load64(0x11008) // a read: not a write watchpoint's
	require.True(t, ok)
	require.Zero(t, tlb.WatchHit.Kind)
	require.True(t, tlb.Store16(0x1100e, 0xbeef)) // overlaps the last two bytes
	require.Equal(t, WatchHit{Kind: WatchWrite, Addr: 0x1100e}, tlb.WatchHit)
	v, _ := tlb.Load16(0x1100e)
	require.Equal(t, uint16(0xbeef), v, "the access completed")
	tlb.WatchHit = WatchHit{}
	require.True(t, tlb.Store64(0x11004, ^uint64(0))) // starts before the range
	require.Equal(t, uint64(0x11008), tlb.WatchHit.Addr)
	tlb.WatchHit = WatchHit{}
	require.True(t, tlb.StoreBytes(0x11010, make([]byte, 0x20)))
	require.Zero(t, tlb.WatchHit.Kind)
	p, ok := tlb.Atomic64(0x11008) // read-modify-write
	require.True(t, ok && p != nil)
	require.Equal(t, WatchWrite, tlb.WatchHit.Kind)
	// Inert once disabled; kernel-side accesses (outside Enter/Leave) never hit.
	s.Disable()
	tlb.WatchHit = WatchHit{}
	require.True(t, tlb.Store64(0x11008, 1))
	require.Zero(t, tlb.WatchHit.Kind)
}

// arm64: a hit fails the access before it happens, as a fault with Watch.
func TestWatchBeforeAccess(t *testing.T) {
	mm, tlb, _ := watchTLB(t, true,
		Watchpoint{Addr: 0x11ffc, Len: 8, Kind: WatchRead},
		Watchpoint{Addr: 0x12100, Len: 1, Kind: WatchAccess})
	require.True(t, tlb.Store64(0x11ff8, 7)) // a store: not a read watchpoint's
	_, ok := tlb.Load32(0x11ff8)             // next to it
	require.True(t, ok)
	_, ok = tlb.Load64(0x11ffe) // crosses into the next page
	require.False(t, ok)
	require.Equal(t, Fault{Addr: 0x11ffe, Access: AccessRead, Mapped: true, Watch: WatchRead}, tlb.Fault)
	require.False(t, tlb.StoreBytes(0x120f0, make([]byte, 0x20)))
	require.Equal(t, WatchAccess, tlb.Fault.Watch)
	require.Equal(t, uint64(0x12100), tlb.Fault.Addr)
	var b [1]byte
	require.NoError(t, mm.Peek(b[:], 0x120f0))
	require.Equal(t, byte(0), b[0], "a failed store writes nothing")
	tlb.Leave()
	require.True(t, tlb.Store8(0x12100, 3), "kernel-side (outside Run) accesses are not checked")
	tlb.Enter()
	tlb.SetWatch(nil)
	require.True(t, tlb.Store8(0x12100, 3))
}

func TestWatchSetLimits(t *testing.T) {
	for _, p := range []Watchpoint{
		{Addr: 0x1000, Len: 0, Kind: WatchWrite},
		{Addr: ^uint64(0) - 2, Len: 8, Kind: WatchWrite},
		{Addr: 0x1000, Len: MaxWatchLen + 1, Kind: WatchRead},
		{Addr: 0x1000, Len: 4, Kind: 0},
	} {
		_, err := NewWatchSet([]Watchpoint{p}, false)
		require.Error(t, err, "%+v", p)
	}
	_, err := NewWatchSet(make([]Watchpoint, MaxWatchpoints+1), false)
	require.Error(t, err)
}
