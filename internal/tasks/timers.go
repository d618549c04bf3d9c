package tasks

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvm-emu/uvm/internal/signals"
)

// POSIX timers (timer_create …), the CPU-time interval timers
// (ITIMER_VIRTUAL, ITIMER_PROF) and restart_syscall, after Linux's
// kernel/time/posix-timers.c, posix-cpu-timers.c and itimer.c.
//
// Clock-based timers (CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME)
// fire on the kernel's clock through a ktimer: a host timer in parallel
// mode, a virtual-time event of the deterministic scheduler with --det.
// CPU-time timers (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
// ITIMER_VIRTUAL, ITIMER_PROF) run on retired instructions at NsPerInsn,
// uvm's CPU time (see checkCPU), and are checked by the run loop after
// each slice (cpuTimerTick), so with --det they fire at fixed points.

// ktimer is a one-shot event at an absolute time of the kernel's clock
// (uptime ns). fire runs on a host goroutine in parallel mode and on the
// baton holder at a switch in deterministic mode; callers guard against a
// stale fire with their own generation count.
type ktimer struct {
	k    *Kernel
	fire func()
	mu   sync.Mutex
	det  *detTimer
	host *time.Timer
}

func (k *Kernel) newKTimer(fire func()) *ktimer { return &ktimer{k: k, fire: fire} }

// arm (re)schedules the timer at uptime deadline.
func (kt *ktimer) arm(deadline int64) {
	kt.mu.Lock()
	defer kt.mu.Unlock()
	if d := kt.k.det; d != nil {
		if kt.det == nil {
			kt.det = d.addTimer(deadline, kt.fire)
		} else {
			d.resetTimer(kt.det, deadline)
		}
		return
	}
	if kt.host != nil {
		kt.host.Stop()
	}
	kt.host = time.AfterFunc(time.Duration(deadline-kt.k.uptimeNs()), kt.fire)
}

func (kt *ktimer) stop() {
	kt.mu.Lock()
	defer kt.mu.Unlock()
	if kt.det != nil {
		kt.k.det.stopTimer(kt.det)
	}
	if kt.host != nil {
		kt.host.Stop()
		kt.host = nil
	}
}

// tgTimers is a process's timer state (ThreadGroup.timers).
type tgTimers struct {
	// mu protects everything below but cpuArmed and the signal wake-up.
	mu     sync.Mutex
	posix  map[int32]*ptimer
	nextID int32
	// virt, prof are ITIMER_VIRTUAL and ITIMER_PROF.
	virt, prof cpuItimer
	// cpuArmed counts armed CPU-time timers: the run loop looks at them
	// only when it is not zero.
	cpuArmed atomic.Int32

	// sigMu protects sigChanged, closed when a signal is queued to the
	// group or any of its threads (signalfd's wake-up).
	sigMu      sync.Mutex
	sigChanged chan struct{}
}

// signalWakeup returns a channel closed at the next signal queued to tg.
func (tg *ThreadGroup) signalWakeup() <-chan struct{} {
	s := &tg.timers
	s.sigMu.Lock()
	defer s.sigMu.Unlock()
	if s.sigChanged == nil {
		s.sigChanged = make(chan struct{})
	}
	return s.sigChanged
}

func (tg *ThreadGroup) notifySignalQueued() {
	s := &tg.timers
	s.sigMu.Lock()
	if s.sigChanged != nil {
		close(s.sigChanged)
		s.sigChanged = nil
	}
	s.sigMu.Unlock()
}

// cpuItimer is ITIMER_VIRTUAL or ITIMER_PROF: expires and interval in ns
// of process CPU time; expires 0 is disarmed.
type cpuItimer struct{ expires, interval int64 }

// ptimer is one POSIX timer (struct k_itimer).
type ptimer struct {
	id     int32
	tg     *ThreadGroup
	clock  int32
	notify int32
	signo  int32
	sival  uint64
	target *Task // SIGEV_THREAD_ID
	owner  *Task // CLOCK_THREAD_CPUTIME_ID: whose CPU time
	kt     *ktimer

	// Protected by tg.timers.mu. expires is on the timer's base: uptime
	// ns for the clock timers, CPU ns for the CPU ones; 0 is disarmed.
	expires     int64
	interval    int64
	gen         uint64
	overrun     int64 // expirations while the signal was queued
	lastOverrun int32 // si_overrun of the last delivered signal
	sigQueued   bool
}

const (
	sigevSignal   = 0
	sigevNone     = 1
	sigevThread   = 2
	sigevThreadID = 4
	timerAbstime  = 1
	delayTimerMax = 1<<31 - 1

	clockRealtimeAlarm = 8
	clockBoottimeAlarm = 9
	clockTAI           = 11
)

func isCPUClock(c int32) bool { return c == clockProcessCPUTime || c == clockThreadCPUTime }

// cpuNs is the CPU time of the timer's clock: the process's or the owner
// thread's retired instructions at NsPerInsn.
func (tg *ThreadGroup) cpuNs(clock int32, owner *Task) int64 {
	ns := tg.k.opts.NsPerInsn
	if ns <= 0 {
		ns = 1
	}
	if clock == clockThreadCPUTime && owner != nil {
		return int64(owner.cpu.Retired()) * ns
	}
	return int64(tg.Retired()) * ns
}

// clockOffset is what to add to uptime to get the clock's time.
func (k *Kernel) clockOffset(clock int32) int64 {
	switch clock {
	case clockRealtime, clockRealtimeAlarm, clockTAI:
		return k.realtimeNs() - k.uptimeNs()
	}
	return int64(monoBase)
}

// timerBaseNow is the current time on a timer's base (see ptimer.expires).
func (p *ptimer) baseNow() int64 {
	if isCPUClock(p.clock) {
		return p.tg.cpuNs(p.clock, p.owner)
	}
	return p.tg.k.uptimeNs()
}

// cpuClockOf decodes a dynamic CPU clock id (what glibc's timer_create
// and pthread_getcpuclockid pass: ~pid << 3 | per-thread << 2 | kind):
// the clock (process or thread CPU time) and, for a thread clock, the
// thread. pid 0 is the caller.
func (t *Task) cpuClockOf(id int32) (clock int32, owner *Task, e Errno) {
	if id&3 == 3 {
		return 0, nil, EINVAL
	}
	pid := ^(id >> 3)
	if id&4 == 0 {
		if pid != 0 && pid != t.tg.pid {
			return 0, nil, EINVAL // another process's clock: not modelled
		}
		return clockProcessCPUTime, nil, 0
	}
	if pid == 0 || pid == t.tid {
		return clockThreadCPUTime, t, 0
	}
	t.tg.mu.Lock()
	o := t.tg.tasks[pid]
	t.tg.mu.Unlock()
	if o == nil {
		return 0, nil, EINVAL
	}
	return clockThreadCPUTime, o, 0
}

// dynamicCPUClockNs is clock_gettime of a dynamic CPU clock id.
func (t *Task) dynamicCPUClockNs(id int32) (int64, Errno) {
	clock, owner, e := t.cpuClockOf(id)
	if e != 0 {
		return 0, e
	}
	return t.tg.cpuNs(clock, owner), 0
}

func (t *Task) sysTimerCreate(clock int32, sevp, idp uint64) uint64 {
	var owner *Task
	if clock < 0 {
		c, o, e := t.cpuClockOf(clock)
		if e != 0 {
			return errRet(e)
		}
		clock, owner = c, o
	} else if clock == clockThreadCPUTime {
		owner = t
	}
	switch clock {
	case clockRealtime, clockMonotonic, clockBoottime, clockTAI, clockProcessCPUTime, clockThreadCPUTime:
	case clockRealtimeAlarm, clockBoottimeAlarm:
		return errRet(EPERM) // CAP_WAKE_ALARM
	case clockMonotonicRaw, clockRealtimeCoarse, clockMonotonicCoarse:
		return errRet(Errno(95)) // EOPNOTSUPP: the clock has no timers
	default:
		return errRet(EINVAL)
	}
	tg := t.tg
	p := &ptimer{tg: tg, clock: clock, owner: owner, notify: sigevSignal, signo: int32(signals.SIGALRM)}
	if sevp != 0 {
		b, e := t.readBuf(sevp, 64)
		if e != 0 {
			return errRet(e)
		}
		le := binary.LittleEndian
		p.sival = le.Uint64(b[0:])
		p.signo = int32(le.Uint32(b[8:]))
		p.notify = int32(le.Uint32(b[12:]))
		tid := int32(le.Uint32(b[16:]))
		switch p.notify &^ sigevThreadID {
		case sigevSignal, sigevThread:
			if !signals.Signal(p.signo).Valid() {
				return errRet(EINVAL)
			}
		case sigevNone:
		default:
			return errRet(EINVAL)
		}
		if p.notify&sigevThreadID != 0 {
			tg.mu.Lock()
			p.target = tg.tasks[tid]
			tg.mu.Unlock()
			if p.target == nil {
				return errRet(EINVAL)
			}
		}
	}
	s := &tg.timers
	s.mu.Lock()
	if s.posix == nil {
		s.posix = map[int32]*ptimer{}
	}
	id := s.nextID
	for s.posix[id] != nil {
		id++
	}
	s.nextID = id + 1
	p.id = id
	if sevp == 0 {
		p.sival = uint64(id)
	}
	s.posix[id] = p
	s.mu.Unlock()
	if !isCPUClock(clock) {
		p.kt = tg.k.newKTimer(func() { p.fire() })
	}
	if e := t.putU32(idp, uint32(id)); e != 0 {
		t.timerDelete(id)
		return errRet(e)
	}
	return 0
}

func (tg *ThreadGroup) lookupTimer(id int32) *ptimer {
	s := &tg.timers
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posix[id]
}

// readItimerspec reads struct itimerspec (interval, value).
func (t *Task) readItimerspec(addr uint64) (interval, value int64, e Errno) {
	b, e := t.readBuf(addr, 32)
	if e != 0 {
		return 0, 0, e
	}
	le := binary.LittleEndian
	is, ins := int64(le.Uint64(b[0:])), int64(le.Uint64(b[8:]))
	vs, vns := int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:]))
	if is < 0 || vs < 0 || ins < 0 || ins >= 1e9 || vns < 0 || vns >= 1e9 {
		return 0, 0, EINVAL
	}
	const maxSec = 1 << 33
	is, vs = min(is, maxSec), min(vs, maxSec)
	return is*1e9 + ins, vs*1e9 + vns, 0
}

func (t *Task) writeItimerspec(addr uint64, interval, value int64) Errno {
	var b [32]byte
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(interval/1e9))
	le.PutUint64(b[8:], uint64(interval%1e9))
	le.PutUint64(b[16:], uint64(value/1e9))
	le.PutUint64(b[24:], uint64(value%1e9))
	return t.writeBytes(addr, b[:])
}

// remainingLocked is the time left and the interval (tg.timers.mu held).
func (p *ptimer) remainingLocked() (value, interval int64) {
	if p.expires == 0 {
		return 0, p.interval
	}
	left := p.expires - p.baseNow()
	if left <= 0 {
		// Expired, signal not yet handled (Linux reports 1 ns for a
		// timer whose signal is pending and 0 otherwise).
		left = 1
		if p.interval == 0 {
			left = 0
		}
	}
	return left, p.interval
}

func (t *Task) sysTimerSettime(id int32, flags, newAddr, oldAddr uint64) uint64 {
	p := t.tg.lookupTimer(id)
	if p == nil {
		return errRet(EINVAL)
	}
	if newAddr == 0 {
		return errRet(EINVAL)
	}
	interval, value, e := t.readItimerspec(newAddr)
	if e != 0 {
		return errRet(e)
	}
	s := &t.tg.timers
	s.mu.Lock()
	ov, oi := p.remainingLocked()
	now := p.baseNow()
	var expires int64
	if value != 0 {
		if flags&timerAbstime != 0 {
			expires = value
			if !isCPUClock(p.clock) {
				expires -= t.tg.k.clockOffset(p.clock)
			}
			if expires <= 0 {
				expires = 1 // in the past: fires at once
			}
		} else {
			expires = now + value
		}
	}
	wasArmed := p.expires != 0
	p.gen++
	p.expires, p.interval = expires, interval
	p.overrun, p.lastOverrun = 0, 0
	if value == 0 {
		p.interval = 0
	}
	if isCPUClock(p.clock) {
		switch {
		case wasArmed && expires == 0:
			s.cpuArmed.Add(-1)
		case !wasArmed && expires != 0:
			s.cpuArmed.Add(1)
		}
	}
	s.mu.Unlock()
	if p.kt != nil {
		if expires != 0 {
			p.kt.arm(expires)
		} else {
			p.kt.stop()
		}
	}
	if oldAddr != 0 {
		if e := t.writeItimerspec(oldAddr, oi, ov); e != 0 {
			return errRet(e)
		}
	}
	return 0
}

func (t *Task) sysTimerGettime(id int32, addr uint64) uint64 {
	p := t.tg.lookupTimer(id)
	if p == nil {
		return errRet(EINVAL)
	}
	s := &t.tg.timers
	s.mu.Lock()
	v, i := p.remainingLocked()
	s.mu.Unlock()
	return errOr0(t.writeItimerspec(addr, i, v))
}

func (t *Task) sysTimerGetoverrun(id int32) uint64 {
	p := t.tg.lookupTimer(id)
	if p == nil {
		return errRet(EINVAL)
	}
	s := &t.tg.timers
	s.mu.Lock()
	defer s.mu.Unlock()
	return uint64(p.lastOverrun)
}

func (t *Task) timerDelete(id int32) Errno {
	s := &t.tg.timers
	s.mu.Lock()
	p := s.posix[id]
	if p == nil {
		s.mu.Unlock()
		return EINVAL
	}
	delete(s.posix, id)
	p.gen++
	if isCPUClock(p.clock) && p.expires != 0 {
		s.cpuArmed.Add(-1)
	}
	p.expires = 0
	s.mu.Unlock()
	if p.kt != nil {
		p.kt.stop()
	}
	return 0
}

// fire is a clock timer's expiry (ktimer callback).
func (p *ptimer) fire() {
	s := &p.tg.timers
	s.mu.Lock()
	if p.expires == 0 {
		s.mu.Unlock()
		return
	}
	now := p.tg.k.uptimeNs()
	if now < p.expires {
		// A stale host timer from before a re-arm.
		s.mu.Unlock()
		return
	}
	send := p.expireLocked(now)
	next := p.expires
	s.mu.Unlock()
	if next != 0 {
		p.kt.arm(next)
	}
	if send {
		p.send()
	}
}

// expireLocked accounts an expiry at now (≥ expires): it forwards a
// periodic timer past now, counting the missed periods as overruns, and
// reports whether a signal is to be sent (none is while the previous one
// is still queued: the expiry becomes an overrun, as Linux's).
func (p *ptimer) expireLocked(now int64) bool {
	n := int64(1)
	if p.interval > 0 {
		n += (now - p.expires) / p.interval
		p.expires += n * p.interval
	} else {
		p.expires = 0
		if isCPUClock(p.clock) {
			p.tg.timers.cpuArmed.Add(-1)
		}
	}
	if p.notify&^sigevThreadID == sigevNone {
		return false
	}
	if p.sigQueued {
		p.overrun += n
		return false
	}
	p.overrun += n - 1
	p.sigQueued = true
	return true
}

func (p *ptimer) send() {
	info := signals.SigInfo{Signo: p.signo, Code: signals.SI_TIMER, TimerID: p.id, Value: p.sival}
	var target *Task
	if p.notify&sigevThreadID != 0 {
		target = p.target
	}
	if p.tg.sendSignal(info, target) != 0 || !p.signalPending(target) {
		// Ignored or not queued: the next expiry sends again.
		s := &p.tg.timers
		s.mu.Lock()
		p.sigQueued = false
		s.mu.Unlock()
	}
}

// signalPending reports whether a SI_TIMER siginfo of p is queued.
func (p *ptimer) signalPending(target *Task) bool {
	sh := p.tg.sighand
	sh.Siglock.Lock()
	defer sh.Siglock.Unlock()
	q := &p.tg.shared
	if target != nil {
		q = &target.pending
	}
	for _, si := range q.Queued() {
		if si.Code == signals.SI_TIMER && si.TimerID == p.id {
			return true
		}
	}
	return false
}

// timerSignalDequeued completes a dequeued SI_TIMER siginfo with the
// timer's overrun count (Linux's posixtimer_deliver_signal) and lets the
// timer queue its next signal. Called without Siglock.
func (tg *ThreadGroup) timerSignalDequeued(info *signals.SigInfo) {
	if info.Code != signals.SI_TIMER {
		return
	}
	s := &tg.timers
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.posix[info.TimerID]
	if p == nil || !p.sigQueued {
		return
	}
	ov := p.overrun
	if ov > delayTimerMax {
		ov = delayTimerMax
	}
	info.Overrun = int32(ov)
	p.lastOverrun = int32(ov)
	p.overrun = 0
	p.sigQueued = false
}

// cpuTimerTick fires the CPU-time timers that are due; the run loop calls
// it after every slice of t.
func (t *Task) cpuTimerTick() {
	tg := t.tg
	s := &tg.timers
	if s.cpuArmed.Load() == 0 {
		return
	}
	proc := tg.cpuNs(clockProcessCPUTime, nil)
	var fire []*ptimer
	var sigs []signals.Signal
	s.mu.Lock()
	for _, it := range []struct {
		t   *cpuItimer
		sig signals.Signal
	}{{&s.virt, signals.SIGVTALRM}, {&s.prof, signals.SIGPROF}} {
		if it.t.expires != 0 && proc >= it.t.expires {
			if it.t.interval > 0 {
				it.t.expires += ((proc-it.t.expires)/it.t.interval + 1) * it.t.interval
			} else {
				it.t.expires = 0
				s.cpuArmed.Add(-1)
			}
			sigs = append(sigs, it.sig)
		}
	}
	thr := int64(-1)
	for id := int32(0); id < s.nextID; id++ {
		p := s.posix[id]
		if p == nil || p.expires == 0 || !isCPUClock(p.clock) {
			continue
		}
		now := proc
		if p.clock == clockThreadCPUTime {
			if p.owner != t {
				continue // its clock only advances when its thread runs
			}
			if thr < 0 {
				thr = tg.cpuNs(clockThreadCPUTime, t)
			}
			now = thr
		}
		if now >= p.expires && p.expireLocked(now) {
			fire = append(fire, p)
		}
	}
	s.mu.Unlock()
	for _, sig := range sigs {
		tg.sendSignal(signals.KernelInfo(sig), nil)
	}
	for _, p := range fire {
		p.send()
	}
}

// deletePosixTimers deletes the POSIX timers at execve (which keeps the
// interval timers, as Linux's exit_itimers).
func (tg *ThreadGroup) deletePosixTimers() {
	s := &tg.timers
	s.mu.Lock()
	ps := s.posix
	s.posix = nil
	for _, p := range ps {
		p.gen++
		if isCPUClock(p.clock) && p.expires != 0 {
			s.cpuArmed.Add(-1)
		}
		p.expires = 0
	}
	s.mu.Unlock()
	for _, p := range ps {
		if p.kt != nil {
			p.kt.stop()
		}
	}
}

// cpuItimerGet returns ITIMER_VIRTUAL / ITIMER_PROF's remaining time.
func (tg *ThreadGroup) cpuItimerGet(which uint64) (value, interval int64) {
	s := &tg.timers
	s.mu.Lock()
	defer s.mu.Unlock()
	it := &s.virt
	if which == itimerProf {
		it = &s.prof
	}
	if it.expires == 0 {
		return 0, it.interval
	}
	left := it.expires - tg.cpuNs(clockProcessCPUTime, nil)
	if left <= 0 {
		left = 1
	}
	return left, it.interval
}

// cpuItimerSet arms ITIMER_VIRTUAL / ITIMER_PROF (value 0 disarms).
func (tg *ThreadGroup) cpuItimerSet(which uint64, value, interval int64) {
	s := &tg.timers
	now := tg.cpuNs(clockProcessCPUTime, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	it := &s.virt
	if which == itimerProf {
		it = &s.prof
	}
	was := it.expires != 0
	if value <= 0 {
		it.expires, it.interval = 0, 0
	} else {
		it.expires, it.interval = now+value, interval
	}
	switch {
	case was && it.expires == 0:
		s.cpuArmed.Add(-1)
	case !was && it.expires != 0:
		s.cpuArmed.Add(1)
	}
}

// restart_syscall runs the restart block an interrupted nanosleep or
// poll left (ERESTART_RESTARTBLOCK without a handler).
func sysRestartSyscall(t *Task, _ [6]uint64) uint64 {
	fn := t.restartBlock
	t.restartBlock = nil
	if fn == nil {
		return errRet(EINTR)
	}
	return fn(t)
}

// erestartRestartblock is Linux's ERESTART_RESTARTBLOCK.
const erestartRestartblock = 516

func init() {
	registerSyscall("timer_create", func(t *Task, a [6]uint64) uint64 { return t.sysTimerCreate(int32(a[0]), a[1], a[2]) })
	registerSyscall("timer_settime", func(t *Task, a [6]uint64) uint64 { return t.sysTimerSettime(int32(a[0]), a[1], a[2], a[3]) })
	registerSyscall("timer_gettime", func(t *Task, a [6]uint64) uint64 { return t.sysTimerGettime(int32(a[0]), a[1]) })
	registerSyscall("timer_getoverrun", func(t *Task, a [6]uint64) uint64 { return t.sysTimerGetoverrun(int32(a[0])) })
	registerSyscall("timer_delete", func(t *Task, a [6]uint64) uint64 { return errOr0(t.timerDelete(int32(a[0]))) })
	registerSyscall("restart_syscall", sysRestartSyscall)
}
