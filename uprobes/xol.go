package uprobes

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// The XOL ("execute out of line") area (spec §4): one page per address
// space, mapped lazily as "[uprobes]", cut into slots. Slot 0 holds the
// uretprobe trampoline; the others are taken, lowest free first, by
// threads that single-step a probed instruction, and released after the
// step.

// xolArea is struct xol_area.
type xolArea struct {
	vaddr     uint64
	slotBytes int
	nslots    int
	// bitmap: bit set = slot busy. Bit 0 is reserved for the trampoline.
	bitmap []atomic.Uint64
	// Built-in wait queue (area->wq) for threads without a Waiter.
	mu      sync.Mutex
	cond    *sync.Cond
	waiters atomic.Int32
	// written: the slot has been filled (and flushed) at least once; used
	// only by the known-wrong WrongFlushElisionNoCompare variant.
	written []atomic.Bool
}

func (a Arch) xolSlotBytes() int {
	if a == ArchAMD64 {
		return X86XOLSlotBytes
	}
	return ARM64XOLSlotBytes
}

func (a Arch) taskSize() uint64 {
	if a == ArchAMD64 {
		return X86TaskSize
	}
	return ARM64TaskSize
}

// x86UretprobeTrampoline is the x86-64 uretprobe syscall stub (spec §6.6):
// push %rax; push %rcx; push %r11; mov $335,%rax; syscall;
// (uretprobe_syscall_check:) pop %r11; pop %rcx; ret; int3.
var x86UretprobeTrampoline = [...]byte{
	0x50,       // push %rax
	0x51,       // push %rcx
	0x41, 0x53, // push %r11
	0x48, 0xC7, 0xC0, 0x4F, 0x01, 0x00, 0x00, // mov $335,%rax
	0x0F, 0x05, // syscall
	0x41, 0x5B, // pop %r11   <- uretprobe_syscall_check
	0x59, // pop %rcx
	0xC3, // ret
	0xCC, // int3
}

// X86UretprobeCheckOffset is the offset of uretprobe_syscall_check (the
// instruction after SYSCALL) in the trampoline; sys_uretprobe requires
// the caller's IP to be trampoline + this.
const X86UretprobeCheckOffset = 13

// X86SysUretprobe is the uretprobe syscall number on x86-64.
const X86SysUretprobe = 335

// trampolineBytes is arch_uprobe_trampoline.
func (m *MM) trampolineBytes() []byte {
	if m.arch == ArchAMD64 {
		if m.sys.opts.X86UretprobeSyscall {
			return x86UretprobeTrampoline[:]
		}
		return []byte{X86SWBP}
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], ARM64SWBP)
	return b[:]
}

// xolArea returns the area if it exists (no creation).
func (m *MM) xolAreaLoad() *xolArea { return m.xol.Load() }

// getXOLArea is get_xol_area: create the area on first use.
func (m *MM) getXOLArea() *xolArea {
	if a := m.xol.Load(); a != nil {
		return a
	}
	a, _ := m.createXOLArea(0)
	return a
}

// createXOLArea is __create_xol_area: map the page (at vaddr, or at the
// placement hint TASK_SIZE - PAGE_SIZE when vaddr is 0), reserve slot 0
// and write the trampoline into it.
func (m *MM) createXOLArea(vaddr uint64) (*xolArea, error) {
	m.xolMu.Lock()
	defer m.xolMu.Unlock()
	if a := m.xol.Load(); a != nil {
		return a, nil
	}
	if m.sys.failAlloc(AllocXOLArea) {
		return nil, ENOMEM
	}
	hint := vaddr
	if hint == 0 {
		hint = m.arch.taskSize() - PageSize
	}
	addr, err := m.as.MapXOL(hint)
	if err != nil {
		return nil, err
	}
	if vaddr != 0 && addr != vaddr {
		m.as.Unmap(addr, addr+PageSize)
		return nil, ENOMEM
	}
	sb := m.arch.xolSlotBytes()
	a := &xolArea{vaddr: addr, slotBytes: sb, nslots: PageSize / sb}
	a.bitmap = make([]atomic.Uint64, (a.nslots+63)/64)
	a.written = make([]atomic.Bool, a.nslots)
	a.cond = sync.NewCond(&a.mu)
	a.bitmap[0].Store(1) // slot 0: the trampoline
	var scratch [len(x86UretprobeTrampoline)]byte
	m.copyIXOL(a, addr, m.trampolineBytes(), scratch[:])
	m.xol.Store(a)
	m.sys.stats.xolAreas.Add(1)
	return a, nil
}

// getSlotNr is xol_get_slot_nr: find the lowest free slot and claim it
// (test_and_set_bit); nslots when none was claimed (full, or lost a race).
func (a *xolArea) getSlotNr() int {
	for w := range a.bitmap {
		v := a.bitmap[w].Load()
		if ^v == 0 {
			continue
		}
		bit := 0
		for v&(1<<bit) != 0 {
			bit++
		}
		nr := w*64 + bit
		if nr >= a.nslots {
			return a.nslots
		}
		if a.bitmap[w].Or(1<<bit)&(1<<bit) == 0 {
			return nr
		}
		return a.nslots
	}
	return a.nslots
}

// freeSlot is the bitmap half of xol_free_insn_slot: clear the bit and
// wake waiters.
func (a *xolArea) freeSlot(nr int) {
	a.bitmap[nr/64].And(^(uint64(1) << (nr % 64)))
	if a.waiters.Load() != 0 {
		a.mu.Lock()
		a.cond.Broadcast()
		a.mu.Unlock()
	}
}

// busySlots counts the busy slots (bit 0 included).
func (a *xolArea) busySlots() int {
	n := 0
	for w := range a.bitmap {
		v := a.bitmap[w].Load()
		for ; v != 0; v &= v - 1 {
			n++
		}
	}
	return n
}

// xolGetInsnSlot is xol_get_insn_slot: take a slot (sleeping while none
// is free) and copy the instruction into it.
func (t *Task) xolGetInsnSlot(u *uprobe) bool {
	m := t.mm
	a := m.getXOLArea()
	if a == nil {
		return false
	}
	t.atomicOp(ObjXOLBitmap, a)
	nr := a.getSlotNr()
	if nr >= a.nslots {
		nr = t.waitSlot(a)
	}
	ut := t.utask
	ut.xolVaddr = a.vaddr + uint64(nr*a.slotBytes)
	n := 16
	if m.arch == ArchARM64 {
		n = 4
	}
	flushed := m.copyIXOL(a, ut.xolVaddr, u.arch.insn[:n], ut.scratch[:])
	if m.sys.opts.Contention != nil {
		t.cost(PathXOLSlotGet, 1)
		t.cost(PathXOLCopy, 1)
		if flushed {
			t.cost(PathCacheFlushLine, cacheLines(ut.xolVaddr, n))
			t.cost(PathCacheFlushSync, 1)
		}
	}
	return true
}

// waitSlot sleeps until a slot can be taken (wait_event on area->wq).
func (t *Task) waitSlot(a *xolArea) int {
	t.mm.sys.stats.slotWaits.Add(1)
	nr := a.nslots
	ready := func() bool {
		nr = a.getSlotNr()
		return nr < a.nslots
	}
	if w, ok := t.th.(Waiter); ok {
		w.Wait(ready)
		return nr
	}
	a.waiters.Add(1)
	a.mu.Lock()
	for !ready() {
		a.cond.Wait()
	}
	a.mu.Unlock()
	a.waiters.Add(-1)
	return nr
}

// xolFreeInsnSlot is xol_free_insn_slot.
func (t *Task) xolFreeInsnSlot() {
	ut := t.utask
	a := t.mm.xolAreaLoad()
	if a == nil || ut.xolVaddr == 0 {
		return
	}
	nr := int((ut.xolVaddr - a.vaddr) / uint64(a.slotBytes))
	ut.xolVaddr = 0
	if c := t.mm.sys.opts.Contention; c != nil {
		c.Atomic(t.th, ObjXOLBitmap, a)
		c.Read(t.th, ObjXOLWaitqueue, a)
		c.Cost(t.th, PathXOLSlotPut, 1)
	}
	a.freeSlot(nr)
}

// copyIXOL is arch_uprobe_copy_ixol: write src into the slot at vaddr
// and do the architecture's cache maintenance. On arm64 with
// XOLFlushElision the copy and the maintenance are skipped when the slot
// already holds the same bytes (seed 002). scratch (at least len(src)
// bytes) receives the slot's current bytes for the comparison.
//
// It reports whether it did the cache maintenance.
func (m *MM) copyIXOL(a *xolArea, vaddr uint64, src, scratch []byte) (flushed bool) {
	st := &m.sys.stats
	if m.arch != ArchARM64 {
		// Generic: copy, flush_dcache_page (a no-op on x86).
		if m.as.Poke(src, vaddr) != nil {
			m.sys.warn("uprobe: cannot write the XOL slot at %#x", vaddr)
		}
		st.xolCopies.Add(1)
		return false
	}
	slot := int((vaddr - a.vaddr) / uint64(a.slotBytes))
	opts := &m.sys.opts
	switch {
	case opts.WrongFlushElisionNoCompare:
		if m.as.Poke(src, vaddr) != nil {
			m.sys.warn("uprobe: cannot write the XOL slot at %#x", vaddr)
		}
		st.xolCopies.Add(1)
		if a.written[slot].Swap(true) {
			st.flushesSaved.Add(1)
			return false
		}
	case opts.XOLFlushElision:
		dst := scratch[:len(src)]
		if m.as.Peek(dst, vaddr) == nil && bytes.Equal(dst, src) {
			st.flushesSaved.Add(1)
			st.copiesSaved.Add(1)
			return false
		}
		fallthrough
	default:
		if m.as.Poke(src, vaddr) != nil {
			m.sys.warn("uprobe: cannot write the XOL slot at %#x", vaddr)
		}
		st.xolCopies.Add(1)
	}
	m.as.FlushICache(vaddr, len(src))
	st.flushes.Add(1)
	return true
}

// cacheLines is the number of 64-byte cache lines [addr, addr+n) spans.
func cacheLines(addr uint64, n int) int {
	if n <= 0 {
		return 0
	}
	return int((addr+uint64(n)-1)/64 - addr/64 + 1)
}

// XOLMremap is the "[uprobes]" special mapping's answer to an mremap of
// it from oldLen to newLen bytes (move: the call would move it), or 0 to
// let the call go on: growing fails with EFAULT (the mapping is
// VM_DONTEXPAND), moving with EPERM since 6.13 (xol_mremap;
// Options.XOLMremapDenied). Before 6.13 the move succeeds and the area's
// address goes stale (the next out-of-line step faults).
func (m *MM) XOLMremap(oldLen, newLen uint64, move bool) Errno {
	switch {
	case newLen > oldLen:
		return EFAULT
	case move && m.sys.opts.XOLMremapDenied:
		return EPERM
	}
	return 0
}
