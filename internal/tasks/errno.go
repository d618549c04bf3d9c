package tasks

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Errno is a Linux error number (asm-generic values, shared by arm64 and
// x86-64). Syscall handlers return -errno in the result register.
type Errno uint64

const (
	EPERM        Errno = 1
	ENOENT       Errno = 2
	ESRCH        Errno = 3
	EINTR        Errno = 4
	EIO          Errno = 5
	ENXIO        Errno = 6
	E2BIG        Errno = 7
	ENOEXEC      Errno = 8
	EBADF        Errno = 9
	ECHILD       Errno = 10
	EAGAIN       Errno = 11
	ENOMEM       Errno = 12
	EACCES       Errno = 13
	EFAULT       Errno = 14
	EBUSY        Errno = 16
	EEXIST       Errno = 17
	EXDEV        Errno = 18
	ENODEV       Errno = 19
	ENOTDIR      Errno = 20
	EISDIR       Errno = 21
	EINVAL       Errno = 22
	EMFILE       Errno = 24
	ENOTTY       Errno = 25
	EFBIG        Errno = 27
	ENOSPC       Errno = 28
	ESPIPE       Errno = 29
	EROFS        Errno = 30
	EPIPE        Errno = 32
	ERANGE       Errno = 34
	ENAMETOOLONG Errno = 36
	ENOSYS       Errno = 38
	ENOTEMPTY    Errno = 39
	ELOOP        Errno = 40
	EOVERFLOW    Errno = 75
	ETIMEDOUT    Errno = 110
)

// errnoOf converts a host error into the guest's errno.
func errnoOf(err error) Errno {
	if err == nil {
		return 0
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		// Linux hosts share the guests' numbering; other hosts are mapped
		// through the portable classes below.
		if hostIsLinux {
			return Errno(en)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ENOENT
	case errors.Is(err, fs.ErrExist):
		return EEXIST
	case errors.Is(err, fs.ErrPermission):
		return EACCES
	case errors.Is(err, os.ErrClosed):
		return EBADF
	case errors.Is(err, syscall.EPIPE):
		return EPIPE
	}
	return EIO
}
