package tasks

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path"
	"syscall"

	"github.com/uvm-emu/uvm/internal/vm"
)

// mmap flags (identical on arm64 and x86-64).
const (
	mapShared         = 0x01
	mapPrivate        = 0x02
	mapFixed          = 0x10
	mapAnonymous      = 0x20
	mapNoreserve      = 0x4000
	mapFixedNoreplace = 0x100000
)

func protOf(p uint64) vm.Prot { return vm.Prot(p & 7) }

func (t *Task) sysMmap(addr, length, prot, flags uint64, fd int32, off uint64) uint64 {
	mm := t.tg.mm
	if length == 0 || off&vm.PageMask != 0 {
		return errRet(EINVAL)
	}
	if flags&(mapShared|mapPrivate) == 0 {
		return errRet(EINVAL)
	}
	if length > vm.TaskSize {
		return errRet(ENOMEM)
	}
	length = vm.PageAlign(length)
	if off+length < off {
		return errRet(EOVERFLOW)
	}
	v := vm.VMA{Prot: protOf(prot), Shared: flags&mapShared != 0}
	if flags&mapAnonymous == 0 {
		f, ok := t.tg.fds.get(fd)
		if !ok {
			return errRet(EBADF)
		}
		if e := t.fileMapping(f, &v, off, prot, flags); e != 0 {
			return errRet(e)
		}
	}
	if v.Shared && v.Obj == nil {
		v.Obj = vm.NewSharedObject(nil) // shmem: shared with fork children, touched or not
	}
	if !t.checkAS(length) {
		return errRet(ENOMEM)
	}
	// Heuristic overcommit: one private writable mapping bigger than all
	// the memory there is fails at once (MAP_NORESERVE opts out).
	if lim := t.tg.k.acct.Limit; lim > 0 && !v.Shared && v.Prot&vm.ProtWrite != 0 && flags&mapNoreserve == 0 && int64(length/vm.PageSize) > lim {
		return errRet(ENOMEM)
	}
	if flags&(mapFixed|mapFixedNoreplace) != 0 {
		if addr&vm.PageMask != 0 {
			return errRet(EINVAL)
		}
		end, ok := vm.CheckRange(addr, length)
		if !ok {
			return errRet(ENOMEM)
		}
		v.Start, v.End = addr, end
	}
	switch {
	case flags&mapFixedNoreplace != 0:
		if err := mm.MapNoReplace(v); err != nil {
			if errors.Is(err, vm.ErrExist) {
				return errRet(EEXIST)
			}
			return errRet(ENOMEM)
		}
	case flags&mapFixed != 0:
		t.tg.uprobeMunmap(v.Start, v.End)
		if err := mm.Map(v); err != nil {
			return errRet(ENOMEM)
		}
	default:
		v.End = length
		a, err := mm.MapAnywhere(addr&^vm.PageMask, v)
		if err != nil {
			return errRet(ENOMEM)
		}
		v.Start, v.End = a, a+length
	}
	if v.File != nil || v.Obj != nil && v.Obj.File != nil {
		t.tg.uprobeMmap(v, t)
	}
	return v.Start
}

// fileMapping fills in the file side of a mapping of f (do_mmap's file
// checks): regular files are mapped lazily (pages read on first touch),
// /dev/zero is anonymous memory, other files cannot be mapped.
func (t *Task) fileMapping(f *openFile, v *vm.VMA, off, prot, flags uint64) Errno {
	if d, ok := f.ops.(*memDev); ok && d.minor == devZeroMinor {
		return 0 // anonymous memory, as Linux's mmap_zero
	}
	if m, ok := f.ops.(*memfdFile); ok {
		return m.mapping(f, v, off, prot, flags)
	}
	host, isHost := f.hostOS()
	if !isHost {
		return ENODEV
	}
	fi, err := host.Stat()
	if err != nil {
		return errnoOf(err)
	}
	acc := f.flags & oACCMODE
	switch {
	case fi.Mode().IsRegular():
	case f.path == "/dev/zero" || fi.Mode()&fs.ModeCharDevice != 0 && path.Base(f.path) == "zero":
		return 0 // anonymous memory, as Linux's mmap_zero
	case fi.IsDir():
		return ENODEV
	default:
		return ENODEV
	}
	if acc == oWRONLY {
		return EACCES
	}
	if flags&mapShared != 0 && prot&uint64(vm.ProtWrite) != 0 && acc != oRDWR {
		return EACCES
	}
	if off > math.MaxInt64-vm.TaskSize {
		return EOVERFLOW
	}
	fb, err := newHostBacking(host)
	if err != nil {
		return errnoOf(err)
	}
	st := statFromInfo(fi)
	v.Name, v.Offset, v.Dev, v.Inode = f.path, off, st.dev, st.ino
	if v.Shared {
		v.Obj = vm.NewSharedObject(fb)
	} else {
		v.File = fb
	}
	return 0
}

// hostBacking is a host file behind a guest file mapping. It holds its own
// descriptor (a dup), so the mapping outlives the guest's close(2) as in
// Linux; the descriptor is closed when the last mapping is gone and the
// collector finalizes the *os.File.
type hostBacking struct{ f *os.File }

func newHostBacking(f *os.File) (*hostBacking, error) {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	return &hostBacking{os.NewFile(uintptr(fd), f.Name())}, nil
}

func (h *hostBacking) ReadAt(p []byte, off int64) (int, error)  { return h.f.ReadAt(p, off) }
func (h *hostBacking) WriteAt(p []byte, off int64) (int, error) { return h.f.WriteAt(p, off) }
func (h *hostBacking) Size() (int64, error) {
	fi, err := h.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (t *Task) sysMunmap(addr, length uint64) uint64 {
	end, ok := vm.CheckRange(addr, length)
	if !ok || length == 0 {
		return errRet(EINVAL)
	}
	t.tg.uprobeMunmap(addr, end)
	t.tg.mm.Unmap(addr, end)
	return 0
}

func (t *Task) sysMprotect(addr, length, prot uint64) uint64 {
	if addr&vm.PageMask != 0 {
		return errRet(EINVAL)
	}
	if prot&^7 != 0 {
		// PROT_GROWSDOWN/GROWSUP (0x01000000/0x02000000) and BTI/MTE bits:
		// accepted when they only ask for what uvm already does.
		const growsDown, armBTI, armMTE = 0x01000000, 0x10, 0x20
		if prot&^(7|growsDown|armBTI|armMTE) != 0 {
			return errRet(EINVAL)
		}
	}
	if length == 0 {
		return 0
	}
	end, ok := vm.CheckRange(addr, length)
	if !ok {
		return errRet(ENOMEM)
	}
	if prot&(2|4) != 0 && vdsoSpecial(t.tg.mm, addr, end) {
		return errRet(EACCES) // PROT_WRITE or PROT_EXEC: [vvar] has no VM_MAYWRITE, VM_MAYEXEC
	}
	if err := t.tg.mm.Protect(addr, end, protOf(prot)); err != nil {
		return errRet(ENOMEM)
	}
	return 0
}

// msync flags.
const (
	msAsync      = 1
	msInvalidate = 2
	msSync       = 4
)

func (t *Task) sysMsync(addr, length, flags uint64) uint64 {
	if addr&vm.PageMask != 0 || flags&^(msAsync|msInvalidate|msSync) != 0 || flags&(msAsync|msSync) == msAsync|msSync {
		return errRet(EINVAL)
	}
	end, ok := vm.CheckRange(addr, length)
	if !ok {
		return errRet(ENOMEM)
	}
	if err := t.tg.mm.Sync(addr, end); err != nil {
		if errors.Is(err, vm.ErrNoMem) {
			return errRet(ENOMEM)
		}
		return errRet(EIO)
	}
	return 0
}

const (
	mremapMaymove = 1
	mremapFixed   = 2
)

func (t *Task) sysMremap(old, oldLen, newLen, flags, newAddr uint64) uint64 {
	mm := t.tg.mm
	if old&vm.PageMask != 0 || flags&^(mremapMaymove|mremapFixed|4) != 0 {
		return errRet(EINVAL)
	}
	if oldLen > vm.TaskSize || newLen > vm.TaskSize {
		return errRet(ENOMEM)
	}
	oldLen, newLen = vm.PageAlign(oldLen), vm.PageAlign(newLen)
	if newLen == 0 || oldLen == 0 {
		return errRet(EINVAL)
	}
	oldEnd, ok := vm.CheckRange(old, oldLen)
	if !ok || !mm.Mapped(old, oldEnd) {
		return errRet(EFAULT)
	}
	if e := t.tg.uprobeXOLMremap(old, oldLen, newLen, flags&(mremapFixed|4) != 0); e != 0 { // 4: MREMAP_DONTUNMAP moves
		return errRet(e)
	}
	if flags&mremapFixed != 0 {
		if flags&mremapMaymove == 0 || newAddr&vm.PageMask != 0 {
			return errRet(EINVAL)
		}
		newEnd, ok := vm.CheckRange(newAddr, newLen)
		if !ok {
			return errRet(ENOMEM)
		}
		if newAddr < oldEnd && old < newEnd {
			return errRet(EINVAL)
		}
		t.tg.uprobeMunmap(newAddr, newEnd)
		if err := mm.Move(old, oldLen, newAddr, newLen); err != nil {
			return errRet(ENOMEM)
		}
		return newAddr
	}
	switch {
	case newLen == oldLen:
		return old
	case newLen < oldLen:
		t.tg.uprobeMunmap(old+newLen, oldEnd)
		mm.Unmap(old+newLen, oldEnd)
		return old
	}
	if mm.Grow(old, oldEnd, newLen-oldLen) {
		return old
	}
	if flags&mremapMaymove == 0 {
		return errRet(ENOMEM)
	}
	dst, err := mm.MoveAnywhere(old, oldLen, newLen)
	if err != nil {
		return errRet(ENOMEM)
	}
	return dst
}

// sysBrk implements the program break (mm->brk) over a "[heap]" area.
// Lock order: MM.BrkMu → ThreadGroup.mu (RLIMIT_DATA/AS) → MM.mu.
func (t *Task) sysBrk(want uint64) uint64 {
	mm := t.tg.mm
	mm.BrkMu.Lock()
	defer mm.BrkMu.Unlock()
	t.tg.mu.Lock()
	defer t.tg.mu.Unlock()
	cur := mm.Brk
	if want < mm.BrkStart || want > mm.BrkStart+(1<<36) {
		return cur
	}
	oldEnd, newEnd := vm.PageAlign(cur), vm.PageAlign(want)
	switch {
	case newEnd > oldEnd:
		if newEnd-vm.PageAlign(mm.BrkStart) > t.tg.rlim[rlimitData].cur || !t.checkASLocked(newEnd-oldEnd) {
			return cur
		}
		// Checked and mapped in one step: a concurrent mmap cannot take
		// the range in between.
		if err := mm.MapNoReplace(vm.VMA{Start: oldEnd, End: newEnd, Prot: vm.ProtRead | vm.ProtWrite, Name: "[heap]"}); err != nil {
			return cur
		}
	case newEnd < oldEnd:
		mm.Unmap(newEnd, oldEnd)
	}
	mm.Brk = want
	return want
}

const (
	madvDontneed = 4
	madvFree     = 8
	madvRemove   = 9
)

func (t *Task) sysMadvise(addr, length, advice uint64) uint64 {
	end, ok := vm.CheckRange(addr, length)
	if addr&vm.PageMask != 0 || addr+length < addr {
		return errRet(EINVAL)
	}
	if !ok {
		return errRet(ENOMEM)
	}
	if length == 0 {
		return 0
	}
	if !t.tg.mm.Mapped(addr, end) {
		return errRet(ENOMEM)
	}
	if (advice == madvDontneed || advice == madvRemove || advice == madvFree) && vdsoSpecial(t.tg.mm, addr, end) {
		return errRet(EINVAL) // [vvar] is VM_PFNMAP
	}
	switch advice {
	case madvDontneed:
		// Private pages are dropped: anonymous memory reads back as
		// zeroes, a private file mapping as the file's bytes; shared
		// mappings keep their contents.
		t.tg.mm.Discard(addr, end)
	case madvRemove:
		if t.tg.mm.Remove(addr, end) != nil {
			return errRet(EINVAL)
		}
	case madvFree:
		// Only private anonymous memory; its pages keep their contents
		// until reclaimed, which is a valid outcome on Linux too.
		for _, v := range t.tg.mm.VMAs() {
			if v.Start < end && addr < v.End && (v.Shared || v.File != nil) {
				return errRet(EINVAL)
			}
		}
	}
	// Everything else (HUGEPAGE, NOHUGEPAGE, WILLNEED …) is a hint that
	// changes no observable state.
	return 0
}

// sysMincore reports every mapped page as resident (uvm has no swap; a
// page not yet touched is reported resident too, as it would be after
// its first access), writing the vector in bounded chunks.
func (t *Task) sysMincore(addr, length, vec uint64) uint64 {
	if addr&vm.PageMask != 0 {
		return errRet(EINVAL)
	}
	end, ok := vm.CheckRange(addr, length)
	if !ok || !t.tg.mm.Mapped(addr, end) {
		return errRet(ENOMEM)
	}
	var chunk [4096]byte
	for i := range chunk {
		chunk[i] = 1
	}
	for n := (end - addr) / vm.PageSize; n > 0; {
		k := min(n, uint64(len(chunk)))
		if e := t.writeBytes(vec, chunk[:k]); e != 0 {
			return errRet(e)
		}
		vec += k
		n -= k
	}
	return 0
}

func (t *Task) sysMembarrier(cmd uint64) uint64 {
	switch cmd {
	case 0: // MEMBARRIER_CMD_QUERY
		return 0
	}
	return errRet(EINVAL)
}
