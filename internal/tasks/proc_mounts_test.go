package tasks

import "testing"

// TestMountFormat checks the mount table's two renderings against the
// kernel's show_vfsmnt and show_mountinfo formats: octal escapes of
// space, tab, newline and backslash, ro on a read-only bind, the parent
// of a nested mount, the "-" separator.
func TestMountFormat(t *testing.T) {
	root := mountEnt{id: procMntRoot, parent: procMntRoot, point: "/", mntOpts: "relatime", fstype: "ext4", src: "/dev/root", dev: 0x801}
	ms := baseMounts(root)
	ms = append(ms,
		mountEnt{id: 24, point: "/a b\tc\nd\\e", ro: true, mntOpts: "relatime", fstype: "ext4", src: "/dev/root", dev: 0x100803},
		mountEnt{id: 25, point: "/dev/shm", mntOpts: "relatime", fstype: "tmpfs", src: "tmpfs", dev: 0x2f})
	for i := 1; i < len(ms); i++ {
		ms[i].parent = mountParent(ms[:i], ms[i].point)
	}
	wantInfo := "1 1 8:1 / / rw,relatime - ext4 /dev/root rw\n" +
		"22 1 0:22 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n" +
		"23 1 0:6 / /dev rw,nosuid,relatime - devtmpfs devtmpfs rw,mode=755\n" +
		"24 1 8:259 / /a\\040b\\011c\\012d\\134e ro,relatime - ext4 /dev/root rw\n" +
		"25 23 0:47 / /dev/shm rw,relatime - tmpfs tmpfs rw\n"
	if got := formatMountinfo(ms); got != wantInfo {
		t.Errorf("mountinfo:\n%s--- want\n%s", got, wantInfo)
	}
	wantMounts := "/dev/root / ext4 rw,relatime 0 0\n" +
		"proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n" +
		"devtmpfs /dev devtmpfs rw,nosuid,relatime,mode=755 0 0\n" +
		"/dev/root /a\\040b\\011c\\012d\\134e ext4 ro,relatime 0 0\n" +
		"tmpfs /dev/shm tmpfs rw,relatime 0 0\n"
	if got := formatMounts(ms); got != wantMounts {
		t.Errorf("mounts:\n%s--- want\n%s", got, wantMounts)
	}
	if id := mountParent(append(ms, mountEnt{}), "/dev/shm/x/."); id != 25 {
		t.Errorf("mount of /dev/shm/x = %d, want 25", id)
	}
}
