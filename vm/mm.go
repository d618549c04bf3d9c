// Package vm holds what both guest architectures share: the address space
// (VMAs, pages, permissions, a software TLB per CPU), ELF loading and the
// initial stack, and the exits an interpreter reports.
package vm

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
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
	// Bus is true when the page is inside a file mapping but wholly past
	// the end of the file (Linux's SIGBUS, BUS_ADRERR).
	Bus bool
	// OOM is true when the page could not be allocated because the
	// memory limit (MemAccount) is reached: the kernel's out-of-memory
	// path, not a signal of its own.
	OOM bool
}

func (f *Fault) Error() string {
	why := "unmapped address"
	switch {
	case f.OOM:
		why = "out of memory"
	case f.Bus:
		why = "past the end of the mapped file"
	case f.Mapped:
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
	// File, for a private file mapping, is where a page comes from on
	// its first touch (and again after MADV_DONTNEED): the bytes at
	// Offset+(addr-Start), zero past the end of the file.
	File FileBacking
	// Obj, for a MAP_SHARED mapping (anonymous or of a file), holds the
	// pages every mapping of it shares, including pages nobody has
	// touched yet (so a fork child and its parent fault in the same page).
	Obj *SharedObject
}

// FileBacking is the file behind a file mapping. ReadAt/WriteAt must be
// safe for concurrent use (an *os.File is).
type FileBacking interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	// Size is the file's current length.
	Size() (int64, error)
}

// SharedObject is the memory behind MAP_SHARED mappings: Linux's shmem
// inode for anonymous shared memory, the page cache for a shared file
// mapping. Its pages are indexed by page offset in the object.
//
// Lock order: MM.mu → SharedObject.mu (a leaf).
type SharedObject struct {
	// File, when not nil, fills pages on first touch and receives them
	// back on Writeback (msync, munmap, exit).
	File FileBacking

	mu    sync.Mutex
	pages map[uint64]*Page // protected by mu
}

// NewSharedObject returns an empty object over f (nil: anonymous shmem).
func NewSharedObject(f FileBacking) *SharedObject {
	return &SharedObject{File: f, pages: map[uint64]*Page{}}
}

// page returns the object's page at pgoff, creating it (from the file
// when there is one). bus is true when pgoff is wholly past EOF.
func (o *SharedObject) page(pgoff uint64, prot Prot) (p *Page, bus bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p = o.pages[pgoff]; p != nil {
		return p, false
	}
	p = new(Page)
	if o.File != nil && !fillFromFile(p, o.File, pgoff<<PageShift) {
		return nil, true
	}
	p.prot.Store(uint32(prot))
	o.pages[pgoff] = p
	return p, false
}

// Writeback writes the object's pages in [pgoff, pgoff+n) to its file,
// never past the file's current end (as the kernel writes back only the
// bytes inside i_size).
func (o *SharedObject) Writeback(pgoff, n uint64) error {
	if o == nil || o.File == nil {
		return nil
	}
	size, err := o.File.Size()
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	idx := make([]uint64, 0, len(o.pages))
	for i := range o.pages {
		if i >= pgoff && i-pgoff < n {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		off := int64(i << PageShift)
		if off >= size {
			break
		}
		k := min(int64(PageSize), size-off)
		if _, err := o.File.WriteAt(o.pages[i].Data[:k], off); err != nil {
			return err
		}
	}
	return nil
}

// zero clears the object's pages in [pgoff, pgoff+n) in place
// (MADV_REMOVE: the backing store is freed; later reads see zeroes).
func (o *SharedObject) zero(pgoff, n uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, p := range o.pages {
		if i >= pgoff && i-pgoff < n {
			p.Data = [PageSize]byte{}
			p.CodeVersion.Add(1)
		}
	}
}

// fillFromFile reads the page at byte offset off of f into p. It reports
// false when off is at or past the end of the file (the SIGBUS case).
func fillFromFile(p *Page, f FileBacking, off uint64) bool {
	if off > 1<<62 {
		return false
	}
	n, err := f.ReadAt(p.Data[:], int64(off))
	if n == 0 && err != nil {
		return false
	}
	return true
}

// Radix page table geometry: 3 levels of 12 bits cover the 47..48-bit VA.
const (
	ptBits = 12
	ptSize = 1 << ptBits
	ptMask = ptSize - 1
)

type ptLeaf [ptSize]*Page
type ptMid [ptSize]*ptLeaf

// MemAccount is the memory limit shared by every address space of one
// emulated system (uvm's --mem-limit): it counts resident pages, as the
// sum of the processes' resident sets (a page mapped by two processes
// counts twice, as in each one's RSS).
type MemAccount struct {
	// Limit is the most pages that may be resident; 0 means no limit.
	Limit int64
	used  atomic.Int64
}

// Used returns the resident pages counted now.
func (a *MemAccount) Used() int64 {
	if a == nil {
		return 0
	}
	return a.used.Load()
}

// Full reports whether the limit is reached.
func (a *MemAccount) Full() bool { return a.full(1) }

// full reports whether n more pages would pass the limit.
func (a *MemAccount) full(n int64) bool {
	return a != nil && a.Limit > 0 && a.used.Load()+n > a.Limit
}

func (a *MemAccount) add(n int64) {
	if a != nil {
		a.used.Add(n)
	}
}

// MM is a guest address space (Linux's mm_struct). All threads of a thread
// group share one MM.
//
// Lock order: BrkMu → MM.mu → SharedObject.mu (a leaf); MM.mu takes no
// other lock of this package, and no lock of tasks/.
type MM struct {
	// mu protects vmas, the page table and MmapBase.
	mu   sync.RWMutex
	vmas []VMA // sorted by Start, non-overlapping
	top  [1 << (AddrBits + 1 - PageShift - 2*ptBits)]*ptMid

	// gen is bumped whenever a translation may have become invalid
	// (munmap, mprotect, a page gaining predecoded code). TLBs compare it
	// on Sync.
	gen atomic.Uint64

	// BrkMu protects BrkStart and Brk: brk(2) reads, checks and moves
	// the break as one step. It belongs to the address space, not to a
	// thread group, so processes sharing an MM (CLONE_VM without
	// CLONE_THREAD, vfork) serialise their brk calls as Linux's mmap_lock
	// does. Set without it only before the MM is shared (exec, fork).
	BrkMu         sync.Mutex
	BrkStart, Brk uint64
	// MmapBase is where top-down mmap placement starts (protected by mu).
	MmapBase uint64

	// Acct is the system's memory limit (nil: none). Set before use; a
	// forked MM shares its parent's.
	Acct *MemAccount
	// rss is the number of present pages (protected by mu).
	rss int64

	// users counts the processes using the address space (mm_users:
	// CLONE_VM children share it); the last DropUser releases it.
	users atomic.Int32

	// Code is the predecoded instruction cache of this address space, set
	// by the guest architecture's CPU constructor (an *icache.A64Cache or
	// *icache.X86Cache). Shared by all threads.
	Code any
	// ExePath is the host path of the main executable (opened through
	// /proc/self/exe); ExeName is its path as the guest sees it (what
	// readlink of /proc/self/exe says: inside the root under --root).
	ExePath, ExeName string
	// Auxv is the auxiliary vector SetupStack wrote (key/value words up
	// to AT_NULL, little-endian), for debuggers (qXfer:auxv:read).
	Auxv []byte
}

// NewMM returns an empty address space.
func NewMM() *MM {
	m := &MM{MmapBase: 0x7f0000000000}
	m.users.Store(1)
	return m
}

// AddUser records one more process sharing the address space (CLONE_VM).
func (m *MM) AddUser() { m.users.Add(1) }

// DropUser is mmput: when the last process using the address space lets
// go of it, its shared file mappings are written back, and with release
// (process exit: no thread can touch it any more) every page is freed
// at once. execve passes release=false: the threads it killed may still
// be stopping on the old address space, which the collector frees after
// them.
func (m *MM) DropUser(release bool) {
	if m.users.Add(-1) != 0 {
		return
	}
	if release {
		m.Release()
		return
	}
	m.mu.RLock()
	for _, v := range m.vmas {
		v.Obj.Writeback(v.Offset>>PageShift, (v.End-v.Start)>>PageShift)
	}
	m.mu.RUnlock()
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

// setPage installs (or with nil removes) the page at vpn, keeping the
// resident counts. m.mu is held for writing.
func (m *MM) setPage(vpn uint64, p *Page) {
	old := m.lookupPage(vpn)
	switch {
	case old == nil && p != nil:
		m.rss++
		m.Acct.add(1)
	case old != nil && p == nil:
		m.rss--
		m.Acct.add(-1)
	}
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
	p, _ := m.faultIn(addr >> PageShift)
	return p
}

// PageAlign rounds up to a page boundary.
func PageAlign(x uint64) uint64 { return (x + PageMask) &^ PageMask }

// ErrNoMem is returned when no address range can be found or a range is
// outside user space.
var ErrNoMem = errors.New("out of address space")

// checkBounds checks that v is a non-empty, page-aligned range of user
// space.
func (v *VMA) checkBounds() error {
	if v.Start&PageMask != 0 || v.End&PageMask != 0 || v.End <= v.Start || v.End > TaskSize {
		return fmt.Errorf("map [0x%x,0x%x): %w", v.Start, v.End, ErrNoMem)
	}
	return nil
}

// Map creates a mapping of [Start, End) with the given permission,
// replacing whatever was there (MAP_FIXED semantics). Pages are allocated
// zeroed on first touch (demand paging), so large reservations cost
// nothing until used. Start and End must be page aligned.
func (m *MM) Map(v VMA) error {
	if err := v.checkBounds(); err != nil {
		return err
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

// faultIn returns the page at vpn, allocating it if its VMA exists:
// zeroed for anonymous memory, read from the file for a private file
// mapping, the shared object's page for MAP_SHARED. bus reports a page
// of a file mapping wholly past the end of the file.
func (m *MM) faultIn(vpn uint64) (p *Page, bus bool) {
	m.mu.RLock()
	p = m.lookupPage(vpn)
	m.mu.RUnlock()
	if p != nil {
		return p, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p = m.lookupPage(vpn); p != nil {
		return p, false
	}
	i := m.vmaLocked(vpn << PageShift)
	if i < 0 {
		return nil, false
	}
	if m.Acct.full(1) {
		return nil, false
	}
	v := &m.vmas[i]
	switch {
	case v.Obj != nil:
		pgoff := (v.Offset + (vpn<<PageShift - v.Start)) >> PageShift
		if p, bus = v.Obj.page(pgoff, v.Prot); p == nil {
			return nil, bus
		}
		// The object's page may have been created by a mapping with
		// another permission; this mapping's permission applies here.
		p.prot.Store(uint32(v.Prot))
	case v.File != nil:
		p = new(Page)
		if !fillFromFile(p, v.File, v.Offset+(vpn<<PageShift-v.Start)) {
			return nil, true
		}
		p.prot.Store(uint32(v.Prot))
	default:
		p = new(Page)
		p.prot.Store(uint32(v.Prot))
	}
	m.setPage(vpn, p)
	return p, false
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
		if a.End != b.Start || a.Prot != b.Prot || a.Shared != b.Shared || a.Name != b.Name || a.Inode != b.Inode || a.Dev != b.Dev || a.File != b.File || a.Obj != b.Obj {
			return false
		}
		if a.File != nil || a.Obj != nil {
			return a.Offset+(a.End-a.Start) == b.Offset
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
			// A shared file mapping's writes reach the file when it goes.
			v.Obj.Writeback(v.Offset>>PageShift, (v.End-v.Start)>>PageShift)
			continue
		}
		out = append(out, v)
	}
	clear(m.vmas[len(out):])
	m.vmas = out
	m.dropPagesLocked(start, end)
}

// dropPagesLocked removes the pages of [start, end) from the page table.
func (m *MM) dropPagesLocked(start, end uint64) {
	m.walkPresent(start, end, func(vpn uint64, p *Page) {
		p.CodeVersion.Add(1)
		m.setPage(vpn, nil)
	})
}

// walkPresent calls fn for every present page of [start, end) in address
// order, skipping absent levels of the page table, so a range operation
// over a huge empty reservation costs nothing. fn may clear the entry it
// is given (setPage(vpn, nil)) but must not add pages.
func (m *MM) walkPresent(start, end uint64, fn func(vpn uint64, p *Page)) {
	end = min(end, TaskSize)
	if end <= start {
		return
	}
	last := (end + PageMask) >> PageShift
	for vpn := start >> PageShift; vpn < last; {
		ti := vpn >> (2 * ptBits)
		if ti >= uint64(len(m.top)) {
			return
		}
		mid := m.top[ti]
		if mid == nil {
			vpn = (ti + 1) << (2 * ptBits)
			continue
		}
		leaf := mid[(vpn>>ptBits)&ptMask]
		if leaf == nil {
			vpn = (vpn>>ptBits + 1) << ptBits
			continue
		}
		for li := vpn & ptMask; li < ptSize && vpn < last; li, vpn = li+1, vpn+1 {
			if p := leaf[li]; p != nil {
				fn(vpn, p)
			}
		}
	}
}

// CheckRange validates a guest range [addr, addr+length): page-aligned
// start, no wrap past 2^64 once the length is rounded up to pages, inside
// user space. It returns the page-aligned end.
func CheckRange(addr, length uint64) (end uint64, ok bool) {
	if addr&PageMask != 0 || length > TaskSize {
		return 0, false
	}
	end = addr + PageAlign(length)
	if end < addr || end > TaskSize {
		return 0, false
	}
	return end, true
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
	return m.updateRange(start, end, nil, func(v *VMA) { v.Prot = prot }, func(_ uint64, p *Page) {
		p.prot.Store(uint32(prot))
		p.CodeVersion.Add(1)
	})
}

// NameAnon names the anonymous memory of [start, end) (PR_SET_VMA_ANON_NAME:
// "[anon:NAME]" in /proc/PID/maps; "" removes the name). Every page must
// be mapped (ErrNoMem) and anonymous (an error for file mappings).
func (m *MM) NameAnon(start, end uint64, name string) error {
	label := ""
	if name != "" {
		label = "[anon:" + name + "]"
	}
	anon := func(v *VMA) error {
		if v.File != nil || v.Obj != nil && v.Obj.File != nil || v.Name != "" && v.Name[0] != '[' {
			return errors.New("not anonymous memory")
		}
		return nil
	}
	return m.updateRange(start, end, anon, func(v *VMA) {
		// [heap], [stack] and the like keep their names (Linux shows
		// them in place of the anon name too).
		if v.Name == "" || strings.HasPrefix(v.Name, "[anon:") {
			v.Name = label
		}
	}, nil)
}

// updateRange changes the areas of [start, end), which must all be mapped
// (ErrNoMem) and pass check: the range becomes its own areas, set changes
// each, equal neighbours merge again, and page (when not nil) runs on
// every present page of the range.
func (m *MM) updateRange(start, end uint64, check func(*VMA) error, set func(*VMA), page func(uint64, *Page)) error {
	if end < start || end > TaskSize {
		return ErrNoMem
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for a := start; a < end; {
		i := m.vmaLocked(a)
		if i < 0 {
			return ErrNoMem
		}
		if check != nil {
			if err := check(&m.vmas[i]); err != nil {
				return err
			}
		}
		a = m.vmas[i].End
	}
	m.splitAt(start)
	m.splitAt(end)
	for i := range m.vmas {
		if m.vmas[i].Start >= start && m.vmas[i].End <= end {
			set(&m.vmas[i])
		}
	}
	for i := len(m.vmas) - 1; i >= 0; i-- {
		if i < len(m.vmas) {
			m.mergeAround(i)
		}
	}
	if page != nil {
		m.walkPresent(start, end, page)
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
// non-zero and free, is used as is. The answer is only advice: another
// thread may map the range before the caller does; use MapAnywhere to
// find and map in one step.
func (m *MM) FindFree(hint, length uint64) (uint64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.findFreeLocked(hint, length)
}

// MapAnywhere maps v at a free range of v.End-v.Start bytes (hint first,
// as FindFree) and returns its start: find and map are one step under
// the address-space lock, so concurrent mmaps never get the same range.
// v.Start is ignored.
func (m *MM) MapAnywhere(hint uint64, v VMA) (uint64, error) {
	length := v.End - v.Start
	if length == 0 || length&PageMask != 0 || length > TaskSize {
		return 0, ErrNoMem
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	addr, err := m.findFreeLocked(hint, length)
	if err != nil {
		return 0, err
	}
	v.Start, v.End = addr, addr+length
	m.insertVMA(v)
	m.gen.Add(1)
	return addr, nil
}

// ErrExist is MapNoReplace's answer when the range is not free (EEXIST).
var ErrExist = errors.New("range already mapped")

// MapNoReplace maps v only if nothing is mapped in [v.Start, v.End)
// (MAP_FIXED_NOREPLACE), checking and mapping in one step.
func (m *MM) MapNoReplace(v VMA) error {
	if err := v.checkBounds(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.overlapping(v.Start, v.End)) != 0 {
		return ErrExist
	}
	m.insertVMA(v)
	m.gen.Add(1)
	return nil
}

func (m *MM) findFreeLocked(hint, length uint64) (uint64, error) {
	if length > TaskSize {
		return 0, ErrNoMem
	}
	length = PageAlign(length)
	free := func(a uint64) bool {
		if a < 0x10000 || a+length > TaskSize || a+length < a {
			return false
		}
		return len(m.overlapping(a, a+length)) == 0
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
	p, bus := m.faultIn(addr >> PageShift)
	if p == nil {
		f := &Fault{Addr: addr, Access: acc, Mapped: bus, Bus: bus}
		if !bus && m.Acct.full(1) {
			if _, ok := m.FindVMA(addr); ok {
				f.Mapped, f.OOM = true, true
			}
		}
		return nil, f
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

// Discard is MADV_DONTNEED: the private pages of [start, end) are dropped
// while the mapping stays, so the next touch sees zero-filled pages
// (anonymous memory) or the file's bytes again (private file mappings).
// Shared mappings keep their contents (the pages live on in the shared
// object, as in Linux's page cache and shmem).
func (m *MM) Discard(start, end uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.overlapping(start, end) {
		if v.Obj == nil {
			m.dropPagesLocked(max(start, v.Start), min(end, v.End))
		}
	}
	m.gen.Add(1)
}

// Remove is MADV_REMOVE: the backing store of the shared mappings of
// [start, end) is freed, so every mapping of it reads zeroes (a hole
// punched in a shared file, as Linux's fallocate(PUNCH_HOLE) does). It
// fails on any private part (EINVAL in Linux).
func (m *MM) Remove(start, end uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.overlapping(start, end)
	for _, v := range vs {
		if v.Obj == nil {
			return errors.New("MADV_REMOVE of a private mapping")
		}
	}
	for _, v := range vs {
		lo, hi := max(start, v.Start), min(end, v.End)
		pgoff := (v.Offset + lo - v.Start) >> PageShift
		v.Obj.zero(pgoff, (hi-lo)>>PageShift)
		if v.Obj.File != nil {
			var zero [PageSize]byte
			for a := lo; a < hi; a += PageSize {
				off := int64(v.Offset + a - v.Start)
				if size, err := v.Obj.File.Size(); err != nil || off >= size {
					break
				}
				if _, err := v.Obj.File.WriteAt(zero[:], off); err != nil {
					return err
				}
			}
		}
	}
	m.gen.Add(1)
	return nil
}

// Sync is msync: the shared file mappings of [start, end) write their
// pages back to their files. Every page of the range must be mapped.
func (m *MM) Sync(start, end uint64) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for a := start; a < end; {
		i := m.vmaLocked(a)
		if i < 0 {
			return ErrNoMem
		}
		a = m.vmas[i].End
	}
	for _, v := range m.overlapping(start, end) {
		lo, hi := max(start, v.Start), min(end, v.End)
		if err := v.Obj.Writeback((v.Offset+lo-v.Start)>>PageShift, (hi-lo)>>PageShift); err != nil {
			return err
		}
	}
	return nil
}

// Release is exit_mmap: shared file mappings write back and every page
// leaves the address space. The MM must not be used afterwards.
func (m *MM) Release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.vmas {
		v.Obj.Writeback(v.Offset>>PageShift, (v.End-v.Start)>>PageShift)
	}
	m.vmas = nil
	m.top = [len(m.top)]*ptMid{}
	m.Acct.add(-m.rss)
	m.rss = 0
	m.gen.Add(1)
}

// TotalVM returns the bytes mapped (the VmSize of /proc/PID/status).
func (m *MM) TotalVM() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var n uint64
	for _, v := range m.vmas {
		n += v.End - v.Start
	}
	return n
}

// RSS returns the number of resident pages.
func (m *MM) RSS() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.rss
}

// ErrMemLimit is Fork's answer when the copy would pass the memory limit.
var ErrMemLimit = errors.New("memory limit reached")

// overlapping returns the areas that intersect [start, end) (m.mu held).
func (m *MM) overlapping(start, end uint64) []VMA {
	i := sort.Search(len(m.vmas), func(i int) bool { return m.vmas[i].End > start })
	var out []VMA
	for ; i < len(m.vmas) && m.vmas[i].Start < end; i++ {
		out = append(out, m.vmas[i])
	}
	return out
}

// Mapped reports whether every page of [start, end) is inside a VMA.
func (m *MM) Mapped(start, end uint64) bool {
	if end < start || end > TaskSize {
		return false
	}
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

// Move moves the mapping [old, old+oldLen) to [new, new+newLen) (mremap
// with MREMAP_FIXED): pages move by reference, the area beyond oldLen is
// fresh memory of the same origin, the old range is unmapped and whatever
// was at the destination is replaced. The ranges must not overlap.
func (m *MM) Move(old, oldLen, new, newLen uint64) error {
	if new&PageMask != 0 || new+newLen < new || new+newLen > TaskSize || (new < old+oldLen && old < new+newLen) {
		return ErrNoMem
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.moveLocked(old, oldLen, new, newLen)
}

// MoveAnywhere is mremap with MREMAP_MAYMOVE: it finds a free range of
// newLen bytes and moves the mapping there, in one step under the
// address-space lock (no other thread can take the range in between).
func (m *MM) MoveAnywhere(old, oldLen, newLen uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dst, err := m.findFreeLocked(0, newLen)
	if err != nil {
		return 0, err
	}
	return dst, m.moveLocked(old, oldLen, dst, newLen)
}

func (m *MM) moveLocked(old, oldLen, new, newLen uint64) error {
	i := m.vmaLocked(old)
	if i < 0 || old+oldLen < old || m.vmas[i].End < old+oldLen {
		return ErrNoMem
	}
	v := m.vmas[i]
	type moved struct {
		off uint64
		p   *Page
	}
	// Only present pages move: the cost is what the guest touched, not
	// the size of the reservation.
	var pages []moved
	m.walkPresent(old, old+oldLen, func(vpn uint64, p *Page) {
		if off := vpn<<PageShift - old; off < newLen {
			pages = append(pages, moved{off, p})
		}
	})
	// The old area's pages go with it: no writeback, the object stays.
	m.splitAt(old)
	m.splitAt(old + oldLen)
	out := m.vmas[:0]
	for _, w := range m.vmas {
		if w.Start >= old && w.End <= old+oldLen {
			continue
		}
		out = append(out, w)
	}
	clear(m.vmas[len(out):])
	m.vmas = out
	m.dropPagesLocked(old, old+oldLen)
	m.unmapLocked(new, new+newLen)
	nv := v
	nv.Start, nv.End = new, new+newLen
	nv.Offset = v.Offset + (old - v.Start)
	m.insertVMA(nv)
	for _, mp := range pages {
		m.setPage((new+mp.off)>>PageShift, mp.p)
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
	if i < 0 || end+extra < end || end+extra > TaskSize || m.vmas[i].End < end {
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
// uvm copies present private pages eagerly instead of sharing them
// copy-on-write: simple and exact (the two processes never see each
// other's later writes); the cost is one page copy per touched page at
// fork time. MAP_SHARED areas keep their shared object, so parent and
// child share every page of it, touched or not, as Linux does.
func (m *MM) Fork() (*MM, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.Acct.full(m.rss) {
		return nil, ErrMemLimit
	}
	c := &MM{vmas: append([]VMA(nil), m.vmas...), BrkStart: m.BrkStart, Brk: m.Brk, MmapBase: m.MmapBase, ExePath: m.ExePath, ExeName: m.ExeName, Auxv: m.Auxv, Acct: m.Acct}
	c.users.Store(1)
	for _, v := range m.vmas {
		m.walkPresent(v.Start, v.End, func(vpn uint64, p *Page) {
			if v.Obj != nil {
				c.setPage(vpn, p)
				return
			}
			np := new(Page)
			np.Data = p.Data
			np.prot.Store(p.prot.Load())
			c.setPage(vpn, np)
		})
	}
	return c, nil
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
