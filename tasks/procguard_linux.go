package tasks

import "golang.org/x/sys/unix"

// procSuperMagic is procfs's f_type (statfs(2)).
const procSuperMagic = 0x9fa0

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
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil || st.Type != procSuperMagic {
		return false
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlink("/proc/self/fd/"+itoa(fd), buf)
	if err != nil {
		return true // on procfs and unnameable: refuse
	}
	return procHidden(string(buf[:n])) // the same names as the guest's own paths
}
