package uprobes

import (
	"encoding/binary"
	"sync/atomic"
)

// Uretprobes (spec §6): the entry hit hijacks the return address with
// the trampoline in XOL slot 0 and pushes a return instance; the
// function returns into the trampoline, whose trap (or, on x86-64, the
// uretprobe syscall) runs the return handlers and restores the original
// return address.

// MaxUretprobeDepth is MAX_URETPROBE_DEPTH.
const MaxUretprobeDepth = 64

// hprobe states (enum hprobe_state).
const (
	hprobeLeased   int32 = iota // SRCU-protected lease
	hprobeStable                // holds a uprobe reference
	hprobeGone                  // no usable uprobe
	hprobeConsumed              // handed to the return path
)

// hprobe is struct hprobe: the hybrid SRCU-leased / refcounted link from
// a return instance to its uprobe.
type hprobe struct {
	state   onceInt32
	uprobe  atomic.Pointer[uprobe]
	srcuIdx int
	srcuCPU int
}

// returnConsumer is struct return_consumer (a session consumer's cookie).
type returnConsumer struct {
	cookie uint64
	id     uint64
}

// returnInstance is struct return_instance (v6.14+). next links both the
// task's stack of pending returns and, once freed, the task's pool, as in
// the kernel: that sharing is what makes reuse before unlinking unsafe.
type returnInstance struct {
	hprobe       hprobe
	fn           uint64 // probe address (ri->func)
	stack        uint64 // SP at entry
	origRetVaddr uint64
	chained      bool
	consCnt      int
	consumer     returnConsumer
	extra        []returnConsumer // cons_cnt-1 more (extra_consumers)
	next         rcuPointer[returnInstance]
}

func (h *hprobe) initLeased(u *uprobe, idx, cpu int) {
	if h.uprobe.Load() != u { // a pooled instance often has it already
		h.uprobe.Store(u)
	}
	h.srcuIdx, h.srcuCPU = idx, cpu
	h.state.Store(hprobeLeased)
}

func (h *hprobe) initStable(u *uprobe) {
	h.uprobe.Store(u)
	h.srcuIdx = -1
	if u != nil {
		h.state.Store(hprobeStable)
	} else {
		h.state.Store(hprobeGone)
	}
}

// consume is hprobe_consume.
func (h *hprobe) consume() (*uprobe, int32) {
	old := h.state.Swap(hprobeConsumed)
	switch old {
	case hprobeLeased, hprobeStable:
		return h.uprobe.Load(), old
	}
	return nil, old
}

// hprobeFinalize is hprobe_finalize.
func (s *System) hprobeFinalize(h *hprobe, old int32) {
	switch old {
	case hprobeLeased:
		s.retSRCU.readUnlock(h.srcuCPU, h.srcuIdx)
	case hprobeStable:
		s.putUprobe(h.uprobe.Load())
	}
}

// hprobeExpireRace, when set (tests only), runs between hprobe_expire's
// reference grab and its cmpxchg: where a racing hprobe_consume wins.
var hprobeExpireRace func(h *hprobe)

// hprobeExpire is hprobe_expire: turn a lease into a reference (or GONE).
// The caller holds retSRCU.
func (s *System) hprobeExpire(h *hprobe, get bool) *uprobe {
	st := h.state.Load()
	switch st {
	case hprobeStable:
		u := h.uprobe.Load()
		if get {
			u.get()
		}
		return u
	case hprobeGone, hprobeConsumed:
		return nil
	case hprobeLeased:
		u := h.uprobe.Load()
		if !u.tryGet() {
			u = nil
		}
		ns := hprobeGone
		if u != nil {
			ns = hprobeStable
		}
		if hprobeExpireRace != nil {
			hprobeExpireRace(h)
		}
		if h.state.CompareAndSwap(hprobeLeased, ns) {
			s.retSRCU.readUnlock(h.srcuCPU, h.srcuIdx)
			s.stats.timerExpired.Add(1)
			if get {
				u.get()
			}
			return u
		}
		if u != nil && !get {
			s.putUprobe(u)
		}
		return u
	}
	s.warn("hprobe invalid state %d", st)
	return nil
}

// riTimer is ri_timer: expire the leases of a task whose returns are
// pending for long. It runs on the Clock's goroutine.
func (s *System) riTimer(ut *utask, cpu int) {
	ut.timerRunning.Add(1)
	defer ut.timerRunning.Add(-1)
	if ut.dead.Load() {
		return
	}
	s.stats.timerRuns.Add(1)
	idx := s.retSRCU.readLock(cpu)
	ut.riSeq.writeBegin()
	for ri := ut.ri.Load(); ri != nil; ri = ri.next.Load() {
		if h := testHookTimerWalk; h != nil {
			h(ri)
		}
		s.hprobeExpire(&ri.hprobe, false)
	}
	ut.riSeq.writeEnd()
	s.retSRCU.readUnlock(cpu, idx)
}

// Test hooks (nil outside tests): called for each instance the timer
// walks, and after free_ret_instance.
var (
	testHookTimerWalk func(ri *returnInstance)
	testHookFreeRI    func(ri *returnInstance)
)

// allocReturnInstance is alloc_return_instance.
func (t *Task) allocReturnInstance() *returnInstance {
	ut := t.utask
	s := t.mm.sys
	if s.opts.ReturnInstancePool {
		if ri := ut.riPool; ri != nil {
			ut.riPool = ri.next.Load()
			s.stats.poolHits.Add(t.slot, 1)
			t.cost(PathRIPool, 1)
			return ri
		}
	}
	if s.failAlloc(AllocReturnInstance) {
		return nil
	}
	if c := s.opts.Contention; c != nil {
		c.Slab(t.th, false)
	}
	s.stats.riAllocs.Add(1)
	return new(returnInstance)
}

// riFree is ri_free (RCU-delayed in Linux; here the garbage collector).
func (s *System) riFree(ri *returnInstance) {
	s.stats.riFrees.Add(1)
}

// pushConsumer is push_consumer: record a session consumer's cookie.
// nil means the instance was freed (allocation failure).
func (t *Task) pushConsumer(ri *returnInstance, id, cookie uint64) *returnInstance {
	s := t.mm.sys
	if ri.consCnt > 0 {
		if s.failAlloc(AllocExtraConsumers) {
			s.riFree(ri)
			return nil
		}
		if cap(ri.extra) < ri.consCnt {
			n := make([]returnConsumer, ri.consCnt, 2*ri.consCnt)
			copy(n, ri.extra)
			ri.extra = n
		}
		ri.extra = ri.extra[:ri.consCnt]
	}
	ric := &ri.consumer
	if ri.consCnt > 0 {
		ric = &ri.extra[ri.consCnt-1]
	}
	ric.id, ric.cookie = id, cookie
	ri.consCnt++
	return ri
}

// returnConsumerFind is return_consumer_find.
func returnConsumerFind(ri *returnInstance, iter *int, id uint64) *returnConsumer {
	for idx := *iter; idx < ri.consCnt; idx++ {
		ric := &ri.consumer
		if idx > 0 {
			ric = &ri.extra[idx-1]
		}
		if ric.id == id {
			*iter = idx + 1
			return ric
		}
	}
	return nil
}

// freeRetInstance is free_ret_instance: the instance is already unlinked
// (except in the WrongReuseBeforeUnlink variant). With the pool, it is
// reused immediately only when ri_timer is not inside its walk.
func (t *Task) freeRetInstance(ri *returnInstance, cleanupHprobe bool) {
	ut := t.utask
	s := t.mm.sys
	if cleanupHprobe {
		_, old := ri.hprobe.consume()
		s.hprobeFinalize(&ri.hprobe, old)
	}
	if s.opts.ReturnInstancePool && ut.riSeq.tryBegin() {
		ri.consCnt = 0
		ri.next.Store(ut.riPool)
		ut.riPool = ri
		s.stats.poolPuts.Add(t.slot, 1)
		t.cost(PathRIPool, 1)
	} else {
		if c := s.opts.Contention; c != nil {
			c.Slab(t.th, true) // kfree_rcu
		}
		s.riFree(ri)
	}
	if h := testHookFreeRI; h != nil {
		h(ri)
	}
}

// trampolineVaddr is uprobe_get_trampoline_vaddr (^0 without an area).
func (m *MM) trampolineVaddr() uint64 {
	if a := m.xolAreaLoad(); a != nil {
		return a.vaddr
	}
	return ^uint64(0)
}

// hijackReturnAddr is arch_uretprobe_hijack_return_addr: ^0 on failure.
// sp is r.SP().
func (t *Task) hijackReturnAddr(tramp, sp uint64, r Regs) uint64 {
	if t.mm.arch == ArchARM64 {
		orig := t.reg(r, 30)
		t.setReg(r, 30, tramp)
		return orig
	}
	ut := t.utask
	as := t.mm.as
	w := ut.words[:1]
	// Read the return address and, unless it is the trampoline already,
	// write the trampoline over it: both in one translation when the
	// thread can (userWordSwapper), else one copy each.
	var orig uint64
	read, written := false, false
	if sw := t.sw; sw != nil {
		orig, read, written = sw.SwapUserWord(sp, tramp)
	}
	if !read {
		if t.readUserWords(r, w, sp) != nil {
			return ^uint64(0)
		}
		orig = w[0]
		written = orig == tramp
	}
	if written {
		return orig
	}
	w[0] = tramp
	if t.writeUserWords(r, w, sp) == nil {
		return orig
	}
	b := ut.scratch[:8]
	binary.LittleEndian.PutUint64(b, tramp)
	// copy_to_user stops at the first failing byte: a partial write
	// clobbers the return address.
	clobbered := 0
	for i := 0; i < 8; i++ {
		if as.WriteAt(b[i:i+1], sp+uint64(i)) != nil {
			break
		}
		clobbered++
	}
	if clobbered != 0 {
		t.mm.sys.warn("return address clobbered: pid=%d, %%sp=%#x, %%ip=%#x", t.tid, sp, r.PC())
		t.th.SendSignal(SIGSEGV, true)
	}
	return ^uint64(0)
}

// rpCheck is enum rp_check.
type rpCheck uint8

const (
	rpCheckCall rpCheck = iota
	rpCheckChainCall
	rpCheckRet
)

// uretprobeIsAlive is arch_uretprobe_is_alive (spec §6.3).
func (t *Task) uretprobeIsAlive(ri *returnInstance, ctx rpCheck, r Regs) bool {
	sp := t.sp(r)
	if t.mm.arch == ArchAMD64 {
		if ctx == rpCheckCall {
			return sp < ri.stack
		}
		return sp <= ri.stack
	}
	if ctx == rpCheckChainCall {
		return sp <= ri.stack
	}
	return sp < ri.stack
}

// cleanupReturnInstances is cleanup_return_instances: drop the instances
// of frames that longjmp (or an exception) left.
func (t *Task) cleanupReturnInstances(chained bool, r Regs) {
	ut := t.utask
	s := t.mm.sys
	ctx := rpCheckCall
	if chained {
		ctx = rpCheckChainCall
	}
	ri := ut.ri.Load()
	for ri != nil && !t.uretprobeIsAlive(ri, ctx, r) {
		next := ri.next.Load()
		if !s.opts.WrongReuseBeforeUnlink {
			ut.ri.Store(next)
		}
		ut.depth--
		s.stats.uretPurged.Add(1)
		t.freeRetInstance(ri, true)
		ri = next
	}
	if s.opts.WrongReuseBeforeUnlink {
		ut.ri.Store(ri)
	}
}

// prepareUretprobe is prepare_uretprobe (spec §6.1).
func (t *Task) prepareUretprobe(u *uprobe, r Regs, ri *returnInstance) {
	ut := t.utask
	m := t.mm
	s := m.sys
	t.cost(PathUretprobePrepare, 1)
	if m.getXOLArea() == nil {
		s.riFree(ri)
		return
	}
	if ut.depth >= MaxUretprobeDepth {
		s.stats.uretOmitted.Add(1)
		s.warn("uprobe: omit uretprobe due to nestedness limit pid/tgid=%d/%d", t.tid, m.pid)
		s.riFree(ri)
		return
	}
	tramp := m.trampolineVaddr()
	// Nothing below changes SP before ri.stack is set from it.
	sp := t.sp(r)
	orig := t.hijackReturnAddr(tramp, sp, r)
	if orig == ^uint64(0) {
		s.riFree(ri)
		return
	}
	chained := orig == tramp
	if ut.ri.Load() != nil || s.opts.WrongReuseBeforeUnlink { // else nothing to clean up
		t.cleanupReturnInstances(chained, r)
	}
	if chained {
		top := ut.ri.Load()
		if top == nil {
			s.warn("uprobe: pid %d: handle tail call", t.tid)
			s.riFree(ri)
			return
		}
		orig = top.origRetVaddr
		s.stats.uretChained.Add(1)
	}
	idx := s.retSRCU.readLock(t.cpu)
	ri.fn = t.pc(r)
	ri.stack = sp
	ri.origRetVaddr = orig
	ri.chained = chained
	ut.depth++
	ri.hprobe.initLeased(u, idx, t.cpu)
	ri.next.Store(ut.ri.Load())
	ut.ri.Store(ri)
	s.stats.uretEntries.Add(t.slot, 1)
	if ut.riTimer == nil {
		ut.riTimer = s.clock.AfterFunc(RITimerPeriod, ut.timerFn)
	} else {
		ut.riTimer.Reset(RITimerPeriod)
	}
}

// findNextRetChain is find_next_ret_chain.
func findNextRetChain(ri *returnInstance) *returnInstance {
	for {
		chained := ri.chained
		ri = ri.next.Load()
		if !chained {
			return ri
		}
	}
}

// handleTrampoline is uprobe_handle_trampoline (spec §6.4).
func (t *Task) handleTrampoline(r Regs) {
	ut := t.utask
	s := t.mm.sys
	if ut == nil || ut.ri.Load() == nil {
		s.warn("uprobe: pid %d: handle uretprobe, sending SIGILL", t.tid)
		s.stats.sigills.Add(1)
		t.th.SendSignal(SIGILL, true)
		return
	}
	t.cost(PathUretprobeReturn, 1)
	ri := ut.ri.Load()
	for {
		nextChain := findNextRetChain(ri)
		valid := nextChain == nil || t.uretprobeIsAlive(nextChain, rpCheckRet, r)
		t.setPC(r, ri.origRetVaddr)
		for {
			next := ri.next.Load()
			ut.ri.Store(next)
			ut.depth--
			u, old := ri.hprobe.consume()
			if valid {
				t.handleUretprobeChain(ri, u, r)
				s.stats.uretReturns.Add(t.slot, 1)
			} else {
				s.stats.uretPurged.Add(1)
			}
			s.hprobeFinalize(&ri.hprobe, old)
			t.freeRetInstance(ri, false)
			ri = next
			if ri == nextChain {
				break
			}
		}
		if valid {
			return
		}
	}
}

// handleUretprobeChain is handle_uretprobe_chain: run the return handlers
// of the consumers attached now (session consumers only if they were
// recorded at entry).
func (t *Task) handleUretprobeChain(ri *returnInstance, u *uprobe, r Regs) {
	if u == nil {
		return
	}
	s := t.mm.sys
	ut := t.utask
	idx := s.hitRCU.readLock(t.slot)
	iter := 0
	ctx := &ut.ctx
	for _, c := range u.consumerList() {
		if c.RetHandler == nil {
			continue
		}
		session := c.Handler != nil
		ric := returnConsumerFind(ri, &iter, c.id)
		if session && ric == nil {
			continue
		}
		var cookie *uint64
		if ric != nil {
			cookie = &ric.cookie
		}
		ctx.set(t, r, ri.fn, ri.origRetVaddr, c.cookie, cookie, c.name)
		c.RetHandler(ctx)
	}
	ctx.reset(t)
	s.hitRCU.readUnlock(t.slot, idx)
}

// dupUtask is dup_utask: copy the parent's pending return instances into
// the child (STABLE with a reference, or GONE), in order.
func (t *Task) dupUtask(child *Task) error {
	s := t.mm.sys
	if s.failAlloc(AllocUtask) {
		return ENOMEM
	}
	n := child.newUtask()
	child.utask = n
	idx := s.retSRCU.readLock(t.cpu)
	defer s.retSRCU.readUnlock(t.cpu, idx)
	tail := &n.ri
	for o := t.utask.ri.Load(); o != nil; o = o.next.Load() {
		if s.failAlloc(AllocDupReturnInstance) {
			return ENOMEM
		}
		c := &returnInstance{fn: o.fn, stack: o.stack, origRetVaddr: o.origRetVaddr, chained: o.chained,
			consCnt: o.consCnt, consumer: o.consumer}
		if o.consCnt > 1 {
			c.extra = append([]returnConsumer(nil), o.extra[:o.consCnt-1]...)
		}
		c.hprobe.initStable(s.hprobeExpire(&o.hprobe, true))
		tail.Store(c)
		tail = &c.next
		n.depth++
		s.stats.riAllocs.Add(1)
	}
	return nil
}

// SysUretprobe is the x86-64 uretprobe syscall (335, spec §6.6), entered
// from the trampoline in XOL slot 0. r.PC() is the instruction after the
// SYSCALL. It returns the value for RAX; the run loop must then leave
// RIP, RSP, RCX and R11 as this call set them, and never restart the
// syscall (orig_ax = -1). A call from anywhere else raises SIGILL.
func (t *Task) SysUretprobe(r Regs) uint64 {
	m := t.mm
	s := m.sys
	sigill := func() uint64 {
		s.stats.sigills.Add(1)
		t.th.SendSignal(SIGILL, true)
		return ^uint64(0)
	}
	a := m.xolAreaLoad()
	if m.arch != ArchAMD64 || a == nil {
		return sigill()
	}
	ip := a.vaddr + X86UretprobeCheckOffset
	if t.pc(r) != ip {
		return sigill()
	}
	var w []uint64
	if ut := t.utask; ut != nil {
		w = ut.words[:3]
	} else {
		w = make([]uint64, 3)
	}
	sp := t.sp(r)
	if t.readUserWords(r, w, sp) != nil {
		return sigill()
	}
	t.setReg(r, 11, w[0])
	t.setReg(r, 1, w[1])
	t.setReg(r, 0, w[2])
	sp += 24
	t.setSP(r, sp)
	t.handleTrampoline(r)
	if t.sp(r) != sp {
		return t.reg(r, 0) // a handler changed SP: return through IRET with the final regs
	}
	sp -= 24
	t.setSP(r, sp)
	w[0], w[1], w[2] = t.reg(r, 11), t.reg(r, 1), t.pc(r)
	t.setPC(r, ip)
	if t.writeUserWords(r, w, sp) != nil {
		return sigill()
	}
	t.setReg(r, 11, r.Flags())
	t.setReg(r, 1, ip) // the PC, as just set
	return t.reg(r, 0)
}
