//go:build linux

package tasks

import (
	"encoding/binary"
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
	registerSyscall("statfs", func(t *Task, a [6]uint64) uint64 { return t.sysStatfs(a[0], -1, a[1]) })
	registerSyscall("fstatfs", func(t *Task, a [6]uint64) uint64 { return t.sysStatfs(0, int32(a[0]), a[1]) })
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

// sysStatfs is statfs/fstatfs: the host file system's numbers (struct
// statfs is the same 120 bytes on both arches). In --det the numbers
// that change from host to host and moment to moment are fixed: an
// ext4 file system of 2^24 blocks of 4 KiB, half free.
func (t *Task) sysStatfs(pathAddr uint64, fd int32, buf uint64) uint64 {
	hfd, done, e := t.xattrTarget(pathAddr, fd, true)
	if e != 0 {
		return errRet(e)
	}
	defer done()
	var st unix.Statfs_t
	if err := unix.Fstatfs(hfd, &st); err != nil {
		return errRet(errnoOf(err))
	}
	if t.tg.k.det != nil {
		st = unix.Statfs_t{Type: 0xef53, Bsize: 4096, Blocks: 1 << 24, Bfree: 1 << 23, Bavail: 1 << 23,
			Files: 1 << 20, Ffree: 1 << 19, Namelen: 255, Frsize: 4096, Flags: 0x1020} // ST_VALID|ST_RELATIME, read-write
	}
	b := make([]byte, 120)
	le := binary.LittleEndian
	for i, v := range []uint64{uint64(st.Type), uint64(st.Bsize), st.Blocks, st.Bfree, st.Bavail, st.Files, st.Ffree} {
		le.PutUint64(b[i*8:], v)
	}
	le.PutUint32(b[56:], uint32(st.Fsid.Val[0]))
	le.PutUint32(b[60:], uint32(st.Fsid.Val[1]))
	le.PutUint64(b[64:], uint64(st.Namelen))
	le.PutUint64(b[72:], uint64(st.Frsize))
	le.PutUint64(b[80:], uint64(st.Flags))
	return errOr0(t.writeBytes(buf, b))
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
