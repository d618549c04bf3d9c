//go:build linux

package tasks

import (
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// guestMounts is the table for the kernel's file system.
func (k *Kernel) guestMounts() []mountEnt {
	root := mountEnt{id: procMntRoot, parent: procMntRoot, point: "/", mntOpts: "relatime"}
	var binds []*bindMount
	hostRoot := -1
	switch f := k.fs.(type) {
	case *mountVFS:
		hostRoot, root.ro = f.rootfd, f.baseRO
		binds = sortedBinds(f.mounts)
	case *rootVFS:
		hostRoot, root.ro = f.fd, f.ro
	}
	k.hostMountFS(&root, hostRoot, "/")
	out := baseMounts(root)
	for i, b := range binds {
		e := mountEnt{id: procMntBind0 + i, point: b.Guest, ro: b.RO, mntOpts: "relatime"}
		k.hostMountFS(&e, b.fd, b.Host)
		out = append(out, e)
	}
	for i := 1; i < len(out); i++ {
		out[i].parent = mountParent(out[:i], out[i].point)
	}
	return out
}

// sortedBinds lists the binds by mount point, shorter (outer) first.
func sortedBinds(m map[string]*bindMount) []*bindMount {
	pts := sortedKeys(m)
	out := make([]*bindMount, 0, len(pts))
	for _, p := range pts {
		out = append(out, m[p])
	}
	return out
}

// hostMountFS fills a host-backed mount's device, type and source from
// the host directory (descriptor fd, or path p when fd < 0).
func (k *Kernel) hostMountFS(e *mountEnt, fd int, p string) {
	e.fstype, e.src, e.dev = "ext4", "/dev/root", 0x801
	if k.det != nil {
		return
	}
	var st unix.Stat_t
	var sf unix.Statfs_t
	var err error
	if fd >= 0 {
		err = unix.Fstat(fd, &st)
		if err == nil {
			err = unix.Fstatfs(fd, &sf)
		}
	} else {
		err = unix.Stat(p, &st)
		if err == nil {
			err = unix.Statfs(p, &sf)
		}
	}
	if err != nil {
		return
	}
	e.dev = uint64(st.Dev)
	if name, ok := fsTypeNames[int64(sf.Type)]; ok {
		e.fstype = name
		if name == "tmpfs" || name == "overlay" || name == "ramfs" || name == "9p" {
			e.src = name
		}
	}
}

// fsTypeNames are the file system names of statfs magic numbers.
var fsTypeNames = map[int64]string{
	0xef53: "ext4", 0x58465342: "xfs", 0x9123683e: "btrfs", 0x01021994: "tmpfs",
	0x794c7630: "overlay", 0x858458f6: "ramfs", 0x01021997: "9p", 0x6969: "nfs",
	0x4d44: "vfat", 0x2fc12fc1: "zfs", 0x65735546: "fuse", 0xf2f52010: "f2fs",
}

// guestPathOfHost is the guest path host descriptor fd has now: its
// d_path below the host directory of the mount it lies on (mountOf)
// under a --bind, its path inside the root under --root, the host's
// path unconfined; hint, the guest path it was opened as, where the host
// cannot name it (a removed directory). ok=false: fd lies outside the
// guest's tree (a descriptor uvm was given, such as its stdin). Only for
// choosing a mount: nothing is looked up by it.
func (k *Kernel) guestPathOfHost(fd int, hint string) (g string, ok bool) {
	hp, err := fdPath(fd)
	if err != nil {
		return hint, true
	}
	switch f := k.fs.(type) {
	case *mountVFS:
		at, _, real, ok := f.mountOf(hp, hint, false)
		if !ok {
			return "", false
		}
		rest := strings.TrimPrefix(hp, real)
		if real == "/" {
			rest = hp
		}
		return path.Clean(at + "/" + rest), true
	case *rootVFS:
		in, err := f.pathInRoot(fd)
		if err != nil {
			return "", false
		}
		return path.Clean("/" + in), true
	}
	return hp, true
}
