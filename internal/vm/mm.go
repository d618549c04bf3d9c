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
	"weak"
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
	// Watch is not 0 when the access hit a watchpoint that stops before
	// the access (arm64, watch.go): no fault, a debugger stop.
	Watch WatchKind
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

// Page is one guest page of memory. Its permission is not a property of
// the page but of each page-table entry that maps it (pte.prot), since a
// page may be mapped by several address spaces (copy-on-write after fork,
// or a SharedObject's page) with different permissions.
type Page struct {
	Data [PageSize]byte // first field: TLB entries point here (see writePage)
	// CodeVersion is bumped on every store to this page after it has been
	// decoded for execution, and on mprotect/munmap of it. Predecoded
	// instruction pages remember the version they were built from and are
	// stale once it changes (see package icache).
	CodeVersion atomic.Uint64
	// hasCode is set while some predecoded form of the page may exist;
	// while it is set, stores take the slow path so they bump CodeVersion.
	hasCode atomic.Bool
	// mapcount is the number of address spaces whose page tables hold
	// this page as private memory (Linux's mapcount of an anonymous
	// page): 1 while one address space owns it, more while fork left it
	// shared copy-on-write, when a write by any of them copies it first
	// (MM.breakCOW). Always 0 for a SharedObject's pages, which are never
	// copied. Changed atomically by the address spaces that map the page
	// (fork, breakCOW, unmapping); an address space drops its count only
	// after its CPUs have dropped their translations of the page
	// (putLater), so a page whose count reads 1 is nobody else's.
	mapcount atomic.Int32
}

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
func (o *SharedObject) page(pgoff uint64) (p *Page, bus bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p = o.pages[pgoff]; p != nil {
		return p, false
	}
	p = new(Page)
	if o.File != nil && !fillFromFile(p, o.File, pgoff<<PageShift) {
		return nil, true
	}
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

// pte is a page-table entry: the page and this address space's
// permission for it.
type pte struct {
	page *Page
	prot Prot
}

type ptLeaf [ptSize]pte
type ptMid [ptSize]*ptLeaf

// MemAccount is the memory limit shared by every address space of one
// emulated system (uvm's --mem-limit): it counts resident pages as a
// memory cgroup charges them. A private page counts once however many
// address spaces share it copy-on-write (it is charged when allocated or
// copied and uncharged when its mapcount drops to 0); a SharedObject's
// page counts once per address space that has it mapped. Per-process
// resident sets (MM.RSS) count every present page of each address space,
// shared or not, as Linux's RSS does.
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
// Lock order: BrkMu → MM.mu → SharedObject.mu (a leaf); MM.tlbMu is a
// leaf. Nothing waits for another CPU (shootdown) while holding MM.mu.
// MM.mu takes no lock of tasks/.
type MM struct {
	// mu protects vmas, the page table and MmapBase.
	mu   sync.RWMutex
	vmas []VMA // sorted by Start, non-overlapping
	top  [1 << (AddrBits + 1 - PageShift - 2*ptBits)]*ptMid

	// gen is bumped whenever a translation may have become invalid
	// (munmap, mprotect, a page gaining predecoded code, fork making
	// pages copy-on-write, a copy-on-write copy). TLBs compare it on
	// Sync; fork and copy-on-write copies also wait for the other CPUs
	// to resync (shootdown).
	gen atomic.Uint64
	// codeGen is the generation of the last page gaining predecoded
	// code (CodePage); the fetching CPU shoots the others' write entries
	// down (TLB.SyncCode).
	codeGen atomic.Uint64

	// tlbMu protects tlbs, the translation caches of the CPUs executing
	// in this address space (weak: an exited thread's TLB is collected).
	tlbMu     sync.Mutex
	tlbs      []weak.Pointer[TLB]
	tlbsPrune int

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
	// rss is the number of present pages, shared ones included
	// (protected by mu).
	rss int64
	// putLater holds copy-on-write pages unmapped under mu whose
	// mapcount unlockPut drops after the shootdown (protected by mu).
	putLater []*Page
	// flushPending: a present translation was removed or narrowed under
	// mu (munmap, mprotect, MADV_DONTNEED/REMOVE, mremap), so unlockPut
	// waits for the other CPUs to drop it before the call returns, as
	// Linux's flush_tlb_range does (protected by mu).
	flushPending bool

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

// Users returns the number of processes sharing the address space.
func (m *MM) Users() int32 { return m.users.Load() }

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

func (m *MM) lookupPTE(vpn uint64) pte {
	if e := m.ptePtr(vpn); e != nil {
		return *e
	}
	return pte{}
}

// ptePtr returns the page-table slot of vpn, nil where no leaf exists
// (m.mu held).
func (m *MM) ptePtr(vpn uint64) *pte {
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
	return &leaf[vpn&ptMask]
}

// setPTE installs e at vpn (e.page nil removes the entry), keeping the
// resident count; the memory account and mapcounts are the caller's.
// m.mu is held for writing.
func (m *MM) setPTE(vpn uint64, e pte) {
	old := m.lookupPTE(vpn)
	switch {
	case old.page == nil && e.page != nil:
		m.rss++
	case old.page != nil && e.page == nil:
		m.rss--
	}
	i := vpn >> (2 * ptBits)
	mid := m.top[i]
	if mid == nil {
		if e.page == nil {
			return
		}
		mid = new(ptMid)
		m.top[i] = mid
	}
	leaf := mid[(vpn>>ptBits)&ptMask]
	if leaf == nil {
		if e.page == nil {
			return
		}
		leaf = new(ptLeaf)
		mid[(vpn>>ptBits)&ptMask] = leaf
	}
	leaf[vpn&ptMask] = e
}

// newPrivatePage returns a zeroed page owned by one address space,
// charged to the memory account.
func (m *MM) newPrivatePage() *Page {
	p := new(Page)
	p.mapcount.Store(1)
	m.Acct.add(1)
	return p
}

// putPage drops one address space's reference to p: a SharedObject's
// page is uncharged for this mapping, a private page when its last
// mapping goes.
func (m *MM) putPage(p *Page) {
	if p.mapcount.Load() == 0 || p.mapcount.Add(-1) == 0 {
		m.Acct.add(-1)
	}
}

// zapPTE removes the entry at vpn and drops its page (m.mu held for
// writing). A page shared copy-on-write is dropped only by unlockPut,
// after this space's CPUs let go of it: until then its other owners
// still copy it before writing.
func (m *MM) zapPTE(vpn uint64, p *Page) {
	m.setPTE(vpn, pte{})
	m.flushPending = true
	if p.mapcount.Load() > 1 {
		m.putLater = append(m.putLater, p)
		return
	}
	m.putPage(p)
}

// unlockPut releases m.mu (held for writing) and then, when translations
// were removed or narrowed (flushPending), waits until every other CPU
// of this space has dropped them (shootdown) before it drops the shared
// pages zapPTE set aside and returns: once munmap or mprotect returns no
// thread can still reach the old page, and once another owner writes
// such a page in place no thread here can still read it (Linux flushes
// the TLB before it drops the page's mapping).
func (m *MM) unlockPut() {
	put := m.putLater
	m.putLater = nil
	if len(put) == 0 && !m.flushPending {
		m.mu.Unlock()
		return
	}
	m.flushPending = false
	g := m.gen.Add(1)
	m.mu.Unlock()
	m.shootdown(nil, g)
	for _, p := range put {
		m.putPage(p)
	}
}

// Page returns the page holding addr (allocating it on first touch), or
// nil when addr is not mapped.
func (m *MM) Page(addr uint64) *Page {
	if addr >= TaskSize {
		return nil
	}
	e, _ := m.faultIn(addr >> PageShift)
	return e.page
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
	defer m.unlockPut()
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

// faultIn returns the entry at vpn, allocating its page if its VMA
// exists: zeroed for anonymous memory, read from the file for a private
// file mapping, the shared object's page for MAP_SHARED (with this
// mapping's permission). bus reports a page of a file mapping wholly
// past the end of the file.
func (m *MM) faultIn(vpn uint64) (e pte, bus bool) {
	m.mu.RLock()
	e = m.lookupPTE(vpn)
	m.mu.RUnlock()
	if e.page != nil {
		return e, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e = m.lookupPTE(vpn); e.page != nil {
		return e, false
	}
	i := m.vmaLocked(vpn << PageShift)
	if i < 0 {
		return pte{}, false
	}
	if m.Acct.full(1) {
		return pte{}, false
	}
	v := &m.vmas[i]
	var p *Page
	switch {
	case v.Obj != nil:
		pgoff := (v.Offset + (vpn<<PageShift - v.Start)) >> PageShift
		if p, bus = v.Obj.page(pgoff); p == nil {
			return pte{}, bus
		}
		m.Acct.add(1)
	case v.File != nil:
		p = new(Page)
		if !fillFromFile(p, v.File, v.Offset+(vpn<<PageShift-v.Start)) {
			return pte{}, true
		}
		p.mapcount.Store(1)
		m.Acct.add(1)
	default:
		p = m.newPrivatePage()
	}
	e = pte{page: p, prot: v.Prot}
	m.setPTE(vpn, e)
	return e, false
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
	m.walkPresent(start, end, func(vpn uint64, e *pte) {
		e.page.CodeVersion.Add(1)
		m.zapPTE(vpn, e.page)
	})
}

// walkPresent calls fn for every present page of [start, end) in address
// order, skipping absent levels of the page table, so a range operation
// over a huge empty reservation costs nothing. fn may clear the entry it
// is given (zapPTE, setPTE(vpn, pte{})) or change it in place but must
// not add pages.
func (m *MM) walkPresent(start, end uint64, fn func(vpn uint64, e *pte)) {
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
			if e := &leaf[li]; e.page != nil {
				fn(vpn, e)
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
	m.unlockPut()
}

// Protect changes the permission of [start, end); every page must be
// mapped (else ErrNoMem, as Linux's ENOMEM). Only this address space's
// entries change: a page shared copy-on-write keeps its permission in
// the others.
func (m *MM) Protect(start, end uint64, prot Prot) error {
	return m.updateRange(start, end, nil, func(v *VMA) { v.Prot = prot }, func(_ uint64, e *pte) {
		if e.prot&^prot != 0 {
			m.flushPending = true // a permission taken away
		}
		e.prot = prot
		e.page.CodeVersion.Add(1)
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
func (m *MM) updateRange(start, end uint64, check func(*VMA) error, set func(*VMA), page func(uint64, *pte)) error {
	if end < start || end > TaskSize {
		return ErrNoMem
	}
	m.mu.Lock()
	defer m.unlockPut()
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

// translate returns the page for addr if the access is allowed, with
// this address space's permission for it. A write to a page shared
// copy-on-write copies it first (breakCOW), so the page returned for
// AccessWrite is this address space's own. self is the TLB of the CPU
// asking (nil for kernel-side accesses).
func (m *MM) translate(addr uint64, acc Access, self *TLB) (*Page, Prot, *Fault) {
	if addr >= TaskSize {
		return nil, 0, &Fault{Addr: addr, Access: acc}
	}
	need := ProtRead
	switch acc {
	case AccessWrite:
		need = ProtWrite
	case AccessExec:
		need = ProtExec
	}
	for {
		e, bus := m.faultIn(addr >> PageShift)
		if e.page == nil {
			return nil, 0, m.missFault(addr, acc, bus)
		}
		if e.prot&need == 0 {
			return nil, 0, &Fault{Addr: addr, Access: acc, Mapped: true}
		}
		if acc != AccessWrite || e.page.mapcount.Load() <= 1 {
			return e.page, e.prot, nil
		}
		if f := m.breakCOW(addr, e.page, self); f != nil {
			return nil, 0, f
		}
		// Translate again: the entry now holds this space's copy (or
		// changed under us).
	}
}

// missFault is the fault of an access that found no page: unmapped, past
// the end of a mapped file (SIGBUS), or the memory limit (OOM).
func (m *MM) missFault(addr uint64, acc Access, bus bool) *Fault {
	f := &Fault{Addr: addr, Access: acc, Mapped: bus, Bus: bus}
	if !bus && m.Acct.full(1) {
		if _, ok := m.FindVMA(addr); ok {
			f.Mapped, f.OOM = true, true
		}
	}
	return f
}

// writable returns the page of addr for a store: translate's write path,
// or with force (Poke) the page whatever its permission, copied first
// when it is shared copy-on-write, as the kernel's uprobe_write_opcode
// and ptrace POKETEXT break COW.
func (m *MM) writable(addr uint64, force bool) (*Page, *Fault) {
	if !force {
		p, _, f := m.translate(addr, AccessWrite, nil)
		return p, f
	}
	for {
		p := m.Page(addr)
		if p == nil {
			return nil, &Fault{Addr: addr, Access: AccessWrite}
		}
		if p.mapcount.Load() <= 1 {
			return p, nil
		}
		if f := m.breakCOW(addr, p, nil); f != nil {
			return nil, f
		}
	}
}

// breakCOW gives this address space its own copy of old, the page at
// addr that fork left shared (do_wp_page → wp_page_copy): the copy
// replaces old in this page table only, old loses one mapping (the last
// mapper of a page writes it in place without a copy), and every CPU of
// this address space drops its translations before the write goes on,
// so no thread of the process keeps reading old. The caller translates
// again; nil with no fault also when the entry changed meanwhile.
func (m *MM) breakCOW(addr uint64, old *Page, self *TLB) *Fault {
	vpn := addr >> PageShift
	m.mu.Lock()
	e := m.ptePtr(vpn)
	if e == nil || e.page != old || old.mapcount.Load() <= 1 {
		m.mu.Unlock()
		return nil
	}
	if m.Acct.full(1) {
		m.mu.Unlock()
		return &Fault{Addr: addr, Access: AccessWrite, Mapped: true, OOM: true}
	}
	np := m.newPrivatePage()
	np.Data = old.Data
	e.page = np
	if old.hasCode.Load() {
		// This space's predecoded code was built from old: it must be
		// decoded again from the copy (the other spaces redecode old
		// once, harmlessly).
		old.CodeVersion.Add(1)
	}
	g := m.gen.Add(1)
	m.mu.Unlock()
	m.shootdown(self, g)
	m.putPage(old)
	return nil
}

// CodePage returns the page holding pc for instruction fetch and marks it
// as holding predecoded code, so later stores to it bump its CodeVersion.
func (m *MM) CodePage(pc uint64) (*Page, *Fault) {
	p, _, f := m.translate(pc, AccessExec, nil)
	if f != nil {
		return nil, f
	}
	if !p.hasCode.Load() {
		p.hasCode.Store(true)
		// Drop every TLB's write entry for this page: stores must now take
		// the slow path that bumps CodeVersion. The fetching CPU waits
		// for the others (TLB.SyncCode).
		m.codeGen.Store(m.gen.Add(1))
	}
	return p, nil
}

// storeSlow writes b at addr, page by page, with permission checks. force
// ignores permissions (ptrace-style POKE, used for breakpoints).
func (m *MM) store(addr uint64, b []byte, force bool) error {
	for len(b) > 0 {
		off := addr & PageMask
		n := min(len(b), PageSize-int(off))
		if force {
			// A kernel-side write of the bytes already there (a uprobe
			// XOL slot rewritten with the same instruction) changes
			// nothing: it neither invalidates predecoded code nor
			// copies a page shared copy-on-write.
			if p := m.Page(addr); p != nil && bytes.Equal(p.Data[off:off+uint64(n)], b[:n]) {
				b = b[n:]
				addr += uint64(n)
				continue
			}
		}
		p, f := m.writable(addr, force)
		if f != nil {
			return f
		}
		if p.hasCode.Load() {
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
			p, _, f = m.translate(addr, acc, nil)
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
	defer m.unlockPut()
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
	defer m.unlockPut()
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
		m.flushPending = true
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
	// Every page loses this mapping: pages shared copy-on-write become
	// their other owners' (a fork child that execs or exits leaves its
	// parent writing in place again).
	m.walkPresent(0, TaskSize, func(_ uint64, e *pte) { m.putPage(e.page) })
	m.vmas = nil
	m.top = [len(m.top)]*ptMid{}
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
	defer m.unlockPut()
	return m.moveLocked(old, oldLen, new, newLen)
}

// MoveAnywhere is mremap with MREMAP_MAYMOVE: it finds a free range of
// newLen bytes and moves the mapping there, in one step under the
// address-space lock (no other thread can take the range in between).
func (m *MM) MoveAnywhere(old, oldLen, newLen uint64) (uint64, error) {
	m.mu.Lock()
	defer m.unlockPut()
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
		e   pte
	}
	// Only present pages move: the cost is what the guest touched, not
	// the size of the reservation. They move with their mapcount and
	// charge; the entries left behind are cleared first so that
	// dropPagesLocked only drops what does not fit the new length.
	var pages []moved
	m.walkPresent(old, old+oldLen, func(vpn uint64, e *pte) {
		if off := vpn<<PageShift - old; off < newLen {
			pages = append(pages, moved{off, *e})
			e.page.CodeVersion.Add(1)
			m.setPTE(vpn, pte{})
			m.flushPending = true
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
		m.setPTE((new+mp.off)>>PageShift, mp.e)
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

// Fork returns the address space of a child process (fork(2)), copy-on-
// write as Linux's dup_mmap: every present private page is shared by
// parent and child (its mapcount grows) and copied by whichever of them
// writes it first (breakCOW), so fork costs the page table, not the
// memory. MAP_SHARED areas keep their shared object, so parent and child
// share every page of it, touched or not, and never copy it. Before Fork
// returns, every other CPU of the parent has dropped its translations
// (shootdown): no parent thread can store into a page the child sees
// once fork has returned.
func (m *MM) Fork() (*MM, error) {
	m.mu.RLock()
	var objPages int64
	for _, v := range m.vmas {
		if v.Obj != nil {
			m.walkPresent(v.Start, v.End, func(uint64, *pte) { objPages++ })
		}
	}
	if m.Acct.full(objPages) {
		m.mu.RUnlock()
		return nil, ErrMemLimit
	}
	c := &MM{vmas: append([]VMA(nil), m.vmas...), BrkStart: m.BrkStart, Brk: m.Brk, MmapBase: m.MmapBase, ExePath: m.ExePath, ExeName: m.ExeName, Auxv: m.Auxv, Acct: m.Acct}
	c.users.Store(1)
	for _, v := range m.vmas {
		m.walkPresent(v.Start, v.End, func(vpn uint64, e *pte) {
			if v.Obj != nil {
				m.Acct.add(1)
			} else {
				e.page.mapcount.Add(1)
			}
			c.setPTE(vpn, *e)
		})
	}
	g := m.gen.Add(1)
	m.mu.RUnlock()
	m.shootdown(nil, g)
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

// PssShift is the fixed-point shift of Residency's proportional share
// (Linux's PSS_SHIFT).
const PssShift = 12

// Residency counts the pages present in [start, end) for smaps: all of
// them, those this address space maps alone (a mapcount of at most one;
// a SharedObject's pages, whose sharers are not counted, are this address
// space's own), and the proportional set size in bytes << PssShift (a
// page shared copy-on-write by n address spaces counts 1/n).
func (m *MM) Residency(start, end uint64) (present, private int64, pss uint64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	m.walkPresent(start, end, func(_ uint64, e *pte) {
		present++
		n := uint64(max(e.page.mapcount.Load(), 1))
		if n == 1 {
			private++
		}
		pss += (PageSize << PssShift) / n
	})
	return present, private, pss
}
