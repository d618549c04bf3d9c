//go:build linux

package tasks

import (
	"io/fs"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// Symlinks inside a confined root that lead into uvm's own /proc or /dev.
// uvm serves those trees by guest path before the vfs is asked, so the
// host, resolving a name inside the --root directory, finds only the
// empty proc/ and dev/ directories there: Debian's /etc/mtab, a link to
// ../proc/self/mounts, would be ENOENT. Where the host's lookup of a
// name failed with ENOENT, synthViaLinks walks it in uvm, one component
// at a time, reading the symlinks in the guest's tree (absolute ones
// from the guest's root, at most maxSymlinks), and gives the guest path
// reached when it enters /proc or one of uvm's /dev entries; the open,
// stat or statfs is then answered there. Unconfined (no --root) the
// host's own /proc answers such a name and the guard refuses it
// (hostVFS.guard): the walk is not taken, so no symlink swapped by the
// guest can turn an open refused there into another file.

// maxSynthWalk bounds the components one walk steps through (symlink
// targets add theirs).
const maxSynthWalk = 4096

// synthPathMax bounds the name being walked (PATH_MAX).
const synthPathMax = 4096

// synthViaLinks is the guest path g's symlinks lead to (the last one too
// when followLast) when that lies in uvm's /proc or /dev; ok=false where
// it does not, where the walk fails, or unconfined.
func (t *Task) synthViaLinks(g string, followLast bool) (string, bool) {
	if !t.tg.k.synthMayLink(g) {
		return "", false
	}
	comps := strings.Split(strings.Trim(path.Clean("/"+g), "/"), "/")
	cur, links, steps := "/", 0, 0
	for len(comps) > 0 {
		if steps++; steps > maxSynthWalk {
			return "", false
		}
		c := comps[0]
		comps = comps[1:]
		if c == "" || c == "." {
			continue
		}
		next := path.Join(cur, c) // cur has no symlinks: ".." is lexical
		full := path.Join(append([]string{next}, comps...)...)
		if next == "/proc" || devSynthetic(full) {
			n, e := t.procCanon(full) // as guestPath: magic links inside
			return n, e == 0 && n != path.Clean("/"+g)
		}
		if c == ".." || len(comps) == 0 && !followLast {
			cur = next
			continue
		}
		fsys, name := t.lookup(next)
		fi, err := fsys.lstat(name)
		if err != nil {
			return "", false
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", false
		}
		target, err := fsys.readlink(name)
		if err != nil || target == "" || len(target)+len(full) > synthPathMax {
			return "", false
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		comps = append(strings.Split(strings.Trim(target, "/"), "/"), comps...)
	}
	return "", false
}

// synthMayLink reports that the walk may find a symlink on guest path g
// under a --root (the guest's tree has no host /proc; unconfined, false).
// One host lookup keeps the walk off the common failure, a name missing
// in the root's tree: resolved inside the root with no symlink allowed,
// ENOENT (or ENOTDIR) means a missing name comes before any symlink, and
// the walk would stop there. ELOOP is a symlink on the way. Only a name
// below a bind's mount point, which the host's view of the root does not
// show, is always walked.
func (k *Kernel) synthMayLink(g string) bool {
	var rootfd int
	switch f := k.fs.(type) {
	case *rootVFS:
		rootfd = f.fd
	case *mountVFS:
		if f.hostProc {
			return false
		}
		for at := range f.mounts {
			if at == "/" || g == at || strings.HasPrefix(g, at+"/") {
				return true
			}
		}
		rootfd = f.rootfd
	default:
		return false
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := openat2Retry(rootfd, rel(g), &how)
	if err == nil {
		unix.Close(fd) // there after all (changed meanwhile): walk it
		return true
	}
	return err == unix.ELOOP
}
