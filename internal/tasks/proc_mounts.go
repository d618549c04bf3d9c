package tasks

import "strings"

// The guest's mount table (/proc/PID/mounts, /proc/PID/mountinfo,
// /proc/PID/mountstats and the /proc/mounts link): uvm's, never the
// host's. It lists the mounts the guest's tree is made of as uvm models
// it:
//
//   - "/": the --root directory, or without --root the host's / (the
//     host's other mounts, which an unconfined guest reaches through it,
//     are not listed: the table describes uvm's model, one root file
//     system);
//   - /proc (uvm's procfs) and /dev (uvm's devtmpfs of memory devices);
//   - each --bind at its guest mount point, ro when :ro (a later bind on
//     the same point replaces an earlier one, as the guest sees it).
//
// Mount IDs are fixed (root procMntRoot, /proc procMntProc, /dev
// procMntDev, the binds from procMntBind0 in --bind order) so the table
// is the same at every run; fdinfo's mnt_id uses them. A mount's root
// within its file system is always "/" and the source of a host-backed
// mount "/dev/root": no host path is shown. Device numbers are those stat
// reports (0x801 in --det, else the host's of the root or bind).
const (
	procMntDev   = 23
	procMntBind0 = 24
)

// mountEnt is one line of the table.
type mountEnt struct {
	id, parent  int
	dev         uint64
	point       string
	fstype, src string
	mntOpts     string // per-mount, after rw/ro
	superOpts   string // super block options, after rw
	ro          bool
}

// mountParent is the id of the mount in before that point lies on (the
// deepest one whose mount point contains it).
func mountParent(before []mountEnt, point string) int {
	best, n := before[0].id, -1
	for _, e := range before {
		if e.point == point {
			continue
		}
		in := e.point == "/" || strings.HasPrefix(point, e.point+"/")
		if in && len(e.point) > n {
			best, n = e.id, len(e.point)
		}
	}
	return best
}

// mountEscape escapes space, tab, newline and backslash as \ooo, as the
// kernel's seq_escape does for mount table fields.
func mountEscape(s string) string {
	if !strings.ContainsAny(s, " \t\n\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\\':
			b.WriteByte('\\')
			b.WriteByte('0' + c>>6)
			b.WriteByte('0' + c>>3&7)
			b.WriteByte('0' + c&7)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (e mountEnt) rwOpts(extra string) string {
	s := "rw"
	if e.ro {
		s = "ro"
	}
	if extra != "" {
		s += "," + extra
	}
	return s
}

// formatMounts renders the table as /proc/PID/mounts (show_vfsmnt).
func formatMounts(ms []mountEnt) string {
	var b strings.Builder
	for _, e := range ms {
		opts := e.rwOpts(e.mntOpts)
		if e.superOpts != "" {
			opts += "," + e.superOpts
		}
		b.WriteString(mountEscape(e.src) + " " + mountEscape(e.point) + " " + mountEscape(e.fstype) + " " + opts + " 0 0\n")
	}
	return b.String()
}

// formatMountinfo renders the table as /proc/PID/mountinfo
// (show_mountinfo): no propagation fields, the mounts are private.
func formatMountinfo(ms []mountEnt) string {
	var b strings.Builder
	for _, e := range ms {
		sup := "rw"
		if e.superOpts != "" {
			sup += "," + e.superOpts
		}
		b.WriteString(itoa(e.id) + " " + itoa(e.parent) + " " + itoa(int(devMajor(e.dev))) + ":" + itoa(int(devMinor(e.dev))) +
			" / " + mountEscape(e.point) + " " + e.rwOpts(e.mntOpts) + " - " + mountEscape(e.fstype) + " " + mountEscape(e.src) + " " + sup + "\n")
	}
	return b.String()
}

// formatMountstats renders the table as /proc/PID/mountstats
// (show_vfsstat): none of the table's file systems has statistics to
// add (show_stats is NFS's).
func formatMountstats(ms []mountEnt) string {
	var b strings.Builder
	for _, e := range ms {
		b.WriteString("device " + mountEscape(e.src) + " mounted on " + mountEscape(e.point) + " with fstype " + mountEscape(e.fstype) + "\n")
	}
	return b.String()
}

// mountIDOf is the id of the mount guest path g lies on (fdinfo mnt_id).
func (k *Kernel) mountIDOf(g string) int {
	ms := k.guestMounts()
	return mountParent(append(ms, mountEnt{}), g+"/.")
}

// devMajor and devMinor split a Linux dev_t (new_encode_dev).
func devMajor(d uint64) uint64 { return (d>>8)&0xfff | (d>>32)&^0xfff }
func devMinor(d uint64) uint64 { return d&0xff | (d>>12)&^0xff }

// baseMounts are the root, /proc and /dev entries.
func baseMounts(root mountEnt) []mountEnt {
	return []mountEnt{root,
		{id: procMntProc, point: "/proc", dev: procDev, fstype: "proc", src: "proc", mntOpts: "nosuid,nodev,noexec,relatime"},
		{id: procMntDev, point: "/dev", dev: 6, fstype: "devtmpfs", src: "devtmpfs", mntOpts: "nosuid,relatime", superOpts: "mode=755"}}
}
