package amd64

import (
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Locked (atomic) read-modify-write operations: LOCK-prefixed ALU ops,
// INC/DEC/NEG/NOT, BTS/BTR/BTC, XADD, CMPXCHG, CMPXCHG8B/16B and XCHG with
// memory. Aligned 4- and 8-byte operands use sync/atomic CAS loops on the
// page (vm.TLB.Atomic32/64); 1- and 2-byte operands that fit in an aligned
// 32-bit word use a CAS loop on that word; anything else (misaligned or
// page-crossing) runs under vm.SplitLock, which is x86's split-lock
// behaviour. CMPXCHG16B always uses vm.SplitLock (Go has no 128-bit CAS);
// it is atomic with respect to other CMPXCHG16B and split-locked
// operations.

// atomicRMW applies op to the w-byte value at ea atomically and returns
// the old and new values.
func (c *CPU) atomicRMW(ea uint64, w uint8, op decode.X86Op, b, cin uint64) (old, nv uint64, res xres) {
	m := wmask[w]
	switch {
	case w == 8:
		p, ok := c.tlb.Atomic64(ea)
		if !ok {
			return 0, 0, xFault
		}
		if p != nil {
			if c.cm != nil { // cache model; the split-lock path counts in load/store
				c.cmData(ea, 8, true)
			}
			for {
				old = atomic.LoadUint64(p)
				nv = rmwCompute(op, old, b, cin, m)
				if atomic.CompareAndSwapUint64(p, old, nv) {
					return old, nv, xOK
				}
			}
		}
	case w == 4 || (ea&3)+uint64(w) <= 4:
		p, ok := c.tlb.Atomic32(ea &^ 3)
		if !ok {
			c.tlb.Fault.Addr = ea
			return 0, 0, xFault
		}
		if p != nil && (w != 4 || ea&3 == 0) {
			if c.cm != nil {
				c.cmData(ea, uint64(w), true)
			}
			sh := (ea & 3) * 8
			for {
				word := atomic.LoadUint32(p)
				old = (uint64(word) >> sh) & m
				nv = rmwCompute(op, old, b, cin, m)
				nw := uint32(uint64(word)&^(m<<sh) | nv<<sh)
				if atomic.CompareAndSwapUint32(p, word, nw) {
					return old, nv, xOK
				}
			}
		}
	}
	c.tlb.LockSplit() // vm.SplitLock, shootdown-safe
	defer vm.SplitLock.Unlock()
	old, ok := c.load(ea, w)
	if !ok {
		return 0, 0, xFault
	}
	nv = rmwCompute(op, old, b, cin, m)
	if !c.store(ea, w, nv) {
		return 0, 0, xFault
	}
	return old, nv, xOK
}

// atomicCAS compares the w-byte value at ea with exp and, when equal,
// replaces it with nv. It returns the old value.
func (c *CPU) atomicCAS(ea uint64, w uint8, exp, nv uint64) (old uint64, res xres) {
	m := wmask[w]
	switch {
	case w == 8:
		p, ok := c.tlb.Atomic64(ea)
		if !ok {
			return 0, xFault
		}
		if p != nil {
			if c.cm != nil {
				c.cmData(ea, 8, true)
			}
			for {
				old = atomic.LoadUint64(p)
				if old != exp {
					return old, xOK
				}
				if atomic.CompareAndSwapUint64(p, old, nv) {
					return old, xOK
				}
			}
		}
	case w == 4 || (ea&3)+uint64(w) <= 4:
		p, ok := c.tlb.Atomic32(ea &^ 3)
		if !ok {
			c.tlb.Fault.Addr = ea
			return 0, xFault
		}
		if p != nil && (w != 4 || ea&3 == 0) {
			if c.cm != nil {
				c.cmData(ea, uint64(w), true)
			}
			sh := (ea & 3) * 8
			for {
				word := atomic.LoadUint32(p)
				old = (uint64(word) >> sh) & m
				if old != exp {
					return old, xOK
				}
				nw := uint32(uint64(word)&^(m<<sh) | (nv&m)<<sh)
				if atomic.CompareAndSwapUint32(p, word, nw) {
					return old, xOK
				}
			}
		}
	}
	c.tlb.LockSplit() // vm.SplitLock, shootdown-safe
	defer vm.SplitLock.Unlock()
	old, ok := c.load(ea, w)
	if !ok {
		return 0, xFault
	}
	v := old
	if old == exp {
		v = nv
	}
	if !c.store(ea, w, v) {
		return 0, xFault
	}
	return old, xOK
}

// cas128 is CMPXCHG16B on the 16-byte aligned ea: compares RDX:RAX with
// the memory and stores RCX:RBX when equal, else loads it into RDX:RAX.
func (c *CPU) cas128(ea uint64) (eq bool, res xres) {
	g := &c.regs.GPR
	c.tlb.LockSplit() // vm.SplitLock, shootdown-safe
	defer vm.SplitLock.Unlock()
	// Check writability first so that a fault leaves memory unchanged.
	if p, ok := c.tlb.Atomic64(ea); !ok || p == nil {
		return false, xFault
	}
	lo, ok := c.load(ea, 8)
	if !ok {
		return false, xFault
	}
	hi, ok := c.load(ea+8, 8)
	if !ok {
		return false, xFault
	}
	if lo == g[0] && hi == g[2] {
		if !c.store(ea, 8, g[3]) || !c.store(ea+8, 8, g[1]) {
			return false, xFault
		}
		return true, xOK
	}
	g[0], g[2] = lo, hi
	return false, xOK
}
