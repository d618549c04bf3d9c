package tasks

import (
	"encoding/binary"
	"strings"
)

// statfs(2) of the mounts in the guest's mount table (proc_mounts.go):
// every answer agrees with the table. uvm's /proc and /dev answer as
// Linux's procfs (simple_statfs) and devtmpfs (shmem_statfs) do; a
// host-backed mount (the root, a --bind) gives the host file system's
// numbers; f_flags are always the mount's options as mountinfo shows
// them (calculate_f_flags), so a :ro bind or --root DIR:ro reports
// ST_RDONLY although the host directory behind it is writable.

// kstatfs is struct statfs as the guest receives it (the same 120 bytes
// on arm64 and x86-64).
type kstatfs struct {
	typ, bsize, blocks, bfree, bavail, files, ffree uint64
	fsid                                            [2]uint32
	namelen, frsize, flags                          uint64
}

// encode is the guest's struct statfs (f_spare zero).
func (s *kstatfs) encode() []byte {
	b := make([]byte, 120)
	le := binary.LittleEndian
	for i, v := range []uint64{s.typ, s.bsize, s.blocks, s.bfree, s.bavail, s.files, s.ffree} {
		le.PutUint64(b[i*8:], v)
	}
	le.PutUint32(b[56:], s.fsid[0])
	le.PutUint32(b[60:], s.fsid[1])
	le.PutUint64(b[64:], s.namelen)
	le.PutUint64(b[72:], s.frsize)
	le.PutUint64(b[80:], s.flags)
	return b
}

// File system magic numbers (include/uapi/linux/magic.h).
const (
	procSuperMagic   = 0x9fa0 // procfs's f_type
	tmpfsMagic       = 0x01021994
	pipefsMagic      = 0x50495045
	sockfsMagic      = 0x534f434b
	anonInodeFSMagic = 0x09041934
)

// statfs f_flags bits (ST_*, include/linux/statfs.h).
const (
	stRdonly      = 0x0001
	stNosuid      = 0x0002
	stNodev       = 0x0004
	stNoexec      = 0x0008
	stSynchronous = 0x0010
	stValid       = 0x0020
	stMandlock    = 0x0040
	stNoatime     = 0x0400
	stNodiratime  = 0x0800
	stRelatime    = 0x1000
	stNosymfollow = 0x2000
)

// statfsFlags is f_flags for the mount: ST_VALID and the bits of its
// per-mount options (rw/ro and mntOpts, as mountinfo's sixth field
// shows them).
func (e mountEnt) statfsFlags() uint64 {
	f := uint64(stValid)
	for _, o := range strings.Split(e.rwOpts(e.mntOpts), ",") {
		switch o {
		case "ro":
			f |= stRdonly
		case "nosuid":
			f |= stNosuid
		case "nodev":
			f |= stNodev
		case "noexec":
			f |= stNoexec
		case "sync":
			f |= stSynchronous
		case "mand":
			f |= stMandlock
		case "noatime":
			f |= stNoatime
		case "nodiratime":
			f |= stNodiratime
		case "relatime":
			f |= stRelatime
		case "nosymfollow":
			f |= stNosymfollow
		}
	}
	return f
}

// fsidOfDev is the f_fsid simple_statfs reports: the super block's
// device number as stat's st_dev encodes it (huge_encode_dev), split in
// two 32-bit halves (u64_to_fsid).
func fsidOfDev(dev uint64) [2]uint32 { return [2]uint32{uint32(dev), uint32(dev >> 32)} }

// devfsInodes is the number of inodes uvm's devtmpfs holds: its root
// directory, the memory devices and the stdin, stdout, stderr and fd
// links (devfs.go).
var devfsInodes = uint64(1 + len(memDevs) + 4)

// syntheticStatfs is statfs of uvm's own file systems: ok=false for a
// mount of another type (host-backed).
//
//   - proc: simple_statfs (no blocks, no inodes, PAGE_SIZE blocks,
//     NAME_MAX names, f_fsid the device);
//   - devtmpfs: shmem_statfs of a tmpfs with the default limits (half
//     the machine's memory as blocks, as many inodes), nothing stored
//     but its inodes. Linux takes f_fsid from a uuid drawn per mount;
//     uvm's is the device number, as simple_statfs would give.
func (k *Kernel) syntheticStatfs(e mountEnt) (kstatfs, bool) {
	s := kstatfs{bsize: 4096, frsize: 4096, namelen: 255, fsid: fsidOfDev(e.dev), flags: e.statfsFlags()}
	switch e.fstype {
	case "proc":
		s.typ = procSuperMagic
	case "devtmpfs":
		s.typ = tmpfsMagic
		half := uint64(k.memTotalBytes()) / 4096 / 2
		s.blocks, s.bfree, s.bavail = half, half, half
		s.files, s.ffree = half, half-min(half, devfsInodes)
	default:
		return kstatfs{}, false
	}
	return s, true
}

// mountAt is the entry of the mount guest path g lies on.
func (k *Kernel) mountAt(g string) mountEnt {
	ms := k.guestMounts()
	id := mountParent(append(ms, mountEnt{}), g+"/.")
	for _, e := range ms {
		if e.id == id {
			return e
		}
	}
	return ms[0]
}

// mountByID is the table's entry with id (ok=false: none).
func (k *Kernel) mountByID(id int) (mountEnt, bool) {
	for _, e := range k.guestMounts() {
		if e.id == id {
			return e, true
		}
	}
	return mountEnt{}, false
}

// pseudoStatfs is fstatfs of an in-kernel object that lies on none of
// the table's mounts (the kernel's internal pipefs, sockfs, anon_inodefs
// and the shm mount of memfds), recognised by its /proc/self/fd name,
// with dev the device its fstat reports: simple_statfs of an internal
// mount (only ST_VALID; f_fsid the device, also for the memfd mount's
// tmpfs, which Linux gives a random uuid), no blocks and no inodes (the
// memfd mount has no limits). ok=false for another.
func pseudoStatfs(name string, dev uint64) (kstatfs, bool) {
	s := kstatfs{bsize: 4096, frsize: 4096, namelen: 255, flags: stValid, fsid: fsidOfDev(dev)}
	switch {
	case strings.HasPrefix(name, "pipe:"):
		s.typ = pipefsMagic
	case strings.HasPrefix(name, "socket:"):
		s.typ = sockfsMagic
	case strings.HasPrefix(name, "anon_inode:"):
		s.typ = anonInodeFSMagic
	case strings.HasPrefix(name, "/memfd:"):
		s.typ = tmpfsMagic
	default:
		return kstatfs{}, false
	}
	return s, true
}
