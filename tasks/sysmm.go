package tasks

import (
	"io"

	"uvm/vm"
)

// mmap flags (identical on arm64 and x86-64).
const (
	mapShared         = 0x01
	mapPrivate        = 0x02
	mapFixed          = 0x10
	mapAnonymous      = 0x20
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
	length = vm.PageAlign(length)
	if length == 0 || length > vm.TaskSize {
		return errRet(ENOMEM)
	}
	var f *openFile
	if flags&mapAnonymous == 0 {
		var ok bool
		f, ok = t.tg.fds.get(fd)
		if !ok || f.kind != kindHost {
			return errRet(EBADF)
		}
	}
	fixed := flags&(mapFixed|mapFixedNoreplace) != 0
	if fixed {
		if addr&vm.PageMask != 0 {
			return errRet(EINVAL)
		}
		if addr+length > vm.TaskSize || addr+length < addr {
			return errRet(ENOMEM)
		}
		if flags&mapFixedNoreplace != 0 && !t.rangeFree(addr, length) {
			return errRet(EEXIST)
		}
	} else {
		var err error
		addr, err = mm.FindFree(addr&^vm.PageMask, length)
		if err != nil {
			return errRet(ENOMEM)
		}
	}
	v := vm.VMA{Start: addr, End: addr + length, Prot: protOf(prot), Shared: flags&mapShared != 0}
	if f != nil {
		v.Name, v.Offset = f.path, off
		if fi, err := f.host.Stat(); err == nil {
			st := statFromInfo(fi)
			v.Dev, v.Inode = st.dev, st.ino
		}
	}
	if err := mm.Map(v); err != nil {
		return errRet(ENOMEM)
	}
	if f != nil {
		// Private file mappings are filled with the file's bytes now;
		// MAP_SHARED file mappings are copies too (writes are not carried
		// back to the file) — documented limitation.
		buf := make([]byte, length)
		n, err := f.host.ReadAt(buf, int64(off))
		if err != nil && err != io.EOF {
			mm.Unmap(addr, addr+length)
			return errRet(errnoOf(err))
		}
		if n > 0 {
			if err := mm.Poke(buf[:n], addr); err != nil {
				mm.Unmap(addr, addr+length)
				return errRet(ENOMEM)
			}
		}
		t.tg.uprobeMmap(v)
	}
	return addr
}

func (t *Task) rangeFree(addr, length uint64) bool {
	for _, v := range t.tg.mm.VMAs() {
		if v.Start < addr+length && addr < v.End {
			return false
		}
	}
	return true
}

func (t *Task) sysMunmap(addr, length uint64) uint64 {
	if addr&vm.PageMask != 0 || length == 0 || addr+length > vm.TaskSize {
		return errRet(EINVAL)
	}
	t.tg.uprobeMunmap(addr, addr+vm.PageAlign(length))
	t.tg.mm.Unmap(addr, addr+vm.PageAlign(length))
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
	end := addr + vm.PageAlign(length)
	if err := t.tg.mm.Protect(addr, end, protOf(prot)); err != nil {
		return errRet(ENOMEM)
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
	oldLen, newLen = vm.PageAlign(oldLen), vm.PageAlign(newLen)
	if newLen == 0 || oldLen == 0 {
		return errRet(EINVAL)
	}
	if !mm.Mapped(old, old+oldLen) {
		return errRet(EFAULT)
	}
	if flags&mremapFixed != 0 {
		if flags&mremapMaymove == 0 || newAddr&vm.PageMask != 0 {
			return errRet(EINVAL)
		}
		if err := mm.Move(old, oldLen, newAddr, newLen); err != nil {
			return errRet(ENOMEM)
		}
		return newAddr
	}
	switch {
	case newLen == oldLen:
		return old
	case newLen < oldLen:
		mm.Unmap(old+newLen, old+oldLen)
		return old
	}
	if mm.Grow(old, old+oldLen, newLen-oldLen) {
		return old
	}
	if flags&mremapMaymove == 0 {
		return errRet(ENOMEM)
	}
	dst, err := mm.FindFree(0, newLen)
	if err != nil {
		return errRet(ENOMEM)
	}
	if err := mm.Move(old, oldLen, dst, newLen); err != nil {
		return errRet(ENOMEM)
	}
	return dst
}

// sysBrk implements the program break (mm->brk) over a "[heap]" area.
func (t *Task) sysBrk(want uint64) uint64 {
	mm := t.tg.mm
	t.tg.mu.Lock()
	defer t.tg.mu.Unlock()
	cur := mm.Brk
	if want < mm.BrkStart || want > mm.BrkStart+(1<<36) {
		return cur
	}
	oldEnd, newEnd := vm.PageAlign(cur), vm.PageAlign(want)
	switch {
	case newEnd > oldEnd:
		for _, v := range mm.VMAs() {
			if v.Start < newEnd && oldEnd < v.End {
				return cur
			}
		}
		if err := mm.Map(vm.VMA{Start: oldEnd, End: newEnd, Prot: vm.ProtRead | vm.ProtWrite, Name: "[heap]"}); err != nil {
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
	if addr&vm.PageMask != 0 {
		return errRet(EINVAL)
	}
	end := addr + vm.PageAlign(length)
	if !t.tg.mm.Mapped(addr, end) {
		return errRet(ENOMEM)
	}
	switch advice {
	case madvDontneed, madvRemove:
		// Private anonymous memory reads back as zeroes afterwards.
		t.tg.mm.Discard(addr, end)
	}
	// Everything else (MADV_FREE, HUGEPAGE, NOHUGEPAGE, WILLNEED …) is a
	// hint that changes no observable state; MADV_FREE pages keep their
	// contents until reused, which is a valid outcome on Linux too.
	return 0
}

func (t *Task) sysMincore(addr, length, vec uint64) uint64 {
	if addr&vm.PageMask != 0 {
		return errRet(EINVAL)
	}
	end := addr + vm.PageAlign(length)
	if !t.tg.mm.Mapped(addr, end) {
		return errRet(ENOMEM)
	}
	b := make([]byte, (end-addr)/vm.PageSize)
	for i := range b {
		b[i] = 1
	}
	return errOr0(t.writeBytes(vec, b))
}

func (t *Task) sysMembarrier(cmd uint64) uint64 {
	switch cmd {
	case 0: // MEMBARRIER_CMD_QUERY
		return 0
	}
	return errRet(EINVAL)
}
