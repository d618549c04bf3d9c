package tasks

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvm-emu/uvm/internal/guestprof"
	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/timing"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
	"github.com/uvm-emu/uvm/uprobes"
)

// arch is a guest architecture's syscall ABI.
type arch struct {
	// setupFrame builds a signal frame and enters the handler;
	// sigreturn is rt_sigreturn (signal.go); setCounter points the
	// CPU's cycle counter at a clock (setupClock). Set by init: they
	// refer to the tables through the task.
	setupFrame func(t *Task, sig signals.Signal, info *signals.SigInfo, act signals.SigAction, blocked signals.SigSet) bool
	sigreturn  func(t *Task)
	setCounter func(cpu vm.CPU, clock func(retired, pc uint64) uint64)

	name  string
	nr    int               // register holding the syscall number
	args  [6]int            // registers holding the arguments
	ret   int               // register receiving the result
	names map[uint64]string // every syscall name of the arch (sysnames.go)
	// dense is each number's entry (syscalltab.go);
	// built once by NewKernel, read-only after.
	dense []syscallEntry
	// cloneTLSArg / cloneCTIDArg: clone's argument order differs
	// (arm64: flags, stack, ptid, tls, ctid; x86-64: flags, stack, ptid, ctid, tls).
	cloneTLSArg, cloneCTIDArg int
	statLayout                statLayout
	// vsyscall: the arch has the legacy vsyscall page (vsyscall.go).
	vsyscall bool

	// vmArch is the arch as package vm names it (profiles, crash
	// backtraces, the debugger); machine is uname(2)'s machine field.
	vmArch  vm.Arch
	machine string
	// syscallInsnLen is the length of the syscall instruction (svc #0,
	// syscall) that a restarted syscall backs the pc over.
	syscallInsnLen uint64
	// restartSyscallNr is __NR_restart_syscall.
	restartSyscallNr uint64
	// fpReg and lrReg are the frame-pointer and link registers of the
	// frame-pointer unwinder (lrReg -1: the return address is on the stack).
	fpReg, lrReg int
	// epollEventSize and epollDataOff lay out struct epoll_event (packed
	// on x86-64, naturally aligned on arm64).
	epollEventSize, epollDataOff uint64
	// semid64 lays out struct semid64_ds (x86-64 keeps 32-bit-era
	// padding words after each time).
	semid64 semid64Layout
	// illCode is the si_code of SIGILL for an undefined instruction
	// (x86-64's do_error_trap: ILL_ILLOPN; arm64: ILL_ILLOPC).
	illCode int32
	// breakpointTrapLen is, where the breakpoint instruction is a trap
	// (x86-64's INT3: SIGTRAP SI_KERNEL with the pc after it), its
	// length; 0 where it is a fault at the instruction (arm64's BRK,
	// TRAP_BRKPT).
	breakpointTrapLen uint64
	// badFrameAtSP: a bad rt_sigreturn frame is SIGSEGV SEGV_MAPERR at
	// the stack pointer (arm64_notify_segfault) rather than SI_KERNEL.
	badFrameAtSP bool
	// recordTrap, where set, records the trap number, error code and
	// fault address of a synchronous exit for the signal frame
	// (x86-64's thread.trap_nr/error_code/cr2, x86trap.go).
	recordTrap func(t *Task, ex vm.Exit)
	// cpuinfo writes /proc/cpuinfo's stanzas for n CPUs (procfs_machine.go).
	cpuinfo func(t *Task, n int, b *strings.Builder)
	// uretprobeNr is the number of the uretprobe trampoline's syscall
	// (x86-64's sys_uretprobe); noSyscall where the arch has none.
	uretprobeNr uint64
	// minSigStkSz is MINSIGSTKSZ, sigaltstack's lower bound.
	minSigStkSz uint64
	// openFlagBits are the arch's O_DIRECTORY and O_NOFOLLOW (asm-generic's
	// differ from x86-64's, which uvm uses inside; openFlags translates),
	// and the flags open drops: O_LARGEFILE, and arm64's O_DIRECT, whose
	// value is x86-64's O_DIRECTORY.
	openFlagBits openFlagBits
}

// noSyscall is a syscall number no arch has.
const noSyscall = ^uint64(0)

// semid64Layout is the size of struct semid64_ds and the offsets of
// sem_otime, sem_ctime and sem_nsems in it.
type semid64Layout struct{ size, otime, ctime, nsems int }

// openFlagBits are the open(2) flags whose values differ between arches.
type openFlagBits struct{ directory, nofollow, direct, largefile int }

func init() {
	arm64ABI.setupFrame, arm64ABI.sigreturn, arm64ABI.setCounter = arm64SetupFrame, arm64Sigreturn, arm64SetCounter
	amd64ABI.setupFrame, amd64ABI.sigreturn, amd64ABI.setCounter = amd64SetupFrame, amd64Sigreturn, amd64SetCounter
}

var arm64ABI = arch{
	name: "arm64", nr: 8, args: [6]int{0, 1, 2, 3, 4, 5}, ret: 0, names: arm64SysNames,
	cloneTLSArg: 3, cloneCTIDArg: 4, statLayout: statGeneric,
	vmArch: vm.ArchARM64, machine: "aarch64", syscallInsnLen: 4, restartSyscallNr: 128, fpReg: 29, lrReg: 30,
	epollEventSize: 16, epollDataOff: 8, minSigStkSz: signals.MINSIGSTKSZ_ARM64,
	semid64: semid64Layout{size: 88, otime: 48, ctime: 56, nsems: 64},
	illCode: signals.ILL_ILLOPC, badFrameAtSP: true, uretprobeNr: noSyscall,
	openFlagBits: openFlagBits{directory: 0o40000, nofollow: 0o100000, direct: 0o200000, largefile: 0o400000},
}

var amd64ABI = arch{
	name: "amd64", nr: 0, args: [6]int{7, 6, 2, 10, 8, 9}, ret: 0, names: amd64SysNames,
	cloneTLSArg: 4, cloneCTIDArg: 3, statLayout: statX86, vsyscall: true,
	vmArch: vm.ArchAMD64, machine: "x86_64", syscallInsnLen: 2, restartSyscallNr: 219, fpReg: 5, lrReg: -1,
	epollEventSize: 12, epollDataOff: 4, minSigStkSz: signals.MINSIGSTKSZ_AMD64,
	semid64: semid64Layout{size: 104, otime: 48, ctime: 64, nsems: 80},
	illCode: signals.ILL_ILLOPN, breakpointTrapLen: 1, uretprobeNr: uprobeSyscall,
	openFlagBits: openFlagBits{directory: oDIRECTORY, nofollow: oNOFOLLOW, largefile: 0o100000},
}

// frameRegs returns what the frame-pointer unwinder starts from: the
// arch, the frame pointer and the link register (0 where there is none).
func (t *Task) frameRegs() (a vm.Arch, fp, lr uint64) {
	ar := t.tg.arch
	fp = t.cpu.Reg(ar.fpReg)
	if ar.lrReg >= 0 {
		lr = t.cpu.Reg(ar.lrReg)
	}
	return ar.vmArch, fp, lr
}

// ThreadGroup is a process (Linux's signal_struct + the parts of
// task_struct shared by all threads).
type ThreadGroup struct {
	k    *Kernel
	arch *arch
	mm   *vm.MM
	img  *vm.Image
	pid  int32
	fds  *fdTable

	// mu protects tasks, retired, cwd, cwdDir, umask, the exit state, rlim and
	// xcpuSent (signal actions are sighand's, under its Siglock).
	mu      sync.Mutex
	tasks   map[int32]*Task
	retired map[int32]uint64
	cwd     string
	// cwdDir is the cwd's host directory (O_PATH), which relative
	// names start from (see pathArg); nil until first needed.
	cwdDir  *os.File
	umask   uint32
	exiting bool
	status  ExitStatus
	// sighand is the signal action table, shared by the threads; its
	// Siglock also protects shared and every thread's pending/blocked.
	sighand *signals.Sighand
	// shared is the group's pending queue (process-directed signals).
	shared signals.Pending

	// cmdline is /proc/self/cmdline (argv, NUL-terminated), set at exec.
	cmdline []byte
	// rlim is the process's resource limits, xcpuSent the CPU second of
	// the last SIGXCPU (both protected by mu).
	rlim     rlimits
	xcpuSent uint64
	// timers is the POSIX timers, ITIMER_VIRTUAL/PROF and signalfd
	// wake-ups (timers.go).
	timers tgTimers
	// environ is /proc/self/environ: the environment the guest was
	// started or exec'ed with (never uvm's own), set at exec.
	environ []byte
	// retsPendingAtExit: a thread exited with uretprobe instances pending.
	retsPendingAtExit atomic.Bool
	// umm is the address space's uprobe state (nil without uprobes).
	umm *uprobes.MM
	// jobctl is the group-stop state (SIGSTOP/SIGCONT).
	jobctl groupStop
	// itimer is ITIMER_REAL (protected by mu).
	itimer itimerState
	// proc is the group's place in the process tree (Kernel.procMu).
	proc procState
	// pr is the prctl and rusage state (sysproc.go; protected by mu).
	pr tgPrctl
	// procfs is the process's /proc state (procfs_pid.go; protected by mu).
	procfs procfsState

	live sync.WaitGroup // running tasks
	done chan struct{}  // closed when the last task exits
	once sync.Once
	// detSwitches and detVclock are the deterministic scheduler's context
	// switches and virtual time when the last task exited (set before
	// done is closed; --stats reports them, so that the report does not
	// depend on whether the exiting thread has passed the baton yet).
	detSwitches uint64
	detVclock   int64
}

// Pid returns the thread group id.
func (tg *ThreadGroup) Pid() int32 { return tg.pid }

// MM returns the address space.
func (tg *ThreadGroup) MM() *vm.MM { return tg.mm }

// Wait blocks until every thread has exited and returns the status.
func (tg *ThreadGroup) Wait() ExitStatus {
	<-tg.done
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.status
}

// Task is one guest thread (Linux's task_struct).
type Task struct {
	tg  *ThreadGroup
	tid int32
	cpu vm.CPU
	// vvarSkip counts run-loop exits left before the next refreshVvar
	// (owned by the task's goroutine).
	vvarSkip int
	// sigFrame is rt_sigreturn's frame buffer (sigreturnScratch; owned by
	// the task's goroutine).
	sigFrame []byte
	// sigBufs is signal delivery's reusable context and frame buffers
	// (sigscratch.go; owned by the task's goroutine, nil until needed).
	sigBufs *sigScratchBufs

	// ptrace links a traced thread to its tracer (ptrace.go; nil: not
	// traced). Set by the thread itself (PTRACE_TRACEME), cleared by its
	// tracer (PTRACE_DETACH, the tracer's exit).
	ptrace atomic.Pointer[ptraceState]

	// clearChildTID is set_tid_address/CLONE_CHILD_CLEARTID's address.
	clearChildTID uint64
	robustList    uint64

	// Signal state (protected by tg.sighand.Siglock when others read it).
	pending signals.Pending
	blocked signals.SigSet
	alt     signals.StackT
	// frameInfo is the siginfo of the frame being built (setupFrame;
	// owned by the thread's goroutine).
	frameInfo signals.SigInfo
	// x86trap: trap_nr/error_code/cr2 of an x86-64 thread (x86trap.go).
	x86trap x86Trap
	// savedBlocked is the mask to restore after rt_sigsuspend.
	savedBlocked *signals.SigSet
	// restartBlock is what restart_syscall runs (nanosleep, poll; see
	// timers.go), set with ERESTART_RESTARTBLOCK.
	restartBlock func(t *Task) uint64
	// flags is the thread-flag word (TIF_SIGPENDING …), atomic.
	flags signals.ThreadFlags
	// fault is the last memory fault, for the signal frame's fault context.
	fault vm.Exit
	// lastExit is the synchronous exit being turned into a signal, for
	// the fatal message.
	lastExit *vm.Exit
	// utask is the thread's uprobe state (nil without uprobes).
	utask *uprobes.Task
	// uregs adapts the thread's registers for package uprobes.
	uregs *uRegs
	// forkChild is set on the first thread of a forked process.
	forkChild bool
	// debugCreated: the debugger asked for thread events when this
	// thread was cloned; it reports its creation at its first gate
	// (debug_threads.go). Set before the task starts, then only the
	// task's own.
	debugCreated bool
	// exitCode is the status of the thread's exit(2) (the task's own).
	exitCode int
	// notify, when not nil, is closed to interrupt a blocking wait
	// (protected by notifyMu).
	notifyMu sync.Mutex
	notify   chan struct{}

	// killed is set by exit_group from another thread.
	killed atomic.Bool
	// credp is the thread's credentials (creds.go; nil until first
	// used: the kernel's initial identity). Replaced, never changed.
	credp atomic.Pointer[cred]
	// execMM is the address space a thread killed by another thread's
	// execve still runs on; the thread holds one of its users and drops
	// it on exit, so the last of them releases it (protected by tg.mu).
	execMM *vm.MM

	// baton is the deterministic scheduler's run permission (buffered 1).
	baton chan struct{}
	// detWait is the condition t is blocked on (deterministic mode;
	// protected by detSched.mu).
	detWait *detWait
	// accounted is how many of cpu.Retired() the virtual clock has seen.
	accounted uint64
	// lastIMiss, lastDMiss are the cache model's miss counts at the
	// thread's previous profile sample.
	lastIMiss, lastDMiss uint64
	// trapWork is what the fast path (fastpath.go) left to the run loop
	// with a TrapLeave, trapSC the syscall it handled when trapHasSC and
	// trapEx its XOL step's exit (owned by the thread's goroutine).
	trapWork  trapWork
	trapSC    syscallResult
	trapHasSC bool
	trapEx    vm.Exit // the XOL step's exit with trapStepExit
	// sliceLeft is what remains of the thread's deterministic quantum.
	sliceLeft int64
	// detClean: the thread yielded the baton between two instructions
	// (or has not run yet), so a checkpoint can restart it at the top
	// of its loop (checkpoint.go).
	detClean bool
	// clock is the guest profiler's per-thread sampling clock.
	clock guestprof.Clock
	// cclock is its cycle clock (--pprof-clock=cycles; armed on the
	// thread's first run, timing_pprof.go).
	cclock guestprof.CycleClock
	// vc is the thread's virtual CPU in the timing model (timing.go).
	vc *timing.CPU
	// comm is the thread's PR_SET_NAME name (protected by tg.mu; "":
	// the executable's name).
	comm string
}

func (tg *ThreadGroup) newTask(cpu vm.CPU, tid int32) *Task {
	t := &Task{tg: tg, tid: tid, cpu: cpu, baton: make(chan struct{}, 1), alt: signals.DisabledStack, detClean: true}
	t.setupClock()
	t.accounted = cpu.Retired()
	t.clock = tg.k.opts.Profiler.NewClock(cpu.Retired())
	t.newUtask()
	tg.k.attachTiming(t)
	t.setupArchCPU() // after attachTiming: the modelled CPU is the vcpu
	t.installTrapHandler()
	tg.k.threads.Add(1)
	tg.k.loadChange(1)
	tg.mu.Lock()
	if tg.tasks == nil {
		tg.tasks = map[int32]*Task{}
		tg.retired = map[int32]uint64{}
	}
	tg.tasks[tid] = t
	tg.mu.Unlock()
	return t
}

// outOfMemory is the kernel's OOM killer, run when a page fault finds the
// memory limit reached: the process with the largest resident set (the
// lowest pid among equals, so the choice is deterministic) is killed with
// SIGKILL, and the faulting thread waits until memory is free or the
// victim is gone before it retries.
func (t *Task) outOfMemory() {
	k := t.tg.k
	k.mu.Lock()
	groups := append([]*ThreadGroup(nil), k.groups...)
	k.mu.Unlock()
	var victim *ThreadGroup
	var most int64 = -1
	for _, g := range groups {
		select {
		case <-g.done:
			continue
		default:
		}
		if r := g.mm.RSS(); r > most {
			victim, most = g, r
		}
	}
	if victim == nil {
		victim = t.tg
	}
	k.logf("out of memory (limit %d MiB): killed process %d with %d KiB resident",
		k.opts.Limits.MemBytes>>20, victim.pid, most*vm.PageSize>>10)
	k.event("%d oom-kill victim=%d rss=%d", t.tid, victim.pid, most)
	victim.exitGroup(ExitStatus{Signal: sigKILL})
	if victim == t.tg {
		return
	}
	t.wait(func() bool {
		select {
		case <-victim.done:
			return true
		default:
			return !k.acct.Full()
		}
	}, func() <-chan struct{} { return victim.done }, -1)
}

// recoverBug is the task's panic boundary: a Go panic anywhere in the
// thread's loop (interpreter, syscall, signal delivery) is a uvm bug, and
// it must cost the guest, never the host. The stack goes to a report
// file, uvm prints one line, and the thread group dies as of SIGSEGV.
func (t *Task) recoverBug() {
	r := recover()
	if r == nil {
		return
	}
	stack := debug.Stack()
	where := "stderr"
	if f, err := os.CreateTemp("", "uvm-bug-*.txt"); err == nil {
		fmt.Fprintf(f, "uvm internal error in guest thread %d (pc %#x): %v\n\n%s", t.tid, t.cpu.PC(), r, stack)
		f.Close()
		where = f.Name()
	} else {
		t.tg.k.logf("%s", stack)
	}
	t.tg.k.logf("internal error (a uvm bug) in thread %d at pc %#x: %v; the guest is killed with SIGSEGV; report in %s", t.tid, t.cpu.PC(), r, where)
	t.tg.exitGroup(ExitStatus{Signal: int(signals.SIGSEGV)})
}

// syncSignal turns a synchronous exit into its signal and delivers it.
func (t *Task) syncSignal(ex vm.Exit, stepping bool) bool {
	if stepping {
		t.utask.RecordTrap(uint32(ex.Reason))
	}
	info := t.exitSignalInfo(ex)
	if t.utask != nil && info.Addr == ex.PC {
		// si_addr of a trap in the XOL slot is the probed address.
		info.Addr = t.utask.TrapAddr(ex.PC)
	}
	t.lastExit = &ex
	t.forceSignal(info)
	ok := t.exitToUser(nil)
	t.lastExit = nil
	return ok
}

// setupClock points the CPU's cycle counter (arm64 CNTVCT_EL0) at the
// virtual clock in deterministic mode: the global virtual time plus this
// thread's instructions not yet accounted.
//
// The same clock is x86's TSC (1 GHz) and arm64's CNTVCT_EL0 (CNTFRQ 1
// GHz): machine-wide, so monotonic across threads, as on hardware. In
// parallel mode it is the host's monotonic time since the kernel started.
func (t *Task) setupClock() {
	k := t.tg.k
	det := k.det
	clock := func(retired uint64) uint64 { return uint64(time.Since(k.start)) }
	if det != nil {
		clock = func(retired uint64) uint64 {
			return uint64(det.now() + int64(retired-t.accounted)*det.nsPerInsn)
		}
	}
	// A read inside the vDSO is one vDSO call (vdso.go, --stats).
	counted := func(a vm.Arch) func(retired, pc uint64) uint64 {
		if k.vdso == nil {
			return func(retired, _ uint64) uint64 { return clock(retired) }
		}
		return func(retired, pc uint64) uint64 {
			k.countVDSO(a, pc)
			return clock(retired)
		}
	}
	t.tg.arch.setCounter(t.cpu, counted(t.tg.arch.vmArch))
}

// arm64SetCounter points CNTVCT_EL0 at clock.
func arm64SetCounter(cpu vm.CPU, clock func(retired, pc uint64) uint64) {
	if c, ok := cpu.(*arm64.CPU); ok {
		c.Counter = clock
	}
}

// amd64SetCounter points the TSC (RDTSC, RDTSCP) at clock.
func amd64SetCounter(cpu vm.CPU, clock func(retired, pc uint64) uint64) {
	if c, ok := cpu.(*amd64.CPU); ok {
		c.TSC = clock
	}
}

// runSampled is cpu.Run(budget) with the guest profiler's sample points:
// Run stops at each, the stack is recorded, and the slice continues, so
// the deterministic schedule is the same with and without profiling.
func (t *Task) runSampled(budget int64) vm.Exit {
	prof := t.tg.k.opts.Profiler
	if prof == nil {
		return t.cpu.Run(budget)
	}
	if prof.Cycles() {
		return t.runSampledCycles(prof, budget) // timing_pprof.go
	}
	for {
		start := t.cpu.Retired()
		b := t.clock.Budget(start, budget)
		ex := t.cpu.Run(b)
		done := t.cpu.Retired()
		if n, ok := t.clock.Due(done); ok {
			arch, fp, lr := t.frameRegs()
			extra := t.cacheMissDeltas()
			if t.vc != nil {
				extra = append(extra, t.cycleDelta()) // timing_class.go
			}
			prof.SampleValues(int(t.tid), arch, t.cpu.PC(), t.cpu.SP(), fp, lr, t.cpu.MM(), n, extra)
		}
		budget -= int64(done - start)
		if ex.Reason != vm.ExitBudget || budget <= 0 || int64(done-start) < b {
			return ex
		}
	}
}

// cacheMissDeltas returns the L1 I and D misses since the thread's last
// sample when the cache model is on (the profile's extra sample values),
// nil otherwise.
func (t *Task) cacheMissDeltas() []int64 {
	c, ok := t.cpu.(cacheModelCPU)
	if !ok || c.CacheModel() == nil {
		return nil
	}
	st := c.CacheModel().Stats()
	d := []int64{int64(st.I.Misses - t.lastIMiss), int64(st.D.Misses - t.lastDMiss)}
	t.lastIMiss, t.lastDMiss = st.I.Misses, st.D.Misses
	return d
}

// account feeds newly retired instructions to the virtual clock.
func (t *Task) account() {
	if t.tg.k.det == nil {
		return
	}
	r := t.cpu.Retired()
	if t.vc != nil {
		t.timingRetire(r - t.accounted)
	}
	t.tg.k.det.account(r - t.accounted)
	t.accounted = r
}

// exitWhy describes a synchronous exit for uvm's one-line report.
func exitWhy(ex vm.Exit) string {
	switch ex.Reason {
	case vm.ExitFault:
		return ex.Fault.Error()
	case vm.ExitAlignment:
		return fmt.Sprintf("misaligned access at 0x%x", ex.Fault.Addr)
	case vm.ExitUndefined:
		why := fmt.Sprintf("undefined instruction % x", ex.Raw[:ex.RawLen])
		if ex.Why != "" {
			why += " (" + ex.Why + ")"
		}
		return why
	case vm.ExitBreakpoint:
		return "breakpoint"
	case vm.ExitDivide:
		if ex.Code != 0 {
			return "floating-point exception"
		}
		return "integer divide error"
	case vm.ExitPrivileged:
		if ex.Code != 0 {
			return fmt.Sprintf("general protection fault (selector 0x%x)", ex.Code)
		}
		return "privileged instruction"
	}
	return ex.Reason.String()
}

// exitGroup ends every thread of the group with status (first caller wins).
func (tg *ThreadGroup) exitGroup(st ExitStatus) {
	tg.mu.Lock()
	if !tg.exiting {
		tg.exiting = true
		tg.status = st
	}
	for _, o := range tg.tasks {
		o.killed.Store(true)
		o.cpu.Interrupt()
		o.interruptWait()
	}
	tg.mu.Unlock()
	tg.k.futexes.wakeAll(tg.mm)
}

// exited runs when the task's loop ends: CLONE_CHILD_CLEARTID handling and
// group teardown when it was the last thread.
func (t *Task) exited() {
	tg := t.tg
	if t.utask != nil {
		if t.utask.PendingReturns() > 0 {
			tg.retsPendingAtExit.Store(true)
		}
		t.utask.Free(t.uregs)
		t.utask.Exit()
	}
	if t.clearChildTID != 0 && !t.killed.Load() {
		var zero [4]byte
		if tg.mm.WriteAt(zero[:], t.clearChildTID) == nil {
			// mm_release: a shared-futex wake (no FUTEX_PRIVATE_FLAG).
			tg.k.futexes.wake(futexKeyOf(tg.mm, t.clearChildTID, false), 1, ^uint32(0))
		}
	}
	tg.k.threads.Add(-1)
	tg.k.loadChange(-1)
	tg.mu.Lock()
	delete(tg.tasks, t.tid)
	tg.retired[t.tid] = t.cpu.Retired()
	releaseCacheModel(t.cpu)
	if t.vc != nil {
		t.vc.Exit()
	}
	last := len(tg.tasks) == 0
	st := tg.status
	execMM := t.execMM
	tg.mu.Unlock()
	if execMM != nil {
		execMM.DropUser(true)
	}
	tg.k.event("%d exit retired=%d", t.tid, t.cpu.Retired())
	if !last && tg.k.dbg != nil {
		t.debugThreadExit() // debug_threads.go
	}
	if last {
		tg.k.event("%d process exit code=%d signal=%d", tg.pid, st.Code, st.Signal)
	}
	tg.live.Done()
	if last {
		tg.once.Do(func() {
			tg.fds.closeAll()
			tg.explainGoUretprobeFailure()
			tg.releaseUprobes()
			tg.exitIPC()
			if h := tg.k.opts.ProcessExit; h != nil {
				h(tg)
			}
			tg.mm.DropUser(true)
			tg.groupExited()
			if d := tg.k.det; d != nil {
				d.mu.Lock()
				tg.detSwitches, tg.detVclock = d.switches, d.vclock
				d.mu.Unlock()
			}
			close(tg.done)
		})
	}
	if tg.k.det != nil {
		tg.k.det.exit(t)
	}
}

// Retired returns the instructions retired by all of the group's threads
// (exited ones included).
func (tg *ThreadGroup) Retired() uint64 {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	var n uint64
	for _, r := range tg.retired {
		n += r
	}
	for _, t := range tg.tasks {
		n += t.cpu.Retired()
	}
	return n
}

// Kill ends the thread group as SIGKILL would (used by harnesses such as
// uvm bench to stop a guest that loops forever).
func (tg *ThreadGroup) Kill() {
	tg.exitGroup(ExitStatus{Signal: sigKILL})
}

// Done is closed when the thread group has exited.
func (tg *ThreadGroup) Done() <-chan struct{} { return tg.done }
