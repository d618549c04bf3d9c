package tasks

import (
	"os"

	"golang.org/x/sys/unix"
)

// The vfsCreds operations on Linux hosts.

func (h hostVFS) chown(g string, uid, gid int, follow bool) error {
	if follow {
		return unwrapPath(os.Chown(h.path(g), uid, gid))
	}
	return unwrapPath(os.Lchown(h.path(g), uid, gid))
}

func (h hostVFS) mknod(g string, mode uint32) error {
	if err := unix.Mknod(h.path(g), mode, 0); err != nil {
		return err
	}
	// The host's umask must not narrow what the guest's allowed.
	return unwrapPath(os.Chmod(h.path(g), goMode(mode)))
}

func (hostVFS) readOnly() bool { return false }

func (r *rootVFS) chown(g string, uid, gid int, follow bool) error {
	if r.ro {
		return unix.EROFS
	}
	flags := unix.O_PATH
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := r.resolve(g, flags)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH)
}

func (r *rootVFS) mknod(g string, mode uint32) error {
	if err := r.atParent(g, func(d int, n string) error { return unix.Mknodat(d, n, mode, 0) }); err != nil {
		return err
	}
	return r.chmod(g, goMode(mode))
}

func (r *rootVFS) readOnly() bool { return r.ro }
