package tasks

import (
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// atVFS is the kernel's file system (hostVFS or *rootVFS) seen from a host
// directory: its names are relative to dir and are resolved by the host
// kernel with the *at syscalls, step by step as the guest wrote them.
// Under --root each resolution is confined as rootVFS's are: it is first
// tried with openat2(RESOLVE_BENEATH) from dir (which lies inside the
// root, as every directory uvm opens there does), and a name that leaves
// dir — ".." above it, an absolute symlink — is resolved again with
// RESOLVE_IN_ROOT from the root along dir's current path in it (read from
// the kernel, so a renamed parent is followed; a dir the host moved out of
// the root resolves nothing). Unconfined, the host's per-process /proc
// stays out of reach as hostVFS keeps it (fdOnHostProc on what was
// opened).
type atVFS struct {
	base vfs      // hostVFS or *rootVFS
	dir  *os.File // the directory names start from (kept open by its owner)
	gdir string   // dir's guest path (lexical), for messages
}

// hostAnchors: Linux hosts open O_PATH directory anchors.
const hostAnchors = true

// anchorVFS returns fsys seen from dir.
func anchorVFS(fsys vfs, dir *os.File, gdir string) (vfs, bool) {
	switch fsys.(type) {
	case hostVFS, *rootVFS:
		return &atVFS{base: fsys, dir: dir, gdir: gdir}, true
	}
	return nil, false
}

// withDir runs op with dir's host descriptor, which stays open meanwhile
// even if another guest thread closes the descriptor.
func (a *atVFS) withDir(op func(dfd int) error) error {
	rc, err := a.dir.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = op(int(fd)) }); err != nil {
		return err
	}
	return opErr
}

// openAt resolves name from dfd with open flags (plus O_CLOEXEC) and mode.
func (a *atVFS) openAt(dfd int, name string, flags int, mode uint32) (int, error) {
	if r, ok := a.base.(*rootVFS); ok {
		return r.resolveAt(dfd, name, flags, mode)
	}
	// The directory the name is in must not be in the host's
	// per-process /proc either (a magic link there, as fd/0, opens what
	// it points to, which is not on procfs), as hostVFS.guard checks.
	if dir, _ := splitLast(name); dir != "" {
		pfd, err := hostOpenat(dfd, dir, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err == nil {
			bad := fdOnHostProc(pfd)
			unix.Close(pfd)
			if bad {
				return -1, unix.ENOENT
			}
		}
	}
	fd, err := hostOpenat(dfd, name, flags, mode)
	if err != nil {
		return -1, err
	}
	if fdOnHostProc(fd) {
		unix.Close(fd)
		return -1, unix.ENOENT
	}
	return fd, nil
}

// hostOpenat is the unconfined openat (plus O_CLOEXEC), refusing magic
// links (openat2 RESOLVE_NO_MAGICLINKS where the host has it): they live
// only in the host's /proc, which the guest must not reach, and a
// symlink swapped between the checks and the open cannot slip one past.
func hostOpenat(dfd int, name string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: unix.RESOLVE_NO_MAGICLINKS}
	fd, err := openat2Retry(dfd, name, &how)
	if err != unix.ENOSYS {
		return fd, err
	}
	for {
		fd, err := unix.Openat(dfd, name, flags|unix.O_CLOEXEC, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// resolveAt opens name relative to dfd, a directory inside the root,
// without leaving the root (see atVFS).
func (r *rootVFS) resolveAt(dfd int, name string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := openat2Retry(dfd, name, &how)
	if err != unix.EXDEV {
		return fd, err
	}
	in, err := r.pathInRoot(dfd)
	if err == nil {
		how.Resolve = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS
		fd, err = openat2Retry(r.fd, in+"/"+name, &how)
	}
	if err != unix.ENAMETOOLONG {
		return fd, err
	}
	// Deeper than the kernel's paths reach: one component at a time.
	return r.walk(dfd, name, flags, mode)
}

// maxSymlinks is Linux's limit on symlinks followed in one lookup (ELOOP).
const maxSymlinks = 40

// walk resolves name from dfd one component at a time, as the kernel's
// link_path_walk does, staying in the root: ".." at the root stays there,
// a symlink is read and its target walked in its place (an absolute one
// from the root), every step opens a single name with O_NOFOLLOW beneath
// the directory reached so far. Each directory reached lies inside the
// root (the guest can move directories only within it), so its ".." does
// too. Only the last component is opened with flags.
func (r *rootVFS) walk(dfd int, name string, flags int, mode uint32) (int, error) {
	cur, err := unix.Openat(dfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer func() { unix.Close(cur) }()
	var rootSt unix.Stat_t
	if err := unix.Fstat(r.fd, &rootSt); err != nil {
		return -1, err
	}
	step := func(fd int) { unix.Close(cur); cur = fd }
	rest := name
	links := 0
	for {
		if strings.HasPrefix(rest, "/") {
			// An absolute symlink target: from the root.
			fd, err := unix.Openat(r.fd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return -1, err
			}
			step(fd)
			rest = strings.TrimLeft(rest, "/")
		}
		comp, more, slash := rest, "", false
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp, more = rest[:i], strings.TrimLeft(rest[i:], "/")
			slash = true
		}
		last := more == ""
		switch {
		case comp == "" || comp == ".":
			if last {
				return r.openLast(cur, ".", flags, mode)
			}
		case comp == "..":
			var st unix.Stat_t
			if err := unix.Fstat(cur, &st); err != nil {
				return -1, err
			}
			if st.Dev != rootSt.Dev || st.Ino != rootSt.Ino {
				fd, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					return -1, err
				}
				step(fd)
			}
			if last {
				return r.openLast(cur, ".", flags, mode)
			}
		default:
			fd, err := unix.Openat(cur, comp, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if last && err == unix.ENOENT && flags&unix.O_CREAT != 0 {
				return r.openLast(cur, comp, flags, mode)
			}
			if err != nil {
				return -1, err
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				unix.Close(fd)
				return -1, err
			}
			isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
			if isLink && (!last || slash || flags&unix.O_NOFOLLOW == 0) {
				buf := make([]byte, 4096)
				n, err := unix.Readlinkat(fd, "", buf)
				unix.Close(fd)
				if err != nil {
					return -1, err
				}
				if links++; links > maxSymlinks {
					return -1, unix.ELOOP
				}
				target := string(buf[:n])
				if more != "" || slash {
					target += "/" + more
				}
				rest = target
				continue
			}
			if last && !slash {
				unix.Close(fd)
				return r.openLast(cur, comp, flags, mode)
			}
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				unix.Close(fd)
				return -1, unix.ENOTDIR
			}
			step(fd)
			if last {
				return r.openLast(cur, ".", flags, mode)
			}
		}
		rest = more
	}
}

// openLast opens the single name last (not a symlink to follow) in dir
// cur with the caller's flags.
func (r *rootVFS) openLast(cur int, last string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS}
	if flags&unix.O_NOFOLLOW != 0 || last == "." {
		how.Resolve &^= unix.RESOLVE_NO_SYMLINKS
	}
	return openat2Retry(cur, last, &how)
}

// fdPath is the host kernel's current path of descriptor fd (d_path):
// ENAMETOOLONG past a page, ENOENT for a removed directory.
func fdPath(fd int) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Nlink == 0 {
		return "", unix.ENOENT
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlink("/proc/self/fd/"+itoa(fd), buf)
	if err != nil {
		return "", err
	}
	if n >= len(buf) {
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}

// pathInRoot is dfd's current path relative to the root ("." for the
// root itself); ENOENT when dfd is not inside the root.
func (r *rootVFS) pathInRoot(dfd int) (string, error) {
	hp, err := fdPath(dfd)
	if err != nil {
		return "", err
	}
	root, err := fdPath(r.fd)
	if err != nil {
		return "", err
	}
	switch {
	case hp == root:
		return ".", nil
	case root == "/":
		return "." + hp, nil
	case strings.HasPrefix(hp, root+"/"):
		return "." + hp[len(root):], nil
	}
	return "", unix.ENOENT
}

// anchorPath is the guest path of directory d of fsys, as getcwd reports
// it (see cwdPath).
func anchorPath(fsys vfs, d *os.File) (string, error) {
	rc, err := d.SyscallConn()
	if err != nil {
		return "", err
	}
	var p string
	var perr error
	if err := rc.Control(func(fd uintptr) {
		if m, ok := fsys.(*mountVFS); ok {
			p, perr = m.guestPathOf(int(fd), "")
			return
		}
		r, confined := fsys.(*rootVFS)
		if !confined {
			p, perr = fdPath(int(fd))
			return
		}
		var in string
		in, perr = r.pathInRoot(int(fd))
		switch {
		case perr == unix.ENOENT:
			if hp, err := fdPath(int(fd)); err == nil {
				// Alive but outside the root (moved there by a host
				// process): Linux's getcwd says "(unreachable)"; the
				// host path stays hidden.
				p, perr = "(unreachable)/"+path.Base(hp), nil
			}
		case perr == nil:
			p = path.Clean("/" + in)
		}
	}); err != nil {
		return "", err
	}
	return p, perr
}

// parentAt resolves the directory of name from dfd and runs op on it and
// name's last component, which is not followed. The last component is
// taken as written ("." and ".." included: the *at syscall answers for
// them as Linux does).
func (a *atVFS) parentAt(name string, op func(dirfd int, last string) error) error {
	if ro, ok := a.base.(*rootVFS); ok && ro.ro {
		return unix.EROFS
	}
	return a.withDir(func(dfd int) error {
		dir, last := splitLast(name)
		if dir == "" {
			// The directory is dfd itself; for the unconfined view it
			// was checked when it was opened.
			return op(dfd, last)
		}
		pfd, err := a.openAt(dfd, dir, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(pfd)
		return op(pfd, last)
	})
}

// splitLast splits a relative name into its directory part ("" for none)
// and last component. Trailing slashes stay on the last component ("a/b/"
// is "a/", "b/"): the *at syscall then answers for them as for the whole
// name (ENOTDIR for a file, a symlink to a directory followed).
func splitLast(name string) (dir, last string) {
	t := strings.TrimRight(name, "/")
	if t == "" {
		return "", "."
	}
	i := strings.LastIndexByte(t, '/')
	if i < 0 {
		return "", name
	}
	return t[:i+1], name[i+1:]
}

func (a *atVFS) open(name string, flags int, perm fs.FileMode) (*os.File, error) {
	if r, ok := a.base.(*rootVFS); ok && r.ro && flags&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, unix.EROFS
	}
	mode := uint32(0)
	if flags&os.O_CREATE != 0 {
		mode = uint32(perm.Perm())
	}
	var fd int
	err := a.withDir(func(dfd int) error {
		var err error
		fd, err = a.openAt(dfd, name, flags, mode)
		return err
	})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), a.hostName(name)), nil
}

// fstatAt stats name from dir, resolved with O_PATH and extra flags.
func (a *atVFS) fstatAt(name string, flags int) (fs.FileInfo, error) {
	f, err := a.open(name, unix.O_PATH|flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

func (a *atVFS) stat(name string) (fs.FileInfo, error)  { return a.fstatAt(name, 0) }
func (a *atVFS) lstat(name string) (fs.FileInfo, error) { return a.fstatAt(name, unix.O_NOFOLLOW) }

func (a *atVFS) readlink(name string) (string, error) {
	f, err := a.open(name, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(int(f.Fd()), "", buf)
	if err != nil {
		if err == unix.ENOENT {
			return "", unix.EINVAL // not a symlink
		}
		return "", err
	}
	return string(buf[:n]), nil
}

func (a *atVFS) mkdir(name string, perm fs.FileMode) error {
	return a.parentAt(name, func(d int, n string) error { return unix.Mkdirat(d, n, unixMode(perm)) })
}

func (a *atVFS) unlink(name string) error {
	return a.parentAt(name, func(d int, n string) error { return unix.Unlinkat(d, n, 0) })
}

func (a *atVFS) rmdir(name string) error {
	return a.parentAt(name, func(d int, n string) error { return unix.Unlinkat(d, n, unix.AT_REMOVEDIR) })
}

func (a *atVFS) symlink(target, name string) error {
	return a.parentAt(name, func(d int, n string) error { return unix.Symlinkat(target, d, n) })
}

func (a *atVFS) rename(o, n string) error { return renameAt2(a, o, a, n, false) }
func (a *atVFS) link(o, n string) error   { return renameAt2(a, o, a, n, true) }

func (a *atVFS) chmod(name string, mode fs.FileMode) error {
	if r, ok := a.base.(*rootVFS); ok && r.ro {
		return unix.EROFS
	}
	f, err := a.open(name, unix.O_PATH, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	// As rootVFS.chmod: the descriptor's /proc/self/fd link names the
	// inode already resolved.
	return unix.Chmod("/proc/self/fd/"+itoa(int(f.Fd())), uint32(mode.Perm()))
}

func (a *atVFS) hostName(name string) string {
	return a.base.hostName(path.Join(a.gdir, name))
}

func (a *atVFS) chown(name string, uid, gid int, follow bool) error {
	if a.readOnly() {
		return unix.EROFS
	}
	flags := unix.O_PATH
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	f, err := a.open(name, flags, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fchownat(int(f.Fd()), "", uid, gid, unix.AT_EMPTY_PATH)
}

func (a *atVFS) mknod(name string, mode uint32) error {
	if err := a.parentAt(name, func(d int, n string) error { return unix.Mknodat(d, n, mode, 0) }); err != nil {
		return err
	}
	// The host's umask must not narrow what the guest's allowed.
	return a.chmod(name, goMode(mode))
}

func (a *atVFS) readOnly() bool {
	r, ok := a.base.(*rootVFS)
	return ok && r.ro
}

// pairVFS joins the two sides of rename and link when either is relative
// to a directory (the other may be a guest absolute name of the same
// file system): twoPaths hands it to the caller instead of one vfs, and
// only rename and link are asked of it.
func pairVFS(ofs, nfs vfs) (vfs, bool) {
	oa, ook := ofs.(*atVFS)
	na, nok := nfs.(*atVFS)
	if !ook && !nok {
		return nil, false
	}
	base := func(v vfs, a *atVFS, ok bool) vfs {
		if ok {
			return a.base
		}
		return v
	}
	ob, nb := base(ofs, oa, ook), base(nfs, na, nok)
	if ob != nb {
		return nil, false
	}
	return &twoVFS{vfs: ob, o: oa, n: na}, true
}

// twoVFS is rename and link across two directories (see pairVFS); a nil
// side is a guest absolute name of the embedded vfs.
type twoVFS struct {
	vfs
	o, n *atVFS
}

// side is the atVFS and relative name for one side of a twoVFS: an
// absolute guest name is taken from the file system's root.
func (p *twoVFS) side(a *atVFS, name string) (*atVFS, string, func(), error) {
	if a != nil {
		return a, name, func() {}, nil
	}
	f, err := p.vfs.open("/", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, "", nil, err
	}
	if h, ok := p.vfs.(hostVFS); ok {
		name = h.path(name) // the prefix applies to absolute names
	}
	rel := strings.TrimLeft(name, "/")
	if rel == "" {
		rel = "."
	}
	return &atVFS{base: p.vfs, dir: f, gdir: "/"}, rel, func() { f.Close() }, nil
}

func (p *twoVFS) rename(o, n string) error { return p.two(o, n, false) }
func (p *twoVFS) link(o, n string) error   { return p.two(o, n, true) }

func (p *twoVFS) two(o, n string, link bool) error {
	oa, o, oclose, err := p.side(p.o, o)
	if err != nil {
		return err
	}
	defer oclose()
	na, n, nclose, err := p.side(p.n, n)
	if err != nil {
		return err
	}
	defer nclose()
	return renameAt2(oa, o, na, n, link)
}

// renameAt2 renames (or links) o of oa to n of na with renameat/linkat
// on both parents; neither last component is followed.
func renameAt2(oa *atVFS, o string, na *atVFS, n string, link bool) error {
	return oa.parentAt(o, func(od int, on string) error {
		return na.parentAt(n, func(nd int, nn string) error {
			if link {
				return unix.Linkat(od, on, nd, nn, 0)
			}
			return unix.Renameat(od, on, nd, nn)
		})
	})
}

// inoAt is the inode number of name in directory dir (a single component
// or ".."; a final symlink is not followed), from the descriptor.
func inoAt(dir *os.File, name string, follow bool) (uint64, bool) {
	rc, err := dir.SyscallConn()
	if err != nil {
		return 0, false
	}
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	var st unix.Stat_t
	var serr error
	if rc.Control(func(fd uintptr) { serr = unix.Fstatat(int(fd), name, &st, flags) }) != nil || serr != nil {
		return 0, false
	}
	return st.Ino, true
}

// unconfinedAt runs op with the host directory of fsys when it is the
// unconfined view seen from a directory (for the calls that take a name
// relative to it directly, as utimensat with AT_SYMLINK_NOFOLLOW).
func unconfinedAt(fsys vfs, op func(dfd int) Errno) (Errno, bool) {
	a, ok := fsys.(*atVFS)
	if !ok {
		return 0, false
	}
	if _, unconfined := a.base.(hostVFS); !unconfined {
		return 0, false
	}
	var e Errno
	if err := a.withDir(func(dfd int) error { e = op(dfd); return nil }); err != nil {
		return errnoOf(err), true
	}
	return e, true
}

// maxDepth bounds anchorInRoot's climb (a path of PATH_MAX bytes has at
// most half as many components; deeper trees are climbed this far).
const maxDepth = 1 << 16

// anchorInRoot reports whether a guest descriptor's directory may anchor
// lookups: always unconfined; under --root only when it lies inside the
// root. Directories the guest opened do, but a descriptor it was handed
// (a directory as stdin) may be anywhere on the host, and RESOLVE_BENEATH
// from it would reach there. Checked on the kernel's current path, or by
// climbing ".." where that is longer than a page.
func anchorInRoot(fsys vfs, dir *os.File) bool {
	r, ok := fsys.(*rootVFS)
	if !ok {
		return true
	}
	rc, err := dir.SyscallConn()
	if err != nil {
		return false
	}
	in := false
	rc.Control(func(fd uintptr) {
		_, err := r.pathInRoot(int(fd))
		if err != unix.ENAMETOOLONG {
			in = err == nil
			return
		}
		in = r.climbsToRoot(int(fd))
	})
	return in
}

// climbsToRoot follows ".." from dfd until the root (true) or the host's
// own root, a directory that is its own parent (false).
func (r *rootVFS) climbsToRoot(dfd int) bool {
	var root unix.Stat_t
	if unix.Fstat(r.fd, &root) != nil {
		return false
	}
	cur, err := unix.Openat(dfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer func() { unix.Close(cur) }()
	var prev unix.Stat_t
	for i := 0; i < maxDepth; i++ {
		var st unix.Stat_t
		if unix.Fstat(cur, &st) != nil {
			return false
		}
		if st.Dev == root.Dev && st.Ino == root.Ino {
			return true
		}
		if i > 0 && st.Dev == prev.Dev && st.Ino == prev.Ino {
			return false
		}
		prev = st
		up, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		unix.Close(cur)
		cur = up
	}
	return false
}

// openedPaths is the host path of f, a file opened in fsys, as the host
// kernel names it now (d_path), and its guest path (see anchorPath).
func openedPaths(fsys vfs, f *os.File) (host, guest string, ok bool) {
	host, err := fdPath(int(f.Fd()))
	if err != nil {
		return "", "", false
	}
	guest, err = anchorPath(fsys, f)
	if err != nil {
		return "", "", false
	}
	return host, guest, true
}
