package tasks

import (
	"github.com/uvm-emu/uvm/internal/signals"
)

// Process file descriptors (kernel/pid.c pidfd_open, kernel/signal.c
// pidfd_send_signal, pidfd_getfd; waitid(P_PIDFD) is in process.go and
// CLONE_PIDFD in sysproc.go). A pidfd refers to one thread group for as
// long as it is open, zombie or reaped; it polls readable once the
// process has exited (and hung up once it is reaped).

const pidfdNonblock = oNONBLOCK

// pidfdFile is the open file of a pidfd.
type pidfdFile struct {
	fileBase
	tg *ThreadGroup
}

func (*pidfdFile) read(*Task, *openFile, uint64, int64) ([]byte, Errno)  { return nil, EINVAL }
func (*pidfdFile) write(*Task, *openFile, []byte, int64) (uint64, Errno) { return 0, EINVAL }

func (p *pidfdFile) exited() bool {
	select {
	case <-p.tg.done:
		return true
	default:
		return false
	}
}

func (p *pidfdFile) poll(events uint16) uint16 {
	if !p.exited() {
		return 0
	}
	rev := uint16(pollIN | pollRDNORM)
	k := p.tg.k
	k.procMu.Lock()
	if k.procs[p.tg.pid] != p.tg {
		rev |= pollHUP
	}
	k.procMu.Unlock()
	return rev & (events | pollHUP)
}

// wakeup is closed when the process exits (poll, epoll).
func (p *pidfdFile) wakeup() <-chan struct{} { return p.tg.done }

func init() {
	registerSyscall("pidfd_send_signal", func(t *Task, a [6]uint64) uint64 {
		return t.sysPidfdSendSignal(int32(a[0]), int(int32(a[1])), a[2], a[3])
	})
	registerSyscall("pidfd_getfd", func(t *Task, a [6]uint64) uint64 {
		return t.sysPidfdGetfd(int32(a[0]), int32(a[1]), a[2])
	})
}

// newPidfd installs a pidfd (always close-on-exec, as Linux) for tg.
func (t *Task) newPidfd(tg *ThreadGroup, flags uint64) (int32, Errno) {
	f := &openFile{ops: &pidfdFile{tg: tg}, path: "anon_inode:[pidfd]", flags: oRDWR | int(flags&pidfdNonblock)}
	return t.tg.fds.alloc(f, 0, true)
}

func (t *Task) sysPidfdOpen(pid int32, flags uint64) uint64 {
	if flags&^pidfdNonblock != 0 || pid <= 0 {
		return errRet(EINVAL)
	}
	k := t.tg.k
	k.procMu.Lock()
	tg := k.procs[pid]
	k.procMu.Unlock()
	if tg == nil {
		// A thread that is not a group leader: EINVAL; nothing: ESRCH.
		if t.tg.k.taskExists(pid) {
			return errRet(EINVAL)
		}
		return errRet(ESRCH)
	}
	fd, e := t.newPidfd(tg, flags)
	return retFD(fd, e)
}

// taskExists reports whether tid names a live thread of some process.
func (k *Kernel) taskExists(tid int32) bool {
	k.procMu.Lock()
	tgs := make([]*ThreadGroup, 0, len(k.procs))
	for _, tg := range k.procs {
		tgs = append(tgs, tg)
	}
	k.procMu.Unlock()
	for _, tg := range tgs {
		tg.mu.Lock()
		_, ok := tg.tasks[tid]
		tg.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// pidfdOf returns the process behind pidfd fd.
func (t *Task) pidfdOf(fd int32) (*ThreadGroup, Errno) {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return nil, EBADF
	}
	p, ok := f.ops.(*pidfdFile)
	if !ok {
		return nil, EBADF
	}
	return p.tg, 0
}

// pidfdTarget is waitid(P_PIDFD)'s pid: the process of pidfd fd.
func (t *Task) pidfdTarget(fd int32) (int32, Errno) {
	tg, e := t.pidfdOf(fd)
	if e != 0 {
		return 0, e
	}
	return tg.pid, 0
}

// pidfd_send_signal flags.
const (
	pidfdSignalThread       = 1
	pidfdSignalThreadGroup  = 2
	pidfdSignalProcessGroup = 4
)

func (t *Task) sysPidfdSendSignal(fd int32, sig int, infoAddr, flags uint64) uint64 {
	if flags&^(pidfdSignalThread|pidfdSignalThreadGroup|pidfdSignalProcessGroup) != 0 || flags&(flags-1) != 0 {
		return errRet(EINVAL)
	}
	if sig < 0 || sig > nSig {
		return errRet(EINVAL)
	}
	tg, e := t.pidfdOf(fd)
	if e != 0 {
		return errRet(e)
	}
	k := t.tg.k
	if flags == pidfdSignalProcessGroup {
		if k.noteUnimplemented("pidfd_send_signal PIDFD_SIGNAL_PROCESS_GROUP") {
			k.logf("unimplemented pidfd_send_signal PIDFD_SIGNAL_PROCESS_GROUP")
		}
		return errRet(EINVAL)
	}
	k.procMu.Lock()
	reaped := k.procs[tg.pid] != tg
	zombie := tg.proc.zombie
	k.procMu.Unlock()
	if reaped {
		return errRet(ESRCH)
	}
	code := int32(signals.SI_USER)
	var target *Task
	if flags == pidfdSignalThread {
		code = signals.SI_TKILL
		tg.mu.Lock()
		target = tg.tasks[tg.pid]
		tg.mu.Unlock()
		if target == nil && !zombie {
			return errRet(ESRCH)
		}
	}
	info := signals.KillInfo(signals.Signal(sig), code, t.tg.pid, k.uid())
	if infoAddr != 0 {
		b, e := t.readBuf(infoAddr, signals.SigInfoSize)
		if e != 0 {
			return errRet(e)
		}
		in, ok := signals.UnmarshalSigInfo(b)
		if !ok || int(in.Signo) != sig {
			return errRet(EINVAL)
		}
		if (in.Code >= 0 || in.Code == signals.SI_TKILL) && tg != t.tg {
			return errRet(EPERM)
		}
		info = in
	}
	if sig == 0 || zombie {
		return 0 // a zombie takes (and ignores) signals until it is reaped
	}
	return errOr0(tg.sendSignal(info, target))
}

func (t *Task) sysPidfdGetfd(pidfd, targetfd int32, flags uint64) uint64 {
	if flags != 0 {
		return errRet(EINVAL)
	}
	tg, e := t.pidfdOf(pidfd)
	if e != 0 {
		return errRet(e)
	}
	k := t.tg.k
	k.procMu.Lock()
	gone := tg.proc.zombie || k.procs[tg.pid] != tg
	k.procMu.Unlock()
	if gone {
		return errRet(ESRCH)
	}
	f, ok := tg.fds.get(targetfd)
	if !ok {
		return errRet(EBADF)
	}
	fd, e := t.tg.fds.alloc(f, 0, true)
	return retFD(fd, e)
}

// clonePidfdResult installs the pidfd of the process clone just created
// (CLONE_PIDFD) and stores it at addr, as an int.
func (t *Task) clonePidfdResult(ret, addr uint64) uint64 {
	if int64(ret) <= 0 {
		return ret
	}
	k := t.tg.k
	k.procMu.Lock()
	child := k.procs[int32(ret)]
	k.procMu.Unlock()
	if child == nil {
		return ret
	}
	fd, e := t.newPidfd(child, 0)
	if e != 0 {
		return errRet(e)
	}
	if e := t.putU32(addr, uint32(fd)); e != 0 {
		return errRet(e)
	}
	return ret
}

// sendPdeathSignals sends each orphan's PR_SET_PDEATHSIG signal (its
// parent has exited).
func sendPdeathSignals(orphans []*ThreadGroup) {
	for _, c := range orphans {
		c.mu.Lock()
		sig := c.pr.pdeathSig
		c.mu.Unlock()
		if sig != 0 {
			c.sendSignal(signals.KillInfo(signals.Signal(sig), signals.SI_USER, 0, c.k.uid()), nil)
		}
	}
}

// reaperLocked is where tg's children go when it exits: the nearest
// living ancestor that is a child subreaper, else init (nil when tg is
// init itself). Kernel.procMu is held.
func (tg *ThreadGroup) reaperLocked(init *ThreadGroup) *ThreadGroup {
	for p := tg.proc.parent; p != nil; p = p.proc.parent {
		p.mu.Lock()
		sub := p.pr.subreaper && !p.exiting
		p.mu.Unlock()
		if sub && !p.proc.zombie {
			return p
		}
	}
	if init != nil && init != tg {
		return init
	}
	return nil
}
