//go:build !linux

package tasks

// guestMounts is the table without binds (they need Linux).
func (k *Kernel) guestMounts() []mountEnt {
	root := mountEnt{id: procMntRoot, parent: procMntRoot, point: "/", mntOpts: "relatime",
		fstype: "ext4", src: "/dev/root", dev: 0x801}
	if r, ok := k.fs.(interface{ readOnly() bool }); ok {
		root.ro = r.readOnly()
	}
	out := baseMounts(root)
	for i := 1; i < len(out); i++ {
		out[i].parent = mountParent(out[:i], out[i].point)
	}
	return out
}

// synthViaLinks: only a --root (Linux) hides uvm's /proc and /dev from
// the host's symlink resolution.
func (t *Task) synthViaLinks(string, bool) (string, bool) { return "", false }
