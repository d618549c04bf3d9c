package icache

import (
	"encoding/binary"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The strict (non-coherent) arm64 I-side: see "The I-side view" in doc.go.

// iview is the I-side view of one guest page: the bytes instruction fetch
// sees (view.Data), the bytes at the point of unification (pou), and the
// page they belong to. All of it is protected by A64Cache.mu.
type iview struct {
	// live is the guest page the view was taken of. A different page at
	// the same address (munmap + mmap, mremap) gets a fresh view.
	live *vm.Page
	// view holds the I-side bytes. Decoded pages point at it (Src), so
	// their validity no longer depends on stores to the live page: its
	// CodeVersion is never bumped.
	view vm.Page
	// pou holds the bytes DC CVAU made visible to the instruction side.
	pou [vm.PageSize]byte
	// gen counts changes of view.Data (IC IVAU that brought new bytes).
	gen uint64
}

// SetStrict switches the cache between the coherent behaviour (decode
// the live page, revalidate by CodeVersion) and the strict non-coherent
// I-side. It drops every decoded page; call it before the address space
// executes (uvm calls it when a CPU gets its cache model).
func (c *A64Cache) SetStrict(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.strict.Load() == on {
		return
	}
	c.strict.Store(on)
	c.pages = make(map[uint64]*A64Page)
	c.views = nil
	if on {
		c.views = make(map[uint64]*iview)
	}
	c.gen.Add(1)
}

// Strict reports whether the strict I-side is on.
func (c *A64Cache) Strict() bool { return c.strict.Load() }

// viewLocked returns the I-side view of the page at vpn, whose live page
// is src, taking a new snapshot when there is none for src (the first
// fetch of a page reads memory: the kernel makes a page's contents
// visible to instruction fetch when it first maps it executable).
func (c *A64Cache) viewLocked(vpn uint64, src *vm.Page) *iview {
	v := c.views[vpn]
	if v == nil || v.live != src {
		v = &iview{live: src}
		v.view.Data = src.Data
		v.pou = src.Data
		c.views[vpn] = v
	}
	return v
}

// lookupStrict is Lookup in strict mode: the decoded page is built from
// the I-side view, not from the live bytes, and stays valid across
// stores; it is rebuilt when IC IVAU changed the view.
func (c *A64Cache) lookupStrict(mm *vm.MM, pc uint64) (*A64Page, *vm.Fault) {
	vpn := pc >> vm.PageShift
	src, f := mm.CodePage(pc)
	c.mu.Lock()
	defer c.mu.Unlock()
	if f != nil {
		if !f.Mapped {
			// Unmapped: the view's page is gone. (A permission
			// change is no cache maintenance: the view stays.)
			delete(c.pages, vpn)
			delete(c.views, vpn)
		}
		return nil, f
	}
	v := c.viewLocked(vpn, src)
	if p := c.pages[vpn]; p != nil && p.Src == &v.view && p.igen == v.gen {
		return p, nil
	}
	p := &A64Page{VA: vpn << vm.PageShift, Src: &v.view, igen: v.gen}
	p.Version = v.view.CodeVersion.Load()
	for i := range p.Insn {
		p.Insn[i] = c.decode(binary.LittleEndian.Uint32(v.view.Data[4*i:]))
	}
	c.Fills.Add(1)
	c.pages[vpn] = p
	return p, nil
}

// liveViewLocked returns the view of the page holding addr if there is
// one for the page currently mapped there.
func (c *A64Cache) liveViewLocked(mm *vm.MM, addr uint64) *iview {
	vpn := addr >> vm.PageShift
	v := c.views[vpn]
	if v == nil {
		return nil
	}
	if p := mm.Page(addr); p != v.live {
		delete(c.views, vpn)
		delete(c.pages, vpn)
		return nil
	}
	return v
}

// CleanLine is DC CVAU (or CVAC/CIVAC) of the size-byte line holding addr
// (size a power of two ≤ vm.PageSize): in strict mode it copies the
// line's current bytes to the point of unification, where a later IC IVAU
// of the line picks them up. It does nothing otherwise. The caller has
// checked that addr is readable.
func (c *A64Cache) CleanLine(mm *vm.MM, addr, size uint64) {
	if !c.strict.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.liveViewLocked(mm, addr)
	if v == nil {
		return // never fetched: the first fetch reads memory
	}
	off := addr & vm.PageMask &^ (size - 1)
	copy(v.pou[off:off+size], v.live.Data[off:off+size])
}

// InvalidateLine is IC IVAU of the size-byte line holding addr. In strict
// mode the I-side view of the line takes the point-of-unification bytes
// (what DC CVAU published; without it, the bytes the I-side already had)
// for every CPU of the process; each CPU executes them after its next
// context synchronisation. Otherwise it is Invalidate.
func (c *A64Cache) InvalidateLine(mm *vm.MM, addr, size uint64) {
	if !c.strict.Load() {
		c.Invalidate(addr)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.liveViewLocked(mm, addr)
	if v == nil {
		return
	}
	off := addr & vm.PageMask &^ (size - 1)
	if string(v.view.Data[off:off+size]) != string(v.pou[off:off+size]) {
		copy(v.view.Data[off:off+size], v.pou[off:off+size])
		v.gen++
	}
}

// DecodeOne decodes the instruction at pc afresh, from the bytes
// instruction fetch sees (the I-side view in strict mode, memory
// otherwise), bypassing every decoded page. It is the reference for the
// differential "re-decode every instruction" mode.
func (c *A64Cache) DecodeOne(mm *vm.MM, pc uint64) (decode.A64, *vm.Page, *vm.Fault) {
	src, f := mm.CodePage(pc)
	if f != nil {
		return decode.A64{}, nil, f
	}
	off := pc & vm.PageMask &^ 3
	if !c.strict.Load() {
		return c.decode(binary.LittleEndian.Uint32(src.Data[off:])), src, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.viewLocked(pc>>vm.PageShift, src)
	return c.decode(binary.LittleEndian.Uint32(v.view.Data[off:])), src, nil
}

// FlushICache does what the Linux kernel does after writing code into a
// process on arm64 (uprobe_write_opcode, XOL slot writes, ptrace
// POKETEXT: flush_icache_range / sync_icache_aliases): DC CVAU of every
// data line and IC IVAU of every instruction line of [addr, addr+n),
// broadcast to every CPU of the process. m is the cache model of the CPU
// doing it, charged the modelled cost (nil: nothing is charged).
// The new bytes are executed by each CPU after its next context
// synchronisation (at the latest when it next returns from the kernel).
// For an x86-64 address space it does nothing: x86's I-side is coherent.
func FlushICache(mm *vm.MM, m *Model, addr, n uint64) {
	c, ok := mm.Code.(*A64Cache)
	if !ok || n == 0 {
		return
	}
	// Without a model (no cost to charge) work in the smallest line
	// size, which covers every modelled line of the range.
	dl, il := uint64(MinLine), uint64(MinLine)
	if m != nil {
		dl, il = m.DLine(), m.ILine()
	}
	end := addr + n
	for a := addr &^ (dl - 1); a < end; a += dl {
		if m != nil {
			m.DCClean(a)
		}
		c.CleanLine(mm, a, dl)
	}
	for a := addr &^ (il - 1); a < end; a += il {
		if m != nil {
			m.ICInvalidate(a)
		}
		c.InvalidateLine(mm, a, il)
	}
}
