package icache

import (
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// X86Cache is the predecoded-instruction cache of one x86-64 address space
// (stored in vm.MM.Code and shared by every thread of the MM).
//
// x86 instructions have variable length and a program may jump into the
// middle of what a linear sweep would call another instruction, so pages
// are decoded lazily, one instruction at a time, the first time its
// address is executed. Each X86Page indexes its records by the byte
// offset of the instruction's first byte.
//
// Validity: an X86Page was built from its vm.Page at CodeVersion Ver; it
// is valid while that version is unchanged and, when some instruction of
// the page runs into the following page, while that page's version is
// unchanged too. The interpreter re-checks validity on entry to Run/Step,
// at every taken branch and when execution crosses into another page. A
// store to code is therefore visible to instruction fetch after the next
// taken branch (or page crossing) — uvm's version of x86's rule that
// modified code must be followed by a jump (or serialising instruction)
// before it is guaranteed to execute.
type X86Cache struct {
	mm    *vm.MM
	mu    sync.Mutex
	pages map[uint64]*X86Page // by virtual page number
}

// NewX86Cache returns an empty cache for mm.
func NewX86Cache(mm *vm.MM) *X86Cache {
	return &X86Cache{mm: mm, pages: make(map[uint64]*X86Page)}
}

// x86ChunkSize is the number of records allocated at a time per page.
const x86ChunkSize = 64

// X86Page holds the decoded instructions of one guest page.
type X86Page struct {
	// VPN is the virtual page number (address >> vm.PageShift).
	VPN  uint64
	page *vm.Page
	ver  uint64
	// next is the following page when an instruction of this page runs
	// into it; nextVer its CodeVersion when that instruction was decoded.
	next    atomic.Pointer[vm.Page]
	nextVer atomic.Uint64

	// index[off] points to the record of the instruction starting at byte
	// offset off, nil until decoded. Written under mu after the record is
	// complete; read without locks.
	index [vm.PageSize]atomic.Pointer[decode.X86]

	mu    sync.Mutex
	chunk *[x86ChunkSize]decode.X86
	used  int
}

// Valid reports whether the page's decoded instructions still match guest
// memory.
func (p *X86Page) Valid() bool {
	if p.page.CodeVersion.Load() != p.ver {
		return false
	}
	if n := p.next.Load(); n != nil && n.CodeVersion.Load() != p.nextVer.Load() {
		return false
	}
	return true
}

// At returns the decoded instruction at pc (which must lie in this page),
// or nil when it has not been decoded yet (call Decode).
func (p *X86Page) At(pc uint64) *decode.X86 {
	return p.index[pc&vm.PageMask].Load()
}

// Lookup returns a valid decoded page for pc, building a new one when
// there is none or the cached one is stale. It fails with a fault when pc
// is not executable. The caller must call tlb.Sync() after a successful
// Lookup (vm.MM.CodePage may have changed translations).
func (c *X86Cache) Lookup(pc uint64) (*X86Page, *vm.Fault) {
	vpn := pc >> vm.PageShift
	c.mu.Lock()
	p := c.pages[vpn]
	c.mu.Unlock()
	if p != nil && p.Valid() {
		return p, nil
	}
	pg, f := c.mm.CodePage(pc)
	if f != nil {
		return nil, f
	}
	np := &X86Page{VPN: vpn, page: pg, ver: pg.CodeVersion.Load()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.pages[vpn]; q != nil && q != p && q.page == pg && q.Valid() {
		return q, nil // another thread rebuilt it first
	}
	c.pages[vpn] = np
	return np, nil
}

// DecodeResult says what Decode produced.
type DecodeResult uint8

const (
	// DecodeOK: the record is ready (possibly with Op X86Undefined when
	// the bytes are not an implemented instruction).
	DecodeOK DecodeResult = iota
	// DecodeStale: the page changed since it was built; look it up again.
	DecodeStale
	// DecodeFault: the instruction runs into a page that cannot be
	// executed; the fault is returned.
	DecodeFault
)

// Decode decodes the instruction at pc (in this page), caches and returns
// it. mm is the address space the page belongs to.
func (p *X86Page) Decode(mm *vm.MM, pc uint64) (*decode.X86, *vm.Fault, DecodeResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, f, res := p.decodeLocked(mm, pc)
	if res == DecodeOK && p.index[pc&vm.PageMask].Load() == nil {
		p.index[pc&vm.PageMask].Store(r)
	}
	return r, f, res
}

// decodeLocked is Decode with p.mu held, except that a new record is
// returned unpublished (its index entry is still nil).
func (p *X86Page) decodeLocked(mm *vm.MM, pc uint64) (*decode.X86, *vm.Fault, DecodeResult) {
	off := pc & vm.PageMask
	if r := p.index[off].Load(); r != nil {
		return r, nil, DecodeOK
	}
	if p.page.CodeVersion.Load() != p.ver {
		return nil, nil, DecodeStale
	}
	var buf [16]byte
	n := copy(buf[:15], p.page.Data[off:])
	var rec decode.X86
	err := decode.DecodeX86Into(buf[:n], pc, &rec)
	rec.PC = pc
	if (err == decode.ErrTruncated || err == decode.ErrUndefined) && n < 15 {
		// The instruction may run into the next page. (An "undefined"
		// result can also come from missing bytes that the decoder
		// could not recognise as truncation, so retry those too.)
		nextAddr := (pc | vm.PageMask) + 1
		np, f := mm.CodePage(nextAddr)
		if f != nil {
			if err == decode.ErrTruncated {
				return nil, f, DecodeFault
			}
		} else {
			nv := np.CodeVersion.Load()
			m := copy(buf[n:15], np.Data[:])
			var rec2 decode.X86
			err2 := decode.DecodeX86Into(buf[:n+m], pc, &rec2)
			if err == decode.ErrTruncated || (err2 != decode.ErrTruncated && int(rec2.Len) > n) {
				if old := p.next.Load(); old != nil && (old != np || p.nextVer.Load() != nv) {
					return nil, nil, DecodeStale
				}
				p.nextVer.Store(nv)
				p.next.Store(np)
				rec, err = rec2, err2
				rec.PC = pc
			}
		}
	}
	if err != nil && err != decode.ErrUndefined {
		// Still truncated with 15 bytes cannot happen; treat as undefined.
		rec = decode.X86{Op: decode.X86Undefined, Len: 1, PC: pc}
	}
	if p.chunk == nil || p.used == x86ChunkSize {
		p.chunk = new([x86ChunkSize]decode.X86)
		p.used = 0
	}
	r := &p.chunk[p.used]
	p.used++
	*r = rec
	return r, nil, DecodeOK
}

// Flush drops every decoded page (used by tests and exec).
func (c *X86Cache) Flush() {
	c.mu.Lock()
	c.pages = make(map[uint64]*X86Page)
	c.mu.Unlock()
}
