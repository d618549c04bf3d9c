package vm

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMapReadWriteProtect(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x13000, Prot: ProtRead | ProtWrite}))
	require.NoError(t, mm.WriteAt([]byte("hello, pages"), 0x10ffa)) // crosses a page
	b := make([]byte, 12)
	require.NoError(t, mm.ReadAt(b, 0x10ffa))
	require.Equal(t, "hello, pages", string(b))

	require.NoError(t, mm.Protect(0x11000, 0x12000, ProtRead))
	err := mm.WriteAt([]byte{1}, 0x11000)
	var f *Fault
	require.ErrorAs(t, err, &f)
	require.True(t, f.Mapped, "write to read-only page is SEGV_ACCERR")
	require.True(t, errors.Is(err, ErrFault))
	require.Len(t, mm.VMAs(), 3, "protect splits the area")

	require.NoError(t, mm.Protect(0x11000, 0x12000, ProtRead|ProtWrite))
	require.Len(t, mm.VMAs(), 1, "equal neighbours merge again")

	mm.Unmap(0x11000, 0x12000)
	err = mm.ReadAt(b[:1], 0x11000)
	require.ErrorAs(t, err, &f)
	require.False(t, f.Mapped, "unmapped is SEGV_MAPERR")
	require.Error(t, mm.Protect(0x10000, 0x13000, ProtRead), "protect over a hole is ENOMEM")
}

func TestDemandZeroAndDiscard(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x40000000, End: 0x80000000, Prot: ProtRead | ProtWrite}))
	require.NoError(t, mm.WriteAt([]byte{7}, 0x7fffffff))
	mm.Discard(0x7ffff000, 0x80000000)
	var b [1]byte
	require.NoError(t, mm.ReadAt(b[:], 0x7fffffff))
	require.Equal(t, byte(0), b[0])
}

func TestTLBInvalidation(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x11000, Prot: ProtRead | ProtWrite}))
	tlb := NewTLB(mm)
	require.True(t, tlb.Store64(0x10008, 42))
	v, ok := tlb.Load64(0x10008)
	require.True(t, ok)
	require.Equal(t, uint64(42), v)
	mm.Unmap(0x10000, 0x11000)
	tlb.Sync()
	_, ok = tlb.Load64(0x10008)
	require.False(t, ok)
	require.Equal(t, uint64(0x10008), tlb.Fault.Addr)
}

func TestCodeVersionBumpsOnStore(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x11000, Prot: ProtRead | ProtWrite | ProtExec}))
	tlb := NewTLB(mm)
	require.True(t, tlb.Store32(0x10000, 1)) // caches a write entry
	p, f := mm.CodePage(0x10000)
	require.Nil(t, f)
	v := p.CodeVersion.Load()
	tlb.Sync() // the interpreter syncs after filling its code cache
	require.True(t, tlb.Store32(0x10004, 2))
	require.NotEqual(t, v, p.CodeVersion.Load(), "store to a decoded page must bump its version")
}

func TestFindFreeTopDown(t *testing.T) {
	mm := NewMM()
	a, err := mm.FindFree(0, 0x3000)
	require.NoError(t, err)
	require.Equal(t, mm.MmapBase-0x3000, a)
	require.NoError(t, mm.Map(VMA{Start: a, End: a + 0x3000, Prot: ProtRead}))
	b, err := mm.FindFree(0, 0x1000)
	require.NoError(t, err)
	require.Equal(t, a-0x1000, b)
}

func TestMoveKeepsContents(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x12000, Prot: ProtRead | ProtWrite}))
	require.NoError(t, mm.WriteAt([]byte("data"), 0x11000))
	require.NoError(t, mm.Move(0x10000, 0x2000, 0x50000, 0x4000))
	b := make([]byte, 4)
	require.NoError(t, mm.ReadAt(b, 0x51000))
	require.Equal(t, "data", string(b))
	require.Error(t, mm.ReadAt(b, 0x11000))
}

func TestLoadELFErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrNotELF},
		{"script", []byte("#!/bin/sh\n"), ErrNotELF},
		{"header only", []byte("\x7fELF\x02\x01\x01"), ErrBadELF},
	} {
		_, err := LoadELF(NewMM(), c.name, c.data)
		require.ErrorIs(t, err, c.want, c.name)
	}
}

func TestLoadELFStatic(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		for _, name := range []string{"hello", "hello-pie"} {
			data, err := os.ReadFile("../../testdata/bin/" + arch + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			mm := NewMM()
			img, err := LoadELF(mm, name, data)
			require.NoError(t, err)
			require.Equal(t, arch, img.Arch.String())
			if name == "hello-pie" {
				require.Equal(t, uint64(StaticPIEBase), img.Base)
			}
			var magic [4]byte
			require.NoError(t, mm.Peek(magic[:], img.Phdr-64+0)) // ELF header precedes phdrs
			sp, err := SetupStack(mm, img, &StackSpec{Argv: []string{"a", "b"}, Envp: []string{"X=1"}, Platform: "p"})
			require.NoError(t, err)
			require.Zero(t, sp%16)
			var argc [8]byte
			require.NoError(t, mm.ReadAt(argc[:], sp))
			require.Equal(t, byte(2), argc[0])
		}
	}
}

// FuzzLoadELF: any bytes give an image or an error, never a panic.
func FuzzLoadELF(f *testing.F) {
	for _, p := range []string{"../../testdata/bin/amd64/hello", "../../testdata/bin/arm64/hello"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b[:min(len(b), 4096)])
		}
	}
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = LoadELF(NewMM(), "fuzz", data)
	})
}
