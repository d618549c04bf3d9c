package tasks

import (
	"os"
)

// Files as the debugged process sees them, for gdb's host I/O (the vFile
// packets): with them gdb's default sysroot "target:" loads the program's
// libraries, /proc/PID/maps and the rest through the stub from the
// guest's view — its -L prefix, --root, binds and the synthetic /proc —
// instead of guessing at the host's files.

// debugPathMax is PATH_MAX, the longest name a guest's open takes
// (readPath).
const debugPathMax = 4096

// DebugFile is one file the debugger opened (OpenFile), read-only.
type DebugFile struct {
	t  *Task
	of *openFile
}

// DebugStat is the part of a file's stat gdb's fileio format carries.
type DebugStat struct {
	Dev, Ino, Nlink, Rdev uint64
	Mode, UID, GID        uint32
	Size, Blocks, Blksize int64
	Atime, Mtime, Ctime   int64 // seconds
}

// debugTask is a thread of the debugged process to resolve names with
// (its cwd and root are the process's).
func (d *Debugger) debugTask() *Task {
	tg := d.tg.Load()
	if tg == nil {
		return nil
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if ts := tg.sortedTasksLocked(); len(ts) > 0 {
		return ts[0]
	}
	return nil
}

// OpenFile opens path read-only as the debugged process would with
// open(path, O_RDONLY): relative to its cwd, inside its root, through its
// binds and -L prefix, /proc and /dev being uvm's own. The debugger only
// reads: the stub answers writes with EROFS before it gets here.
func (d *Debugger) OpenFile(path string) (*DebugFile, Errno) {
	t := d.debugTask()
	if t == nil {
		return nil, ESRCH
	}
	if len(path) >= debugPathMax {
		return nil, ENAMETOOLONG
	}
	g, e := t.guestPath(atFDCWD, path)
	if e != 0 {
		return nil, e
	}
	pa := pathArg{dirfd: atFDCWD, p: path}
	if g, pa, e = t.procFollowAt(g, pa, true); e != 0 {
		return nil, e
	}
	if of, ok, e := t.procOpenAt(g, oRDONLY); ok {
		if e != 0 {
			return nil, e
		}
		return &DebugFile{t: t, of: of}, 0
	}
	if of, ok, e := t.devOpen(g, oRDONLY); ok {
		if e != 0 {
			return nil, e
		}
		return &DebugFile{t: t, of: of}, 0
	}
	fsys, name := t.lookupAt(g, pa)
	hf, err := fsys.open(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, errnoOf(err)
	}
	return &DebugFile{t: t, of: &openFile{ops: &hostFile{f: hf}, path: g, flags: oRDONLY}}, 0
}

// Pread reads up to n bytes at off (a short or empty result at the end).
func (f *DebugFile) Pread(n int, off int64) ([]byte, Errno) {
	if n < 0 || off < 0 {
		return nil, EINVAL
	}
	return f.of.ops.read(f.t, f.of, min(uint64(n), readMax), off)
}

// Stat is fstat of the file.
func (f *DebugFile) Stat() (DebugStat, Errno) {
	st, e := f.of.ops.stat(f.t, f.of)
	if e != 0 {
		return DebugStat{}, e
	}
	return DebugStat{Dev: st.dev, Ino: st.ino, Nlink: st.nlink, Rdev: st.rdev, Mode: st.mode, UID: st.uid, GID: st.gid,
		Size: st.size, Blocks: st.blocks, Blksize: st.blksize,
		Atime: st.atime.Unix(), Mtime: st.mtime.Unix(), Ctime: st.ctime.Unix()}, 0
}

// Close releases the file.
func (f *DebugFile) Close() { f.of.ops.release() }

// Readlink reads the symbolic link path as the debugged process would
// (readlink(2): /proc/PID/exe and the other /proc links included).
func (d *Debugger) Readlink(path string) (string, Errno) {
	t := d.debugTask()
	if t == nil {
		return "", ESRCH
	}
	if len(path) >= debugPathMax {
		return "", ENAMETOOLONG
	}
	g, e := t.guestPath(atFDCWD, path)
	if e != 0 {
		return "", e
	}
	if target, ok, e := t.procReadlink(g); ok {
		return target, e
	}
	fsys, name := t.lookupAt(g, pathArg{dirfd: atFDCWD, p: path})
	target, err := fsys.readlink(name)
	if err != nil {
		return "", errnoOf(err)
	}
	return target, 0
}
