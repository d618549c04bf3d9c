package uprobes

// The per-thread hit cache: a thread that hits the same breakpoint again
// and again (a probed function called in a loop) finds its uprobe without
// the VMA lookup and the tree walk. The cached answer is the one the
// speculative lookup of findActiveUprobe would give: it is a function of
// the address, the address space's mappings, the tree and the
// registration side's mmap sequence, and is used only while all three
// are unchanged:
//
//   - the address space's generation (an AddrSpace with a Gen method,
//     such as uvm's, which bumps it on every mapping change; an AddrSpace
//     without one gets no cache),
//   - the tree's gen (bumped on entry to and exit from every change),
//   - mmapSeq (install/remove of breakpoints).
//
// With a contention model (Options.Contention) the cache is off: the
// model wants every lookup's tree-lock events, as the kernel makes them.

// asGenerationer is an AddrSpace whose mappings have a generation number
// that changes whenever any mapping changes (vm.MM.Gen).
type asGenerationer interface{ Gen() uint64 }

// hitCache is one thread's last speculative lookup.
type hitCache struct {
	u       *uprobe // nil: empty
	mm      *MM
	g       asGenerationer // mm.as, asserted once at store
	bp      uint64
	asGen   uint64
	treeGen uint64
	seq     uint32
}

// hitSnap is the state read before a lookup, for store.
type hitSnap struct {
	ok             bool
	asGen, treeGen uint64
}

// lookup returns the cached uprobe for bp, or nil.
func (h *hitCache) lookup(m *MM, bp uint64) *uprobe {
	if h.u == nil || h.bp != bp || h.mm != m || m.sys.opts.Contention != nil {
		return nil
	}
	if h.g.Gen() != h.asGen || m.sys.tree.gen.Load() != h.treeGen || m.mmapSeq.v.Load() != h.seq {
		return nil
	}
	return h.u
}

// snapshot reads the generations before a lookup.
func (h *hitCache) snapshot(m *MM) hitSnap {
	g, ok := m.as.(asGenerationer)
	if !ok || m.sys.opts.Contention != nil {
		return hitSnap{}
	}
	return hitSnap{ok: true, asGen: g.Gen(), treeGen: m.sys.tree.gen.Load()}
}

// store caches u as bp's uprobe when nothing changed during the lookup
// (seq is the mmapSeq value the lookup began with, already checked).
func (h *hitCache) store(m *MM, s hitSnap, bp uint64, u *uprobe, seq uint32) {
	if !s.ok || s.treeGen&1 != 0 {
		return
	}
	g := m.as.(asGenerationer)
	if g.Gen() != s.asGen || m.sys.tree.gen.Load() != s.treeGen {
		return
	}
	*h = hitCache{u: u, mm: m, g: g, bp: bp, asGen: s.asGen, treeGen: s.treeGen, seq: seq}
}
