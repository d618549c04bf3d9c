// Package tasks plays the Linux kernel for guest programs: tasks (threads)
// and thread groups (processes), the run loop, syscalls, futexes, signals'
// delivery, open files and the guest's view of the file system. Both guest
// architectures share one implementation; each arch is one value of the
// arch table (task.go: syscall names and registers, struct layouts, CPU
// construction through loadImage), not type switches.
//
// # Lock order
//
// Outer locks first; a lock is only taken while holding the locks above it
// on its path, never the reverse. Every path ends in a leaf.
//
//	Kernel.procMu                      process tree (procs, ThreadGroup.proc)
//	├── Kernel.mu                      pids, groups, trace, unimplemented counts
//	└── ThreadGroup.mu                 (also reached without procMu)
//	    ├── fdTable.mu
//	    ├── detSched.mu                arming ITIMER_REAL, reading the virtual clock
//	    └── vm.MM.mu → vm.SharedObject.mu
//	signals.Sighand.Siglock            actions, pending queues, blocked masks
//	└── ThreadGroup.mu
//	vm.MM.BrkMu                        brk(2) as one step
//	└── ThreadGroup.mu → vm.MM.mu      (RLIMIT_DATA/AS, then the mapping)
//	futexTable.mu → vm.MM.mu           the futex word is read under the bucket
//	tgTimers.mu → detSched.mu          POSIX timers, ITIMER_VIRTUAL/PROF
//	ktimer.mu → detSched.mu
//	epollInstance.mu → fdTable.mu → the files' own locks (readiness)
//
// Leaves, taken alone or last: the per-file locks (pipe.mu, eventFD.mu,
// sock.mu, timerfd's, signalfd's, memfd's), flockTable.mu, ipcNamespace.mu,
// Task.notifyMu, vm.SharedObject.mu, and detSched.mu itself: timer
// callbacks send signals and take group locks, so detSched releases its
// mutex around them (fireTimersLocked).
//
// Functions whose names end in Locked run with the lock their comment
// names held; fields say what protects them.
//
// # Files
//
// kernel.go (Kernel, Start), image.go (the image setup Start and execve
// share), process.go (fork, exec, exit, wait), task.go (the arch table,
// the run loop and exit to user), sched.go (the deterministic scheduler),
// syscall.go, syscall_table.go, syscalltab.go, sysno.go and the generated
// sysnames.go (the syscall table: number → name → sysno → handler),
// fileops.go (the
// file-operations interface every open-file kind implements), signal.go,
// uprobes.go (the uprobes model's hooks into the run loop), vfs*.go (the
// confined file system), procfs*.go and devfs.go (synthetic /proc and /dev).
package tasks
