package signals

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStackTMarshal(t *testing.T) {
	s := StackT{SP: 0x1000, Flags: SS_ONSTACK | SS_AUTODISARM, Size: 0x2000}
	b := s.Marshal()
	assert.Equal(t, uint64(0x1000), u64(b[:], 0))
	assert.Equal(t, uint32(0x80000001), u32(b[:], 8))
	assert.Equal(t, uint32(0), u32(b[:], 12))
	assert.Equal(t, uint64(0x2000), u64(b[:], 16))
	got, ok := UnmarshalStackT(b[:])
	require.True(t, ok)
	assert.Equal(t, s, got)
	_, ok = UnmarshalStackT(b[:23])
	assert.False(t, ok)
}

func TestStackOnStack(t *testing.T) {
	alt := StackT{SP: 0x10000, Size: 0x4000}
	assert.False(t, alt.OnStack(0x10000), "base is not on the stack")
	assert.True(t, alt.OnStack(0x10001))
	assert.True(t, alt.OnStack(0x14000), "top is on the stack")
	assert.False(t, alt.OnStack(0x14001))
	assert.Equal(t, int32(SS_ONSTACK), alt.SSFlags(0x12000))
	assert.Equal(t, int32(0), alt.SSFlags(0x20000))
	assert.Equal(t, int32(SS_DISABLE), DisabledStack.SSFlags(0x12000))

	auto := alt
	auto.Flags = SS_AUTODISARM
	assert.False(t, auto.OnStack(0x12000), "SS_AUTODISARM: never nested")
	assert.Equal(t, StackT{SP: 0x10000, Size: 0x4000, Flags: SS_AUTODISARM}, auto.Get(0x12000))
	assert.Equal(t, StackT{SP: 0x10000, Size: 0x4000, Flags: SS_ONSTACK}, alt.Get(0x12000))
	assert.Equal(t, StackT{Flags: SS_DISABLE}, DisabledStack.Get(0))
}

func TestStackSet(t *testing.T) {
	s := DisabledStack
	assert.ErrorIs(t, s.Set(StackT{SP: 0x1000, Size: 100}, 0x9000, MINSIGSTKSZ_AMD64), ErrStackSize)
	assert.ErrorIs(t, s.Set(StackT{SP: 0x1000, Size: 0x1000, Flags: 4}, 0x9000, MINSIGSTKSZ_AMD64), ErrStackFlags)
	require.NoError(t, s.Set(StackT{SP: 0x10000, Size: 0x4000, Flags: SS_ONSTACK}, 0x9000, MINSIGSTKSZ_AMD64))
	assert.Equal(t, StackT{SP: 0x10000, Size: 0x4000, Flags: SS_ONSTACK}, s, "flags stored as given")
	assert.ErrorIs(t, s.Set(DisabledStack, 0x12000, MINSIGSTKSZ_AMD64), ErrOnAltStack)
	require.NoError(t, s.Set(StackT{SP: 0x5555, Flags: SS_DISABLE, Size: 7}, 0x9000, MINSIGSTKSZ_AMD64))
	assert.Equal(t, DisabledStack, s)
	require.NoError(t, s.Set(StackT{SP: 0x10000, Size: 0x4000, Flags: SS_AUTODISARM}, 0x9000, MINSIGSTKSZ_ARM64))
	s.Disarm()
	assert.Equal(t, DisabledStack, s)
	s = StackT{SP: 0x10000, Size: 0x4000}
	s.Disarm()
	assert.Equal(t, StackT{SP: 0x10000, Size: 0x4000}, s)
}

func TestChooseStack(t *testing.T) {
	alt := StackT{SP: 0x10000, Size: 0x4000}
	onstack := SigAction{Handler: 5, Flags: SA_ONSTACK}
	sp, on := ChooseStack(0x80000, onstack, alt)
	assert.Equal(t, uint64(0x14000), sp)
	assert.True(t, on)
	sp, on = ChooseStack(0x80000, SigAction{Handler: 5}, alt)
	assert.Equal(t, uint64(0x80000), sp)
	assert.False(t, on)
	sp, on = ChooseStack(0x12345, onstack, alt) // already on it: nest
	assert.Equal(t, uint64(0x12345), sp)
	assert.True(t, on)
	sp, on = ChooseStack(0x80000, onstack, DisabledStack)
	assert.Equal(t, uint64(0x80000), sp)
	assert.False(t, on)
}
