package tasks

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// rootVFS confines the guest to a host directory (see vfs). Each path is
// resolved by the host kernel with openat2(RESOLVE_IN_ROOT) from an
// O_PATH descriptor of the root: ".." stops at the root, absolute symlinks
// are taken relative to it, and the resolution is atomic, so a guest that
// swaps symlinks under its own feet cannot race its way out. Operations
// that name a new or removed entry resolve its parent directory that way
// and act on the last component with the *at syscalls, which never follow
// it; chmod acts on the descriptor the resolution returned.
type rootVFS struct {
	dir string // host path of the root, for messages
	fd  int    // O_PATH|O_DIRECTORY descriptor of the root (never closed)
	ro  bool
}

func openRootVFS(dir string, ro bool) (vfs, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	r := &rootVFS{dir: dir, fd: fd, ro: ro}
	// openat2 appeared in Linux 5.6; refuse to run unconfined on an
	// older kernel rather than pretend.
	probe, err := r.resolve("/", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("--root needs openat2 (Linux 5.6 or later): %w", err)
	}
	unix.Close(probe)
	return r, nil
}

// rel turns a guest absolute path into a path relative to the root.
func rel(g string) string {
	r := strings.TrimLeft(path.Clean("/"+g), "/")
	if r == "" {
		return "."
	}
	return r
}

// resolve opens g inside the root with flags (plus O_CLOEXEC).
func (r *rootVFS) resolve(g string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	return openat2Retry(r.fd, rel(g), &how)
}

// openat2Retry is openat2, retried on EINTR and on EAGAIN (a concurrent
// rename in the tree, as the kernel documents) a bounded number of times:
// a guest that renames without pause gets EAGAIN, not a spinning thread.
func openat2Retry(dirfd int, name string, how *unix.OpenHow) (int, error) {
	for i := 0; ; i++ {
		fd, err := unix.Openat2(dirfd, name, how)
		if (err == unix.EINTR || err == unix.EAGAIN) && i < 1000 {
			continue
		}
		return fd, err
	}
}

// parent resolves g's directory and returns it with g's last component.
func (r *rootVFS) parent(g string) (int, string, error) {
	c := path.Clean("/" + g)
	if c == "/" {
		return -1, "", unix.EBUSY
	}
	fd, err := r.resolve(path.Dir(c), unix.O_PATH|unix.O_DIRECTORY)
	return fd, path.Base(c), err
}

func (r *rootVFS) open(g string, flags int, perm fs.FileMode) (*os.File, error) {
	if r.ro && (flags&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0) {
		return nil, unix.EROFS
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(perm.Perm()), Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	if flags&os.O_CREATE == 0 {
		how.Mode = 0
	}
	fd, err := openat2Retry(r.fd, rel(g), &how)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.hostName(g)), nil
}

// statFD stats g resolved with flags (O_PATH, maybe O_NOFOLLOW).
func (r *rootVFS) statFD(g string, flags int) (fs.FileInfo, error) {
	fd, err := r.resolve(g, unix.O_PATH|flags)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path.Base(g))
	defer f.Close()
	return f.Stat()
}

func (r *rootVFS) stat(g string) (fs.FileInfo, error)  { return r.statFD(g, 0) }
func (r *rootVFS) lstat(g string) (fs.FileInfo, error) { return r.statFD(g, unix.O_NOFOLLOW) }

func (r *rootVFS) readlink(g string) (string, error) {
	fd, err := r.resolve(g, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		if err == unix.ENOENT {
			return "", unix.EINVAL // not a symlink
		}
		return "", err
	}
	return string(buf[:n]), nil
}

// atParent runs op on g's parent descriptor and last component.
func (r *rootVFS) atParent(g string, op func(dirfd int, name string) error) error {
	if r.ro {
		return unix.EROFS
	}
	fd, name, err := r.parent(g)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return op(fd, name)
}

func (r *rootVFS) mkdir(g string, perm fs.FileMode) error {
	return r.atParent(g, func(d int, n string) error { return unix.Mkdirat(d, n, unixMode(perm)) })
}

func (r *rootVFS) unlink(g string) error {
	return r.atParent(g, func(d int, n string) error { return unix.Unlinkat(d, n, 0) })
}

func (r *rootVFS) rmdir(g string) error {
	return r.atParent(g, func(d int, n string) error { return unix.Unlinkat(d, n, unix.AT_REMOVEDIR) })
}

func (r *rootVFS) rename(o, n string) error {
	return r.atParent(o, func(od int, on string) error {
		return r.atParent(n, func(nd int, nn string) error { return unix.Renameat(od, on, nd, nn) })
	})
}

func (r *rootVFS) link(o, n string) error {
	return r.atParent(o, func(od int, on string) error {
		return r.atParent(n, func(nd int, nn string) error { return unix.Linkat(od, on, nd, nn, 0) })
	})
}

func (r *rootVFS) symlink(target, n string) error {
	// The target is stored as written; it is resolved inside the root
	// whenever it is followed.
	return r.atParent(n, func(d int, nn string) error { return unix.Symlinkat(target, d, nn) })
}

func (r *rootVFS) chmod(g string, mode fs.FileMode) error {
	if r.ro {
		return unix.EROFS
	}
	fd, err := r.resolve(g, unix.O_PATH)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// fchmod does not take O_PATH descriptors; the descriptor's
	// /proc/self/fd entry names the inode already resolved, so nothing
	// is looked up again.
	return unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), uint32(mode.Perm()))
}

func (r *rootVFS) hostName(g string) string { return path.Join(r.dir, path.Clean("/"+g)) }

// unixMode is perm's permission bits with the sticky bit (S_ISVTX).
func unixMode(perm fs.FileMode) uint32 {
	m := uint32(perm.Perm())
	if perm&fs.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	return m
}
