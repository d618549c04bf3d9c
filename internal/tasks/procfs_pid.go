package tasks

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// The per-process half of uvm's /proc (fs/proc/base.c, fs/proc/array.c):
// /proc/PID and /proc/PID/task/TID for every guest process and thread,
// generated from the kernel's model when opened, stat'ed or listed. No
// path under /proc/PID reaches the host's procfs. /proc/self and
// /proc/thread-self are symlinks to the caller's directories; cwd, root,
// exe and fd/N are magic links. Reading another process's environ, auxv,
// mem, maps, fd/, cwd, root or exe needs ptrace read access (procAccess).

// procfsState is a process's /proc state (protected by ThreadGroup.mu).
type procfsState struct {
	// startNs is when the process was created (the kernel's uptime).
	startNs int64
	// oomScoreAdj is /proc/PID/oom_score_adj (-1000 … 1000), inherited
	// by fork.
	oomScoreAdj int32
}

// procPID is a resolved /proc/PID or /proc/PID/task/TID directory.
type procPID struct {
	tg *ThreadGroup
	// task is the thread of a task/TID directory (or of /proc/TID of a
	// thread that is not the leader); nil for the process's directory.
	task *Task
	base string // the canonical directory path
}

// thread is the thread the directory describes: task, else the leader,
// else any live thread (the leader may have exited), else nil.
func (p procPID) thread() *Task {
	if p.task != nil {
		return p.task
	}
	p.tg.mu.Lock()
	defer p.tg.mu.Unlock()
	if t := p.tg.tasks[p.tg.pid]; t != nil {
		return t
	}
	tids := make([]int32, 0, len(p.tg.tasks))
	for tid := range p.tg.tasks {
		tids = append(tids, tid)
	}
	if len(tids) == 0 {
		return nil
	}
	slices32(tids)
	return p.tg.tasks[tids[0]]
}

func slices32(s []int32) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }

// parseProcNum parses a /proc directory name that is a decimal pid
// (no sign, no leading zero, at most 10 digits).
func parseProcNum(s string) (int32, bool) {
	if s == "" || len(s) > 10 || s[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if n > 1<<31-1 {
		return 0, false
	}
	return int32(n), true
}

// procLive returns the process pid, if it exists and is not reaped
// (zombies keep their directory, as in Linux).
func (k *Kernel) procLive(pid int32) *ThreadGroup {
	k.procMu.Lock()
	defer k.procMu.Unlock()
	return k.procs[pid]
}

// procFindPID resolves the directory of pid: a process, or a thread of
// one (Linux serves /proc/TID for every thread, unlisted).
func (k *Kernel) procFindPID(pid int32) (procPID, bool) {
	if tg := k.procLive(pid); tg != nil {
		return procPID{tg: tg, base: "/proc/" + itoa(int(pid))}, true
	}
	if t := k.findTask(pid); t != nil {
		return procPID{tg: t.tg, task: t, base: "/proc/" + itoa(int(pid))}, true
	}
	return procPID{}, false
}

// procThreadDir resolves task/TID inside p.
func (p procPID) procThreadDir(name string) (procPID, bool) {
	tid, ok := parseProcNum(name)
	if !ok {
		return procPID{}, false
	}
	p.tg.mu.Lock()
	t := p.tg.tasks[tid]
	p.tg.mu.Unlock()
	if t == nil {
		return procPID{}, false
	}
	return procPID{tg: p.tg, task: t, base: p.base + "/task/" + name}, true
}

// procAccess is ptrace_may_access(PTRACE_MODE_READ_FSCREDS): the caller
// may read another process's sensitive files when it is the same
// process, when its fs uid and gid match the target's real, effective
// and saved ids (and the target holds no capability the caller lacks),
// or when it has CAP_SYS_PTRACE.
func (t *Task) procAccess(p procPID) Errno {
	if p.tg == t.tg {
		return 0
	}
	c := t.creds()
	if c.capable(capSysPtrace) {
		return 0
	}
	o := p.thread()
	if o == nil {
		return EACCES
	}
	oc := o.creds()
	if c.fsuid == oc.uid && c.fsuid == oc.euid && c.fsuid == oc.suid &&
		c.fsgid == oc.gid && c.fsgid == oc.egid && c.fsgid == oc.sgid &&
		oc.capPrm&^c.capPrm == 0 && !p.tg.isUndumpable() {
		return 0 // an undumpable target needs CAP_SYS_PTRACE
	}
	return EACCES
}

// capSysPtrace is CAP_SYS_PTRACE; procRlimitRSS is RLIMIT_RSS.
const (
	capSysPtrace  = 19
	procRlimitRSS = 5
)

// procEntry is one synthetic /proc entry.
type procEntry struct {
	path string // canonical guest path (for inode numbers and fd links)
	mode uint32 // S_IF* | permission bits
	uid  uint32
	gid  uint32
	// contents generates a regular file's bytes at open.
	contents func() ([]byte, Errno)
	// write, when set, makes a regular file writable: it takes what one
	// write(2) gives.
	write func(b []byte) Errno
	// dirents lists a directory (without "." and "..").
	dirents func() []dirent
	// target is a symlink's readlink.
	target func() (string, Errno)
	// follow, for a magic link that open and stat follow, is the open
	// file it leads to (fd/N), or nil.
	follow func() (*openFile, Errno)
	// open, when set, makes the open file itself (mem).
	open func(flags int) *openFile
	// access is checked at open, readlink and when a magic link is
	// followed (nil: none).
	access func() Errno
	// owner is the process the entry belongs to (nil: the machine's);
	// once it is reaped, reads of an open file of it get ESRCH and
	// listings of an open directory are empty, as Linux's.
	owner *ThreadGroup
}

// gone reports whether the entry's process has been reaped.
func (e procEntry) gone() bool {
	return e.owner != nil && e.owner.k.procLive(e.owner.pid) != e.owner
}

// procPIDNames are the entries of a /proc/PID directory
// (and of task/TID, less "mountstats" and "task"), in listing order.
var procPIDNames = []string{"auxv", "cmdline", "comm", "cwd", "environ", "exe", "fd", "fdinfo", "limits",
	"maps", "mem", "mountinfo", "mounts", "mountstats", "net", "oom_score", "oom_score_adj", "root", "smaps", "smaps_rollup",
	"stat", "statm", "status", "task"}

// procSplit splits a path under /proc into its components (after
// "/proc"); ok=false when g is not /proc or under it.
func procSplit(g string) ([]string, bool) {
	if g == "/proc" {
		return nil, true
	}
	rest, ok := strings.CutPrefix(g, "/proc/")
	if !ok {
		return nil, false
	}
	return strings.Split(rest, "/"), true
}

// procCanon rewrites the components of a /proc path that are magic links
// and not the last one: self and thread-self become the caller's pid
// directories, PID/cwd, PID/root and PID/fd/N (of a directory) their
// targets; the result may leave /proc. The last component is left for
// the operation to follow or not (procFollowLast).
func (t *Task) procCanon(g string) (string, Errno) {
	for range 40 {
		n, changed, e := t.procCanonStep(g, false)
		if e != 0 || !changed {
			return n, e
		}
		g = n
	}
	return "", ELOOP
}

// procFollowLast follows a final self, thread-self, cwd or root magic
// link of g when follow (open, stat), so the operation acts on the
// target; exe and fd/N are left to procLookup.
func (t *Task) procFollowLast(g string, follow bool) (string, Errno) {
	if !follow {
		return g, 0
	}
	for range 40 {
		n, changed, e := t.procCanonStep(g, true)
		if e != 0 || !changed {
			return n, e
		}
		if n, e = t.procCanon(n); e != 0 {
			return "", e
		}
		g = n
	}
	return "", ELOOP
}

// procCanonStep rewrites the first magic link in g (the last component
// too when last).
func (t *Task) procCanonStep(g string, last bool) (string, bool, Errno) {
	c, ok := procSplit(g)
	if !ok || len(c) == 0 {
		return g, false, 0
	}
	join := func(head string, i int) string {
		return path.Join(append([]string{head}, c[i:]...)...)
	}
	final := func(i int) bool { return i == len(c)-1 }
	switch c[0] {
	case "self":
		if !final(0) || last {
			return join("/proc/"+itoa(int(t.tg.pid)), 1), true, 0
		}
		return g, false, 0
	case "thread-self":
		if !final(0) || last {
			return join(fmt.Sprintf("/proc/%d/task/%d", t.tg.pid, t.tid), 1), true, 0
		}
		return g, false, 0
	case "net":
		// The link to self/net, uvm's in the loopback network.
		if !t.tg.k.hostNet() && (!final(0) || last) {
			return join("/proc/"+itoa(int(t.tg.pid))+"/net", 1), true, 0
		}
		return g, false, 0
	}
	pid, ok := parseProcNum(c[0])
	if !ok {
		return g, false, 0
	}
	i := 1
	p, ok := t.tg.k.procFindPID(pid)
	if !ok {
		return g, false, 0
	}
	if len(c) > 2 && c[1] == "task" && p.task == nil {
		q, ok := p.procThreadDir(c[2])
		if !ok {
			return g, false, 0
		}
		p, i = q, 3
	}
	if i >= len(c) {
		return g, false, 0
	}
	if final(i) && !last {
		return g, false, 0
	}
	switch c[i] {
	case "cwd", "root":
		if e := t.procAccess(p); e != 0 {
			return "", false, e
		}
		target := "/"
		if c[i] == "cwd" {
			target = p.tg.getCwd()
		}
		return join(target, i+1), true, 0
	case "fd":
		if i+1 >= len(c) || final(i+1) && !last {
			return g, false, 0
		}
		if e := t.procAccess(p); e != 0 {
			return "", false, e
		}
		fd, ok := parseFDName(c[i+1])
		if !ok {
			return "", false, ENOENT
		}
		f, ok := p.tg.fds.get(fd)
		if !ok {
			return "", false, ENOENT
		}
		if final(i + 1) {
			return g, false, 0 // opened as the descriptor's file (procLookup)
		}
		if _, ok := f.hostOS(); !ok || !path.IsAbs(f.path) {
			return "", false, ENOTDIR
		}
		return join(f.path, i+2), true, 0
	}
	return g, false, 0
}

// parseFDName parses fd/N's N.
func parseFDName(s string) (int32, bool) {
	if s == "0" {
		return 0, true
	}
	n, ok := parseProcNum(s)
	return n, ok && n < 1<<30
}

// procLookup returns the synthetic /proc entry at canonical path g (after
// procCanon and procFollowLast). ok=false: g is not one uvm makes; e:
// the error a lookup of it gets (ENOENT for a pid that does not exist).
func (t *Task) procLookup(g string) (ent procEntry, ok bool, e Errno) {
	c, ok := procSplit(g)
	if !ok {
		return procEntry{}, false, 0
	}
	k := t.tg.k
	if len(c) == 0 {
		return procEntry{path: g, mode: sIFDIR | 0o555, dirents: t.procRootDirents}, true, 0
	}
	switch c[0] {
	case "self":
		return procEntry{path: g, mode: sIFLNK | 0o777, target: func() (string, Errno) { return itoa(int(t.tg.pid)), 0 }}, true, 0
	case "thread-self":
		return procEntry{path: g, mode: sIFLNK | 0o777, target: func() (string, Errno) {
			return fmt.Sprintf("%d/task/%d", t.tg.pid, t.tid), 0
		}}, true, 0
	}
	pid, isPID := parseProcNum(c[0])
	if !isPID {
		return t.procMachineLookup(g, c)
	}
	p, found := k.procFindPID(pid)
	if !found {
		return procEntry{}, true, ENOENT
	}
	c = c[1:]
	if len(c) >= 1 && c[0] == "task" && p.task == nil {
		if len(c) == 1 {
			return t.procDirEntry(p, p.base+"/task", 0o555, func() []dirent { return t.procTaskDirents(p) }), true, 0
		}
		q, ok := p.procThreadDir(c[1])
		if !ok {
			return procEntry{}, true, ENOENT
		}
		p, c = q, c[2:]
	}
	return t.procPIDLookup(p, c)
}

// isUndumpable reports PR_GET_DUMPABLE's 0.
func (tg *ThreadGroup) isUndumpable() bool {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.pr.undumpable
}

// procOwner is the owner /proc/PID files show: the thread's effective
// ids, or root's while the process is undumpable (task_dump_owner), but
// for the world-readable directories (mode 0555: /proc/PID itself,
// task/TID), which keep the effective ids.
func (p procPID) owner(mode uint32) (uid, gid uint32) {
	if mode != sIFDIR|0o555 && p.tg.isUndumpable() {
		return 0, 0
	}
	if o := p.thread(); o != nil {
		c := o.creds()
		return c.euid, c.egid
	}
	c := p.tg.k.initialCred()
	return c.euid, c.egid
}

func (t *Task) procDirEntry(p procPID, g string, perm uint32, list func() []dirent) procEntry {
	uid, gid := p.owner(sIFDIR | perm)
	return procEntry{path: g, mode: sIFDIR | perm, uid: uid, gid: gid, dirents: list, owner: p.tg}
}

// procPIDLookup resolves the components c inside p's directory.
func (t *Task) procPIDLookup(p procPID, c []string) (procEntry, bool, Errno) {
	uid, gid := p.owner(0) // files, links and the 0500 directories
	if len(c) == 0 {
		return t.procDirEntry(p, p.base, 0o555, func() []dirent { return t.procPIDDirents(p) }), true, 0
	}
	g := p.base + "/" + strings.Join(c, "/")
	file := func(perm uint32, gen func() ([]byte, Errno)) procEntry {
		return procEntry{path: g, mode: sIFREG | perm, uid: uid, gid: gid, contents: gen, owner: p.tg}
	}
	guarded := func(e procEntry) procEntry {
		e.access = func() Errno { return t.procAccess(p) }
		return e
	}
	link := func(target func() (string, Errno)) procEntry {
		return guarded(procEntry{path: g, mode: sIFLNK | 0o777, uid: uid, gid: gid, target: target})
	}
	tg := p.tg
	if len(c) == 1 {
		switch c[0] {
		case "auxv":
			return guarded(file(0o400, func() ([]byte, Errno) { return append([]byte(nil), tg.mm.Auxv...), 0 })), true, 0
		case "cmdline":
			return file(0o444, func() ([]byte, Errno) { return tg.cmdline, 0 }), true, 0
		case "environ":
			return guarded(file(0o400, func() ([]byte, Errno) { return tg.environ, 0 })), true, 0
		case "comm":
			e := file(0o644, func() ([]byte, Errno) { return []byte(p.commOf() + "\n"), 0 })
			e.write = func(b []byte) Errno { return t.procWriteComm(p, b) }
			return e, true, 0
		case "status":
			return file(0o444, func() ([]byte, Errno) { return t.procStatus(p), 0 }), true, 0
		case "stat":
			return file(0o444, func() ([]byte, Errno) { return t.procPIDStat(p), 0 }), true, 0
		case "statm":
			return file(0o444, func() ([]byte, Errno) { return procStatm(tg), 0 }), true, 0
		case "limits":
			return file(0o444, func() ([]byte, Errno) { return procLimits(tg), 0 }), true, 0
		case "maps":
			return guarded(file(0o444, func() ([]byte, Errno) { return procMaps(tg), 0 })), true, 0
		case "smaps":
			return guarded(file(0o444, func() ([]byte, Errno) { return procSmaps(tg), 0 })), true, 0
		case "smaps_rollup":
			return guarded(file(0o444, func() ([]byte, Errno) { return procSmapsRollup(tg), 0 })), true, 0
		case "oom_score":
			return file(0o444, func() ([]byte, Errno) { return []byte(itoa(tg.oomScore()) + "\n"), 0 }), true, 0
		case "oom_score_adj":
			e := file(0o644, func() ([]byte, Errno) {
				tg.mu.Lock()
				defer tg.mu.Unlock()
				return []byte(itoa(int(tg.procfs.oomScoreAdj)) + "\n"), 0
			})
			e.write = func(b []byte) Errno { return t.procWriteOOMAdj(tg, b) }
			return e, true, 0
		case "mem":
			e := guarded(procEntry{path: g, mode: sIFREG | 0o600, uid: uid, gid: gid})
			e.open = func(flags int) *openFile {
				return &openFile{ops: &procMemFile{mm: tg.mm}, path: g, flags: flags &^ oCLOEXEC}
			}
			return e, true, 0
		case "cwd":
			return link(func() (string, Errno) { return tg.getCwd(), 0 }), true, 0
		case "root":
			return link(func() (string, Errno) { return "/", 0 }), true, 0
		case "exe":
			return link(func() (string, Errno) {
				if tg.mm.ExeName != "" {
					return tg.mm.ExeName, 0
				}
				return tg.mm.ExePath, 0
			}), true, 0
		case "fd":
			return guarded(t.procDirEntry(p, g, 0o500, func() []dirent { return procFDDirents(p) })), true, 0
		case "fdinfo":
			return guarded(t.procDirEntry(p, g, 0o500, func() []dirent { return procFDInfoDirents(p) })), true, 0
		case "mounts":
			return file(0o444, func() ([]byte, Errno) { return []byte(formatMounts(t.tg.k.guestMounts())), 0 }), true, 0
		case "mountinfo":
			return file(0o444, func() ([]byte, Errno) { return []byte(formatMountinfo(t.tg.k.guestMounts())), 0 }), true, 0
		case "mountstats":
			if p.task != nil {
				break // a process's file only (tgid_base_stuff)
			}
			return file(0o400, func() ([]byte, Errno) { return []byte(formatMountstats(t.tg.k.guestMounts())), 0 }), true, 0
		case "net":
			if tg.k.hostNet() {
				return procEntry{}, false, 0 // the machine's (machineProcFile)
			}
			return t.procNetLookup(p, g, nil)
		}
		return procEntry{}, true, ENOENT
	}
	if len(c) == 2 && (c[0] == "fd" || c[0] == "fdinfo") {
		fd, ok := parseFDName(c[1])
		if !ok {
			return procEntry{}, true, ENOENT
		}
		if e := t.procAccess(p); e != 0 {
			return procEntry{}, true, e
		}
		f, ok := tg.fds.get(fd)
		if !ok {
			return procEntry{}, true, ENOENT
		}
		if c[0] == "fdinfo" {
			return file(0o444, func() ([]byte, Errno) { return t.procFDInfo(tg, fd, f), 0 }), true, 0
		}
		mode := uint32(sIFLNK)
		switch f.flags & oACCMODE {
		case oRDONLY:
			mode |= 0o500
		case oWRONLY:
			mode |= 0o300
		default:
			mode |= 0o700
		}
		e := guarded(procEntry{path: g, mode: mode, uid: uid, gid: gid,
			target: func() (string, Errno) { return f.path, 0 }})
		e.follow = func() (*openFile, Errno) { return f, 0 }
		return e, true, 0
	}
	if c[0] == "net" {
		if tg.k.hostNet() {
			return procEntry{}, false, 0
		}
		return t.procNetLookup(p, g, c[1:])
	}
	return procEntry{}, true, ENOENT
}

// procRootDirents lists /proc: the machine entries, then the live
// processes by pid.
func (t *Task) procRootDirents() []dirent {
	out := t.procMachineDirents()
	k := t.tg.k
	k.procMu.Lock()
	pids := make([]int32, 0, len(k.procs))
	for pid := range k.procs {
		pids = append(pids, pid)
	}
	k.procMu.Unlock()
	slices32(pids)
	for _, pid := range pids {
		out = append(out, dirent{itoa(int(pid)), pathInode("/proc/" + itoa(int(pid))), dtDir})
	}
	return out
}

// procPIDDirents lists /proc/PID (or task/TID, which has no task).
func (t *Task) procPIDDirents(p procPID) []dirent {
	var out []dirent
	for _, n := range procPIDNames {
		if (n == "task" || n == "mountstats") && p.task != nil {
			continue
		}
		typ := uint8(dtReg)
		switch n {
		case "cwd", "exe", "root":
			typ = dtLnk
		case "fd", "fdinfo", "net", "task":
			typ = dtDir
		}
		out = append(out, dirent{n, pathInode(p.base + "/" + n), typ})
	}
	return out
}

// procTaskDirents lists /proc/PID/task: the live threads by tid.
func (t *Task) procTaskDirents(p procPID) []dirent {
	p.tg.mu.Lock()
	tids := make([]int32, 0, len(p.tg.tasks))
	for tid := range p.tg.tasks {
		tids = append(tids, tid)
	}
	p.tg.mu.Unlock()
	slices32(tids)
	out := make([]dirent, 0, len(tids))
	for _, tid := range tids {
		out = append(out, dirent{itoa(int(tid)), pathInode(p.base + "/task/" + itoa(int(tid))), dtDir})
	}
	return out
}

// procFDNums returns tg's open descriptors in numeric order.
func procFDNums(tg *ThreadGroup) []int32 {
	fds := tg.fds
	fds.mu.Lock()
	nums := make([]int32, 0, len(fds.fds))
	for fd := range fds.fds {
		nums = append(nums, fd)
	}
	fds.mu.Unlock()
	slices32(nums)
	return nums
}

func procFDDirents(p procPID) []dirent {
	var out []dirent
	for _, n := range procFDNums(p.tg) {
		out = append(out, dirent{itoa(int(n)), pathInode(p.base + "/fd/" + itoa(int(n))), dtLnk})
	}
	return out
}

func procFDInfoDirents(p procPID) []dirent {
	var out []dirent
	for _, n := range procFDNums(p.tg) {
		out = append(out, dirent{itoa(int(n)), pathInode(p.base + "/fdinfo/" + itoa(int(n))), dtReg})
	}
	return out
}

// procMntID is the mnt_id fdinfo shows: uvm's /proc, the in-kernel
// objects (pipes, sockets, anon inodes) and the guest's file system are
// three mounts.
const (
	procMntRoot  = 1
	procMntProc  = 22
	procMntAnons = 13
)

// procFDInfo is /proc/PID/fdinfo/N (fs/proc/fd.c seq_show, plus the
// eventfd and epoll lines).
func (t *Task) procFDInfo(tg *ThreadGroup, fd int32, f *openFile) []byte {
	var pos int64
	if p, e := f.ops.seek(t, f, 0, 1); e == 0 { // SEEK_CUR: ESPIPE for pipes, sockets
		pos = p
	}
	flags := f.flags
	if tg.fds.cloexec(fd) {
		flags |= oCLOEXEC
	}
	flags = t.tg.arch.guestOpenFlags(flags)
	mnt := procMntRoot
	switch {
	case strings.HasPrefix(f.path, "/proc/"):
		mnt = procMntProc
	case !strings.HasPrefix(f.path, "/"):
		mnt = procMntAnons
	default:
		if id := t.tg.k.mountIDOf(f.path); id >= procMntBind0 {
			mnt = id // a file on a --bind
		}
	}
	st, _ := f.ops.stat(t, f)
	var b strings.Builder
	fmt.Fprintf(&b, "pos:\t%d\nflags:\t0%o\nmnt_id:\t%d\nino:\t%d\n", pos, flags, mnt, st.ino)
	switch o := f.ops.(type) {
	case *eventFile:
		o.ev.mu.Lock()
		n := o.ev.count
		o.ev.mu.Unlock()
		semaphore := 0
		if o.ev.semaphore {
			semaphore = 1
		}
		fmt.Fprintf(&b, "eventfd-count: %16x\neventfd-id: %d\neventfd-semaphore: %d\n", n, st.ino, semaphore)
	case *epollFile:
		o.ep.mu.Lock()
		type watch struct {
			fd int32
			it epollItem
		}
		ws := make([]watch, 0, len(o.ep.interest))
		for tfd, it := range o.ep.interest {
			ws = append(ws, watch{tfd, *it})
		}
		o.ep.mu.Unlock()
		sort.Slice(ws, func(i, j int) bool { return ws[i].fd < ws[j].fd })
		for _, w := range ws {
			tst, _ := w.it.f.ops.stat(t, w.it.f)
			fmt.Fprintf(&b, "tfd: %8d events: %8x data: %16x  pos:0 ino:%x sdev:0\n", w.fd, w.it.mask|epollERR|epollHUP, w.it.data, tst.ino)
		}
	}
	return []byte(b.String())
}

// commOf is the comm of the directory's thread (the leader's for a
// process directory).
func (p procPID) commOf() string {
	if o := p.thread(); o != nil {
		return o.commName()
	}
	return ""
}

// procWriteComm is a write to /proc/PID/comm or task/TID/comm: allowed
// within the writer's own process (EINVAL otherwise, as comm_write);
// the name is the first 15 bytes, up to a NUL (a newline is kept, as
// Linux keeps it).
func (t *Task) procWriteComm(p procPID, b []byte) Errno {
	if p.tg != t.tg {
		return EINVAL
	}
	o := p.thread()
	if o == nil {
		return ESRCH
	}
	b = b[:min(len(b), 15)]
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	t.tg.mu.Lock()
	o.comm = string(b)
	t.tg.mu.Unlock()
	return 0
}

// procWriteOOMAdj is a write to /proc/PID/oom_score_adj: a decimal in
// [-1000, 1000]; lowering it needs CAP_SYS_RESOURCE, and another
// process's needs ptrace access.
func (t *Task) procWriteOOMAdj(tg *ThreadGroup, b []byte) Errno {
	s := strings.TrimSpace(string(b[:min(len(b), 32)]))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	v, ok := parseProcNum(s)
	if s == "0" {
		v, ok = 0, true
	}
	if !ok || v > 1000 {
		return EINVAL
	}
	if neg {
		v = -v
	}
	if tg != t.tg {
		if e := t.procAccess(procPID{tg: tg}); e != 0 {
			return e
		}
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if v < tg.procfs.oomScoreAdj && !t.creds().capable(capSysResource) {
		return EACCES
	}
	tg.procfs.oomScoreAdj = v
	return 0
}

// oomScore is /proc/PID/oom_score (proc_oom_score): the resident set as
// a share of the memory the kernel has, moved by oom_score_adj, scaled
// to [0, 2000] and then by 2/3.
func (tg *ThreadGroup) oomScore() int {
	total := tg.k.memTotalBytes() / vm.PageSize
	if total <= 0 {
		total = 1
	}
	tg.mu.Lock()
	adj := int64(tg.procfs.oomScoreAdj)
	tg.mu.Unlock()
	if adj == -1000 {
		return 0
	}
	badness := tg.mm.RSS() + adj*total/1000
	points := (1000 + badness*1000/total) * 2 / 3
	return int(max(points, 0))
}

// procStateOf is the State field of thread o for reader t.
func (t *Task) procStateOf(p procPID, o *Task) string {
	p.tg.k.procMu.Lock()
	zombie := p.tg.proc.zombie
	p.tg.k.procMu.Unlock()
	switch {
	case zombie || o == nil:
		return "Z (zombie)"
	case o == t:
		return "R (running)"
	case p.tg.jobctl.isStopped():
		return "T (stopped)"
	}
	var waiting bool
	if s := p.tg.k.det; s != nil {
		s.mu.Lock()
		waiting = o.detWait != nil
		s.mu.Unlock()
	} else {
		o.notifyMu.Lock()
		waiting = o.notify != nil
		o.notifyMu.Unlock()
	}
	if waiting {
		return "S (sleeping)"
	}
	return "R (running)"
}

// procSigSets are the pending, blocked, ignored and caught sets.
func procSigSets(tg *ThreadGroup, o *Task) (pnd, shd, blk, ign, cgt uint64) {
	sh := tg.sighand
	sh.Siglock.Lock()
	defer sh.Siglock.Unlock()
	if o != nil {
		pnd, blk = uint64(o.pending.Set()), uint64(o.blocked)
	}
	shd = uint64(tg.shared.Set())
	for sig := 1; sig < len(sh.Actions); sig++ {
		switch sh.Actions[sig].Handler {
		case signals.SIG_DFL:
		case signals.SIG_IGN:
			ign |= 1 << (sig - 1)
		default:
			cgt |= 1 << (sig - 1)
		}
	}
	return
}

// procStatus is /proc/PID/status (fs/proc/array.c proc_pid_status).
func (t *Task) procStatus(p procPID) []byte {
	tg := p.tg
	o := p.thread()
	tg.mu.Lock()
	threads, umask := len(tg.tasks), tg.umask
	tg.mu.Unlock()
	tid := tg.pid
	if o != nil {
		tid = o.tid
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Name:\t%s\nUmask:\t%04o\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n",
		p.commOf(), umask, t.procStateOf(p, o), tg.pid, tid, tg.ppid())
	c := tg.k.initialCred()
	if o != nil {
		c = o.creds()
	}
	fmt.Fprintf(&b, "Uid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\nFDSize:\t%d\nGroups:\t",
		c.uid, c.euid, c.suid, c.fsuid, c.gid, c.egid, c.sgid, c.fsgid, tg.fds.max())
	for _, g := range c.groups {
		fmt.Fprintf(&b, "%d ", g)
	}
	k := tg.k
	k.procMu.Lock()
	pgid, sid := tg.proc.pgid, tg.proc.sid
	k.procMu.Unlock()
	fmt.Fprintf(&b, "\nNStgid:\t%d\nNSpid:\t%d\nNSpgid:\t%d\nNSsid:\t%d\n", tg.pid, tid, pgid, sid)
	kb := func(pages int64) int64 { return pages * vm.PageSize >> 10 }
	rss := tg.mm.RSS()
	vms := int64(tg.mm.TotalVM() >> 10)
	fmt.Fprintf(&b, "VmPeak:\t%8d kB\nVmSize:\t%8d kB\nVmLck:\t%8d kB\nVmPin:\t%8d kB\nVmHWM:\t%8d kB\nVmRSS:\t%8d kB\n",
		vms, vms, 0, 0, kb(rss), kb(rss))
	fmt.Fprintf(&b, "RssAnon:\t%8d kB\nRssFile:\t%8d kB\nRssShmem:\t%8d kB\n", kb(rss), 0, 0)
	fmt.Fprintf(&b, "Threads:\t%d\n", threads)
	pnd, shd, blk, ign, cgt := procSigSets(tg, o)
	fmt.Fprintf(&b, "SigQ:\t0/%d\nSigPnd:\t%016x\nShdPnd:\t%016x\nSigBlk:\t%016x\nSigIgn:\t%016x\nSigCgt:\t%016x\n",
		tg.rlimit(rlimitSigpending), pnd, shd, blk, ign, cgt)
	fmt.Fprintf(&b, "CapInh:\t%016x\nCapPrm:\t%016x\nCapEff:\t%016x\nCapBnd:\t%016x\nCapAmb:\t%016x\n",
		c.capInh, c.capPrm, c.capEff, c.capBnd, 0)
	n := k.guestCPUs()
	mask := uint64(1)<<uint(min(n, 63)) - 1
	fmt.Fprintf(&b, "Seccomp:\t0\nCpus_allowed:\t%x\nCpus_allowed_list:\t0-%d\n", mask, n-1)
	return []byte(b.String())
}

// procCPUTicks is a thread group's CPU time in clock ticks (USER_HZ 100):
// its retired instructions at NsPerInsn each.
func (tg *ThreadGroup) procCPUTicks() uint64 {
	ns := tg.k.opts.NsPerInsn
	if ns <= 0 {
		ns = 1
	}
	tg.mu.Lock()
	var n uint64
	for _, r := range tg.retired {
		n += r
	}
	for _, t := range tg.tasks {
		n += t.cpu.Retired()
	}
	tg.mu.Unlock()
	return n * uint64(ns) / 1e7
}

// procPIDStat is /proc/PID/stat (do_task_stat): the 52 fields, those uvm
// does not model as 0.
func (t *Task) procPIDStat(p procPID) []byte {
	tg := p.tg
	o := p.thread()
	tid := tg.pid
	if o != nil {
		tid = o.tid
	}
	k := tg.k
	k.procMu.Lock()
	pgid, sid, exitSig := tg.proc.pgid, tg.proc.sid, int(tg.proc.exitSignal)
	k.procMu.Unlock()
	tg.mu.Lock()
	threads, start := len(tg.tasks), tg.procfs.startNs
	tg.mu.Unlock()
	pnd, shd, blk, ign, cgt := procSigSets(tg, o)
	var cpu uint32
	if o != nil {
		cpu = o.vcpu()
	}
	var startCode, endCode uint64
	for _, v := range tg.mm.VMAs() {
		if v.Prot&vm.ProtExec != 0 && v.Name == tg.mm.ExePath {
			if startCode == 0 {
				startCode = v.Start
			}
			endCode = v.End
		}
	}
	rssLim := tg.rlimit(procRlimitRSS)
	state := t.procStateOf(p, o)
	fields := []any{tid, "(" + p.commOf() + ")", state[:1], tg.ppid(), pgid, sid, 0, -1, 0x400000,
		0, 0, 0, 0, tg.procCPUTicks(), 0, 0, 0, 20, 0, threads, 0, start / 1e7,
		tg.mm.TotalVM(), tg.mm.RSS(), rssLim, startCode, endCode, 0, 0, 0,
		(pnd | shd) & 0x7fffffff, blk & 0x7fffffff, ign & 0x7fffffff, cgt & 0x7fffffff, 0, 0, 0, exitSig, cpu,
		0, 0, 0, 0, 0, 0, 0, tg.mm.BrkStart, 0, 0, 0, 0, 0}
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, f)
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// procStatm is /proc/PID/statm: size resident shared text lib data dt,
// in pages.
func procStatm(tg *ThreadGroup) []byte {
	size := tg.mm.TotalVM() / vm.PageSize
	var text, data uint64
	for _, v := range tg.mm.VMAs() {
		n := (v.End - v.Start) / vm.PageSize
		switch {
		case v.Prot&vm.ProtExec != 0 && v.Name == tg.mm.ExePath:
			text += n
		case v.Prot&vm.ProtWrite != 0 && !v.Shared:
			data += n
		}
	}
	return fmt.Appendf(nil, "%d %d %d %d 0 %d 0\n", size, tg.mm.RSS(), 0, text, data)
}

// procMaps is /proc/PID/maps.
func procMaps(tg *ThreadGroup) []byte {
	vmas := tg.mm.VMAs()
	if exe, name := tg.mm.ExePath, tg.mm.ExeName; name != "" && name != exe {
		// Under --root the program is named by its guest path, as
		// Linux names a file from the reader's root, never the host's.
		for i := range vmas {
			if vmas[i].Name == exe {
				vmas[i].Name = name
			}
		}
	}
	maps := formatMaps(vmas)
	if tg.arch.vsyscall {
		maps += vsyscallMapsLine
	}
	return []byte(maps)
}
