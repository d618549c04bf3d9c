package tasks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// mountVFS is the kernel's file system with bind mounts (--bind) over a
// base, hostVFS or *rootVFS. The host kernel cannot resolve a guest path
// that crosses a bind (the bind is not a host mount), so every path is
// walked here one component at a time, as the kernel's link_path_walk
// does, from the base's root descriptor:
//
//   - each step opens a single name with O_NOFOLLOW below the directory
//     reached so far, or, where the guest path reached is a mount point,
//     the bind's own host descriptor;
//   - ".." goes back to the directory the walk came from (the walk keeps
//     the chain of directories from the root), so ".." at a bind's top is
//     the mount point's parent in the guest's tree, never the host
//     directory's parent, and ".." at the root stays there;
//   - a symlink is read and its target walked in its place, an absolute
//     one from the guest's root (at most maxSymlinks per lookup: ELOOP);
//   - the mount a file lies on decides EROFS (a :ro bind, or a read-only
//     root outside the binds) and EXDEV (rename and link between mounts).
//
// No host ".." is ever taken, so a walk reaches only what lies below the
// root or a bind's host directory. Without --root the base's root is the
// host's /, and every step is checked against the host's /proc as
// hostVFS checks its paths. Relative names reach the walk behind the
// current guest path of their directory (Task.mountArg, guestPathOf).
// Mount points are guest paths: a mount point, or a directory above one,
// cannot be renamed or removed (EBUSY).
type mountVFS struct {
	base     vfs
	rootfd   int    // O_PATH descriptor of the base's root (never closed)
	rootReal string // the host's path of rootfd at setup
	baseRO   bool   // read-only root (--root DIR:ro)
	hostProc bool   // unconfined base: the host's /proc is guarded
	// mounts are the binds by canonical guest mount point; the last
	// --bind on a point wins. Written only by newMountVFS.
	mounts map[string]*bindMount
}

// bindMount is one Bind with its host descriptor.
type bindMount struct {
	Bind
	fd   int // O_PATH descriptor of Host (never closed)
	dir  bool
	real string // the host's path of fd at setup (d_path), for guestPathOf
}

// newMountVFS adds binds, in order, to base. A mount point must exist in
// the guest's tree (earlier binds included) and be of Host's kind,
// directory or not, as mount(2) requires.
func newMountVFS(base vfs, binds []Bind) (vfs, error) {
	m := &mountVFS{base: base, mounts: map[string]*bindMount{}}
	switch b := base.(type) {
	case *rootVFS:
		m.rootfd, m.baseRO = b.fd, b.ro
	case hostVFS:
		if b.prefix != "" {
			return nil, errors.New("--bind cannot be combined with -L")
		}
		fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		m.rootfd, m.hostProc = fd, true
	default:
		return nil, fmt.Errorf("--bind over %T", base)
	}
	m.rootReal, _ = fdPath(m.rootfd)
	for _, b := range binds {
		fd, err := unix.Open(b.Host, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("--bind %s: %w", b.Host, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("--bind %s: %w", b.Host, err)
		}
		bm := &bindMount{Bind: b, fd: fd, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}
		bm.real, _ = fdPath(fd)
		at := "/"
		if b.Guest != "/" {
			pfd, _, g, err := m.openIn(b.Guest, unix.O_PATH, 0)
			if err != nil {
				unix.Close(fd)
				return nil, fmt.Errorf("--bind %s:%s: mount point: %v", b.Host, b.Guest, err)
			}
			var pst unix.Stat_t
			err = unix.Fstat(pfd, &pst)
			unix.Close(pfd)
			if err == nil && (pst.Mode&unix.S_IFMT == unix.S_IFDIR) != bm.dir {
				err = unix.ENOTDIR
				if bm.dir {
					err = errors.New("a directory cannot be bound onto a file")
				}
			}
			if err != nil {
				unix.Close(fd)
				return nil, fmt.Errorf("--bind %s:%s: mount point: %v", b.Host, b.Guest, err)
			}
			at = g
		} else if !bm.dir {
			unix.Close(fd)
			return nil, fmt.Errorf("--bind %s:/: not a directory", b.Host)
		}
		m.mounts[at] = bm
	}
	return m, nil
}

// readOnlyMount is the mount's EROFS: a :ro bind, or a read-only root.
func (m *mountVFS) readOnlyMount(b *bindMount) bool {
	if b != nil {
		return b.RO
	}
	return m.baseRO
}

// walkPos is a directory the walk reached.
type walkPos struct {
	g   string     // its guest path (symlinks resolved)
	fd  int        // O_PATH descriptor, owned by the walk
	mnt *bindMount // the mount it lies on (nil: the base)
}

// walker is one lookup: the chain of directories from the guest's root
// to where it stands.
type walker struct {
	m     *mountVFS
	stack []walkPos
	links int
}

// maxWalkDepth bounds the chain (a path of PATH_MAX bytes has at most
// half as many components; symlinks can add more): ENAMETOOLONG past it.
const maxWalkDepth = 4096

func (m *mountVFS) newWalker() (*walker, error) {
	w := &walker{m: m}
	if err := w.toRoot(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *walker) close() {
	for _, p := range w.stack {
		unix.Close(p.fd)
	}
	w.stack = w.stack[:0]
}

func (w *walker) cur() walkPos { return w.stack[len(w.stack)-1] }

// toRoot starts again from the guest's root.
func (w *walker) toRoot() error {
	w.close()
	src, b := w.m.rootfd, (*bindMount)(nil)
	if rb := w.m.mounts["/"]; rb != nil {
		src, b = rb.fd, rb
	}
	fd, err := dupFD(src)
	if err != nil {
		return err
	}
	w.stack = append(w.stack, walkPos{"/", fd, b})
	return nil
}

func (w *walker) push(p walkPos) error {
	if len(w.stack) >= maxWalkDepth {
		unix.Close(p.fd)
		return unix.ENAMETOOLONG
	}
	w.stack = append(w.stack, p)
	return nil
}

func (w *walker) pop() {
	if n := len(w.stack); n > 1 {
		unix.Close(w.stack[n-1].fd)
		w.stack = w.stack[:n-1]
	}
}

func dupFD(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) }

func joinG(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// readlinkAt reads the symlink name in dirfd ("" with fd: the link
// itself); EINVAL when it is not one.
func readlinkAt(dirfd int, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// countLink counts one symlink followed.
func (w *walker) countLink() error {
	if w.links++; w.links > maxSymlinks {
		return unix.ELOOP
	}
	return nil
}

// dirs walks every component of rest but the last, which it returns
// (with a trailing slash kept; "" for a path ending at a directory).
func (w *walker) dirs(rest string) (string, error) {
	for {
		if strings.HasPrefix(rest, "/") {
			if err := w.toRoot(); err != nil {
				return "", err
			}
			rest = strings.TrimLeft(rest, "/")
		}
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return rest, nil
		}
		comp, more := rest[:i], strings.TrimLeft(rest[i:], "/")
		if more == "" {
			return comp + "/", nil
		}
		next, err := w.enter(comp)
		if err != nil {
			return "", err
		}
		if next != "" {
			// A symlink: its target in its place.
			more = next + "/" + more
		}
		rest = more
	}
}

// enter steps into directory comp; a symlink's target is returned instead
// (the caller walks it).
func (w *walker) enter(comp string) (string, error) {
	switch comp {
	case "", ".":
		return "", nil
	case "..":
		w.pop()
		return "", nil
	}
	cur := w.cur()
	child := joinG(cur.g, comp)
	if b := w.m.mounts[child]; b != nil {
		if !b.dir {
			return "", unix.ENOTDIR
		}
		fd, err := dupFD(b.fd)
		if err != nil {
			return "", err
		}
		return "", w.push(walkPos{child, fd, b})
	}
	fd, err := unix.Openat(cur.fd, comp, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	if w.m.hostProc && fdOnHostProc(fd) {
		unix.Close(fd)
		return "", unix.ENOENT
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return "", err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		target, err := readlinkAt(fd, "")
		unix.Close(fd)
		if err != nil {
			return "", err
		}
		if err := w.countLink(); err != nil {
			return "", err
		}
		if target == "" {
			return "", unix.ENOENT
		}
		return target, nil
	case unix.S_IFDIR:
		return "", w.push(walkPos{child, fd, cur.mnt})
	}
	unix.Close(fd)
	return "", unix.ENOTDIR
}

// writeFlags reports open flags that change the file system.
func writeFlags(flags int) bool {
	return flags&unix.O_PATH == 0 && flags&(unix.O_WRONLY|unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC) != 0
}

// openIn opens guest path g with open flags, following a last symlink
// unless O_NOFOLLOW; it returns the descriptor with the mount it lies on
// and its guest path.
func (m *mountVFS) openIn(g string, flags int, mode uint32) (int, *bindMount, string, error) {
	w, err := m.newWalker()
	if err != nil {
		return -1, nil, "", err
	}
	defer w.close()
	last, err := w.dirs("/" + g)
	if err != nil {
		return -1, nil, "", err
	}
	follow := flags&unix.O_NOFOLLOW == 0
	for {
		slash := strings.HasSuffix(last, "/")
		name := strings.TrimRight(last, "/")
		if name == ".." {
			w.pop()
		}
		cur := w.cur()
		if name == "" || name == "." || name == ".." {
			fd, err := unix.Openat(cur.fd, ".", flags|unix.O_CLOEXEC, mode)
			return fd, cur.mnt, cur.g, err
		}
		child := joinG(cur.g, name)
		if b := m.mounts[child]; b != nil {
			switch {
			case slash && !b.dir:
				return -1, nil, "", unix.ENOTDIR
			case flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL:
				return -1, nil, "", unix.EEXIST
			case b.RO && writeFlags(flags):
				return -1, nil, "", unix.EROFS
			}
			fd, err := reopenBind(b, flags)
			return fd, b, child, err
		}
		if follow || slash {
			if target, err := readlinkAt(cur.fd, name); err == nil {
				if err := w.countLink(); err != nil {
					return -1, nil, "", err
				}
				if target == "" {
					return -1, nil, "", unix.ENOENT
				}
				if slash {
					target += "/"
				}
				if last, err = w.dirs(target); err != nil {
					return -1, nil, "", err
				}
				continue
			}
		}
		if m.readOnlyMount(cur.mnt) && writeFlags(flags) {
			if flags&unix.O_CREAT != 0 && flags&unix.O_EXCL != 0 {
				var st unix.Stat_t
				if unix.Fstatat(cur.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
					return -1, nil, "", unix.EEXIST
				}
			}
			return -1, nil, "", unix.EROFS
		}
		fl := flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if slash {
			fl |= unix.O_DIRECTORY
		}
		how := unix.OpenHow{Flags: uint64(fl), Mode: uint64(mode), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
		fd, err := openat2Retry(cur.fd, name, &how)
		if err == unix.ENOSYS {
			// No openat2 (before Linux 5.6; --root refuses to start
			// there): one name with O_NOFOLLOW needs neither flag.
			fd, err = unix.Openat(cur.fd, name, fl, mode)
		}
		if err != nil {
			if err == unix.ELOOP && follow {
				// Made a symlink since it was read: again.
				if err := w.countLink(); err != nil {
					return -1, nil, "", err
				}
				continue
			}
			return -1, nil, "", err
		}
		if m.hostProc && fdOnHostProc(fd) {
			unix.Close(fd)
			return -1, nil, "", unix.ENOENT
		}
		if flags&unix.O_PATH != 0 && follow {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				unix.Close(fd)
				if err := w.countLink(); err != nil {
					return -1, nil, "", err
				}
				continue
			}
		}
		return fd, cur.mnt, child, nil
	}
}

// reopenBind opens a bind's own host file or directory with flags.
func reopenBind(b *bindMount, flags int) (int, error) {
	flags &^= unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW
	if flags&unix.O_PATH != 0 {
		return dupFD(b.fd)
	}
	if b.dir {
		return unix.Openat(b.fd, ".", flags|unix.O_CLOEXEC, 0)
	}
	// The descriptor's /proc/self/fd link names the inode already
	// resolved; nothing is looked up again.
	return unix.Open("/proc/self/fd/"+itoa(b.fd), flags|unix.O_CLOEXEC, 0)
}

func (m *mountVFS) open(g string, flags int, perm fs.FileMode) (*os.File, error) {
	mode := uint32(0)
	if flags&os.O_CREATE != 0 {
		mode = uint32(perm.Perm())
	}
	fd, _, _, err := m.openIn(g, flags, mode)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), m.lexicalHost(g)), nil
}

func (m *mountVFS) statFD(g string, flags int) (fs.FileInfo, error) {
	f, err := m.open(g, unix.O_PATH|flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

func (m *mountVFS) stat(g string) (fs.FileInfo, error)  { return m.statFD(g, 0) }
func (m *mountVFS) lstat(g string) (fs.FileInfo, error) { return m.statFD(g, unix.O_NOFOLLOW) }

// parent walks to g's directory and runs op there with g's last component
// (a trailing slash kept: the *at syscall answers for it) and the mount
// point bound there, if any. A last component "." or ".." names no entry
// of a directory: errDotLast.
func (m *mountVFS) parent(g string, op func(w *walker, name string, b *bindMount) error) error {
	w, err := m.newWalker()
	if err != nil {
		return err
	}
	defer w.close()
	last, err := w.dirs("/" + g)
	if err != nil {
		return err
	}
	switch strings.TrimRight(last, "/") {
	case "", ".", "..":
		return errDotLast
	}
	return op(w, last, m.mounts[joinG(w.cur().g, strings.TrimRight(last, "/"))])
}

// errDotLast is parent's answer for a name whose last component is "."
// or ".." (or the root): EEXIST to create, EBUSY to remove or rename.
var errDotLast = errors.New("last component is a dot or dot-dot")

// dotLast maps errDotLast to e.
func dotLast(err error, e unix.Errno) error {
	if err == errDotLast {
		return e
	}
	return err
}

func (m *mountVFS) readlink(g string) (string, error) {
	var target string
	err := m.parent(g, func(w *walker, name string, b *bindMount) error {
		if b != nil {
			return unix.EINVAL
		}
		var err error
		target, err = readlinkAt(w.cur().fd, name)
		return err
	})
	return target, dotLast(err, unix.EINVAL)
}

// create runs op to make a new entry: EEXIST for a mount point or an
// existing name on a read-only mount, else EROFS there.
func (m *mountVFS) create(g string, op func(dirfd int, name string) error) error {
	return dotLast(m.createIn(g, op), unix.EEXIST)
}

func (m *mountVFS) createIn(g string, op func(dirfd int, name string) error) error {
	return m.parent(g, func(w *walker, name string, b *bindMount) error {
		cur := w.cur()
		if b != nil {
			return unix.EEXIST
		}
		if m.readOnlyMount(cur.mnt) {
			var st unix.Stat_t
			if unix.Fstatat(cur.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				return unix.EEXIST
			}
			return unix.EROFS
		}
		return op(cur.fd, name)
	})
}

// remove runs op to remove an entry: EROFS on a read-only mount, EBUSY for
// a mount point.
func (m *mountVFS) remove(g string, op func(dirfd int, name string) error) error {
	return dotLast(m.parent(g, func(w *walker, name string, b *bindMount) error {
		cur := w.cur()
		if m.readOnlyMount(cur.mnt) {
			return unix.EROFS
		}
		if b != nil {
			// A directory above a mount point holds it on the
			// host too (mount points exist): ENOTEMPTY from there.
			return unix.EBUSY
		}
		return op(cur.fd, name)
	}), unix.EBUSY)
}

// aboveMount reports a mount point below guest path g.
func (m *mountVFS) aboveMount(g string) bool {
	for at := range m.mounts {
		if strings.HasPrefix(at, g+"/") {
			return true
		}
	}
	return false
}

func (m *mountVFS) mkdir(g string, perm fs.FileMode) error {
	return m.create(g, func(d int, n string) error { return unix.Mkdirat(d, n, unixMode(perm)) })
}

func (m *mountVFS) unlink(g string) error {
	return m.remove(g, func(d int, n string) error { return unix.Unlinkat(d, n, 0) })
}

func (m *mountVFS) rmdir(g string) error {
	return m.remove(g, func(d int, n string) error { return unix.Unlinkat(d, n, unix.AT_REMOVEDIR) })
}

func (m *mountVFS) symlink(target, g string) error {
	return m.create(g, func(d int, n string) error { return unix.Symlinkat(target, d, n) })
}

func (m *mountVFS) rename(o, n string) error { return m.two(o, n, false) }
func (m *mountVFS) link(o, n string) error   { return m.two(o, n, true) }

// two is rename and link: both parents on one mount (else EXDEV, as
// Linux checks first), which must be writable; a mount point, or a
// directory above one, stays where it is (EBUSY).
func (m *mountVFS) two(o, n string, link bool) error {
	return dotLast(m.twoIn(o, n, link), unix.EBUSY)
}

func (m *mountVFS) twoIn(o, n string, link bool) error {
	return m.parent(o, func(ow *walker, on string, ob *bindMount) error {
		return m.parent(n, func(nw *walker, nn string, nb *bindMount) error {
			od, nd := ow.cur(), nw.cur()
			if od.mnt != nd.mnt {
				return unix.EXDEV
			}
			if m.readOnlyMount(od.mnt) {
				return unix.EROFS
			}
			if link {
				if nb != nil {
					return unix.EEXIST
				}
				if ob != nil {
					return unix.EXDEV
				}
				return unix.Linkat(od.fd, on, nd.fd, nn, 0)
			}
			if ob != nil || nb != nil || m.aboveMount(joinG(od.g, strings.TrimRight(on, "/"))) || m.aboveMount(joinG(nd.g, strings.TrimRight(nn, "/"))) {
				return unix.EBUSY
			}
			return unix.Renameat(od.fd, on, nd.fd, nn)
		})
	})
}

// writable opens g as O_PATH (following unless nofollow) and runs op on
// it, EROFS on a read-only mount.
func (m *mountVFS) writable(g string, nofollow bool, op func(fd int) error) error {
	flags := unix.O_PATH
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, b, _, err := m.openIn(g, flags, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if m.readOnlyMount(b) {
		return unix.EROFS
	}
	return op(fd)
}

func (m *mountVFS) chmod(g string, mode fs.FileMode) error {
	return m.writable(g, false, func(fd int) error {
		// As rootVFS.chmod: through the resolved descriptor's link.
		return unix.Chmod("/proc/self/fd/"+itoa(fd), uint32(mode.Perm()))
	})
}

func (m *mountVFS) chown(g string, uid, gid int, follow bool) error {
	return m.writable(g, !follow, func(fd int) error {
		return unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH)
	})
}

func (m *mountVFS) mknod(g string, mode uint32) error {
	if err := m.create(g, func(d int, n string) error { return unix.Mknodat(d, n, mode, 0) }); err != nil {
		return err
	}
	return m.chmod(g, goMode(mode))
}

// readOnly is true only when every mount is read-only (the per-file
// answer is readOnlyAt).
func (m *mountVFS) readOnly() bool {
	if !m.baseRO {
		return false
	}
	for _, b := range m.mounts {
		if !b.RO {
			return false
		}
	}
	return true
}

// readOnlyAt reports that name of fsys lies on a read-only mount (a :ro
// bind or a read-only root), for the operations that change a file found
// by its name outside the vfs methods (utimensat).
func readOnlyAt(fsys vfs, name string, follow bool) bool {
	switch v := fsys.(type) {
	case *mountVFS:
		flags := unix.O_PATH
		if !follow {
			flags |= unix.O_NOFOLLOW
		}
		fd, b, _, err := v.openIn(name, flags, 0)
		if err != nil {
			return false
		}
		unix.Close(fd)
		return v.readOnlyMount(b)
	case interface{ readOnly() bool }:
		return v.readOnly()
	}
	return false
}

// hostName is the host's path of the file g resolves to, or the lexical
// one (Host joined with the rest) where it does not resolve.
func (m *mountVFS) hostName(g string) string {
	fd, _, _, err := m.openIn(g, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err == nil {
		p, err := fdPath(fd)
		unix.Close(fd)
		if err == nil {
			return p
		}
	}
	return m.lexicalHost(g)
}

// lexicalHost is g's host path by its longest mount point prefix.
func (m *mountVFS) lexicalHost(g string) string {
	c := path.Clean("/" + g)
	best := ""
	for at := range m.mounts {
		if (c == at || at == "/" || strings.HasPrefix(c, at+"/")) && len(at) > len(best) {
			best = at
		}
	}
	if best == "" {
		return m.base.hostName(c)
	}
	return path.Join(m.mounts[best].Host, strings.TrimPrefix(c, best))
}

// utimensNoFollow runs op (utimensat with AT_SYMLINK_NOFOLLOW) on the
// last component of name from its parent directory when fsys is a
// mountVFS and the last component is not followed; ok is false otherwise.
func utimensNoFollow(fsys vfs, name string, nofollow bool, op func(dirfd int, name string) Errno) (Errno, bool) {
	m, isMount := fsys.(*mountVFS)
	if !isMount || !nofollow {
		return 0, false
	}
	var e Errno
	handled := true
	err := m.parent(name, func(w *walker, last string, b *bindMount) error {
		if b != nil {
			// A mount point is no symlink: the caller's way, through
			// the bind's host file.
			handled = false
			return nil
		}
		cur := w.cur()
		if m.readOnlyMount(cur.mnt) {
			return unix.EROFS
		}
		e = op(cur.fd, last)
		return nil
	})
	if err != nil {
		return errnoOf(err), true
	}
	return e, handled
}

// guestPathOf is the guest path of host descriptor fd now (renames
// followed): the host's d_path of fd below the host directory of the
// mount it lies on (mountOf; hint is the guest path it was opened as),
// under that mount point. ENOENT for a removed directory or one outside
// every mount. Only a name: lookups from it are walked again from
// the guest's root, so it confines nothing and cannot leak.
func (m *mountVFS) guestPathOf(fd int, hint string) (string, error) {
	hp, err := fdPath(fd)
	if err != nil {
		return "", err
	}
	at, _, real, ok := m.mountOf(hp, hint, true)
	if !ok {
		return "", unix.ENOENT
	}
	rest := strings.TrimPrefix(hp, real)
	if real == "/" {
		rest = hp
	}
	return path.Clean(at + "/" + rest), nil
}

// mountOf picks the mount host path hp lies on: of the binds whose host
// directory (or file, unless dirsOnly) holds hp, the one with the longest
// mount point that is a prefix of hint, else the one with the longest
// host path, ties to the smaller mount point; the base (b nil) only where
// no bind holds hp. (A host file both a bind and the base show is the
// bind's: the base could reach it only where it lies inside the root's
// host directory, or unconfined, and then the guest reaches it anyway.)
func (m *mountVFS) mountOf(hp, hint string, dirsOnly bool) (at string, b *bindMount, real string, ok bool) {
	hinted := false
	try := func(a string, bm *bindMount, r string) {
		if r == "" || hp != r && r != "/" && !strings.HasPrefix(hp, r+"/") {
			return
		}
		h := hint != "" && (hint == a || a == "/" || strings.HasPrefix(hint, a+"/"))
		better := !ok || h && !hinted
		if ok && h == hinted {
			if h {
				better = len(a) > len(at) || len(a) == len(at) && a < at
			} else {
				better = len(r) > len(real) || len(r) == len(real) && a < at
			}
		}
		if better {
			at, b, real, ok, hinted = a, bm, r, true, h
		}
	}
	for a, bm := range m.mounts {
		if bm.dir || !dirsOnly {
			try(a, bm, bm.real)
		}
	}
	if !ok && m.mounts["/"] == nil {
		try("/", nil, m.rootReal)
	}
	return at, b, real, ok
}

// readOnlyFile reports that open host file h, opened as guest path g,
// lies on a read-only mount (for fchmod, fchown, futimens): by the mount
// its host path lies on (mountOf), so a symlink changed since the open
// cannot move it to a writable one; by g where the host path is unknown.
func readOnlyFile(fsys vfs, h *os.File, g string) bool {
	m, ok := fsys.(*mountVFS)
	if !ok {
		return readOnlyAt(fsys, g, true)
	}
	rc, err := h.SyscallConn()
	if err != nil {
		return readOnlyAt(fsys, g, true)
	}
	var hp string
	var perr error
	if rc.Control(func(fd uintptr) { hp, perr = fdPath(int(fd)) }) != nil || perr != nil {
		return readOnlyAt(fsys, g, true)
	}
	if _, b, _, found := m.mountOf(hp, g, false); found {
		return m.readOnlyMount(b)
	}
	return readOnlyAt(fsys, g, true)
}

// mountArg is a path argument as written, for the walk: absolute as it
// is, relative behind the current guest path of its directory (the cwd's
// or dirfd's host directory, renames followed); ok is false for another
// vfs, or where the directory has no current guest path (then the lexical
// name is used).
func (t *Task) mountArg(fsys vfs, a pathArg) (string, bool) {
	m, ok := fsys.(*mountVFS)
	if !ok {
		return "", false
	}
	if path.IsAbs(a.p) {
		return a.p, true
	}
	var dir *os.File
	var hint string
	if a.dirfd == atFDCWD {
		dir, hint = t.tg.cwdAnchor()
	} else if f, ok := t.tg.fds.get(a.dirfd); ok {
		dir, _ = f.hostOS()
		hint = f.path
	}
	if dir == nil {
		return "", false
	}
	rc, err := dir.SyscallConn()
	if err != nil {
		return "", false
	}
	var g string
	var gerr error
	if rc.Control(func(fd uintptr) { g, gerr = m.guestPathOf(int(fd), hint) }) != nil || gerr != nil {
		return "", false
	}
	return g + "/" + a.p, true
}
