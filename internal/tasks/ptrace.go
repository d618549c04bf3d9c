package tasks

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// ptrace(2), the part a process uses on its own children
// (kernel/ptrace.c, ptrace_signal, ptrace_stop): PTRACE_TRACEME, then
// the stops the tracer sees through wait4/waitid — signal-delivery-stop
// for every signal but SIGKILL (the tracer passes it on, replaces it or
// suppresses it when it resumes the tracee), the SIGTRAP after execve
// (or PTRACE_EVENT_EXEC with PTRACE_O_TRACEEXEC), syscall-entry and
// -exit stops under PTRACE_SYSCALL (0x80|SIGTRAP with
// PTRACE_O_TRACESYSGOOD), a single step under PTRACE_SINGLESTEP — and the
// requests on a stopped tracee: PEEK/POKE of its memory (forced, as
// FOLL_FORCE: breakpoints in read-only text), its registers
// (PTRACE_GETREGSET/SETREGSET NT_PRSTATUS on both arches, GETREGS/
// SETREGS and PEEKUSER/POKEUSER of the registers on x86-64),
// GETSIGINFO/SETSIGINFO, GETEVENTMSG, GET_SYSCALL_INFO, CONT, SYSCALL,
// SINGLESTEP, DETACH, KILL. The tracer exiting detaches its tracees
// (PTRACE_O_EXITKILL kills them).
//
// Not modelled, and refused loudly: attaching to a process that did not
// ask (PTRACE_ATTACH, PTRACE_SEIZE: EPERM, as under Yama's
// ptrace_scope 3), hence PTRACE_INTERRUPT and LISTEN; the fork, vfork,
// clone, exit and seccomp events (PTRACE_SETOPTIONS with them is
// EINVAL); the FPU and other register sets. Signals a traced thread
// ignores are still dropped when sent (Linux queues them so the tracer
// sees them); a stop signal the tracer passes on stops the group as
// without ptrace (no PTRACE_LISTEN group-stop).

const (
	ptraceTRACEME       = 0
	ptracePEEKTEXT      = 1
	ptracePEEKDATA      = 2
	ptracePEEKUSR       = 3
	ptracePOKETEXT      = 4
	ptracePOKEDATA      = 5
	ptracePOKEUSR       = 6
	ptraceCONT          = 7
	ptraceKILL          = 8
	ptraceSINGLESTEP    = 9
	ptraceGETREGS       = 12
	ptraceSETREGS       = 13
	ptraceATTACH        = 16
	ptraceDETACH        = 17
	ptraceSYSCALL       = 24
	ptraceSETOPTIONS    = 0x4200
	ptraceGETEVENTMSG   = 0x4201
	ptraceGETSIGINFO    = 0x4202
	ptraceSETSIGINFO    = 0x4203
	ptraceGETREGSET     = 0x4204
	ptraceSETREGSET     = 0x4205
	ptraceSEIZE         = 0x4206
	ptraceINTERRUPT     = 0x4207
	ptraceLISTEN        = 0x4208
	ptraceGETSYSCALLINF = 0x420e

	ptraceOTRACESYSGOOD = 1 // the PTRACE_O_* options uvm implements
	ptraceOTRACEEXEC    = 0x10
	ptraceOTRACEEXIT    = 0x40
	ptraceOEXITKILL     = 0x100000

	ptraceEventExec = 4
	ptraceEventExit = 6

	ntPRSTATUS = 1

	auditArchX8664   = 0xc000003e
	auditArchAARCH64 = 0xc00000b7
)

// How a tracer resumed its tracee.
const (
	ptResumeCont = iota
	ptResumeSyscall
	ptResumeStep
)

// Why a tracee is stopped (what PTRACE_GET_SYSCALL_INFO reports).
const (
	ptStopSignal = iota
	ptStopSyscallEntry
	ptStopSyscallExit
	ptStopEvent
)

// ptraceState is a traced thread's link to its tracer.
type ptraceState struct {
	tracer *ThreadGroup // the process that called for it (TRACEME: the parent)

	// mu protects everything below.
	mu       sync.Mutex
	options  uint32
	stopped  bool   // in a ptrace-stop
	reported bool   // the stop was reported by wait4/waitid
	status   uint32 // wait status of the stop: 0x7f | sig<<8 | event<<16
	why      int    // ptStop*
	info     signals.SigInfo
	eventMsg uint64
	resume   int   // ptResume*: how the tracer let it go on
	sig      int   // the signal to deliver when a signal-delivery-stop ends
	origNr   int64 // x86 orig_rax: the syscall number at a syscall stop, else -1
	sysRet   uint64
	detached bool
	changed  chan struct{}
}

func (ps *ptraceState) notifyLocked() {
	if ps.changed != nil {
		close(ps.changed)
		ps.changed = nil
	}
}

func (ps *ptraceState) wakeup() <-chan struct{} {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.changed == nil {
		ps.changed = make(chan struct{})
	}
	return ps.changed
}

func init() {
	registerSyscall("ptrace", func(t *Task, a [6]uint64) uint64 {
		return t.sysPtrace(int64(a[0]), int32(a[1]), a[2], a[3])
	})
}

func (t *Task) ptraceUnimpl(what string) {
	if t.tg.k.noteUnimplemented(what) {
		t.tg.k.logf("unimplemented %s at pc 0x%x", what, t.cpu.PC())
	}
}

// sysPtrace is ptrace(request, pid, addr, data).
func (t *Task) sysPtrace(req int64, pid int32, addr, data uint64) uint64 {
	switch req {
	case ptraceTRACEME:
		return errRet(t.ptraceTraceme())
	case ptraceATTACH, ptraceSEIZE:
		t.ptraceUnimpl("ptrace attach (PTRACE_ATTACH/PTRACE_SEIZE: EPERM; only PTRACE_TRACEME)")
		return errRet(EPERM)
	}
	tracee, ps, e := t.ptraceTracee(pid, req != ptraceKILL)
	if e != 0 {
		return errRet(e)
	}
	switch req {
	case ptracePEEKTEXT, ptracePEEKDATA:
		var b [8]byte
		if tracee.tg.mm.Peek(b[:], addr) != nil {
			return errRet(EIO)
		}
		return errRet(t.writeBytes(data, b[:]))
	case ptracePOKETEXT, ptracePOKEDATA:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], data)
		if tracee.tg.mm.Poke(b[:], addr) != nil {
			return errRet(EIO)
		}
		return 0
	case ptracePEEKUSR, ptracePOKEUSR:
		c, ok := tracee.cpu.(*amd64.CPU)
		if !ok || addr%8 != 0 || addr >= userRegsSize {
			t.ptraceUnimpl(fmt.Sprintf("ptrace PEEKUSER/POKEUSER offset %#x", addr))
			return errRet(EIO)
		}
		regs := amd64UserRegs(c, ps)
		if req == ptracePEEKUSR {
			return errRet(t.writeBytes(data, regs[addr:addr+8]))
		}
		binary.LittleEndian.PutUint64(regs[addr:], data)
		return errRet(setAMD64UserRegs(c, ps, regs[:]))
	case ptraceGETREGS, ptraceSETREGS:
		c, ok := tracee.cpu.(*amd64.CPU)
		if !ok {
			return errRet(EIO) // arm64 has no PTRACE_GETREGS
		}
		if req == ptraceGETREGS {
			regs := amd64UserRegs(c, ps)
			return errRet(t.writeBytes(data, regs[:]))
		}
		regs, e := t.readBuf(data, userRegsSize)
		if e != 0 {
			return errRet(e)
		}
		return errRet(setAMD64UserRegs(c, ps, regs))
	case ptraceGETREGSET, ptraceSETREGSET:
		return errRet(t.ptraceRegset(tracee, ps, req == ptraceSETREGSET, addr, data))
	case ptraceGETSIGINFO:
		ps.mu.Lock()
		info := ps.info
		ps.mu.Unlock()
		b := info.Marshal()
		return errRet(t.writeBytes(data, b[:]))
	case ptraceSETSIGINFO:
		b, e := t.readBuf(data, signals.SigInfoSize)
		if e != 0 {
			return errRet(e)
		}
		info, ok := signals.UnmarshalSigInfo(b)
		if !ok {
			return errRet(EINVAL)
		}
		ps.mu.Lock()
		ps.info = info
		ps.mu.Unlock()
		return 0
	case ptraceGETEVENTMSG:
		ps.mu.Lock()
		msg := ps.eventMsg
		ps.mu.Unlock()
		return errRet(t.putU64(data, msg))
	case ptraceSETOPTIONS:
		if data&^uint64(ptraceOTRACESYSGOOD|ptraceOTRACEEXEC|ptraceOTRACEEXIT|ptraceOEXITKILL) != 0 {
			t.ptraceUnimpl(fmt.Sprintf("ptrace options %#x (fork/clone/exit/seccomp events)", data))
			return errRet(EINVAL)
		}
		ps.mu.Lock()
		ps.options = uint32(data)
		ps.mu.Unlock()
		return 0
	case ptraceGETSYSCALLINF:
		return t.ptraceSyscallInfo(tracee, ps, addr, data)
	case ptraceCONT, ptraceSYSCALL, ptraceSINGLESTEP, ptraceDETACH:
		if data > nSig {
			return errRet(EIO)
		}
		mode := ptResumeCont // CONT, DETACH
		switch req {
		case ptraceSYSCALL:
			mode = ptResumeSyscall
		case ptraceSINGLESTEP:
			mode = ptResumeStep
		}
		ps.mu.Lock()
		ps.resume, ps.sig, ps.stopped = mode, int(data), false
		if req == ptraceDETACH {
			ps.detached = true
		}
		ps.notifyLocked()
		ps.mu.Unlock()
		if req == ptraceDETACH {
			tracee.ptrace.Store(nil)
		}
		return 0
	case ptraceKILL:
		tracee.tg.sendSignal(signals.KernelInfo(signals.SIGKILL), nil)
		return 0
	case ptraceINTERRUPT, ptraceLISTEN:
		t.ptraceUnimpl("ptrace PTRACE_INTERRUPT/PTRACE_LISTEN (seized tracees)")
		return errRet(EIO)
	}
	t.ptraceUnimpl(fmt.Sprintf("ptrace request %#x", req))
	return errRet(EIO)
}

// ptraceTraceme makes t a tracee of its parent.
func (t *Task) ptraceTraceme() Errno {
	k := t.tg.k
	k.procMu.Lock()
	parent := t.tg.proc.parent
	k.procMu.Unlock()
	if parent == nil || t.ptrace.Load() != nil {
		return EPERM
	}
	t.ptrace.Store(&ptraceState{tracer: parent, origNr: -1})
	k.event("%d ptrace traceme by %d", t.tid, parent.pid)
	return 0
}

// ptraceTracee finds the thread pid that t's process traces; stopped:
// it must be in a ptrace-stop (ESRCH otherwise, as ptrace_check_attach).
func (t *Task) ptraceTracee(pid int32, stopped bool) (*Task, *ptraceState, Errno) {
	o := t.tg.k.findTask(pid)
	if o == nil {
		return nil, nil, ESRCH
	}
	ps := o.ptrace.Load()
	if ps == nil || ps.tracer != t.tg {
		return nil, nil, ESRCH
	}
	if stopped {
		ps.mu.Lock()
		st := ps.stopped
		ps.mu.Unlock()
		if !st {
			return nil, nil, ESRCH
		}
	}
	return o, ps, 0
}

// ptraceStop parks t in a ptrace-stop until its tracer resumes it (or it
// is killed, or the tracer goes): the tracer's wait reports status and
// it gets SIGCHLD with CLD_TRAPPED.
func (t *Task) ptraceStop(ps *ptraceState, why int, status uint32, info signals.SigInfo) {
	ps.mu.Lock()
	if ps.detached {
		ps.mu.Unlock()
		return
	}
	ps.stopped, ps.reported, ps.why, ps.status, ps.info, ps.sig = true, false, why, status, info, 0
	ps.notifyLocked()
	ps.mu.Unlock()
	tracer := ps.tracer
	k := t.tg.k
	if k.tracing() { // no boxing of the arguments untraced
		k.event("%d ptrace stop %#x", t.tid, status)
	}
	k.procMu.Lock()
	close(tracer.proc.childEvent)
	tracer.proc.childEvent = make(chan struct{})
	k.procMu.Unlock()
	tracer.sendSignal(signals.SigInfo{Signo: int32(signals.SIGCHLD), Code: signals.CLD_TRAPPED, Pid: t.tid,
		UID: k.uid(), Status: int32(status>>8) & 0xff}, nil)
	t.waitKillable(func() bool {
		if t.fatalPending() {
			return true // SIGKILL ends any stop (signal_wake_up with fatal)
		}
		ps.mu.Lock()
		defer ps.mu.Unlock()
		return !ps.stopped || ps.detached
	}, ps.wakeup, -1)
	ps.mu.Lock()
	ps.stopped = false
	ps.mu.Unlock()
}

// ptraceGetSignal is get_signal for a traced thread: the tracer sees
// each dequeued signal but SIGKILL first, and what it resumes the
// thread with is what is delivered.
func (t *Task) ptraceGetSignal(ps *ptraceState) (signals.SigInfo, signals.SigAction, signals.Disposition) {
	tg := t.tg
	sh := tg.sighand
	for {
		sh.Siglock.Lock()
		info, ok := signals.Dequeue(&t.pending, &tg.shared, t.blocked)
		t.recalcLocked()
		sh.Siglock.Unlock()
		if !ok {
			return signals.SigInfo{}, signals.SigAction{}, signals.DispNone
		}
		sig := signals.Signal(info.Signo)
		if sig != signals.SIGKILL && t.ptrace.Load() == ps {
			t.ptraceStop(ps, ptStopSignal, 0x7f|uint32(sig)<<8, info)
			if t.killed.Load() {
				return signals.SigInfo{}, signals.SigAction{}, signals.DispNone
			}
			ps.mu.Lock()
			nsig, ninfo := ps.sig, ps.info
			ps.mu.Unlock()
			if nsig == 0 {
				continue // suppressed by the tracer
			}
			if nsig != int(sig) {
				// A different signal: from the tracer (SI_USER).
				ninfo = signals.SigInfo{Signo: int32(nsig), Code: signals.SI_USER, Pid: ps.tracer.pid, UID: tg.k.uid()}
			}
			info, sig = ninfo, signals.Signal(nsig)
			sh.Siglock.Lock()
			blocked := t.blocked.Has(sig)
			sh.Siglock.Unlock()
			if blocked {
				tg.sendSignal(info, t) // requeued, as ptrace_signal does
				continue
			}
		}
		sh.Siglock.Lock()
		act, d := sh.Dispose(sig)
		sh.Siglock.Unlock()
		if d != signals.DispNone {
			return info, act, d
		}
	}
}

// syscallTraced is syscall with the tracer's syscall stops and the
// post-execve SIGTRAP or exec event around it.
func (t *Task) syscallTraced() (stop bool, sc syscallResult, restartable bool) {
	ps := t.ptrace.Load()
	if ps == nil {
		return t.syscall()
	}
	a := t.tg.arch
	ps.mu.Lock()
	stopSys := ps.resume == ptResumeSyscall
	good := ps.options&ptraceOTRACESYSGOOD != 0
	ps.mu.Unlock()
	trap := uint32(signals.SIGTRAP)
	if good {
		trap |= 0x80
	}
	skip := false
	if stopSys {
		nr := t.cpu.Reg(a.nr)
		x86, isX86 := t.cpu.(*amd64.CPU)
		ps.mu.Lock()
		ps.origNr = int64(nr)
		ps.mu.Unlock()
		if isX86 {
			x86.SetReg(0, errRet(ENOSYS)) // rax at syscall entry, as Linux's entry code
		}
		t.ptraceStop(ps, ptStopSyscallEntry, 0x7f|trap<<8, signals.KernelInfo(signals.SIGTRAP))
		if t.killed.Load() {
			return true, sc, false
		}
		t.ptraceResumeSignal(ps)
		ps.mu.Lock()
		stopSys = ps.resume == ptResumeSyscall // PTRACE_CONT here: no exit stop
		ps.mu.Unlock()
		if t.fatalPending() {
			skip = true // killed at the entry stop: the syscall never runs
		}
		ps.mu.Lock()
		nr2 := ps.origNr
		ps.mu.Unlock()
		if isX86 && !skip {
			if nr2 == -1 {
				skip = true // the tracer cancelled it; rax is the result
			} else {
				x86.SetReg(0, uint64(nr2))
			}
		}
	}
	if !skip {
		switch a.entry(t.cpu.Reg(a.nr)).no {
		case sysExit, sysExitGroup:
			t.ptraceExitEvent(uint32(t.cpu.Reg(a.args[0])&0xff) << 8)
		}
	}
	cpu := t.cpu
	if skip {
		sc = syscallResult{ret: int64(t.cpu.Reg(a.ret)), nr: ^uint64(0)}
	} else {
		stop, sc, restartable = t.syscall()
	}
	if stop {
		return
	}
	if t.cpu != cpu { // execve replaced the image
		ps.mu.Lock()
		ev := ps.options&ptraceOTRACEEXEC != 0
		ps.eventMsg = uint64(t.tid)
		ps.mu.Unlock()
		if ev {
			t.ptraceStop(ps, ptStopEvent, 0x7f|uint32(signals.SIGTRAP)<<8|ptraceEventExec<<16, signals.KernelInfo(signals.SIGTRAP))
			t.ptraceResumeSignal(ps)
		} else {
			t.tg.sendSignal(signals.KillInfo(signals.SIGTRAP, signals.SI_USER, 0, 0), t)
		}
	}
	if stopSys && t.ptrace.Load() == ps {
		ps.mu.Lock()
		ps.sysRet = t.cpu.Reg(a.ret)
		ps.mu.Unlock()
		t.ptraceStop(ps, ptStopSyscallExit, 0x7f|trap<<8, signals.KernelInfo(signals.SIGTRAP))
		stop = t.killed.Load()
		t.ptraceResumeSignal(ps)
	}
	ps.mu.Lock()
	ps.origNr = -1
	ps.mu.Unlock()
	return
}

// ptraceStepping: the tracer resumed t with PTRACE_SINGLESTEP.
func (t *Task) ptraceStepping() bool {
	ps := t.ptrace.Load()
	if ps == nil {
		return false
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.resume == ptResumeStep
}

// ptraceStepped ends a single step: SIGTRAP (TRAP_TRACE) at the next
// instruction, as the debug exception does.
func (t *Task) ptraceStepped() {
	ps := t.ptrace.Load()
	if ps == nil {
		return
	}
	ps.mu.Lock()
	ps.resume = ptResumeCont
	ps.mu.Unlock()
	t.forceSignal(signals.FaultInfo(signals.SIGTRAP, signals.TRAP_TRACE, t.cpu.PC()))
}

// ptraceTracerExited detaches tg's tracees when tg, their tracer, exits
// (exit_ptrace): PTRACE_O_EXITKILL ones are killed, the others go on.
func (tg *ThreadGroup) ptraceTracerExited(children []*ThreadGroup) {
	for _, c := range children {
		c.mu.Lock()
		tasks := make([]*Task, 0, len(c.tasks))
		for _, o := range c.tasks {
			tasks = append(tasks, o)
		}
		c.mu.Unlock()
		for _, o := range tasks {
			ps := o.ptrace.Load()
			if ps == nil || ps.tracer != tg {
				continue
			}
			ps.mu.Lock()
			kill := ps.options&ptraceOEXITKILL != 0
			ps.detached, ps.stopped = true, false
			ps.notifyLocked()
			ps.mu.Unlock()
			o.ptrace.Store(nil)
			if kill {
				c.sendSignal(signals.KernelInfo(signals.SIGKILL), nil)
			}
		}
	}
}

// ptraceStoppedFor returns the thread of c (lowest tid first) in a
// ptrace-stop that tracer has not had reported.
func (c *ThreadGroup) ptraceStoppedFor(tracer *ThreadGroup) *Task {
	c.mu.Lock()
	defer c.mu.Unlock()
	var found *Task
	for _, o := range c.tasks {
		ps := o.ptrace.Load()
		if ps == nil || ps.tracer != tracer {
			continue
		}
		ps.mu.Lock()
		st := ps.stopped && !ps.reported
		ps.mu.Unlock()
		if st && (found == nil || o.tid < found.tid) {
			found = o
		}
	}
	return found
}

// ptraceReport marks o's stop reported (unless keep) and returns its
// wait status.
func (o *Task) ptraceReport(keep bool) uint32 {
	ps := o.ptrace.Load()
	if ps == nil {
		return 0
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !keep {
		ps.reported = true
	}
	return ps.status
}

// userRegsSize is sizeof(struct user_regs_struct) on x86-64.
const userRegsSize = 27 * 8

// amd64UserOrder maps user_regs_struct's first 15 slots to GPR numbers.
var amd64UserOrder = [15]int{15, 14, 13, 12, 5, 3, 11, 10, 9, 8, 0, 1, 2, 6, 7}

// amd64UserRegs is the tracee's struct user_regs_struct.
func amd64UserRegs(c *amd64.CPU, ps *ptraceState) [userRegsSize]byte {
	var b [userRegsSize]byte
	le := binary.LittleEndian
	for i, g := range amd64UserOrder {
		le.PutUint64(b[i*8:], c.Reg(g))
	}
	ps.mu.Lock()
	orig := ps.origNr
	ps.mu.Unlock()
	v := [...]uint64{uint64(orig), c.PC(), 0x33, c.RFLAGS(), c.SP(), 0x2b, c.TLS(), c.GSBase(), 0, 0, 0, 0}
	for i, x := range v {
		le.PutUint64(b[(15+i)*8:], x)
	}
	return b
}

// setAMD64UserRegs loads a user_regs_struct into the tracee: the
// general registers, orig_rax, rip, eflags (the flags a user may
// change), rsp, fs_base and gs_base; segment selectors must keep their
// values.
func setAMD64UserRegs(c *amd64.CPU, ps *ptraceState, b []byte) Errno {
	le := binary.LittleEndian
	u := func(i int) uint64 { return le.Uint64(b[i*8:]) }
	if u(17) != 0x33 || u(20) != 0x2b || u(23)|u(24)|u(25)|u(26) != 0 {
		return EIO
	}
	for i, g := range amd64UserOrder {
		c.SetReg(g, u(i))
	}
	ps.mu.Lock()
	ps.origNr = int64(u(15))
	ps.mu.Unlock()
	c.SetPC(u(16))
	const userFlags = 0x254dd5 // FLAG_MASK of arch/x86/kernel/ptrace.c: CF PF AF ZF SF TF DF OF NT AC ID
	c.SetRFLAGS(c.RFLAGS()&^userFlags | u(18)&userFlags)
	c.SetSP(u(19))
	c.SetTLS(u(21))
	c.SetGSBase(u(22))
	return 0
}

// arm64UserRegs is struct user_pt_regs: x0–x30, sp, pc, pstate.
func arm64UserRegs(c *arm64.CPU) [34 * 8]byte {
	var b [34 * 8]byte
	r := c.Regs()
	le := binary.LittleEndian
	for i := range 31 {
		le.PutUint64(b[i*8:], r.X[i])
	}
	le.PutUint64(b[31*8:], r.SP)
	le.PutUint64(b[32*8:], r.PC)
	le.PutUint64(b[33*8:], r.NZCV&0xf0000000)
	return b
}

// ptraceRegset is PTRACE_GETREGSET/SETREGSET of NT_PRSTATUS with the
// struct iovec at data (its length is updated as Linux does).
func (t *Task) ptraceRegset(tracee *Task, ps *ptraceState, set bool, which, data uint64) Errno {
	if which != ntPRSTATUS {
		t.ptraceUnimpl(fmt.Sprintf("ptrace register set %#x (only NT_PRSTATUS)", which))
		return EINVAL
	}
	iov, e := t.readBuf(data, 16)
	if e != 0 {
		return e
	}
	base, n := binary.LittleEndian.Uint64(iov), binary.LittleEndian.Uint64(iov[8:])
	var regs []byte
	switch c := tracee.cpu.(type) {
	case *amd64.CPU:
		r := amd64UserRegs(c, ps)
		regs = r[:]
	case *arm64.CPU:
		r := arm64UserRegs(c)
		regs = r[:]
	default:
		return EIO
	}
	n = min(n, uint64(len(regs)))
	if set {
		b, e := t.readBuf(base, n)
		if e != 0 {
			return e
		}
		copy(regs, b)
		switch c := tracee.cpu.(type) {
		case *amd64.CPU:
			if e := setAMD64UserRegs(c, ps, regs); e != 0 {
				return e
			}
		case *arm64.CPU:
			r := c.Regs()
			le := binary.LittleEndian
			for i := range 31 {
				r.X[i] = le.Uint64(regs[i*8:])
			}
			r.SP, r.PC = le.Uint64(regs[31*8:]), le.Uint64(regs[32*8:])
			r.NZCV = le.Uint64(regs[33*8:]) & 0xf0000000
		}
	} else if e := t.writeBytes(base, regs[:n]); e != 0 {
		return e
	}
	binary.LittleEndian.PutUint64(iov[8:], n)
	return t.writeBytes(data+8, iov[8:])
}

// ptraceSyscallInfo is PTRACE_GET_SYSCALL_INFO: struct
// ptrace_syscall_info for the stop, at most size (addr) bytes at data;
// it returns the size of the whole structure for this stop.
func (t *Task) ptraceSyscallInfo(tracee *Task, ps *ptraceState, size, data uint64) uint64 {
	var b [80]byte
	le := binary.LittleEndian
	arch := uint32(auditArchAARCH64)
	if _, ok := tracee.cpu.(*amd64.CPU); ok {
		arch = auditArchX8664
	}
	le.PutUint32(b[4:], arch)
	le.PutUint64(b[8:], tracee.cpu.PC())
	le.PutUint64(b[16:], tracee.cpu.SP())
	ps.mu.Lock()
	why, nr, ret := ps.why, ps.origNr, ps.sysRet
	ps.mu.Unlock()
	n := 24
	switch why {
	case ptStopSyscallEntry:
		b[0] = 1
		le.PutUint64(b[24:], uint64(nr))
		args := tracee.syscallArgs(tracee.tg.arch)
		for i, v := range args {
			le.PutUint64(b[32+8*i:], v)
		}
		n = 80
	case ptStopSyscallExit:
		b[0] = 2
		le.PutUint64(b[24:], ret)
		if r := int64(ret); r < 0 && r >= -4095 {
			b[32] = 1
		}
		n = 33
	}
	if e := t.writeBytes(data, b[:min(uint64(n), size)]); e != 0 {
		return errRet(e)
	}
	return uint64(n)
}

// ptraceStoppedIn is c.ptraceStoppedFor(tracer), nil for no c.
func ptraceStoppedIn(c, tracer *ThreadGroup) *Task {
	if c == nil {
		return nil
	}
	return c.ptraceStoppedFor(tracer)
}

// fatalPending reports whether SIGKILL is pending for t (on its own queue
// or its group's).
func (t *Task) fatalPending() bool {
	sh := t.tg.sighand
	sh.Siglock.Lock()
	defer sh.Siglock.Unlock()
	return t.pending.Has(signals.SIGKILL) || t.tg.shared.Has(signals.SIGKILL)
}

// ptraceExitEvent is the PTRACE_EVENT_EXIT stop of a thread about to
// exit with wait status st (PTRACE_O_TRACEEXIT; the tracer reads st
// with PTRACE_GETEVENTMSG).
func (t *Task) ptraceExitEvent(st uint32) {
	ps := t.ptrace.Load()
	if ps == nil || t.fatalPending() {
		return
	}
	ps.mu.Lock()
	on := ps.options&ptraceOTRACEEXIT != 0
	if on {
		ps.eventMsg = uint64(st)
	}
	ps.mu.Unlock()
	if on {
		t.ptraceStop(ps, ptStopEvent, 0x7f|uint32(signals.SIGTRAP)<<8|ptraceEventExit<<16, signals.KernelInfo(signals.SIGTRAP))
	}
}

// ptraceResumeSignal sends the signal the tracer resumed a syscall or
// event stop with to the thread (ptrace_report_syscall's send_sig of
// exit_code); a signal-delivery-stop's is delivered by ptraceGetSignal.
func (t *Task) ptraceResumeSignal(ps *ptraceState) {
	ps.mu.Lock()
	sig := ps.sig
	ps.sig = 0
	ps.mu.Unlock()
	if sig != 0 {
		t.tg.sendSignal(signals.KernelInfo(signals.Signal(sig)), t) // send_sig(…, 1): SI_KERNEL
	}
}

func init() {
	for _, write := range []bool{false, true} {
		name := map[bool]string{false: "process_vm_readv", true: "process_vm_writev"}[write]
		registerSyscall(name, func(t *Task, a [6]uint64) uint64 {
			return t.sysProcessVM(int32(a[0]), a[1], a[2], a[3], a[4], a[5], write)
		})
	}
}

// sysProcessVM is process_vm_readv/process_vm_writev (mm/process_vm_access.c):
// copies between the caller's local iovecs and another process's remote
// ones, with ptrace's access check (PTRACE_MODE_ATTACH_REALCREDS, EPERM)
// and the remote process's page protections (no FOLL_FORCE). A fault in
// the remote range ends the copy: the bytes copied so far, or EFAULT.
func (t *Task) sysProcessVM(pid int32, liov, lcnt, riov, rcnt, flags uint64, write bool) uint64 {
	if flags != 0 {
		return errRet(EINVAL)
	}
	local, _, e := t.readIovec(liov, lcnt)
	if e != 0 {
		return errRet(e)
	}
	remote, _, e := t.readIovec(riov, rcnt)
	if e != 0 {
		return errRet(e)
	}
	p, ok := t.tg.k.procFindPID(pid)
	if !ok {
		return errRet(ESRCH)
	}
	if t.procAccess(p) != 0 {
		return errRet(EPERM)
	}
	rmm := p.tg.mm
	var buf [64 << 10]byte
	var done uint64
	li, loff := 0, uint64(0) // the next local byte
	for _, r := range remote {
		for off := uint64(0); off < r.len; {
			for li < len(local) && loff == local[li].len {
				li, loff = li+1, 0
			}
			if li == len(local) {
				return done
			}
			n := min(r.len-off, local[li].len-loff, uint64(len(buf)))
			b := buf[:n]
			if write {
				if t.tg.mm.ReadAt(b, local[li].base+loff) != nil {
					return errRet(EFAULT)
				}
				if rmm.WriteAt(b, r.base+off) != nil {
					return faultedAfter(done)
				}
			} else {
				if rmm.ReadAt(b, r.base+off) != nil {
					return faultedAfter(done)
				}
				if t.tg.mm.WriteAt(b, local[li].base+loff) != nil {
					return errRet(EFAULT)
				}
			}
			off, loff, done = off+n, loff+n, done+n
		}
	}
	return done
}

// faultedAfter is a partial copy's result: the count, or EFAULT for none.
func faultedAfter(done uint64) uint64 {
	if done == 0 {
		return errRet(EFAULT)
	}
	return done
}
