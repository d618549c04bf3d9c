//go:build !linux

package tasks

import (
	"os"
	"syscall"
)

func hostFallocate(f *os.File, mode uint32, off, n int64) Errno { return EOPNOTSUPP }

func hostUtimensat(dirfd int, path string, ts *[2]syscall.Timespec, flags int) Errno {
	return EOPNOTSUPP
}

const hostOPath = 0
