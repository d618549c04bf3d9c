// The predecoded-instruction cache for A64 (see doc.go): one per guest
// address space, shared by all threads of that address space.

package icache

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// A64InsnsPerPage is the number of A64 instructions in one guest page.
const A64InsnsPerPage = vm.PageSize / 4

// A64Page is one guest page decoded as A64 instructions. It is immutable
// once published: a page whose code changed is replaced by a new A64Page,
// never rewritten in place, so a thread still executing from the old one
// never sees a half-built record.
type A64Page struct {
	// Insn[i] is the instruction at VA + 4*i.
	Insn [A64InsnsPerPage]decode.A64
	// VA is the page's guest virtual address (page aligned).
	VA uint64
	// Src is the guest page the instructions were decoded from and
	// Version its CodeVersion at the time (read before decoding).
	Src     *vm.Page
	Version uint64
	// igen is, in strict mode (a64strict.go), the generation of the
	// I-side view the page was decoded from.
	igen uint64
}

// Valid reports whether the page still holds the code it was decoded
// from: no store to it, no munmap and no mprotect since.
func (p *A64Page) Valid() bool {
	return p.Src.CodeVersion.Load() == p.Version
}

// A64Cache is the predecoded-instruction cache of one address space
// (stored in vm.MM.Code). Lookups from the interpreter's hot path go
// through a small per-CPU direct-mapped cache first; this map is the
// shared second level.
type A64Cache struct {
	mu    sync.Mutex
	pages map[uint64]*A64Page // by virtual page number
	// gen is bumped by Invalidate so per-CPU first-level caches can drop
	// pages that were explicitly invalidated.
	gen atomic.Uint64
	// Fills counts page decodes (for statistics and tests).
	Fills atomic.Uint64

	// Strict (non-coherent) I-side state, see a64strict.go. strict is
	// set before the first fetch; views and pages are then protected
	// by mu.
	strict atomic.Bool
	views  map[uint64]*iview // by virtual page number

	// deny is the complement of the CPU model's features (SetFeatures):
	// zero (the default) decodes every instruction uvm implements.
	deny atomic.Uint32
}

// SetFeatures restricts decoding to the instructions of the features in
// have (the CPU model): the others decode as A64Undefined with reason
// decode.A64WhyModel. Changing the set drops every decoded page.
func (c *A64Cache) SetFeatures(have decode.A64Feature) {
	d := uint32(^have)
	if c.deny.Load() == d {
		return
	}
	c.mu.Lock()
	c.deny.Store(d)
	clear(c.pages)
	c.gen.Add(1)
	c.mu.Unlock()
}

// decode decodes one instruction word under the feature restriction.
func (c *A64Cache) decode(raw uint32) decode.A64 {
	in := decode.DecodeA64(raw)
	if d := c.deny.Load(); d != 0 && in.Feature()&decode.A64Feature(d) != 0 {
		return decode.A64RestrictFeatures(in, decode.A64Feature(^d))
	}
	return in
}

// NewA64Cache returns an empty cache.
func NewA64Cache() *A64Cache {
	return &A64Cache{pages: make(map[uint64]*A64Page)}
}

// A64CacheOf returns the A64 cache of mm, creating it when mm has none.
// It panics if mm holds another architecture's cache (a programming error:
// one address space executes one architecture).
func A64CacheOf(mm *vm.MM) *A64Cache {
	a64CacheInit.Lock()
	defer a64CacheInit.Unlock()
	if mm.Code == nil {
		mm.Code = NewA64Cache()
	}
	return mm.Code.(*A64Cache)
}

var a64CacheInit sync.Mutex

// Gen is the invalidation generation (see Invalidate).
func (c *A64Cache) Gen() uint64 { return c.gen.Load() }

// Lookup returns the decoded page holding pc, decoding it if the cache has
// no valid copy. A fault (no execute permission, unmapped) is returned as
// is; the caller reports it with Access exec. After a fill the caller must
// call its TLB's Sync (marking a page as code changes the MM generation).
func (c *A64Cache) Lookup(mm *vm.MM, pc uint64) (*A64Page, *vm.Fault) {
	if c.strict.Load() {
		return c.lookupStrict(mm, pc)
	}
	vpn := pc >> vm.PageShift
	c.mu.Lock()
	p := c.pages[vpn]
	c.mu.Unlock()
	if p != nil && p.Valid() {
		// Still the page mapped at pc? An unmap bumps the old page's
		// version, so a valid entry is the mapped page; the permission
		// may still have been dropped, which also bumps the version.
		return p, nil
	}
	src, f := mm.CodePage(pc)
	if f != nil {
		if p != nil { // drop the stale page of an unmapped or non-executable range
			c.mu.Lock()
			if c.pages[vpn] == p {
				delete(c.pages, vpn)
			}
			c.mu.Unlock()
		}
		return nil, f
	}
	p = &A64Page{VA: vpn << vm.PageShift, Src: src}
	p.Version = src.CodeVersion.Load() // before reading the bytes
	for i := range p.Insn {
		p.Insn[i] = c.decode(binary.LittleEndian.Uint32(src.Data[4*i:]))
	}
	c.Fills.Add(1)
	c.mu.Lock()
	c.pages[vpn] = p
	c.mu.Unlock()
	return p, nil
}

// Invalidate drops the decoded copy of the page holding addr (IC IVAU).
// Nothing is bumped: the page's code is unchanged as far as the cache
// knows; it is simply decoded again on the next execution. Per-CPU
// first-level caches notice through Gen.
func (c *A64Cache) Invalidate(addr uint64) {
	vpn := addr >> vm.PageShift
	c.mu.Lock()
	if _, ok := c.pages[vpn]; ok {
		delete(c.pages, vpn)
		c.gen.Add(1)
	}
	c.mu.Unlock()
}

// Len is the number of decoded pages held.
func (c *A64Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pages)
}
