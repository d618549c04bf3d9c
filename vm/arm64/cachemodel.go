package arm64

import (
	"uvm/decode"
	"uvm/icache"
	"uvm/vm"
)

// The interpreter's hooks into the cache model (icache.Model) and the
// differential re-decode mode. With neither on, c.cm is nil and the hot
// loop pays one nil check per block, per memory instruction and in the
// system instructions that maintain caches; everything here is off its
// fast path.

// cmState is the per-CPU state of the hooks.
type cmState struct {
	m *icache.Model // nil: only the re-decode mode is on
	// strict: the process's I-side is non-coherent (icache.ICacheStrict):
	// the CPU executes the decoded pages it holds until a context
	// synchronisation (ISB, or any exit from Run: exception entry).
	strict bool
	// redecode: decode every instruction afresh before executing it.
	redecode bool
	// n0 is c.n when the fetches of the current block started.
	n0    uint64
	ctr   uint64
	dczid uint64
	zero  []byte // one DC ZVA block of zeros
	// scratch is the page redecode mode executes from.
	scratch *icache.A64Page
	stable  vm.Page // Src of scratch: its version never changes
}

// SetCacheModel attaches the cache model of this CPU (nil detaches it).
// It must be called before the CPU runs. A strict model makes the
// address space's I-side non-coherent (icache.A64Cache.SetStrict), so all
// CPUs of a process must use models of the same configuration.
func (c *CPU) SetCacheModel(m *icache.Model) {
	redecode := c.cm != nil && c.cm.redecode
	if m == nil {
		c.cm = nil
		c.cache.SetStrict(false)
		c.SetRedecode(redecode)
		c.syncHooks()
		return
	}
	c.cm = &cmState{m: m, strict: m.Strict(), redecode: redecode, ctr: m.CTR(), dczid: m.DCZID(),
		zero: make([]byte, m.ZVABlock())}
	if redecode {
		c.SetRedecode(true)
	}
	c.cache.SetStrict(m.Strict())
	c.l0 = [l0Size]*icache.A64Page{}
	c.syncHooks()
}

// syncHooks sets stopHooks while c.cm is non-nil.
func (c *CPU) syncHooks() {
	if c.cm != nil {
		c.stop.Or(stopHooks)
	} else {
		c.stop.And(^uint32(stopHooks))
	}
}

// CacheModel returns the CPU's cache model, nil when it is off.
func (c *CPU) CacheModel() *icache.Model {
	if c.cm == nil {
		return nil
	}
	return c.cm.m
}

// SetRedecode turns the differential-testing mode on or off: every
// instruction is decoded afresh from the bytes instruction fetch sees
// (icache.A64Cache.DecodeOne) immediately before it executes, bypassing
// all decoded pages. Results must be identical to normal execution for
// any program that follows the architecture's rules for modifying code.
func (c *CPU) SetRedecode(on bool) {
	switch {
	case c.cm != nil:
		c.cm.redecode = on
		if !on && c.cm.m == nil {
			c.cm = nil
		}
	case on:
		c.cm = &cmState{redecode: true}
	}
	if c.cm != nil && c.cm.redecode && c.cm.scratch == nil {
		c.cm.scratch = new(icache.A64Page)
		c.cm.scratch.Src = &c.cm.stable
	}
	c.syncHooks()
}

// FlushICache makes [addr, addr+n) visible to instruction fetch as the
// kernel does after writing code (uprobes, XOL slots, ptrace): see
// icache.FlushICache. The cost is charged to this CPU's model.
func (c *CPU) FlushICache(addr, n uint64) {
	icache.FlushICache(c.mm, c.CacheModel(), addr, n)
}

// cmClone gives a cloned CPU a model of the same configuration: a thread
// of the same process when mm is the parent's, else a new process.
func (c *CPU) cmClone(n *CPU) {
	if c.cm == nil {
		return
	}
	if c.cm.m != nil {
		n.SetCacheModel(c.cm.m.Clone(n.mm == c.mm))
	}
	n.SetRedecode(c.cm.redecode)
}

// cmEnter runs on entry to run: exception return is a context
// synchronisation, so a strict CPU drops the decoded pages it held.
//
func (c *CPU) cmEnter() {
	c.cm.n0 = 0
	if c.cm.strict {
		c.l0 = [l0Size]*icache.A64Page{}
	}
}

// cmFetch accounts the instruction fetches of the block that started at
// c.blockStart since the last call.
//
func (c *CPU) cmFetch() {
	if k := c.n - c.cm.n0; k != 0 && c.cm.m != nil {
		c.cm.m.Fetch(c.blockStart, k)
	}
	c.cm.n0 = c.n
}

// cmData accounts a data access.
//
func (c *CPU) cmData(addr, n uint64, write bool) {
	if c.cm.m != nil {
		c.cm.m.Data(addr, n, write)
	}
}

// cmISB is ISB: a context synchronisation. A strict CPU drops the decoded
// pages it holds; the caller drops its current page.
//
func (c *CPU) cmISB() {
	if c.cm.m != nil {
		c.cm.m.ISB()
	}
	if c.cm.strict {
		c.l0 = [l0Size]*icache.A64Page{}
	}
}

// cmDC is DC CVAU/CVAC/CIVAC of the line holding addr (readable).
//
func (c *CPU) cmDC(addr uint64) {
	if c.cm.m == nil {
		return
	}
	c.cm.m.DCClean(addr)
	c.cache.CleanLine(c.mm, addr, c.cm.m.DLine())
}

// cmIC is IC IVAU of the line holding addr (readable). It reports whether
// the caller must drop its current decoded page (not in strict mode,
// where the CPU keeps executing what it fetched until ISB).
//
func (c *CPU) cmIC(addr uint64) bool {
	if c.cm.m == nil {
		c.cache.Invalidate(addr)
		c.l0[addr>>vm.PageShift&(l0Size-1)] = nil
		return true
	}
	c.cm.m.ICInvalidate(addr)
	c.cache.InvalidateLine(c.mm, addr, c.cm.m.ILine())
	if c.cm.strict {
		return false
	}
	c.l0[addr>>vm.PageShift&(l0Size-1)] = nil
	return true
}

// cmZVA is DC ZVA of the modelled block holding addr.
//
func (c *CPU) cmZVA(addr uint64) bool {
	if c.cm.m == nil {
		return c.tlb.StoreBytes(addr&^(DCZVASize-1), zeroBlock[:])
	}
	addr &^= c.cm.m.ZVABlock() - 1
	if !c.tlb.StoreBytes(addr, c.cm.zero) {
		return false
	}
	c.cm.m.ZVA(addr)
	return true
}

// redecodePage returns a page holding only the instruction at pc, decoded
// afresh.
func (c *CPU) redecodePage(pc uint64) (*icache.A64Page, *vm.Fault) {
	in, _, f := c.cache.DecodeOne(c.mm, pc)
	c.tlb.Sync()
	if f != nil {
		return nil, f
	}
	p := c.cm.scratch
	p.VA = pc &^ vm.PageMask
	p.Insn[pc>>2&(icache.A64InsnsPerPage-1)] = in
	return p, nil
}

// runRedecode is Run in re-decode mode: one instruction per step, each
// decoded afresh (see SetRedecode).
func (c *CPU) runRedecode(budget uint64) vm.Exit {
	for i := uint64(0); i < budget; i++ {
		if c.stop.Load()&stopInterrupt != 0 {
			c.stop.And(^uint32(stopInterrupt))
			return vm.Exit{Reason: vm.ExitBudget, PC: c.regs.PC}
		}
		if e := c.run(1, true); e.Reason != vm.ExitStep {
			return e
		}
	}
	return vm.Exit{Reason: vm.ExitBudget, PC: c.regs.PC}
}

// mrsCache reads CTR_EL0 or DCZID_EL0 (id) as the model describes them.
func (c *CPU) mrsCache(id uint64) uint64 {
	if c.cm == nil || c.cm.m == nil {
		if id == decode.A64SysCTR {
			return CTR
		}
		return DCZID
	}
	if id == decode.A64SysCTR {
		return c.cm.ctr
	}
	return c.cm.dczid
}
