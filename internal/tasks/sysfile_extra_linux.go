//go:build linux

package tasks

import (
	"os"
	"syscall"
	"unsafe"
)

// hostFallocate is fallocate(2) on a host file.
func hostFallocate(f *os.File, mode uint32, off, n int64) Errno {
	for {
		err := syscall.Fallocate(int(f.Fd()), mode, off, n)
		if err == syscall.EINTR {
			continue
		}
		return errnoOf(err)
	}
}

// hostUtimensat is utimensat(2) on the host: path "" is the descriptor
// dirfd itself (futimens); ts nil sets both times to now. The timespecs
// pass through as given (UTIME_NOW and UTIME_OMIT included).
func hostUtimensat(dirfd int, path string, ts *[2]syscall.Timespec, flags int) Errno {
	var p *byte
	if path != "" {
		var err error
		if p, err = syscall.BytePtrFromString(path); err != nil {
			return EINVAL
		}
	}
	_, _, en := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(ts)), uintptr(flags), 0, 0)
	if en != 0 {
		return Errno(en)
	}
	return 0
}

const hostOPath = 0o10000000 // O_PATH
