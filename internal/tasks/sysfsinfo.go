//go:build linux

package tasks

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// File-system information and extended attributes, as real programs ask
// for them: coreutils' ls -l reads the ACL/SELinux attributes of every
// file, df and tar call statfs, tar's gzip child uses creat.

func init() {
	registerSyscall("creat", func(t *Task, a [6]uint64) uint64 {
		return t.sysOpenat(atFDCWD, a[0], uint64(oCREAT|oWRONLY|oTRUNC), a[1])
	})
	registerSyscall("statfs", func(t *Task, a [6]uint64) uint64 {
		s, e := t.statfsPath(a[0])
		return t.statfsRet(s, e, a[1])
	})
	registerSyscall("fstatfs", func(t *Task, a [6]uint64) uint64 {
		f, ok := t.tg.fds.get(int32(a[0]))
		if !ok {
			return errRet(EBADF)
		}
		s, e := t.statfsFile(f)
		return t.statfsRet(s, e, a[1])
	})
	for _, name := range []string{"getxattr", "lgetxattr", "fgetxattr"} {
		name := name
		registerSyscall(name, func(t *Task, a [6]uint64) uint64 { return t.sysGetxattr(name, a) })
	}
	for _, name := range []string{"listxattr", "llistxattr", "flistxattr"} {
		name := name
		registerSyscall(name, func(t *Task, a [6]uint64) uint64 { return t.sysListxattr(name, a) })
	}
	for _, name := range []string{"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr"} {
		name := name
		registerSyscall(name, func(t *Task, a [6]uint64) uint64 {
			// Changing attributes is not modelled: the file system
			// reports that it does not support them.
			if t.tg.k.noteUnimplemented("syscall " + name) {
				t.tg.k.logf("%s: extended attributes cannot be changed under uvm (EOPNOTSUPP)", name)
			}
			return errRet(eopnotsupp)
		})
	}
}

const (
	eopnotsupp Errno = 95
	enodata    Errno = 61
)

// xattrTarget opens what an xattr or statfs call names (a path with or
// without following a final symlink, or a descriptor) as a host
// descriptor; done closes it.
func (t *Task) xattrTarget(pathAddr uint64, fd int32, follow bool) (hostFD int, done func(), e Errno) {
	if fd >= 0 {
		f, ok := t.tg.fds.get(fd)
		if !ok {
			return -1, nil, EBADF
		}
		h, isHost := f.hostOS()
		if !isHost {
			return -1, nil, eopnotsupp
		}
		return int(h.Fd()), func() {}, 0
	}
	g, pa, e := t.resolveAt(atFDCWD, pathAddr)
	if e != 0 {
		return -1, nil, e
	}
	fsys, name := t.lookupAt(g, pa)
	flags := unix.O_PATH
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	f, err := fsys.open(name, flags, 0)
	if err != nil {
		return -1, nil, errnoOf(err)
	}
	return int(f.Fd()), func() { f.Close() }, 0
}

// statfsRet writes s to the guest's struct statfs at buf, or returns e.
func (t *Task) statfsRet(s kstatfs, e Errno, buf uint64) uint64 {
	if e != 0 {
		return errRet(e)
	}
	return errOr0(t.writeBytes(buf, s.encode()))
}

// statfsPath is statfs of a path (final symlink followed): uvm's /proc
// and /dev entries answer for their mounts (proc_mounts_statfs.go), a
// magic link for the file it leads to, any other path for the host file
// it resolves to (hostStatfs).
func (t *Task) statfsPath(addr uint64) (kstatfs, Errno) {
	g, pa, e := t.resolveAt(atFDCWD, addr)
	if e != 0 {
		return kstatfs{}, e
	}
	return t.statfsGuest(g, pa, true)
}

// statfsGuest is statfsPath of guest path g (argument pa); via is false
// once g came from synthViaLinks.
func (t *Task) statfsGuest(g string, pa pathArg, via bool) (kstatfs, Errno) {
	var e Errno
	if g, pa, e = t.procFollowAt(g, pa, true); e != 0 {
		return kstatfs{}, e
	}
	k := t.tg.k
	// As procStatAt: an entry, or the file its link leads to (exe:
	// the program's file, which the vfs finds below).
	if ent, ok, e := t.procLookup(g); ok {
		if e != 0 {
			return kstatfs{}, e
		}
		if ent.mode&sIFMT != sIFLNK {
			return k.statfsMount(procMntProc)
		}
		if ent.access != nil {
			if e := ent.access(); e != 0 {
				return kstatfs{}, e
			}
		}
		if ent.follow != nil {
			f, e := ent.follow()
			if e != 0 {
				return kstatfs{}, e
			}
			return t.statfsFile(f)
		}
	}
	if f, ok, e := t.devOpen(g, oRDONLY); ok {
		if e != 0 {
			return kstatfs{}, e
		}
		return t.statfsFile(f)
	}
	fsys, name := t.lookupAt(g, pa)
	h, err := fsys.open(name, unix.O_PATH, 0)
	if err != nil {
		if via && errnoOf(err) == ENOENT {
			// A symlink into uvm's /proc or /dev (synthViaLinks).
			if n, ok := t.synthViaLinks(g, true); ok {
				return t.statfsGuest(n, pathArg{atFDCWD, n}, false)
			}
		}
		return kstatfs{}, errnoOf(err)
	}
	defer h.Close()
	return t.hostStatfs(int(h.Fd()), g)
}

// statfsFile is fstatfs of an open file: uvm's /proc files and memory
// devices answer for their mounts, a host file as hostStatfs, the
// kernel's pipes, sockets, anonymous inodes and memfds for their
// internal mounts (pseudoStatfs); any other (the embedding's stdio
// readers and writers) has no file system: EOPNOTSUPP.
func (t *Task) statfsFile(f *openFile) (kstatfs, Errno) {
	k := t.tg.k
	switch f.ops.(type) {
	case *procDirFile, *procDataFile, *procMemFile:
		return k.statfsMount(procMntProc)
	case *memDev:
		return k.statfsMount(procMntDev)
	}
	if h, ok := f.hostOS(); ok {
		rc, err := h.SyscallConn()
		if err != nil {
			return kstatfs{}, EBADF
		}
		var s kstatfs
		var e Errno
		if err := rc.Control(func(fd uintptr) { s, e = t.hostStatfs(int(fd), f.path) }); err != nil {
			return kstatfs{}, EBADF
		}
		return s, e
	}
	st, e := f.ops.stat(t, f)
	if e != 0 {
		return kstatfs{}, e
	}
	if s, ok := pseudoStatfs(f.path, st.dev); ok {
		return s, 0
	}
	return kstatfs{}, eopnotsupp
}

// statfsMount is statfs of one of uvm's own mounts (by id).
func (k *Kernel) statfsMount(id int) (kstatfs, Errno) {
	if e, ok := k.mountByID(id); ok {
		if s, ok := k.syntheticStatfs(e); ok {
			return s, 0
		}
	}
	return kstatfs{}, eopnotsupp
}

// hostStatfs is statfs of host descriptor fd, a file of the guest's
// tree opened as guest path hint: the mount it lies on is the table's
// entry for its guest path now (guestPathOfHost); a file below /proc or
// /dev in the host directory (the --root's proc/ or dev/, or unconfined
// the host's /dev/shm) lies on uvm's proc or devtmpfs there. On a
// host-backed mount the numbers are the host file system's (in --det an
// ext4 of 2^24 blocks of 4 KiB, half free, as they change from host to
// host and moment to moment), f_flags the mount's options. A descriptor
// outside the guest's tree (uvm's own stdin) lies on the host's mount,
// whose numbers and flags it gets.
func (t *Task) hostStatfs(fd int, hint string) (kstatfs, Errno) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return kstatfs{}, errnoOf(err)
	}
	k := t.tg.k
	g, inTree := k.guestPathOfHost(fd, hint)
	if k.det != nil {
		st = unix.Statfs_t{Type: 0xef53, Bsize: 4096, Blocks: 1 << 24, Bfree: 1 << 23, Bavail: 1 << 23,
			Files: 1 << 20, Ffree: 1 << 19, Namelen: 255, Frsize: 4096, Flags: stValid | stRelatime}
	}
	flags := uint64(st.Flags)
	if inTree {
		m := k.mountAt(g)
		if s, ok := k.syntheticStatfs(m); ok {
			return s, 0
		}
		flags = m.statfsFlags()
	}
	return kstatfs{typ: uint64(st.Type), bsize: uint64(st.Bsize), blocks: st.Blocks, bfree: st.Bfree, bavail: st.Bavail,
		files: st.Files, ffree: st.Ffree, fsid: [2]uint32{uint32(st.Fsid.Val[0]), uint32(st.Fsid.Val[1])},
		namelen: uint64(st.Namelen), frsize: uint64(st.Frsize), flags: flags}, 0
}

// xattrMax bounds an attribute name, value or list (XATTR_SIZE_MAX).
const xattrMax = 64 << 10

// sysGetxattr reads an extended attribute of the host file. In --det the
// guest sees files without attributes (they are host-specific: SELinux
// labels, capabilities), so every get is ENODATA.
func (t *Task) sysGetxattr(name string, a [6]uint64) uint64 {
	attr, err := t.tg.mm.ReadString(a[1], 256)
	if err != nil {
		return errRet(ERANGE)
	}
	if t.tg.k.det != nil {
		return errRet(enodata)
	}
	return t.xattrCall(name, a[0], a[2], a[3], func(p string, buf []byte) (int, error) { return unix.Getxattr(p, attr, buf) })
}

// sysListxattr lists a file's attribute names (none in --det).
func (t *Task) sysListxattr(name string, a [6]uint64) uint64 {
	if t.tg.k.det != nil {
		return 0
	}
	return t.xattrCall(name, a[0], a[1], a[2], unix.Listxattr)
}

// xattrCall runs op on the file the call names (a path for getxattr and
// listxattr, following a final symlink; the link itself for the l-forms;
// a descriptor for the f-forms) and copies at most size bytes of the
// answer to buf (size 0: just the length).
func (t *Task) xattrCall(name string, target, buf, size uint64, op func(path string, b []byte) (int, error)) uint64 {
	fd := int32(-1)
	if name[0] == 'f' {
		fd = int32(target)
	}
	hfd, done, e := t.xattrTarget(target, fd, name[0] != 'l')
	if e != 0 {
		return errRet(e)
	}
	defer done()
	b := make([]byte, min(size, xattrMax))
	// The descriptor already names the object (the link itself for the
	// l-forms, opened O_NOFOLLOW); its /proc/self/fd magic link leads to
	// that object without another lookup. (The l-forms on the magic link
	// would ask procfs about the link: EOPNOTSUPP.)
	n, err := op(fmt.Sprintf("/proc/self/fd/%d", hfd), b)
	if err != nil {
		return errRet(errnoOf(err))
	}
	if size == 0 {
		return uint64(n)
	}
	return retOr(t.writeBytes(buf, b[:n]), uint64(n))
}
