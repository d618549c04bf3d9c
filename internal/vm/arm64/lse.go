package arm64

// FEAT_LSE atomics (HWCAP_ATOMICS): LDADD … LDUMIN, SWP, CAS and CASP.
//
// Every operation is one host atomic read-modify-write on the guest page
// (sync/atomic on a pointer from TLB.Atomic32/64), so LSE atomics are
// atomic against other guest threads' LSE atomics, exclusives and plain
// stores, and — being locked instructions on the amd64 host — sequentially
// consistent: stronger than any of the A/L/AL orderings asks for. Bytes
// and halfwords are a compare-and-swap loop on the aligned 32-bit word that
// contains them. The accesses must be aligned to their size (no FEAT_LSE2:
// a misaligned address is an alignment fault, SIGBUS), and the page must be
// writable even when a CAS compares unequal and writes nothing, as on
// hardware (the access is a read-modify-write). 128-bit CASP compares and
// stores both doublewords under vm.SplitLock, with the caveat stxp
// documents (Go has no 128-bit compare-and-swap).

import (
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// lseApply is the new memory value of atomic operation kind on old with
// operand v; both are 1<<size bytes, zero-extended.
func lseApply(kind uint64, old, v uint64, size uint8) uint64 {
	switch kind {
	case decode.A64AtomicADD:
		return old + v
	case decode.A64AtomicCLR:
		return old &^ v
	case decode.A64AtomicEOR:
		return old ^ v
	case decode.A64AtomicSET:
		return old | v
	case decode.A64AtomicSMAX:
		if sext(v, size) > sext(old, size) {
			return v
		}
		return old
	case decode.A64AtomicSMIN:
		if sext(v, size) < sext(old, size) {
			return v
		}
		return old
	case decode.A64AtomicUMAX:
		if v > old {
			return v
		}
		return old
	case decode.A64AtomicUMIN:
		if v < old {
			return v
		}
		return old
	}
	return v // SWP
}

// ldop is an atomic memory operation (LDADD…, SWP) of 1<<size bytes at
// addr with operand v; it returns the old value, zero-extended.
func (c *CPU) ldop(kind uint64, addr, v uint64, size uint8) (uint64, memResult) {
	if addr&(1<<size-1) != 0 {
		return 0, c.alignFault(addr, vm.AccessWrite)
	}
	switch size {
	case 3:
		p, ok := c.tlb.Atomic64(addr)
		if !ok {
			return 0, memFault
		}
		switch kind {
		case decode.A64AtomicADD:
			return atomic.AddUint64(p, v) - v, memOK
		case decode.A64AtomicSWP:
			return atomic.SwapUint64(p, v), memOK
		}
		for {
			old := atomic.LoadUint64(p)
			if atomic.CompareAndSwapUint64(p, old, lseApply(kind, old, v, 3)) {
				return old, memOK
			}
		}
	case 2:
		p, ok := c.tlb.Atomic32(addr)
		if !ok {
			return 0, memFault
		}
		v32 := uint32(v)
		switch kind {
		case decode.A64AtomicADD:
			return uint64(atomic.AddUint32(p, v32) - v32), memOK
		case decode.A64AtomicSWP:
			return uint64(atomic.SwapUint32(p, v32)), memOK
		}
		for {
			old := atomic.LoadUint32(p)
			if atomic.CompareAndSwapUint32(p, old, uint32(lseApply(kind, uint64(old), uint64(v32), 2))) {
				return uint64(old), memOK
			}
		}
	}
	p, ok := c.tlb.Atomic32(addr &^ 3)
	if !ok {
		return 0, memFault
	}
	sh := (addr & 3) * 8
	mask := uint32(1)<<(8<<size) - 1
	v &= uint64(mask)
	for {
		cur := atomic.LoadUint32(p)
		old := cur >> sh & mask
		nw := cur&^(mask<<sh) | (uint32(lseApply(kind, uint64(old), v, size))&mask)<<sh
		if atomic.CompareAndSwapUint32(p, cur, nw) {
			return uint64(old), memOK
		}
	}
}

// cas is CAS of 1<<size bytes: it stores nv when memory equals cmp and
// returns the old value, zero-extended. It always does one locked
// operation, so a failing CAS is ordered like a successful one.
func (c *CPU) cas(addr, cmp, nv uint64, size uint8) (uint64, memResult) {
	if addr&(1<<size-1) != 0 {
		return 0, c.alignFault(addr, vm.AccessWrite)
	}
	switch size {
	case 3:
		p, ok := c.tlb.Atomic64(addr)
		if !ok {
			return 0, memFault
		}
		for {
			if atomic.CompareAndSwapUint64(p, cmp, nv) {
				return cmp, memOK
			}
			if old := atomic.LoadUint64(p); old != cmp {
				return old, memOK
			}
		}
	case 2:
		p, ok := c.tlb.Atomic32(addr)
		if !ok {
			return 0, memFault
		}
		for {
			if atomic.CompareAndSwapUint32(p, uint32(cmp), uint32(nv)) {
				return cmp & 0xffffffff, memOK
			}
			if old := atomic.LoadUint32(p); old != uint32(cmp) {
				return uint64(old), memOK
			}
		}
	}
	p, ok := c.tlb.Atomic32(addr &^ 3)
	if !ok {
		return 0, memFault
	}
	sh := (addr & 3) * 8
	mask := uint32(1)<<(8<<size) - 1
	cmp32 := uint32(cmp) & mask
	for {
		cur := atomic.LoadUint32(p)
		old := cur >> sh & mask
		nw := cur
		if old == cmp32 {
			nw = cur&^(mask<<sh) | (uint32(nv)&mask)<<sh
		}
		if atomic.CompareAndSwapUint32(p, cur, nw) {
			return uint64(old), memOK
		}
	}
}

// casp is CASP: a compare-and-swap of the register pair (c0, c1) with (n0,
// n1), each 1<<size bytes (size 2 or 3), at addr aligned to the pair. It
// returns the old pair.
func (c *CPU) casp(addr, c0, c1, n0, n1 uint64, size uint8) (uint64, uint64, memResult) {
	if addr&(2<<size-1) != 0 {
		return 0, 0, c.alignFault(addr, vm.AccessWrite)
	}
	if size == 2 {
		p, ok := c.tlb.Atomic64(addr)
		if !ok {
			return 0, 0, memFault
		}
		cmp := c0&0xffffffff | c1<<32
		nv := n0&0xffffffff | n1<<32
		for {
			if atomic.CompareAndSwapUint64(p, cmp, nv) {
				return cmp & 0xffffffff, cmp >> 32, memOK
			}
			if old := atomic.LoadUint64(p); old != cmp {
				return old & 0xffffffff, old >> 32, memOK
			}
		}
	}
	vm.SplitLock.Lock()
	defer vm.SplitLock.Unlock()
	p0, ok := c.tlb.Atomic64(addr)
	if !ok {
		return 0, 0, memFault
	}
	p1, ok := c.tlb.Atomic64(addr + 8) // same page: the pair is 16-byte aligned
	if !ok {
		return 0, 0, memFault
	}
	o0, o1 := atomic.LoadUint64(p0), atomic.LoadUint64(p1)
	if o0 == c0 && o1 == c1 {
		atomic.StoreUint64(p0, n0)
		atomic.StoreUint64(p1, n1)
	}
	return o0, o1, memOK
}
