//go:build !linux

package tasks

import (
	"errors"
	"os"
)

// The vfsCreds operations on other hosts: no mknod.

func (h hostVFS) chown(g string, uid, gid int, follow bool) error {
	if follow {
		return unwrapPath(os.Chown(h.path(g), uid, gid))
	}
	return unwrapPath(os.Lchown(h.path(g), uid, gid))
}

func (h hostVFS) mknod(g string, mode uint32) error {
	return errors.New("mknod needs a Linux host")
}

func (hostVFS) readOnly() bool { return false }
