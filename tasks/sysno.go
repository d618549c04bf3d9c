package tasks

// sysno is uvm's own syscall numbering: one handler per Linux syscall,
// shared by both guest architectures. Each arch maps its numbers onto it.
type sysno uint16

const (
	sysNone sysno = iota
	sysRead
	sysWrite
	sysOpen
	sysOpenat
	sysClose
	sysStat
	sysFstat
	sysLstat
	sysNewfstatat
	sysStatx
	sysPoll
	sysPpoll
	sysLseek
	sysMmap
	sysMprotect
	sysMunmap
	sysMremap
	sysBrk
	sysMadvise
	sysMsync
	sysMincore
	sysRtSigaction
	sysRtSigprocmask
	sysRtSigreturn
	sysIoctl
	sysPread64
	sysPwrite64
	sysReadv
	sysWritev
	sysAccess
	sysFaccessat
	sysFaccessat2
	sysPipe
	sysPipe2
	sysSelect
	sysPselect6
	sysSchedYield
	sysDup
	sysDup2
	sysDup3
	sysNanosleep
	sysClockNanosleep
	sysGetpid
	sysGettid
	sysGetppid
	sysGetuid
	sysGeteuid
	sysGetgid
	sysGetegid
	sysGetresuid
	sysGetresgid
	sysGetgroups
	sysClone
	sysClone3
	sysFork
	sysVfork
	sysExecve
	sysExit
	sysExitGroup
	sysWait4
	sysKill
	sysTkill
	sysTgkill
	sysUname
	sysFcntl
	sysFsync
	sysFdatasync
	sysFtruncate
	sysGetdents64
	sysGetcwd
	sysChdir
	sysFchdir
	sysRename
	sysRenameat
	sysRenameat2
	sysMkdir
	sysMkdirat
	sysRmdir
	sysUnlink
	sysUnlinkat
	sysReadlink
	sysReadlinkat
	sysFchmod
	sysFchmodat
	sysChmod
	sysUmask
	sysGettimeofday
	sysTime
	sysClockGettime
	sysClockGetres
	sysGetrlimit
	sysPrlimit64
	sysGetrusage
	sysSysinfo
	sysTimes
	sysSigaltstack
	sysArchPrctl
	sysPrctl
	sysFutex
	sysSetTidAddress
	sysSetRobustList
	sysRseq
	sysSchedGetaffinity
	sysSchedSetaffinity
	sysGetrandom
	sysMembarrier
	sysGetpgid
	sysSetpgid
	sysGetpgrp
	sysGetsid
	sysSetsid
	sysFadvise64
	sysCloseRange
	sysRtSigsuspend
	sysRtSigtimedwait
	sysSetitimer
	sysGetitimer
	sysAlarm
	sysPause
	sysEpollCreate1
	sysEpollCtl
	sysEpollPwait
	sysEpollWait
	sysEventfd2
	sysLink
	sysLinkat
	sysSymlink
	sysSymlinkat
	sysRtSigpending
	sysWaitid
	sysExecveat
	sysPidfdOpen
	sysRtSigqueueinfo
	sysRtTgsigqueueinfo
	sysSendfile
	sysFlock
	sysCount
)

// sysNames gives the Linux name of each syscall, for traces and for the
// "unimplemented syscall" message.
var sysNames = [sysCount]string{
	sysRead: "read", sysWrite: "write", sysOpen: "open", sysOpenat: "openat", sysClose: "close",
	sysStat: "stat", sysFstat: "fstat", sysLstat: "lstat", sysNewfstatat: "newfstatat", sysStatx: "statx",
	sysPoll: "poll", sysPpoll: "ppoll", sysLseek: "lseek", sysMmap: "mmap", sysMprotect: "mprotect",
	sysMunmap: "munmap", sysMremap: "mremap", sysBrk: "brk", sysMadvise: "madvise", sysMsync: "msync",
	sysMincore: "mincore", sysRtSigaction: "rt_sigaction", sysRtSigprocmask: "rt_sigprocmask",
	sysRtSigreturn: "rt_sigreturn", sysIoctl: "ioctl", sysPread64: "pread64", sysPwrite64: "pwrite64",
	sysReadv: "readv", sysWritev: "writev", sysAccess: "access", sysFaccessat: "faccessat",
	sysFaccessat2: "faccessat2", sysPipe: "pipe", sysPipe2: "pipe2", sysSelect: "select",
	sysPselect6: "pselect6", sysSchedYield: "sched_yield", sysDup: "dup", sysDup2: "dup2", sysDup3: "dup3",
	sysNanosleep: "nanosleep", sysClockNanosleep: "clock_nanosleep", sysGetpid: "getpid", sysGettid: "gettid",
	sysGetppid: "getppid", sysGetuid: "getuid", sysGeteuid: "geteuid", sysGetgid: "getgid",
	sysGetegid: "getegid", sysGetresuid: "getresuid", sysGetresgid: "getresgid", sysGetgroups: "getgroups",
	sysClone: "clone", sysClone3: "clone3", sysFork: "fork", sysVfork: "vfork", sysExecve: "execve",
	sysExit: "exit", sysExitGroup: "exit_group", sysWait4: "wait4", sysKill: "kill", sysTkill: "tkill",
	sysTgkill: "tgkill", sysUname: "uname", sysFcntl: "fcntl", sysFsync: "fsync", sysFdatasync: "fdatasync",
	sysFtruncate: "ftruncate", sysGetdents64: "getdents64", sysGetcwd: "getcwd", sysChdir: "chdir",
	sysFchdir: "fchdir", sysRename: "rename", sysRenameat: "renameat", sysRenameat2: "renameat2",
	sysMkdir: "mkdir", sysMkdirat: "mkdirat", sysRmdir: "rmdir", sysUnlink: "unlink", sysUnlinkat: "unlinkat",
	sysReadlink: "readlink", sysReadlinkat: "readlinkat", sysFchmod: "fchmod", sysFchmodat: "fchmodat",
	sysChmod: "chmod", sysUmask: "umask", sysGettimeofday: "gettimeofday", sysTime: "time",
	sysClockGettime: "clock_gettime", sysClockGetres: "clock_getres", sysGetrlimit: "getrlimit",
	sysPrlimit64: "prlimit64", sysGetrusage: "getrusage", sysSysinfo: "sysinfo", sysTimes: "times",
	sysSigaltstack: "sigaltstack", sysArchPrctl: "arch_prctl", sysPrctl: "prctl", sysFutex: "futex",
	sysSetTidAddress: "set_tid_address", sysSetRobustList: "set_robust_list", sysRseq: "rseq",
	sysSchedGetaffinity: "sched_getaffinity", sysSchedSetaffinity: "sched_setaffinity",
	sysGetrandom: "getrandom", sysMembarrier: "membarrier", sysGetpgid: "getpgid", sysSetpgid: "setpgid",
	sysGetpgrp: "getpgrp", sysGetsid: "getsid", sysSetsid: "setsid", sysFadvise64: "fadvise64",
	sysCloseRange: "close_range", sysRtSigsuspend: "rt_sigsuspend", sysRtSigtimedwait: "rt_sigtimedwait",
	sysSetitimer: "setitimer", sysGetitimer: "getitimer", sysAlarm: "alarm", sysPause: "pause",
	sysEpollCreate1: "epoll_create1", sysEpollCtl: "epoll_ctl", sysEpollPwait: "epoll_pwait", sysEpollWait: "epoll_wait",
	sysEventfd2: "eventfd2", sysLink: "link", sysLinkat: "linkat", sysSymlink: "symlink",
	sysSymlinkat: "symlinkat", sysRtSigpending: "rt_sigpending",
	sysWaitid: "waitid", sysExecveat: "execveat", sysPidfdOpen: "pidfd_open",
	sysRtSigqueueinfo: "rt_sigqueueinfo", sysRtTgsigqueueinfo: "rt_tgsigqueueinfo",
	sysSendfile: "sendfile", sysFlock: "flock",
}

func (s sysno) String() string {
	if s < sysCount && sysNames[s] != "" {
		return sysNames[s]
	}
	return "?"
}

// arm64Sys maps arm64 (asm-generic) syscall numbers.
var arm64Sys = map[uint64]sysno{
	17: sysGetcwd, 19: sysEventfd2, 20: sysEpollCreate1, 21: sysEpollCtl, 22: sysEpollPwait,
	23: sysDup, 24: sysDup3, 25: sysFcntl, 29: sysIoctl, 32: sysFlock, 34: sysMkdirat, 36: sysSymlinkat, 37: sysLinkat, 35: sysUnlinkat,
	38: sysRenameat, 46: sysFtruncate, 48: sysFaccessat, 49: sysChdir, 50: sysFchdir, 52: sysFchmod,
	53: sysFchmodat, 56: sysOpenat, 57: sysClose, 59: sysPipe2, 61: sysGetdents64, 62: sysLseek,
	63: sysRead, 64: sysWrite, 65: sysReadv, 66: sysWritev, 67: sysPread64, 68: sysPwrite64, 71: sysSendfile,
	72: sysPselect6, 73: sysPpoll, 78: sysReadlinkat, 79: sysNewfstatat, 80: sysFstat, 82: sysFsync,
	83: sysFdatasync, 93: sysExit, 95: sysWaitid, 94: sysExitGroup, 96: sysSetTidAddress, 98: sysFutex,
	99: sysSetRobustList, 101: sysNanosleep, 102: sysGetitimer, 103: sysSetitimer,
	113: sysClockGettime, 114: sysClockGetres, 115: sysClockNanosleep, 122: sysSchedSetaffinity,
	123: sysSchedGetaffinity, 124: sysSchedYield, 129: sysKill, 130: sysTkill, 131: sysTgkill,
	132: sysSigaltstack, 133: sysRtSigsuspend, 134: sysRtSigaction, 135: sysRtSigprocmask, 136: sysRtSigpending,
	137: sysRtSigtimedwait, 138: sysRtSigqueueinfo, 240: sysRtTgsigqueueinfo, 139: sysRtSigreturn, 148: sysGetresuid, 150: sysGetresgid,
	153: sysTimes, 154: sysSetpgid, 155: sysGetpgid, 156: sysGetsid, 157: sysSetsid,
	158: sysGetgroups, 160: sysUname, 163: sysGetrlimit, 165: sysGetrusage, 166: sysUmask,
	167: sysPrctl, 169: sysGettimeofday, 172: sysGetpid, 173: sysGetppid, 174: sysGetuid,
	175: sysGeteuid, 176: sysGetgid, 177: sysGetegid, 178: sysGettid, 179: sysSysinfo,
	214: sysBrk, 215: sysMunmap, 216: sysMremap, 220: sysClone, 221: sysExecve, 222: sysMmap,
	223: sysFadvise64, 226: sysMprotect, 227: sysMsync, 232: sysMincore, 233: sysMadvise,
	260: sysWait4, 261: sysPrlimit64, 276: sysRenameat2, 278: sysGetrandom, 281: sysExecveat, 283: sysMembarrier,
	291: sysStatx, 293: sysRseq, 434: sysPidfdOpen, 435: sysClone3, 436: sysCloseRange, 439: sysFaccessat2,
}

// amd64Sys maps x86-64 syscall numbers.
var amd64Sys = map[uint64]sysno{
	0: sysRead, 1: sysWrite, 2: sysOpen, 3: sysClose, 4: sysStat, 5: sysFstat, 6: sysLstat,
	7: sysPoll, 8: sysLseek, 9: sysMmap, 10: sysMprotect, 11: sysMunmap, 12: sysBrk,
	13: sysRtSigaction, 14: sysRtSigprocmask, 127: sysRtSigpending, 15: sysRtSigreturn, 16: sysIoctl, 17: sysPread64,
	18: sysPwrite64, 19: sysReadv, 20: sysWritev, 21: sysAccess, 22: sysPipe, 23: sysSelect,
	24: sysSchedYield, 25: sysMremap, 26: sysMsync, 27: sysMincore, 28: sysMadvise, 32: sysDup,
	33: sysDup2, 34: sysPause, 35: sysNanosleep, 36: sysGetitimer, 37: sysAlarm, 38: sysSetitimer,
	39: sysGetpid, 40: sysSendfile, 56: sysClone, 57: sysFork, 58: sysVfork, 59: sysExecve, 60: sysExit,
	61: sysWait4, 62: sysKill, 63: sysUname, 72: sysFcntl, 73: sysFlock, 74: sysFsync, 75: sysFdatasync,
	77: sysFtruncate, 79: sysGetcwd, 80: sysChdir, 81: sysFchdir, 82: sysRename, 83: sysMkdir,
	84: sysRmdir, 86: sysLink, 87: sysUnlink, 88: sysSymlink, 89: sysReadlink, 90: sysChmod, 91: sysFchmod, 95: sysUmask,
	96: sysGettimeofday, 97: sysGetrlimit, 98: sysGetrusage, 99: sysSysinfo, 100: sysTimes,
	102: sysGetuid, 104: sysGetgid, 107: sysGeteuid, 108: sysGetegid, 109: sysSetpgid,
	110: sysGetppid, 111: sysGetpgrp, 112: sysSetsid, 115: sysGetgroups, 118: sysGetresuid,
	120: sysGetresgid, 121: sysGetpgid, 124: sysGetsid, 128: sysRtSigtimedwait, 129: sysRtSigqueueinfo, 297: sysRtTgsigqueueinfo,
	130: sysRtSigsuspend, 131: sysSigaltstack, 157: sysPrctl, 158: sysArchPrctl, 186: sysGettid,
	200: sysTkill, 201: sysTime, 202: sysFutex, 203: sysSchedSetaffinity, 204: sysSchedGetaffinity,
	217: sysGetdents64, 218: sysSetTidAddress, 221: sysFadvise64, 228: sysClockGettime,
	229: sysClockGetres, 230: sysClockNanosleep, 231: sysExitGroup, 232: sysEpollWait, 233: sysEpollCtl,
	234: sysTgkill, 257: sysOpenat, 258: sysMkdirat, 262: sysNewfstatat, 263: sysUnlinkat, 265: sysLinkat, 266: sysSymlinkat,
	264: sysRenameat, 267: sysReadlinkat, 268: sysFchmodat, 269: sysFaccessat, 270: sysPselect6,
	271: sysPpoll, 247: sysWaitid, 273: sysSetRobustList, 322: sysExecveat, 281: sysEpollPwait, 290: sysEventfd2,
	291: sysEpollCreate1, 292: sysDup3, 293: sysPipe2, 302: sysPrlimit64, 316: sysRenameat2,
	318: sysGetrandom, 324: sysMembarrier, 332: sysStatx, 334: sysRseq, 434: sysPidfdOpen, 435: sysClone3,
	436: sysCloseRange, 439: sysFaccessat2,
}
