package uprobes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// System is one emulated kernel's uprobe subsystem: the global tree and
// its lock, the consumer ids, the address spaces that map files, the
// delayed SDT-counter list and the two grace-period domains
// (kernel/events/uprobes.c's globals).
type System struct {
	opts  Options
	clock Clock
	tree  *tree

	// dupMmapSem is dup_mmap_sem: fork (read) against (un)registration
	// (write).
	dupMmapSem sync.RWMutex

	// mmsMu protects mms: every live address space, in creation order
	// (stands in for the inodes' i_mmap trees in build_map_info).
	mmsMu sync.Mutex
	mms   []*MM

	consumerID atomic.Uint64

	// hitRCU is the RCU Tasks Trace section around each breakpoint's
	// handler chain and return handlers; retSRCU is uretprobes_srcu
	// (leased return instances). uprobe_unregister_sync waits for both.
	hitRCU  tasksTraceRCU
	retSRCU srcu

	// mmapHash are uprobes_mmap_mutex[UPROBES_HASH_SZ], keyed by file.
	mmapHash [13]sync.Mutex

	// delayedMu protects delayed (delayed_uprobe_list).
	delayedMu sync.Mutex
	delayed   []delayedUprobe

	stats statCounters
	// slots hands the pcpuCounters' owned slots to the threads.
	slots counterSlots
}

// New returns a uprobe subsystem with the given switches.
func New(opts Options) *System {
	s := &System{opts: opts, tree: newTree(opts.TreeLock), clock: opts.Clock}
	if s.clock == nil {
		s.clock = hostClock{}
	}
	return s
}

// Options returns the switches the system runs with.
func (s *System) Options() Options { return s.opts }

func (s *System) warn(format string, args ...any) {
	s.stats.warnings.Add(1)
	if s.opts.Warnf != nil {
		s.opts.Warnf(format, args...)
	}
}

func (s *System) failAlloc(site AllocSite) bool {
	return s.opts.FailAlloc != nil && s.opts.FailAlloc(site)
}

// fileRef is the probed file (the inode): its identity, size,
// architecture and contents (the page cache, read by copy_insn).
type fileRef struct {
	path string
	id   FileID
	size int64
	arch Arch
	// data, when set, is the file's contents; otherwise path is opened.
	data io.ReaderAt
}

func (f *fileRef) readAt(b []byte, off int64) (int, error) {
	if f.data != nil {
		return f.data.ReadAt(b, off)
	}
	h, err := os.Open(f.path)
	if err != nil {
		return 0, err
	}
	defer h.Close()
	return h.ReadAt(b, off)
}

// uprobe is struct uprobe: one probed (file, offset).
type uprobe struct {
	treeNode
	key          treeKey
	sys          *System
	file         *fileRef
	offset       uint64
	refCtrOffset uint64
	// ref is the reference count; 0 means dying.
	ref atomic.Int64
	// registerRWSem serialises (un)registration of consumers; the hit
	// path takes it for reading to act on UPROBE_HANDLER_REMOVE.
	registerRWSem sync.RWMutex
	// consumerRWSem protects changes of consumers and the one-time
	// instruction analysis.
	consumerRWSem sync.RWMutex
	// consumers is the RCU-read list, newest first (copy on write).
	consumers atomic.Pointer[[]*consumer]
	// copied is UPROBE_COPY_INSN: arch is valid.
	copied atomic.Bool
	arch   archUprobe
	hits   pcpuCounter
}

// archUprobe is struct arch_uprobe: the saved instruction (the kernel's
// insn/ixol union: x86 rewrites it in place for XOL) and the analysis.
type archUprobe struct {
	insn [16]byte
	ilen int
	// arm64
	simulate bool
	a64      a64Sim
	// x86
	xops       x86Ops
	branchOpc1 byte
	branchOffs int32
	fixups     uint8
	pushReg    int
}

func (u *uprobe) tryGet() bool {
	for {
		r := u.ref.Load()
		if r <= 0 {
			return false
		}
		if u.ref.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

func (u *uprobe) get() *uprobe {
	if u != nil {
		u.ref.Add(1)
	}
	return u
}

func (u *uprobe) consumerList() []*consumer {
	if p := u.consumers.Load(); p != nil {
		return *p
	}
	return nil
}

// putUprobe drops a reference; the last one removes the uprobe from the
// tree (uprobe_free_deferred) and drops its delayed SDT records. The
// memory itself is left to the garbage collector, which like the
// kernel's SRCU + RCU Tasks Trace grace periods waits for every reader.
func (s *System) putUprobe(u *uprobe) {
	if u == nil {
		return
	}
	r := u.ref.Add(-1)
	if r > 0 {
		return
	}
	if r < 0 {
		panic("BUG: uprobes: uprobe reference count below zero")
	}
	s.tree.writeLock()
	s.tree.eraseLocked(u)
	s.tree.writeUnlock()
	s.delayedRemove(u, nil)
}

// consumer is a registered Consumer (struct uprobe_consumer).
type consumer struct {
	Consumer
	id     uint64
	cookie uint64
	name   string
}

func (c *consumer) filter(m *MM) bool { return c.Filter == nil || c.Filter(m) }

// allocUprobe is alloc_uprobe + insert_uprobe.
func (s *System) allocUprobe(f *fileRef, off, refCtr uint64) (*uprobe, error) {
	k := keyOf(f.id, off)
	u := &uprobe{key: k, sys: s, file: f, offset: off, refCtrOffset: refCtr}
	u.ref.Store(1)
	s.tree.writeLock()
	cur := s.tree.lookupLocked(k)
	if cur != nil {
		if cur.tryGet() {
			s.tree.writeUnlock()
			if cur.refCtrOffset != refCtr {
				s.warn("ref_ctr_offset mismatch. inode: %#x offset: %#x ref_ctr_offset(old): %#x ref_ctr_offset(new): %#x",
					f.id.Inode, off, cur.refCtrOffset, refCtr)
				s.putUprobe(cur)
				return nil, fmt.Errorf("ref_ctr_offset %#x differs from the registered %#x: %w", refCtr, cur.refCtrOffset, EINVAL)
			}
			return cur, nil
		}
		// The existing uprobe is dying: take its place.
		s.tree.eraseLocked(cur)
	}
	s.tree.insertLocked(u)
	s.tree.writeUnlock()
	return u, nil
}

// consumerAdd inserts c at the head of the list (consumer_add).
func (s *System) consumerAdd(u *uprobe, c *consumer) {
	u.consumerRWSem.Lock()
	c.id = s.consumerID.Add(1)
	old := u.consumerList()
	n := make([]*consumer, 0, len(old)+1)
	n = append(n, c)
	n = append(n, old...)
	u.consumers.Store(&n)
	u.consumerRWSem.Unlock()
}

// consumerDel unlinks c (consumer_del).
func (s *System) consumerDel(u *uprobe, c *consumer) {
	u.consumerRWSem.Lock()
	old := u.consumerList()
	n := make([]*consumer, 0, len(old))
	for _, o := range old {
		if o != c {
			n = append(n, o)
		}
	}
	u.consumers.Store(&n)
	u.consumerRWSem.Unlock()
}

// filterChain is filter_chain: does any consumer want this mm?
func (u *uprobe) filterChain(m *MM) bool {
	u.consumerRWSem.RLock()
	defer u.consumerRWSem.RUnlock()
	for _, c := range u.consumerList() {
		if c.filter(m) {
			return true
		}
	}
	return false
}

// swbpSize is UPROBE_SWBP_INSN_SIZE.
func swbpSize(a Arch) int {
	if a == ArchAMD64 {
		return 1
	}
	return 4
}

// insnSize is sizeof(arch_uprobe.insn) (MAX_UINSN_BYTES on x86).
func insnSize(a Arch) int {
	if a == ArchAMD64 {
		return 16
	}
	return 4
}

// isTrapInsn is is_trap_insn / is_swbp_insn.
func isTrapInsn(a Arch, b []byte) bool {
	if a == ArchAMD64 {
		return len(b) >= 1 && b[0] == X86SWBP
	}
	return len(b) >= 4 && binary.LittleEndian.Uint32(b) == ARM64SWBP
}

// register is uprobe_register (spec §1.4).
func (s *System) register(f *fileRef, off, refCtr uint64, c *consumer) (*uprobe, error) {
	if c.Handler == nil && c.RetHandler == nil {
		return nil, fmt.Errorf("consumer has neither Handler nor RetHandler: %w", EINVAL)
	}
	if int64(off) > f.size {
		return nil, fmt.Errorf("offset %#x beyond the end of %s (%d bytes): %w", off, f.path, f.size, EINVAL)
	}
	if off%uint64(swbpSize(f.arch)) != 0 {
		return nil, fmt.Errorf("offset %#x not aligned to the %d-byte breakpoint: %w", off, swbpSize(f.arch), EINVAL)
	}
	if refCtr%2 != 0 {
		return nil, fmt.Errorf("ref_ctr_offset %#x not 2-byte aligned: %w", refCtr, EINVAL)
	}
	u, err := s.allocUprobe(f, off, refCtr)
	if err != nil {
		return nil, err
	}
	u.registerRWSem.Lock()
	s.consumerAdd(u, c)
	err = s.registerForEachVMA(u, c)
	u.registerRWSem.Unlock()
	if err != nil {
		s.unregisterNosync(u, c)
		s.UnregisterSync()
		return nil, err
	}
	return u, nil
}

// unregisterNosync is uprobe_unregister_nosync.
func (s *System) unregisterNosync(u *uprobe, c *consumer) {
	u.registerRWSem.Lock()
	s.consumerDel(u, c)
	err := s.registerForEachVMA(u, nil)
	u.registerRWSem.Unlock()
	if err != nil {
		s.warn("uprobe unregister: leaking uprobe (inode %#x offset %#x): %v", u.file.id.Inode, u.offset, err)
		return
	}
	s.putUprobe(u)
}

// UnregisterSync is uprobe_unregister_sync: it returns once no handler
// of a consumer removed before the call can still be running (an RCU
// Tasks Trace grace period) and no return instance leased before the
// call still holds its uprobe through SRCU (an uretprobes_srcu grace
// period; leases are converted by ri_timer within RITimerPeriod).
func (s *System) UnregisterSync() {
	s.hitRCU.synchronize()
	s.retSRCU.synchronize()
}

// apply is uprobe_apply.
func (s *System) apply(u *uprobe, c *consumer, add bool) error {
	u.registerRWSem.Lock()
	defer u.registerRWSem.Unlock()
	for _, o := range u.consumerList() {
		if o == c {
			var nc *consumer
			if add {
				nc = c
			}
			return s.registerForEachVMA(u, nc)
		}
	}
	return ENOENT
}

// mapInfo is one (mm, vaddr) of build_map_info.
type mapInfo struct {
	mm    *MM
	vaddr uint64
}

// validVMA is valid_vma.
func validVMA(v *VMA, isRegister bool) bool {
	if v.File.IsZero() || v.Shared {
		return false
	}
	return !isRegister || !v.Write
}

// buildMapInfo is build_map_info: every (mm, vaddr) mapping the probed
// page of the file.
func (s *System) buildMapInfo(u *uprobe, isRegister bool) []mapInfo {
	s.mmsMu.Lock()
	mms := append([]*MM(nil), s.mms...)
	s.mmsMu.Unlock()
	var out []mapInfo
	for _, m := range mms {
		if m.dead.Load() {
			continue
		}
		for _, v := range m.as.VMAs() {
			if v.File != u.file.id || !validVMA(&v, isRegister) {
				continue
			}
			if u.offset < v.Offset || u.offset >= v.Offset+(v.End-v.Start) {
				continue
			}
			out = append(out, mapInfo{m, v.vaddrOf(u.offset)})
		}
	}
	return out
}

// registerForEachVMA is register_for_each_vma: install (newc != nil) or
// remove (newc == nil) the breakpoint in every mm that maps the file.
func (s *System) registerForEachVMA(u *uprobe, newc *consumer) error {
	isRegister := newc != nil
	s.dupMmapSem.Lock()
	defer s.dupMmapSem.Unlock()
	var err error
	for _, info := range s.buildMapInfo(u, isRegister) {
		m := info.mm
		m.mmapWriteLock()
		if m.dead.Load() {
			m.mmapWriteUnlock()
			continue
		}
		v, ok := m.as.FindVMA(info.vaddr)
		if !ok || !validVMA(&v, isRegister) || v.File != u.file.id || v.Start > info.vaddr ||
			v.fileOffset(info.vaddr) != u.offset {
			m.mmapWriteUnlock()
			continue
		}
		if isRegister {
			if newc.filter(m) {
				err = m.installBreakpoint(u, info.vaddr)
			}
		} else if m.flags.Load()&mmfHasUprobes != 0 {
			if !u.filterChain(m) {
				if e := m.removeBreakpoint(u, info.vaddr); e != nil && err == nil {
					err = e
				}
			}
		}
		m.mmapWriteUnlock()
		if isRegister && err != nil {
			break
		}
	}
	return err
}

// MM flags (mm->flags bits of the uprobe code).
const (
	mmfHasUprobes    = 1 << 0 // MMF_HAS_UPROBES
	mmfRecalcUprobes = 1 << 1 // MMF_RECALC_UPROBES
)

// MM is the uprobe state of one address space: mm_struct's
// uprobes_state (the XOL area), the MMF_HAS_UPROBES/MMF_RECALC_UPROBES
// flags and the lock that orders breakpoint installation against hit
// lookups (mmap_lock as this code uses it).
type MM struct {
	sys  *System
	as   AddrSpace
	arch Arch
	pid  int32

	flags atomic.Uint32
	// mmapLock: installers/removers take it for writing, the locked hit
	// lookup for reading; mmapSeq lets the speculative hit lookup run
	// without it (mmap_lock's sequence count).
	mmapLock sync.RWMutex
	mmapSeq  seqcount

	xol   atomic.Pointer[xolArea]
	xolMu sync.Mutex
	dead  atomic.Bool
	// scratch is used by the registration paths (under mmapLock).
	scratch [16]byte
}

// NewMM registers an address space with the subsystem. arch is the
// architecture its tasks run (analysis and XOL layout follow it); pid is
// the thread-group id (UprobeOptions.PID filters on it). Call Mmap for
// each file mapping the space already has (or MmapAll).
func (s *System) NewMM(as AddrSpace, arch Arch, pid int32) *MM {
	m := &MM{sys: s, as: as, arch: arch, pid: pid}
	s.mmsMu.Lock()
	s.mms = append(s.mms, m)
	s.mmsMu.Unlock()
	return m
}

// PID returns the thread-group id the MM was created with.
func (m *MM) PID() int32 { return m.pid }

// Arch returns the MM's architecture.
func (m *MM) Arch() Arch { return m.arch }

// AddrSpace returns the address space.
func (m *MM) AddrSpace() AddrSpace { return m.as }

// HasUprobes reports MMF_HAS_UPROBES.
func (m *MM) HasUprobes() bool { return m.flags.Load()&mmfHasUprobes != 0 }

// XOLArea returns the start of the "[uprobes]" page, if it exists.
func (m *MM) XOLArea() (uint64, bool) {
	if a := m.xol.Load(); a != nil {
		return a.vaddr, true
	}
	return 0, false
}

// XOLContains reports whether addr is inside the "[uprobes]" page (an
// XOL slot or the uretprobe trampoline): a guest that faults there or
// whose unwinder finds such a return address (Go: golang/go#22008) is
// looking at uprobes' machinery, not at its own code.
func (m *MM) XOLContains(addr uint64) bool {
	a := m.xol.Load()
	return a != nil && a.vaddr <= addr && addr < a.vaddr+PageSize
}

// IsTrampoline reports whether addr is the uretprobe trampoline (the
// value the entry of a uretprobed function writes over the return
// address).
func (m *MM) IsTrampoline(addr uint64) bool {
	a := m.xol.Load()
	return a != nil && addr == a.vaddr
}

// XOLBusySlots returns the number of busy XOL slots (the trampoline's
// slot 0 included), 0 when there is no area.
func (m *MM) XOLBusySlots() int {
	if a := m.xol.Load(); a != nil {
		return a.busySlots()
	}
	return 0
}

func (m *MM) mmapWriteLock() {
	m.mmapLock.Lock()
	m.mmapSeq.writeBegin()
}

func (m *MM) mmapWriteUnlock() {
	m.mmapSeq.writeEnd()
	m.mmapLock.Unlock()
}

// installBreakpoint is install_breakpoint. Called with mmapLock held.
func (m *MM) installBreakpoint(u *uprobe, vaddr uint64) error {
	if err := m.prepareUprobe(u, vaddr); err != nil {
		return err
	}
	first := m.flags.Load()&mmfHasUprobes == 0
	if first {
		m.flags.Or(mmfHasUprobes)
	}
	err := m.writeOpcode(u, vaddr, true)
	if err == nil {
		m.flags.And(^uint32(mmfRecalcUprobes))
	} else if first {
		m.flags.And(^uint32(mmfHasUprobes))
	}
	return err
}

// removeBreakpoint is remove_breakpoint. Called with mmapLock held.
func (m *MM) removeBreakpoint(u *uprobe, vaddr uint64) error {
	m.flags.Or(mmfRecalcUprobes)
	return m.writeOpcode(u, vaddr, false)
}

// prepareUprobe is prepare_uprobe: read the original instruction from
// the file and analyse it, once per uprobe, with the first mm.
func (m *MM) prepareUprobe(u *uprobe, vaddr uint64) error {
	if u.copied.Load() {
		return nil
	}
	u.consumerRWSem.Lock()
	defer u.consumerRWSem.Unlock()
	if u.copied.Load() {
		return nil
	}
	n, err := copyInsn(u.file, u.offset, u.arch.insn[:insnSize(m.arch)])
	if err != nil {
		return err
	}
	if isTrapInsn(m.arch, u.arch.insn[:n]) {
		return m.sys.reject(m.arch, u.offset, u.arch.insn[:n], ENOTSUPP, "the instruction already is a breakpoint")
	}
	if e, why := analyzeInsn(m.arch, &u.arch, vaddr, n, &m.sys.opts); e != 0 {
		return m.sys.reject(m.arch, u.offset, u.arch.insn[:n], e, why)
	}
	u.copied.Store(true)
	return nil
}

// analyzeInsn is arch_uprobe_analyze_insn for arch.
func analyzeInsn(arch Arch, au *archUprobe, vaddr uint64, n int, o *Options) (Errno, string) {
	if arch == ArchAMD64 {
		return analyzeX86(au, n, o.X86NopForms)
	}
	if n < 4 {
		return EIO, "instruction truncated by the end of the file"
	}
	return analyzeARM64(au, vaddr, o.ARM64SimulateNOP)
}

func (s *System) reject(arch Arch, off uint64, insn []byte, e Errno, why string) error {
	re := &RejectError{Arch: arch, Offset: off, Insn: append([]byte(nil), insn...), Errno: e, Reason: why}
	if arch == ArchAMD64 {
		re.Disasm = x86Disasm(insn, 0)
	} else if len(insn) >= 4 {
		re.Disasm = a64Disasm(binary.LittleEndian.Uint32(insn), 0)
	}
	return re
}

// copyInsn is copy_insn: up to len(dst) bytes at off, only those below
// the end of the file (EIO when none).
func copyInsn(f *fileRef, off uint64, dst []byte) (int, error) {
	if int64(off) >= f.size {
		return 0, fmt.Errorf("offset %#x at or beyond the end of %s: %w", off, f.path, EIO)
	}
	n := len(dst)
	if rest := f.size - int64(off); int64(n) > rest {
		n = int(rest)
	}
	got, err := f.readAt(dst[:n], int64(off))
	if got < n {
		return 0, fmt.Errorf("reading %s at %#x: %v: %w", f.path, off, err, EIO)
	}
	return n, nil
}

// writeOpcode is uprobe_write_opcode (set_swbp / set_orig_insn): write
// the breakpoint (register) or the original bytes back, into this mm's
// private copy of the page, adjusting the SDT counter on the first real
// change.
func (m *MM) writeOpcode(u *uprobe, vaddr uint64, register bool) error {
	size := swbpSize(m.arch)
	cur := m.scratch[:size]
	if err := m.as.Peek(cur, vaddr); err != nil {
		return fmt.Errorf("reading %#x: %w", vaddr, EFAULT)
	}
	isBP := isTrapInsn(m.arch, cur)
	if register == isBP {
		return nil // verify_opcode: nothing to do
	}
	refUpdated := false
	if u.refCtrOffset != 0 {
		d := int16(-1)
		if register {
			d = 1
		}
		if err := m.updateRefCtr(u, d); err != nil {
			return err
		}
		refUpdated = true
	}
	var b []byte
	if register {
		b = m.swbpBytes()
	} else {
		b = u.arch.insn[:size]
	}
	if err := m.as.Poke(b, vaddr); err != nil {
		if register && refUpdated {
			_ = m.updateRefCtr(u, -1)
		}
		return fmt.Errorf("writing %#x: %w", vaddr, EFAULT)
	}
	if m.arch == ArchARM64 {
		m.as.FlushICache(vaddr, size)
	}
	if register {
		m.sys.stats.installs.Add(1)
	} else {
		m.sys.stats.removals.Add(1)
	}
	return nil
}

var (
	arm64SWBPBytes = [4]byte{0xA0, 0x00, 0x20, 0xD4}
	x86SWBPBytes   = [1]byte{X86SWBP}
)

func (m *MM) swbpBytes() []byte {
	if m.arch == ArchAMD64 {
		return x86SWBPBytes[:]
	}
	return arm64SWBPBytes[:]
}

// delayedUprobe is struct delayed_uprobe.
type delayedUprobe struct {
	u  *uprobe
	mm *MM
}

// validRefCtrVMA is valid_ref_ctr_vma.
func validRefCtrVMA(u *uprobe, v *VMA) bool {
	if u.refCtrOffset == 0 || v.File != u.file.id || !v.Write || v.Shared {
		return false
	}
	a := v.vaddrOf(u.refCtrOffset)
	return v.Start <= a && a < v.End
}

// updateRefCtr is update_ref_ctr.
func (m *MM) updateRefCtr(u *uprobe, d int16) error {
	for _, v := range m.as.VMAs() {
		if !validRefCtrVMA(u, &v) {
			continue
		}
		err := m.updateRefCtrAt(v.vaddrOf(u.refCtrOffset), d)
		if err != nil {
			m.sys.warn("ref_ctr %s failed for inode: %#x offset: %#x ref_ctr_offset: %#x of mm: %d",
				map[bool]string{true: "increment", false: "decrement"}[d > 0], u.file.id.Inode, u.offset, u.refCtrOffset, m.pid)
		}
		if d > 0 {
			return err
		}
		break
	}
	s := m.sys
	s.delayedMu.Lock()
	defer s.delayedMu.Unlock()
	if d > 0 {
		for _, du := range s.delayed {
			if du.u == u && du.mm == m {
				return nil
			}
		}
		s.delayed = append(s.delayed, delayedUprobe{u, m})
		return nil
	}
	s.delayedRemoveLocked(u, m)
	return nil
}

// updateRefCtrAt is __update_ref_ctr: add d to the 16-bit counter,
// refusing to go below zero.
func (m *MM) updateRefCtrAt(vaddr uint64, d int16) error {
	var b [2]byte
	if err := m.as.Peek(b[:], vaddr); err != nil {
		return EFAULT
	}
	v := int16(binary.LittleEndian.Uint16(b[:]))
	if int32(v)+int32(d) < 0 {
		m.sys.warn("ref_ctr going negative. vaddr: %#x, curr val: %d, delta: %d", vaddr, v, d)
		return EINVAL
	}
	binary.LittleEndian.PutUint16(b[:], uint16(v+d))
	if err := m.as.Poke(b[:], vaddr); err != nil {
		return EFAULT
	}
	return nil
}

// delayedRemove drops delayed records of u (any mm when mm is nil) or
// of mm (any uprobe when u is nil).
func (s *System) delayedRemove(u *uprobe, mm *MM) {
	s.delayedMu.Lock()
	s.delayedRemoveLocked(u, mm)
	s.delayedMu.Unlock()
}

func (s *System) delayedRemoveLocked(u *uprobe, mm *MM) {
	out := s.delayed[:0]
	for _, du := range s.delayed {
		if (u == nil || du.u == u) && (mm == nil || du.mm == mm) {
			continue
		}
		out = append(out, du)
	}
	s.delayed = out
}

// delayedRefCtrInc is delayed_ref_ctr_inc.
func (m *MM) delayedRefCtrInc(v *VMA) {
	s := m.sys
	s.delayedMu.Lock()
	defer s.delayedMu.Unlock()
	out := s.delayed[:0]
	for _, du := range s.delayed {
		if du.mm != m || !validRefCtrVMA(du.u, v) {
			out = append(out, du)
			continue
		}
		if err := m.updateRefCtrAt(v.vaddrOf(du.u.refCtrOffset), 1); err != nil {
			s.warn("ref_ctr increment failed for inode: %#x offset: %#x ref_ctr_offset: %#x of mm: %d",
				du.u.file.id.Inode, du.u.offset, du.u.refCtrOffset, m.pid)
		}
	}
	s.delayed = out
}

// Mmap is uprobe_mmap: call it after a mapping was created and its
// contents are in place (mmap, mremap's new range, the ELF loader). It
// installs the breakpoints of every probe in
// the mapped range whose consumers want this mm, and applies pending SDT
// counter increments to a new writable mapping. Errors are ignored, as
// in Linux. Do not hold the address space's own lock while calling.
func (m *MM) Mmap(v VMA) { m.MmapBy(v, nil) }

// MmapBy is Mmap called by the thread current (the one making the
// mapping; nil: none, as for the ELF loader): like uprobe_mmap it installs
// no breakpoint while current has a fatal signal pending (the task is
// being killed and will never run the mapping).
func (m *MM) MmapBy(v VMA, current Thread) {
	s := m.sys
	if s.tree.empty() || m.dead.Load() {
		return
	}
	m.mmapWriteLock()
	defer m.mmapWriteUnlock()
	if !v.File.IsZero() && v.Write && !v.Shared && m.flags.Load()&mmfHasUprobes != 0 {
		m.delayedRefCtrInc(&v)
	}
	if !validVMA(&v, true) {
		return
	}
	mu := &s.mmapHash[(v.File.Dev^v.File.Inode)%uint64(len(s.mmapHash))]
	mu.Lock()
	defer mu.Unlock()
	for _, u := range s.buildProbeList(&v, v.Start, v.End) {
		if (current == nil || !current.FatalSignalPending()) && u.filterChain(m) {
			_ = m.installBreakpoint(u, v.vaddrOf(u.offset))
		}
		s.putUprobe(u)
	}
}

// MmapAll runs Mmap over every current mapping (after exec's loader has
// mapped the new image).
func (m *MM) MmapAll() {
	for _, v := range m.as.VMAs() {
		m.Mmap(v)
	}
}

// buildProbeList is build_probe_list: referenced uprobes of v's file
// whose offsets fall in [start, end) of v.
func (s *System) buildProbeList(v *VMA, start, end uint64) []*uprobe {
	lo := keyOf(v.File, v.fileOffset(start))
	hi := keyOf(v.File, v.fileOffset(end-1))
	var out []*uprobe
	s.tree.rangeLock()
	s.tree.rangeLocked(lo, hi, func(u *uprobe) {
		if u.tryGet() {
			out = append(out, u)
		}
	})
	s.tree.rangeUnlock()
	return out
}

// vmaHasUprobes is vma_has_uprobes.
func (s *System) vmaHasUprobes(v *VMA, start, end uint64) bool {
	lo := keyOf(v.File, v.fileOffset(start))
	hi := keyOf(v.File, v.fileOffset(end-1))
	found := false
	s.tree.rangeLock()
	s.tree.rangeLocked(lo, hi, func(*uprobe) { found = true })
	s.tree.rangeUnlock()
	return found
}

// Munmap is uprobe_munmap: call it before [start, end) of mapping v is
// unmapped. It only marks the mm for a lazy recalculation of
// MMF_HAS_UPROBES.
func (m *MM) Munmap(v VMA, start, end uint64) {
	if m.sys.tree.empty() || !validVMA(&v, false) || m.dead.Load() {
		return
	}
	f := m.flags.Load()
	if f&mmfHasUprobes == 0 || f&mmfRecalcUprobes != 0 {
		return
	}
	if m.sys.vmaHasUprobes(&v, start, end) {
		m.flags.Or(mmfRecalcUprobes)
	}
}

// recalcUprobes is mmf_recalc_uprobes.
func (m *MM) recalcUprobes() {
	for _, v := range m.as.VMAs() {
		if !validVMA(&v, false) {
			continue
		}
		if m.sys.vmaHasUprobes(&v, v.Start, v.End) {
			return
		}
	}
	m.flags.And(^uint32(mmfHasUprobes))
}

// unapplyUprobe is unapply_uprobe: remove u's breakpoint from every
// mapping of this mm (UPROBE_HANDLER_REMOVE).
func (m *MM) unapplyUprobe(u *uprobe) {
	m.mmapWriteLock()
	defer m.mmapWriteUnlock()
	for _, v := range m.as.VMAs() {
		if !validVMA(&v, false) || v.File != u.file.id {
			continue
		}
		if u.offset < v.Offset || u.offset >= v.Offset+(v.End-v.Start) {
			continue
		}
		_ = m.removeBreakpoint(u, v.vaddrOf(u.offset))
	}
	m.sys.stats.handlerRemoves.Add(1)
}

// Fork is the uprobe side of fork(2): under dup_mmap_sem (read), dup
// copies the address space (including the private text pages that hold
// breakpoints); the child inherits MMF_HAS_UPROBES with
// MMF_RECALC_UPROBES (uprobe_dup_mmap) and loses the "[uprobes]" mapping
// (VM_DONTCOPY: Fork unmaps it from the copy). The child task gets its
// own XOL area at the same address on its first return to user space
// (Task.CopyProcess, Task.TaskWork). vfork and threads share the MM and
// do not call Fork.
func (m *MM) Fork(pid int32, dup func() (AddrSpace, error)) (*MM, error) {
	s := m.sys
	s.dupMmapSem.RLock()
	defer s.dupMmapSem.RUnlock()
	as, err := dup()
	if err != nil {
		return nil, err
	}
	c := s.NewMM(as, m.arch, pid)
	if m.flags.Load()&mmfHasUprobes != 0 {
		c.flags.Store(mmfHasUprobes | mmfRecalcUprobes)
	}
	if a := m.xol.Load(); a != nil {
		as.Unmap(a.vaddr, a.vaddr+PageSize)
	}
	return c, nil
}

// Release is uprobe_clear_state: the address space is gone (exit, or
// exec replaced it). Delayed SDT records for it are dropped and it no
// longer receives breakpoints.
func (m *MM) Release() {
	if m.dead.Swap(true) {
		return
	}
	s := m.sys
	s.delayedRemove(nil, m)
	s.mmsMu.Lock()
	for i, o := range s.mms {
		if o == m {
			s.mms = append(s.mms[:i], s.mms[i+1:]...)
			break
		}
	}
	s.mmsMu.Unlock()
	m.xol.Store(nil)
}

// isTrapAtAddr is is_trap_at_addr: 1 when the breakpoint opcode is at
// addr, 0 when not, a negative errno when it cannot be read.
func (m *MM) isTrapAtAddr(addr uint64) int {
	n := swbpSize(m.arch)
	if addr%uint64(n) != 0 {
		return -int(EINVAL)
	}
	b := make([]byte, n)
	if m.as.Peek(b, addr) != nil {
		return -int(EFAULT)
	}
	if bytes.Equal(b, m.swbpBytes()) {
		return 1
	}
	return 0
}
