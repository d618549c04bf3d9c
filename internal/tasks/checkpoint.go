package tasks

import (
	"encoding"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// Checkpoints of a deterministic run, for reverse execution
// (debug_reverse.go): instead of re-executing from the program's start,
// a re-execution starts from the nearest checkpoint before the point it
// goes to (Kernel.StartFrom).
//
// A checkpoint is the whole emulated system at the start of a
// deterministic slice, taken by the thread that holds the baton when the
// run has gone CheckpointLog.Interval instructions past the last one:
// every thread's registers (FP/SIMD and the exclusive monitor included)
// and retired count, the address space copied page by page
// (vm.MM.CopyAll: nothing of the running one changes, so its memory
// accounting is the same as without checkpoints), the descriptor
// table, the signal actions, masks, alternate stacks and pending
// queues, credentials, limits and the rest of the process's state, the
// deterministic scheduler (position, virtual clock, run-queue order),
// the randomness generator, the trace hash and the stdio counters.
//
// Only states it copies exactly are checkpointed; in any other the
// attempt is skipped (CheckpointLog.Skipped says why) and tried again at
// the next slice: another process (fork), a thread blocked in the kernel
// (its wait is Go state) or one that yielded anywhere but between two
// instructions, a timer, an armed interval timer or CPU limit, a
// deliverable signal, a MAP_SHARED mapping other than [vvar], the cache
// or timing model, the guest profiler, uprobes, chaos quanta, and descriptors other than the kernel's stdin, stdout and
// stderr and host regular files opened read-only (re-opened at their
// offset: their contents are read again).
//
// The log keeps the checkpoints of one run across its re-executions (any
// of its kernels adds to it) within MaxBytes: past it the oldest are
// dropped, and with them the start of the program: history then begins
// at the oldest checkpoint kept (Oldest).

// DefaultCheckpointInterval is uvm run's --checkpoint-interval default.
const DefaultCheckpointInterval = 5_000_000

// Checkpoint is a saved state of a deterministic run.
type Checkpoint struct {
	pos   uint64
	bytes int64
	// k is the kernel state, g the process's, ts its threads' (the
	// baton holder first, then the run queue in order).
	k  kernelSnap
	g  groupSnap
	ts []taskSnap
}

// Pos is the run's position at the checkpoint (instructions retired by
// every thread).
func (c *Checkpoint) Pos() uint64 { return c.pos }

// Tid is the thread about to run at the checkpoint.
func (c *Checkpoint) Tid() int32 { return c.ts[0].tid }

// Bytes is the memory the checkpoint holds (its pages, mostly).
func (c *Checkpoint) Bytes() int64 { return c.bytes }

type kernelSnap struct {
	nextPID    int32
	unimpl     map[string]int
	namedCalls map[string]uint64
	syscalls   []uint64
	trace      []byte // the trace hash's state (nil: none)
	random     []byte
	bootID     string
	written    [2]int64
	stdinNext  int
	acctUsed   int64
	vclock     int64
	switches   uint64
	seq        uint64
}

type groupSnap struct {
	arch     *arch
	mm       *vm.MM
	img      *vm.Image
	pid      int32
	cwd      string
	umask    uint32
	cmdline  []byte
	environ  []byte
	rlim     rlimits
	xcpuSent uint64
	retired  map[int32]uint64
	sighand  *signals.Sighand
	shared   signals.Pending
	pr       tgPrctl
	procfs   procfsState
	pgid     int32
	sid      int32
	itGen    uint64
	timerID  int32
	fds      []fdSnap
}

// fdSnap is one descriptor: file is the index of its open file in files
// (dup'ed descriptors share one).
type fdSnap struct {
	fd      int32
	cloexec bool
	file    *fileSnap
}

// fileSnap is an open file: one of the kernel's stdio files (stdio 0..2)
// or a host regular file opened read-only (host: an independent
// description of it; off: the offset).
type fileSnap struct {
	stdio int
	host  *os.File
	off   int64
	path  string
	flags int
}

type taskSnap struct {
	tid           int32
	cpu           vm.CPU
	clearChildTID uint64
	robustList    uint64
	pending       signals.Pending
	blocked       signals.SigSet
	alt           signals.StackT
	x86trap       x86Trap
	fault         vm.Exit
	credp         *cred
	sliceLeft     int64
	comm          string
	clean         bool
}

// CheckpointLog holds the checkpoints of one run.
type CheckpointLog struct {
	interval uint64
	maxBytes int64

	mu  sync.Mutex
	cps []*Checkpoint // by position (protected by mu)
	// bytes is what cps hold; furthest the highest position ever
	// checkpointed (protected by mu).
	bytes    int64
	furthest uint64
	// startGone: a checkpoint was dropped, so the program's start is
	// no longer part of the history (protected by mu).
	startGone bool
	// skipped is why the last attempt took no checkpoint, at skipPos
	// (protected by mu).
	skipped string
	skipPos uint64
}

// NewCheckpointLog returns an empty log for checkpoints every interval
// instructions holding at most maxBytes (0: no bound).
func NewCheckpointLog(interval uint64, maxBytes int64) *CheckpointLog {
	return &CheckpointLog{interval: max(interval, 1), maxBytes: maxBytes}
}

// RecordCheckpoints makes the kernel add checkpoints to log (before it
// starts; deterministic kernels only).
func (k *Kernel) RecordCheckpoints(log *CheckpointLog) {
	if k.det != nil {
		k.ckpt = log
	}
}

// Before returns the checkpoints at or before pos, newest first.
func (l *CheckpointLog) Before(pos uint64) []*Checkpoint {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*Checkpoint
	for i := len(l.cps) - 1; i >= 0; i-- {
		if l.cps[i].pos <= pos {
			out = append(out, l.cps[i])
		}
	}
	return out
}

// StartKept reports whether the program's start is still part of the
// history (no checkpoint was dropped for the memory bound).
func (l *CheckpointLog) StartKept() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.startGone
}

// Stats returns the number of checkpoints held and their bytes.
func (l *CheckpointLog) Stats() (n int, bytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.cps), l.bytes
}

// Skipped says why the last checkpoint attempt failed and where ("": the
// last one did not).
func (l *CheckpointLog) Skipped() (why string, pos uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skipped, l.skipPos
}

// due reports whether a checkpoint at pos is wanted.
func (l *CheckpointLog) due(pos uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return pos >= l.furthest+l.interval
}

func (l *CheckpointLog) skip(pos uint64, why string) {
	l.mu.Lock()
	l.skipped, l.skipPos = why, pos
	l.mu.Unlock()
}

// add keeps c, dropping the oldest checkpoints past the bound.
func (l *CheckpointLog) add(c *Checkpoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.pos < l.furthest+l.interval {
		return // another kernel of the run took it meanwhile
	}
	l.furthest = c.pos
	l.skipped = ""
	if l.maxBytes > 0 && c.bytes > l.maxBytes {
		l.skipped, l.skipPos = fmt.Sprintf("a checkpoint needs %d bytes, more than the bound", c.bytes), c.pos
		return
	}
	l.cps = append(l.cps, c)
	l.bytes += c.bytes
	for l.maxBytes > 0 && l.bytes > l.maxBytes {
		l.bytes -= l.cps[0].bytes
		l.cps[0] = nil
		l.cps = l.cps[1:]
		l.startGone = true
	}
}

// maybeCheckpoint is the run loop's hook at the start of a slice of t
// (which holds the baton, between two instructions, with no signal to
// deliver): it checkpoints the system when one is due.
func (t *Task) maybeCheckpoint() {
	k := t.tg.k
	pos := k.det.retired.Load()
	if !k.ckpt.due(pos) {
		return
	}
	c, err := k.checkpoint(t, pos)
	if err != nil {
		k.ckpt.skip(pos, err.Error())
		return
	}
	k.ckpt.add(c)
}

// checkpoint copies the system at pos (t holds the baton at a slice
// start).
func (k *Kernel) checkpoint(t *Task, pos uint64) (*Checkpoint, error) {
	o := &k.opts
	switch {
	case k.det.chaos != nil:
		return nil, errors.New("--chaos")
	case k.tm != nil || o.CacheModel != nil || o.Profiler != nil || o.TraceInsn != nil || o.Uprobes != nil:
		return nil, errors.New("a model, profiler or probe is on")
	}
	k.mu.Lock()
	groups := len(k.groups)
	k.mu.Unlock()
	tg := t.tg
	if groups != 1 {
		return nil, errors.New("more than one process")
	}
	s := k.det
	s.mu.Lock()
	ok := s.current == t && len(s.blocked) == 0 && len(s.timers) == 0
	runq := append([]*Task(nil), s.runq...)
	vclock, switches, seq := s.vclock, s.switches, s.seq
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("a thread blocked in the kernel, or a timer")
	}
	c := &Checkpoint{pos: pos}
	tg.mu.Lock()
	if tg.exiting || len(tg.tasks) != 1+len(runq) || tg.rlim[rlimitCPU].cur != rlimInfinity || tg.itimer.deadline != 0 {
		tg.mu.Unlock()
		return nil, errors.New("an exiting process, a thread outside the run queue, a CPU limit or an interval timer")
	}
	g := &c.g
	*g = groupSnap{arch: tg.arch, img: tg.img, pid: tg.pid, cwd: tg.cwd, umask: tg.umask, cmdline: tg.cmdline,
		environ: tg.environ, rlim: tg.rlim, xcpuSent: tg.xcpuSent, pr: tg.pr, procfs: tg.procfs, itGen: tg.itimer.gen,
		retired: make(map[int32]uint64, len(tg.retired))}
	for tid, n := range tg.retired {
		g.retired[tid] = n
	}
	tg.mu.Unlock()
	if tg.umm != nil || tg.jobctl.isStopped() || tg.proc.vforkDone != nil {
		return nil, errors.New("uprobes or a stopped or vfork process")
	}
	k.procMu.Lock()
	g.pgid, g.sid = tg.proc.pgid, tg.proc.sid
	children := len(tg.proc.children)
	k.procMu.Unlock()
	if children != 0 {
		return nil, errors.New("child processes")
	}
	tg.timers.mu.Lock()
	timers := len(tg.timers.posix) != 0 || tg.timers.cpuArmed.Load() != 0
	g.timerID = tg.timers.nextID
	tg.timers.mu.Unlock()
	if timers {
		return nil, errors.New("a POSIX or CPU-time timer")
	}
	all := append([]*Task{t}, runq...)
	for _, ot := range all {
		if ot.tg != tg {
			return nil, errors.New("more than one process")
		}
		ts, err := ot.snapshot(ot == t)
		if err != nil {
			return nil, err
		}
		c.ts = append(c.ts, ts)
	}
	tg.sighand.Siglock.Lock()
	g.sighand = tg.sighand.Clone()
	g.shared = tg.shared.Clone()
	for i, ot := range all {
		c.ts[i].pending = ot.pending.Clone()
		c.ts[i].blocked = ot.blocked
	}
	tg.sighand.Siglock.Unlock()
	var err error
	if g.fds, err = k.snapshotFDs(tg.fds); err != nil {
		return nil, err
	}
	if k.acct.Used() != tg.mm.RSS() {
		return nil, errors.New("memory charged outside the address space")
	}
	vvar := k.vvarObject()
	mm, err := tg.mm.CopyAll(nil, func(o *vm.SharedObject) *vm.SharedObject {
		if o == vvar {
			return o
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("address space: %w", err)
	}
	g.mm = mm
	for i, ot := range all {
		c.ts[i].cpu = cloneExact(ot.cpu, mm)
	}
	c.bytes = mm.RSS()*vm.PageSize + int64(len(c.ts))*4096
	ks := &c.k
	k.mu.Lock()
	ks.nextPID = k.nextPID
	ks.unimpl = make(map[string]int, len(k.unimpl))
	for n, v := range k.unimpl {
		ks.unimpl[n] = v
	}
	ks.namedCalls = make(map[string]uint64, len(k.namedCalls))
	for n, v := range k.namedCalls {
		ks.namedCalls[n] = v
	}
	if k.trace.h != nil {
		ks.trace, err = k.trace.h.(encoding.BinaryMarshaler).MarshalBinary()
	}
	k.mu.Unlock()
	if err != nil {
		return nil, err
	}
	ks.syscalls = make([]uint64, len(k.syscalls))
	for i := range k.syscalls {
		ks.syscalls[i] = k.syscalls[i].Load()
	}
	m, ok := k.opts.Random.(encoding.BinaryMarshaler)
	if !ok {
		return nil, errors.New("a randomness source that cannot be saved")
	}
	if ks.random, err = m.MarshalBinary(); err != nil {
		return nil, err
	}
	ks.bootID = k.procfsBootID
	k.stdio.mu.Lock()
	ks.written = k.stdio.written
	k.stdio.mu.Unlock()
	if in := k.stdio.in; in != nil {
		in.mu.Lock()
		ks.stdinNext = k.stdio.next
		in.mu.Unlock()
	}
	ks.acctUsed = k.acct.Used()
	ks.vclock, ks.switches, ks.seq = vclock, switches, seq
	return c, nil
}

// cloneExact copies a CPU with everything the thread keeps across slices.
func cloneExact(c vm.CPU, mm *vm.MM) vm.CPU {
	switch c := c.(type) {
	case *arm64.CPU:
		return c.CloneExact(mm)
	case *amd64.CPU:
		return c.CloneExact(mm)
	}
	panic(fmt.Sprintf("tasks: checkpoint of an unknown CPU %T", c))
}

// snapshot copies t's own state (cur: t holds the baton at a slice
// start; else it waits in the run queue).
func (t *Task) snapshot(cur bool) (taskSnap, error) {
	switch {
	case !cur && !t.detClean:
		return taskSnap{}, errors.New("a thread yielded inside the kernel")
	case t.flags.Load() != 0 || t.savedBlocked != nil || t.restartBlock != nil || t.killed.Load():
		return taskSnap{}, errors.New("a thread with work pending in the kernel")
	case t.utask != nil || t.vc != nil || t.execMM != nil || t.x86TrapFlags():
		return taskSnap{}, errors.New("a probed, traced or exec'ing thread")
	}
	t.tg.mu.Lock()
	comm := t.comm
	t.tg.mu.Unlock()
	return taskSnap{tid: t.tid, clearChildTID: t.clearChildTID, robustList: t.robustList, alt: t.alt,
		x86trap: t.x86trap, fault: t.fault, credp: t.credp.Load(), sliceLeft: t.sliceLeft, comm: comm, clean: t.detClean}, nil
}

// vvarObject is the kernel's [vvar] page object (nil without a vDSO).
func (k *Kernel) vvarObject() *vm.SharedObject {
	if k.vdso == nil {
		return nil
	}
	return k.vdso.vvar
}

// snapshotFDs copies a descriptor table of stdio files and read-only
// host regular files.
func (k *Kernel) snapshotFDs(t *fdTable) ([]fdSnap, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	files := map[*openFile]*fileSnap{}
	var out []fdSnap
	for fd, e := range t.fds {
		fs := files[e.f]
		if fs == nil {
			var err error
			if fs, err = k.snapshotFile(e.f); err != nil {
				return nil, err
			}
			files[e.f] = fs
		}
		out = append(out, fdSnap{fd: fd, cloexec: e.cloexec, file: fs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].fd < out[j].fd })
	return out, nil
}

func (k *Kernel) snapshotFile(f *openFile) (*fileSnap, error) {
	if f.flockKey != nil || f.plockKey.Load() != nil && k.plocks.any() || f.dirents != nil {
		return nil, fmt.Errorf("descriptor of %s: locked or being listed", f.path)
	}
	for i, s := range k.stdioFiles {
		if s == f {
			return &fileSnap{stdio: i}, nil
		}
	}
	h, ok := f.ops.(*hostFile)
	if !ok || f.flags&oACCMODE != oRDONLY {
		return nil, fmt.Errorf("descriptor of %s: a kind of file not checkpointed", f.path)
	}
	fi, err := h.f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("descriptor of %s: not a regular file", f.path)
	}
	off, err := h.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("descriptor of %s: %v", f.path, err)
	}
	dup, err := reopenHost(h.f)
	if err != nil {
		return nil, fmt.Errorf("descriptor of %s: %v", f.path, err)
	}
	return &fileSnap{stdio: -1, host: dup, off: off, path: f.path, flags: f.flags}, nil
}

// reopenHost opens a new, independent description of the host file f
// (Linux: through /proc/self/fd).
func reopenHost(f *os.File) (*os.File, error) {
	n, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return nil, err
	}
	a, err1 := f.Stat()
	b, err2 := n.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		n.Close()
		return nil, errors.New("the file could not be opened again")
	}
	return n, nil
}

// StartFrom starts the run in k (a fresh kernel with the options of the
// one that took c, not started) from checkpoint c instead of the
// program's start. A debugger made for k beforehand sees its process.
func (k *Kernel) StartFrom(c *Checkpoint) (*ThreadGroup, error) {
	if k.det == nil {
		return nil, errors.New("tasks: a checkpoint needs a deterministic kernel")
	}
	if k.fsErr != nil {
		return nil, k.fsErr
	}
	g := &c.g
	vvar := k.vvarObject()
	mm, err := g.mm.CopyAll(k.acct, func(o *vm.SharedObject) *vm.SharedObject { return vvar })
	if err != nil {
		return nil, fmt.Errorf("reverse execution: restoring a checkpoint: %v", err)
	}
	fds, err := k.restoreFDs(g.fds)
	if err != nil {
		return nil, fmt.Errorf("reverse execution: restoring a checkpoint: %v", err)
	}
	tg := &ThreadGroup{k: k, arch: g.arch, mm: mm, img: g.img, done: make(chan struct{}), cwd: g.cwd, umask: g.umask,
		cmdline: g.cmdline, environ: g.environ, rlim: g.rlim, xcpuSent: g.xcpuSent, pr: g.pr, pid: g.pid,
		sighand: g.sighand.Clone(), shared: g.shared.Clone(), fds: fds}
	tg.fds.setLimit(tg.rlim[rlimitNofile].cur)
	tg.itimer.gen = g.itGen
	tg.timers.nextID = g.timerID
	tg.proc.pgid, tg.proc.sid = g.pgid, g.sid
	k.registerProc(tg)
	tg.procfs = g.procfs
	ks := &c.k
	k.mu.Lock()
	k.groups = append(k.groups, tg)
	k.nextPID = ks.nextPID
	for n, v := range ks.unimpl {
		k.unimpl[n] = v
	}
	for n, v := range ks.namedCalls {
		k.namedCalls[n] = v
	}
	if k.trace.h != nil && ks.trace != nil {
		err = k.trace.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(ks.trace)
	}
	k.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for i := range ks.syscalls {
		k.syscalls[i].Store(ks.syscalls[i])
	}
	u, ok := k.opts.Random.(encoding.BinaryUnmarshaler)
	if !ok {
		return nil, errors.New("reverse execution: the randomness source cannot be restored")
	}
	if err := u.UnmarshalBinary(ks.random); err != nil {
		return nil, err
	}
	if ks.bootID != "" {
		k.procfsOnce.Do(func() { k.procfsBootID = ks.bootID })
	}
	k.stdio.mu.Lock()
	k.stdio.written = ks.written
	k.stdio.mu.Unlock()
	if in := k.stdio.in; in != nil {
		in.mu.Lock()
		k.stdio.next = ks.stdinNext
		in.mu.Unlock()
	}
	var ts []*Task
	for i := range c.ts {
		s := &c.ts[i]
		t := tg.newTask(cloneExact(s.cpu, mm), s.tid)
		t.clearChildTID, t.robustList = s.clearChildTID, s.robustList
		t.pending, t.blocked, t.alt = s.pending.Clone(), s.blocked, s.alt
		t.x86trap, t.fault, t.sliceLeft, t.comm, t.detClean = s.x86trap, s.fault, s.sliceLeft, s.comm, s.clean
		t.credp.Store(s.credp)
		tg.live.Add(1)
		ts = append(ts, t)
	}
	if tg.retired == nil {
		tg.retired = map[int32]uint64{}
	}
	for tid, n := range g.retired {
		tg.retired[tid] = n
	}
	if k.acct.Used() != ks.acctUsed {
		return nil, fmt.Errorf("reverse execution: restoring a checkpoint: %d pages charged, %d at the checkpoint", k.acct.Used(), ks.acctUsed)
	}
	s := k.det
	s.mu.Lock()
	s.vclock, s.switches, s.seq = ks.vclock, ks.switches, ks.seq
	s.retired.Store(c.pos)
	s.current = ts[0]
	s.runq = append(s.runq, ts[1:]...)
	s.mu.Unlock()
	ts[0].baton <- struct{}{}
	for _, t := range ts {
		go t.run()
	}
	return tg, nil
}

// restoreFDs builds the descriptor table of a checkpoint.
func (k *Kernel) restoreFDs(snap []fdSnap) (*fdTable, error) {
	t := &fdTable{fds: map[int32]fdEntry{}, k: k}
	std := newFDTable(k) // the kernel's own stdio files
	files := map[*fileSnap]*openFile{}
	for _, e := range snap {
		f := files[e.file]
		if f == nil {
			if e.file.stdio >= 0 {
				f = std.fds[int32(e.file.stdio)].f
			} else {
				h, err := reopenHost(e.file.host)
				if err != nil {
					return nil, err
				}
				if _, err := h.Seek(e.file.off, io.SeekStart); err != nil {
					h.Close()
					return nil, err
				}
				f = &openFile{ops: &hostFile{f: h}, path: e.file.path, flags: e.file.flags}
			}
			files[e.file] = f
		}
		t.install(e.fd, f, e.cloexec)
	}
	return t, nil
}
