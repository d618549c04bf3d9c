package uprobes

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retWorld is an arm64 world with a uretprobe on the NOP "function" at
// a64NOPOff; calls are modelled by setting LR/SP and trapping.
type retWorld struct {
	*world
	th   *fakeThread
	tk   *Task
	r    *fakeRegs
	rets []retSeen
}

type retSeen struct {
	fn, retAddr, x0, session uint64
	name                     string
}

func newRetWorld(t *testing.T, o Options) *retWorld {
	w := &retWorld{world: newWorld(t, ArchARM64, o, a64Text()), th: &fakeThread{}}
	w.tk, w.r = w.task(w.th, 1)
	return w
}

func (w *retWorld) retConsumer(name string) Consumer {
	return Consumer{Name: name, RetHandler: func(c *Ctx) {
		s := retSeen{fn: c.Addr, retAddr: c.RetAddr, x0: c.Regs.Reg(0), name: c.Name}
		if c.Session != nil {
			s.session = *c.Session
		}
		require.Equal(w.t, c.RetAddr, c.Regs.PC(), "PC is the original return address in return handlers")
		w.rets = append(w.rets, s)
	}}
}

// call enters the probed function with the given SP and return address.
func (w *retWorld) call(sp, lr uint64) {
	w.r.sp, w.r.x[30], w.r.pc = sp, lr, textBase+a64NOPOff
	require.True(w.t, w.trap(w.tk, w.r, w.th))
	require.Equal(w.t, uint64(textBase+a64NOPOff+4), w.r.pc)
}

func (w *retWorld) tramp() uint64 {
	a, ok := w.mm.XOLArea()
	require.True(w.t, ok)
	return a
}

// ret returns from a function: SP back to its entry value, PC = LR (the
// trampoline traps).
func (w *retWorld) ret(sp, x0 uint64) {
	w.r.sp, w.r.pc, w.r.x[0] = sp, w.r.x[30], x0
	if w.r.pc == w.tramp() {
		require.True(w.t, w.trap(w.tk, w.r, w.th))
	}
}

func TestUretprobe_ARM64Basic(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	w.probe(a64NOPOff, w.retConsumer("f"))
	w.call(0x7fe000, 0x400800)
	assert.Equal(t, w.tramp(), w.r.x[30], "LR hijacked")
	assert.Equal(t, 1, w.tk.PendingReturns())
	w.ret(0x7fe000, 42)
	assert.Equal(t, uint64(0x400800), w.r.pc)
	assert.Equal(t, []retSeen{{fn: textBase + a64NOPOff, retAddr: 0x400800, x0: 42, name: "f"}}, w.rets)
	assert.Zero(t, w.tk.PendingReturns())
	st := w.sys.Stats()
	assert.Equal(t, uint64(1), st.UretEntries)
	assert.Equal(t, uint64(1), st.UretReturns)
}

// TestUretprobe_DepthLimit: the 65th nested instance is omitted and its
// function returns straight to its caller (spec §6.1, §8.4).
func TestUretprobe_DepthLimit(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	w.probe(a64NOPOff, w.retConsumer("f"))
	const top = 0x7fe000
	for i := 0; i < 65; i++ {
		w.call(top-uint64(i)*32, 0x500000+uint64(i))
	}
	assert.Equal(t, MaxUretprobeDepth, w.tk.PendingReturns())
	assert.Equal(t, uint64(0x500000+64), w.r.x[30], "the 65th return address is left alone")
	assert.Equal(t, uint64(1), w.sys.Stats().UretOmitted)
	for i := 64; i >= 0; i-- {
		if i < 64 {
			w.r.x[30] = w.tramp() // the caller's saved LR, reloaded by its epilogue
		}
		w.ret(top-uint64(i)*32, uint64(i))
		require.Equal(t, uint64(0x500000+i), w.r.pc, "return %d", i)
	}
	assert.Len(t, w.rets, 64)
	assert.Equal(t, uint64(63), w.rets[0].x0)
	assert.Zero(t, w.tk.PendingReturns())
}

// TestUretprobe_Chained: a tail call into a probed function with the
// trampoline already in LR keeps the original return address (spec §8.5).
func TestUretprobe_Chained(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	w.probe(a64NOPOff, w.retConsumer("f"))
	w.call(0x7fe000, 0x400800)
	w.call(0x7fe000, w.tramp()) // tail call (B) with LR = trampoline, same SP
	assert.Equal(t, 2, w.tk.PendingReturns())
	assert.Equal(t, uint64(1), w.sys.Stats().UretChained)
	w.ret(0x7fe000, 7)
	assert.Equal(t, uint64(0x400800), w.r.pc)
	require.Len(t, w.rets, 2, "both instances of the chain return at once")
	assert.Zero(t, w.tk.PendingReturns())
}

func TestUretprobe_ChainedWithEmptyStackIsRefused(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	w.probe(a64NOPOff, w.retConsumer("f"))
	w.call(0x7fe000, 0x400800)
	w.ret(0x7fe000, 0)
	w.call(0x7fe000, w.tramp()) // "return address" already the trampoline, nothing pending
	assert.Zero(t, w.tk.PendingReturns())
	assert.Equal(t, uint64(1), w.sys.Stats().Warnings, "handle tail call")
	w.ret(0x7fe000, 0)
	assert.Equal(t, []int{SIGILL}, w.th.sentSignals(), "trampoline hit with nothing pending")
}

// TestUretprobe_Longjmp: frames skipped by longjmp are purged on the next
// entry (RP_CHECK_CALL) without handlers.
func TestUretprobe_Longjmp(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	w.probe(a64NOPOff, w.retConsumer("f"))
	const s = 0x7fe000
	w.call(s, 0x400800)    // f1
	w.call(s-32, 0x400900) // f2 (called from f1)
	w.call(s-64, 0x400a00) // f3 (called from f2)
	// longjmp from f3 back into f1 (sp = s-16), which calls f again.
	w.call(s-16, 0x400b00)
	assert.Equal(t, 2, w.tk.PendingReturns(), "f2 and f3 purged")
	assert.Equal(t, uint64(2), w.sys.Stats().UretPurged)
	w.ret(s-16, 1)
	assert.Equal(t, uint64(0x400b00), w.r.pc)
	w.r.x[30] = w.tramp()
	w.ret(s, 2)
	assert.Equal(t, uint64(0x400800), w.r.pc)
	require.Len(t, w.rets, 2)
	assert.Equal(t, uint64(0x400b00), w.rets[0].retAddr)
	assert.Equal(t, uint64(0x400800), w.rets[1].retAddr)
}

// TestUretprobe_LongjmpOnReturn: a chain whose next chain is dead
// (RP_CHECK_RET) is dropped without handlers at the trampoline.
func TestUretprobe_LongjmpOnReturn(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	w.probe(a64NOPOff, w.retConsumer("f"))
	const s = 0x7fe000
	w.call(s, 0x400800)    // f1
	w.call(s-32, 0x400900) // f2
	// longjmp from f2 into f1; f1 returns through the trampoline.
	w.r.x[30] = w.tramp()
	w.ret(s, 5)
	assert.Equal(t, uint64(0x400800), w.r.pc)
	require.Len(t, w.rets, 1, "no handler for the skipped f2")
	assert.Equal(t, uint64(0x400800), w.rets[0].retAddr)
	assert.Zero(t, w.tk.PendingReturns())
}

func TestUretprobe_SessionCookiesAndLateConsumers(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	var ignored atomic.Int64
	w.probe(a64NOPOff, Consumer{Name: "session",
		Handler:    func(c *Ctx) int { *c.Session = 0xC00C1E; return 0 },
		RetHandler: w.retConsumer("session").RetHandler})
	w.probe(a64NOPOff, Consumer{Name: "ignore",
		Handler:    func(*Ctx) int { return HandlerIgnore },
		RetHandler: func(*Ctx) { ignored.Add(1) }})
	w.call(0x7fe000, 0x400800)
	// Attached between entry and return: a plain return consumer still
	// gets the return, a session consumer (not recorded) does not.
	w.probe(a64NOPOff, w.retConsumer("late"))
	w.probe(a64NOPOff, Consumer{Name: "late-session", Handler: func(*Ctx) int { return 0 }, RetHandler: w.retConsumer("x").RetHandler})
	w.ret(0x7fe000, 1)
	require.Len(t, w.rets, 2)
	assert.Equal(t, "late", w.rets[0].name)
	assert.Zero(t, w.rets[0].session)
	assert.Equal(t, "session", w.rets[1].name)
	assert.Equal(t, uint64(0xC00C1E), w.rets[1].session, "cookie round trip")
	assert.Zero(t, ignored.Load(), "UPROBE_HANDLER_IGNORE skips the return handler")
}

func TestUretprobe_IgnoreOnlyConsumerDoesNotHijack(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	w.probe(a64NOPOff, Consumer{Handler: func(*Ctx) int { return HandlerIgnore }, RetHandler: func(*Ctx) {}})
	w.call(0x7fe000, 0x400800)
	assert.Equal(t, uint64(0x400800), w.r.x[30])
	assert.Zero(t, w.tk.PendingReturns())
}

// x86: the return address at [sp] and the uretprobe syscall trampoline.
func x86RetWorld(t *testing.T, o Options) (*world, *Task, *fakeRegs, *fakeThread, *[]uint64) {
	text := make([]byte, 0x40)
	copy(text[0x10:], unhex(t, "55")) // push rbp
	w := newWorld(t, ArchAMD64, o, text)
	var rax []uint64
	w.probe(0x10, Consumer{RetHandler: func(c *Ctx) {
		rax = append(rax, c.Regs.Reg(0))
		require.Equal(t, uint64(0x1111), c.Regs.Reg(1), "handlers see the function's RCX")
		require.Equal(t, uint64(0x2222), c.Regs.Reg(11), "and R11")
	}})
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	return w, tk, r, th, &rax
}

func TestUretprobe_X86SyscallTrampoline(t *testing.T) {
	w, tk, r, th, rax := x86RetWorld(t, DefaultOptions())
	const sp0 = stackTop - 0x200
	w.as.poke64(t, sp0, 0x400800) // the caller's CALL pushed the return address
	r.SetSP(sp0)
	r.x[5] = 0xB0B
	r.pc = textBase + 0x10
	w.trap(tk, r, th)
	tramp, _ := w.mm.XOLArea()
	assert.Equal(t, tramp, w.as.peek64(t, sp0), "[sp] hijacked before the push is emulated")
	assert.Equal(t, uint64(0xB0B), w.as.peek64(t, sp0-8))
	assert.Equal(t, x86UretprobeTrampoline[:], w.as.peek(t, tramp, len(x86UretprobeTrampoline)))
	// The function: pop rbp; ret → the trampoline.
	r.SetSP(sp0 + 8)
	r.pc = tramp
	r.x[0], r.x[1], r.x[11] = 77, 0x1111, 0x2222
	// The stub: push rax, rcx, r11; mov $335, rax; syscall.
	sp := uint64(sp0 + 8 - 24)
	w.as.poke64(t, sp+16, r.x[0])
	w.as.poke64(t, sp+8, r.x[1])
	w.as.poke64(t, sp, r.x[11])
	r.SetSP(sp)
	r.x[0] = X86SysUretprobe
	r.pc = tramp + X86UretprobeCheckOffset
	r.x[1], r.x[11] = r.pc, r.flags // SYSCALL's RCX/R11
	ret := tk.SysUretprobe(r)
	assert.Equal(t, uint64(77), ret)
	assert.Equal(t, []uint64{77}, *rax)
	assert.Equal(t, tramp+X86UretprobeCheckOffset, r.pc, "back into the stub")
	assert.Equal(t, uint64(0x400800), w.as.peek64(t, r.SP()+16), "the RAX slot holds the final IP")
	// pop r11; pop rcx; ret
	r11, rcx := w.as.peek64(t, r.SP()), w.as.peek64(t, r.SP()+8)
	r.pc = w.as.peek64(t, r.SP()+16)
	r.SetSP(r.SP() + 24)
	assert.Equal(t, uint64(0x2222), r11)
	assert.Equal(t, uint64(0x1111), rcx)
	assert.Equal(t, uint64(0x400800), r.pc)
	assert.Equal(t, uint64(sp0+8), r.SP())
	assert.Empty(t, th.sentSignals())

	// Called from anywhere else: SIGILL.
	r.pc = textBase + 0x20
	tk.SysUretprobe(r)
	assert.Equal(t, []int{SIGILL}, th.sentSignals())
}

func TestUretprobe_X86Int3Trampoline(t *testing.T) {
	o := DefaultOptions()
	o.X86UretprobeSyscall = false
	w, tk, r, th, rax := x86RetWorld(t, o)
	const sp0 = stackTop - 0x200
	w.as.poke64(t, sp0, 0x400800)
	r.SetSP(sp0)
	r.pc = textBase + 0x10
	w.trap(tk, r, th)
	tramp, _ := w.mm.XOLArea()
	assert.Equal(t, []byte{0xCC, 0}, w.as.peek(t, tramp, 2))
	r.SetSP(sp0 + 8)
	r.pc = tramp
	r.x[0], r.x[1], r.x[11] = 5, 0x1111, 0x2222
	require.True(t, w.trap(tk, r, th))
	assert.Equal(t, uint64(0x400800), r.pc)
	assert.Equal(t, []uint64{5}, *rax)
}

// TestUretprobe_PoolAllocs: with the pool, steady-state uretprobe hits
// allocate nothing on the uprobes path (seed 004).
func TestUretprobe_PoolAllocs(t *testing.T) {
	for _, pool := range []bool{true, false} {
		o := DefaultOptions()
		o.ReturnInstancePool = pool
		w := newRetWorld(t, o)
		var n atomic.Int64
		w.probe(a64NOPOff, Consumer{Handler: func(*Ctx) int { return 0 }, RetHandler: func(*Ctx) { n.Add(1) }})
		cycle := func() {
			w.r.sp, w.r.x[30], w.r.pc = 0x7fe000, 0x400800, textBase+a64NOPOff
			w.tk.BreakpointTrap(w.r, w.r.pc, ARM64BRKImm)
			w.tk.NotifyResume(w.r)
			w.r.pc = w.r.x[30]
			w.tk.BreakpointTrap(w.r, w.r.pc, ARM64BRKImm)
			w.tk.NotifyResume(w.r)
		}
		cycle()
		allocs := testing.AllocsPerRun(200, cycle)
		require.Equal(t, uint64(0x400800), w.r.pc)
		if pool {
			assert.Zero(t, allocs, "pool: no allocation per uretprobe hit")
			assert.Equal(t, uint64(1), w.sys.Stats().RIAllocs)
		} else {
			assert.GreaterOrEqual(t, allocs, 1.0)
		}
	}
}

// TestUretprobe_TimerExpiresLeases: ri_timer turns leases into references
// so that unregister_sync does not wait for a blocked function (spec §6.5).
func TestUretprobe_TimerExpiresLeases(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	p := w.probe(a64NOPOff, w.retConsumer("f"))
	w.call(0x7fe000, 0x400800)
	ri := w.tk.utask.ri.Load()
	require.Equal(t, hprobeLeased, ri.hprobe.state.Load())
	closed := make(chan struct{})
	go func() {
		assert.NoError(t, p.Close())
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("unregister_sync returned while a lease was held")
	case <-time.After(20 * time.Millisecond):
	}
	require.Equal(t, 1, w.clock.fire())
	<-closed
	// Unregistration dropped the last reference before the timer ran, so
	// the lease could not become a reference: GONE.
	assert.Equal(t, hprobeGone, ri.hprobe.state.Load())
	assert.Zero(t, p.u.ref.Load())
	assert.True(t, w.sys.tree.empty())
	w.ret(0x7fe000, 3)
	assert.Equal(t, uint64(0x400800), w.r.pc, "IP restored")
	assert.Empty(t, w.rets, "the uprobe is gone: no handler")
}

// TestUretprobe_TimerKeepsLiveUprobe: expiry while the probe is still
// registered converts the lease into a reference (STABLE).
func TestUretprobe_TimerKeepsLiveUprobe(t *testing.T) {
	w := newRetWorld(t, DefaultOptions())
	p := w.probe(a64NOPOff, w.retConsumer("f"))
	w.call(0x7fe000, 0x400800)
	ri := w.tk.utask.ri.Load()
	require.Equal(t, 1, w.clock.fire())
	assert.Equal(t, hprobeStable, ri.hprobe.state.Load())
	assert.Equal(t, int64(2), p.u.ref.Load(), "registration + the pending return")
	w.sys.UnregisterSync() // no lease left: returns at once
	w.ret(0x7fe000, 3)
	assert.Len(t, w.rets, 1)
	assert.Equal(t, int64(1), p.u.ref.Load())
	assert.Equal(t, uint64(1), w.sys.Stats().TimerExpired)
}

// pendingPair leaves f1 and f2 pending (f1 outermost) and returns them.
func pendingPair(t *testing.T, o Options) (*retWorld, *returnInstance, *returnInstance) {
	w := newRetWorld(t, o)
	w.probe(a64NOPOff, w.retConsumer("f"))
	w.call(0x7fe000, 0x400800)
	f1 := w.tk.utask.ri.Load()
	w.call(0x7fe000-32, 0x400900)
	f2 := w.tk.utask.ri.Load()
	require.NotSame(t, f1, f2)
	return w, f1, f2
}

// TestUretprobe_ReuseBeforeUnlinkIsCaught: patch 3/4 of seed 004. The
// timer fires right after cleanup_return_instances frees (and pools) a
// purged instance. Unlinked first, the timer walks the live list; freed
// before unlinking, it follows the pool's link and misses the live f1.
func TestUretprobe_ReuseBeforeUnlinkIsCaught(t *testing.T) {
	for _, wrong := range []bool{false, true} {
		o := DefaultOptions()
		o.WrongReuseBeforeUnlink = wrong
		w, f1, _ := pendingPair(t, o)
		ut := w.tk.utask
		fired := false
		testHookFreeRI = func(*returnInstance) {
			if !fired {
				fired = true
				w.sys.riTimer(ut, 0)
			}
		}
		w.call(0x7fe000-16, 0x400b00) // after a longjmp out of f2: f2 is purged
		testHookFreeRI = nil
		require.True(t, fired)
		if wrong {
			assert.Equal(t, hprobeLeased, f1.hprobe.state.Load(), "caught: the timer missed the live instance")
		} else {
			assert.Equal(t, hprobeStable, f1.hprobe.state.Load(), "the timer expired every live instance")
		}
	}
}

// TestUretprobe_PoolSeqcountHandshake: an instance freed while ri_timer
// walks the list is not pooled (its link stays intact for the walker).
func TestUretprobe_PoolSeqcountHandshake(t *testing.T) {
	w, f1, f2 := pendingPair(t, DefaultOptions())
	ut := w.tk.utask
	var walked []*returnInstance
	testHookTimerWalk = func(ri *returnInstance) {
		walked = append(walked, ri)
		if ri == f2 {
			// The task returns from f2 while the timer stands on it.
			w.r.x[30] = w.tramp()
			w.ret(0x7fe000-32, 9)
		}
	}
	w.sys.riTimer(ut, 0)
	testHookTimerWalk = nil
	assert.Equal(t, []*returnInstance{f2, f1}, walked, "the walk went on through f2's intact link")
	assert.Equal(t, f1, f2.next.Load())
	assert.Nil(t, ut.riPool, "not pooled while the timer was inside its write section")
	assert.Equal(t, uint64(1), w.sys.Stats().RIFrees)
	assert.Equal(t, hprobeStable, f1.hprobe.state.Load())
	// Outside the timer, the next free goes to the pool.
	w.r.x[30] = w.tramp()
	w.ret(0x7fe000, 1)
	assert.Same(t, f1, ut.riPool)
}

// TestUretprobe_Fork: dup_utask copies the pending returns (STABLE) and
// the child gets its XOL area at the parent's address.
func TestUretprobe_Fork(t *testing.T) {
	w, _, _ := pendingPair(t, DefaultOptions())
	tramp := w.tramp()
	var cas *fakeAS
	cmm, err := w.mm.Fork(101, func() (AddrSpace, error) { cas = w.as.clone(); return cas, nil })
	require.NoError(t, err)
	cth := &fakeThread{}
	child := cmm.NewTask(cth, 101, 101)
	w.tk.CopyProcess(child, false)
	require.Equal(t, 2, child.PendingReturns())
	for ri := child.utask.ri.Load(); ri != nil; ri = ri.next.Load() {
		assert.Equal(t, hprobeStable, ri.hprobe.state.Load())
	}
	_, ok := cmm.XOLArea()
	assert.False(t, ok)
	child.TaskWork()
	ca, ok := cmm.XOLArea()
	require.True(t, ok)
	assert.Equal(t, tramp, ca, "at the parent's address")
	assert.Equal(t, ARM64SWBP, cas.peek32(t, ca))

	// The child returns from f2 and f1 through its own trampoline.
	cr := &fakeRegs{arch: ArchARM64, sp: 0x7fe000 - 32, pc: tramp}
	cw := &world{t: t, sys: w.sys, as: cas, mm: cmm, arch: ArchARM64}
	require.True(t, cw.trap(child, cr, cth))
	assert.Equal(t, uint64(0x400900), cr.pc)
	cr.sp, cr.pc = 0x7fe000, tramp
	require.True(t, cw.trap(child, cr, cth))
	assert.Equal(t, uint64(0x400800), cr.pc)
	assert.Zero(t, child.PendingReturns())
	assert.Len(t, w.rets, 2)
	// And the parent's instances are untouched.
	assert.Equal(t, 2, w.tk.PendingReturns())
}

func TestUretprobe_ForkAllocFailure(t *testing.T) {
	o := DefaultOptions()
	calls := 0
	o.FailAlloc = func(s AllocSite) bool {
		if s == AllocDupReturnInstance {
			calls++
			return calls == 2
		}
		return false
	}
	w, _, _ := pendingPair(t, o)
	cmm, err := w.mm.Fork(101, func() (AddrSpace, error) { return w.as.clone(), nil })
	require.NoError(t, err)
	child := cmm.NewTask(&fakeThread{}, 101, 101)
	w.tk.CopyProcess(child, false)
	assert.Equal(t, 1, child.PendingReturns(), "the copies made so far are kept")
	assert.Equal(t, uint64(1), w.sys.Stats().Warnings, "dup ret instances")
	child.Free(nil)
}

func TestUretprobe_ThreadsAndVfork(t *testing.T) {
	w, _, _ := pendingPair(t, DefaultOptions())
	thread := w.mm.NewTask(&fakeThread{}, 2, 2)
	w.tk.CopyProcess(thread, false)
	assert.Zero(t, thread.PendingReturns(), "threads inherit nothing")
	vf := w.mm.NewTask(&fakeThread{}, 3, 3)
	w.tk.CopyProcess(vf, true)
	assert.Equal(t, 2, vf.PendingReturns(), "vfork copies the instances")
	assert.False(t, vf.utask.dupXOLPending, "but shares the mm and its XOL area")
}

// TestUretprobe_FreeReleasesLeases: exit frees the instances, so
// unregister_sync does not wait.
func TestUretprobe_FreeReleasesLeases(t *testing.T) {
	w, _, _ := pendingPair(t, DefaultOptions())
	w.tk.Free(w.r)
	assert.Zero(t, w.tk.PendingReturns())
	done := make(chan struct{})
	go func() { w.sys.UnregisterSync(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("leases not released by Free")
	}
}

func TestFree_MidStepAborts(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	p := w.probe(a64ADDOff, Consumer{Handler: func(*Ctx) int { return 0 }})
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64ADDOff
	w.trap(tk, r, th)
	require.True(t, tk.SingleStepping())
	tk.Free(r)
	assert.Equal(t, uint64(textBase+a64ADDOff), r.pc)
	assert.Equal(t, 1, w.mm.XOLBusySlots())
	assert.Equal(t, int64(1), p.u.ref.Load())
	assert.Equal(t, uint64(1), w.sys.Stats().ExitMidStep)
}
