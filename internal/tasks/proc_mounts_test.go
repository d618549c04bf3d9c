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

// TestMountStatfs checks statfs's model of the table's mounts: f_flags
// from the mount options (calculate_f_flags), procfs's simple_statfs
// numbers, devtmpfs's shmem_statfs ones for the machine's memory, the
// pseudo file systems, and the guest's struct statfs layout.
func TestMountStatfs(t *testing.T) {
	root := mountEnt{id: procMntRoot, parent: procMntRoot, point: "/", mntOpts: "relatime", fstype: "ext4", src: "/dev/root", dev: 0x801}
	ms := baseMounts(root)
	for _, c := range []struct {
		e    mountEnt
		want uint64
	}{
		{ms[0], stValid | stRelatime},
		{ms[1], stValid | stNosuid | stNodev | stNoexec | stRelatime},
		{ms[2], stValid | stNosuid | stRelatime},
		{mountEnt{ro: true, mntOpts: "relatime"}, stValid | stRdonly | stRelatime},
		{mountEnt{mntOpts: "noatime,nodiratime,sync,nosymfollow"}, stValid | stNoatime | stNodiratime | stSynchronous | stNosymfollow},
	} {
		if got := c.e.statfsFlags(); got != c.want {
			t.Errorf("%q ro=%v: f_flags %#x, want %#x", c.e.mntOpts, c.e.ro, got, c.want)
		}
	}
	k := &Kernel{opts: Options{Limits: Limits{MemTotal: 1 << 30}}}
	if _, ok := k.syntheticStatfs(ms[0]); ok {
		t.Error("the root is host-backed, not synthetic")
	}
	p, ok := k.syntheticStatfs(ms[1])
	if want := (kstatfs{typ: 0x9fa0, bsize: 4096, namelen: 255, frsize: 4096, fsid: [2]uint32{procDev, 0},
		flags: stValid | stNosuid | stNodev | stNoexec | stRelatime}); !ok || p != want {
		t.Errorf("proc: %+v, want %+v", p, want)
	}
	d, ok := k.syntheticStatfs(ms[2])
	// 1 GiB: 2^18 pages, half of them the default size and inode limit.
	if want := (kstatfs{typ: 0x01021994, bsize: 4096, namelen: 255, frsize: 4096, fsid: [2]uint32{6, 0},
		blocks: 1 << 17, bfree: 1 << 17, bavail: 1 << 17, files: 1 << 17, ffree: 1<<17 - devfsInodes,
		flags: stValid | stNosuid | stRelatime}); !ok || d != want {
		t.Errorf("devtmpfs: %+v, want %+v", d, want)
	}
	if got := fsidOfDev(0x1234_5678_9abc); got != [2]uint32{0x56789abc, 0x1234} {
		t.Errorf("fsid of a 64-bit device %x", got)
	}
	for name, typ := range map[string]uint64{"pipe:[r]": 0x50495045, "socket:[7]": 0x534f434b,
		"anon_inode:[eventfd]": 0x09041934, "/memfd:x (deleted)": 0x01021994} {
		s, ok := pseudoStatfs(name, 0x0f)
		if want := (kstatfs{typ: typ, bsize: 4096, namelen: 255, frsize: 4096, flags: stValid, fsid: [2]uint32{0x0f, 0}}); !ok || s != want {
			t.Errorf("%s: %+v, want %+v", name, s, want)
		}
	}
	if _, ok := pseudoStatfs("/dev/stdin", 0); ok {
		t.Error("/dev/stdin: a pseudo file system")
	}
	b := d.encode()
	le := func(off int) uint64 {
		var v uint64
		for i := 7; i >= 0; i-- {
			v = v<<8 | uint64(b[off+i])
		}
		return v
	}
	if len(b) != 120 || le(0) != 0x01021994 || le(8) != 4096 || le(16) != 1<<17 || le(40) != 1<<17 ||
		le(56) != 6 || le(64) != 255 || le(72) != 4096 || le(80) != stValid|stNosuid|stRelatime || le(88) != 0 {
		t.Errorf("struct statfs: % x", b)
	}
}

// TestMountstatsFormat checks /proc/PID/mountstats against show_vfsstat:
// "device SRC mounted on POINT with fstype TYPE", escapes as in mounts.
func TestMountstatsFormat(t *testing.T) {
	root := mountEnt{id: procMntRoot, parent: procMntRoot, point: "/", mntOpts: "relatime", fstype: "ext4", src: "/dev/root", dev: 0x801}
	ms := append(baseMounts(root), mountEnt{id: 24, point: "/a b", ro: true, fstype: "tmpfs", src: "tmpfs"})
	want := "device /dev/root mounted on / with fstype ext4\n" +
		"device proc mounted on /proc with fstype proc\n" +
		"device devtmpfs mounted on /dev with fstype devtmpfs\n" +
		"device tmpfs mounted on /a\\040b with fstype tmpfs\n"
	if got := formatMountstats(ms); got != want {
		t.Errorf("mountstats:\n%s--- want\n%s", got, want)
	}
}
