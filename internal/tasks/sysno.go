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
