package vm

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"

	"github.com/uvm-emu/uvm/internal/hostfence"
)

// TLB is a CPU's software translation cache over an MM: direct-mapped,
// separate read and write sides. It is owned by one CPU (one goroutine)
// and needs no lock.
//
// Memory model for parallel guest threads: guest pages are plain byte
// arrays shared by the goroutines that run the threads of a thread group.
// Ordinary guest loads and stores are plain Go memory accesses (a racing
// guest gets racy results, as on hardware; Go's race detector would see
// guest races, so -race runs use the deterministic scheduler). Atomic guest
// operations (LDXR/STXR pairs, LOCK-prefixed x86 instructions, CAS) go
// through Atomic32/Atomic64, which return pointers into the page for
// sync/atomic; misaligned or page-crossing atomics fall back to
// SplitLock, one global lock for all of them, which is exactly x86's split
// lock behaviour.
//
// Invalidation: every munmap/mprotect, and every page that gains
// predecoded code, bumps MM.gen. Sync compares and flushes; the CPU calls
// it on entry to Run (Enter), after filling its instruction cache
// (SyncCode, which also shoots down the other CPUs' write entries of a
// page that became code) and on every TLB miss. A thread that unmaps memory another thread is using
// sees the change at that thread's next exit at the latest.
//
// Shootdown: fork (pages become copy-on-write) and a copy-on-write copy
// (the page changes under the other threads) must not return while a
// CPU of the address space could still use an older translation: a
// write entry would let a parent thread store into a page the child
// sees, a read entry would let a thread read the page its process no
// longer owns. Such changes bump MM.gen and then wait (MM.shootdown)
// until every other TLB of the address space is either outside guest
// execution (between Leave and Enter: it resyncs on Enter) or has synced
// to the new generation, interrupting the CPUs that are executing. The
// interpreters bracket Run and Step with Enter and Leave.
type TLB struct {
	mm  *MM
	gen uint64
	// codeSeen is the MM.codeGen this TLB's owner last shot down for
	// (SyncCode). Owner-only.
	codeSeen uint64
	r        [tlbSize]tlbEntry
	w        [tlbSize]tlbEntry
	// Fault holds the fault of the last failed access.
	Fault Fault

	// active is 0 outside guest execution; between Enter and Leave it is
	// 1 + the generation the entries are valid for. Written by the
	// owner (setActive: hostfence.Store, a plain store where the
	// shootdowns fence for it), read by shootdowns (atomic.LoadUint64
	// after hostfence.Heavy).
	active uint64
	inRun  bool // owner-only mirror of active != 0
	// kick interrupts the owning CPU (CPU.Interrupt); nil: a shootdown
	// just waits for the next Sync or Leave.
	kick func()

	// watch is the debugger's watchpoint set of the owning thread (nil:
	// none; watch.go). Owner-only.
	watch *WatchSet
	// WatchHit is the first watchpoint hit since the owner last cleared
	// it, by an access that completed (WatchSet.Before false).
	WatchHit WatchHit
}

const (
	tlbBits = 8
	tlbSize = 1 << tlbBits
	tlbMask = tlbSize - 1
	noTag   = ^uint64(0)
)

type tlbEntry struct {
	tag  uint64 // virtual page number, noTag when empty
	data *[PageSize]byte
}

// SplitLock serialises atomic operations that are misaligned or cross a
// page boundary.
var SplitLock sync.Mutex

// NewTLB returns an empty TLB for mm, known to mm's shootdowns.
func NewTLB(mm *MM) *TLB {
	t := &TLB{mm: mm}
	t.flush(mm.gen.Load())
	mm.addTLB(t)
	return t
}

// SetInterrupt sets how a shootdown interrupts the CPU that owns the TLB
// (its Interrupt method), so that it leaves Run and resyncs.
func (t *TLB) SetInterrupt(kick func()) { t.kick = kick }

// MM returns the address space the TLB translates.
func (t *TLB) MM() *MM { return t.mm }

// flush is out of line so that Enter, which calls it only after a
// change, inlines into its callers.
//
//go:noinline
func (t *TLB) flush(g uint64) {
	for i := range t.r {
		t.r[i] = tlbEntry{tag: noTag}
		t.w[i] = tlbEntry{tag: noTag}
	}
	t.gen = g
	if t.inRun {
		t.setActive(g + 1)
	}
}

// Sync drops all entries if the address space changed since the last fill.
func (t *TLB) Sync() {
	if g := t.mm.gen.Load(); t.gen != g {
		t.flush(g)
	}
}

// SyncCode is Sync after an instruction fetch went to the address space
// (MM.CodePage, on a miss of the CPU's decoded-page cache). When a page
// has gained predecoded code since this TLB last looked, another CPU of
// the address space may still hold a write entry for it, whose stores
// would bypass CodeVersion: a writer thread that filled the page before
// it was first executed would then rewrite it after a handover without
// the executing thread ever seeing the new code. The fetching CPU waits
// until every other one has resynced (a shootdown; once per page that
// becomes code), after dropping its own entries.
func (t *TLB) SyncCode() {
	t.Sync()
	if g := t.mm.codeGen.Load(); g > t.codeSeen {
		t.codeSeen = g
		t.mm.shootdown(t, g)
	}
}

// Enter marks the start of guest execution on this TLB (entry to Run or
// Step) and resyncs it. Announcing first and reading the generation
// second means a shootdown either sees the CPU executing or the CPU sees
// the shootdown's generation (the store-load order that needs is the
// store's own or, with a plain store, the shootdown's hostfence.Heavy).
// The announcement names the generation the entries were filled at
// (t.gen), so a shootdown of any later one waits; one store per entry (a
// syscall or uprobe round trip enters once).
func (t *TLB) Enter() {
	t.inRun = true
	t.setActive(t.gen + 1)
	if g := t.mm.gen.Load(); t.gen != g {
		t.flush(g)
	}
}

// Leave marks the end of guest execution (Run or Step returns).
func (t *TLB) Leave() {
	t.inRun = false
	t.setActive(0)
}

// setActive stores the announcement.
func (t *TLB) setActive(v uint64) { hostfence.Store(&t.active, v) }

// stale reports whether t may still use translations older than
// generation g: it is executing and has not synced to g.
func (t *TLB) stale(g uint64) bool {
	a := atomic.LoadUint64(&t.active)
	return a != 0 && a-1 < g
}

// adopt brings the caller's own TLB to generation g after a change it
// made itself: when g is the only change since its last sync, the entry
// the caller is about to refill is the only one affected and nothing is
// flushed.
func (t *TLB) adopt(g uint64) {
	if t.gen == g-1 {
		t.gen = g
		if t.inRun {
			t.setActive(g + 1)
		}
		return
	}
	t.Sync()
}

// LockSplit takes SplitLock for the CPU that owns t. While it waits, the
// CPU counts as outside guest execution for shootdowns (the holder may
// be waiting for one: its store under the lock can copy a copy-on-write
// page) and it resyncs once it holds the lock, so the wait cannot
// deadlock.
func (t *TLB) LockSplit() {
	if SplitLock.TryLock() {
		return
	}
	in := t.inRun
	if in {
		t.Leave()
	}
	SplitLock.Lock()
	if in {
		t.Enter()
	}
}

// addTLB registers t for shootdowns, pruning collected TLBs now and then.
func (m *MM) addTLB(t *TLB) {
	m.tlbMu.Lock()
	defer m.tlbMu.Unlock()
	if len(m.tlbs) >= m.tlbsPrune {
		live := m.tlbs[:0]
		for _, w := range m.tlbs {
			if w.Value() != nil {
				live = append(live, w)
			}
		}
		clear(m.tlbs[len(live):])
		m.tlbs = live
		m.tlbsPrune = 2*len(live) + 16
	}
	m.tlbs = append(m.tlbs, weak.Make(t))
}

// shootdown returns once no TLB of m other than self can use a
// translation older than generation g (Linux's flush_tlb_mm with its
// IPIs): executing CPUs that have not synced to g are interrupted and
// waited for. self (the caller's own TLB, nil for kernel-side callers)
// adopts g itself. The caller holds no MM lock: the CPUs waited for may
// need one to reach their next Sync or Leave.
func (m *MM) shootdown(self *TLB, g uint64) {
	if self != nil {
		self.adopt(g)
	}
	var wait []*TLB
	m.tlbMu.Lock()
	for _, w := range m.tlbs {
		if t := w.Value(); t != nil && t != self {
			wait = append(wait, t)
		}
	}
	m.tlbMu.Unlock()
	if len(wait) == 0 {
		return
	}
	// An Enter announced with a plain store may still sit in its CPU's
	// store buffer: after Heavy every such store is visible here, and
	// every Enter after it reads g.
	hostfence.Heavy()
	keep := wait[:0]
	for _, t := range wait {
		if t.stale(g) {
			keep = append(keep, t)
		}
	}
	wait = keep
	for _, t := range wait {
		if t.kick != nil {
			t.kick()
		}
		for spin := 0; t.stale(g); spin++ {
			if spin < 64 {
				runtime.Gosched()
			} else {
				time.Sleep(20 * time.Microsecond)
			}
		}
	}
}

// fill translates the page of addr for acc and caches it. On failure it
// records t.Fault and returns nil. A miss first resyncs the TLB, so a
// thread that takes one after a fork or copy-on-write copy keeps no
// older entry.
//
// n and k describe the access on this page (its length, and WatchRead,
// WatchWrite or both for a read-modify-write) for the watchpoint check:
// a page a live WatchSet watches is checked and never cached.
func (t *TLB) fill(addr uint64, acc Access, n int, k WatchKind) *[PageSize]byte {
	t.Sync()
	p, prot, f := t.mm.translate(addr, acc, t)
	if f != nil {
		t.Fault = *f
		return nil
	}
	vpn := addr >> PageShift
	if s := t.watch; s.live() && s.onPage(vpn) {
		if !t.watchFill(s, addr, n, acc, k) {
			return nil
		}
		return &p.Data
	}
	if acc == AccessWrite {
		if p.hasCode.Load() {
			// Stores to pages with predecoded code are never cached, so
			// each one bumps CodeVersion (slow path). The read entry
			// may name the page this write replaced (copy-on-write).
			if e := &t.r[vpn&tlbMask]; e.tag == vpn && e.data != &p.Data {
				*e = tlbEntry{tag: noTag}
			}
			return &p.Data
		}
		t.w[vpn&tlbMask] = tlbEntry{tag: vpn, data: &p.Data}
		// A writable page is readable on both architectures.
	}
	if prot&ProtRead != 0 {
		t.r[vpn&tlbMask] = tlbEntry{tag: vpn, data: &p.Data}
	} else if e := &t.r[vpn&tlbMask]; e.tag == vpn {
		*e = tlbEntry{tag: noTag}
	}
	return &p.Data
}

// readPage returns the page for a load of n bytes at addr (within the page).
func (t *TLB) readPage(addr uint64, n int) *[PageSize]byte {
	e := &t.r[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift {
		return e.data
	}
	return t.fill(addr, AccessRead, n, WatchRead)
}

// writePage returns the page for a store, bumping CodeVersion when the page
// holds predecoded code.
// n and k are the access's length on the page and watch kind (fill).
func (t *TLB) writePage(addr uint64, n int, k WatchKind) *[PageSize]byte {
	e := &t.w[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift {
		return e.data
	}
	d := t.fill(addr, AccessWrite, n, k)
	if d != nil {
		p := (*Page)(unsafe.Pointer(d))
		if p.hasCode.Load() {
			p.CodeVersion.Add(1)
		}
	}
	return d
}

// Load8 reads one byte. ok is false on a fault (see t.Fault).
//
// The fast paths of Load*/Store* are small enough for the Go compiler to
// inline into the interpreters; misses and page-crossing accesses go to
// the out-of-line slow paths.
func (t *TLB) Load8(addr uint64) (uint8, bool) {
	e := &t.r[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift {
		return *(*uint8)(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)), true
	}
	v, ok := t.loadSlow(addr, 1)
	return uint8(v), ok
}

// Load16 reads a little-endian 16-bit value.
func (t *TLB) Load16(addr uint64) (uint16, bool) {
	e := &t.r[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift && addr&PageMask <= PageSize-2 {
		return le16(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)), true
	}
	v, ok := t.loadSlow(addr, 2)
	return uint16(v), ok
}

// Load32 reads a little-endian 32-bit value.
func (t *TLB) Load32(addr uint64) (uint32, bool) {
	e := &t.r[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift && addr&PageMask <= PageSize-4 {
		return le32(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)), true
	}
	v, ok := t.loadSlow(addr, 4)
	return uint32(v), ok
}

// Load64 reads a little-endian 64-bit value.
func (t *TLB) Load64(addr uint64) (uint64, bool) {
	e := &t.r[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift && addr&PageMask <= PageSize-8 {
		return le64(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)), true
	}
	return t.loadSlow(addr, 8)
}

// Load128 reads 16 little-endian bytes as two 64-bit halves with one TLB
// probe when they lie on one cached page; otherwise it is Load64(addr)
// then Load64(addr+8), with their faults.
func (t *TLB) Load128(addr uint64) (lo, hi uint64, ok bool) {
	e := &t.r[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift && addr&PageMask <= PageSize-16 {
		p := unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)
		return le64(p), le64(unsafe.Add(p, 8)), true
	}
	return t.load128Slow(addr)
}

// load128Slow is Load128 off its fast path.
//
//go:noinline
func (t *TLB) load128Slow(addr uint64) (lo, hi uint64, ok bool) {
	if lo, ok = t.Load64(addr); !ok {
		return 0, 0, false
	}
	hi, ok = t.Load64(addr + 8)
	return lo, hi, ok
}

// pageChunk is how many of the n bytes at addr lie on addr's page.
func pageChunk(addr uint64, n int) int { return min(n, int(PageSize-addr&PageMask)) }

// loadSlow handles TLB misses and page-crossing loads of n ≤ 8 bytes.
//
//go:noinline
func (t *TLB) loadSlow(addr uint64, n int) (uint64, bool) {
	var b [8]byte
	for i := 0; i < n; {
		a := addr + uint64(i)
		d := t.readPage(a, pageChunk(a, n-i))
		if d == nil {
			return 0, false
		}
		i += copy(b[i:n], d[a&PageMask:])
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

// Store8 writes one byte.
func (t *TLB) Store8(addr uint64, v uint8) bool {
	e := &t.w[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift {
		*(*uint8)(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)) = v
		return true
	}
	return t.storeSlow(addr, uint64(v), 1)
}

// Store16 writes a little-endian 16-bit value.
func (t *TLB) Store16(addr uint64, v uint16) bool {
	e := &t.w[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift && addr&PageMask <= PageSize-2 {
		put16(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask), v)
		return true
	}
	return t.storeSlow(addr, uint64(v), 2)
}

// Store32 writes a little-endian 32-bit value.
func (t *TLB) Store32(addr uint64, v uint32) bool {
	e := &t.w[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift && addr&PageMask <= PageSize-4 {
		put32(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask), v)
		return true
	}
	return t.storeSlow(addr, uint64(v), 4)
}

// Store64 writes a little-endian 64-bit value.
func (t *TLB) Store64(addr uint64, v uint64) bool {
	e := &t.w[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift && addr&PageMask <= PageSize-8 {
		put64(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask), v)
		return true
	}
	return t.storeSlow(addr, v, 8)
}

// Store128 writes lo then hi as 16 little-endian bytes with one TLB probe
// when they lie on one cached page; otherwise it is two Store64s on one
// page, or StoreBytes across pages (both pages translated first, so a
// fault writes nothing).
func (t *TLB) Store128(addr, lo, hi uint64) bool {
	e := &t.w[(addr>>PageShift)&tlbMask]
	if e.tag == addr>>PageShift && addr&PageMask <= PageSize-16 {
		p := unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)
		put64(p, lo)
		put64(unsafe.Add(p, 8), hi)
		return true
	}
	return t.store128Slow(addr, lo, hi)
}

// store128Slow is Store128 off its fast path.
//
//go:noinline
func (t *TLB) store128Slow(addr, lo, hi uint64) bool {
	if addr&PageMask <= PageSize-16 {
		if !t.Store64(addr, lo) {
			return false
		}
		return t.Store64(addr+8, hi) // same page: cannot fault now
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	return t.StoreBytes(addr, b[:])
}

// storeSlow handles misses and page-crossing stores. Both pages are
// translated before any byte is written, so a faulting store has no effect.
//
//go:noinline
func (t *TLB) storeSlow(addr, v uint64, n int) bool {
	d0 := t.writePage(addr, pageChunk(addr, n), WatchWrite)
	if d0 == nil {
		return false
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	off := addr & PageMask
	if int(off)+n <= PageSize {
		copy(d0[off:], b[:n])
		return true
	}
	d1 := t.writePage(addr&^PageMask+PageSize, n-pageChunk(addr, n), WatchWrite)
	if d1 == nil {
		return false
	}
	k := copy(d0[off:], b[:n])
	copy(d1[:], b[k:n])
	return true
}

// LoadBytes copies len(b) bytes from guest memory (any size, any alignment).
func (t *TLB) LoadBytes(addr uint64, b []byte) bool {
	for i := 0; i < len(b); {
		a := addr + uint64(i)
		d := t.readPage(a, pageChunk(a, len(b)-i))
		if d == nil {
			return false
		}
		i += copy(b[i:], d[a&PageMask:])
	}
	return true
}

// StoreBytes copies b into guest memory. Every page is checked first, so
// a faulting store writes nothing. A range that runs past the top of the
// address space (or wraps past 2^64) faults at the first page outside
// user space.
func (t *TLB) StoreBytes(addr uint64, b []byte) bool {
	if len(b) == 0 {
		return true
	}
	first := addr &^ PageMask
	pages := ((addr&PageMask)+uint64(len(b))-1)>>PageShift + 1
	for k := uint64(0); k < pages; k++ {
		a := first + k<<PageShift
		lo, hi := max(a, addr), min(a+PageSize, addr+uint64(len(b)))
		if hi < lo { // wraps past 2^64: the page faults anyway
			hi = lo + 1
		}
		if t.writePage(lo, int(hi-lo), WatchWrite) == nil {
			if k == 0 && t.Fault.Watch == 0 {
				t.Fault.Addr = addr
			}
			return false
		}
	}
	for i := 0; i < len(b); {
		a := addr + uint64(i)
		d := t.writePage(a, pageChunk(a, len(b)-i), WatchWrite)
		if d == nil {
			// Unmapped by another thread between the check and the copy
			// (pages with predecoded code are translated on every store).
			return false
		}
		i += copy(d[a&PageMask:], b[i:])
	}
	return true
}

// Atomic32 returns a pointer to the aligned 32-bit word at addr for
// sync/atomic read-modify-write. The page must be writable. ok is false
// on a fault; ptr is nil (and ok true) when addr is misaligned, in which
// case the caller must do the operation under SplitLock with plain
// Load/Store.
func (t *TLB) Atomic32(addr uint64) (ptr *uint32, ok bool) {
	d := t.writePage(addr, pageChunk(addr, 4), WatchAccess)
	if d == nil {
		return nil, false
	}
	if addr&3 != 0 {
		return nil, true
	}
	return (*uint32)(unsafe.Pointer(&d[addr&PageMask])), true
}

// Atomic64 is Atomic32 for 64-bit words.
func (t *TLB) Atomic64(addr uint64) (ptr *uint64, ok bool) {
	d := t.writePage(addr, pageChunk(addr, 8), WatchAccess)
	if d == nil {
		return nil, false
	}
	if addr&7 != 0 {
		return nil, true
	}
	return (*uint64)(unsafe.Pointer(&d[addr&PageMask])), true
}

// ReadUser copies len(b) bytes at addr into b for the kernel side of the
// owning thread (a copy_from_user the uprobe code makes for the thread
// it runs on: the x86 return address, the uretprobe trampoline's saved
// registers) when the whole range lies on one page this TLB holds a read
// translation for. Otherwise it copies nothing and reports false, and
// the caller takes MM.ReadAt's path, which gives the same answer the
// slow way (faults, watched pages and pages never cached included).
//
// Only the owner calls it, outside Run: the access is bracketed by Enter
// and Leave like guest execution, so that a shootdown (fork, a
// copy-on-write copy in another thread) either waits for it or is seen
// by Enter's resync, which drops every entry older than the change.
func (t *TLB) ReadUser(b []byte, addr uint64) bool {
	if len(b) == 0 || int(addr&PageMask)+len(b) > PageSize || t.inRun {
		return false
	}
	t.Enter()
	ok := false
	if e := &t.r[(addr>>PageShift)&tlbMask]; e.tag == addr>>PageShift {
		copy(b, e.data[addr&PageMask:])
		ok = true
	}
	t.Leave()
	return ok
}

// WriteUser is ReadUser's copy_to_user: it writes b at addr when the
// range lies on one page this TLB holds a write translation for (never
// a page holding predecoded code, a copy-on-write page or a watched one:
// fill caches none of those), and reports false, writing nothing,
// otherwise, for the caller to take MM.WriteAt's path.
func (t *TLB) WriteUser(b []byte, addr uint64) bool {
	if len(b) == 0 || int(addr&PageMask)+len(b) > PageSize || t.inRun {
		return false
	}
	t.Enter()
	ok := false
	if e := &t.w[(addr>>PageShift)&tlbMask]; e.tag == addr>>PageShift {
		copy(e.data[addr&PageMask:], b)
		ok = true
	}
	t.Leave()
	return ok
}

// ReadUserWords is ReadUser of len(w) little-endian 64-bit words at addr
// (8*len(w) bytes, any alignment), decoded into w: one translation and
// no byte copy for the uprobe code's word-sized user accesses (the x86
// return address, the uretprobe trampoline's three saved registers). It
// hits and misses exactly where ReadUser of those bytes would.
func (t *TLB) ReadUserWords(w []uint64, addr uint64) bool {
	n := uint64(len(w)) * 8
	if n == 0 || addr&PageMask+n > PageSize || t.inRun {
		return false
	}
	t.Enter()
	ok := false
	if e := &t.r[(addr>>PageShift)&tlbMask]; e.tag == addr>>PageShift {
		p := unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)
		for i := range w {
			w[i] = le64(unsafe.Add(p, 8*i))
		}
		ok = true
	}
	t.Leave()
	return ok
}

// WriteUserWords is WriteUser of the words w, little-endian, at addr
// (see ReadUserWords): all of them or, reporting false, none.
func (t *TLB) WriteUserWords(w []uint64, addr uint64) bool {
	n := uint64(len(w)) * 8
	if n == 0 || addr&PageMask+n > PageSize || t.inRun {
		return false
	}
	t.Enter()
	ok := false
	if e := &t.w[(addr>>PageShift)&tlbMask]; e.tag == addr>>PageShift {
		p := unsafe.Add(unsafe.Pointer(e.data), addr&PageMask)
		for i, v := range w {
			put64(unsafe.Add(p, 8*i), v)
		}
		ok = true
	}
	t.Leave()
	return ok
}

// SwapUserWord is ReadUserWords of the word at addr and then, when it
// is not v, WriteUserWords of v there, under one Enter (the uprobe
// code's return-address hijack). read reports that the read hit (old is
// the word); written that v is there now (it was, or the write hit).
// A write that would miss writes nothing, for the caller to take
// MM.WriteAt's path.
func (t *TLB) SwapUserWord(addr, v uint64) (old uint64, read, written bool) {
	if addr&PageMask > PageSize-8 || t.inRun {
		return 0, false, false
	}
	t.Enter()
	vpn := addr >> PageShift
	if e := &t.r[vpn&tlbMask]; e.tag == vpn {
		read = true
		old = le64(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask))
		written = old == v
		if e := &t.w[vpn&tlbMask]; !written && e.tag == vpn {
			put64(unsafe.Add(unsafe.Pointer(e.data), addr&PageMask), v)
			written = true
		}
	}
	t.Leave()
	return old, read, written
}
