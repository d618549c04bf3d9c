package tasks

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/uprobes"
)

// The process model: fork/vfork/clone of processes, execve, exit
// notification (SIGCHLD, zombies, reparenting) and wait4/waitid.
//
// Lock order: Kernel.procMu → ThreadGroup.mu → fdTable.mu. procMu protects
// the process tree (procs, every group's parent, children, zombie state,
// pgid and sid).

// procState is a ThreadGroup's place in the process tree (protected by
// Kernel.procMu).
type procState struct {
	parent   *ThreadGroup
	children []*ThreadGroup
	zombie   bool
	// exitSignal is sent to the parent at exit (SIGCHLD for fork; 0 for
	// none), from clone's low byte.
	exitSignal signals.Signal
	pgid, sid  int32
	// childEvent is closed and replaced when a child changes state.
	childEvent chan struct{}
	// vforkDone is closed when a vfork child execs or exits.
	vforkDone chan struct{}
	vforkOnce sync.Once
}

func (k *Kernel) registerProc(tg *ThreadGroup) {
	k.procMu.Lock()
	defer k.procMu.Unlock()
	if k.procs == nil {
		k.procs = map[int32]*ThreadGroup{}
	}
	tg.procfs.startNs = k.uptimeNs() // before tg is visible in procs
	if p := tg.proc.parent; p != nil {
		p.mu.Lock()
		tg.procfs.oomScoreAdj = p.procfs.oomScoreAdj
		p.mu.Unlock()
	}
	k.procs[tg.pid] = tg
	if tg.proc.childEvent == nil {
		tg.proc.childEvent = make(chan struct{})
	}
	if p := tg.proc.parent; p != nil {
		p.proc.children = append(p.proc.children, tg)
	}
}

// releaseVfork lets a vfork parent continue (child exec'd or exited).
func (tg *ThreadGroup) releaseVfork() {
	if tg.proc.vforkDone != nil {
		tg.proc.vforkOnce.Do(func() { close(tg.proc.vforkDone) })
	}
}

// mayFork applies RLIMIT_NPROC (every process counts, zombies too, as
// for one user in Linux) and the thread cap.
func (k *Kernel) mayFork(tg *ThreadGroup) bool {
	lim := tg.rlimit(rlimitNproc)
	k.procMu.Lock()
	n := uint64(len(k.procs))
	k.procMu.Unlock()
	return n < lim && k.mayClone()
}

// mayClone applies Limits.MaxThreads.
func (k *Kernel) mayClone() bool {
	m := k.opts.Limits.MaxThreads
	return m <= 0 || k.threads.Load() < int64(m)
}

// forkProcess creates a child process (clone without CLONE_THREAD).
func (t *Task) forkProcess(flags, stack, ptid, tls, ctid uint64) uint64 {
	tg, k := t.tg, t.tg.k
	if flags&cloneThread != 0 || flags&cloneSighand != 0 && flags&cloneVM == 0 {
		return errRet(EINVAL)
	}
	if flags&cloneNewAny != 0 {
		return t.cloneNamespaces(flags)
	}
	if !k.mayFork(tg) {
		return errRet(EAGAIN)
	}
	mm := tg.mm
	var umm *uprobes.MM
	childPid := k.allocPID()
	if flags&cloneVM == 0 {
		if tg.umm != nil {
			var err error
			umm, err = tg.umm.Fork(childPid, func() (uprobes.AddrSpace, error) {
				var err error
				if mm, err = tg.mm.Fork(); err != nil {
					return nil, err
				}
				return &uAddrSpace{mm: mm, k: k}, nil
			})
			if err != nil {
				if mm != tg.mm {
					mm.Release() // its pages stay only the parent's
				}
				return errRet(ENOMEM)
			}
		} else {
			var err error
			if mm, err = tg.mm.Fork(); err != nil {
				return errRet(ENOMEM)
			}
		}
	} else {
		umm = tg.umm
		mm.AddUser()
	}
	cpu := t.cpu.Clone(mm)
	cpu.SetReg(tg.arch.ret, 0)
	if stack != 0 {
		cpu.SetSP(stack)
	}
	if flags&cloneSettls != 0 {
		cpu.SetTLS(tls)
	}
	tg.mu.Lock()
	child := &ThreadGroup{k: k, arch: tg.arch, mm: mm, img: tg.img, done: make(chan struct{}),
		cwd: tg.cwd, cwdDir: tg.cwdDir, umask: tg.umask, cmdline: tg.cmdline, environ: tg.environ, rlim: tg.rlim}
	tg.mu.Unlock()
	child.pid = childPid
	child.umm = umm
	if flags&cloneSighand != 0 {
		child.sighand = tg.sighand
	} else {
		tg.sighand.Siglock.Lock()
		child.sighand = tg.sighand.Clone()
		tg.sighand.Siglock.Unlock()
	}
	if flags&cloneFiles != 0 {
		child.fds = tg.fds
	} else {
		child.fds = tg.fds.fork()
	}
	child.fds.setLimit(child.rlim[rlimitNofile].cur)
	k.procMu.Lock()
	child.proc.parent = tg
	child.proc.exitSignal = signals.Signal(flags & 0xff)
	child.proc.pgid, child.proc.sid = tg.proc.pgid, tg.proc.sid
	k.procMu.Unlock()
	if flags&cloneVfork != 0 {
		child.proc.vforkDone = make(chan struct{})
	}
	k.registerProc(child)
	k.mu.Lock()
	k.groups = append(k.groups, child)
	k.mu.Unlock()

	nt := child.newTask(cpu, child.pid)
	nt.inheritCreds(t)
	nt.blocked = t.blocked
	nt.alt = t.alt
	nt.comm = t.comm
	if t.utask != nil && nt.utask != nil {
		t.utask.CopyProcess(nt.utask, flags&cloneVfork != 0)
		nt.forkChild = flags&cloneVM == 0
	}
	if flags&cloneParentSettid != 0 {
		t.putU32(ptid, uint32(child.pid))
	}
	if flags&cloneChildSettid != 0 {
		nt.putU32(ctid, uint32(child.pid))
	}
	if flags&cloneChildCleartid != 0 {
		nt.clearChildTID = ctid
	}
	child.live.Add(1)
	k.event("%d fork flags=%#x child=%d", t.tid, flags, child.pid)
	if k.dbg != nil {
		t.holdChild(child, flags) // debug_follow.go
	}
	k.startTask(nt)
	if flags&cloneVfork != 0 {
		vforkEvent := k.dbg != nil && t.debugVfork(child) // debug_follow.go
		done := child.proc.vforkDone
		closed := func() bool {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}
		// Linux's vfork wait is killable only; other signals wait for the
		// child like the parent does.
		t.waitKillable(closed, func() <-chan struct{} { return done }, -1)
		if k.dbg != nil {
			t.debugVforkDone(child, vforkEvent) // debug_follow.go
		}
	}
	return uint64(child.pid)
}

// groupExited runs when the last thread of tg has exited: tg becomes a
// zombie for its parent (or is reaped at once when the parent ignores
// SIGCHLD or there is none), its children go to the first process, and
// the parent gets its exit signal.
func (tg *ThreadGroup) groupExited() {
	k := tg.k
	tg.releaseVfork()
	tg.mu.Lock()
	st := tg.status
	tg.mu.Unlock()
	k.procMu.Lock()
	kids := append([]*ThreadGroup(nil), tg.proc.children...)
	k.procMu.Unlock()
	tg.ptraceTracerExited(kids) // ptrace.go: detach (or kill) its tracees
	k.procMu.Lock()
	parent := tg.proc.parent
	var init *ThreadGroup
	if len(k.groups) > 0 {
		init = k.groups[0]
	}
	orphans := tg.proc.children
	for _, c := range tg.proc.children {
		if r := tg.reaperLocked(init); r != nil {
			c.proc.parent = r
			r.proc.children = append(r.proc.children, c)
			close(r.proc.childEvent)
			r.proc.childEvent = make(chan struct{})
		} else {
			c.proc.parent = nil
		}
	}
	tg.proc.children = nil
	tg.proc.zombie = true
	if parent != nil {
		close(parent.proc.childEvent)
		parent.proc.childEvent = make(chan struct{})
	}
	sig := tg.proc.exitSignal
	k.procMu.Unlock()
	sendPdeathSignals(orphans)
	if parent == nil || sig == 0 {
		return
	}
	code, status := int32(signals.CLD_EXITED), int32(st.Code)
	if st.Signal != 0 {
		code, status = signals.CLD_KILLED, int32(st.Signal)
		if st.Core {
			code = signals.CLD_DUMPED
		}
	}
	info := signals.SigInfo{Signo: int32(sig), Code: code, Pid: tg.pid, UID: k.uid(), Status: status}
	parent.sendSignal(info, nil)
}

// waitStatus encodes an exit status as wait4 reports it.
func waitStatus(st ExitStatus) uint32 {
	if st.Signal != 0 {
		s := uint32(st.Signal)
		if st.Core {
			s |= 0x80
		}
		return s
	}
	return uint32(st.Code&0xff) << 8
}

const (
	wNOHANG   = 1
	wUNTRACED = 2
	wEXITED   = 4
	wNOWAIT   = 0x01000000
)

// findChild looks for a child matching pid (wait4 semantics) and returns
// a zombie if there is one (or, with untraced, a stopped child whose stop
// was not reported yet), and whether any child matches at all.
func (tg *ThreadGroup) findChild(pid int32, untraced bool) (zombie *ThreadGroup, any bool) {
	for _, c := range tg.proc.children {
		match := pid == -1 || pid > 0 && c.pid == pid || pid == 0 && c.proc.pgid == tg.proc.pgid || pid < -1 && c.proc.pgid == -pid
		if !match {
			continue
		}
		any = true
		if c.proc.zombie && zombie == nil {
			zombie = c
		}
		if zombie == nil && c.ptraceStoppedFor(tg) != nil {
			zombie = c // a ptrace-stop, reported without WUNTRACED
		}
		if untraced && zombie == nil && c.jobctl.stoppedUnreported() {
			zombie = c
		}
	}
	return zombie, any
}

func (g *groupStop) stoppedUnreported() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopped && !g.reported
}

// reap removes a zombie child from the tree.
func (tg *ThreadGroup) reapLocked(c *ThreadGroup) {
	out := tg.proc.children[:0]
	for _, x := range tg.proc.children {
		if x != c {
			out = append(out, x)
		}
	}
	tg.proc.children = out
	delete(tg.k.procs, c.pid)
	tg.addChildUsage(c)
	// A reaped process leaves nothing behind in the kernel.
	k := tg.k
	k.mu.Lock()
	for i, g := range k.groups {
		if g == c && i > 0 {
			k.groups = append(k.groups[:i], k.groups[i+1:]...)
			break
		}
	}
	k.mu.Unlock()
}

// waitChild blocks until a matching child is a zombie (or WNOHANG), and
// returns it (reaped unless keep).
func (t *Task) waitChild(pid int32, options uint64, keep bool) (*ThreadGroup, Errno) {
	tg, k := t.tg, t.tg.k
	for {
		k.procMu.Lock()
		z, any := tg.findChild(pid, options&wUNTRACED != 0)
		if z != nil && !keep && z.proc.zombie && z.ptraceStoppedFor(tg) == nil {
			tg.reapLocked(z)
		}
		ev := tg.proc.childEvent
		k.procMu.Unlock()
		switch {
		case z != nil:
			return z, 0
		case !any:
			return nil, ECHILD
		case options&wNOHANG != 0:
			return nil, 0
		}
		ready := func() bool {
			k.procMu.Lock()
			defer k.procMu.Unlock()
			z, _ := tg.findChild(pid, options&wUNTRACED != 0)
			return z != nil
		}
		t.wait(ready, func() <-chan struct{} { return ev }, -1)
		if t.killed.Load() {
			return nil, EINTR
		}
		if t.sigPending() && !ready() {
			return nil, Errno(erestartsys)
		}
	}
}

func (t *Task) sysWait4(pid int32, statusAddr, options, rusage uint64) uint64 {
	if options&^uint64(wNOHANG|wUNTRACED|0x40000000|0x80000000|0x20000000|8) != 0 {
		return errRet(EINVAL)
	}
	z, e := t.waitChild(pid, options, false)
	if e != 0 {
		return errRet(e)
	}
	if z == nil {
		return 0
	}
	z.mu.Lock()
	st := z.status
	z.mu.Unlock()
	status := waitStatus(st)
	if o := z.ptraceStoppedFor(t.tg); o != nil {
		// A tracee's ptrace-stop: its thread id and stop status.
		status = o.ptraceReport(false)
		if statusAddr != 0 {
			if e := t.putU32(statusAddr, status); e != 0 {
				return errRet(e)
			}
		}
		t.tg.k.event("%d wait4 %d ptrace status=%#x", t.tid, o.tid, status)
		return uint64(o.tid)
	}
	if !z.proc.zombie {
		// A stopped child (WUNTRACED): 0x7f | sig<<8, reported once.
		z.jobctl.mu.Lock()
		status = 0x7f | uint32(z.jobctl.sig)<<8
		z.jobctl.reported = true
		z.jobctl.mu.Unlock()
	}
	if statusAddr != 0 {
		if e := t.putU32(statusAddr, status); e != 0 {
			return errRet(e)
		}
	}
	if rusage != 0 {
		t.writeBytes(rusage, z.totalUsage().encode())
	}
	t.tg.k.event("%d wait4 %d status=%#x", t.tid, z.pid, status)
	return uint64(z.pid)
}

func (t *Task) sysWaitid(idtype uint64, id int32, infop, options uint64) uint64 {
	var pid int32
	switch idtype {
	case 0: // P_ALL
		pid = -1
	case 1: // P_PID
		pid = id
	case 2: // P_PGID
		pid = -id
		if id == 0 {
			pid = 0
		}
	case 3: // P_PIDFD
		var e Errno
		if pid, e = t.pidfdTarget(id); e != 0 {
			return errRet(e)
		}
	default:
		return errRet(EINVAL)
	}
	if options&wEXITED == 0 {
		return errRet(EINVAL)
	}
	z, e := t.waitChild(pid, options, options&wNOWAIT != 0)
	if e != 0 {
		return errRet(e)
	}
	var info signals.SigInfo
	if o := ptraceStoppedIn(z, t.tg); o != nil {
		// A tracee's ptrace-stop: CLD_TRAPPED with the stop signal.
		status := o.ptraceReport(options&wNOWAIT != 0)
		info = signals.SigInfo{Signo: int32(signals.SIGCHLD), Code: signals.CLD_TRAPPED, Pid: o.tid, UID: t.tg.k.uid(), Status: int32(status>>8) & 0xff}
	} else if z != nil {
		z.mu.Lock()
		st := z.status
		z.mu.Unlock()
		info = signals.SigInfo{Signo: int32(signals.SIGCHLD), Code: signals.CLD_EXITED, Pid: z.pid, UID: t.tg.k.uid(), Status: int32(st.Code)}
		if st.Signal != 0 {
			info.Code, info.Status = signals.CLD_KILLED, int32(st.Signal)
			if st.Core {
				info.Code = signals.CLD_DUMPED
			}
		}
	}
	if infop != 0 {
		b := info.Marshal()
		if z == nil {
			b = [signals.SigInfoSize]byte{}
		}
		if e := t.writeBytes(infop, b[:]); e != 0 {
			return errRet(e)
		}
	}
	return 0
}

// sysKill implements kill(2)'s targets: a process, the caller's process
// group (0), every process but init (-1), or a process group (< -1).
func (t *Task) sysKill(pid int32, sig int) uint64 {
	if sig < 0 || sig > nSig {
		return errRet(EINVAL)
	}
	k := t.tg.k
	k.procMu.Lock()
	var targets []*ThreadGroup
	for _, p := range k.procs {
		if p.proc.zombie {
			continue
		}
		switch {
		case pid > 0 && p.pid == pid,
			pid == 0 && p.proc.pgid == t.tg.proc.pgid,
			pid == -1 && p.pid != k.groups[0].pid && p != t.tg,
			pid < -1 && p.proc.pgid == -pid:
			targets = append(targets, p)
		}
	}
	k.procMu.Unlock()
	if pid == -1 {
		targets = append(targets, t.tg)
	}
	if len(targets) == 0 {
		return errRet(ESRCH)
	}
	if sig == 0 {
		return 0
	}
	sortGroups(targets)
	for _, p := range targets {
		p.sendSignal(signals.KillInfo(signals.Signal(sig), signals.SI_USER, t.tg.pid, k.uid()), nil)
	}
	return 0
}

func sortGroups(g []*ThreadGroup) {
	for i := 1; i < len(g); i++ {
		for j := i; j > 0 && g[j].pid < g[j-1].pid; j-- {
			g[j], g[j-1] = g[j-1], g[j]
		}
	}
}

func (t *Task) sysSetpgid(pid, pgid int32) uint64 {
	k := t.tg.k
	k.procMu.Lock()
	defer k.procMu.Unlock()
	target := t.tg
	if pid != 0 && pid != t.tg.pid {
		target = nil
		for _, c := range t.tg.proc.children {
			if c.pid == pid {
				target = c
			}
		}
		if target == nil {
			return errRet(ESRCH)
		}
	}
	if pgid == 0 {
		pgid = target.pid
	}
	if pgid < 0 {
		return errRet(EINVAL)
	}
	target.proc.pgid = pgid
	return 0
}

func (t *Task) procIDs(pid int32) (pgid, sid int32, e Errno) {
	k := t.tg.k
	k.procMu.Lock()
	defer k.procMu.Unlock()
	p := t.tg
	if pid != 0 {
		p = k.procs[pid]
		if p == nil {
			return 0, 0, ESRCH
		}
	}
	return p.proc.pgid, p.proc.sid, 0
}

func (t *Task) sysSetsid() uint64 {
	k := t.tg.k
	k.procMu.Lock()
	defer k.procMu.Unlock()
	if t.tg.proc.pgid == t.tg.pid {
		return errRet(EPERM)
	}
	t.tg.proc.pgid, t.tg.proc.sid = t.tg.pid, t.tg.pid
	return uint64(t.tg.pid)
}

// readStrings reads a NULL-terminated array of string pointers (argv).
func (t *Task) readStrings(addr uint64) ([]string, Errno) {
	var out []string
	if addr == 0 {
		return nil, 0
	}
	total := 0
	for i := 0; ; i++ {
		if i > 1<<16 {
			return nil, E2BIG
		}
		p, e := t.getU64(addr + uint64(i)*8)
		if e != 0 {
			return nil, e
		}
		if p == 0 {
			return out, 0
		}
		s, err := t.tg.mm.ReadString(p, 1<<17)
		if err != nil {
			return nil, EFAULT
		}
		total += len(s) + 1
		if total > 2<<20 {
			return nil, E2BIG
		}
		out = append(out, s)
	}
}

// sysExecve replaces the process image. On success it returns done=true
// and the caller must not write a return value (the registers belong to
// the new program).
func (t *Task) sysExecve(dirfd int32, pathAddr, argvAddr, envpAddr, flags uint64) (ret uint64, replaced bool) {
	g, pa, e := t.resolveAt(dirfd, pathAddr)
	if e != 0 {
		return errRet(e), false
	}
	argv, e := t.readStrings(argvAddr)
	if e != 0 {
		return errRet(e), false
	}
	envp, e := t.readStrings(envpAddr)
	if e != 0 {
		return errRet(e), false
	}
	x, err := t.readExecutable(g, pa)
	if err != nil {
		return errRet(errnoOf(err)), false
	}
	// bprm->filename: the name as the guest wrote it, "/dev/fd/N/name"
	// for one relative to a directory descriptor. Scripts get it as
	// their argument and it is AT_EXECFN.
	filename := pa.p
	if dirfd != atFDCWD && !strings.HasPrefix(filename, "/") {
		filename = "/dev/fd/" + itoa(int(dirfd)) + "/" + filename
	}
	data := x.data
	// #! scripts: run the interpreter with the script as an argument.
	for depth := 0; bytes.HasPrefix(data, []byte("#!")); depth++ {
		if depth > 4 {
			return errRet(ELOOP), false
		}
		line, _, _ := bytes.Cut(data[2:], []byte("\n"))
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			return errRet(ENOEXEC), false
		}
		interp := fields[0]
		nargv := []string{interp}
		if len(fields) > 1 {
			nargv = append(nargv, strings.Join(fields[1:], " "))
		}
		script := filename
		if depth > 0 {
			script = g // the interpreter that is itself a script, by its path
		}
		nargv = append(nargv, script)
		if len(argv) > 1 {
			nargv = append(nargv, argv[1:]...)
		}
		argv = nargv
		// The interpreter is looked up as open_exec does: from the cwd.
		if g, e = t.guestPath(atFDCWD, interp); e != 0 {
			return errRet(e), false
		}
		if x, err = t.readExecutable(g, pathArg{dirfd: atFDCWD, p: interp}); err != nil {
			return errRet(errnoOf(err)), false
		}
		data = x.data
	}
	abs := x.host
	mm := vm.NewMM()
	mm.Acct = t.tg.k.acct
	mm.ExePath, mm.ExeName = abs, abs
	if _, unconfined := t.tg.k.fs.(hostVFS); !unconfined {
		mm.ExeName = x.guest // the guest's path, never the host's
	}
	k := t.tg.k
	spec := &vm.StackSpec{Argv: argv, Envp: envp, ExecFn: filename, UID: uint64(k.uid()), GID: uint64(k.gid())}
	li, e, err := k.loadImage(mm, abs, data, spec, t.execLookup)
	if err != nil {
		return errRet(e), false
	}
	img, cpu, a := li.img, li.cpu, li.arch

	// Point of no return: de_thread, then switch the image.
	tg := t.tg
	tg.mu.Lock()
	for _, o := range tg.tasks {
		if o != t {
			o.killed.Store(true)
			o.cpu.Interrupt()
			o.interruptWait()
			if o.execMM == nil {
				o.execMM = tg.mm // released by the last of them
				tg.mm.AddUser()
			}
		}
	}
	tg.mu.Unlock()
	k.futexes.wakeAll(tg.mm)
	tg.deletePosixTimers() // exec keeps the interval timers only
	if t.utask != nil {
		t.utask.Free(t.uregs)
	}
	oldUMM := tg.umm
	oldMM := tg.mm
	tg.mu.Lock()
	tg.mm, tg.arch, tg.img = mm, a, img
	// Dumpable again, as begin_new_exec decides it from the ids before
	// the exec's own credentials (execCreds, below) are committed.
	c := t.creds()
	t.comm, tg.pr.undumpable = "", c.euid != c.uid || c.egid != c.gid
	tg.cmdline = cmdline(argv)
	tg.environ = cmdline(envp)
	tg.mu.Unlock()
	sh := tg.sighand
	unshare := tg.proc.vforkDone != nil || sharedSighand(tg)
	sh.Siglock.Lock()
	if unshare {
		tg.sighand = sh.Clone()
	}
	tg.sighand.ResetForExec()
	sh.Siglock.Unlock()
	tg.fds.closeOnExec()
	t.cpu = cpu
	t.placeCache()
	if t.uregs != nil {
		t.uregs.bind(cpu) // the uprobe register adapter follows the new CPU
	}
	t.accounted = 0
	t.alt = signals.DisabledStack
	t.clearChildTID = 0
	t.setupClock()
	t.setupArchCPU()
	t.installTrapHandler()
	t.execCreds()
	if oldUMM != nil {
		shared := tg.proc.vforkDone != nil
		tg.umm = nil
		if !shared {
			oldUMM.Release()
		}
	}
	// The old space is released (its copy-on-write pages go back to
	// their other owners) once the threads killed above are gone too.
	oldMM.DropUser(true)
	tg.attachUprobes(img)
	if tg.umm != nil {
		if t.utask == nil {
			t.newUtask()
		} else {
			t.utask.SetMM(tg.umm)
		}
	}
	tg.releaseVfork()
	k.event("%d execve %s pc=%#x", t.tid, g, img.Entry)
	return 0, true
}

// sharedSighand reports whether another process shares tg's sighand
// (a CLONE_SIGHAND|CLONE_VM child); exec must then unshare it.
func sharedSighand(tg *ThreadGroup) bool {
	tg.k.procMu.Lock()
	defer tg.k.procMu.Unlock()
	for _, p := range tg.k.procs {
		if p != tg && p.sighand == tg.sighand {
			return true
		}
	}
	return false
}

// maxExecutable bounds the size of a program or interpreter file uvm
// reads to load it.
const maxExecutable = 1 << 30

// execFile is a program or interpreter file execve read.
type execFile struct {
	data  []byte
	host  string // its host path, as the host kernel names the file read
	guest string // its guest path (the lexical one where the host cannot say)
}

// readExecutable reads a program file for execve, looked up as the
// other path arguments are (lookupAt): a regular file with an execute
// bit (EACCES otherwise, as Linux's may_open/do_open_execat), at most
// maxExecutable bytes. Its host and guest paths are those of the file
// opened, so a name with "..", symlinks or a renamed cwd names the file
// the kernel found.
func (t *Task) readExecutable(g string, a pathArg) (execFile, error) {
	fsys, name := t.lookupAt(g, a)
	fi, err := fsys.stat(name)
	if err != nil {
		return execFile{}, err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return execFile{}, fmt.Errorf("%s: %w", g, os.ErrPermission)
	}
	x := execFile{host: fsys.hostName(name), guest: g}
	f, err := fsys.open(name, os.O_RDONLY, 0)
	if err != nil {
		return execFile{}, err
	}
	defer f.Close()
	if x.data, err = readOpenedProgram(f, g); err != nil {
		return execFile{}, err
	}
	if h, gp, ok := openedPaths(t.tg.k.fs, f); ok {
		x.host, x.guest = h, gp
	}
	if !filepath.IsAbs(x.host) {
		x.host, _ = filepath.Abs(x.host)
	}
	return x, nil
}

// execLookup is where a program interpreter named by PT_INTERP is
// looked up: as open_exec does, from the cwd.
func (t *Task) execLookup(name string) (vfs, string) {
	g, e := t.guestPath(atFDCWD, name)
	if e != 0 {
		return hostVFS{}, hiddenHostPath
	}
	return t.lookupAt(g, pathArg{dirfd: atFDCWD, p: name})
}

// readProgramFile reads a whole regular host file of at most
// maxExecutable bytes (never a device or FIFO, which could be endless).
func readProgramFile(h string) ([]byte, error) { return readFileVFS(hostVFS{}, h, maxExecutable) }
