package tasks

// Credentials (Linux's struct cred, kernel/sys.c, kernel/capability.c,
// security/commoncap.c): every thread has real, effective, saved and
// file-system user and group ids, supplementary groups and the
// capability sets; the set*id family, setgroups, capget/capset and the
// prctl capability options change them with Linux's rules for a
// privileged (CAP_SETUID/CAP_SETGID in the effective set) and an
// unprivileged caller, including the capability fix-ups of a uid change
// (cap_emulate_setxuid) and of execve.
//
// Where the identity reaches the host: uvm itself keeps the host
// identity it was started with, so host files are created and checked by
// the host as uvm's user; the model decides what the guest may ask for
// (chown's rules, faccessat's answer, which ids it reports). In --det the
// guest is the fixed unprivileged user DetUID/DetGID whatever the host
// user is, and stat reports the host user's files as owned by it.

import (
	"encoding/binary"
	"os"
	"sync"
)

// The identity of a deterministic run (an ordinary first user).
const (
	DetUID = 1000
	DetGID = 1000
)

// Capability numbers (include/uapi/linux/capability.h).
const (
	capChown          = 0
	capDacOverride    = 1
	capDacReadSearch  = 2
	capFowner         = 3
	capFsetid         = 4
	capSetgid         = 6
	capSetuid         = 7
	capSetpcap        = 8
	capLinuxImmutable = 9
	capNetBindService = 10
	capNetRaw         = 13
	capSysResource    = 24
	capMknod          = 27
	capMacOverride    = 32
	capLastCap        = 40

	capFull uint64 = 1<<(capLastCap+1) - 1
	// capFSSet is CAP_FS_SET: what a file-system uid change to or from
	// 0 drops from or raises in the effective set.
	capFSSet uint64 = 1<<capChown | 1<<capMknod | 1<<capDacOverride | 1<<capDacReadSearch |
		1<<capFowner | 1<<capFsetid | 1<<capLinuxImmutable | 1<<capMacOverride
)

const ngroupsMax = 65536 // NGROUPS_MAX

// idNone is (uid_t)-1: "leave unchanged" for the set*id calls, and never
// a valid id.
const idNone = ^uint32(0)

// cred is one thread's credentials. A cred is never changed once
// published: a change installs a new one (Task.credp), so other threads
// (capget of another pid, /proc) read it without a lock.
type cred struct {
	uid, euid, suid, fsuid uint32
	gid, egid, sgid, fsgid uint32
	groups                 []uint32
	capEff, capPrm, capInh uint64
	capBnd                 uint64
}

func (c *cred) clone() *cred {
	n := *c
	n.groups = append([]uint32(nil), c.groups...)
	return &n
}

func (c *cred) capable(capn uint) bool { return c.capEff&(1<<capn) != 0 }

// inGroup is in_group_p: the fs gid or a supplementary group.
func (c *cred) inGroup(gid uint32) bool {
	if gid == c.fsgid {
		return true
	}
	for _, g := range c.groups {
		if g == gid {
			return true
		}
	}
	return false
}

var hostIdentity = sync.OnceValue(func() *cred {
	c := &cred{uid: uint32(os.Getuid()), euid: uint32(os.Geteuid()), gid: uint32(os.Getgid()), egid: uint32(os.Getegid()), capBnd: capFull}
	c.suid, c.fsuid, c.sgid, c.fsgid = c.euid, c.euid, c.egid, c.egid
	if gs, err := os.Getgroups(); err == nil {
		for _, g := range gs {
			c.groups = append(c.groups, uint32(g))
		}
	}
	hostCaps(c)
	return c
})

// initialCred is the first process's identity: the host user uvm runs as,
// or in --det the fixed unprivileged DetUID/DetGID.
func (k *Kernel) initialCred() *cred {
	if k.det != nil {
		return &cred{uid: DetUID, euid: DetUID, suid: DetUID, fsuid: DetUID,
			gid: DetGID, egid: DetGID, sgid: DetGID, fsgid: DetGID, groups: []uint32{DetGID}, capBnd: capFull}
	}
	return hostIdentity()
}

// creds returns the thread's current credentials (read-only).
func (t *Task) creds() *cred {
	if c := t.credp.Load(); c != nil {
		return c
	}
	c := t.tg.k.initialCred()
	t.credp.CompareAndSwap(nil, c)
	return t.credp.Load()
}

// inheritCreds gives a new thread or process the creator's credentials.
func (nt *Task) inheritCreds(from *Task) { nt.credp.Store(from.creds()) }

// guestUID and guestGID map a host owner to the guest's view: in --det
// the host user uvm runs as appears as DetUID/DetGID. hostUID and
// hostGID map back for chown.
func (k *Kernel) guestUID(h uint32) uint32 {
	if k.det != nil && h == hostIdentity().euid {
		return DetUID
	}
	return h
}

func (k *Kernel) guestGID(h uint32) uint32 {
	if k.det != nil && h == hostIdentity().egid {
		return DetGID
	}
	return h
}

func (k *Kernel) hostUID(g uint32) uint32 {
	if k.det != nil && g == DetUID {
		return hostIdentity().euid
	}
	return g
}

func (k *Kernel) hostGID(g uint32) uint32 {
	if k.det != nil && g == DetGID {
		return hostIdentity().egid
	}
	return g
}

func init() {
	registerSyscall("setuid", func(t *Task, a [6]uint64) uint64 { return t.sysSetuid(uint32(a[0])) })
	registerSyscall("setgid", func(t *Task, a [6]uint64) uint64 { return t.sysSetgid(uint32(a[0])) })
	registerSyscall("setreuid", func(t *Task, a [6]uint64) uint64 { return t.sysSetreuid(uint32(a[0]), uint32(a[1])) })
	registerSyscall("setregid", func(t *Task, a [6]uint64) uint64 { return t.sysSetregid(uint32(a[0]), uint32(a[1])) })
	registerSyscall("setresuid", func(t *Task, a [6]uint64) uint64 {
		return t.sysSetresuid(uint32(a[0]), uint32(a[1]), uint32(a[2]))
	})
	registerSyscall("setresgid", func(t *Task, a [6]uint64) uint64 {
		return t.sysSetresgid(uint32(a[0]), uint32(a[1]), uint32(a[2]))
	})
	registerSyscall("setfsuid", func(t *Task, a [6]uint64) uint64 { return t.sysSetfsuid(uint32(a[0])) })
	registerSyscall("setfsgid", func(t *Task, a [6]uint64) uint64 { return t.sysSetfsgid(uint32(a[0])) })
	registerSyscall("setgroups", func(t *Task, a [6]uint64) uint64 { return t.sysSetgroups(int32(a[0]), a[1]) })
	registerSyscall("capget", func(t *Task, a [6]uint64) uint64 { return t.sysCapget(a[0], a[1]) })
	registerSyscall("capset", func(t *Task, a [6]uint64) uint64 { return t.sysCapset(a[0], a[1]) })
}

// setCreds publishes n as the thread's credentials after the uid
// capability fix-up (cap_task_fix_setuid, LSM_SETID_ID/RE/RES).
func (t *Task) setUIDs(old, n *cred) uint64 {
	t.tg.mu.Lock()
	keep := t.tg.pr.keepCaps
	t.tg.mu.Unlock()
	// cap_emulate_setxuid
	wasRoot := old.uid == 0 || old.euid == 0 || old.suid == 0
	if wasRoot && n.uid != 0 && n.euid != 0 && n.suid != 0 && !keep {
		n.capPrm, n.capEff = 0, 0
	}
	if old.euid == 0 && n.euid != 0 {
		n.capEff = 0
	}
	if old.euid != 0 && n.euid == 0 {
		n.capEff = n.capPrm
	}
	t.commitCreds(n)
	return 0
}

func (t *Task) sysSetuid(uid uint32) uint64 {
	if uid == idNone {
		return errRet(EINVAL)
	}
	old := t.creds()
	n := old.clone()
	if old.capable(capSetuid) {
		n.uid, n.suid = uid, uid
	} else if uid != old.uid && uid != old.suid {
		return errRet(EPERM)
	}
	n.euid, n.fsuid = uid, uid
	return t.setUIDs(old, n)
}

func (t *Task) sysSetreuid(ruid, euid uint32) uint64 {
	old := t.creds()
	n := old.clone()
	priv := old.capable(capSetuid)
	if ruid != idNone {
		n.uid = ruid
		if ruid != old.uid && ruid != old.euid && !priv {
			return errRet(EPERM)
		}
	}
	if euid != idNone {
		n.euid = euid
		if euid != old.uid && euid != old.euid && euid != old.suid && !priv {
			return errRet(EPERM)
		}
	}
	if ruid != idNone || euid != idNone && euid != old.uid {
		n.suid = n.euid
	}
	n.fsuid = n.euid
	return t.setUIDs(old, n)
}

// oneOf reports whether v is one of the ids (setres*id's unprivileged rule).
func oneOf(v uint32, ids ...uint32) bool {
	for _, id := range ids {
		if v == id {
			return true
		}
	}
	return false
}

func (t *Task) sysSetresuid(ruid, euid, suid uint32) uint64 {
	old := t.creds()
	if !old.capable(capSetuid) {
		for _, v := range []uint32{ruid, euid, suid} {
			if v != idNone && !oneOf(v, old.uid, old.euid, old.suid) {
				return errRet(EPERM)
			}
		}
	}
	n := old.clone()
	if ruid != idNone {
		n.uid = ruid
	}
	if euid != idNone {
		n.euid = euid
	}
	if suid != idNone {
		n.suid = suid
	}
	n.fsuid = n.euid
	return t.setUIDs(old, n)
}

func (t *Task) sysSetfsuid(uid uint32) uint64 {
	old := t.creds()
	if uid == idNone || uid == old.fsuid {
		return uint64(old.fsuid)
	}
	if !oneOf(uid, old.uid, old.euid, old.suid) && !old.capable(capSetuid) {
		return uint64(old.fsuid)
	}
	n := old.clone()
	n.fsuid = uid
	// cap_task_fix_setuid, LSM_SETID_FS
	if old.fsuid == 0 && uid != 0 {
		n.capEff &^= capFSSet
	}
	if old.fsuid != 0 && uid == 0 {
		n.capEff |= n.capPrm & capFSSet
	}
	t.commitCreds(n)
	return uint64(old.fsuid)
}

func (t *Task) sysSetgid(gid uint32) uint64 {
	if gid == idNone {
		return errRet(EINVAL)
	}
	old := t.creds()
	n := old.clone()
	if old.capable(capSetgid) {
		n.gid, n.sgid = gid, gid
	} else if gid != old.gid && gid != old.sgid {
		return errRet(EPERM)
	}
	n.egid, n.fsgid = gid, gid
	t.commitCreds(n)
	return 0
}

func (t *Task) sysSetregid(rgid, egid uint32) uint64 {
	old := t.creds()
	n := old.clone()
	priv := old.capable(capSetgid)
	if rgid != idNone {
		n.gid = rgid
		if rgid != old.gid && rgid != old.egid && !priv {
			return errRet(EPERM)
		}
	}
	if egid != idNone {
		n.egid = egid
		if egid != old.gid && egid != old.egid && egid != old.sgid && !priv {
			return errRet(EPERM)
		}
	}
	if rgid != idNone || egid != idNone && egid != old.gid {
		n.sgid = n.egid
	}
	n.fsgid = n.egid
	t.commitCreds(n)
	return 0
}

func (t *Task) sysSetresgid(rgid, egid, sgid uint32) uint64 {
	old := t.creds()
	if !old.capable(capSetgid) {
		for _, v := range []uint32{rgid, egid, sgid} {
			if v != idNone && !oneOf(v, old.gid, old.egid, old.sgid) {
				return errRet(EPERM)
			}
		}
	}
	n := old.clone()
	if rgid != idNone {
		n.gid = rgid
	}
	if egid != idNone {
		n.egid = egid
	}
	if sgid != idNone {
		n.sgid = sgid
	}
	n.fsgid = n.egid
	t.commitCreds(n)
	return 0
}

func (t *Task) sysSetfsgid(gid uint32) uint64 {
	old := t.creds()
	if gid == idNone || gid == old.fsgid {
		return uint64(old.fsgid)
	}
	if !oneOf(gid, old.gid, old.egid, old.sgid) && !old.capable(capSetgid) {
		return uint64(old.fsgid)
	}
	n := old.clone()
	n.fsgid = gid
	t.commitCreds(n)
	return uint64(old.fsgid)
}

// sysGetresid writes three ids (getresuid/getresgid).
func (t *Task) sysGetresid(ra, ea, sa uint64, r, e, s uint32) uint64 {
	for _, p := range []struct {
		addr uint64
		v    uint32
	}{{ra, r}, {ea, e}, {sa, s}} {
		if er := t.putU32(p.addr, p.v); er != 0 {
			return errRet(er)
		}
	}
	return 0
}

// sysGetgroups is getgroups(size, list): the count with size 0, EINVAL
// when the list is too small.
func (t *Task) sysGetgroups(size int32, list uint64) uint64 {
	if size < 0 {
		return errRet(EINVAL)
	}
	gs := t.creds().groups
	if size == 0 {
		return uint64(len(gs))
	}
	if int(size) < len(gs) {
		return errRet(EINVAL)
	}
	b := make([]byte, 4*len(gs))
	for i, g := range gs {
		binary.LittleEndian.PutUint32(b[4*i:], g)
	}
	if e := t.writeBytes(list, b); e != 0 {
		return errRet(e)
	}
	return uint64(len(gs))
}

func (t *Task) sysSetgroups(size int32, list uint64) uint64 {
	old := t.creds()
	if !old.capable(capSetgid) {
		return errRet(EPERM)
	}
	if size < 0 || size > ngroupsMax {
		return errRet(EINVAL)
	}
	b, e := t.readBuf(list, 4*uint64(size))
	if e != 0 {
		return errRet(e)
	}
	n := old.clone()
	n.groups = make([]uint32, size)
	for i := range n.groups {
		n.groups[i] = binary.LittleEndian.Uint32(b[4*i:])
		if n.groups[i] == idNone {
			return errRet(EINVAL)
		}
	}
	t.commitCreds(n)
	return 0
}

// Capability header versions (linux/capability.h).
const (
	capVersion1 = 0x19980330
	capVersion2 = 0x20071026
	capVersion3 = 0x20080522
)

// capHeader validates a user cap header (cap_validate_magic): the number
// of 32-bit data words (1 or 2) and the pid. An unknown version is
// answered with the kernel's own written into the header and EINVAL.
func (t *Task) capHeader(hdr uint64) (words int, pid int32, e Errno) {
	b, e := t.readBuf(hdr, 8)
	if e != 0 {
		return 0, 0, e
	}
	switch binary.LittleEndian.Uint32(b[:]) {
	case capVersion1:
		words = 1
	case capVersion2, capVersion3:
		words = 2
	default:
		if e := t.putU32(hdr, capVersion3); e != 0 {
			return 0, 0, e
		}
		return 0, 0, EINVAL
	}
	return words, int32(binary.LittleEndian.Uint32(b[4:])), 0
}

func (t *Task) sysCapget(hdr, data uint64) uint64 {
	words, pid, e := t.capHeader(hdr)
	if data == 0 {
		if e == EINVAL {
			return 0 // a probe for the version
		}
		return errOr0(e)
	}
	if e != 0 {
		return errRet(e)
	}
	if pid < 0 {
		return errRet(EINVAL)
	}
	c := t.creds()
	if pid != 0 && pid != t.tid {
		o := t.tg.k.findTask(pid)
		if o == nil {
			return errRet(ESRCH)
		}
		c = o.creds()
	}
	b := make([]byte, 12*words)
	for w := 0; w < words; w++ {
		binary.LittleEndian.PutUint32(b[12*w:], uint32(c.capEff>>(32*w)))
		binary.LittleEndian.PutUint32(b[12*w+4:], uint32(c.capPrm>>(32*w)))
		binary.LittleEndian.PutUint32(b[12*w+8:], uint32(c.capInh>>(32*w)))
	}
	return errOr0(t.writeBytes(data, b))
}

func (t *Task) sysCapset(hdr, data uint64) uint64 {
	words, pid, e := t.capHeader(hdr)
	if e != 0 {
		return errRet(e)
	}
	if pid != 0 && pid != t.tid {
		return errRet(EPERM)
	}
	b, e := t.readBuf(data, 12*uint64(words))
	if e != 0 {
		return errRet(e)
	}
	var eff, prm, inh uint64
	for w := 0; w < words; w++ {
		eff |= uint64(binary.LittleEndian.Uint32(b[12*w:])) << (32 * w)
		prm |= uint64(binary.LittleEndian.Uint32(b[12*w+4:])) << (32 * w)
		inh |= uint64(binary.LittleEndian.Uint32(b[12*w+8:])) << (32 * w)
	}
	eff, prm, inh = eff&capFull, prm&capFull, inh&capFull
	old := t.creds()
	subset := func(a, b uint64) bool { return a&^b == 0 }
	// cap_capset
	if !old.capable(capSetpcap) && !subset(inh, old.capInh|old.capPrm) ||
		!subset(inh, old.capInh|old.capBnd) || !subset(prm, old.capPrm) || !subset(eff, prm) {
		return errRet(EPERM)
	}
	n := old.clone()
	n.capEff, n.capPrm, n.capInh = eff, prm, inh
	t.commitCreds(n)
	return 0
}

// prctlCreds handles the capability options of prctl (cap_task_prctl)
// that the per-process ones in sysPrctl do not: PR_CAPBSET_READ and
// PR_CAPBSET_DROP of the thread's bounding set.
func (t *Task) prctlCreds(op, arg uint64) (uint64, bool) {
	const prCapbsetDrop = 24
	switch op {
	case prCapbsetRead:
		if arg > capLastCap {
			return errRet(EINVAL), true
		}
		return uint64(t.creds().capBnd >> arg & 1), true
	case prCapbsetDrop:
		old := t.creds()
		if !old.capable(capSetpcap) {
			return errRet(EPERM), true
		}
		if arg > capLastCap {
			return errRet(EINVAL), true
		}
		n := old.clone()
		n.capBnd &^= 1 << arg
		t.commitCreds(n)
		return 0, true
	}
	return 0, false
}

// execCreds is the credential change of execve of a program without
// set-id bits (cap_bprm_creds_from_file): the saved and file-system ids
// become the effective ones; root (real or effective uid 0) gets the
// bounding set as permitted, effective when its euid is 0; others keep
// no capabilities. PR_SET_KEEPCAPS is cleared.
func (t *Task) execCreds() {
	old := t.creds()
	n := old.clone()
	n.suid, n.fsuid = n.euid, n.euid
	n.sgid, n.fsgid = n.egid, n.egid
	if n.uid == 0 || n.euid == 0 {
		n.capPrm = n.capBnd | n.capInh
	} else {
		n.capPrm = 0
	}
	n.capEff = 0
	if n.euid == 0 {
		n.capEff = n.capPrm
	}
	t.commitCreds(n)
	t.tg.mu.Lock()
	t.tg.pr.keepCaps = false
	t.tg.mu.Unlock()
}

// findTask returns the live thread tid of any process, or nil.
func (k *Kernel) findTask(tid int32) *Task {
	k.procMu.Lock()
	tgs := make([]*ThreadGroup, 0, len(k.procs))
	for _, tg := range k.procs {
		tgs = append(tgs, tg)
	}
	k.procMu.Unlock()
	for _, tg := range tgs {
		tg.mu.Lock()
		o := tg.tasks[tid]
		tg.mu.Unlock()
		if o != nil {
			return o
		}
	}
	return nil
}

// commitCreds installs n as t's credentials, as Linux's commit_creds: a
// change of the effective or fs uid or gid, or permitted capabilities
// that are not a subset of the old ones, makes the process undumpable
// (fs.suid_dumpable's default, 0: /proc/PID/ owned by root, ptrace
// access only with CAP_SYS_PTRACE) until PR_SET_DUMPABLE or an execve
// without set-id bits makes it dumpable again.
func (t *Task) commitCreds(n *cred) {
	old := t.creds()
	t.credp.Store(n)
	if old.euid != n.euid || old.egid != n.egid || old.fsuid != n.fsuid || old.fsgid != n.fsgid ||
		n.capPrm&^old.capPrm != 0 {
		t.tg.mu.Lock()
		t.tg.pr.undumpable = true
		t.tg.mu.Unlock()
	}
}
