package tasks

import "encoding/binary"

// Signal state syscalls. uvm stores and reports the state exactly; full
// delivery to guest handlers (signal frames, sigreturn) is the signals
// layer's job and not done yet: a signal aimed at a guest handler is
// reported once as unimplemented and left pending nowhere (dropped).

const (
	sigKILL = 9
	sigSTOP = 19
	nSig    = 64
)

// defaultTerminates says whether a signal's default action ends the
// process, and whether it dumps core (signal(7)).
func defaultTerminates(sig int) (term, core bool) {
	switch sig {
	case 17, 18, 23, 28: // SIGCHLD, SIGCONT, SIGURG, SIGWINCH: ignore
		return false, false
	case 19, 20, 21, 22: // SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU: stop
		return false, false
	case 3, 4, 5, 6, 7, 8, 11, 24, 25, 31: // QUIT ILL TRAP ABRT BUS FPE SEGV XCPU XFSZ SYS
		return true, true
	}
	return true, false
}

func (t *Task) sysRtSigaction(sig, act, oldact, size uint64) uint64 {
	if size != 8 {
		return errRet(EINVAL)
	}
	if sig < 1 || sig > nSig || (act != 0 && (sig == sigKILL || sig == sigSTOP)) {
		return errRet(EINVAL)
	}
	var nb []byte
	if act != 0 {
		var e Errno
		if nb, e = t.readBuf(act, 32); e != 0 {
			return errRet(e)
		}
	}
	tg := t.tg
	tg.mu.Lock()
	old := tg.sigactions[sig]
	if nb != nil {
		le := binary.LittleEndian
		tg.sigactions[sig] = sigaction{handler: le.Uint64(nb[0:]), flags: le.Uint64(nb[8:]),
			restorer: le.Uint64(nb[16:]), mask: le.Uint64(nb[24:]) &^ (1<<(sigKILL-1) | 1<<(sigSTOP-1))}
	}
	tg.mu.Unlock()
	if oldact != 0 {
		b := make([]byte, 32)
		le := binary.LittleEndian
		le.PutUint64(b[0:], old.handler)
		le.PutUint64(b[8:], old.flags)
		le.PutUint64(b[16:], old.restorer)
		le.PutUint64(b[24:], old.mask)
		if e := t.writeBytes(oldact, b); e != 0 {
			return errRet(e)
		}
	}
	return 0
}

func (t *Task) sysRtSigprocmask(how int, set, oldset, size uint64) uint64 {
	if size != 8 {
		return errRet(EINVAL)
	}
	old := t.sigmask
	if set != 0 {
		v, e := t.getU64(set)
		if e != 0 {
			return errRet(e)
		}
		switch how {
		case 0: // SIG_BLOCK
			t.sigmask |= v
		case 1: // SIG_UNBLOCK
			t.sigmask &^= v
		case 2: // SIG_SETMASK
			t.sigmask = v
		default:
			return errRet(EINVAL)
		}
		t.sigmask &^= 1<<(sigKILL-1) | 1<<(sigSTOP-1)
	}
	if oldset != 0 {
		if e := t.putU64(oldset, old); e != 0 {
			return errRet(e)
		}
	}
	return 0
}

const (
	ssOnstack   = 1
	ssDisable   = 2
	minSigstksz = 2048
)

func (t *Task) sysSigaltstack(ss, oss uint64) uint64 {
	if oss != 0 {
		b := make([]byte, 24)
		binary.LittleEndian.PutUint64(b[0:], t.altstack[0])
		binary.LittleEndian.PutUint32(b[8:], uint32(t.altstack[1]))
		binary.LittleEndian.PutUint64(b[16:], t.altstack[2])
		if t.altstack[2] == 0 {
			binary.LittleEndian.PutUint32(b[8:], ssDisable)
		}
		if e := t.writeBytes(oss, b); e != 0 {
			return errRet(e)
		}
	}
	if ss != 0 {
		b, e := t.readBuf(ss, 24)
		if e != 0 {
			return errRet(e)
		}
		sp := binary.LittleEndian.Uint64(b[0:])
		flags := uint64(binary.LittleEndian.Uint32(b[8:]))
		size := binary.LittleEndian.Uint64(b[16:])
		switch {
		case flags&ssDisable != 0:
			t.altstack = [3]uint64{0, ssDisable, 0}
		case flags&^uint64(1<<31) != 0:
			return errRet(EINVAL)
		case size < minSigstksz:
			return errRet(ENOMEM)
		default:
			t.altstack = [3]uint64{sp, flags, size}
		}
	}
	return 0
}

// sysTgkill sends sig to thread tid of group tgid (tid 0: the process).
func (t *Task) sysTgkill(tgid, tid int32, sig int) uint64 {
	if sig < 0 || sig > nSig {
		return errRet(EINVAL)
	}
	tg := t.tg
	if tgid != tg.pid && tgid != 0 && tgid != -1 {
		return errRet(ESRCH)
	}
	if tid != 0 {
		tg.mu.Lock()
		_, ok := tg.tasks[tid]
		tg.mu.Unlock()
		if !ok {
			return errRet(ESRCH)
		}
	}
	if sig == 0 {
		return 0
	}
	tg.mu.Lock()
	act := tg.sigactions[sig]
	tg.mu.Unlock()
	switch {
	case act.handler == 1: // SIG_IGN
		return 0
	case act.handler == 0 || sig == sigKILL:
		if term, core := defaultTerminates(sig); term {
			tg.exitGroup(ExitStatus{Signal: sig, Core: core})
		}
		return 0
	}
	name := "signal delivery to a guest handler"
	if tg.k.noteUnimplemented(name) {
		tg.k.logf("unimplemented %s (signal %d to thread %d): signal dropped", name, sig, tid)
	}
	return 0
}
