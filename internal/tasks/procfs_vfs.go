package tasks

// How the file system calls reach uvm's /proc: open, stat, readlink and
// getdents of a path under /proc are answered from procLookup's entries
// before the vfs is asked; guestPath has already rewritten the magic
// links in the middle of a path (procCanon), and open and stat follow a
// final one (procFollowLast).

// procDirFile is an open /proc directory.
type procDirFile struct {
	fileBase
	ent procEntry
}

func (*procDirFile) read(*Task, *openFile, uint64, int64) ([]byte, Errno) { return nil, EISDIR }
func (*procDirFile) seek(_ *Task, f *openFile, off int64, whence int) (int64, Errno) {
	return f.seekDir(off, whence)
}
func (d *procDirFile) readdir(t *Task, _ *openFile) ([]dirent, Errno) {
	if d.ent.gone() {
		return []dirent{}, 0 // as Linux: an empty listing, no error
	}
	parent := d.ent.path
	if i := lastSlash(parent); i > 0 {
		parent = parent[:i]
	} else {
		parent = "/"
	}
	out := []dirent{{".", pathInode(d.ent.path), dtDir}, {"..", pathInode(parent), dtDir}}
	return append(out, d.ent.dirents()...), 0
}
func (d *procDirFile) stat(t *Task, _ *openFile) (hostStat, Errno) { return d.ent.stat(), 0 }

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// procDataFile is an open /proc regular file: its contents as they were
// at open, and for a writable one (comm, oom_score_adj) the entry's
// write.
type procDataFile struct {
	memFile
	ent procEntry
}

func (p *procDataFile) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if p.ent.gone() {
		return nil, ESRCH
	}
	return p.memFile.read(t, f, n, off)
}

func (p *procDataFile) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if p.ent.write == nil {
		return 0, EBADF
	}
	if p.ent.gone() {
		return 0, ESRCH
	}
	if e := p.ent.write(b); e != 0 {
		return 0, e
	}
	return uint64(len(b)), 0
}

func (p *procDataFile) stat(t *Task, _ *openFile) (hostStat, Errno) { return p.ent.stat(), 0 }

// stat is the entry's inode.
func (e procEntry) stat() hostStat {
	st := hostStat{mode: e.mode, nlink: 1, uid: e.uid, gid: e.gid, ino: pathInode(e.path), blksize: 1024,
		dev: procDev}
	if e.mode&sIFMT == sIFDIR {
		st.nlink = 2
	}
	if e.target != nil {
		if s, err := e.target(); err == 0 {
			st.size = int64(len(s))
		}
	}
	return st
}

// procDev is the device number of uvm's /proc (an anonymous device, as
// Linux's procfs has).
const procDev = 0x16

// procOpenAt opens the /proc entry g (canonical, final link followed
// as the flags ask): ok=false when g is not one of uvm's.
func (t *Task) procOpenAt(g string, fl int) (*openFile, bool, Errno) {
	ent, ok, e := t.procLookup(g)
	if !ok || e != 0 {
		return nil, ok, e
	}
	if ent.access != nil {
		if e := ent.access(); e != 0 {
			return nil, true, e
		}
	}
	switch ent.mode & sIFMT {
	case sIFLNK:
		if fl&oNOFOLLOW != 0 {
			return nil, true, ELOOP
		}
		if ent.follow == nil {
			return nil, false, 0 // exe: the vfs opens the program's file
		}
		f, e := ent.follow()
		return f, true, e
	case sIFDIR:
		if fl&oACCMODE != oRDONLY || fl&oCREAT != 0 {
			return nil, true, EISDIR
		}
		return &openFile{ops: &procDirFile{ent: ent}, path: g, flags: fl &^ oCLOEXEC}, true, 0
	}
	if fl&oDIRECTORY != 0 {
		return nil, true, ENOTDIR
	}
	if fl&oCREAT != 0 && fl&oEXCL != 0 {
		return nil, true, EEXIST
	}
	var mask uint32
	switch fl & oACCMODE {
	case oRDONLY:
		mask = mayRead
	case oWRONLY:
		mask = mayWrite
	default:
		mask = mayRead | mayWrite
	}
	if mask&mayWrite != 0 && ent.write == nil && ent.open == nil {
		return nil, true, EACCES
	}
	if e := t.creds().permission(ent.uid, ent.gid, ent.mode, mask); e != 0 {
		return nil, true, e
	}
	if ent.open != nil {
		return ent.open(fl), true, 0
	}
	data, e := ent.contents()
	if e != 0 {
		return nil, true, e
	}
	return &openFile{ops: &procDataFile{memFile: memFile{data: data}, ent: ent}, path: g, flags: fl &^ oCLOEXEC}, true, 0
}

// procStatAt stats the /proc entry g (final link followed when follow
// and procFollowLast has not already): ok=false when g is not one of
// uvm's (exe followed: the vfs stats the program's file).
func (t *Task) procStatAt(g string, follow bool) (hostStat, bool, Errno) {
	ent, ok, e := t.procLookup(g)
	if !ok || e != 0 {
		return hostStat{}, ok, e
	}
	if follow && ent.mode&sIFMT == sIFLNK {
		if ent.access != nil {
			if e := ent.access(); e != 0 {
				return hostStat{}, true, e
			}
		}
		if ent.follow == nil {
			return hostStat{}, false, 0
		}
		f, e := ent.follow()
		if e != 0 {
			return hostStat{}, true, e
		}
		st, e := f.ops.stat(t, f)
		return st, true, e
	}
	return ent.stat(), true, 0
}

// procStat reports whether g is one of uvm's /proc entries, and its
// inode (following a final link), for the calls that treat them as the
// kernel's own (chown, utimensat, truncate …).
func (t *Task) procStat(g string) (hostStat, bool) {
	g, e := t.procFollowLast(g, true)
	if e != 0 {
		return hostStat{}, false
	}
	st, ok, e := t.procStatAt(g, true)
	return st, ok && e == 0
}

// procReadlink is readlink of the /proc entry g: ok=false when g is not
// one of uvm's.
func (t *Task) procReadlink(g string) (string, bool, Errno) {
	ent, ok, e := t.procLookup(g)
	if !ok || e != 0 {
		return "", ok, e
	}
	if ent.target == nil {
		return "", true, EINVAL
	}
	if ent.access != nil {
		if e := ent.access(); e != 0 {
			return "", true, e
		}
	}
	s, e := ent.target()
	return s, true, e
}

// procExeHost is the program file /proc/PID/exe leads to, for lookup
// (ok=false: g is not an exe link of a live process).
func (t *Task) procExeHost(g string) (string, bool) {
	c, ok := procSplit(g)
	if !ok || len(c) < 2 || c[len(c)-1] != "exe" {
		return "", false
	}
	pid, ok := parseProcNum(c[0])
	if !ok {
		return "", false
	}
	p, ok := t.tg.k.procFindPID(pid)
	if !ok || !(len(c) == 2 || len(c) == 4 && c[1] == "task") {
		return "", false
	}
	return p.tg.mm.ExePath, true
}
