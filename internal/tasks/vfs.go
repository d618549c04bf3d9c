package tasks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// vfs is the guest's view of the host file system. Every path operation of
// the Linux layer goes through it, with guest absolute paths (already
// cleaned; synthetic /proc entries never get here), or, seen from a host
// directory (atVFS, tasks/vfs_at_linux.go), with names relative to it as
// the guest wrote them. Two implementations of the whole file system:
//
//   - hostVFS (no --root): guest paths are host paths, except that with
//     a prefix (-L, qemu-user's QEMU_LD_PREFIX) an absolute path that
//     exists under the prefix is used there. Unconfined: the guest can
//     reach every host file uvm's user can.
//   - rootVFS (--root DIR): the guest's / is DIR. Every path is resolved
//     by the host kernel inside DIR (openat2 RESOLVE_IN_ROOT on Linux, so
//     "..", absolute symlinks and symlink races never leave it), and a
//     read-only root refuses every change with EROFS.
type vfs interface {
	open(g string, flags int, perm fs.FileMode) (*os.File, error)
	stat(g string) (fs.FileInfo, error)
	lstat(g string) (fs.FileInfo, error)
	readlink(g string) (string, error)
	mkdir(g string, perm fs.FileMode) error
	// unlink removes a non-directory, rmdir an empty directory.
	unlink(g string) error
	rmdir(g string) error
	rename(oldg, newg string) error
	link(oldg, newg string) error
	symlink(target, newg string) error
	chmod(g string, mode fs.FileMode) error
	// hostName is the host path of g, for messages and /proc/self/exe's
	// host identity; never used to open anything.
	hostName(g string) string
}

// hostVFS is the unconfined view (see vfs). rec, when set, records every
// path before the operation on it (uvm run --record; record.go).
type hostVFS struct {
	prefix string
	rec    *FileRecord
}

func (h hostVFS) path(g string) string {
	if h.prefix != "" {
		hp := path.Join(h.prefix, g)
		if _, err := os.Lstat(hp); err == nil {
			return hp
		}
	}
	return g
}

func (h hostVFS) open(g string, flags int, perm fs.FileMode) (*os.File, error) {
	h.rec.Open(g, flags)
	hp, err := h.guard(g, flags&syscall.O_NOFOLLOW == 0)
	if err != nil {
		return nil, err
	}
	return openGuarded(hp, flags, perm) // checked and opened as one step
}
func (h hostVFS) stat(g string) (fs.FileInfo, error) {
	h.rec.Stat(g, true)
	hp, err := h.guard(g, true)
	if err != nil {
		return nil, err
	}
	return os.Stat(hp)
}
func (h hostVFS) lstat(g string) (fs.FileInfo, error) {
	h.rec.Stat(g, false)
	hp, err := h.guard(g, false)
	if err != nil {
		return nil, err
	}
	return os.Lstat(hp)
}
func (h hostVFS) readlink(g string) (string, error) {
	h.rec.Stat(g, false)
	hp, err := h.guard(g, false)
	if err != nil {
		return "", err
	}
	return os.Readlink(hp)
}
func (h hostVFS) mkdir(g string, perm fs.FileMode) error {
	return h.do(g, func(hp string) error { return os.Mkdir(hp, perm) })
}
func (h hostVFS) unlink(g string) error { return h.do(g, syscall.Unlink) }
func (h hostVFS) rmdir(g string) error  { return h.do(g, syscall.Rmdir) }
func (h hostVFS) rename(o, n string) error {
	h.rec.Source(o)
	h.rec.Change(o)
	return h.do2(o, n, os.Rename)
}
func (h hostVFS) link(o, n string) error { h.rec.Source(o); return h.do2(o, n, os.Link) }
func (h hostVFS) symlink(target, n string) error {
	return h.do(n, func(hp string) error { return os.Symlink(target, hp) })
}
func (h hostVFS) chmod(g string, mode fs.FileMode) error {
	h.rec.Stat(g, true)
	hp, err := h.guard(g, true)
	if err != nil {
		return unwrapPath(err)
	}
	return unwrapPath(os.Chmod(hp, mode))
}

// do runs op on the guarded host path of a name that is not followed
// (one the op makes or removes).
func (h hostVFS) do(g string, op func(hp string) error) error {
	h.rec.Change(g)
	hp, err := h.guard(g, false)
	if err != nil {
		return unwrapPath(err)
	}
	return unwrapPath(op(hp))
}

func (h hostVFS) do2(o, n string, op func(ho, hn string) error) error {
	h.rec.Change(n)
	ho, err := h.guard(o, false)
	if err != nil {
		return unwrapPath(err)
	}
	hn, err := h.guard(n, false)
	if err != nil {
		return unwrapPath(err)
	}
	return unwrapPath(op(ho, hn))
}
func (h hostVFS) hostName(g string) string { return h.path(g) }

// unwrapPath returns the errno inside a *PathError or *LinkError.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// newRootVFS returns the confined view of dir (see vfs). spec is DIR or
// DIR:ro.
func newRootVFS(spec string) (vfs, error) {
	dir, ro := spec, false
	if d, ok := strings.CutSuffix(spec, ":ro"); ok {
		dir, ro = d, true
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	return openRootVFS(dir, ro)
}

// readFileVFS reads a whole regular file of at most max bytes through fsys.
func readFileVFS(fsys vfs, g string, max int64) ([]byte, error) {
	f, err := fsys.open(g, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(f, g, max)
}

// readOpenedProgram is readOpened for a program file (maxExecutable).
func readOpenedProgram(f *os.File, g string) ([]byte, error) {
	return readOpened(f, g, maxExecutable)
}

// readOpened reads all of f, a regular file of at most max bytes (g
// names it in errors).
func readOpened(f *os.File, g string, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file: %w", g, ErrExec)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes is bigger than uvm loads (%d): %w", g, fi.Size(), max, ErrExec)
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}

// guard is h.path(g), refused (ENOENT) when the host would resolve it
// into a per-process /proc directory (intoHostProc). For an operation on
// a name that may not exist yet its parent directory is checked too.
func (h hostVFS) guard(g string, follow bool) (string, error) {
	hp := h.path(g)
	if intoHostProc(hp, follow) || intoHostProc(path.Dir(hp), true) {
		return "", &fs.PathError{Op: "open", Path: g, Err: syscall.ENOENT}
	}
	return hp, nil
}
