package tasks

import (
	"errors"
	"runtime"
	"syscall"

	"github.com/uvm-emu/uvm/internal/signals"
)

// sysCallTable is Linux's sys_call_table for uvm's own numbering: the
// handler of every syscall in the sysno enum that is implemented here,
// by the arches' shared number (each arch maps its numbers onto sysno in
// sysno.go). Syscalls outside the enum are registered by name
// (registerSyscall) in the file that implements their family; the
// per-arch dense tables (syscalltab.go) hold whichever handler a number
// has. exit, exit_group, execve, execveat and rt_sigreturn are not here:
// they do not return to the caller normally, so Task.syscall runs them
// itself. Handlers take the six argument registers and return the result
// register (a negative errno or a restart code). Read-only after init.
var sysCallTable [sysCount]syscallHandler

func init() {
	// Set in init, not in the declaration: handlers reach code that
	// reads the table (execve's image setup, fork), which Go would
	// report as an initialization cycle.
	sysCallTable = [sysCount]syscallHandler{
		// files
		sysRead:       func(t *Task, a [6]uint64) uint64 { return t.sysRead(int32(a[0]), a[1], a[2], -1) },
		sysWrite:      func(t *Task, a [6]uint64) uint64 { return t.sysWrite(int32(a[0]), a[1], a[2], -1) },
		sysPread64:    func(t *Task, a [6]uint64) uint64 { return t.sysRead(int32(a[0]), a[1], a[2], int64(a[3])) },
		sysPwrite64:   func(t *Task, a [6]uint64) uint64 { return t.sysWrite(int32(a[0]), a[1], a[2], int64(a[3])) },
		sysFlock:      func(t *Task, a [6]uint64) uint64 { return t.sysFlock(int32(a[0]), a[1]) },
		sysSendfile:   func(t *Task, a [6]uint64) uint64 { return t.sysSendfile(int32(a[0]), int32(a[1]), a[2], a[3]) },
		sysReadv:      func(t *Task, a [6]uint64) uint64 { return t.sysReadv(int32(a[0]), a[1], a[2], false) },
		sysWritev:     func(t *Task, a [6]uint64) uint64 { return t.sysReadv(int32(a[0]), a[1], a[2], true) },
		sysOpen:       func(t *Task, a [6]uint64) uint64 { return t.sysOpenat(atFDCWD, a[0], a[1], a[2]) },
		sysOpenat:     func(t *Task, a [6]uint64) uint64 { return t.sysOpenat(int32(a[0]), a[1], a[2], a[3]) },
		sysClose:      func(t *Task, a [6]uint64) uint64 { return errOr0(t.tg.fds.close(int32(a[0]))) },
		sysLseek:      func(t *Task, a [6]uint64) uint64 { return t.sysLseek(int32(a[0]), int64(a[1]), int(a[2])) },
		sysStat:       func(t *Task, a [6]uint64) uint64 { return t.sysFstatat(atFDCWD, a[0], a[1], 0) },
		sysLstat:      func(t *Task, a [6]uint64) uint64 { return t.sysFstatat(atFDCWD, a[0], a[1], atSymlinkNofollow) },
		sysFstat:      func(t *Task, a [6]uint64) uint64 { return t.sysFstat(int32(a[0]), a[1]) },
		sysNewfstatat: func(t *Task, a [6]uint64) uint64 { return t.sysFstatat(int32(a[0]), a[1], a[2], a[3]) },
		sysStatx:      func(t *Task, a [6]uint64) uint64 { return t.sysStatxChecked(int32(a[0]), a[1], a[2], a[3], a[4]) },
		sysGetdents64: func(t *Task, a [6]uint64) uint64 { return t.sysGetdents64(int32(a[0]), a[1], a[2]) },
		sysReadlink:   func(t *Task, a [6]uint64) uint64 { return t.sysReadlinkat(atFDCWD, a[0], a[1], a[2]) },
		sysReadlinkat: func(t *Task, a [6]uint64) uint64 { return t.sysReadlinkat(int32(a[0]), a[1], a[2], a[3]) },
		sysAccess:     func(t *Task, a [6]uint64) uint64 { return t.sysFaccessat2(atFDCWD, a[0], a[1], 0) },
		sysFaccessat:  func(t *Task, a [6]uint64) uint64 { return t.sysFaccessat2(int32(a[0]), a[1], a[2], 0) },
		sysFaccessat2: func(t *Task, a [6]uint64) uint64 { return t.sysFaccessat2(int32(a[0]), a[1], a[2], a[3]) },
		sysFcntl:      func(t *Task, a [6]uint64) uint64 { return t.sysFcntlSeals(int32(a[0]), a[1], a[2]) },
		sysIoctl:      func(t *Task, a [6]uint64) uint64 { return t.sysIoctl(int32(a[0]), a[1], a[2]) },
		sysDup: func(t *Task, a [6]uint64) uint64 {
			f, ok := t.tg.fds.get(int32(a[0]))
			if !ok {
				return errRet(EBADF)
			}
			fd, e := t.tg.fds.alloc(f, 0, false)
			return retFD(fd, e)
		},
		sysDup2: func(t *Task, a [6]uint64) uint64 {
			if _, ok := t.tg.fds.get(int32(a[0])); ok && a[0] == a[1] {
				return a[1]
			}
			return retOr(t.tg.fds.dupTo(int32(a[0]), int32(a[1]), false), a[1])
		},
		sysDup3: func(t *Task, a [6]uint64) uint64 {
			if a[0] == a[1] || a[2]&^oCLOEXEC != 0 {
				return errRet(EINVAL)
			}
			return retOr(t.tg.fds.dupTo(int32(a[0]), int32(a[1]), a[2]&oCLOEXEC != 0), a[1])
		},
		sysPipe:     func(t *Task, a [6]uint64) uint64 { return t.sysPipe2(a[0], 0) },
		sysPipe2:    func(t *Task, a [6]uint64) uint64 { return t.sysPipe2(a[0], a[1]) },
		sysUnlink:   func(t *Task, a [6]uint64) uint64 { return t.sysUnlinkat(atFDCWD, a[0], 0) },
		sysRmdir:    func(t *Task, a [6]uint64) uint64 { return t.sysUnlinkat(atFDCWD, a[0], atRemoveDir) },
		sysUnlinkat: func(t *Task, a [6]uint64) uint64 { return t.sysUnlinkat(int32(a[0]), a[1], a[2]) },
		sysMkdir:    func(t *Task, a [6]uint64) uint64 { return t.sysMkdirat(atFDCWD, a[0], a[1]) },
		sysMkdirat:  func(t *Task, a [6]uint64) uint64 { return t.sysMkdirat(int32(a[0]), a[1], a[2]) },
		sysRename:   func(t *Task, a [6]uint64) uint64 { return t.sysRenameat(atFDCWD, a[0], atFDCWD, a[1]) },
		sysRenameat: func(t *Task, a [6]uint64) uint64 { return t.sysRenameat(int32(a[0]), a[1], int32(a[2]), a[3]) },
		sysRenameat2: func(t *Task, a [6]uint64) uint64 {
			if a[4] != 0 {
				return errRet(EINVAL)
			}
			return t.sysRenameat(int32(a[0]), a[1], int32(a[2]), a[3])
		},
		sysLink:      func(t *Task, a [6]uint64) uint64 { return t.sysLinkat(atFDCWD, a[0], atFDCWD, a[1], 0) },
		sysLinkat:    func(t *Task, a [6]uint64) uint64 { return t.sysLinkat(int32(a[0]), a[1], int32(a[2]), a[3], a[4]) },
		sysSymlink:   func(t *Task, a [6]uint64) uint64 { return t.sysSymlinkat(a[0], atFDCWD, a[1]) },
		sysSymlinkat: func(t *Task, a [6]uint64) uint64 { return t.sysSymlinkat(a[0], int32(a[1]), a[2]) },
		sysGetcwd:    func(t *Task, a [6]uint64) uint64 { return t.sysGetcwd(a[0], a[1]) },
		sysChdir:     func(t *Task, a [6]uint64) uint64 { return t.sysChdir(a[0]) },
		sysFchdir:    func(t *Task, a [6]uint64) uint64 { return t.sysFchdir(int32(a[0])) },
		sysFtruncate: func(t *Task, a [6]uint64) uint64 { return t.sysFtruncateAny(int32(a[0]), int64(a[1])) },
		sysFsync:     sysFsyncHandler,
		sysFdatasync: sysFsyncHandler,
		sysFchmod:    func(t *Task, a [6]uint64) uint64 { return t.sysFchmod(int32(a[0]), a[1]) },
		sysChmod:     func(t *Task, a [6]uint64) uint64 { return t.sysFchmodat2(atFDCWD, a[0], uint32(a[1]), 0) },
		sysFchmodat:  func(t *Task, a [6]uint64) uint64 { return t.sysFchmodat2(int32(a[0]), a[1], uint32(a[2]), 0) },
		sysUmask: func(t *Task, a [6]uint64) uint64 {
			t.tg.mu.Lock()
			old := t.tg.umask
			t.tg.umask = uint32(a[0]) & 0o777
			t.tg.mu.Unlock()
			return uint64(old)
		},
		sysFadvise64:    func(t *Task, a [6]uint64) uint64 { return 0 },
		sysPoll:         func(t *Task, a [6]uint64) uint64 { return t.sysPoll(a[0], a[1], int64(int32(a[2]))) },
		sysPpoll:        func(t *Task, a [6]uint64) uint64 { return t.sysPpoll(a[0], a[1], a[2], a[3], a[4]) },
		sysCloseRange:   func(t *Task, a [6]uint64) uint64 { return t.sysCloseRange(uint32(a[0]), uint32(a[1]), a[2]) },
		sysEventfd2:     func(t *Task, a [6]uint64) uint64 { return t.sysEventfd2(a[0], a[1]) },
		sysEpollCreate1: func(t *Task, a [6]uint64) uint64 { return t.sysEpollCreate1(a[0]) },
		sysEpollCtl:     func(t *Task, a [6]uint64) uint64 { return t.sysEpollCtl(int32(a[0]), a[1], int32(a[2]), a[3]) },
		sysEpollWait:    sysEpollWaitHandler,
		sysEpollPwait:   sysEpollPwaitHandler,
		// memory
		sysMmap:       func(t *Task, a [6]uint64) uint64 { return t.sysMmap(a[0], a[1], a[2], a[3], int32(a[4]), a[5]) },
		sysMunmap:     func(t *Task, a [6]uint64) uint64 { return t.sysMunmap(a[0], a[1]) },
		sysMprotect:   func(t *Task, a [6]uint64) uint64 { return t.sysMprotect(a[0], a[1], a[2]) },
		sysMremap:     func(t *Task, a [6]uint64) uint64 { return t.sysMremap(a[0], a[1], a[2], a[3], a[4]) },
		sysBrk:        func(t *Task, a [6]uint64) uint64 { return t.sysBrk(a[0]) },
		sysMadvise:    func(t *Task, a [6]uint64) uint64 { return t.sysMadvise(a[0], a[1], a[2]) },
		sysMsync:      func(t *Task, a [6]uint64) uint64 { return t.sysMsync(a[0], a[1], a[2]) },
		sysMincore:    func(t *Task, a [6]uint64) uint64 { return t.sysMincore(a[0], a[1], a[2]) },
		sysMembarrier: func(t *Task, a [6]uint64) uint64 { return t.sysMembarrier(a[0]) },
		// process identity and limits
		sysGetpid:  func(t *Task, a [6]uint64) uint64 { return uint64(t.tg.pid) },
		sysGettid:  func(t *Task, a [6]uint64) uint64 { return uint64(t.tid) },
		sysGetppid: func(t *Task, a [6]uint64) uint64 { return uint64(t.tg.ppid()) },
		sysGetuid:  func(t *Task, a [6]uint64) uint64 { return uint64(t.creds().uid) },
		sysGeteuid: func(t *Task, a [6]uint64) uint64 { return uint64(t.creds().euid) },
		sysGetgid:  func(t *Task, a [6]uint64) uint64 { return uint64(t.creds().gid) },
		sysGetegid: func(t *Task, a [6]uint64) uint64 { return uint64(t.creds().egid) },
		sysGetresuid: func(t *Task, a [6]uint64) uint64 {
			c := t.creds()
			return t.sysGetresid(a[0], a[1], a[2], c.uid, c.euid, c.suid)
		},
		sysGetresgid: func(t *Task, a [6]uint64) uint64 {
			c := t.creds()
			return t.sysGetresid(a[0], a[1], a[2], c.gid, c.egid, c.sgid)
		},
		sysGetgroups: func(t *Task, a [6]uint64) uint64 { return t.sysGetgroups(int32(a[0]), a[1]) },
		sysGetpgid: func(t *Task, a [6]uint64) uint64 {
			pgid, _, e := t.procIDs(int32(a[0]))
			return retOr(e, uint64(pgid))
		},
		sysGetsid: func(t *Task, a [6]uint64) uint64 {
			_, sid, e := t.procIDs(int32(a[0]))
			return retOr(e, uint64(sid))
		},
		sysGetpgrp: func(t *Task, a [6]uint64) uint64 {
			pgid, _, _ := t.procIDs(0)
			return uint64(pgid)
		},
		sysSetpgid: func(t *Task, a [6]uint64) uint64 { return t.sysSetpgid(int32(a[0]), int32(a[1])) },
		sysSetsid:  func(t *Task, a [6]uint64) uint64 { return t.sysSetsid() },
		sysWait4:   func(t *Task, a [6]uint64) uint64 { return t.sysWait4(int32(a[0]), a[1], a[2], a[3]) },
		sysWaitid:  func(t *Task, a [6]uint64) uint64 { return t.sysWaitid(a[0], int32(a[1]), a[2], a[3]) },
		sysFork:    func(t *Task, a [6]uint64) uint64 { return t.forkProcess(uint64(signals.SIGCHLD), 0, 0, 0, 0) },
		sysVfork: func(t *Task, a [6]uint64) uint64 {
			return t.forkProcess(cloneVM|cloneVfork|uint64(signals.SIGCHLD), 0, 0, 0, 0)
		},
		sysUname:     func(t *Task, a [6]uint64) uint64 { return t.sysUname(a[0]) },
		sysGetrlimit: func(t *Task, a [6]uint64) uint64 { return t.sysPrlimit(0, a[0], 0, a[1]) },
		sysPrlimit64: func(t *Task, a [6]uint64) uint64 { return t.sysPrlimit(a[0], a[1], a[2], a[3]) },
		sysGetrusage: func(t *Task, a [6]uint64) uint64 { return t.sysGetrusage(int64(int32(a[0])), a[1]) },
		sysSysinfo:   func(t *Task, a [6]uint64) uint64 { return t.sysSysinfo(a[0]) },
		sysTimes:     func(t *Task, a [6]uint64) uint64 { return t.sysTimes(a[0]) },
		sysPrctl:     func(t *Task, a [6]uint64) uint64 { return t.sysPrctl(a[0], a[1]) },
		sysArchPrctl: func(t *Task, a [6]uint64) uint64 { return t.sysArchPrctl(a[0], a[1]) },
		sysSetTidAddress: func(t *Task, a [6]uint64) uint64 {
			t.clearChildTID = a[0]
			return uint64(t.tid)
		},
		sysSetRobustList: func(t *Task, a [6]uint64) uint64 {
			if a[1] != 24 {
				return errRet(EINVAL)
			}
			t.robustList = a[0]
			return 0
		},
		sysPidfdOpen: func(t *Task, a [6]uint64) uint64 { return t.sysPidfdOpen(int32(a[0]), a[1]) },
		sysRseq: func(t *Task, a [6]uint64) uint64 {
			// Restartable sequences are optional: glibc and Go fall back when
			// registration fails, as on kernels built without CONFIG_RSEQ.
			return errRet(ENOSYS)
		},
		sysSchedGetaffinity: func(t *Task, a [6]uint64) uint64 { return t.sysSchedGetaffinity(a[1], a[2]) },
		sysSchedSetaffinity: func(t *Task, a [6]uint64) uint64 { return 0 },
		sysSchedYield: func(t *Task, a [6]uint64) uint64 {
			if t.tg.k.det != nil {
				t.tg.k.det.yield(t)
			} else {
				runtime.Gosched()
			}
			return 0
		},
		sysGetrandom: func(t *Task, a [6]uint64) uint64 { return t.sysGetrandom(a[0], a[1]) },
		// time
		sysClockGettime:   func(t *Task, a [6]uint64) uint64 { return t.sysClockGettime(int32(a[0]), a[1]) },
		sysClockGetres:    func(t *Task, a [6]uint64) uint64 { return t.sysClockGetres(int32(a[0]), a[1]) },
		sysGettimeofday:   func(t *Task, a [6]uint64) uint64 { return t.sysGettimeofday(a[0], a[1]) },
		sysTime:           func(t *Task, a [6]uint64) uint64 { return t.sysTime(a[0]) },
		sysNanosleep:      func(t *Task, a [6]uint64) uint64 { return t.sysNanosleep(a[0], a[1]) },
		sysClockNanosleep: func(t *Task, a [6]uint64) uint64 { return t.sysClockNanosleep(int32(a[0]), a[1], a[2], a[3]) },
		// threads
		sysClone: func(t *Task, a [6]uint64) uint64 {
			return t.sysClone(a[0], a[1], a[2], a[t.tg.arch.cloneTLSArg], a[t.tg.arch.cloneCTIDArg])
		},
		sysClone3: func(t *Task, a [6]uint64) uint64 { return t.sysClone3(a[0], a[1]) },
		sysFutex: func(t *Task, a [6]uint64) uint64 {
			return t.sysFutex(a[0], int(a[1]), uint32(a[2]), a[3], a[4], uint32(a[5]))
		},
		// signal state (delivery is the signals layer's job)
		sysRtSigaction:    func(t *Task, a [6]uint64) uint64 { return t.sysRtSigaction(a[0], a[1], a[2], a[3]) },
		sysRtSigqueueinfo: func(t *Task, a [6]uint64) uint64 { return t.sysRtSigqueueinfo(int32(a[0]), 0, int(a[1]), a[2]) },
		sysRtTgsigqueueinfo: func(t *Task, a [6]uint64) uint64 {
			return t.sysRtSigqueueinfo(int32(a[0]), int32(a[1]), int(a[2]), a[3])
		},
		sysSetitimer:     func(t *Task, a [6]uint64) uint64 { return t.sysSetitimer(a[0], a[1], a[2]) },
		sysGetitimer:     func(t *Task, a [6]uint64) uint64 { return t.sysGetitimer(a[0], a[1]) },
		sysAlarm:         func(t *Task, a [6]uint64) uint64 { return t.sysAlarm(a[0]) },
		sysRtSigsuspend:  func(t *Task, a [6]uint64) uint64 { return t.sysRtSigsuspend(a[0], a[1]) },
		sysRtSigpending:  func(t *Task, a [6]uint64) uint64 { return t.sysRtSigpending(a[0], a[1]) },
		sysPause:         func(t *Task, a [6]uint64) uint64 { return t.sysPause() },
		sysRtSigprocmask: func(t *Task, a [6]uint64) uint64 { return t.sysRtSigprocmask(int(a[0]), a[1], a[2], a[3]) },
		sysSigaltstack:   func(t *Task, a [6]uint64) uint64 { return t.sysSigaltstack(a[0], a[1]) },
		sysTgkill:        func(t *Task, a [6]uint64) uint64 { return t.sysTgkill(int32(a[0]), int32(a[1]), int(a[2])) },
		sysTkill:         func(t *Task, a [6]uint64) uint64 { return t.sysTgkill(t.tg.pid, int32(a[0]), int(a[1])) },
		sysKill:          func(t *Task, a [6]uint64) uint64 { return t.sysKill(int32(a[0]), int(a[1])) },
	}
}

// sysFsyncHandler is fsync and fdatasync: a host file's data reaches its
// disk; in-kernel objects (pipes, sockets, memfds) have nothing to flush.
func sysFsyncHandler(t *Task, a [6]uint64) uint64 {
	f, ok := t.tg.fds.get(int32(a[0]))
	if !ok {
		return errRet(EBADF)
	}
	if h, isHost := f.hostOS(); isHost {
		if err := h.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.EROFS) {
			return errRet(errnoOf(err))
		}
	}
	return 0
}

func sysEpollWaitHandler(t *Task, a [6]uint64) uint64 {
	return t.sysEpollWait(int32(a[0]), a[1], int32(a[2]), int64(int32(a[3])))
}

// sysEpollPwaitHandler is epoll_pwait: epoll_wait with the signal mask
// at a[4] (sigsetsize a[5]) installed for the wait; when a signal ends
// it (EINTR) the mask stays until the handler has run, as
// restore_saved_sigmask_unless does.
func sysEpollPwaitHandler(t *Task, a [6]uint64) uint64 {
	end, e := t.setSigmask(a[4], a[5])
	if e != 0 {
		return errRet(e)
	}
	return end(sysEpollWaitHandler(t, a))
}
