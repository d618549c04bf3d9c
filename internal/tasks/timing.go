package tasks

import (
	"fmt"
	"io"
	"strings"

	"github.com/uvm-emu/uvm/internal/timing"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/uprobes"
)

// The timing model in the deterministic scheduler (Options.Machine, uvm's
// --det --model): every guest thread gets a virtual CPU of a
// timing.Model with a cycle clock; retired instructions, kernel entries
// and the uprobe path's steps charge cycles to it; the scheduler runs the
// runnable thread whose clock is furthest behind, and every operation on
// a modelled shared object first waits until its thread is the earliest
// (timing.Sched.Sync), so interactions happen in virtual-time order.
// The kernel's nanosecond clock (timers, clock_gettime) stays the
// instruction-count clock of the deterministic scheduler.

// Kernel entry costs the run loop charges (machine cost.NAME keys).
var kernelCostNames = []string{"trap_entry", "trap_exit", "syscall_entry", "syscall_exit", "slab_batch", "slab_list"}

// timingState is the kernel's model and its adapters.
type timingState struct {
	k     *Kernel
	model *timing.Model
	// byTID maps live and exited threads to their CPUs (baton holder
	// only, like everything below).
	byTID             map[int32]*timing.CPU
	trapCost, sysCost int64
	paths             [uprobes.NumPaths]int64
	objs              map[timingKey]any
	// The slab model (uContention.Slab): objects per refill/flush of a
	// per-CPU slab, the cycles inside the node's list_lock, the per-CPU
	// allocation and free counts, and each node's list_lock.
	slabBatch, slabList int64
	slabOps             [][2]int64
	slabLocks           []*timing.Spinlock
	// costs are the per-class instruction costs and base the threads'
	// counters at their last exit from Run (timing_class.go).
	costs insnCosts
	base  map[int32]*retireBase
}

type timingKey struct {
	o   uprobes.Object
	key any
}

// CheckMachine reports the cost names the run loop and the uprobes
// model need that m does not define.
func CheckMachine(m *timing.Machine) error {
	var missing []string
	names := append([]string(nil), kernelCostNames...)
	for p := uprobes.Path(0); p < uprobes.NumPaths; p++ {
		names = append(names, p.String())
	}
	for _, n := range names {
		if _, ok := m.Cost(n); !ok {
			missing = append(missing, "cost."+n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("machine %s lacks %s", m.Name, strings.Join(missing, ", "))
	}
	return checkCPI(m)
}

func newTimingState(k *Kernel, m *timing.Machine) *timingState {
	ts := &timingState{k: k, byTID: map[int32]*timing.CPU{}, objs: map[timingKey]any{},
		costs: newInsnCosts(m), base: map[int32]*retireBase{}}
	ts.model = timing.New(m, detTiming{k})
	c := func(n string) int64 { v, _ := m.Cost(n); return v }
	ts.trapCost = c("trap_entry") + c("trap_exit")
	ts.sysCost = c("syscall_entry") + c("syscall_exit")
	for p := uprobes.Path(0); p < uprobes.NumPaths; p++ {
		ts.paths[p] = c(p.String())
	}
	ts.slabBatch, ts.slabList = max(c("slab_batch"), 1), c("slab_list")
	ts.slabOps = make([][2]int64, m.NumCPU())
	ts.slabLocks = make([]*timing.Spinlock, m.Node(m.NumCPU()-1)+1)
	return ts
}

// Timing returns the kernel's timing model (nil without Options.Machine).
func (k *Kernel) Timing() *timing.Model {
	if k.tm == nil {
		return nil
	}
	return k.tm.model
}

// ThreadCycles returns the virtual clock of thread tid's CPU. Call it
// only from the running guest thread (a probe handler) or after the run.
func (k *Kernel) ThreadCycles(tid int32) (int64, bool) {
	if k.tm == nil {
		return 0, false
	}
	c := k.tm.byTID[tid]
	if c == nil {
		return 0, false
	}
	return c.Clock, true
}

// WriteTimingStats prints the model's per-CPU cycles and lock table.
func (k *Kernel) WriteTimingStats(w io.Writer) {
	if k.tm != nil {
		k.tm.model.WriteStats(w)
		k.tm.writeClassStats(w)
	}
}

// attachTiming gives a new task its virtual CPU, starting at the clock
// of the thread creating it.
func (k *Kernel) attachTiming(t *Task) {
	if k.tm == nil {
		return
	}
	var start int64
	k.det.mu.Lock()
	if cur := k.det.current; cur != nil && cur.vc != nil {
		start = cur.vc.Clock
	}
	k.det.mu.Unlock()
	t.vc = k.tm.model.NewCPU(t.tid, start)
	t.vc.Owner = t
	k.tm.byTID[t.tid] = t.vc
	k.tm.startClassCount(t.cpu)
	t.placeCache()
}

// timingExit charges the kernel entry of an exit from the guest and, for
// a syscall (futexes, pipes: interactions), waits for virtual-time order.
func (t *Task) timingExit(r vm.ExitReason) {
	ts := t.tg.k.tm
	switch r {
	case vm.ExitBudget:
		return
	case vm.ExitSyscall:
		t.vc.Charge(ts.sysCost)
		t.tg.k.det.syncTiming(t)
	default: // breakpoint, single-step, faults: an exception
		t.vc.Charge(ts.trapCost)
	}
}

// detTiming is timing.Sched over the deterministic scheduler.
type detTiming struct{ k *Kernel }

func (d detTiming) Sync(c *timing.CPU) { d.k.det.syncTiming(c.Owner.(*Task)) }

func (d detTiming) Park(c *timing.CPU) {
	w := &detWait{ready: func() bool { return !c.Parked() }, deadline: -1, park: true}
	d.k.det.block(c.Owner.(*Task), w)
}

// earlier orders runnable tasks by virtual clock, then tid.
func earlier(a, b *Task) bool {
	return a.vc.Clock < b.vc.Clock || a.vc.Clock == b.vc.Clock && a.tid < b.tid
}

// syncTiming returns when t is the earliest runnable task, letting the
// others run first.
func (s *detSched) syncTiming(t *Task) {
	s.mu.Lock()
	s.wakeReadyLocked()
	for _, o := range s.runq {
		if earlier(o, t) {
			s.runq = append(s.runq, t)
			s.switchLocked(t)
			return
		}
	}
	s.mu.Unlock()
}

// pickIndex is the run queue entry to run next: the head, or with the
// timing model the earliest.
func (s *detSched) pickIndex() int {
	if !s.timed {
		return 0
	}
	best := 0
	for i, t := range s.runq[1:] {
		if earlier(t, s.runq[best]) {
			best = i + 1
		}
	}
	return best
}

// timingBlock marks t's CPU idle while it waits outside the model.
func (s *detSched) timingBlock(t *Task, w *detWait) {
	if s.timed && !w.park {
		t.vc.SetIdle(true)
	}
}

// timingWoke brings a task woken by another (futex wake, exit, timer)
// to the waker's time.
func (s *detSched) timingWoke(t *Task) {
	if !s.timed || t.detWait.park {
		return
	}
	t.vc.SetIdle(false)
	if cur := s.current; cur != nil && cur != t && cur.vc != nil && cur.vc.Clock > t.vc.Clock {
		t.vc.Clock = cur.vc.Clock
	}
}

// UprobeContention returns the timing model's uprobes hook (nil without
// Options.Machine): pass it as uprobes.Options.Contention.
func (k *Kernel) UprobeContention() uprobes.Contention {
	if k.tm == nil {
		return nil
	}
	return uContention{k.tm}
}

// uContention is uprobes.Contention over the timing model.
type uContention struct{ ts *timingState }

func cpuOf(th uprobes.Thread) *timing.CPU {
	if u, ok := th.(uThread); ok {
		if c := u.t.vc; c != nil {
			c.Site = u.t.cpu.PC() // the contention profile's guest frame
		}
		return u.t.vc
	}
	return nil
}

func (u uContention) Cost(th uprobes.Thread, p uprobes.Path, n int) {
	if c := cpuOf(th); c != nil && p < uprobes.NumPaths && n > 0 {
		c.Charge(u.ts.paths[p] * int64(n))
	}
}

// object returns the modelled object for (o, key), made on first use.
func (ts *timingState) object(o uprobes.Object, key any) any {
	k := timingKey{o, key}
	if x, ok := ts.objs[k]; ok {
		return x
	}
	md := ts.model
	var x any
	switch o {
	case uprobes.ObjSiglock, uprobes.ObjTreeSpinlock:
		x = md.NewSpinlock(o.String())
	case uprobes.ObjTreeRWLock, uprobes.ObjRegisterRWSem:
		x = md.NewRWLock(o.String())
	case uprobes.ObjTreePercpuRWSem:
		x = md.NewPercpuRWSem(o.String())
	case uprobes.ObjTreeSRCU:
		x = md.NewSRCU(o.String())
	default:
		x = md.NewAtomic(o.String())
	}
	ts.objs[k] = x
	return x
}

func (u uContention) Lock(th uprobes.Thread, o uprobes.Object, key any) {
	c := cpuOf(th)
	if c == nil {
		return
	}
	switch l := u.ts.object(o, key).(type) {
	case *timing.Spinlock:
		l.Lock(c)
	case *timing.RWLock:
		l.Lock(c)
	case *timing.PercpuRWSem:
		l.Lock(c)
	}
}

func (u uContention) Unlock(th uprobes.Thread, o uprobes.Object, key any) {
	c := cpuOf(th)
	if c == nil {
		return
	}
	switch l := u.ts.object(o, key).(type) {
	case *timing.Spinlock:
		l.Unlock(c)
	case *timing.RWLock:
		l.Unlock(c)
	case *timing.PercpuRWSem:
		l.Unlock(c)
	}
}

func (u uContention) RLock(th uprobes.Thread, o uprobes.Object, key any) {
	c := cpuOf(th)
	if c == nil {
		return
	}
	switch l := u.ts.object(o, key).(type) {
	case *timing.Spinlock:
		l.Lock(c)
	case *timing.RWLock:
		l.RLock(c)
	case *timing.PercpuRWSem:
		l.RLock(c)
	case *timing.SRCU:
		l.ReadLock(c)
	}
}

func (u uContention) RUnlock(th uprobes.Thread, o uprobes.Object, key any) {
	c := cpuOf(th)
	if c == nil {
		return
	}
	switch l := u.ts.object(o, key).(type) {
	case *timing.Spinlock:
		l.Unlock(c)
	case *timing.RWLock:
		l.RUnlock(c)
	case *timing.PercpuRWSem:
		l.RUnlock(c)
	case *timing.SRCU:
		l.ReadUnlock(c)
	}
}

func (u uContention) Atomic(th uprobes.Thread, o uprobes.Object, key any) {
	if c := cpuOf(th); c != nil {
		if a, ok := u.ts.object(o, key).(*timing.Atomic); ok {
			a.RMW(c)
		}
	}
}

func (u uContention) Read(th uprobes.Thread, o uprobes.Object, key any) {
	if c := cpuOf(th); c != nil {
		if a, ok := u.ts.object(o, key).(*timing.Atomic); ok {
			a.Load(c)
		}
	}
}

// Slab models kmalloc and kfree_rcu of a return_instance: the object
// comes from (goes to) the CPU's own slab; every slab_batch-th operation
// on a CPU refills (flushes) it from (to) its NUMA node's partial list
// under the node's list_lock, the lock every CPU of the node shares.
func (u uContention) Slab(th uprobes.Thread, free bool) {
	c := cpuOf(th)
	if c == nil {
		return
	}
	ts := u.ts
	op := 0
	p := uprobes.PathRIKmalloc
	if free {
		op, p = 1, uprobes.PathRIKfree
	}
	c.Charge(ts.paths[p])
	ts.slabOps[c.ID][op]++
	if ts.slabOps[c.ID][op]%ts.slabBatch != 0 {
		return
	}
	n := ts.model.M.Node(c.ID)
	if ts.slabLocks[n] == nil {
		ts.slabLocks[n] = ts.model.NewSpinlock("kmem_cache_node->list_lock")
	}
	l := ts.slabLocks[n]
	l.Lock(c)
	c.Charge(ts.slabList)
	l.Unlock(c)
}
