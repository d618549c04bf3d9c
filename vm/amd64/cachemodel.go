package amd64

import (
	"github.com/uvm-emu/uvm/icache"
	"github.com/uvm-emu/uvm/vm"
)

// The interpreter's hooks into the cache model (icache.Model) and the
// differential re-decode mode. x86's instruction side is coherent (see
// icache/doc.go): the model only counts. With neither on, c.cm is nil and
// the loop pays a nil check per taken branch and per memory access path.

// cmState is the per-CPU state of the hooks.
type cmState struct {
	m        *icache.Model // nil: only re-decode is on
	redecode bool
	// start is the address of the first instruction of the current
	// straight-line run and n0 the instructions retired in this run
	// call before it.
	start, n0 uint64
}

// SetCacheModel attaches the CPU's cache model (nil detaches it). Call it
// before the CPU runs.
func (c *CPU) SetCacheModel(m *icache.Model) {
	redecode := c.cm != nil && c.cm.redecode
	c.cm = nil
	if m != nil || redecode {
		c.cm = &cmState{m: m, redecode: redecode}
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
// instruction is decoded afresh from memory immediately before it
// executes (its decoded record is dropped first, icache.X86Page.Forget).
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
}

// FlushICache is the kernel's cache maintenance after writing code
// (icache.FlushICache): nothing on x86, whose instruction side is
// coherent.
func (c *CPU) FlushICache(addr, n uint64) {
	icache.FlushICache(c.mm, c.CacheModel(), addr, n)
}

// cmClone gives a cloned CPU a model of the same configuration (a thread
// of the same process when mm is the parent's).
func (c *CPU) cmClone(n *CPU) {
	if c.cm == nil {
		return
	}
	if c.cm.m != nil {
		n.SetCacheModel(c.cm.m.Clone(n.mm == c.mm))
	}
	n.SetRedecode(c.cm.redecode)
}

// cmEnter runs on entry to run.
func (c *CPU) cmEnter(pc uint64) {
	c.cm.start, c.cm.n0 = pc, 0
}

// cmFetch accounts the instructions retired since the last call: n - n0
// instructions covering [c.cm.start, end).
func (c *CPU) cmFetch(end, n uint64) {
	if k := n - c.cm.n0; k != 0 && c.cm.m != nil {
		c.cm.m.FetchRange(c.cm.start, end, k)
	}
	c.cm.n0 = n
}

// cmTaken runs at a taken branch ending at end (its fall-through
// address) to target; n counts the branch.
func (c *CPU) cmTaken(target, end, n uint64) {
	c.cmFetch(end, n)
	c.cm.start = target
}

// cmData accounts a data access of n bytes at addr.
func (c *CPU) cmData(addr, n uint64, write bool) {
	if c.cm.m != nil {
		c.cm.m.Data(addr, n, write)
	}
}

// runRedecode runs limit instructions (step: one, reporting ExitStep)
// one at a time, each decoded afresh.
func (c *CPU) runRedecode(limit uint64, step bool) vm.Exit {
	for i := uint64(0); i < limit; i++ {
		if c.interrupt.Swap(false) {
			return vm.Exit{Reason: vm.ExitBudget, PC: c.regs.RIP}
		}
		if p, f := c.page(c.regs.RIP); f == nil {
			p.Forget(c.regs.RIP)
		}
		if e := c.run(1, true); e.Reason != vm.ExitStep || step {
			return e
		}
		if c.flags&(rfTF|rfAC) != 0 { // trapflag.go: the caller steps from here
			return vm.Exit{Reason: vm.ExitBudget, PC: c.regs.RIP}
		}
	}
	return vm.Exit{Reason: vm.ExitBudget, PC: c.regs.RIP}
}
