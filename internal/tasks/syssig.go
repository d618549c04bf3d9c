package tasks

import "github.com/uvm-emu/uvm/internal/signals"

// Signal syscalls over package signals' model (see signal.go).

const (
	sigKILL = 9
	sigSTOP = 19
	nSig    = 64
)

func (t *Task) sysRtSigaction(sig, act, oldact, size uint64) uint64 {
	if size != 8 {
		return errRet(EINVAL)
	}
	s := signals.Signal(sig)
	if !s.Valid() {
		return errRet(EINVAL)
	}
	var na *signals.SigAction
	if act != 0 {
		b, e := t.readBuf(act, signals.SigActionSize)
		if e != 0 {
			return errRet(e)
		}
		a, ok := signals.UnmarshalSigAction(b)
		if !ok {
			return errRet(EINVAL)
		}
		na = &a
	}
	tg := t.tg
	sh := tg.sighand
	sh.Siglock.Lock()
	queues := []*signals.Pending{&tg.shared}
	tg.mu.Lock()
	for _, o := range tg.tasks {
		queues = append(queues, &o.pending)
	}
	tg.mu.Unlock()
	old, err := sh.SetAction(s, na, queues...)
	sh.Siglock.Unlock()
	if err != nil {
		return errRet(EINVAL)
	}
	if oldact != 0 {
		b := old.Marshal()
		if e := t.writeBytes(oldact, b[:]); e != 0 {
			return errRet(e)
		}
	}
	return 0
}

func (t *Task) sysRtSigprocmask(how int, set, oldset, size uint64) uint64 {
	if size != 8 {
		return errRet(EINVAL)
	}
	old := t.blocked
	if set != 0 {
		v, e := t.getU64(set)
		if e != 0 {
			return errRet(e)
		}
		nb := old
		switch how {
		case 0: // SIG_BLOCK
			nb |= signals.SigSet(v)
		case 1: // SIG_UNBLOCK
			nb &^= signals.SigSet(v)
		case 2: // SIG_SETMASK
			nb = signals.SigSet(v)
		default:
			return errRet(EINVAL)
		}
		t.setBlocked(nb)
	}
	if oldset != 0 {
		if e := t.putU64(oldset, uint64(old)); e != 0 {
			return errRet(e)
		}
	}
	return 0
}

func (t *Task) sysRtSigpending(set, size uint64) uint64 {
	if size != 8 {
		return errRet(EINVAL)
	}
	sh := t.tg.sighand
	sh.Siglock.Lock()
	p := (t.pending.Set() | t.tg.shared.Set()) & t.blocked
	sh.Siglock.Unlock()
	return errOr0(t.putU64(set, uint64(p)))
}

// sysRtSigsuspend replaces the mask and waits for a signal; the old mask
// comes back after the handler runs (handleSignals).
func (t *Task) sysRtSigsuspend(set, size uint64) uint64 {
	if size != 8 {
		return errRet(EINVAL)
	}
	v, e := t.getU64(set)
	if e != 0 {
		return errRet(e)
	}
	old := t.blocked
	t.savedBlocked = &old
	t.setBlocked(signals.SigSet(v))
	t.wait(func() bool { return false }, nil, -1)
	return errRet(Errno(signals.ERESTARTNOHAND))
}

func (t *Task) sysPause() uint64 {
	t.wait(func() bool { return false }, nil, -1)
	return errRet(Errno(signals.ERESTARTNOHAND))
}

func (t *Task) sysSigaltstack(ss, oss uint64) uint64 {
	sp := t.cpu.SP()
	if oss != 0 {
		cur := t.alt.Get(sp).Marshal()
		if e := t.writeBytes(oss, cur[:]); e != 0 {
			return errRet(e)
		}
	}
	if ss != 0 {
		b, e := t.readBuf(ss, signals.StackTSize)
		if e != 0 {
			return errRet(e)
		}
		n, ok := signals.UnmarshalStackT(b)
		if !ok {
			return errRet(EINVAL)
		}
		min := t.tg.arch.minSigStkSz
		if err := t.alt.Set(n, sp, min); err != nil {
			return errRet(stackErrno(err))
		}
	}
	return 0
}

// stackErrno maps StackT.Set's errors to errno values.
func stackErrno(err error) Errno {
	switch err {
	case signals.ErrOnAltStack:
		return EPERM
	case signals.ErrStackSize:
		return ENOMEM
	}
	return EINVAL
}

// sysTgkill sends sig to thread tid of group tgid (tid 0: the process,
// as kill(2) does).
func (t *Task) sysTgkill(tgid, tid int32, sig int) uint64 {
	if sig < 0 || sig > nSig {
		return errRet(EINVAL)
	}
	tg := t.tg
	if tgid != tg.pid && tgid > 0 {
		k := t.tg.k
		k.procMu.Lock()
		tg = k.procs[tgid]
		if tg != nil && tg.proc.zombie {
			tg = nil
		}
		k.procMu.Unlock()
		if tg == nil {
			return errRet(ESRCH)
		}
	}
	var target *Task
	if tid != 0 {
		tg.mu.Lock()
		target = tg.tasks[tid]
		tg.mu.Unlock()
		if target == nil {
			return errRet(ESRCH)
		}
	}
	if sig == 0 {
		return 0
	}
	code := int32(signals.SI_USER)
	if tid != 0 {
		code = signals.SI_TKILL
	}
	info := signals.KillInfo(signals.Signal(sig), code, tg.pid, tg.k.uid())
	return errOr0(tg.sendSignal(info, target))
}

// sysRtSigqueueinfo sends a signal with caller-supplied siginfo
// (rt_sigqueueinfo; rt_tgsigqueueinfo when tid != 0). As Linux, a process
// may not forge kernel or kill() codes (si_code >= 0, or SI_TKILL) for
// another process.
func (t *Task) sysRtSigqueueinfo(tgid, tid int32, sig int, uinfo uint64) uint64 {
	if sig < 1 || sig > nSig {
		return errRet(EINVAL)
	}
	b, e := t.readBuf(uinfo, signals.SigInfoSize)
	if e != 0 {
		return errRet(e)
	}
	info, ok := signals.UnmarshalSigInfo(b)
	if !ok {
		return errRet(EINVAL)
	}
	info.Signo = int32(sig)
	if (info.Code >= 0 || info.Code == signals.SI_TKILL) && tgid != t.tg.pid {
		return errRet(EPERM)
	}
	k := t.tg.k
	k.procMu.Lock()
	tg := k.procs[tgid]
	k.procMu.Unlock()
	if tg == nil || tg.proc.zombie {
		return errRet(ESRCH)
	}
	var target *Task
	if tid != 0 {
		tg.mu.Lock()
		target = tg.tasks[tid]
		tg.mu.Unlock()
		if target == nil {
			return errRet(ESRCH)
		}
	}
	return errOr0(tg.sendSignal(info, target))
}
