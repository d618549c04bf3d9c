package tasks

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvm-emu/uvm/internal/guestprof"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/timing"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/uprobes"
)

// Options configure a Kernel.
type Options struct {
	// Limits are the caps of the whole run (uvm's --mem-limit …).
	Limits Limits
	// Chroot confines the guest: its / is this host directory ("DIR" or
	// "DIR:ro" for a read-only root), resolved by the host kernel inside
	// it (see vfs). The program path and Cwd are then guest paths.
	Chroot string
	// Binds are added to the guest's file system, in order, over the
	// root (or the host's view): see Bind.
	Binds []Bind
	// Root is a directory prefix for absolute guest paths (qemu's -L):
	// an absolute path that exists under Root is opened there.
	Root string
	// Env is the guest environment (KEY=VALUE).
	Env []string
	// Stdin, Stdout, Stderr back guest fds 0, 1 and 2.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Log receives uvm's own messages (unimplemented syscalls, fatal
	// signals). Defaults to Stderr.
	Log io.Writer
	// Trace, when set, receives one line per event: syscall with
	// arguments and result, thread start/exit, fatal signal, exit status.
	Trace io.Writer
	// TraceHash keeps a SHA-256 over the event stream (Kernel.TraceHash).
	TraceHash bool
	// TraceInsn, when set, receives the register state before every
	// instruction in shared/tools/qemu-trace format (single-steps the CPU).
	TraceInsn io.Writer
	// SlowTraps turns off the kernel's fast path (fastpath.go): every
	// syscall and breakpoint trap then returns from the CPU's Run to the
	// thread's run loop. For comparing the two ways in tests.
	SlowTraps bool
	// Cwd is the initial working directory (default: the host's).
	Cwd string
	// Random, when non-nil, supplies AT_RANDOM and getrandom bytes
	// (default: crypto/rand, or a generator seeded with Seed in
	// deterministic mode).
	Random io.Reader

	// Deterministic selects the deterministic scheduler (see sched.go).
	Deterministic bool
	// Seed seeds randomness (and chaos quanta) in deterministic mode.
	Seed uint64
	// Quantum is the deterministic scheduler's time slice in instructions
	// (default DefaultQuantum).
	Quantum int64
	// NsPerInsn is the virtual clock's rate (default 1 ns per instruction).
	NsPerInsn int64
	// Chaos draws each quantum at random (seeded) in [1, 2*Quantum], to
	// search for schedule-dependent bugs reproducibly.
	Chaos bool
	// Profiler, when not nil, samples guest stacks every period of
	// retired instructions (see package guestprof), or of virtual
	// cycles for a cycle-clock Profiler, which needs Deterministic and
	// Machine (NewKernel panics otherwise).
	Profiler *guestprof.Profiler
	// Uprobes, when not nil, is the uprobe subsystem: probes registered
	// in it are installed into every process that maps their file.
	Uprobes *uprobes.System
	// PinThreads pins the host thread running each guest thread to its
	// own host CPU (guest thread i → CPU i mod NumCPU), where the host OS
	// allows it (Linux: sched_setaffinity); elsewhere it does nothing.
	PinThreads bool
	// ProcessExit, when set, is called as each process's last thread
	// exits, while its address space is still intact (harnesses read
	// results from guest memory here; afterwards it is released).
	ProcessExit func(tg *ThreadGroup)
	// CacheModel, when not nil, gives every CPU modelled L1 I/D caches
	// (and arm64 its non-coherent I-side in strict mode); --stats
	// prints their counters. See package icache and cachemodel.go.
	CacheModel *icache.Models
	// Machine, with Deterministic, turns on the timing model (timing.go):
	// every thread runs on a virtual CPU of this machine.
	Machine *timing.Machine
	// CPUModel is the CPU model. x86-64: "x86-64-v3" (default: AVX,
	// AVX2, FMA, F16C, XSAVE; the signal frame carries the XSAVE image) or
	// "x86-64-v2", see amd64.(*CPU).SetCPUModel. arm64:
	// "max" (default), "armv8.0", "armv8.1", "armv8.2", "neoverse-n1",
	// see arm64.(*CPU).SetCPUModel. "" is each arch's default.
	CPUModel string
	// Redecode makes the interpreters decode every instruction afresh
	// before executing it (differential testing of the predecoded
	// instruction caches).
	Redecode bool
	// NoVDSO leaves the vDSO out, as Linux's vdso=0: no [vdso] image or
	// [vvar] page and no AT_SYSINFO_EHDR, so the guest makes syscalls for
	// time (arm64 keeps a one-page signal-return trampoline).
	NoVDSO bool
	// Net is the network: NetLoopback (default: in the emulated kernel)
	// or NetHost (AF_INET/AF_INET6 on the host's network; parallel mode
	// on Linux hosts only). See socket_host.go.
	Net string
	// Record, when not nil, records the run's file inputs (uvm run
	// --record; record.go). Unconfined runs only (no Chroot or Root).
	Record *FileRecord
}

// DefaultQuantum is the deterministic scheduler's default time slice.
const DefaultQuantum = 100000

// ExitStatus is how a thread group ended.
type ExitStatus struct {
	Code   int // exit code when Signal == 0
	Signal int // terminating signal, 0 for a normal exit
	Core   bool
}

// Limits bound what the guest can take from the host. Zero means no cap.
type Limits struct {
	// MemBytes caps resident guest memory across the run: past it the
	// guest's page faults take the kernel's out-of-memory path (the
	// process with the largest resident set is killed with SIGKILL),
	// and fork fails with ENOMEM.
	MemBytes int64
	// MaxProcs caps live processes (zombies included; RLIMIT_NPROC's
	// hard limit), MaxThreads live threads across the run (clone fails
	// with EAGAIN), MaxOpenFiles the hard RLIMIT_NOFILE.
	MaxProcs, MaxThreads, MaxOpenFiles int
	// CPUSeconds is RLIMIT_CPU (SIGXCPU, then SIGKILL a second later)
	// on the guest's CPU time, counted as retired instructions at
	// NsPerInsn each.
	CPUSeconds int64
	// MemTotal is the machine's memory as /proc/meminfo and sysinfo
	// report it; 0 means MemBytes, or 8 GiB without a cap.
	MemTotal int64
}

// ShellCode is the status a shell would report: the code, or 128+signal.
func (s ExitStatus) ShellCode() int {
	if s.Signal != 0 {
		return 128 + s.Signal
	}
	return s.Code
}

// Kernel is one emulated Linux instance: its processes share pid
// numbering, statistics and the host I/O it was given.
type Kernel struct {
	opts Options
	log  io.Writer

	// mu protects nextPID, unimpl and namedCalls.
	mu         sync.Mutex
	nextPID    int32
	unimpl     map[string]int    // unimplemented syscall/instruction → count
	namedCalls map[string]uint64 // calls of registered named syscalls

	// syscalls counts calls by sysno.
	syscalls [sysCount]atomic.Uint64
	// futexes is the global futex hash (kernel/futex).
	futexes futexTable
	start   time.Time
	// det is the deterministic scheduler, nil in parallel mode.
	det *detSched
	// tm is the timing model (Options.Machine), nil without one.
	tm *timingState
	// groups lists the thread groups started (protected by mu).
	groups []*ThreadGroup
	// trace is the event tracer (protected by mu).
	trace tracer
	// procMu protects the process tree: procs and every ThreadGroup.proc.
	procMu sync.Mutex
	procs  map[int32]*ThreadGroup
	// flocks is the flock(2) lock table.
	flocks flockTable
	// plocks is the POSIX record lock table (fcntl F_SETLK…).
	plocks plockTable
	// fs is the guest's view of the host file system (Options.Chroot,
	// Options.Root); fsErr is why it could not be set up (Start fails).
	fs    vfs
	fsErr error
	// root is fs's "/" opened as a directory anchor (see pathArg),
	// once, by rootAnchor.
	root rootAnchor
	// fifos counts the host FIFO ends guests hold (fifo_open_linux.go).
	fifos fifoTable
	// acct is the memory limit every address space is charged to.
	acct *vm.MemAccount
	// threads counts live guest threads (Limits.MaxThreads).
	threads atomic.Int64
	// loadavg is the load average (loadavg.go).
	loadavg loadAvg
	// keepAlive is set while hangLikeLinux runs (parallel mode).
	keepAlive atomic.Bool
	// ipc is the System V IPC namespace (sysv_ipc.go).
	ipc ipcNamespace
	// dbg is the debugger session (debug.go), nil without one; set
	// before Start.
	dbg *Debugger
	// stdio counts the guest's output for a debugger's replays
	// (debug_reverse.go).
	stdio stdioCount
	// stdioFiles are the open files newFDTable made for fds 0, 1 and 2
	// of the first process, and ckpt the checkpoints of a debugged
	// deterministic run (checkpoint.go; nil: none taken).
	stdioFiles [3]*openFile
	ckpt       *CheckpointLog
	// vdso is the vDSO's kernel side (vdso.go); nil with Options.NoVDSO.
	vdso *vdsoState
	// procfsBootID is /proc/sys/kernel/random/boot_id, drawn once
	// (procfsOnce).
	procfsOnce   sync.Once
	procfsBootID string
}

// NewKernel returns a kernel with the given options.
func NewKernel(opts Options) *Kernel {
	syscallTablesOnce.Do(buildSyscallTables)
	if opts.Stdin == nil {
		opts.Stdin = strings.NewReader("")
	}
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Random == nil {
		if opts.Deterministic {
			opts.Random = newSeededReader(opts.Seed)
		} else {
			opts.Random = rand.Reader
		}
	}
	if opts.Quantum <= 0 {
		opts.Quantum = DefaultQuantum
	}
	if opts.NsPerInsn <= 0 {
		opts.NsPerInsn = 1
	}
	if opts.Cwd == "" && opts.Chroot != "" {
		opts.Cwd = "/"
	}
	if opts.Cwd == "" {
		opts.Cwd, _ = os.Getwd()
	}
	k := &Kernel{opts: opts, log: opts.Log, nextPID: 1000, unimpl: map[string]int{}, namedCalls: map[string]uint64{}, start: time.Now()}
	k.acct = &vm.MemAccount{Limit: (opts.Limits.MemBytes + vm.PageMask) / vm.PageSize}
	k.fs = hostVFS{prefix: opts.Root, rec: opts.Record}
	if opts.Chroot != "" {
		if k.fs, k.fsErr = newRootVFS(opts.Chroot); k.fsErr != nil {
			k.fsErr = fmt.Errorf("--root: %w", k.fsErr)
		}
	}
	if len(opts.Binds) > 0 && k.fsErr == nil {
		k.fs, k.fsErr = newMountVFS(k.fs, opts.Binds)
	}
	if opts.Record != nil && (opts.Chroot != "" || opts.Root != "" || len(opts.Binds) > 0) {
		k.fsErr = errRecordConfined
	}
	if k.log == nil {
		k.log = opts.Stderr
	}
	k.futexes.init()
	k.trace = newTracer(opts.Trace, opts.TraceHash)
	if opts.Deterministic {
		k.det = newDetSched(opts.Quantum, opts.NsPerInsn, opts.Seed, opts.Chaos)
		k.det.deadlock = k.deadlocked
		if opts.Machine != nil {
			k.tm = newTimingState(k, opts.Machine)
			k.det.timed = true
		}
	}
	if opts.Profiler.Cycles() && k.tm == nil {
		panic("tasks: a cycle-clock guest profile needs Options.Deterministic and Options.Machine")
	}
	k.initVDSO()
	return k
}

// deadlocked runs when, in deterministic mode, every guest thread waits
// for something no thread can do (on Linux the program would hang
// forever). uvm reports it and kills the processes with SIGKILL.
func (k *Kernel) deadlocked() {
	k.logf("deadlock: every guest thread is blocked with no timeout; killing the guest")
	k.mu.Lock()
	groups := append([]*ThreadGroup(nil), k.groups...)
	k.mu.Unlock()
	for _, tg := range groups {
		tg.exitGroup(ExitStatus{Signal: sigKILL})
	}
}

// startTask starts a task's goroutine under the kernel's scheduler.
func (k *Kernel) startTask(t *Task) {
	if k.det != nil {
		k.det.add(t)
	} else {
		if k.keepAlive.CompareAndSwap(false, true) {
			go k.hangLikeLinux()
		}
	}
	go t.run()
}

// hangLikeLinux keeps a host timer pending while guest threads live in
// parallel mode. When every guest thread blocks forever (a futex wait
// nobody will wake, a read of a pipe whose writer also waits) Linux leaves
// the process hanging, killable from outside; without a pending timer Go's
// runtime would instead find every goroutine asleep and abort uvm with
// "fatal error: all goroutines are asleep". (The deterministic scheduler
// sees such a deadlock itself and reports it.)
func (k *Kernel) hangLikeLinux() {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for range tick.C {
		if k.threads.Load() != 0 {
			continue
		}
		k.keepAlive.Store(false) // a later startTask starts it again
		if k.threads.Load() == 0 || !k.keepAlive.CompareAndSwap(false, true) {
			return
		}
	}
}

// Deterministic reports whether the kernel runs the deterministic scheduler.
func (k *Kernel) Deterministic() bool { return k.det != nil }

func (k *Kernel) allocPID() int32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nextPID++
	return k.nextPID
}

func (k *Kernel) logf(format string, args ...any) {
	fmt.Fprintf(k.log, "uvm: "+format+"\n", args...)
}

// noteUnimplemented counts an unimplemented syscall or instruction and
// reports whether this is its first occurrence.
func (k *Kernel) noteUnimplemented(what string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.unimpl[what]++
	return k.unimpl[what] == 1
}

// ErrExec classifies start failures: the file could not be executed.
var ErrExec = errors.New("cannot execute")

// Start loads the program at path (a host path) and starts its first
// thread. argv[0] is what the guest sees as its name.
func (k *Kernel) Start(path string, argv []string) (*ThreadGroup, error) {
	t, err := k.load(path, argv)
	if err != nil {
		return nil, err
	}
	k.startTask(t)
	return t.tg, nil
}

// load creates the first process of path with its first thread, ready to
// run but not started.
func (k *Kernel) load(path string, argv []string) (*Task, error) {
	if k.fsErr != nil {
		return nil, k.fsErr
	}
	if err := k.netOptErr(); err != nil {
		return nil, err
	}
	var data []byte
	var err error
	abs, _ := filepath.Abs(path)
	name := abs
	if _, unconfined := k.fs.(hostVFS); unconfined {
		data, err = readProgramFile(path)
	} else {
		// Under --root the program is a guest path, inside the root.
		g := path
		if !strings.HasPrefix(g, "/") {
			g = filepath.Join(k.opts.Cwd, g)
		}
		data, err = readFileVFS(k.fs, g, maxExecutable)
		abs, name = k.fs.hostName(g), filepath.Clean(g)
	}
	if err != nil {
		return nil, err
	}
	mm := vm.NewMM()
	mm.Acct = k.acct
	mm.ExePath, mm.ExeName = abs, name
	spec := &vm.StackSpec{Argv: argv, Envp: k.opts.Env, ExecFn: path, UID: uint64(os.Getuid()), GID: uint64(os.Getgid())}
	li, _, err := k.loadImage(mm, abs, data, spec, nil)
	if err != nil {
		return nil, err
	}
	t := k.newProcess(mm, li.img, li.cpu, li.arch, argv)
	k.event("%d start %s pc=%#x sp=%#x", t.tid, li.img.Arch, li.img.Entry, li.sp)
	return t, nil
}

// newProcess makes the first process of the kernel around an address
// space, its image and a CPU: pid, session, limits, descriptor table,
// uprobes, and the first thread, ready to run but not started (Start
// hands it to the scheduler). The unit tests' fake CPU comes in here too.
func (k *Kernel) newProcess(mm *vm.MM, img *vm.Image, cpu vm.CPU, a *arch, argv []string) *Task {
	tg := &ThreadGroup{k: k, arch: a, mm: mm, img: img, done: make(chan struct{}), cwd: k.opts.Cwd, umask: 0o022,
		sighand: &signals.Sighand{}}
	tg.pid = k.allocPID()
	tg.cmdline = cmdline(argv)
	tg.environ = cmdline(k.opts.Env)
	tg.rlim = k.defaultRlimits()
	tg.fds = newFDTable(k)
	tg.fds.setLimit(tg.rlim[rlimitNofile].cur)
	tg.proc.pgid, tg.proc.sid = tg.pid, tg.pid
	k.registerProc(tg)
	if img != nil {
		tg.attachUprobes(img)
	}
	t := tg.newTask(cpu, tg.pid)
	tg.live.Add(1)
	k.mu.Lock()
	k.groups = append(k.groups, tg)
	k.mu.Unlock()
	return t
}

// Run starts the program and waits for it to exit.
func (k *Kernel) Run(path string, argv []string) (ExitStatus, error) {
	tg, err := k.Start(path, argv)
	if err != nil {
		return ExitStatus{}, err
	}
	return tg.Wait(), nil
}

// Stats returns syscall counts by name and unimplemented items seen.
func (k *Kernel) Stats() (syscalls map[string]uint64, unimplemented map[string]int) {
	syscalls = map[string]uint64{}
	for i := range k.syscalls {
		if n := k.syscalls[i].Load(); n != 0 {
			syscalls[sysno(i).String()] = n
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for name, n := range k.namedCalls {
		syscalls[name] = n
	}
	unimplemented = map[string]int{}
	for w, n := range k.unimpl {
		unimplemented[w] = n
	}
	return syscalls, unimplemented
}

// WriteStats prints the --stats report.
func (k *Kernel) WriteStats(w io.Writer, tgs ...*ThreadGroup) {
	sc, un := k.Stats()
	names := make([]string, 0, len(sc))
	for n := range sc {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "uvm stats:\n")
	for _, tg := range tgs {
		tg.mu.Lock()
		ids := make([]int, 0, len(tg.retired))
		for tid := range tg.retired {
			ids = append(ids, int(tid))
		}
		sort.Ints(ids)
		var total uint64
		for _, tid := range ids {
			n := tg.retired[int32(tid)]
			total += n
			fmt.Fprintf(w, "  thread %d: %d instructions retired\n", tid, n)
		}
		tg.mu.Unlock()
		fmt.Fprintf(w, "  process %d: %d instructions retired\n", tg.pid, total)
	}
	if k.det != nil {
		k.det.mu.Lock()
		switches, vclock := k.det.switches, k.det.vclock
		k.det.mu.Unlock()
		if len(tgs) > 0 {
			select {
			case <-tgs[0].done: // as the process ended, deterministically
				switches, vclock = tgs[0].detSwitches, tgs[0].detVclock
			default:
			}
		}
		fmt.Fprintf(w, "  context switches: %d\n  virtual time: %d ns\n", switches, vclock)
	}
	if k.opts.CacheModel != nil {
		k.opts.CacheModel.WriteStats(w)
	}
	fmt.Fprintf(w, "  syscalls:\n")
	for _, n := range names {
		fmt.Fprintf(w, "    %-20s %d\n", n, sc[n])
	}
	if fns, calls := k.vdsoCalls(); fns != nil {
		fmt.Fprintf(w, "  vdso calls:\n")
		for i, n := range fns {
			fmt.Fprintf(w, "    %-20s %d\n", n, calls[i])
		}
	}
	if len(un) > 0 {
		fmt.Fprintf(w, "  unimplemented:\n")
		keys := make([]string, 0, len(un))
		for n := range un {
			keys = append(keys, n)
		}
		sort.Strings(keys)
		for _, n := range keys {
			fmt.Fprintf(w, "    %-40s %d\n", n, un[n])
		}
	}
}

// cmdline encodes argv as /proc/PID/cmdline does.
func cmdline(argv []string) []byte {
	var b []byte
	for _, a := range argv {
		b = append(append(b, a...), 0)
	}
	return b
}
