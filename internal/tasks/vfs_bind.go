package tasks

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Bind is one bind-style addition to the guest's file system (uvm run
// --bind HOST:GUEST[:ro]): the guest path Guest shows the host directory
// or file Host, read-only when RO. Like a Linux bind mount it is a mount
// of its own: ".." at its top is Guest's parent in the guest's tree,
// absolute symlinks inside it resolve in the guest's tree, and rename or
// link between it and another mount fails with EXDEV (see mountVFS).
type Bind struct {
	Host  string // absolute host path
	Guest string // cleaned absolute guest path (the mount point)
	RO    bool
}

// ParseBind reads a --bind value, HOST:GUEST or HOST:GUEST:ro. GUEST must
// be absolute and HOST must exist; a HOST with colons in it is split at
// the last colon before GUEST.
func ParseBind(spec string) (Bind, error) {
	s, ro := strings.CutSuffix(spec, ":ro")
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Bind{}, fmt.Errorf("--bind %q: want HOST:GUEST or HOST:GUEST:ro", spec)
	}
	host, guest := s[:i], s[i+1:]
	if host == "" {
		return Bind{}, fmt.Errorf("--bind %q: empty HOST", spec)
	}
	if !path.IsAbs(guest) {
		return Bind{}, fmt.Errorf("--bind %q: GUEST %q is not an absolute path", spec, guest)
	}
	abs, err := filepath.Abs(host)
	if err != nil {
		return Bind{}, fmt.Errorf("--bind %q: %v", spec, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return Bind{}, fmt.Errorf("--bind %q: HOST: %v", spec, err)
	}
	return Bind{Host: abs, Guest: path.Clean(guest), RO: ro}, nil
}

// readOnlyArg reports that a path argument (relative to dirfd; empty: the
// descriptor itself) names a file on a read-only mount.
func (t *Task) readOnlyArg(dirfd int32, addr uint64, follow bool) bool {
	p, e := t.readPath(addr)
	if e != 0 {
		return false
	}
	if p == "" {
		f, ok := t.tg.fds.get(dirfd)
		if !ok {
			return false
		}
		if h, isHost := f.hostOS(); isHost {
			return readOnlyFile(t.tg.k.fs, h, f.path)
		}
		return readOnlyAt(t.tg.k.fs, f.path, true)
	}
	g, e := t.guestPath(dirfd, p)
	if e != 0 {
		return false
	}
	fsys, name := t.lookup(g)
	return readOnlyAt(fsys, name, follow)
}
