package vm

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// memFile is a FileBacking over a byte slice.
type memFile struct {
	mu   sync.Mutex
	data []byte
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if need := off + int64(len(p)); need > int64(len(f.data)) {
		f.data = append(f.data, make([]byte, need-int64(len(f.data)))...)
	}
	return copy(f.data[off:], p), nil
}

func (f *memFile) Size() (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(len(f.data)), nil
}

// Range operations over huge, mostly empty ranges skip absent page-table
// levels: munmap/mprotect/madvise/fork of 16 TiB of nothing cost nothing,
// and mremap of a 4 TiB reservation carries only the touched pages.
func TestHugeEmptyRanges(t *testing.T) {
	mm := NewMM()
	const base, size = 0x100000000, 16 << 40
	require.NoError(t, mm.Map(VMA{Start: base, End: base + size, Prot: ProtRead | ProtWrite}))
	require.NoError(t, mm.WriteAt([]byte("first"), base))
	require.NoError(t, mm.WriteAt([]byte("last"), base+size-PageSize))
	require.NoError(t, mm.Protect(base, base+size, ProtRead))
	mm.Discard(base+PageSize, base+size-PageSize)
	c, err := mm.Fork()
	require.NoError(t, err)
	b := make([]byte, 4)
	require.NoError(t, c.ReadAt(b, base+size-PageSize))
	require.Equal(t, "last", string(b))
	require.NoError(t, mm.Protect(base, base+size, ProtRead|ProtWrite))

	// mremap of the reservation: pages move by reference.
	dst, err := mm.MoveAnywhere(base, 4<<40, 4<<40+PageSize)
	require.NoError(t, err)
	require.NoError(t, mm.ReadAt(b, dst))
	require.Equal(t, "firs", string(b))
	mm.Unmap(0, TaskSize)
	require.Empty(t, mm.VMAs())
}

// A store whose byte range runs past the top of user space or wraps past
// 2^64 faults and writes nothing (it used to reach a nil page).
func TestStoreBytesWrap(t *testing.T) {
	mm := NewMM()
	top := TaskSize - PageSize
	require.NoError(t, mm.Map(VMA{Start: top, End: TaskSize, Prot: ProtRead | ProtWrite}))
	tlb := NewTLB(mm)
	data := bytes.Repeat([]byte{0xaa}, 16)
	for _, addr := range []uint64{^uint64(0) - 7, ^uint64(0), TaskSize - 8, 1<<64 - PageSize + 8} {
		require.False(t, tlb.StoreBytes(addr, data), "addr %#x", addr)
	}
	got := make([]byte, 8)
	require.NoError(t, mm.ReadAt(got, TaskSize-8))
	require.Equal(t, make([]byte, 8), got, "a faulting store writes nothing")
	require.True(t, tlb.StoreBytes(TaskSize-16, data))
	require.False(t, tlb.Store64(TaskSize-4, 1))
	_, ok := tlb.Load64(TaskSize - 4)
	require.False(t, ok)
	require.False(t, tlb.LoadBytes(^uint64(0)-3, got))
}

// Concurrent mmaps never get overlapping ranges: find and map are one step
// (issue: ten threads creating malloc arenas got each other's memory).
func TestConcurrentMapAnywhere(t *testing.T) {
	iters := 200
	if testing.Short() {
		iters = 50
	}
	for it := 0; it < iters; it++ {
		mm := NewMM()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(it), uint64(g)))
				var mine [][2]uint64
				for m := 0; m < 20; m++ {
					n := uint64(1+r.IntN(16)) * PageSize
					a, err := mm.MapAnywhere(0, VMA{End: n, Prot: ProtRead | ProtWrite})
					if err != nil {
						errs <- err
						return
					}
					tag := []byte{byte(g + 1)}
					for p := a; p < a+n; p += PageSize {
						if err := mm.WriteAt(tag, p); err != nil {
							errs <- err
							return
						}
					}
					mine = append(mine, [2]uint64{a, n})
					if r.IntN(3) == 0 {
						k := r.IntN(len(mine))
						mm.Unmap(mine[k][0], mine[k][0]+mine[k][1])
						mine = append(mine[:k], mine[k+1:]...)
					}
				}
				for _, rg := range mine {
					for p := rg[0]; p < rg[0]+rg[1]; p += PageSize {
						var b [1]byte
						if err := mm.ReadAt(b[:], p); err != nil || b[0] != byte(g+1) {
							errs <- errors.New("a live range was handed to another thread")
							return
						}
					}
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		vs := mm.VMAs()
		for i := 1; i < len(vs); i++ {
			require.LessOrEqual(t, vs[i-1].End, vs[i].Start)
		}
	}
}

func TestMapNoReplace(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.MapNoReplace(VMA{Start: 0x10000, End: 0x20000, Prot: ProtRead}))
	require.ErrorIs(t, mm.MapNoReplace(VMA{Start: 0x1f000, End: 0x21000, Prot: ProtRead}), ErrExist)
	require.NoError(t, mm.MapNoReplace(VMA{Start: 0x20000, End: 0x21000, Prot: ProtRead}))
}

// Private file mappings are filled on first touch: a mapping far bigger
// than the file costs nothing, pages past EOF are SIGBUS, MADV_DONTNEED
// brings the file's bytes back, and private writes never reach the file.
func TestPrivateFileMapping(t *testing.T) {
	f := &memFile{data: bytes.Repeat([]byte("0123456789abcdef"), 512)} // 8 KiB
	f.data = append(f.data, []byte("tail")...)
	mm := NewMM()
	const base = 0x40000000
	require.NoError(t, mm.Map(VMA{Start: base, End: base + 1<<40, Prot: ProtRead | ProtWrite, File: f, Name: "/f"}))
	b := make([]byte, 16)
	require.NoError(t, mm.ReadAt(b, base+PageSize))
	require.Equal(t, "0123456789abcdef", string(b))
	require.NoError(t, mm.ReadAt(b[:8], base+2*PageSize))
	require.Equal(t, "tail\x00\x00\x00\x00", string(b[:8]), "the last page is zero past EOF")
	err := mm.ReadAt(b, base+3*PageSize)
	var flt *Fault
	require.ErrorAs(t, err, &flt)
	require.True(t, flt.Bus, "a page wholly past EOF is SIGBUS")

	require.NoError(t, mm.WriteAt([]byte("XX"), base))
	require.Equal(t, "01", string(f.data[:2]), "private writes stay private")
	mm.Discard(base, base+PageSize)
	require.NoError(t, mm.ReadAt(b[:2], base))
	require.Equal(t, "01", string(b[:2]), "MADV_DONTNEED re-reads the file")
}

// MAP_SHARED memory is one object: a fork child shares pages nobody had
// touched at fork time, and shared file mappings write back on msync,
// munmap and release, never past EOF.
func TestSharedMappings(t *testing.T) {
	mm := NewMM()
	const base = 0x40000000
	require.NoError(t, mm.Map(VMA{Start: base, End: base + 4*PageSize, Prot: ProtRead | ProtWrite, Shared: true, Obj: NewSharedObject(nil)}))
	c, err := mm.Fork()
	require.NoError(t, err)
	require.NoError(t, c.WriteAt([]byte("child"), base+PageSize))
	b := make([]byte, 5)
	require.NoError(t, mm.ReadAt(b, base+PageSize))
	require.Equal(t, "child", string(b))
	mm.Discard(base, base+4*PageSize)
	require.NoError(t, mm.ReadAt(b, base+PageSize))
	require.Equal(t, "child", string(b), "MADV_DONTNEED keeps shared memory")
	require.NoError(t, mm.Remove(base, base+4*PageSize))
	require.NoError(t, c.ReadAt(b, base+PageSize))
	require.Equal(t, make([]byte, 5), b, "MADV_REMOVE frees the shared pages for every mapping")

	f := &memFile{data: []byte("hello, file")}
	fm := NewMM()
	require.NoError(t, fm.Map(VMA{Start: base, End: base + 2*PageSize, Prot: ProtRead | ProtWrite, Shared: true, Obj: NewSharedObject(f), Name: "/f"}))
	require.NoError(t, fm.WriteAt([]byte("HELLO"), base))
	require.Equal(t, "hello, file", string(f.data))
	require.NoError(t, fm.Sync(base, base+2*PageSize))
	require.Equal(t, "HELLO, file", string(f.data), "msync writes back, not past EOF")
	require.NoError(t, fm.WriteAt([]byte("J"), base))
	fm.Unmap(base, base+2*PageSize)
	require.Equal(t, "JELLO, file", string(f.data), "munmap writes back")
	require.ErrorIs(t, fm.Sync(base, base+PageSize), ErrNoMem)
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x11000, Prot: ProtRead}))
	require.Error(t, mm.Remove(0x10000, 0x11000), "MADV_REMOVE of private memory is EINVAL")
}

func TestCheckRange(t *testing.T) {
	for _, c := range []struct {
		addr, n uint64
		ok      bool
	}{
		{0x10000, 1, true},
		{0x10001, 1, false},
		{0x10000, ^uint64(0), false},
		{TaskSize - PageSize, PageSize, true},
		{TaskSize - PageSize, PageSize + 1, false},
		{1<<64 - PageSize, PageSize, false},
	} {
		_, ok := CheckRange(c.addr, c.n)
		require.Equal(t, c.ok, ok, "%#x+%#x", c.addr, c.n)
	}
}
