// Package timing is uvm's deterministic N-CPU timing and contention
// model in virtual time. Every guest thread of a --det --model run has a
// virtual CPU with a cycle clock; guest instructions and the modelled
// kernel's paths charge cycles to it, and the kernel's shared objects
// (locks, refcounts, bitmaps) are modelled cache lines with an owner and
// sharers, so that acquiring one held elsewhere costs a transfer that
// depends on the topology distance (Machine.Xfer) and a spinlock waiter
// spins in virtual time in FIFO order.
//
// Ordering: the scheduler (package tasks) always runs the CPU whose clock
// is furthest behind, and every operation on a modelled line first calls
// Sched.Sync, which returns only when the calling CPU is the earliest
// runnable one. Operations on shared state are therefore applied in
// virtual-time order (conservative discrete-event simulation), whatever
// the host does. A CPU waiting for a lock is parked (excluded from that
// order) until the release hands the lock over and sets its clock.
//
// The package imports nothing of uvm; tasks adapts it to the uprobes
// model's contention interface.
package timing

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Sched is what the model needs from the scheduler that runs the CPUs.
type Sched interface {
	// Sync returns when c is the earliest runnable CPU (its clock ≤
	// every other runnable CPU's), running others first if need be.
	Sync(c *CPU)
	// Park blocks c until c.Parked() is false (set by Unpark from the
	// CPU that hands a lock over).
	Park(c *CPU)
}

// Model is one simulated machine.
type Model struct {
	M     *Machine
	sched Sched
	cpus  []*CPU // every CPU context made, in creation order
	// busy counts, per hardware thread, the contexts that are running or
	// runnable (not idle-blocked), for the SMT penalty.
	busy []int
	next int // CPU number of the next context

	// order lists every named object's counters in creation order.
	order  []*lockStats
	byName map[string]*lockStats
	// cont aggregates the contended acquisitions for the contention
	// profile (profile.go).
	cont map[contKey]*contVal
	// profFrom, profTo bound the arrival times the profile records
	// (SetProfileWindow; profTo 0: no bound).
	profFrom, profTo int64
}

// New returns a model of m driven by s.
func New(m *Machine, s Sched) *Model {
	return &Model{M: m, sched: s, busy: make([]int, m.NumCPU()), byName: map[string]*lockStats{}}
}

// CPU is one guest thread's virtual CPU: a position in the topology and
// a cycle clock. Only the thread it belongs to (while it runs) and the
// CPU handing it a lock (while it is parked) touch it.
type CPU struct {
	m   *Model
	ID  int   // hardware thread number (topology position)
	TID int32 // the guest thread
	// Clock is the CPU's virtual time in cycles.
	Clock int64
	// Insns counts retired guest instructions; InsnCycles their cycles;
	// KernelCycles the cycles of modelled kernel paths; Waited the
	// cycles spent waiting for modelled locks and lines.
	Insns                    uint64
	InsnCycles, KernelCycles int64
	Waited                   int64
	parked, idle, exited     bool
	// frac is the ten-thousandths of a cycle RetireCentis has not
	// charged yet.
	frac int64
	// Owner is the scheduler's thread (package tasks: *Task).
	Owner any
	// Site is the guest address the thread is at (set by the scheduler's
	// adapter before operations on modelled objects), the contention
	// profile's caller frame.
	Site     uint64
	siblings []int
	rng      uint64 // jitter generator state (splitmix64)
}

// NewCPU makes the virtual CPU of a new thread starting at clock start.
// The first CPU made is the machine's last hardware thread and later ones
// fill the machine from CPU 0 (as a benchmark pinning its workers to
// CPUs 0, 1, … while its main thread waits); more threads than CPUs wrap
// around and share hardware threads (they are not time-multiplexed).
func (md *Model) NewCPU(tid int32, start int64) *CPU {
	n := md.M.NumCPU()
	id := n - 1
	if len(md.cpus) > 0 {
		id = md.next % n
		md.next++
	}
	c := &CPU{m: md, ID: id, TID: tid, Clock: start, siblings: md.M.Siblings(id), rng: uint64(len(md.cpus))*0x9e3779b97f4a7c15 + 0x75766d}
	md.cpus = append(md.cpus, c)
	md.busy[id]++
	return c
}

// CPUs returns every CPU context made, in creation order.
func (md *Model) CPUs() []*CPU { return md.cpus }

// Parked reports whether c waits for a lock hand-over.
func (c *CPU) Parked() bool { return c.parked }

// SetIdle marks c blocked outside the model (a futex or sleep: it does
// not compete for its core) or running again.
func (c *CPU) SetIdle(idle bool) {
	if c.exited || c.idle == idle {
		return
	}
	c.idle = idle
	if idle {
		c.m.busy[c.ID]--
	} else {
		c.m.busy[c.ID]++
	}
}

// Exit retires c (its thread exited).
func (c *CPU) Exit() {
	if c.exited {
		return
	}
	if !c.idle {
		c.m.busy[c.ID]--
	}
	c.exited = true
}

// smt scales cycles for a core whose sibling is busy.
func (c *CPU) smt(cycles int64) int64 {
	if p := c.smtPct(); p != 100 {
		return cycles * p / 100
	}
	return cycles
}

// smtPct is the percentage c's cycles are scaled by: the SMT penalty
// while a sibling is busy, else 100.
func (c *CPU) smtPct() int64 {
	p := c.m.M.SMTPenaltyPct
	if p == 100 || len(c.siblings) == 0 {
		return 100
	}
	for _, s := range c.siblings {
		if c.m.busy[s] > 0 {
			return p
		}
	}
	return 100
}

// Retire charges n retired guest instructions.
func (c *CPU) Retire(n uint64) {
	cy := c.smt(int64(n) * c.m.M.InsnCycles)
	c.Insns += n
	c.InsnCycles += cy
	c.Clock += cy
}

// RetireCentis charges n retired guest instructions that cost centis
// hundredths of a cycle in all (per-class costs: Machine.CPI), scaled by
// the SMT penalty; the fraction of a cycle left over is carried to the
// next call, so charging a span in one call or in several gives the same
// clock.
func (c *CPU) RetireCentis(n uint64, centis int64) {
	scaled := centis*c.smtPct() + c.frac // ten-thousandths of a cycle
	cy := scaled / 10000
	c.frac = scaled - cy*10000
	c.Insns += n
	c.InsnCycles += cy
	c.Clock += cy
}

// Charge charges cycles of a modelled kernel path.
func (c *CPU) Charge(cycles int64) {
	cy := c.smt(cycles)
	if j := c.m.M.JitterPct; j > 0 && cy > 0 {
		c.rng += 0x9e3779b97f4a7c15
		z := c.rng
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		cy += cy * (int64(z%uint64(2*j*10+1)) - j*10) / 1000
	}
	c.KernelCycles += cy
	c.Clock += cy
}

// wait moves c's clock to t (≥ its clock), counting the gap as waiting.
func (c *CPU) wait(t int64) {
	if t > c.Clock {
		c.Waited += t - c.Clock
		c.Clock = t
	}
}

// Seconds converts cycles to seconds of the machine's clock.
func (md *Model) Seconds(cycles int64) float64 {
	return float64(cycles) / (float64(md.M.FreqMHz) * 1e6)
}

// Cycles converts seconds to cycles.
func (md *Model) Cycles(seconds float64) int64 {
	return int64(seconds * float64(md.M.FreqMHz) * 1e6)
}

// cpuSet is a set of CPU numbers.
type cpuSet [MaxCPUs / 64]uint64

func (s *cpuSet) add(i int)      { s[i/64] |= 1 << (i % 64) }
func (s *cpuSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s *cpuSet) clear()         { *s = cpuSet{} }
func (s *cpuSet) count() int {
	n := 0
	for _, w := range s {
		for ; w != 0; w &= w - 1 {
			n++
		}
	}
	return n
}

// Line is one modelled cache line: the CPU that last wrote it (owner,
// -1: no cache holds it), the CPUs holding a copy, and the time until
// which it is in flight to its last writer (writes are serialised).
type Line struct {
	owner   int
	sharers cpuSet
	busy    int64
	st      *lockStats
}

func (md *Model) newLine(st *lockStats) Line { return Line{owner: -1, st: st} }

// write is an RMW or store by c: it waits until the line is free, pulls
// it from its owner and invalidates every other copy.
func (md *Model) write(c *CPU, l *Line) {
	start := c.Clock
	if l.busy > start {
		start = l.busy
	}
	var cost int64
	switch {
	case l.owner == c.ID && l.sharers.count() <= 1:
		cost = md.M.LineHit
	default:
		cost = md.M.Xfer(l.owner, c.ID)
		if l.owner >= 0 && l.owner != c.ID {
			l.st.Transfers++
		}
		others := l.sharers.count()
		if l.sharers.has(c.ID) {
			others--
		}
		if l.owner >= 0 && l.owner != c.ID && l.sharers.has(l.owner) {
			others-- // the owner's copy goes with the transfer
		}
		if others > 0 {
			cost += int64(others) * md.M.InvalPerSharer
		}
	}
	c.wait(start)
	c.Charge(cost)
	l.busy = c.Clock
	l.owner = c.ID
	l.sharers.clear()
	l.sharers.add(c.ID)
	l.st.Ops++
}

// read is a load by c: a hit when c holds a copy, else a transfer from
// the owner (after any write in flight), leaving c a sharer.
func (md *Model) read(c *CPU, l *Line) {
	if l.owner == c.ID || l.sharers.has(c.ID) {
		c.Charge(md.M.LineHit)
		return
	}
	c.wait(l.busy)
	c.Charge(md.M.Xfer(l.owner, c.ID))
	if l.owner >= 0 {
		l.st.Transfers++
	}
	l.sharers.add(c.ID)
	l.st.Ops++
}

// lockStats are one object's counters, summed over every instance with
// the same name (every uprobe's refcount is one row).
type lockStats struct {
	Name, Kind   string
	Acquisitions uint64
	Contended    uint64
	Waited       int64
	Transfers    uint64
	Ops          uint64
	instances    int
}

func (md *Model) stats(name, kind string) *lockStats {
	if st := md.byName[name]; st != nil {
		st.instances++
		return st
	}
	p := &lockStats{Name: name, Kind: kind, instances: 1}
	md.byName[name] = p
	md.order = append(md.order, p)
	return p
}

// Atomic is a shared word (a refcount, a bitmap word): RMWs bounce its
// line, loads share it.
type Atomic struct {
	md   *Model
	line Line
}

// NewAtomic returns a modelled atomic word named name.
func (md *Model) NewAtomic(name string) *Atomic {
	a := &Atomic{md: md}
	a.line = md.newLine(md.stats(name, "atomic"))
	return a
}

// RMW is an atomic read-modify-write by c.
func (a *Atomic) RMW(c *CPU) {
	a.md.sched.Sync(c)
	a.md.write(c, &a.line)
}

// Load is a load by c.
func (a *Atomic) Load(c *CPU) {
	a.md.sched.Sync(c)
	a.md.read(c, &a.line)
}

// Spinlock is a ticket spinlock (arch_spinlock_t): taking it is a
// fetch-and-add on the lock line; waiters spin reading the line and are
// served in ticket (FIFO) order; the release store invalidates every
// spinner's copy, and the next ticket's owner sees it after re-reading
// the line behind, on average, half of the other spinners.
type Spinlock struct {
	md      *Model
	line    Line
	holder  *CPU
	waiters []*CPU
	st      *lockStats
}

// NewSpinlock returns a modelled ticket spinlock named name.
func (md *Model) NewSpinlock(name string) *Spinlock {
	st := md.stats(name, "spinlock")
	return &Spinlock{md: md, line: md.newLine(st), st: st}
}

// Lock takes l on c, spinning in virtual time while it is held.
func (l *Spinlock) Lock(c *CPU) {
	md := l.md
	md.sched.Sync(c)
	arrive := c.Clock
	md.write(c, &l.line) // ticket = fetch_add(&next, 1)
	l.st.Acquisitions++
	if l.holder == nil {
		l.holder = c
		return
	}
	l.st.Contended++
	l.waiters = append(l.waiters, c)
	l.line.sharers.add(c.ID) // spinning on owner == ticket
	c.parked = true
	md.sched.Park(c)
	md.contended(l.st, c, arrive)
}

// Unlock releases l held by c and hands it to the next ticket.
func (l *Spinlock) Unlock(c *CPU) {
	md := l.md
	md.sched.Sync(c)
	spinners := len(l.waiters)
	md.write(c, &l.line) // owner++ : invalidates the spinners
	if spinners == 0 {
		l.holder = nil
		return
	}
	next := l.waiters[0]
	l.waiters = l.waiters[1:]
	t := c.Clock + md.M.Xfer(c.ID, next.ID) + md.M.RereadPerSpinner*int64(spinners-1)/2
	l.line.st.Transfers++
	for _, w := range l.waiters {
		l.line.sharers.add(w.ID)
	}
	l.line.sharers.add(next.ID)
	if t > l.line.busy {
		l.line.busy = t
	}
	l.holder = next
	next.wait(t)
	next.parked = false
}

// Holder returns the CPU holding l (nil: free).
func (l *Spinlock) Holder() *CPU { return l.holder }

// RWLock is a spinning reader-writer lock (qrwlock): readers and writers
// RMW one count word, so readers bounce its line; a writer waits for the
// readers to drain and stops new ones.
type RWLock struct {
	md      *Model
	line    Line
	readers int
	writer  *CPU
	waitR   []*CPU
	waitW   []*CPU
	st      *lockStats
}

// NewRWLock returns a modelled rwlock named name.
func (md *Model) NewRWLock(name string) *RWLock {
	st := md.stats(name, "rwlock")
	return &RWLock{md: md, line: md.newLine(st), st: st}
}

func (l *RWLock) park(c *CPU, q *[]*CPU, arrive int64) {
	l.st.Contended++
	*q = append(*q, c)
	l.line.sharers.add(c.ID)
	c.parked = true
	l.md.sched.Park(c)
	l.md.contended(l.st, c, arrive)
}

// RLock takes l for reading.
func (l *RWLock) RLock(c *CPU) {
	l.md.sched.Sync(c)
	arrive := c.Clock
	l.md.write(c, &l.line) // atomic_add_return(_QR_BIAS, &cnts)
	l.st.Acquisitions++
	if l.writer == nil && len(l.waitW) == 0 {
		l.readers++
		return
	}
	l.park(c, &l.waitR, arrive)
}

// RUnlock drops a read hold.
func (l *RWLock) RUnlock(c *CPU) {
	l.md.sched.Sync(c)
	l.md.write(c, &l.line)
	l.readers--
	if l.readers == 0 && len(l.waitW) > 0 {
		w := l.waitW[0]
		l.waitW = l.waitW[1:]
		l.writer = w
		l.handTo(c, w)
	}
}

// Lock takes l for writing.
func (l *RWLock) Lock(c *CPU) {
	l.md.sched.Sync(c)
	arrive := c.Clock
	l.md.write(c, &l.line)
	l.st.Acquisitions++
	if l.writer == nil && l.readers == 0 {
		l.writer = c
		return
	}
	l.park(c, &l.waitW, arrive)
}

// Unlock drops the write hold: waiting writers first, then every reader.
func (l *RWLock) Unlock(c *CPU) {
	l.md.sched.Sync(c)
	l.md.write(c, &l.line)
	l.writer = nil
	if len(l.waitW) > 0 {
		w := l.waitW[0]
		l.waitW = l.waitW[1:]
		l.writer = w
		l.handTo(c, w)
		return
	}
	for _, r := range l.waitR {
		l.readers++
		l.handTo(c, r)
	}
	l.waitR = l.waitR[:0]
}

func (l *RWLock) handTo(from, to *CPU) {
	t := from.Clock + l.md.M.Xfer(from.ID, to.ID)
	l.line.sharers.add(to.ID)
	to.wait(t)
	to.parked = false
}

// PercpuRWSem is a per-CPU rw semaphore (percpu_rw_semaphore): a reader
// increments its own CPU's counter and reads the writer flag, so readers
// never share a written line; a writer sets the flag (invalidating every
// reader's copy), pays a grace period and waits for the counters to
// drain.
type PercpuRWSem struct {
	md      *Model
	pcpu    []*Line
	flag    Line
	readers int
	writer  *CPU
	waitR   []*CPU
	waitW   []*CPU
	st      *lockStats
	// GracePeriod is the cycles rcu_sync_enter costs a writer.
	GracePeriod int64
}

// NewPercpuRWSem returns a modelled per-CPU rw semaphore named name.
func (md *Model) NewPercpuRWSem(name string) *PercpuRWSem {
	st := md.stats(name, "percpu-rwsem")
	return &PercpuRWSem{md: md, pcpu: make([]*Line, md.M.NumCPU()), flag: md.newLine(st), st: st}
}

func (s *PercpuRWSem) counter(c *CPU) *Line {
	if s.pcpu[c.ID] == nil {
		l := s.md.newLine(s.st)
		s.pcpu[c.ID] = &l
	}
	return s.pcpu[c.ID]
}

// RLock is percpu_down_read.
func (s *PercpuRWSem) RLock(c *CPU) {
	s.md.sched.Sync(c)
	arrive := c.Clock
	s.md.write(c, s.counter(c)) // this_cpu_inc(*sem->read_count)
	s.md.read(c, &s.flag)       // rcu_sync_is_idle
	s.st.Acquisitions++
	if s.writer == nil && len(s.waitW) == 0 {
		s.readers++
		return
	}
	s.st.Contended++
	s.waitR = append(s.waitR, c)
	c.parked = true
	s.md.sched.Park(c)
	s.md.contended(s.st, c, arrive)
}

// RUnlock is percpu_up_read.
func (s *PercpuRWSem) RUnlock(c *CPU) {
	s.md.sched.Sync(c)
	s.md.write(c, s.counter(c))
	s.readers--
	if s.readers == 0 && len(s.waitW) > 0 && s.writer == nil {
		w := s.waitW[0]
		s.waitW = s.waitW[1:]
		s.writer = w
		w.wait(c.Clock + s.md.M.Xfer(c.ID, w.ID))
		w.parked = false
	}
}

// Lock is percpu_down_write.
func (s *PercpuRWSem) Lock(c *CPU) {
	s.md.sched.Sync(c)
	arrive := c.Clock
	s.md.write(c, &s.flag) // rcu_sync_enter: readers take the slow path
	c.Charge(s.GracePeriod)
	s.st.Acquisitions++
	if s.writer == nil && s.readers == 0 {
		s.writer = c
		return
	}
	s.st.Contended++
	s.waitW = append(s.waitW, c)
	c.parked = true
	s.md.sched.Park(c)
	s.md.contended(s.st, c, arrive)
}

// Unlock is percpu_up_write.
func (s *PercpuRWSem) Unlock(c *CPU) {
	s.md.sched.Sync(c)
	s.md.write(c, &s.flag)
	s.writer = nil
	if len(s.waitW) > 0 {
		w := s.waitW[0]
		s.waitW = s.waitW[1:]
		s.writer = w
		w.wait(c.Clock + s.md.M.Xfer(c.ID, w.ID))
		w.parked = false
		return
	}
	for _, r := range s.waitR {
		s.readers++
		r.wait(c.Clock + s.md.M.Xfer(c.ID, r.ID))
		r.parked = false
	}
	s.waitR = s.waitR[:0]
}

// SRCU is an RCU/SRCU-protected lookup: readers touch their own CPU's
// counter and read the writers' sequence count; nothing shared is
// written on the read side.
type SRCU struct {
	md   *Model
	pcpu []*Line
	seq  Line
	st   *lockStats
}

// NewSRCU returns a modelled SRCU/RCU read side named name.
func (md *Model) NewSRCU(name string) *SRCU {
	st := md.stats(name, "srcu")
	return &SRCU{md: md, pcpu: make([]*Line, md.M.NumCPU()), seq: md.newLine(st), st: st}
}

// ReadLock enters a read section (srcu_read_lock + read_seqcount_begin).
func (s *SRCU) ReadLock(c *CPU) {
	s.md.sched.Sync(c)
	if s.pcpu[c.ID] == nil {
		l := s.md.newLine(s.st)
		s.pcpu[c.ID] = &l
	}
	s.md.write(c, s.pcpu[c.ID])
	s.md.read(c, &s.seq)
	s.st.Acquisitions++
}

// ReadUnlock leaves it.
func (s *SRCU) ReadUnlock(c *CPU) {
	s.md.sched.Sync(c)
	s.md.write(c, s.pcpu[c.ID])
}

// WriteStats prints the per-CPU cycles and the table of modelled
// objects.
func (md *Model) WriteStats(w io.Writer) {
	fmt.Fprintf(w, "timing model %s: %d CPUs at %d MHz\n", md.M.Name, md.M.NumCPU(), md.M.FreqMHz)
	fmt.Fprintf(w, "  %-5s %-4s %14s %12s %6s %14s %14s\n", "tid", "cpu", "clock", "insns", "IPC", "kernel", "waited")
	for _, c := range md.cpus {
		ipc := 0.0
		if busy := c.InsnCycles + c.KernelCycles + c.Waited; busy > 0 {
			ipc = float64(c.Insns) / float64(busy)
		}
		fmt.Fprintf(w, "  %-5d %-4d %14d %12d %6.3f %14d %14d\n", c.TID, c.ID, c.Clock, c.Insns, ipc, c.KernelCycles, c.Waited)
	}
	order := append([]*lockStats(nil), md.order...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Name < order[j].Name })
	fmt.Fprintf(w, "  %-28s %-12s %6s %12s %10s %14s %12s\n", "object", "kind", "count", "acquisitions", "contended", "cycles waited", "transfers")
	for _, st := range order {
		fmt.Fprintf(w, "  %-28s %-12s %6d %12d %10d %14d %12d\n", st.Name, st.Kind, st.instances, st.Acquisitions+opsIfAtomic(st), st.Contended, st.Waited, st.Transfers)
	}
}

func opsIfAtomic(st *lockStats) uint64 {
	if strings.HasPrefix(st.Kind, "atomic") {
		return st.Ops
	}
	return 0
}

// LockStat is one row of the object table.
type LockStat struct {
	Name, Kind              string
	Acquisitions, Contended uint64
	Waited                  int64
	Transfers               uint64
}

// Locks returns the object table, by name.
func (md *Model) Locks() []LockStat {
	var out []LockStat
	for _, st := range md.order {
		out = append(out, LockStat{st.Name, st.Kind, st.Acquisitions + opsIfAtomic(st), st.Contended, st.Waited, st.Transfers})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
