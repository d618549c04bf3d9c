package tasks

import (
	"os"
	"syscall"
)

// mknodSocket creates the inode of a bound AF_UNIX socket: a socket node
// (unprivileged mknod may create one), so the guest's stat sees S_IFSOCK.
func mknodSocket(hostPath string, perm uint32) error {
	if err := syscall.Mknod(hostPath, syscall.S_IFSOCK|perm, 0); err != nil {
		return &os.PathError{Op: "mknod", Path: hostPath, Err: err}
	}
	return nil
}
