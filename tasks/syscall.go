package tasks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"

	"github.com/uvm-emu/uvm/signals"
)

// errRet encodes -errno as the syscall return value.
func errRet(e Errno) uint64 { return uint64(-int64(e)) }

// arg returns syscall argument i.
func (t *Task) arg(i int) uint64 { return t.cpu.Reg(t.tg.arch.args[i]) }

// syscall handles one syscall exit. It returns true when the task must
// stop running (exit, exit_group), and the result for signal handling.
func (t *Task) syscall() (stop bool, sc syscallResult, restartable bool) {
	a := t.tg.arch
	nr := t.cpu.Reg(a.nr)
	orig0 := t.arg(0)
	ent := a.entry(nr)
	no := ent.no
	k := t.tg.k
	k.syscalls[no].Add(1)
	var args [6]uint64
	if k.tracing() {
		for i := range args {
			args[i] = t.arg(i)
		}
	}
	var ret uint64
	var done bool
	switch no {
	case sysExit:
		k.traceSyscall(t, no, nr, args, nil)
		t.exitThread(int(int32(t.arg(0))))
		return true, sc, false
	case sysExitGroup:
		k.traceSyscall(t, no, nr, args, nil)
		t.tg.exitGroup(ExitStatus{Code: int(t.arg(0) & 0xff)})
		return true, sc, false
	case sysExecve, sysExecveat:
		var r uint64
		var replaced bool
		if no == sysExecve {
			r, replaced = t.sysExecve(atFDCWD, t.arg(0), t.arg(1), t.arg(2), 0)
		} else {
			r, replaced = t.sysExecve(int32(t.arg(0)), t.arg(1), t.arg(2), t.arg(3), t.arg(4))
		}
		if replaced {
			k.traceSyscall(t, no, nr, args, &r)
			return t.killed.Load(), sc, false
		}
		t.cpu.SetReg(a.ret, r)
		k.traceSyscall(t, no, nr, args, &r)
		return t.killed.Load(), syscallResult{ret: int64(r), origArg0: orig0, nr: nr}, true
	case sysRtSigreturn:
		t.sysRtSigreturn()
		ret := t.cpu.Reg(a.ret)
		k.traceSyscall(t, no, nr, args, &ret)
		return t.killed.Load(), sc, false
	default:
		if h := ent.named; h != nil && no == sysNone {
			k.countNamed(ent.name)
			var av [6]uint64
			for i := range av {
				av[i] = t.arg(i)
			}
			ret, done = h(t, av), true
			break
		}
		ret, done = t.dispatch(no)
		if h := ent.named; h != nil && !done {
			// In the enum but implemented by name (registerSyscall).
			k.countNamed(ent.name)
			ret, done = h(t, [6]uint64{t.arg(0), t.arg(1), t.arg(2), t.arg(3), t.arg(4), t.arg(5)}), true
		}
	}
	if !done {
		name := fmt.Sprintf("syscall %d", nr)
		if no != sysNone {
			name = fmt.Sprintf("syscall %s (%d)", no, nr)
		} else if n, ok := a.names[nr]; ok {
			name = fmt.Sprintf("syscall %s (%d)", n, nr)
		}
		if t.tg.k.noteUnimplemented(name) {
			t.tg.k.logf("unimplemented %s at pc 0x%x", name, t.cpu.PC())
		}
		ret = errRet(ENOSYS)
	}
	t.cpu.SetReg(a.ret, ret)
	if k.tracing() {
		k.traceSyscall(t, no, nr, args, &ret)
	}
	return t.killed.Load(), syscallResult{ret: int64(ret), origArg0: orig0, nr: nr}, true
}

// traceSyscall records one syscall event (ret nil: it did not return).
func (k *Kernel) traceSyscall(t *Task, no sysno, nr uint64, args [6]uint64, ret *uint64) {
	if !k.tracing() {
		return
	}
	var b strings.Builder
	name := t.tg.arch.names[nr]
	if no == sysNone && namedSyscalls[name] != nil {
		fmt.Fprintf(&b, "%d %s(", t.tid, name)
	} else if no == sysNone {
		fmt.Fprintf(&b, "%d syscall_%d(", t.tid, nr)
	} else {
		fmt.Fprintf(&b, "%d %s(", t.tid, no)
	}
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		if sa, ok := t.traceSockaddrArg(name, i, args, ret); ok && no == sysNone {
			b.WriteString(sa) // socket_trace.go
			continue
		}
		fmt.Fprintf(&b, "%#x", a)
	}
	switch {
	case ret == nil:
		b.WriteString(") = ?")
	case int64(*ret) < 0 && int64(*ret) > -4096:
		fmt.Fprintf(&b, ") = -%d", -int64(*ret))
	default:
		fmt.Fprintf(&b, ") = %#x", *ret)
	}
	k.event("%s", b.String())
}

// syscallHandler implements one syscall from its six argument registers
// and returns the result register (a negative errno, or a restart code).
type syscallHandler func(t *Task, a [6]uint64) uint64

// namedSyscalls are the syscalls implemented outside the sysno enum, by
// their Linux name as both arches' tables spell it (sysnames.go). A file
// that implements a family of syscalls registers them in its init with
// registerSyscall, and touches nothing else. Read-only after init.
var namedSyscalls = map[string]syscallHandler{}

// registerSyscall adds a named syscall (at init time only).
func registerSyscall(name string, h syscallHandler) {
	if _, dup := namedSyscalls[name]; dup {
		panic("tasks: syscall " + name + " registered twice")
	}
	if !knownSyscallName(name) {
		panic("tasks: no arch has a syscall named " + name)
	}
	namedSyscalls[name] = h
}

func knownSyscallName(name string) bool {
	for _, names := range []map[uint64]string{arm64SysNames, amd64SysNames} {
		for _, n := range names {
			if n == name {
				return true
			}
		}
	}
	return false
}

// countNamed counts a call of a named syscall for --stats.
func (k *Kernel) countNamed(name string) {
	k.mu.Lock()
	k.namedCalls[name]++
	k.mu.Unlock()
}

// dispatch runs the handler for no. done is false for syscalls uvm does
// not implement (the caller reports ENOSYS loudly).
func (t *Task) dispatch(no sysno) (ret uint64, done bool) {
	a0, a1, a2, a3 := t.arg(0), t.arg(1), t.arg(2), t.arg(3)
	switch no {
	// files
	case sysRead:
		return t.sysRead(int32(a0), a1, a2, -1), true
	case sysWrite:
		return t.sysWrite(int32(a0), a1, a2, -1), true
	case sysPread64:
		return t.sysRead(int32(a0), a1, a2, int64(a3)), true
	case sysPwrite64:
		return t.sysWrite(int32(a0), a1, a2, int64(a3)), true
	case sysFlock:
		return t.sysFlock(int32(a0), a1), true
	case sysSendfile:
		return t.sysSendfile(int32(a0), int32(a1), a2, a3), true
	case sysReadv:
		return t.sysReadv(int32(a0), a1, a2, false), true
	case sysWritev:
		return t.sysReadv(int32(a0), a1, a2, true), true
	case sysOpen:
		return t.sysOpenat(atFDCWD, a0, a1, a2), true
	case sysOpenat:
		return t.sysOpenat(int32(a0), a1, a2, a3), true
	case sysClose:
		return errOr0(t.tg.fds.close(int32(a0))), true
	case sysLseek:
		return t.sysLseek(int32(a0), int64(a1), int(a2)), true
	case sysStat:
		return t.sysFstatat(atFDCWD, a0, a1, 0), true
	case sysLstat:
		return t.sysFstatat(atFDCWD, a0, a1, atSymlinkNofollow), true
	case sysFstat:
		return t.sysFstat(int32(a0), a1), true
	case sysNewfstatat:
		return t.sysFstatat(int32(a0), a1, a2, a3), true
	case sysStatx:
		return t.sysStatxChecked(int32(a0), a1, a2, a3, t.arg(4)), true
	case sysGetdents64:
		return t.sysGetdents64(int32(a0), a1, a2), true
	case sysReadlink:
		return t.sysReadlinkat(atFDCWD, a0, a1, a2), true
	case sysReadlinkat:
		return t.sysReadlinkat(int32(a0), a1, a2, a3), true
	case sysAccess:
		return t.sysFaccessat2(atFDCWD, a0, a1, 0), true
	case sysFaccessat:
		return t.sysFaccessat2(int32(a0), a1, a2, 0), true
	case sysFaccessat2:
		return t.sysFaccessat2(int32(a0), a1, a2, a3), true
	case sysFcntl:
		return t.sysFcntlSeals(int32(a0), a1, a2), true
	case sysIoctl:
		return t.sysIoctl(int32(a0), a1, a2), true
	case sysDup:
		f, ok := t.tg.fds.get(int32(a0))
		if !ok {
			return errRet(EBADF), true
		}
		fd, e := t.tg.fds.alloc(f, 0, false)
		return retFD(fd, e), true
	case sysDup2:
		if _, ok := t.tg.fds.get(int32(a0)); ok && a0 == a1 {
			return a1, true
		}
		return retOr(t.tg.fds.dupTo(int32(a0), int32(a1), false), a1), true
	case sysDup3:
		if a0 == a1 || a2&^oCLOEXEC != 0 {
			return errRet(EINVAL), true
		}
		return retOr(t.tg.fds.dupTo(int32(a0), int32(a1), a2&oCLOEXEC != 0), a1), true
	case sysPipe:
		return t.sysPipe2(a0, 0), true
	case sysPipe2:
		return t.sysPipe2(a0, a1), true
	case sysUnlink:
		return t.sysUnlinkat(atFDCWD, a0, 0), true
	case sysRmdir:
		return t.sysUnlinkat(atFDCWD, a0, atRemoveDir), true
	case sysUnlinkat:
		return t.sysUnlinkat(int32(a0), a1, a2), true
	case sysMkdir:
		return t.sysMkdirat(atFDCWD, a0, a1), true
	case sysMkdirat:
		return t.sysMkdirat(int32(a0), a1, a2), true
	case sysRename:
		return t.sysRenameat(atFDCWD, a0, atFDCWD, a1), true
	case sysRenameat:
		return t.sysRenameat(int32(a0), a1, int32(a2), a3), true
	case sysRenameat2:
		if t.arg(4) != 0 {
			return errRet(EINVAL), true
		}
		return t.sysRenameat(int32(a0), a1, int32(a2), a3), true
	case sysLink:
		return t.sysLinkat(atFDCWD, a0, atFDCWD, a1, 0), true
	case sysLinkat:
		return t.sysLinkat(int32(a0), a1, int32(a2), a3, t.arg(4)), true
	case sysSymlink:
		return t.sysSymlinkat(a0, atFDCWD, a1), true
	case sysSymlinkat:
		return t.sysSymlinkat(a0, int32(a1), a2), true
	case sysGetcwd:
		return t.sysGetcwd(a0, a1), true
	case sysChdir:
		return t.sysChdir(a0), true
	case sysFchdir:
		return t.sysFchdir(int32(a0)), true
	case sysFtruncate:
		return t.sysFtruncateAny(int32(a0), int64(a1)), true
	case sysFsync, sysFdatasync:
		f, ok := t.tg.fds.get(int32(a0))
		if !ok {
			return errRet(EBADF), true
		}
		if h, isHost := f.hostOS(); isHost {
			// The host file's data reaches its disk; in-kernel objects
			// (pipes, sockets, memfds) have nothing to flush.
			if err := h.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.EROFS) {
				return errRet(errnoOf(err)), true
			}
		}
		return 0, true
	case sysFchmod:
		return t.sysFchmod(int32(a0), a1), true
	case sysChmod:
		return t.sysFchmodat2(atFDCWD, a0, uint32(a1), 0), true
	case sysFchmodat:
		return t.sysFchmodat2(int32(a0), a1, uint32(a2), 0), true
	case sysUmask:
		t.tg.mu.Lock()
		old := t.tg.umask
		t.tg.umask = uint32(a0) & 0o777
		t.tg.mu.Unlock()
		return uint64(old), true
	case sysFadvise64:
		return 0, true
	case sysPoll:
		return t.sysPoll(a0, a1, int64(int32(a2))), true
	case sysPpoll:
		return t.sysPpoll(a0, a1, a2, a3, t.arg(4)), true
	case sysCloseRange:
		return t.sysCloseRange(uint32(a0), uint32(a1), a2), true

	case sysEventfd2:
		return t.sysEventfd2(a0, a1), true
	case sysEpollCreate1:
		return t.sysEpollCreate1(a0), true
	case sysEpollCtl:
		return t.sysEpollCtl(int32(a0), a1, int32(a2), a3), true
	case sysEpollWait, sysEpollPwait:
		return t.sysEpollWait(int32(a0), a1, int32(a2), int64(int32(a3))), true

	// memory
	case sysMmap:
		return t.sysMmap(a0, a1, a2, a3, int32(t.arg(4)), t.arg(5)), true
	case sysMunmap:
		return t.sysMunmap(a0, a1), true
	case sysMprotect:
		return t.sysMprotect(a0, a1, a2), true
	case sysMremap:
		return t.sysMremap(a0, a1, a2, a3, t.arg(4)), true
	case sysBrk:
		return t.sysBrk(a0), true
	case sysMadvise:
		return t.sysMadvise(a0, a1, a2), true
	case sysMsync:
		return t.sysMsync(a0, a1, a2), true
	case sysMincore:
		return t.sysMincore(a0, a1, a2), true
	case sysMembarrier:
		return t.sysMembarrier(a0), true

	// process identity and limits
	case sysGetpid:
		return uint64(t.tg.pid), true
	case sysGettid:
		return uint64(t.tid), true
	case sysGetppid:
		return uint64(t.tg.ppid()), true
	case sysGetuid:
		return uint64(t.creds().uid), true
	case sysGeteuid:
		return uint64(t.creds().euid), true
	case sysGetgid:
		return uint64(t.creds().gid), true
	case sysGetegid:
		return uint64(t.creds().egid), true
	case sysGetresuid:
		c := t.creds()
		return t.sysGetresid(a0, a1, a2, c.uid, c.euid, c.suid), true
	case sysGetresgid:
		c := t.creds()
		return t.sysGetresid(a0, a1, a2, c.gid, c.egid, c.sgid), true
	case sysGetgroups:
		return t.sysGetgroups(int32(a0), a1), true
	case sysGetpgid, sysGetsid:
		pgid, sid, e := t.procIDs(int32(a0))
		if e != 0 {
			return errRet(e), true
		}
		if no == sysGetsid {
			return uint64(sid), true
		}
		return uint64(pgid), true
	case sysGetpgrp:
		pgid, _, _ := t.procIDs(0)
		return uint64(pgid), true
	case sysSetpgid:
		return t.sysSetpgid(int32(a0), int32(a1)), true
	case sysSetsid:
		return t.sysSetsid(), true
	case sysWait4:
		return t.sysWait4(int32(a0), a1, a2, a3), true
	case sysWaitid:
		return t.sysWaitid(a0, int32(a1), a2, a3), true
	case sysFork:
		return t.forkProcess(uint64(signals.SIGCHLD), 0, 0, 0, 0), true
	case sysVfork:
		return t.forkProcess(cloneVM|cloneVfork|uint64(signals.SIGCHLD), 0, 0, 0, 0), true
	case sysUname:
		return t.sysUname(a0), true
	case sysGetrlimit:
		return t.sysPrlimit(0, a0, 0, a1), true
	case sysPrlimit64:
		return t.sysPrlimit(a0, a1, a2, a3), true
	case sysGetrusage:
		return t.sysGetrusage(int64(int32(a0)), a1), true
	case sysSysinfo:
		return t.sysSysinfo(a0), true
	case sysTimes:
		return t.sysTimes(a0), true
	case sysPrctl:
		return t.sysPrctl(a0, a1), true
	case sysArchPrctl:
		return t.sysArchPrctl(a0, a1), true
	case sysSetTidAddress:
		t.clearChildTID = a0
		return uint64(t.tid), true
	case sysSetRobustList:
		if a1 != 24 {
			return errRet(EINVAL), true
		}
		t.robustList = a0
		return 0, true
	case sysPidfdOpen:
		return t.sysPidfdOpen(int32(a0), a1), true
	case sysRseq:
		// Restartable sequences are optional: glibc and Go fall back when
		// registration fails, as on kernels built without CONFIG_RSEQ.
		return errRet(ENOSYS), true
	case sysSchedGetaffinity:
		return t.sysSchedGetaffinity(a1, a2), true
	case sysSchedSetaffinity:
		return 0, true
	case sysSchedYield:
		if t.tg.k.det != nil {
			t.tg.k.det.yield(t)
		} else {
			runtime.Gosched()
		}
		return 0, true
	case sysGetrandom:
		return t.sysGetrandom(a0, a1), true

	// time
	case sysClockGettime:
		return t.sysClockGettime(int32(a0), a1), true
	case sysClockGetres:
		return t.sysClockGetres(int32(a0), a1), true
	case sysGettimeofday:
		return t.sysGettimeofday(a0, a1), true
	case sysTime:
		return t.sysTime(a0), true
	case sysNanosleep:
		return t.sysNanosleep(a0, a1), true
	case sysClockNanosleep:
		return t.sysClockNanosleep(int32(a0), a1, a2, a3), true

	// threads
	case sysClone:
		return t.sysClone(a0, a1, a2, t.arg(t.tg.arch.cloneTLSArg), t.arg(t.tg.arch.cloneCTIDArg)), true
	case sysClone3:
		return t.sysClone3(a0, a1), true
	case sysFutex:
		return t.sysFutex(a0, int(a1), uint32(a2), a3, t.arg(4), uint32(t.arg(5))), true

	// signal state (delivery is the signals layer's job)
	case sysRtSigaction:
		return t.sysRtSigaction(a0, a1, a2, a3), true
	case sysRtSigqueueinfo:
		return t.sysRtSigqueueinfo(int32(a0), 0, int(a1), a2), true
	case sysRtTgsigqueueinfo:
		return t.sysRtSigqueueinfo(int32(a0), int32(a1), int(a2), a3), true
	case sysSetitimer:
		return t.sysSetitimer(a0, a1, a2), true
	case sysGetitimer:
		return t.sysGetitimer(a0, a1), true
	case sysAlarm:
		return t.sysAlarm(a0), true
	case sysRtSigsuspend:
		return t.sysRtSigsuspend(a0, a1), true
	case sysRtSigpending:
		return t.sysRtSigpending(a0, a1), true
	case sysPause:
		return t.sysPause(), true
	case sysRtSigprocmask:
		return t.sysRtSigprocmask(int(a0), a1, a2, a3), true
	case sysSigaltstack:
		return t.sysSigaltstack(a0, a1), true
	case sysTgkill:
		return t.sysTgkill(int32(a0), int32(a1), int(a2)), true
	case sysTkill:
		return t.sysTgkill(t.tg.pid, int32(a0), int(a1)), true
	case sysKill:
		return t.sysKill(int32(a0), int(a1)), true
	}
	return 0, false
}

func errOr0(e Errno) uint64 {
	if e != 0 {
		return errRet(e)
	}
	return 0
}

func retOr(e Errno, v uint64) uint64 {
	if e != 0 {
		return errRet(e)
	}
	return v
}

func retFD(fd int32, e Errno) uint64 {
	if e != 0 {
		return errRet(e)
	}
	return uint64(fd)
}

// putU64 writes a little-endian value into guest memory.
func (t *Task) putU64(addr, v uint64) Errno {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if t.tg.mm.WriteAt(b[:], addr) != nil {
		return EFAULT
	}
	return 0
}

func (t *Task) putU32(addr uint64, v uint32) Errno {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	if t.tg.mm.WriteAt(b[:], addr) != nil {
		return EFAULT
	}
	return 0
}

func (t *Task) getU64(addr uint64) (uint64, Errno) {
	var b [8]byte
	if t.tg.mm.ReadAt(b[:], addr) != nil {
		return 0, EFAULT
	}
	return binary.LittleEndian.Uint64(b[:]), 0
}

// readBuf copies guest memory into a new slice (EFAULT on failure).
// Callers bound n (writes go through writeGuest's chunks).
func (t *Task) readBuf(addr, n uint64) ([]byte, Errno) {
	if n > 1<<24 {
		return nil, EINVAL
	}
	b := make([]byte, n)
	if t.tg.mm.ReadAt(b, addr) != nil {
		return nil, EFAULT
	}
	return b, 0
}

// readPath reads a NUL-terminated path argument.
func (t *Task) readPath(addr uint64) (string, Errno) {
	if addr == 0 {
		return "", EFAULT
	}
	s, err := t.tg.mm.ReadString(addr, 4096)
	if err != nil {
		if strings.Contains(err.Error(), "too long") {
			return "", ENAMETOOLONG
		}
		return "", EFAULT
	}
	return s, 0
}
