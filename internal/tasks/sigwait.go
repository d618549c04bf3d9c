package tasks

import (
	"encoding/binary"
	"sync"

	"github.com/uvm-emu/uvm/internal/signals"
)

// Synchronous signal acceptance: rt_sigtimedwait (sigwaitinfo,
// sigtimedwait, sigwait) and signalfd (fs/signalfd.c). Both dequeue from
// the calling thread's queue and the group's shared queue, in Linux's
// order, only the signals of their set, and complete SI_TIMER siginfos
// with the timer's overrun.

// dequeueIn takes the next pending signal of set for t.
func (t *Task) dequeueIn(set signals.SigSet) (signals.SigInfo, bool) {
	sh := t.tg.sighand
	sh.Siglock.Lock()
	info, ok := signals.Dequeue(&t.pending, &t.tg.shared, ^set)
	t.recalcLocked()
	sh.Siglock.Unlock()
	if ok {
		t.tg.timerSignalDequeued(&info)
	}
	return info, ok
}

// pendingIn reports whether a signal of set is pending for t.
func (t *Task) pendingIn(set signals.SigSet) bool {
	sh := t.tg.sighand
	sh.Siglock.Lock()
	defer sh.Siglock.Unlock()
	return (t.pending.Set()|t.tg.shared.Set())&set != 0
}

func (t *Task) sysRtSigtimedwait(setAddr, infoAddr, tsAddr, size uint64) uint64 {
	if size != 8 {
		return errRet(EINVAL)
	}
	v, e := t.getU64(setAddr)
	if e != 0 {
		return errRet(e)
	}
	set := signals.SigSet(v) &^ signals.UnblockableMask
	timeout := int64(-1)
	if tsAddr != 0 {
		if timeout, e = t.readTimespec(tsAddr); e != 0 {
			return errRet(e)
		}
	}
	info, ok := t.dequeueIn(set)
	if !ok && timeout != 0 {
		// As Linux: while waiting, the signals of set are unblocked
		// (real_blocked keeps the mask), so that a process-directed one
		// picks this thread; any other deliverable signal ends the wait.
		sh := t.tg.sighand
		sh.Siglock.Lock()
		old := t.blocked
		t.blocked &^= set
		t.recalcLocked()
		sh.Siglock.Unlock()
		timedOut := t.wait(func() bool { return false }, nil, timeout)
		sh.Siglock.Lock()
		t.blocked = old
		t.recalcLocked()
		sh.Siglock.Unlock()
		info, ok = t.dequeueIn(set)
		if !ok {
			if timedOut || t.killed.Load() {
				return errRet(EAGAIN)
			}
			return errRet(EINTR)
		}
	}
	if !ok {
		return errRet(EAGAIN)
	}
	if infoAddr != 0 {
		b := info.Marshal()
		if e := t.writeBytes(infoAddr, b[:]); e != 0 {
			return errRet(e)
		}
	}
	return uint64(info.Signo)
}

// signalFD is a signalfd's open file.
type signalFD struct {
	fileBase
	tg    *ThreadGroup
	owner *Task // the creating thread: whose queue poll looks at
	mu    sync.Mutex
	mask  signals.SigSet
}

const (
	sfdCloexec  = oCLOEXEC
	sfdNonblock = oNONBLOCK
	// signalfdSiginfoSize is sizeof(struct signalfd_siginfo).
	signalfdSiginfoSize = 128
)

func (s *signalFD) getMask() signals.SigSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mask
}

func (t *Task) sysSignalfd4(fd int32, maskAddr, size, flags uint64) uint64 {
	if size != 8 {
		return errRet(EINVAL)
	}
	if flags&^uint64(sfdCloexec|sfdNonblock) != 0 {
		return errRet(EINVAL)
	}
	v, e := t.getU64(maskAddr)
	if e != 0 {
		return errRet(e)
	}
	mask := signals.SigSet(v) &^ signals.UnblockableMask
	if fd != -1 {
		f, ok := t.tg.fds.get(fd)
		if !ok {
			return errRet(EBADF)
		}
		s, ok := f.ops.(*signalFD)
		if !ok {
			return errRet(EINVAL)
		}
		s.mu.Lock()
		s.mask = mask
		s.mu.Unlock()
		t.tg.notifySignalQueued() // readiness may have changed
		return uint64(fd)
	}
	s := &signalFD{tg: t.tg, owner: t, mask: mask}
	f := &openFile{ops: s, path: "anon_inode:[signalfd]", flags: oRDWR | int(flags&sfdNonblock)}
	nfd, e := t.tg.fds.alloc(f, 0, flags&sfdCloexec != 0)
	return retFD(nfd, e)
}

// wakeup returns a channel closed when a signal is next queued to the
// process (the mask may then have a pending signal).
func (s *signalFD) wakeup() <-chan struct{} { return s.tg.signalWakeup() }

func (s *signalFD) poll(events uint16) uint16 {
	if s.owner.pendingIn(s.getMask()) {
		return events & pollIN
	}
	return 0
}

func (s *signalFD) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if n < signalfdSiginfoSize {
		return nil, EINVAL
	}
	var out []byte
	for uint64(len(out))+signalfdSiginfoSize <= n {
		mask := s.getMask()
		info, ok := t.dequeueIn(mask)
		if !ok {
			if len(out) > 0 {
				break
			}
			if f.flags&oNONBLOCK != 0 {
				return nil, EAGAIN
			}
			ch := t.tg.signalWakeup
			t.wait(func() bool { return t.pendingIn(s.getMask()) }, ch, -1)
			if t.killed.Load() {
				return nil, EINTR
			}
			if !t.pendingIn(s.getMask()) {
				return nil, Errno(erestartsys)
			}
			continue
		}
		out = append(out, signalfdSiginfo(&info)...)
	}
	return out, 0
}

// signalfdSiginfo is struct signalfd_siginfo for info (signalfd_copyinfo).
func signalfdSiginfo(info *signals.SigInfo) []byte {
	b := make([]byte, signalfdSiginfoSize)
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(info.Signo))
	le.PutUint32(b[4:], uint32(info.Errno))
	le.PutUint32(b[8:], uint32(info.Code))
	switch info.Layout() {
	case signals.LayoutKill:
		le.PutUint32(b[12:], uint32(info.Pid))
		le.PutUint32(b[16:], info.UID)
	case signals.LayoutTimer:
		le.PutUint32(b[24:], uint32(info.TimerID))
		le.PutUint32(b[32:], uint32(info.Overrun))
		le.PutUint64(b[48:], info.Value)
		le.PutUint32(b[44:], uint32(info.Value))
	case signals.LayoutPoll:
		le.PutUint32(b[28:], uint32(info.Band))
		le.PutUint32(b[20:], uint32(info.FD))
	case signals.LayoutChld:
		le.PutUint32(b[12:], uint32(info.Pid))
		le.PutUint32(b[16:], info.UID)
		le.PutUint32(b[40:], uint32(info.Status))
		le.PutUint64(b[56:], uint64(info.Utime))
		le.PutUint64(b[64:], uint64(info.Stime))
	case signals.LayoutRT:
		le.PutUint32(b[12:], uint32(info.Pid))
		le.PutUint32(b[16:], info.UID)
		le.PutUint64(b[48:], info.Value)
		le.PutUint32(b[44:], uint32(info.Value))
	case signals.LayoutSys:
		le.PutUint64(b[88:], info.Addr)
		le.PutUint32(b[84:], uint32(info.Syscall))
		le.PutUint32(b[96:], info.Arch)
	default: // the fault layouts
		le.PutUint64(b[72:], info.Addr)
		le.PutUint16(b[80:], uint16(info.AddrLSB))
	}
	return b
}

func init() {
	registerSyscall("rt_sigtimedwait", func(t *Task, a [6]uint64) uint64 { return t.sysRtSigtimedwait(a[0], a[1], a[2], a[3]) })
	registerSyscall("signalfd4", func(t *Task, a [6]uint64) uint64 { return t.sysSignalfd4(int32(a[0]), a[1], a[2], a[3]) })
	registerSyscall("signalfd", func(t *Task, a [6]uint64) uint64 { return t.sysSignalfd4(int32(a[0]), a[1], a[2], 0) })
}
