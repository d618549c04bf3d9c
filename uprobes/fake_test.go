package uprobes

import (
	"encoding/binary"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Test doubles: an address space, a register file, a thread and a clock,
// each a small but real implementation of the interface it stands for.

var errFault = errors.New("fault")

// fakeAS is an address space of 4 KiB pages with an optional strict
// (non-coherent) I-side: fetch reads a per-page snapshot that only
// FlushICache refreshes.
type fakeAS struct {
	mu      sync.Mutex
	vmas    []VMA
	pages   map[uint64]*[PageSize]byte
	strict  bool
	ipages  map[uint64]*[PageSize]byte
	flushes []uint64
	// findHook, when set, runs once after a FindVMA has computed its
	// answer (a concurrent change of the address space).
	findHook func()
}

func newFakeAS() *fakeAS {
	return &fakeAS{pages: map[uint64]*[PageSize]byte{}, ipages: map[uint64]*[PageSize]byte{}}
}

func (a *fakeAS) mapVMA(v VMA, data []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.vmas = append(a.vmas, v)
	sort.Slice(a.vmas, func(i, j int) bool { return a.vmas[i].Start < a.vmas[j].Start })
	for p := v.Start; p < v.End; p += PageSize {
		pg := new([PageSize]byte)
		if off := p - v.Start; off < uint64(len(data)) {
			copy(pg[:], data[off:])
		}
		a.pages[p/PageSize] = pg
	}
}

func (a *fakeAS) findLocked(addr uint64) (VMA, bool) {
	for _, v := range a.vmas {
		if v.Start <= addr && addr < v.End {
			return v, true
		}
	}
	return VMA{}, false
}

func (a *fakeAS) FindVMA(addr uint64) (VMA, bool) {
	a.mu.Lock()
	v, ok := a.findLocked(addr)
	hook := a.findHook
	a.findHook = nil
	a.mu.Unlock()
	if hook != nil {
		hook()
	}
	return v, ok
}

func (a *fakeAS) VMAs() []VMA {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]VMA(nil), a.vmas...)
}

func (a *fakeAS) access(b []byte, addr uint64, write, force bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range b {
		p := addr + uint64(i)
		v, ok := a.findLocked(p)
		if !ok || (!force && ((write && !v.Write) || (!write && !v.Read))) {
			return errFault
		}
		pg := a.pages[p/PageSize]
		if write {
			pg[p%PageSize] = b[i]
		} else {
			b[i] = pg[p%PageSize]
		}
	}
	return nil
}

func (a *fakeAS) Peek(b []byte, addr uint64) error    { return a.access(b, addr, false, true) }
func (a *fakeAS) Poke(b []byte, addr uint64) error    { return a.access(b, addr, true, true) }
func (a *fakeAS) ReadAt(b []byte, addr uint64) error  { return a.access(b, addr, false, false) }
func (a *fakeAS) WriteAt(b []byte, addr uint64) error { return a.access(b, addr, true, false) }

func (a *fakeAS) MapXOL(hint uint64) (uint64, error) {
	addr := hint
	if _, busy := a.FindVMA(hint); busy || hint == 0 {
		addr = 0x7f0000000000
		for {
			if _, busy := a.FindVMA(addr); !busy {
				break
			}
			addr -= PageSize
		}
	}
	a.mapVMA(VMA{Start: addr, End: addr + PageSize, Exec: true}, nil)
	return addr, nil
}

func (a *fakeAS) Unmap(start, end uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.vmas[:0]
	for _, v := range a.vmas {
		if v.Start >= start && v.End <= end {
			for p := v.Start; p < v.End; p += PageSize {
				delete(a.pages, p/PageSize)
				delete(a.ipages, p/PageSize)
			}
			continue
		}
		out = append(out, v)
	}
	a.vmas = out
}

func (a *fakeAS) FlushICache(addr uint64, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushes = append(a.flushes, addr)
	for i := 0; i < n; i++ {
		p := addr + uint64(i)
		if ip := a.ipages[p/PageSize]; ip != nil {
			ip[p%PageSize] = a.pages[p/PageSize][p%PageSize]
		}
	}
}

// fetch32 is instruction fetch of an arm64 word (the I-side view when
// strict: the first fetch of a page snapshots it, as uvm's strict model
// does).
func (a *fakeAS) fetch32(addr uint64) uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	pg := a.pages[addr/PageSize]
	if a.strict {
		ip := a.ipages[addr/PageSize]
		if ip == nil {
			ip = new([PageSize]byte)
			*ip = *pg
			a.ipages[addr/PageSize] = ip
		}
		pg = ip
	}
	return binary.LittleEndian.Uint32(pg[addr%PageSize:])
}

func (a *fakeAS) peek(t testing.TB, addr uint64, n int) []byte {
	b := make([]byte, n)
	require.NoError(t, a.Peek(b, addr))
	return b
}

func (a *fakeAS) peek32(t testing.TB, addr uint64) uint32 {
	return binary.LittleEndian.Uint32(a.peek(t, addr, 4))
}

func (a *fakeAS) peek64(t testing.TB, addr uint64) uint64 {
	return binary.LittleEndian.Uint64(a.peek(t, addr, 8))
}

func (a *fakeAS) poke64(t testing.TB, addr, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	require.NoError(t, a.Poke(b[:], addr))
}

// fakeRegs is a register file; on x86 SP is register 4.
type fakeRegs struct {
	arch  Arch
	pc    uint64
	sp    uint64
	x     [32]uint64
	flags uint64
}

func (r *fakeRegs) PC() uint64        { return r.pc }
func (r *fakeRegs) SetPC(v uint64)    { r.pc = v }
func (r *fakeRegs) Flags() uint64     { return r.flags }
func (r *fakeRegs) SetFlags(f uint64) { r.flags = f }
func (r *fakeRegs) Reg(i int) uint64  { return r.x[i&31] }
func (r *fakeRegs) SetReg(i int, v uint64) {
	r.x[i&31] = v
}

func (r *fakeRegs) SP() uint64 {
	if r.arch == ArchAMD64 {
		return r.x[4]
	}
	return r.sp
}

func (r *fakeRegs) SetSP(v uint64) {
	if r.arch == ArchAMD64 {
		r.x[4] = v
		return
	}
	r.sp = v
}

// flagWord is a thread-flag word (signals.ThreadFlags' behaviour).
type flagWord struct{ v atomic.Uint32 }

func (f *flagWord) Set(m uint32)       { f.v.Or(m) }
func (f *flagWord) Clear(m uint32)     { f.v.And(^m) }
func (f *flagWord) Test(m uint32) bool { return f.v.Load()&m != 0 }

// countingLock is a sync.Locker that counts acquisitions.
type countingLock struct {
	sync.Mutex
	n atomic.Int64
}

func (l *countingLock) Lock() { l.Mutex.Lock(); l.n.Add(1) }

// fakeThread is a thread with a signal queue: SendSignal queues (and sets
// TIF_SIGPENDING); deliver is get_signal including uprobe_deny_signal.
type fakeThread struct {
	flags   flagWord
	siglock countingLock
	mu      sync.Mutex
	pending []int
	fatal   atomic.Bool
	sent    []int
}

func (th *fakeThread) Flags() ThreadFlags   { return &th.flags }
func (th *fakeThread) Siglock() sync.Locker { return &th.siglock }
func (th *fakeThread) FatalSignalPending() bool {
	return th.fatal.Load()
}

// exitingThread is a fakeThread in do_exit (PF_EXITING).
type exitingThread struct{ *fakeThread }

func (exitingThread) Exiting() bool { return true }

func (th *fakeThread) RecalcSigpending() {
	th.mu.Lock()
	defer th.mu.Unlock()
	if len(th.pending) > 0 {
		th.flags.Set(TIF_SIGPENDING)
	} else {
		th.flags.Clear(TIF_SIGPENDING)
	}
}

func (th *fakeThread) SendSignal(sig int, force bool) {
	th.mu.Lock()
	th.sent = append(th.sent, sig)
	th.pending = append(th.pending, sig)
	th.mu.Unlock()
	th.flags.Set(TIF_SIGPENDING)
}

// kill queues a signal from outside (tgkill, SIGALRM).
func (th *fakeThread) kill(sig int) {
	th.mu.Lock()
	th.pending = append(th.pending, sig)
	th.mu.Unlock()
	th.flags.Set(TIF_SIGPENDING)
}

func (th *fakeThread) sentSignals() []int {
	th.mu.Lock()
	defer th.mu.Unlock()
	return append([]int(nil), th.sent...)
}

// waitingThread is a fakeThread that implements Waiter.
type waitingThread struct {
	fakeThread
	waits atomic.Int32
}

func (w *waitingThread) Wait(ready func() bool) {
	w.waits.Add(1)
	for !ready() {
		time.Sleep(10 * time.Microsecond)
	}
}

// fakeClock is a manual Clock: timers fire only from fire().
type fakeClock struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	c      *fakeClock
	f      func()
	armed  bool
	resets int
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, f: f, armed: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.armed = true
	t.resets++
	return was
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// fire runs every armed timer once.
func (c *fakeClock) fire() int {
	c.mu.Lock()
	var due []*fakeTimer
	for _, t := range c.timers {
		if t.armed {
			t.armed = false
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
	return len(due)
}

// world is one process with one file mapped at textBase, probed by a
// System: the setup of most tests.
type world struct {
	t     testing.TB
	sys   *System
	as    *fakeAS
	mm    *MM
	file  *fileRef
	arch  Arch
	clock *fakeClock
}

const (
	textBase  = 0x400000
	dataBase  = 0x600000
	stackTop  = 0x7ff000000
	stackSize = 0x10000
	fileData  = 0x2000 // file offset of the data segment
)

var testFileID = FileID{Dev: 8, Inode: 1234}

// newWorld maps text (at file offset 0, r-x) and a data page (file offset
// fileData, rw-) of a synthetic file, and a stack.
func newWorld(t testing.TB, arch Arch, opts Options, text []byte) *world {
	clock := &fakeClock{}
	opts.Clock = clock
	s := New(opts)
	file := make([]byte, fileData+PageSize)
	copy(file, text)
	w := &world{t: t, sys: s, as: newFakeAS(), arch: arch, clock: clock}
	w.file = newFileRef("/test/prog", testFileID, arch, file)
	w.as.mapVMA(VMA{Start: textBase, End: textBase + 2*PageSize, Offset: 0, File: testFileID, Read: true, Exec: true}, file)
	w.as.mapVMA(VMA{Start: stackTop - stackSize, End: stackTop, Read: true, Write: true}, nil)
	w.mm = s.NewMM(w.as, arch, 100)
	return w
}

func (w *world) mapData() {
	v := VMA{Start: dataBase, End: dataBase + PageSize, Offset: fileData, File: testFileID, Read: true, Write: true}
	w.as.mapVMA(v, nil)
	w.mm.Mmap(v)
}

// probe registers a consumer at file offset off.
func (w *world) probe(off uint64, c Consumer) *probe {
	return w.probeRef(off, 0, c)
}

func (w *world) probeRef(off, refCtr uint64, c Consumer) *probe {
	cons := &consumer{Consumer: c, name: c.Name}
	u, err := w.sys.register(w.file, off, refCtr, cons)
	require.NoError(w.t, err)
	return &probe{sys: w.sys, u: u, c: cons}
}

func (w *world) task(th Thread, tid int32) (*Task, *fakeRegs) {
	r := &fakeRegs{arch: w.arch}
	r.SetSP(stackTop - 0x100)
	return w.mm.NewTask(th, tid, int(tid)), r
}

// trap is the run loop reaching a breakpoint at pc and going back to
// user mode: BreakpointTrap, then the exit-to-user loop (TIF_UPROBE
// before signals; signals are left pending for the test to inspect).
func (w *world) trap(t *Task, r *fakeRegs, th *fakeThread) bool {
	pc := r.pc
	if !t.BreakpointTrap(r, pc, ARM64BRKImm) {
		return false
	}
	w.exitToUser(t, r, th)
	return true
}

// exitToUser runs the TIF_UPROBE work, and lets the uprobe code deny
// signals the way get_signal would; delivered signals are returned.
func (w *world) exitToUser(t *Task, r *fakeRegs, th *fakeThread) (delivered []int) {
	for i := 0; i < 10; i++ {
		if th.flags.Test(TIF_UPROBE) {
			t.NotifyResume(r)
			continue
		}
		if th.flags.Test(TIF_SIGPENDING) {
			if t.DenySignal() {
				continue
			}
			th.mu.Lock()
			delivered = append(delivered, th.pending...)
			th.pending = nil
			th.mu.Unlock()
			th.flags.Clear(TIF_SIGPENDING)
			continue
		}
		return delivered
	}
	w.t.Fatalf("exit-to-user loop did not settle")
	return nil
}

// stepARM64 executes the slot's instruction as far as the tests need: a
// non-branch instruction retires and PC += 4.
func (w *world) stepARM64(t *Task, r *fakeRegs, th *fakeThread) {
	require.True(w.t, t.SingleStepping())
	r.pc += 4
	require.True(w.t, t.StepDone(r))
}
