package tasks

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// intoHostProc reports whether the host resolves hp (following a final
// symlink when follow) to something inside a per-process directory of the
// host's procfs: /proc/PID/…, /proc/self, /proc/thread-self. Guest paths
// that name those directly are served by the synthetic /proc before
// lookup; this catches the indirect ways in that only the host kernel's
// resolution sees — a guest-made symlink to /proc/self/mem, a "/tmp/l/.."
// through a symlink to /, a symlinked directory — which would otherwise
// hand the guest uvm's own memory, environment and descriptors. Names that
// do not resolve (yet) cannot be inside it.
func intoHostProc(hp string, follow bool) bool {
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(hp, flags, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return fdOnHostProc(fd)
}

// openGuarded opens host path hp for the guest and then checks what was
// opened, not the name: a guest thread swapping a symlink between a check
// and the open cannot slip the host's /proc past it. Opening a procfs file
// has no effect of its own that matters here (nothing is read or written
// before the descriptor is closed again).
func openGuarded(hp string, flags int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(hp, flags, perm)
	if err != nil {
		return nil, err
	}
	sc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	bad := true
	if sc.Control(func(fd uintptr) { bad = fdOnHostProc(int(fd)) }) != nil || bad {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: hp, Err: unix.ENOENT}
	}
	return f, nil
}

// fdOnHostProc is intoHostProc's test on an O_PATH descriptor.
func fdOnHostProc(fd int) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil || st.Type != procSuperMagic {
		return false
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlink("/proc/self/fd/"+itoa(fd), buf)
	if err != nil {
		return true
	}
	p := string(buf[:n])
	return procHidden(p) && !machineProcFile(p)
}
