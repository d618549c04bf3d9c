package tasks

// File operations whose answer depends on the credentials (creds.go):
// faccessat/faccessat2 (generic_permission with the real or effective
// ids), chown/fchown/lchown/fchownat (chown_ok, chgrp_ok), fchmodat2
// (inode_owner_or_capable), mknod/mknodat (FIFOs, sockets and regular
// files; device nodes refused). The model decides with the owner and
// mode stat reports; what it allows is then done on the host file.

import "io/fs"

func init() {
	registerSyscall("chown", func(t *Task, a [6]uint64) uint64 {
		return t.sysFchownat(atFDCWD, a[0], uint32(a[1]), uint32(a[2]), 0)
	})
	registerSyscall("lchown", func(t *Task, a [6]uint64) uint64 {
		return t.sysFchownat(atFDCWD, a[0], uint32(a[1]), uint32(a[2]), atSymlinkNofollow)
	})
	registerSyscall("fchownat", func(t *Task, a [6]uint64) uint64 {
		return t.sysFchownat(int32(a[0]), a[1], uint32(a[2]), uint32(a[3]), a[4])
	})
	registerSyscall("fchown", func(t *Task, a [6]uint64) uint64 {
		return t.sysFchown(int32(a[0]), uint32(a[1]), uint32(a[2]))
	})
	registerSyscall("mknod", func(t *Task, a [6]uint64) uint64 { return t.sysMknodat(atFDCWD, a[0], uint32(a[1]), a[2]) })
	registerSyscall("mknodat", func(t *Task, a [6]uint64) uint64 {
		return t.sysMknodat(int32(a[0]), a[1], uint32(a[2]), a[3])
	})
	registerSyscall("fchmodat2", func(t *Task, a [6]uint64) uint64 {
		return t.sysFchmodat2(int32(a[0]), a[1], uint32(a[2]), a[3])
	})
}

// vfsCreds is what the credential-dependent operations need of a vfs
// beyond the common interface (creds_vfs_*.go).
type vfsCreds interface {
	// chown changes owner and group (-1: unchanged) of g, following a
	// final symlink when follow is set.
	chown(g string, uid, gid int, follow bool) error
	// mknod creates a FIFO, socket or regular file (mode holds the type).
	mknod(g string, mode uint32) error
	// readOnly reports a file system that refuses every change (EROFS).
	readOnly() bool
}

const atEaccess = 0x200 // AT_EACCESS

// May-masks of generic_permission.
const (
	mayExec  = 1
	mayWrite = 2
	mayRead  = 4
)

// permission is generic_permission for a file of the given owner, group
// and mode under credentials c (no ACLs): the owner, group or other
// bits, then CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE as Linux lets
// them override (execute only where some x bit is set, for non-
// directories).
func (c *cred) permission(uid, gid, mode, mask uint32) Errno {
	m := mode
	switch {
	case c.fsuid == uid:
		m >>= 6
	case c.inGroup(gid):
		m >>= 3
	}
	if mask&^m&7 == 0 {
		return 0
	}
	if mode&sIFMT == sIFDIR {
		if mask&mayWrite == 0 && c.capable(capDacReadSearch) {
			return 0
		}
		if c.capable(capDacOverride) {
			return 0
		}
		return EACCES
	}
	if mask == mayRead && c.capable(capDacReadSearch) {
		return 0
	}
	if (mask&mayExec == 0 || mode&0o111 != 0) && c.capable(capDacOverride) {
		return 0
	}
	return EACCES
}

// accessCreds is access_override_creds: faccessat without AT_EACCESS
// checks with the real ids, root's capabilities only for a real root.
func (c *cred) accessCreds() *cred {
	n := *c
	n.fsuid, n.fsgid = c.uid, c.gid
	if c.uid != 0 {
		n.capEff = 0
	} else {
		n.capEff = c.capPrm
	}
	return &n
}

// sysFaccessat2 is faccessat2(dirfd, path, mode, flags); faccessat and
// access are it with flags 0.
func (t *Task) sysFaccessat2(dirfd int32, pathAddr, mode, flags uint64) uint64 {
	if mode&^7 != 0 || flags&^(atEaccess|atSymlinkNofollow|atEmptyPath) != 0 {
		return errRet(EINVAL)
	}
	c := t.creds()
	if flags&atEaccess == 0 {
		c = c.accessCreds()
	}
	st, e := t.statAt(dirfd, pathAddr, flags&(atSymlinkNofollow|atEmptyPath))
	if e != 0 {
		return errRet(e)
	}
	if mode == 0 {
		return 0
	}
	if e := c.permission(st.uid, st.gid, st.mode, uint32(mode)); e != 0 {
		return errRet(e)
	}
	if mode&mayWrite != 0 && (t.fsReadOnly() || t.readOnlyArg(dirfd, pathAddr, flags&atSymlinkNofollow == 0)) && st.mode&sIFMT != sIFCHR && st.mode&sIFMT != sIFBLK &&
		st.mode&sIFMT != sIFIFO && st.mode&sIFMT != sIFSOCK {
		return errRet(EROFS)
	}
	return 0
}

// fsReadOnly reports a read-only --root.
func (t *Task) fsReadOnly() bool {
	v, ok := t.tg.k.fs.(vfsCreds)
	return ok && v.readOnly()
}

// chownAllowed is setattr_prepare's chown_ok and chgrp_ok for a file
// owned by ouid:ogid (idNone: that id is not changed).
func (c *cred) chownAllowed(ouid, ogid, uid, gid uint32) bool {
	if c.capable(capChown) {
		return true
	}
	if uid != idNone && !(c.fsuid == ouid && uid == ouid) {
		return false
	}
	if gid != idNone && !(c.fsuid == ouid && (gid == ogid || c.inGroup(gid))) {
		return false
	}
	return true
}

// hostID maps a guest id for the host call (-1 leaves it).
func (k *Kernel) hostIDs(uid, gid uint32) (int, int) {
	hu, hg := -1, -1
	if uid != idNone {
		hu = int(k.hostUID(uid))
	}
	if gid != idNone {
		hg = int(k.hostGID(gid))
	}
	return hu, hg
}

func (t *Task) sysFchownat(dirfd int32, pathAddr uint64, uid, gid uint32, flags uint64) uint64 {
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return errRet(EINVAL)
	}
	p, e := t.readPath(pathAddr)
	if e != 0 {
		return errRet(e)
	}
	if p == "" && flags&atEmptyPath != 0 && dirfd != atFDCWD {
		return t.sysFchown(dirfd, uid, gid)
	}
	st, e := t.statAt(dirfd, pathAddr, flags&(atSymlinkNofollow|atEmptyPath))
	if e != 0 {
		return errRet(e)
	}
	g, e := t.guestPath(dirfd, p)
	if e != 0 {
		return errRet(e)
	}
	fsys, name := t.lookupAt(g, pathArg{dirfd, p})
	v, ok := fsys.(vfsCreds)
	if _, synth := t.procStat(g); synth || !ok {
		// /proc and /dev entries belong to the kernel's model.
		return t.chownModelled(st, uid, gid, "a synthetic /proc or /dev file")
	}
	if v.readOnly() {
		return errRet(EROFS)
	}
	if !t.creds().chownAllowed(st.uid, st.gid, uid, gid) {
		return errRet(EPERM)
	}
	hu, hg := t.tg.k.hostIDs(uid, gid)
	return errOr0(errnoOf(v.chown(name, hu, hg, flags&atSymlinkNofollow == 0)))
}

func (t *Task) sysFchown(fd int32, uid, gid uint32) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	st, e := t.statFile(f)
	if e != 0 {
		return errRet(e)
	}
	h, isHost := f.hostOS()
	if !isHost {
		return t.chownModelled(st, uid, gid, "a pipe, socket or other in-kernel object")
	}
	if t.fsReadOnly() || readOnlyFile(t.tg.k.fs, h, f.path) {
		return errRet(EROFS)
	}
	if !t.creds().chownAllowed(st.uid, st.gid, uid, gid) {
		return errRet(EPERM)
	}
	hu, hg := t.tg.k.hostIDs(uid, gid)
	return errOr0(errnoOf(h.Chown(hu, hg)))
}

// chownModelled answers chown of an object uvm owns (no host inode to
// change): what leaves its ids as they are succeeds, as in Linux; a
// real change is refused with EPERM, loudly, since uvm does not record
// owners of its own objects.
func (t *Task) chownModelled(st hostStat, uid, gid uint32, what string) uint64 {
	if !t.creds().chownAllowed(st.uid, st.gid, uid, gid) {
		return errRet(EPERM)
	}
	if (uid == idNone || uid == st.uid) && (gid == idNone || gid == st.gid) {
		return 0
	}
	if t.tg.k.noteUnimplemented("chown of " + what) {
		t.tg.k.logf("chown of %s is not modelled (owners are fixed): EPERM", what)
	}
	return errRet(EPERM)
}

// sysFchmodat2 is fchmodat2(dirfd, path, mode, flags) (Linux 6.6);
// fchmodat and chmod are it with flags 0. Only the owner or CAP_FOWNER
// may change the mode; a symlink's own mode cannot be changed
// (EOPNOTSUPP with AT_SYMLINK_NOFOLLOW).
func (t *Task) sysFchmodat2(dirfd int32, pathAddr uint64, mode uint32, flags uint64) uint64 {
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return errRet(EINVAL)
	}
	p, e := t.readPath(pathAddr)
	if e != 0 {
		return errRet(e)
	}
	st, e := t.statAt(dirfd, pathAddr, flags)
	if e != 0 {
		return errRet(e)
	}
	if p == "" && flags&atEmptyPath != 0 && dirfd != atFDCWD {
		f, _ := t.tg.fds.get(dirfd)
		h, isHost := f.hostOS()
		if !isHost {
			return errRet(EBADF)
		}
		if e := t.mayChmod(st); e != 0 {
			return errRet(e)
		}
		if readOnlyFile(t.tg.k.fs, h, f.path) {
			return errRet(EROFS)
		}
		return errOr0(errnoOf(h.Chmod(goMode(mode))))
	}
	if st.mode&sIFMT == sIFLNK {
		return errRet(EOPNOTSUPP)
	}
	if e := t.mayChmod(st); e != 0 {
		return errRet(e)
	}
	g, e := t.guestPath(dirfd, p)
	if e != 0 {
		return errRet(e)
	}
	fsys, name := t.lookupAt(g, pathArg{dirfd, p})
	return errOr0(errnoOf(fsys.chmod(name, goMode(mode))))
}

// goMode converts permission and set-id bits to an fs.FileMode.
func goMode(m uint32) fs.FileMode {
	fm := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		fm |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= fs.ModeSticky
	}
	return fm
}

func (t *Task) mayChmod(st hostStat) Errno {
	if t.fsReadOnly() {
		return EROFS
	}
	if c := t.creds(); c.fsuid != st.uid && !c.capable(capFowner) {
		return EPERM
	}
	return 0
}

// sysMknodat is mknodat(dirfd, path, mode, dev) (may_mknod, vfs_mknod):
// FIFOs, sockets and regular files are made on the host with the umask
// applied; a directory type is EPERM, an unknown type EINVAL, and device
// nodes EPERM for every guest (uvm never makes host device nodes; an
// unprivileged Linux answers the same). dev is ignored for the types
// uvm makes, as Linux ignores it.
func (t *Task) sysMknodat(dirfd int32, pathAddr uint64, mode uint32, dev uint64) uint64 {
	_ = dev
	typ := mode & sIFMT
	switch typ {
	case 0, sIFREG, sIFCHR, sIFBLK, sIFIFO, sIFSOCK:
	case sIFDIR:
		return errRet(EPERM)
	default:
		return errRet(EINVAL)
	}
	g, pa, e := t.resolveAt(dirfd, pathAddr)
	if e != 0 {
		return errRet(e)
	}
	fsys, name := t.lookupAt(g, pa)
	if _, err := fsys.lstat(name); err == nil {
		return errRet(EEXIST)
	}
	if typ == sIFCHR || typ == sIFBLK {
		return errRet(EPERM)
	}
	v, ok := fsys.(vfsCreds)
	if !ok {
		return errRet(EPERM)
	}
	if v.readOnly() {
		return errRet(EROFS)
	}
	t.tg.mu.Lock()
	umask := t.tg.umask
	t.tg.mu.Unlock()
	if typ == 0 {
		typ = sIFREG
	}
	return errOr0(errnoOf(v.mknod(name, typ|mode&0o7777&^umask)))
}
