// Package vm holds what both guest architectures share: the address space
// (VMAs, pages, permissions, a software TLB per CPU), ELF loading and the
// initial stack, and the exits an interpreter reports.
package vm

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

// Guest page geometry. uvm models 4 KiB pages on both architectures, as the
// default arm64 and x86-64 Linux kernels do.
const (
	PageShift = 12
	PageSize  = 1 << PageShift
	PageMask  = PageSize - 1

	// AddrBits is the width of the user address space (TASK_SIZE is 2^47 on
	// x86-64 with 4-level paging and 2^48 on arm64 with 48-bit VA; uvm uses
	// 47 on both so that addresses look the same to both guests).
	AddrBits = 47
	// TaskSize is the first address beyond user space.
	TaskSize = uint64(1) << AddrBits
)

// Prot is a set of page permissions, with the bit values of Linux's PROT_*.
type Prot uint8

const (
	ProtRead  Prot = 1
	ProtWrite Prot = 2
	ProtExec  Prot = 4
)

func (p Prot) String() string {
	b := []byte("---")
	if p&ProtRead != 0 {
		b[0] = 'r'
	}
	if p&ProtWrite != 0 {
		b[1] = 'w'
	}
	if p&ProtExec != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// Access is the kind of a memory access, used in faults.
type Access uint8

const (
	AccessRead Access = iota
	AccessWrite
	AccessExec
)

func (a Access) String() string {
	switch a {
	case AccessRead:
		return "read"
	case AccessWrite:
		return "write"
	default:
		return "exec"
	}
}

// Fault describes a failed guest memory access. It is a value, never a panic.
type Fault struct {
	Addr   uint64
	Access Access
	// Mapped is true when the page was mapped but the access was not
	// permitted (Linux's SEGV_ACCERR); false means SEGV_MAPERR.
	Mapped bool
}

func (f *Fault) Error() string {
	why := "unmapped address"
	if f.Mapped {
		why = "permission denied"
	}
	return fmt.Sprintf("%s fault at 0x%x (%s)", f.Access, f.Addr, why)
}

// ErrFault is wrapped by every *Fault returned as an error by the
// kernel-side copy helpers (the EFAULT case).
var ErrFault = errors.New("bad address")

func (f *Fault) Unwrap() error { return ErrFault }

// Page is one guest page of memory.
type Page struct {
	Data [PageSize]byte
	// prot is the page's current permission; written under MM.mu (write),
	// read atomically by TLB fills.
	prot atomic.Uint32
	// CodeVersion is bumped on every store to this page after it has been
	// decoded for execution, and on mprotect/munmap of it. Predecoded
	// instruction pages remember the version they were built from and are
	// stale once it changes (see package icache).
	CodeVersion atomic.Uint64
	// hasCode is set while some predecoded form of the page may exist;
	// while it is set, stores take the slow path so they bump CodeVersion.
	hasCode atomic.Bool
}

// Prot reports the page's permissions.
func (p *Page) Prot() Prot { return Prot(p.prot.Load()) }

// VMA is a virtual memory area: a range of pages with one permission and
// one origin, as in /proc/self/maps.
type VMA struct {
	Start, End uint64 // [Start, End), page aligned
	Prot       Prot
	Shared     bool   // MAP_SHARED
	Name       string // path of the backing file, "[heap]", "[stack]", "" for anonymous
	Offset     uint64 // file offset of Start
	Dev, Inode uint64 // identity of the backing file, for uprobes and maps
}

// Radix page table geometry: 3 levels of 12 bits cover the 47..48-bit VA.
const (
	ptBits = 12
	ptSize = 1 << ptBits
	ptMask = ptSize - 1
)

type ptLeaf [ptSize]*Page
type ptMid [ptSize]*ptLeaf

// MM is a guest address space (Linux's mm_struct). All threads of a thread
// group share one MM.
//
// Lock order: MM.mu is a leaf lock; nothing else is acquired while holding it.
type MM struct {
	// mu protects vmas, the page table, brk and mmapBase.
	mu   sync.RWMutex
	vmas []VMA // sorted by Start, non-overlapping
	top  [1 << (AddrBits + 1 - PageShift - 2*ptBits)]*ptMid

	// gen is bumped whenever a translation may have become invalid
	// (munmap, mprotect, a page gaining predecoded code). TLBs compare it
	// on Sync.
	gen atomic.Uint64

	// Brk state (protected by mu).
	BrkStart, Brk uint64
	// MmapBase is where top-down mmap placement starts (protected by mu).
	MmapBase uint64

	// Code is the predecoded instruction cache of this address space, set
	// by the guest architecture's CPU constructor (an *icache.A64Cache or
	// *icache.X86Cache). Shared by all threads.
	Code any
	// ExePath is the host path of the main executable (for /proc/self/exe).
	ExePath string
}

// NewMM returns an empty address space.
func NewMM() *MM {
	return &MM{MmapBase: 0x7f0000000000}
}

// Gen returns the translation generation (see TLB.Sync).
func (m *MM) Gen() uint64 { return m.gen.Load() }

func (m *MM) lookupPage(vpn uint64) *Page {
	i := vpn >> (2 * ptBits)
	if i >= uint64(len(m.top)) {
		return nil
	}
	mid := m.top[i]
	if mid == nil {
		return nil
	}
	leaf := mid[(vpn>>ptBits)&ptMask]
	if leaf == nil {
		return nil
	}
	return leaf[vpn&ptMask]
}

func (m *MM) setPage(vpn uint64, p *Page) {
	i := vpn >> (2 * ptBits)
	mid := m.top[i]
	if mid == nil {
		if p == nil {
			return
		}
		mid = new(ptMid)
		m.top[i] = mid
	}
	leaf := mid[(vpn>>ptBits)&ptMask]
	if leaf == nil {
		if p == nil {
			return
		}
		leaf = new(ptLeaf)
		mid[(vpn>>ptBits)&ptMask] = leaf
	}
	leaf[vpn&ptMask] = p
}

// Page returns the page holding addr (allocating it on first touch), or
// nil when addr is not mapped.
func (m *MM) Page(addr uint64) *Page {
	if addr >= TaskSize {
		return nil
	}
	return m.faultIn(addr >> PageShift)
}

// PageAlign rounds up to a page boundary.
func PageAlign(x uint64) uint64 { return (x + PageMask) &^ PageMask }

// ErrNoMem is returned when no address range can be found or a range is
// outside user space.
var ErrNoMem = errors.New("out of address space")

// Map creates a mapping of [Start, End) with the given permission,
// replacing whatever was there (MAP_FIXED semantics). Pages are allocated
// zeroed on first touch (demand paging), so large reservations cost
// nothing until used. Start and End must be page aligned.
func (m *MM) Map(v VMA) error {
	if v.Start&PageMask != 0 || v.End&PageMask != 0 || v.End <= v.Start || v.End > TaskSize {
		return fmt.Errorf("map [0x%x,0x%x): %w", v.Start, v.End, ErrNoMem)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unmapLocked(v.Start, v.End)
	m.insertVMA(v)
	m.gen.Add(1)
	return nil
}

// vmaLocked returns the index of the area containing addr, or -1.
func (m *MM) vmaLocked(addr uint64) int {
	i := sort.Search(len(m.vmas), func(i int) bool { return m.vmas[i].End > addr })
	if i < len(m.vmas) && m.vmas[i].Start <= addr {
		return i
	}
	return -1
}

// faultIn returns the page at vpn, allocating it if its VMA exists.
func (m *MM) faultIn(vpn uint64) *Page {
	m.mu.RLock()
	p := m.lookupPage(vpn)
	m.mu.RUnlock()
	if p != nil {
		return p
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p = m.lookupPage(vpn); p != nil {
		return p
	}
	i := m.vmaLocked(vpn << PageShift)
	if i < 0 {
		return nil
	}
	p = new(Page)
	p.prot.Store(uint32(m.vmas[i].Prot))
	m.setPage(vpn, p)
	return p
}

func (m *MM) insertVMA(v VMA) {
	i := sort.Search(len(m.vmas), func(i int) bool { return m.vmas[i].Start >= v.Start })
	m.vmas = append(m.vmas, VMA{})
	copy(m.vmas[i+1:], m.vmas[i:])
	m.vmas[i] = v
	m.mergeAround(i)
}

// mergeAround joins vmas[i] with equal neighbours, as Linux's vma_merge.
func (m *MM) mergeAround(i int) {
	can := func(a, b VMA) bool {
		if a.End != b.Start || a.Prot != b.Prot || a.Shared != b.Shared || a.Name != b.Name || a.Inode != b.Inode || a.Dev != b.Dev {
			return false
		}
		return a.Name == "" || a.Name[0] == '[' || a.Offset+(a.End-a.Start) == b.Offset
	}
	if i+1 < len(m.vmas) && can(m.vmas[i], m.vmas[i+1]) {
		m.vmas[i].End = m.vmas[i+1].End
		m.vmas = append(m.vmas[:i+1], m.vmas[i+2:]...)
	}
	if i > 0 && can(m.vmas[i-1], m.vmas[i]) {
		m.vmas[i-1].End = m.vmas[i].End
		m.vmas = append(m.vmas[:i], m.vmas[i+1:]...)
	}
}

// splitAt makes addr a VMA boundary.
func (m *MM) splitAt(addr uint64) {
	for i, v := range m.vmas {
		if v.Start < addr && addr < v.End {
			left, right := v, v
			left.End = addr
			right.Start = addr
			right.Offset += addr - v.Start
			m.vmas = append(m.vmas, VMA{})
			copy(m.vmas[i+2:], m.vmas[i+1:])
			m.vmas[i], m.vmas[i+1] = left, right
			return
		}
	}
}

func (m *MM) unmapLocked(start, end uint64) {
	m.splitAt(start)
	m.splitAt(end)
	out := m.vmas[:0]
	for _, v := range m.vmas {
		if v.Start >= start && v.End <= end {
			continue
		}
		out = append(out, v)
	}
	m.vmas = out
	for a := start; a < end; a += PageSize {
		if p := m.lookupPage(a >> PageShift); p != nil {
			p.CodeVersion.Add(1)
			m.setPage(a>>PageShift, nil)
		}
	}
}

// Unmap removes [start, end). Unmapped holes inside the range are fine.
func (m *MM) Unmap(start, end uint64) {
	m.mu.Lock()
	m.unmapLocked(start, end)
	m.gen.Add(1)
	m.mu.Unlock()
}

// Protect changes the permission of [start, end); every page must be
// mapped (else ErrNoMem, as Linux's ENOMEM).
func (m *MM) Protect(start, end uint64, prot Prot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for a := start; a < end; {
		i := m.vmaLocked(a)
		if i < 0 {
			return ErrNoMem
		}
		a = m.vmas[i].End
	}
	m.splitAt(start)
	m.splitAt(end)
	for i := range m.vmas {
		if m.vmas[i].Start >= start && m.vmas[i].End <= end {
			m.vmas[i].Prot = prot
		}
	}
	for i := len(m.vmas) - 1; i >= 0; i-- {
		if i < len(m.vmas) {
			m.mergeAround(i)
		}
	}
	for a := start; a < end; a += PageSize {
		if p := m.lookupPage(a >> PageShift); p != nil {
			p.prot.Store(uint32(prot))
			p.CodeVersion.Add(1)
		}
	}
	m.gen.Add(1)
	return nil
}

// VMAs returns a copy of the areas, sorted by address.
func (m *MM) VMAs() []VMA {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]VMA(nil), m.vmas...)
}

// FindVMA returns the area containing addr.
func (m *MM) FindVMA(addr uint64) (VMA, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if i := m.vmaLocked(addr); i >= 0 {
		return m.vmas[i], true
	}
	return VMA{}, false
}

// FindFree returns a free page-aligned range of length bytes, searching
// top-down from MmapBase as Linux's default mmap layout does. hint, when
// non-zero and free, is used as is.
func (m *MM) FindFree(hint, length uint64) (uint64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	length = PageAlign(length)
	free := func(a uint64) bool {
		if a < 0x10000 || a+length > TaskSize || a+length < a {
			return false
		}
		for _, v := range m.vmas {
			if v.Start < a+length && a < v.End {
				return false
			}
		}
		return true
	}
	if hint != 0 && hint&PageMask == 0 && free(hint) {
		return hint, nil
	}
	end := m.MmapBase
	for i := len(m.vmas) - 1; i >= -1; i-- {
		// gap between vmas[i].End and end (or the next vma start)
		var lo uint64 = 0x10000
		if i >= 0 {
			lo = m.vmas[i].End
			if lo >= end {
				if m.vmas[i].Start < end {
					end = m.vmas[i].Start
				}
				continue
			}
		}
		if end >= lo+length {
			return end - length, nil
		}
		if i >= 0 && m.vmas[i].Start < end {
			end = m.vmas[i].Start
		}
	}
	return 0, ErrNoMem
}

// translate returns the page for addr if the access is allowed.
func (m *MM) translate(addr uint64, acc Access) (*Page, *Fault) {
	if addr >= TaskSize {
		return nil, &Fault{Addr: addr, Access: acc}
	}
	p := m.faultIn(addr >> PageShift)
	if p == nil {
		return nil, &Fault{Addr: addr, Access: acc}
	}
	prot := p.Prot()
	need := ProtRead
	switch acc {
	case AccessWrite:
		need = ProtWrite
	case AccessExec:
		need = ProtExec
	}
	if prot&need == 0 {
		return nil, &Fault{Addr: addr, Access: acc, Mapped: true}
	}
	return p, nil
}

// CodePage returns the page holding pc for instruction fetch and marks it
// as holding predecoded code, so later stores to it bump its CodeVersion.
func (m *MM) CodePage(pc uint64) (*Page, *Fault) {
	p, f := m.translate(pc, AccessExec)
	if f != nil {
		return nil, f
	}
	if !p.hasCode.Load() {
		p.hasCode.Store(true)
		// Drop every TLB's write entry for this page: stores must now take
		// the slow path that bumps CodeVersion.
		m.gen.Add(1)
	}
	return p, nil
}

// storeSlow writes b at addr, page by page, with permission checks. force
// ignores permissions (ptrace-style POKE, used for breakpoints).
func (m *MM) store(addr uint64, b []byte, force bool) error {
	for len(b) > 0 {
		var p *Page
		var f *Fault
		if force {
			p = m.Page(addr)
			if p == nil {
				f = &Fault{Addr: addr, Access: AccessWrite}
			}
		} else {
			p, f = m.translate(addr, AccessWrite)
		}
		if f != nil {
			return f
		}
		off := addr & PageMask
		n := min(len(b), PageSize-int(off))
		if p.hasCode.Load() {
			// A kernel-side write of the bytes already there (a uprobe
			// XOL slot rewritten with the same instruction) leaves
			// predecoded code valid: nothing changed for instruction
			// fetch.
			if !bytes.Equal(p.Data[off:off+uint64(n)], b[:n]) {
				copy(p.Data[off:], b[:n])
				p.CodeVersion.Add(1)
			}
		} else {
			copy(p.Data[off:], b[:n])
		}
		b = b[n:]
		addr += uint64(n)
	}
	return nil
}

// load reads len(b) bytes at addr with read permission checks.
func (m *MM) load(addr uint64, b []byte, acc Access, force bool) error {
	for len(b) > 0 {
		var p *Page
		var f *Fault
		if force {
			p = m.Page(addr)
			if p == nil {
				f = &Fault{Addr: addr, Access: acc}
			}
		} else {
			p, f = m.translate(addr, acc)
		}
		if f != nil {
			return f
		}
		n := copy(b, p.Data[addr&PageMask:])
		b = b[n:]
		addr += uint64(n)
	}
	return nil
}

// ReadAt copies guest memory into b (copy_from_user). It fails with a
// *Fault (wrapping ErrFault) on any unreadable byte.
func (m *MM) ReadAt(b []byte, addr uint64) error { return m.load(addr, b, AccessRead, false) }

// WriteAt copies b into guest memory (copy_to_user).
func (m *MM) WriteAt(b []byte, addr uint64) error { return m.store(addr, b, false) }

// Poke writes regardless of page permissions, as the kernel's
// uprobe_write_opcode and ptrace POKETEXT do. Stores to code bump the
// page's CodeVersion like any other store.
func (m *MM) Poke(b []byte, addr uint64) error { return m.store(addr, b, true) }

// Peek reads regardless of page permissions (must be mapped).
func (m *MM) Peek(b []byte, addr uint64) error { return m.load(addr, b, AccessRead, true) }

// ReadString reads a NUL-terminated string of at most max bytes.
func (m *MM) ReadString(addr uint64, max int) (string, error) {
	var out []byte
	var buf [256]byte
	for len(out) < max {
		n := PageSize - int(addr&PageMask)
		if n > len(buf) {
			n = len(buf)
		}
		if err := m.ReadAt(buf[:n], addr); err != nil {
			return "", err
		}
		for i := 0; i < n; i++ {
			if buf[i] == 0 {
				return string(append(out, buf[:i]...)), nil
			}
		}
		out = append(out, buf[:n]...)
		addr += uint64(n)
	}
	return "", errors.New("string too long")
}

// Discard drops the pages of [start, end) while keeping the mapping, so
// the next touch sees zero-filled pages (MADV_DONTNEED on private
// anonymous memory).
func (m *MM) Discard(start, end uint64) {
	m.mu.Lock()
	for a := start; a < end; a += PageSize {
		if p := m.lookupPage(a >> PageShift); p != nil {
			p.CodeVersion.Add(1)
			m.setPage(a>>PageShift, nil)
		}
	}
	m.gen.Add(1)
	m.mu.Unlock()
}

// Mapped reports whether every page of [start, end) is inside a VMA.
func (m *MM) Mapped(start, end uint64) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for a := start; a < end; {
		i := m.vmaLocked(a)
		if i < 0 {
			return false
		}
		a = m.vmas[i].End
	}
	return true
}

// Move moves the mapping [old, old+oldLen) to [new, new+newLen) (mremap):
// pages move by reference, the area beyond oldLen is fresh zero memory,
// and the old range is unmapped. The destination must be free.
func (m *MM) Move(old, oldLen, new, newLen uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.vmaLocked(old)
	if i < 0 || m.vmas[i].End < old+oldLen {
		return ErrNoMem
	}
	v := m.vmas[i]
	pages := make([]*Page, 0, oldLen/PageSize)
	for a := old; a < old+oldLen; a += PageSize {
		pages = append(pages, m.lookupPage(a>>PageShift))
	}
	m.unmapLocked(old, old+oldLen)
	m.unmapLocked(new, new+newLen)
	nv := v
	nv.Start, nv.End = new, new+newLen
	nv.Offset = v.Offset + (old - v.Start)
	m.insertVMA(nv)
	for j, p := range pages {
		if p != nil && uint64(j)*PageSize < newLen {
			m.setPage(new>>PageShift+uint64(j), p)
		}
	}
	m.gen.Add(1)
	return nil
}

// Grow extends the mapping ending at end by extra bytes in place, if the
// range after it is free. It reports whether it did.
func (m *MM) Grow(start, end, extra uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.vmaLocked(start)
	if i < 0 || end+extra > TaskSize || m.vmas[i].End < end {
		return false
	}
	for _, v := range m.vmas {
		if v.Start < end+extra && end < v.End {
			return false
		}
	}
	nv := m.vmas[i]
	nv.Start, nv.End = end, end+extra
	nv.Offset = m.vmas[i].Offset + (end - m.vmas[i].Start)
	m.insertVMA(nv)
	m.gen.Add(1)
	return true
}

// Fork returns a copy of the address space for a child process (fork(2)).
// uvm copies present pages eagerly instead of sharing them copy-on-write:
// simple and exact (the two processes never see each other's later
// writes); the cost is one page copy per touched page at fork time.
// MAP_SHARED anonymous areas are shared (same pages) as Linux does.
func (m *MM) Fork() *MM {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c := &MM{vmas: append([]VMA(nil), m.vmas...), BrkStart: m.BrkStart, Brk: m.Brk, MmapBase: m.MmapBase, ExePath: m.ExePath}
	for _, v := range m.vmas {
		for a := v.Start; a < v.End; a += PageSize {
			p := m.lookupPage(a >> PageShift)
			if p == nil {
				continue
			}
			if v.Shared {
				c.setPage(a>>PageShift, p)
				continue
			}
			np := new(Page)
			np.Data = p.Data
			np.prot.Store(p.prot.Load())
			c.setPage(a>>PageShift, np)
		}
	}
	return c
}

// SetFileIdentity records the backing file's identity (device, inode) on
// every area mapped from path, as the kernel's VMAs point at their inode
// (uprobes match probes by it).
func (m *MM) SetFileIdentity(path string, dev, ino uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.vmas {
		if m.vmas[i].Name == path {
			m.vmas[i].Dev, m.vmas[i].Inode = dev, ino
		}
	}
}
