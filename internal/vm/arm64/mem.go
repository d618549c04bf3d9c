package arm64

import (
	"hash/crc32"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// memResult is the outcome of a memory helper.
type memResult uint8

const (
	memOK    memResult = iota
	memFault           // c.tlb.Fault describes it
	memAlign           // alignment fault at c.tlb.Fault.Addr
)

// monitor is the local exclusive monitor. LDXR records the address, size
// and the value it loaded; STXR succeeds when the monitor is armed for the
// same address and size and a compare-and-swap of the recorded value
// against memory succeeds. Like qemu's user-mode emulation this has the
// ABA caveat: if another thread changes the location and changes it back
// between the LDXR and the STXR, the STXR succeeds where hardware (which
// tracks the cache line, not the value) would fail. Lock-free algorithms
// built on LDXR/STXR (the Go runtime, glibc, libatomic) are correct under
// this model because they only need "the value is still the one I read".
type monitor struct {
	addr  uint64
	val   uint64
	val2  uint64 // second doubleword of a 128-bit LDXP
	size  uint8  // log2 of the total bytes covered
	pair  bool
	valid bool
}

var zeroBlock [DCZVASize]byte

var (
	crcTabIEEE = crc32.MakeTable(crc32.IEEE)
	crcTabC    = crc32.MakeTable(crc32.Castagnoli)
)

// crc32Op is the CRC32* instruction: the bit-reflected CRC of the low
// 1<<size bytes of val, continuing from acc, without the pre- and
// post-inversion of the usual software CRC.
func crc32Op(acc uint32, val uint64, size uint8, castagnoli bool) uint32 {
	tab := crcTabIEEE
	if castagnoli {
		tab = crcTabC
	}
	for i := 0; i < 1<<size; i++ {
		acc = tab[byte(acc)^byte(val)] ^ acc>>8
		val >>= 8
	}
	return acc
}

// page returns the decoded page holding pc, from the per-CPU first level
// or the address space's cache. It is called once per page fetch, and
// kept out of line: inlined by PGO into the loop it changed the loop's
// register allocation (an extra copy per instruction).
//
//go:noinline
func (c *CPU) page(pc uint64) (*icache.A64Page, *vm.Fault) {
	if g := c.cache.Gen(); g != c.l0gen {
		c.l0 = [l0Size]*icache.A64Page{}
		c.l0gen = g
	}
	vpn := pc >> vm.PageShift
	slot := &c.l0[vpn&(l0Size-1)]
	if p := *slot; p != nil && p.VA == vpn<<vm.PageShift && p.Valid() {
		return p, nil
	}
	p, f := c.cache.Lookup(c.mm, pc)
	c.tlb.SyncCode()
	if f != nil {
		*slot = nil
		return nil, f
	}
	*slot = p
	return p, nil
}

// load reads 1<<size bytes (size 0..3), zero-extended.
func (c *CPU) load(addr uint64, size uint8) (uint64, bool) {
	switch size {
	case 0:
		v, ok := c.tlb.Load8(addr)
		return uint64(v), ok
	case 1:
		v, ok := c.tlb.Load16(addr)
		return uint64(v), ok
	case 2:
		v, ok := c.tlb.Load32(addr)
		return uint64(v), ok
	default:
		return c.tlb.Load64(addr)
	}
}

// store writes the low 1<<size bytes of v (size 0..3).
func (c *CPU) store(addr uint64, v uint64, size uint8) bool {
	switch size {
	case 0:
		return c.tlb.Store8(addr, uint8(v))
	case 1:
		return c.tlb.Store16(addr, uint16(v))
	case 2:
		return c.tlb.Store32(addr, uint32(v))
	default:
		return c.tlb.Store64(addr, v)
	}
}

// loadV loads 1<<size bytes (size 0..4) as a zero-extended 128-bit value.
func (c *CPU) loadV(addr uint64, size uint8) (lo, hi uint64, ok bool) {
	if size < 4 {
		lo, ok = c.load(addr, size)
		return lo, 0, ok
	}
	return c.tlb.Load128(addr) // Load64(addr), Load64(addr+8) across pages
}

// storeV stores the low 1<<size bytes (size 0..4) of lo:hi. A store that
// faults writes nothing.
func (c *CPU) storeV(addr uint64, lo, hi uint64, size uint8) bool {
	if size < 4 {
		return c.store(addr, lo, size)
	}
	return c.store128(addr, lo, hi)
}

// store128 stores 16 bytes atomically with respect to faults.
func (c *CPU) store128(addr, lo, hi uint64) bool { return c.tlb.Store128(addr, lo, hi) }

// ldpV loads a SIMD&FP register pair.
func (c *CPU) ldpV(in *decode.A64, addr uint64) bool {
	sz := uint64(1) << in.Size
	lo1, hi1, ok := c.loadV(addr, in.Size)
	if !ok {
		return false
	}
	lo2, hi2, ok := c.loadV(addr+sz, in.Size)
	if !ok {
		return false
	}
	c.regs.V[in.Rd] = [2]uint64{lo1, hi1}
	c.regs.V[in.Ra] = [2]uint64{lo2, hi2}
	return true
}

// stpV stores a SIMD&FP register pair; a faulting store writes nothing.
func (c *CPU) stpV(in *decode.A64, addr uint64) bool {
	a, b := c.regs.V[in.Rd], c.regs.V[in.Ra]
	switch in.Size {
	case 2:
		return c.tlb.Store64(addr, a[0]&0xffffffff|b[0]<<32)
	case 3:
		return c.store128(addr, a[0], b[0])
	}
	if addr&vm.PageMask <= vm.PageSize-32 {
		if !c.store128(addr, a[0], a[1]) {
			return false
		}
		return c.store128(addr+16, b[0], b[1])
	}
	var buf [32]byte
	for i := 0; i < 8; i++ {
		buf[i] = byte(a[0] >> (8 * i))
		buf[8+i] = byte(a[1] >> (8 * i))
		buf[16+i] = byte(b[0] >> (8 * i))
		buf[24+i] = byte(b[1] >> (8 * i))
	}
	return c.tlb.StoreBytes(addr, buf[:])
}

// stp stores a general register pair (Size 2 or 3); a faulting store
// writes nothing.
func (c *CPU) stp(addr, a, b uint64, size uint8) bool {
	if size == 2 {
		return c.tlb.Store64(addr, a&0xffffffff|b<<32)
	}
	return c.store128(addr, a, b)
}

func (c *CPU) alignFault(addr uint64, acc vm.Access) memResult {
	c.tlb.Fault = vm.Fault{Addr: addr, Access: acc}
	return memAlign
}

// ldxr is LDXR/LDAXR of 1<<size bytes.
func (c *CPU) ldxr(addr uint64, size uint8) (uint64, memResult) {
	if addr&(1<<size-1) != 0 {
		return 0, c.alignFault(addr, vm.AccessRead)
	}
	v, ok := c.load(addr, size)
	if !ok {
		return 0, memFault
	}
	c.excl = monitor{addr: addr, val: v, size: size, valid: true}
	return v, memOK
}

// stxr is STXR/STLXR: it returns the status register value (0 stored,
// 1 failed).
func (c *CPU) stxr(addr, v uint64, size uint8) (uint64, memResult) {
	if addr&(1<<size-1) != 0 {
		return 0, c.alignFault(addr, vm.AccessWrite)
	}
	m := c.excl
	c.excl.valid = false
	if !m.valid || m.pair || m.addr != addr || m.size != size {
		return 1, memOK
	}
	switch size {
	case 3:
		p, ok := c.tlb.Atomic64(addr)
		if !ok {
			return 0, memFault
		}
		return b2u(!atomic.CompareAndSwapUint64(p, m.val, v)), memOK
	case 2:
		p, ok := c.tlb.Atomic32(addr)
		if !ok {
			return 0, memFault
		}
		return b2u(!atomic.CompareAndSwapUint32(p, uint32(m.val), uint32(v))), memOK
	}
	// Bytes and halfwords: CAS on the aligned word that contains them,
	// retrying while only the neighbouring bytes change.
	p, ok := c.tlb.Atomic32(addr &^ 3)
	if !ok {
		return 0, memFault
	}
	sh := (addr & 3) * 8
	mask := uint32(1)<<(8<<size) - 1
	for {
		cur := atomic.LoadUint32(p)
		if cur>>sh&mask != uint32(m.val) {
			return 1, memOK
		}
		nw := cur&^(mask<<sh) | (uint32(v)&mask)<<sh
		if atomic.CompareAndSwapUint32(p, cur, nw) {
			return 0, memOK
		}
	}
}

// ldxp is LDXP/LDAXP (size 2: two words, size 3: two doublewords).
func (c *CPU) ldxp(addr uint64, size uint8) (uint64, uint64, memResult) {
	total := size + 1
	if addr&(1<<total-1) != 0 {
		return 0, 0, c.alignFault(addr, vm.AccessRead)
	}
	if size == 2 {
		v, ok := c.tlb.Load64(addr)
		if !ok {
			return 0, 0, memFault
		}
		c.excl = monitor{addr: addr, val: v, size: total, pair: true, valid: true}
		return v & 0xffffffff, v >> 32, memOK
	}
	a, ok := c.tlb.Load64(addr)
	if !ok {
		return 0, 0, memFault
	}
	b, ok := c.tlb.Load64(addr + 8)
	if !ok {
		return 0, 0, memFault
	}
	c.excl = monitor{addr: addr, val: a, val2: b, size: total, pair: true, valid: true}
	return a, b, memOK
}

// stxp is STXP/STLXP. The 128-bit form compares and stores both
// doublewords under vm.SplitLock: it is atomic against other exclusive
// pairs but not against plain stores or single-register exclusives to the
// same 16 bytes (Go has no 128-bit compare-and-swap).
func (c *CPU) stxp(addr, a, b uint64, size uint8) (uint64, memResult) {
	total := size + 1
	if addr&(1<<total-1) != 0 {
		return 0, c.alignFault(addr, vm.AccessWrite)
	}
	m := c.excl
	c.excl.valid = false
	if !m.valid || !m.pair || m.addr != addr || m.size != total {
		return 1, memOK
	}
	if size == 2 {
		p, ok := c.tlb.Atomic64(addr)
		if !ok {
			return 0, memFault
		}
		return b2u(!atomic.CompareAndSwapUint64(p, m.val, a&0xffffffff|b<<32)), memOK
	}
	c.tlb.LockSplit() // vm.SplitLock, shootdown-safe
	defer vm.SplitLock.Unlock()
	p0, ok := c.tlb.Atomic64(addr)
	if !ok {
		return 0, memFault
	}
	p1, ok := c.tlb.Atomic64(addr + 8)
	if !ok {
		return 0, memFault
	}
	if atomic.LoadUint64(p0) != m.val || atomic.LoadUint64(p1) != m.val2 {
		return 1, memOK
	}
	atomic.StoreUint64(p0, a)
	atomic.StoreUint64(p1, b)
	return 0, memOK
}

// ldar is LDAR/LDAPR: an aligned load. On the amd64 host every load has
// acquire semantics; the store side (stlr) carries the full fence.
func (c *CPU) ldar(addr uint64, size uint8) (uint64, memResult) {
	if addr&(1<<size-1) != 0 {
		return 0, c.alignFault(addr, vm.AccessRead)
	}
	v, ok := c.load(addr, size)
	if !ok {
		return 0, memFault
	}
	return v, memOK
}

// stlr is STLR: an aligned store followed by a full fence, so it is also
// ordered before later LDARs (RCsc).
func (c *CPU) stlr(addr, v uint64, size uint8) memResult {
	if addr&(1<<size-1) != 0 {
		return c.alignFault(addr, vm.AccessWrite)
	}
	if !c.store(addr, v, size) {
		return memFault
	}
	c.barrier()
	return memOK
}

// barrier is DMB/DSB: a full host memory fence (a locked add on amd64).
func (c *CPU) barrier() {
	atomic.AddUint64(&c.fence, 0)
}

// mrs reads system register id (decode.A64Sys*) for the MRS at pc.
func (c *CPU) mrs(id uint64, nzcv uint64, pc uint64) uint64 {
	switch id {
	case decode.A64SysNZCV:
		return nzcv << 28
	case decode.A64SysFPCR:
		return uint64(c.regs.FPCR)
	case decode.A64SysFPSR:
		return uint64(c.regs.FPSR)
	case decode.A64SysTPIDR:
		return c.regs.TPIDR
	case decode.A64SysCTR, decode.A64SysDCZID:
		return c.mrsCache(id)
	case decode.A64SysCNTVCT:
		return c.counter(pc)
	case decode.A64SysCNTFRQ:
		return CounterFreq
	case decode.A64SysTPIDRRO:
		return 0 // 0 for native tasks
	}
	return c.idReg(id) // the ID registers (idregs.go)
}

// Writable bits of FPCR (AHP, DN, FZ, RMode and, with FEAT_FP16, FZ16;
// the trap enables read as zero as on cores without FP exception
// trapping) and FPSR (QC and the cumulative exception flags).
const (
	fpcrMask = 0x07c80000
	fpsrMask = 0x0800009f
)

// msr writes system register id (not NZCV, which the loop keeps).
func (c *CPU) msr(id uint64, v uint64) {
	switch id {
	case decode.A64SysFPCR:
		c.regs.FPCR = uint32(v) & c.model.fpcrMask
	case decode.A64SysFPSR:
		c.regs.FPSR = uint32(v) & fpsrMask
	case decode.A64SysTPIDR:
		c.regs.TPIDR = v
	}
}
