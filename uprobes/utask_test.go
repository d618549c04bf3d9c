package uprobes

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The arm64 test text (file offsets).
const (
	a64STPOff    = 0x100 // stp x29, x30, [sp, #-16]!  (stepped)
	a64NOPOff    = 0x104 // nop                         (simulated)
	a64RETOff    = 0x108 // ret                         (simulated)
	a64LDRLitOff = 0x10c // ldr x0, #8                  (rejected)
	a64BRK5Off   = 0x110 // brk #5 in the program text  (not ours)
	a64ADDOff    = 0x114 // add x0, x1, #1              (stepped)
	a64LDROff    = 0x118 // ldr x0, [x1]                (stepped)
)

func a64Text() []byte {
	words := map[uint64]uint32{a64STPOff: 0xA9BF7BFD, a64NOPOff: A64NOP, a64RETOff: 0xD65F03C0, a64LDRLitOff: 0x58000040,
		a64BRK5Off: ARM64SWBP, a64ADDOff: 0x91000420, a64LDROff: 0xF9400020}
	b := make([]byte, 0x200)
	for off, w := range words {
		binary.LittleEndian.PutUint32(b[off:], w)
	}
	return b
}

func counter(n *atomic.Int64, rc int) Consumer {
	return Consumer{Handler: func(*Ctx) int { n.Add(1); return rc }}
}

func TestHit_ARM64_StepOutOfLine(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	var hits atomic.Int64
	var seenPC uint64
	w.probe(a64STPOff, Consumer{Handler: func(c *Ctx) int { hits.Add(1); seenPC = c.Regs.PC(); return 0 }})
	assert.Equal(t, ARM64SWBP, w.as.peek32(t, textBase+a64STPOff), "breakpoint written into the process's copy")
	assert.True(t, w.mm.HasUprobes())

	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64STPOff
	require.True(t, w.trap(tk, r, th))
	assert.Equal(t, int64(1), hits.Load())
	assert.Equal(t, uint64(textBase+a64STPOff), seenPC, "handlers see the probe address as PC")
	assert.Equal(t, UTaskSStep, tk.State())
	area, ok := w.mm.XOLArea()
	require.True(t, ok)
	assert.Equal(t, uint64(ARM64TaskSize-PageSize), area, "placement hint TASK_SIZE - PAGE_SIZE")
	assert.Equal(t, area+ARM64XOLSlotBytes, r.pc, "a single stepper gets slot 1")
	assert.Equal(t, uint32(0xA9BF7BFD), w.as.peek32(t, r.pc), "the slot holds the original instruction")
	assert.Equal(t, ARM64SWBP, w.as.peek32(t, area), "slot 0 holds the trampoline")
	assert.Equal(t, 2, w.mm.XOLBusySlots())

	w.stepARM64(tk, r, th)
	assert.Empty(t, w.exitToUser(tk, r, th))
	assert.Equal(t, uint64(textBase+a64STPOff+4), r.pc)
	assert.Equal(t, UTaskRunning, tk.State())
	assert.False(t, tk.SingleStepping())
	assert.Equal(t, 1, w.mm.XOLBusySlots(), "the slot is released")
	st := w.sys.Stats()
	assert.Equal(t, uint64(1), st.Hits)
	assert.Equal(t, uint64(1), st.SingleSteps)
}

func TestHit_ARM64_SimulatedNOP(t *testing.T) {
	for _, sim := range []bool{true, false} {
		o := DefaultOptions()
		o.ARM64SimulateNOP = sim
		w := newWorld(t, ArchARM64, o, a64Text())
		var hits atomic.Int64
		w.probe(a64NOPOff, counter(&hits, 0))
		th := &fakeThread{}
		tk, r := w.task(th, 1)
		r.pc = textBase + a64NOPOff
		require.True(t, w.trap(tk, r, th))
		if sim {
			assert.False(t, tk.SingleStepping(), "one trap: simulated")
			assert.Equal(t, uint64(textBase+a64NOPOff+4), r.pc)
		} else {
			assert.True(t, tk.SingleStepping(), "before 6.13: stepped")
			w.stepARM64(tk, r, th)
			w.exitToUser(tk, r, th)
			assert.Equal(t, uint64(textBase+a64NOPOff+4), r.pc)
		}
		assert.Equal(t, int64(1), hits.Load())
	}
}

func TestHit_ForeignBreakpointIsSIGTRAP(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	var hits atomic.Int64
	w.probe(a64STPOff, counter(&hits, 0)) // some probe, so the mm has MMF_HAS_UPROBES
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64BRK5Off
	require.True(t, tk.BreakpointTrap(r, r.pc, ARM64BRKImm))
	tk.NotifyResume(r)
	assert.Equal(t, []int{SIGTRAP}, th.sentSignals())
	assert.Equal(t, uint64(textBase+a64BRK5Off), r.pc)
	assert.False(t, tk.BreakpointTrap(r, r.pc, 0), "other BRK immediates are not uprobes'")
}

func TestHit_NoUprobesInMM(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	assert.False(t, tk.BreakpointTrap(r, textBase+a64BRK5Off, ARM64BRKImm), "no MMF_HAS_UPROBES and no pending returns")
}

// TestHit_RestartAfterUnregister: a hit whose uprobe went away before
// handle_swbp restarts at the probe address with the original
// instruction back in place (spec §2.3, §8.8).
func TestHit_RestartAfterUnregister(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	var hits atomic.Int64
	p := w.probe(a64ADDOff, counter(&hits, 0))
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64ADDOff
	require.True(t, tk.BreakpointTrap(r, r.pc, ARM64BRKImm))
	require.NoError(t, p.Close())
	assert.Equal(t, uint32(0x91000420), w.as.peek32(t, textBase+a64ADDOff))
	w.exitToUser(tk, r, th)
	assert.Equal(t, uint64(textBase+a64ADDOff), r.pc)
	assert.Zero(t, hits.Load())
	assert.Equal(t, uint64(1), w.sys.Stats().Restarts)
	assert.True(t, w.sys.tree.empty())
	assert.Empty(t, th.sentSignals())
}

func TestRegister_Rejected(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	cons := &consumer{Consumer: Consumer{Handler: func(*Ctx) int { return 0 }}}
	_, err := w.sys.register(w.file, a64LDRLitOff, 0, cons)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRejected)
	assert.ErrorIs(t, err, EINVAL)
	var re *RejectError
	require.True(t, errors.As(err, &re))
	assert.Contains(t, re.Reason, "literal")
	assert.Equal(t, uint32(0x58000040), w.as.peek32(t, textBase+a64LDRLitOff), "nothing installed")
	assert.True(t, w.sys.tree.empty(), "the failed registration is undone")

	_, err = w.sys.register(w.file, a64BRK5Off, 0, &consumer{Consumer: Consumer{Handler: func(*Ctx) int { return 0 }}})
	assert.ErrorIs(t, err, ENOTSUPP, "a trap instruction cannot be probed")
	_, err = w.sys.register(w.file, a64ADDOff+2, 0, cons)
	assert.ErrorIs(t, err, EINVAL, "misaligned")
	_, err = w.sys.register(w.file, a64ADDOff, 0, &consumer{})
	assert.ErrorIs(t, err, ErrInvalid, "no handler")
}

// TestConsumers_OrderRemoveIgnore: reverse registration order;
// UPROBE_HANDLER_REMOVE only when all consumers ask and no filter wants
// the mm (spec §1.3, §8.10).
func TestConsumers_OrderRemoveIgnore(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	var order []string
	mk := func(name string, rc int, filter func(*MM) bool) Consumer {
		return Consumer{Name: name, Filter: filter, Handler: func(c *Ctx) int { order = append(order, c.Name); return rc }}
	}
	wanted := true
	filter := func(*MM) bool { return wanted }
	w.probe(a64NOPOff, mk("a", HandlerRemove, filter))
	w.probe(a64NOPOff, mk("b", HandlerRemove, filter))
	pc := w.probe(a64NOPOff, mk("c", 0, filter))
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	hit := func() {
		r.pc = textBase + a64NOPOff
		require.True(t, w.trap(tk, r, th))
	}
	hit()
	assert.Equal(t, []string{"c", "b", "a"}, order)
	wanted = false
	hit()
	assert.Equal(t, ARM64SWBP, w.as.peek32(t, textBase+a64NOPOff), "c did not ask for removal")
	wanted = true
	require.NoError(t, pc.Close())
	hit()
	assert.Equal(t, ARM64SWBP, w.as.peek32(t, textBase+a64NOPOff), "the filters still want the mm")
	wanted = false
	hit()
	assert.Equal(t, A64NOP, w.as.peek32(t, textBase+a64NOPOff), "all asked and no filter wants the mm: removed")
	assert.Equal(t, uint64(1), w.sys.Stats().HandlerRemove)
}

func TestConsumers_RemoveWithoutFilterKeepsBreakpoint(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	var n atomic.Int64
	w.probe(a64NOPOff, counter(&n, HandlerRemove))
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64NOPOff
	w.trap(tk, r, th)
	assert.Equal(t, ARM64SWBP, w.as.peek32(t, textBase+a64NOPOff), "a consumer without Filter accepts every mm")
}

// signalDuringStep runs: hit (XOL), an asynchronous signal arrives,
// return to user, the slot executes, the step completes. It returns the
// signals delivered after the hit and after the step, and the PC at the
// second delivery.
func signalDuringStep(t *testing.T, o Options) (beforeStep, afterStep []int, pc uint64, th *fakeThread, w *world) {
	w = newWorld(t, ArchARM64, o, a64Text())
	var hits atomic.Int64
	w.probe(a64ADDOff, counter(&hits, 0))
	th = &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64ADDOff
	require.True(t, tk.BreakpointTrap(r, r.pc, ARM64BRKImm))
	th.kill(14) // SIGALRM while TIF_UPROBE is pending
	beforeStep = w.exitToUser(tk, r, th)
	require.Contains(t, []UTaskState{UTaskSStep, UTaskSStepDenySignal}, tk.State())
	require.False(t, th.flags.Test(TIF_SIGPENDING), "denied: TIF_SIGPENDING cleared")
	w.stepARM64(tk, r, th)
	afterStep = w.exitToUser(tk, r, th)
	return beforeStep, afterStep, r.pc, th, w
}

func TestSignalDuringStep_DeliveredOnceAfterStep(t *testing.T) {
	for _, siglock := range []bool{false, true} {
		o := DefaultOptions()
		o.SingleStepSiglock = siglock
		before, after, pc, th, w := signalDuringStep(t, o)
		assert.Empty(t, before, "siglock=%v: nothing delivered during the step", siglock)
		assert.Equal(t, []int{14}, after, "siglock=%v: delivered exactly once after the step", siglock)
		assert.Equal(t, uint64(textBase+a64ADDOff+4), pc, "siglock=%v: at the instruction after the probe", siglock)
		if siglock {
			assert.Equal(t, int64(2), th.siglock.n.Load(), "deny + recalc under siglock")
		} else {
			assert.Zero(t, th.siglock.n.Load(), "no siglock on the single-step path")
		}
		assert.Zero(t, w.sys.Stats().Warnings)
	}
}

// TestSignalDuringStep_V1LosesSignal: the rejected v1 design (spec §5.4)
// fails the test above: the step notifier overwrites the DENY_SIGNAL
// state and TIF_SIGPENDING is never set back.
func TestSignalDuringStep_V1LosesSignal(t *testing.T) {
	o := DefaultOptions()
	o.WrongSignalDeniedV1 = true
	_, after, _, th, _ := signalDuringStep(t, o)
	assert.Empty(t, after, "v1 loses the signal")
	assert.False(t, th.flags.Test(TIF_SIGPENDING))
	th.mu.Lock()
	assert.Equal(t, []int{14}, th.pending, "still queued, but nothing will deliver it")
	th.mu.Unlock()
}

func TestSignalDuringStep_V1WarnsOnSecondSignal(t *testing.T) {
	o := DefaultOptions()
	o.WrongSignalDeniedV1 = true
	w := newWorld(t, ArchARM64, o, a64Text())
	w.probe(a64ADDOff, Consumer{Handler: func(*Ctx) int { return 0 }})
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64ADDOff
	w.trap(tk, r, th)
	th.kill(14)
	w.exitToUser(tk, r, th)
	assert.Equal(t, UTaskSStepDenySignal, tk.State())
	th.kill(10)
	w.exitToUser(tk, r, th)
	assert.Equal(t, uint64(1), w.sys.Stats().Warnings, "uprobe_deny_signal: state must be UTASK_SSTEP")
}

// TestStepFaults: a probed instruction that faults in the slot delivers
// the signal with the PC at the probe address (spec §5.3), then the
// probe re-triggers.
func TestStepFaults(t *testing.T) {
	for _, o := range []Options{DefaultOptions(), func() Options { o := DefaultOptions(); o.SingleStepSiglock = true; return o }()} {
		w := newWorld(t, ArchARM64, o, a64Text())
		var hits atomic.Int64
		w.probe(a64LDROff, counter(&hits, 0))
		th := &fakeThread{}
		tk, r := w.task(th, 1)
		r.pc = textBase + a64LDROff
		w.trap(tk, r, th)
		require.True(t, tk.SingleStepping())
		// The LDR in the slot faults: the fault path records the trap and
		// forces SIGSEGV.
		tk.RecordTrap(3)
		th.SendSignal(SIGSEGV, true)
		got := w.exitToUser(tk, r, th)
		assert.Equal(t, []int{SIGSEGV}, got)
		assert.Equal(t, uint64(textBase+a64LDROff), r.pc, "signal delivered at the probe address")
		assert.Equal(t, UTaskRunning, tk.State())
		assert.Equal(t, 1, w.mm.XOLBusySlots())
		assert.Equal(t, uint64(1), w.sys.Stats().Aborts)
		// The handler returns to the probe: the breakpoint hits again.
		w.trap(tk, r, th)
		assert.Equal(t, int64(2), hits.Load())
		assert.True(t, tk.SingleStepping())
	}
}

func TestFatalSignalDuringStep(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	w.probe(a64ADDOff, Consumer{Handler: func(*Ctx) int { return 0 }})
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64ADDOff
	w.trap(tk, r, th)
	th.fatal.Store(true)
	th.kill(9)
	got := w.exitToUser(tk, r, th)
	assert.Equal(t, []int{9}, got)
	assert.Equal(t, uint64(textBase+a64ADDOff), r.pc, "aborted: a core dump shows the probe address")
	assert.Equal(t, UTaskRunning, tk.State())
}

// TestUnregisterMidStep: the step in progress keeps the uprobe alive and
// completes; the text is restored.
func TestUnregisterMidStep(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	p := w.probe(a64ADDOff, Consumer{Handler: func(*Ctx) int { return 0 }})
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64ADDOff
	w.trap(tk, r, th)
	require.NoError(t, p.Close())
	assert.Equal(t, uint32(0x91000420), w.as.peek32(t, textBase+a64ADDOff))
	assert.Equal(t, int64(1), p.u.ref.Load(), "the step holds the last reference")
	w.stepARM64(tk, r, th)
	w.exitToUser(tk, r, th)
	assert.Equal(t, uint64(textBase+a64ADDOff+4), r.pc)
	assert.Zero(t, p.u.ref.Load())
	assert.True(t, w.sys.tree.empty())
	assert.ErrorIs(t, p.Close(), ErrClosed)
}

// TestHit_X86_RipRelative: INT3 trap address, scratch register, FIX_IP.
func TestHit_X86_RipRelative(t *testing.T) {
	text := make([]byte, 0x40)
	copy(text[0x10:], unhex(t, "48 8b 05 10 00 00 00")) // mov rax, [rip+0x10]
	w := newWorld(t, ArchAMD64, DefaultOptions(), text)
	var hits atomic.Int64
	w.probe(0x10, counter(&hits, 0))
	assert.Equal(t, []byte{0xCC, 0x8b}, w.as.peek(t, textBase+0x10, 2))
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.x[6] = 0x5151
	r.flags = 0x202
	r.pc = textBase + 0x10
	require.True(t, tk.BreakpointTrap(r, r.pc, 0))
	assert.Equal(t, uint64(textBase+0x11), r.pc, "INT3 leaves IP after itself")
	w.exitToUser(tk, r, th)
	area, _ := w.mm.XOLArea()
	assert.Equal(t, uint64(X86TaskSize-PageSize), area)
	assert.Equal(t, area+X86XOLSlotBytes, r.pc)
	assert.Equal(t, unhex(t, "48 8b 86 10 00 00 00"), w.as.peek(t, r.pc, 7))
	assert.Equal(t, uint64(textBase+0x17), r.x[6], "RSI = address of the original next instruction")
	assert.Equal(t, uint64(0x302), r.flags, "TF set for the step")
	r.pc += 7 // the slot executes
	require.True(t, tk.StepDone(r))
	w.exitToUser(tk, r, th)
	assert.Equal(t, uint64(textBase+0x17), r.pc)
	assert.Equal(t, uint64(0x5151), r.x[6])
	assert.Equal(t, uint64(0x202), r.flags)
	assert.Equal(t, int64(1), hits.Load())
}

func TestHit_X86_IndirectCallFixesReturnAddress(t *testing.T) {
	text := make([]byte, 0x40)
	copy(text[0x10:], unhex(t, "ff d0")) // call rax
	w := newWorld(t, ArchAMD64, DefaultOptions(), text)
	w.probe(0x10, Consumer{Handler: func(*Ctx) int { return 0 }})
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + 0x10
	r.x[0] = 0x500000
	w.trap(tk, r, th)
	slot := r.pc
	// The call executes in the slot: it pushes slot+2 and jumps.
	sp := r.SP() - 8
	w.as.poke64(t, sp, slot+2)
	r.SetSP(sp)
	r.pc = 0x500000
	require.True(t, tk.StepDone(r))
	w.exitToUser(tk, r, th)
	assert.Equal(t, uint64(0x500000), r.pc, "FIX_CALL leaves IP alone")
	assert.Equal(t, uint64(textBase+0x12), w.as.peek64(t, r.SP()), "return address fixed up")
}

// TestXOLSlots_X86Exhaustion: 31 usable slots; lowest free first; the
// 32nd stepper sleeps until a slot is released (spec §4.2, §8.7).
func TestXOLSlots_X86Exhaustion(t *testing.T) {
	for _, withWaiter := range []bool{false, true} {
		text := make([]byte, 0x40)
		copy(text[0x10:], unhex(t, "0f a2")) // cpuid: stepped
		w := newWorld(t, ArchAMD64, DefaultOptions(), text)
		w.probe(0x10, Consumer{Handler: func(*Ctx) int { return 0 }})
		type thr struct {
			tk *Task
			r  *fakeRegs
			th *fakeThread
		}
		var ts []thr
		for i := 0; i < 32; i++ {
			var th *fakeThread
			var wt Thread
			if withWaiter {
				x := &waitingThread{}
				th, wt = &x.fakeThread, x
			} else {
				th = &fakeThread{}
				wt = th
			}
			r := &fakeRegs{arch: ArchAMD64}
			r.SetSP(stackTop - 0x100)
			ts = append(ts, thr{w.mm.NewTask(wt, int32(i+1), i), r, th})
		}
		area := uint64(0)
		for i := 0; i < 31; i++ {
			x := ts[i]
			x.r.pc = textBase + 0x10
			require.True(t, w.trap(x.tk, x.r, x.th))
			area, _ = w.mm.XOLArea()
			assert.Equal(t, area+uint64(i+1)*X86XOLSlotBytes, x.r.pc, "slot %d", i+1)
		}
		assert.Equal(t, 32, w.mm.XOLBusySlots())
		last := ts[31]
		last.r.pc = textBase + 0x10
		done := make(chan struct{})
		go func() {
			w.trap(last.tk, last.r, last.th)
			close(done)
		}()
		select {
		case <-done:
			t.Fatal("the 32nd stepper did not wait")
		case <-time.After(20 * time.Millisecond):
		}
		// Thread 5 (slot 5) finishes its step: the waiter takes slot 5.
		x := ts[4]
		x.r.pc += 2
		x.tk.StepDone(x.r)
		w.exitToUser(x.tk, x.r, x.th)
		<-done
		assert.Equal(t, area+5*X86XOLSlotBytes, last.r.pc)
		assert.Equal(t, uint64(1), w.sys.Stats().SlotWaits)
	}
}

// TestXOLSlots_ConcurrentLowestFree: many goroutines take and release
// slots; every slot is held by one stepper at a time.
func TestXOLSlots_ConcurrentLowestFree(t *testing.T) {
	a := &xolArea{slotBytes: 128, nslots: 32}
	a.bitmap = make([]atomic.Uint64, 1)
	a.cond = sync.NewCond(&a.mu)
	a.bitmap[0].Store(1)
	var owner [32]atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				nr := a.getSlotNr()
				if nr >= a.nslots {
					continue
				}
				require.NotZero(t, nr)
				require.Equal(t, int32(1), owner[nr].Add(1))
				owner[nr].Add(-1)
				a.freeSlot(nr)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, a.busySlots())
	assert.Equal(t, 1, a.getSlotNr(), "lowest free")
}

func TestXOLSlots_ARM64Count(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	a := w.mm.getXOLArea()
	require.NotNil(t, a)
	assert.Equal(t, 1024, a.nslots)
	for i := 1; i < 1024; i++ {
		require.Equal(t, i, a.getSlotNr())
	}
	assert.Equal(t, 1024, a.getSlotNr(), "1023 usable")
}

// TestXOLFlushElision: seed 002 on arm64 with a strict I-cache: copies
// and flushes saved when the slot already holds the bytes; the
// known-wrong variant executes a stale slot.
func TestXOLFlushElision(t *testing.T) {
	run := func(o Options) (stale bool, st Stats) {
		w := newWorld(t, ArchARM64, o, a64Text())
		w.as.strict = true
		w.probe(a64ADDOff, Consumer{Handler: func(*Ctx) int { return 0 }})
		w.probe(a64LDROff, Consumer{Handler: func(*Ctx) int { return 0 }})
		th := &fakeThread{}
		tk, r := w.task(th, 1)
		for _, off := range []uint64{a64ADDOff, a64ADDOff, a64LDROff, a64ADDOff} {
			r.pc = textBase + off
			w.trap(tk, r, th)
			want := w.as.peek32(t, r.pc)
			if w.as.fetch32(r.pc) != want {
				stale = true
			}
			w.stepARM64(tk, r, th)
			w.exitToUser(tk, r, th)
		}
		return stale, w.sys.Stats()
	}
	off := DefaultOptions()
	off.XOLFlushElision = false
	stale, st := run(off)
	assert.False(t, stale)
	assert.Equal(t, uint64(5), st.Flushes, "trampoline + 4 slot writes")
	assert.Zero(t, st.FlushesSaved)

	stale, st = run(DefaultOptions())
	assert.False(t, stale)
	assert.Equal(t, uint64(4), st.Flushes)
	assert.Equal(t, uint64(1), st.FlushesSaved, "the second hit of the same probe")
	assert.Equal(t, uint64(1), st.CopiesSaved)

	wrong := DefaultOptions()
	wrong.WrongFlushElisionNoCompare = true
	stale, _ = run(wrong)
	assert.True(t, stale, "the no-compare variant executes a stale slot")
}

func TestRefCtr(t *testing.T) {
	const rc = fileData + 0x10
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	w.mapData()
	p := w.probeRef(a64ADDOff, rc, Consumer{Handler: func(*Ctx) int { return 0 }})
	assert.Equal(t, []byte{1, 0}, w.as.peek(t, dataBase+0x10, 2))
	p2 := w.probeRef(a64ADDOff, rc, Consumer{Handler: func(*Ctx) int { return 0 }})
	assert.Equal(t, []byte{1, 0}, w.as.peek(t, dataBase+0x10, 2), "once per mm: only the first install changes the text")
	require.NoError(t, p2.Close())
	require.NoError(t, p.Close())
	assert.Equal(t, []byte{0, 0}, w.as.peek(t, dataBase+0x10, 2))

	cons := &consumer{Consumer: Consumer{Handler: func(*Ctx) int { return 0 }}}
	_, err := w.sys.register(w.file, a64NOPOff, rc, cons)
	require.NoError(t, err)
	_, err = w.sys.register(w.file, a64NOPOff, rc+2, &consumer{Consumer: Consumer{Handler: func(*Ctx) int { return 0 }}})
	assert.ErrorIs(t, err, EINVAL, "ref_ctr_offset mismatch")
	_, err = w.sys.register(w.file, a64STPOff, 3, cons)
	assert.ErrorIs(t, err, EINVAL, "odd ref_ctr_offset")
}

func TestRefCtr_Delayed(t *testing.T) {
	const rc = fileData + 0x20
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	w.probeRef(a64ADDOff, rc, Consumer{Handler: func(*Ctx) int { return 0 }})
	assert.Len(t, w.sys.delayed, 1, "data not mapped yet: delayed")
	w.mapData()
	assert.Equal(t, []byte{1, 0}, w.as.peek(t, dataBase+0x20, 2))
	assert.Empty(t, w.sys.delayed)
}

// TestMmap_LaterMappingsGetBreakpoints and the PID filter.
func TestMmap_LaterMappingsGetBreakpoints(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	var n atomic.Int64
	ex := &Executable{sys: w.sys, ref: w.file}
	ex.once.Do(func() {})
	_ = ex
	w.probe(a64ADDOff, counter(&n, 0))
	cons := &consumer{Consumer: Consumer{Handler: func(*Ctx) int { return 0 }, Filter: func(m *MM) bool { return m.PID() == 300 }}}
	_, err := w.sys.register(w.file, a64STPOff, 0, cons)
	require.NoError(t, err)

	for _, pid := range []int32{200, 300} {
		as2 := newFakeAS()
		file := make([]byte, 2*PageSize)
		copy(file, a64Text())
		v := VMA{Start: 0x800000, End: 0x800000 + 2*PageSize, File: testFileID, Read: true, Exec: true}
		as2.mapVMA(v, file)
		mm2 := w.sys.NewMM(as2, ArchARM64, pid)
		assert.False(t, mm2.HasUprobes())
		mm2.Mmap(v)
		assert.True(t, mm2.HasUprobes())
		assert.Equal(t, ARM64SWBP, as2.peek32(t, 0x800000+a64ADDOff))
		if pid == 300 {
			assert.Equal(t, ARM64SWBP, as2.peek32(t, 0x800000+a64STPOff), "filter accepts pid 300")
		} else {
			assert.Equal(t, uint32(0xA9BF7BFD), as2.peek32(t, 0x800000+a64STPOff), "filter rejects pid 200")
		}
	}
	// A writable private mapping of the file is not probed.
	as3 := newFakeAS()
	v := VMA{Start: 0x900000, End: 0x900000 + PageSize, File: testFileID, Read: true, Write: true}
	as3.mapVMA(v, a64Text())
	mm3 := w.sys.NewMM(as3, ArchARM64, 400)
	mm3.Mmap(v)
	assert.Equal(t, uint32(0x91000420), as3.peek32(t, 0x900000+a64ADDOff))
}

func (a *fakeAS) clone() *fakeAS {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := newFakeAS()
	c.vmas = append([]VMA(nil), a.vmas...)
	for k, p := range a.pages {
		np := *p
		c.pages[k] = &np
	}
	return c
}

func TestFork_InheritsBreakpointsNotXOL(t *testing.T) {
	w := newWorld(t, ArchARM64, DefaultOptions(), a64Text())
	w.probe(a64ADDOff, Consumer{Handler: func(*Ctx) int { return 0 }})
	th := &fakeThread{}
	tk, r := w.task(th, 1)
	r.pc = textBase + a64ADDOff
	w.trap(tk, r, th)
	w.stepARM64(tk, r, th)
	w.exitToUser(tk, r, th)
	area, ok := w.mm.XOLArea()
	require.True(t, ok)
	var cas *fakeAS
	child, err := w.mm.Fork(101, func() (AddrSpace, error) { cas = w.as.clone(); return cas, nil })
	require.NoError(t, err)
	assert.True(t, child.HasUprobes())
	assert.Equal(t, uint32(mmfHasUprobes|mmfRecalcUprobes), child.flags.Load())
	_, mapped := cas.FindVMA(area)
	assert.False(t, mapped, "[uprobes] is VM_DONTCOPY")
	assert.Equal(t, ARM64SWBP, cas.peek32(t, textBase+a64ADDOff), "the child's text copy keeps the breakpoint")
	_, ok = child.XOLArea()
	assert.False(t, ok)
	child.Release()
	assert.True(t, child.dead.Load())
}
