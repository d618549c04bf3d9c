package tasks

import (
	"errors"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
)

// Relative path arguments are looked up from a host directory descriptor,
// as Linux looks them up from the dentry of the dirfd or the cwd: a
// directory descriptor and the cwd hold an open host directory, so a
// rename of the directory or of any parent leaves them working, a path
// of any depth is reachable in relative steps, and the host kernel (not
// lexical cleaning) resolves "dir/.", "link/.." and the like. The
// lexically joined guest path (guestPath) still names the file for the
// synthetic /proc and /dev, /proc/self/fd and messages.
//
// pathArg is a path argument as the guest wrote it, with the descriptor
// it is relative to (AT_FDCWD or a directory).
type pathArg struct {
	dirfd int32
	p     string
}

// resolveAt reads a path argument; it returns the lexical guest path (as
// resolve) and the argument itself for lookupAt.
func (t *Task) resolveAt(dirfd int32, addr uint64) (string, pathArg, Errno) {
	p, e := t.readPath(addr)
	if e != 0 {
		return "", pathArg{}, e
	}
	g, e := t.guestPath(dirfd, p)
	if e != 0 {
		return "", pathArg{}, e
	}
	return g, pathArg{dirfd, p}, 0
}

// lookupAt is lookup for a path argument: a relative name that reaches
// the kernel's file system is looked up from the host directory of its
// dirfd or of the cwd (anchorVFS); everything else is lookup(g).
func (t *Task) lookupAt(g string, a pathArg) (vfs, string) {
	fsys, name := t.lookup(g)
	if fsys != t.tg.k.fs || name != g || a.p == "" {
		// A name lookup redirects (/proc/self/exe, hidden /proc).
		return fsys, name
	}
	if h, ok := fsys.(hostVFS); ok && h.rec != nil {
		// uvm run --record: the recording sees every file by its path
		// (hostVFS's hooks), so lookups stay on the full guest path.
		return fsys, name
	}
	if raw, ok := t.mountArg(fsys, a); ok {
		return fsys, raw
	}
	if path.IsAbs(a.p) {
		// From the root, with the name as written: "/d/file/." and
		// "/d/link/.." mean what the kernel makes of them.
		rel := strings.TrimLeft(a.p, "/")
		if rel == "" {
			rel = "."
		}
		dir, pre := t.tg.k.root.get(fsys)
		if pre != nil {
			// -L: a name that exists under the prefix is taken
			// there (as hostVFS.path takes it), found from the
			// prefix directory as written.
			if av, ok := anchorVFS(fsys, pre, "/"); ok {
				if _, err := av.lstat(rel); err == nil {
					return av, rel
				}
			}
		}
		if dir == nil {
			return fsys, name
		}
		if av, ok := anchorVFS(fsys, dir, "/"); ok {
			return av, rel
		}
		return fsys, name
	}
	dir, gdir := t.anchor(a.dirfd)
	if dir == nil {
		return fsys, name
	}
	if av, ok := anchorVFS(fsys, dir, gdir); ok {
		return av, a.p
	}
	return fsys, name
}

// procFollowAt follows the synthetic /proc's magic links in g
// (procFollowLast) and, where that rewrote the name, makes the lookup
// argument the rewritten absolute guest path, so lookupAt does not walk
// the name as written through links that only the synthetic /proc knows.
func (t *Task) procFollowAt(g string, a pathArg, follow bool) (string, pathArg, Errno) {
	n, e := t.procFollowLast(g, follow)
	if e != 0 {
		return "", a, e
	}
	if n != g {
		a = pathArg{dirfd: atFDCWD, p: n}
	}
	return n, a, 0
}

// rootAnchor is the kernel's file system root as a directory anchor,
// opened on first use (nil: none, as on hosts without O_PATH), and with
// a -L prefix the prefix directory too (absolute names are looked up
// under it first, then from the host's root).
type rootAnchor struct {
	once   sync.Once
	dir    *os.File // set once, then read-only
	prefix *os.File // likewise
}

func (r *rootAnchor) get(fsys vfs) (root, prefix *os.File) {
	r.once.Do(func() {
		if h, ok := fsys.(hostVFS); ok && h.prefix != "" {
			if d, err := openAnchor(hostVFS{}, h.prefix); err == nil {
				r.prefix = d
			}
			fsys = hostVFS{rec: h.rec} // "/" is the host's, not the prefix
		}
		if d, err := openAnchor(fsys, "/"); err == nil {
			r.dir = d
		}
	})
	return r.dir, r.prefix
}

// anchor is the host directory relative names of dirfd start from, with
// its guest path; nil when there is none (a descriptor that is not a host
// file, a host without descriptor-relative lookups).
func (t *Task) anchor(dirfd int32) (*os.File, string) {
	if dirfd == atFDCWD {
		return t.tg.cwdAnchor()
	}
	f, ok := t.tg.fds.get(dirfd)
	if !ok {
		return nil, ""
	}
	h, ok := f.hostOS()
	if !ok || !anchorInRoot(t.tg.k.fs, h) {
		return nil, ""
	}
	return h, f.path
}

// cwdAnchor is the cwd's host directory and guest path. The directory is
// opened on first use when the thread group started without one; it is
// shared with forked children and never closed explicitly (the garbage
// collector closes it once no thread group holds it).
func (tg *ThreadGroup) cwdAnchor() (*os.File, string) {
	tg.mu.Lock()
	d, g := tg.cwdDir, tg.cwd
	tg.mu.Unlock()
	if d != nil {
		return d, g
	}
	d, err := openAnchor(tg.k.fs, g)
	if err != nil {
		return nil, g
	}
	tg.mu.Lock()
	if tg.cwdDir == nil && tg.cwd == g {
		tg.cwdDir = d
	}
	d, g = tg.cwdDir, tg.cwd
	tg.mu.Unlock()
	return d, g
}

// openAnchor opens name in fsys as a directory anchor (O_PATH: only
// search permission, as chdir needs, and no read access).
func openAnchor(fsys vfs, name string) (*os.File, error) {
	if !hostAnchors {
		return nil, errNoAnchors
	}
	f, err := fsys.open(name, hostOPath|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// errNoAnchors is openAnchor's answer on hosts without O_PATH.
var errNoAnchors = errors.New("descriptor-relative lookups need a Linux host")

// chdirAt makes the directory fsys's name the cwd; g is its lexical guest
// path, kept where the real path cannot be read (deeper than a page).
func (t *Task) chdirAt(fsys vfs, name, g string) uint64 {
	fi, err := fsys.stat(name)
	if err != nil {
		return errRet(errnoOf(err))
	}
	if !fi.IsDir() {
		return errRet(ENOTDIR)
	}
	d, err := openAnchor(fsys, name)
	if err != nil {
		// A host without O_PATH anchors: the lexical cwd alone.
		d = nil
	}
	if d != nil {
		if real, err := anchorPath(t.tg.k.fs, d); err == nil {
			g = real
		}
	}
	t.tg.mu.Lock()
	t.tg.cwd, t.tg.cwdDir = g, d
	t.tg.mu.Unlock()
	return 0
}

// cwdPath is getcwd's answer: the cwd's current path in the guest's
// root, as the kernel's d_path gives it (a renamed parent shows its new
// name; ENOENT once the directory is removed; ENAMETOOLONG past a page;
// "(unreachable)" outside the root), or the lexical cwd on hosts without
// anchors.
func (t *Task) cwdPath() (string, Errno) {
	d, g := t.tg.cwdAnchor()
	if d == nil {
		if len(g)+1 > 4096 {
			return "", ENAMETOOLONG // d_path's page, as Linux
		}
		return g, 0
	}
	p, err := anchorPath(t.tg.k.fs, d)
	if err != nil {
		return "", errnoOf(err)
	}
	return p, 0
}
