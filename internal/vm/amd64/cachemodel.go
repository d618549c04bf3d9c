package amd64

import (
	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
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
	// cls, with class counting on (CountClasses), tallies the retired
	// instructions by timing class and the taken branches.
	cls *decode.ClassCounts
}

// SetCacheModel attaches the CPU's cache model (nil detaches it). Call it
// before the CPU runs.
func (c *CPU) SetCacheModel(m *icache.Model) {
	redecode := c.cm != nil && c.cm.redecode
	var cls *decode.ClassCounts
	if c.cm != nil {
		cls = c.cm.cls
	}
	c.cm = nil
	if m != nil || redecode || cls != nil {
		c.cm = &cmState{m: m, redecode: redecode, cls: cls}
	}
}

// CountClasses turns counting of retired instructions by timing class
// (decode.InsnClass) and of taken branches on or off, for the timing
// model. The tally is taken at the hooks the loop already has (a taken
// branch, the end of Run) by walking the records of the straight-line
// code retired since the previous one; the counts start at zero.
func (c *CPU) CountClasses(on bool) {
	switch {
	case on && c.cm == nil:
		c.cm = &cmState{cls: new(decode.ClassCounts)}
	case on:
		c.cm.cls = new(decode.ClassCounts)
	case c.cm != nil:
		c.cm.cls = nil
		if c.cm.m == nil && !c.cm.redecode {
			c.cm = nil
		}
	}
}

// ClassCounts returns the class tally (nil when not counting). Read it
// from the CPU's goroutine or while it does not run.
func (c *CPU) ClassCounts() *decode.ClassCounts {
	if c.cm == nil {
		return nil
	}
	return c.cm.cls
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
		if !on && c.cm.m == nil && c.cm.cls == nil {
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
	if c.cm.cls != nil {
		n.CountClasses(true)
	}
}

// cmEnter runs on entry to run.
func (c *CPU) cmEnter(pc uint64) {
	c.cm.start, c.cm.n0 = pc, 0
}

// cmFetch accounts the instructions retired since the last call: n - n0
// instructions covering [c.cm.start, end).
func (c *CPU) cmFetch(end, n uint64) {
	if k := n - c.cm.n0; k != 0 {
		if c.cm.m != nil {
			c.cm.m.FetchRange(c.cm.start, end, k)
		}
		if c.cm.cls != nil {
			c.cmCount(k)
		}
	}
	c.cm.n0 = n
}

// cmTaken runs at a taken branch ending at end (its fall-through
// address) to target; n counts the branch.
func (c *CPU) cmTaken(target, end, n uint64) {
	c.cmFetch(end, n)
	c.cm.start = target
	if c.cm.cls != nil {
		c.cm.cls.Taken++
	}
}

// cmCount counts the classes of the k instructions retired in a
// straight line from c.cm.start: their records are still in the
// instruction cache (they just executed). Should one be gone (its page
// was invalidated meanwhile), the rest stay uncounted, and the timing
// model charges them its unclassified cost.
func (c *CPU) cmCount(k uint64) {
	pc, base := c.cm.start, ^uint64(0)
	var p *icache.X86Page
	for ; k > 0; k-- { // each pass counts one run (or its first k)
		if pc&^uint64(vm.PageMask) != base {
			var f *vm.Fault
			if p, f = c.page(pc); f != nil {
				return
			}
			base = pc &^ uint64(vm.PageMask)
		}
		in := p.At(pc)
		if in == nil {
			return
		}
		// The records of a run follow each other in memory.
		for {
			c.cm.cls.N[in.Class]++
			if k == 1 || in.Run == 0 {
				break
			}
			k--
			in = icache.RunNext(in)
		}
		pc = in.PC + uint64(in.Len)
	}
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
