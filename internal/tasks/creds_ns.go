package tasks

// Namespaces and mounts are not modelled: unshare, setns, mount, umount2
// and pivot_root answer as Linux answers an unprivileged user (no
// CAP_SYS_ADMIN, unprivileged user namespaces disabled), after the same
// argument checks, whatever the guest's credentials. Each refusal is
// counted in --stats. unshare of what a
// process here never shares (CLONE_FS, CLONE_SYSVSEM, and CLONE_THREAD,
// CLONE_SIGHAND, CLONE_VM where Linux allows them) works as in Linux.

// clone/unshare flags (include/uapi/linux/sched.h).
const (
	cloneNewTime   = 0x80
	cloneNewNS     = 0x20000
	cloneNewCgroup = 0x02000000
	cloneNewUTS    = 0x04000000
	cloneNewIPC    = 0x08000000
	cloneNewUser   = 0x10000000
	cloneNewPID    = 0x20000000
	cloneNewNet    = 0x40000000

	cloneNewAny = cloneNewNS | cloneNewCgroup | cloneNewUTS | cloneNewIPC | cloneNewUser | cloneNewPID | cloneNewNet | cloneNewTime
)

func init() {
	registerSyscall("unshare", func(t *Task, a [6]uint64) uint64 { return t.sysUnshare(a[0]) })
	registerSyscall("setns", func(t *Task, a [6]uint64) uint64 { return t.sysSetns(int32(a[0]), a[1]) })
	registerSyscall("mount", func(t *Task, a [6]uint64) uint64 { return t.sysMount(a[1]) })
	registerSyscall("umount2", func(t *Task, a [6]uint64) uint64 { return t.sysUmount2(a[1]) })
	registerSyscall("pivot_root", func(t *Task, a [6]uint64) uint64 { return t.notPermitted("pivot_root") })
}

// notPermitted is the EPERM of an operation that needs privileges uvm
// never grants, counted in --stats. It is what Linux answers an
// unprivileged user, so it is not reported on stderr (a program's
// stderr stays the same as on Linux).
func (t *Task) notPermitted(what string) uint64 {
	t.tg.k.noteUnimplemented(what + " (EPERM: namespaces and mounts are not modelled)")
	return errRet(EPERM)
}

// cloneNamespaces answers a clone (fork) that asks for new namespaces:
// copy_process's flag checks, then EPERM as for unshare. CLONE_NEWUSER
// too: uvm does not model user namespaces (no uid_map, gid_map or
// setgroups files, no mapped credentials), so it answers as a Linux with
// unprivileged user namespaces disabled (kernel.unprivileged_userns_clone=0)
// rather than create a process that only looks namespaced.
func (t *Task) cloneNamespaces(flags uint64) uint64 {
	if flags&(cloneNewNS|cloneFS) == cloneNewNS|cloneFS || flags&(cloneNewUser|cloneFS) == cloneNewUser|cloneFS {
		return errRet(EINVAL)
	}
	return t.notPermitted("clone of a namespace")
}

// sysUnshare is ksys_unshare's flag checks and the parts uvm can do.
func (t *Task) sysUnshare(flags uint64) uint64 {
	if flags&cloneNewUser != 0 {
		flags |= cloneThread | cloneFS
	}
	if flags&cloneVM != 0 {
		flags |= cloneSighand
	}
	if flags&cloneSighand != 0 {
		flags |= cloneThread
	}
	if flags&cloneNewNS != 0 {
		flags |= cloneFS
	}
	const valid = cloneThread | cloneFS | cloneNewNS | cloneSighand | cloneVM | cloneFiles | cloneSysvsem |
		cloneNewUTS | cloneNewIPC | cloneNewNet | cloneNewUser | cloneNewPID | cloneNewCgroup | cloneNewTime
	if flags&^uint64(valid) != 0 {
		return errRet(EINVAL)
	}
	tg := t.tg
	tg.mu.Lock()
	threads := len(tg.tasks)
	tg.mu.Unlock()
	if flags&(cloneThread|cloneSighand|cloneVM) != 0 && threads > 1 {
		return errRet(EINVAL)
	}
	if flags&(cloneSighand|cloneVM) != 0 && sharedSighand(tg) {
		return errRet(EINVAL)
	}
	if flags&cloneVM != 0 && tg.mm.Users() > 1 {
		return errRet(EINVAL)
	}
	if flags&cloneNewAny != 0 {
		return t.notPermitted("unshare of a namespace")
	}
	if flags&cloneFiles != 0 && t.sharedFiles() {
		// A process here has one table for all its threads; only a
		// single-threaded one can take a copy, as Linux gives the
		// calling thread.
		if threads > 1 {
			if tg.k.noteUnimplemented("unshare(CLONE_FILES) in a multithreaded process") {
				tg.k.logf("unshare(CLONE_FILES) in a multithreaded process is not modelled (one table per process): EINVAL")
			}
			return errRet(EINVAL)
		}
		nf := tg.fds.fork()
		tg.mu.Lock()
		tg.fds = nf
		tg.mu.Unlock()
	}
	// CLONE_FS and CLONE_SYSVSEM: never shared between processes here.
	return 0
}

// sharedFiles reports whether another process uses tg's descriptor table
// (a CLONE_FILES child or parent).
func (t *Task) sharedFiles() bool {
	k := t.tg.k
	k.procMu.Lock()
	defer k.procMu.Unlock()
	for _, p := range k.procs {
		if p != t.tg && p.fds == t.tg.fds {
			return true
		}
	}
	return false
}

// sysSetns: uvm has no namespace files, so a descriptor is either a pidfd
// (setns into another process's namespaces needs CAP_SYS_ADMIN: EPERM;
// nstype 0 or unknown bits: EINVAL) or not a namespace at all (EINVAL).
func (t *Task) sysSetns(fd int32, nstype uint64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	if _, isPidfd := f.ops.(*pidfdFile); !isPidfd {
		return errRet(EINVAL)
	}
	if nstype == 0 || nstype&^uint64(cloneNewAny) != 0 {
		return errRet(EINVAL)
	}
	return t.notPermitted("setns")
}

// sysMount resolves the target first (ENOENT, ENOTDIR, EFAULT come
// before the permission check in Linux's do_mount), then refuses.
func (t *Task) sysMount(target uint64) uint64 {
	g, pa, e := t.resolveAt(atFDCWD, target)
	if e != 0 {
		return errRet(e)
	}
	fsys, name := t.lookupAt(g, pa)
	if _, err := fsys.stat(name); err != nil {
		return errRet(errnoOf(err))
	}
	return t.notPermitted("mount")
}

// sysUmount2 checks the flags (EINVAL) and refuses before any lookup, as
// ksys_umount does.
func (t *Task) sysUmount2(flags uint64) uint64 {
	const mntForce, mntDetach, mntExpire, umountNofollow = 1, 2, 4, 8
	if flags&^uint64(mntForce|mntDetach|mntExpire|umountNofollow) != 0 {
		return errRet(EINVAL)
	}
	return t.notPermitted("umount2")
}
