package main

import (
	"github.com/uvm-emu/uvm/internal/gdbstub"
	"github.com/uvm-emu/uvm/internal/tasks"
)

// gdb's host I/O (gdbstub.HostFiles) on the debugged process's view of
// the file system (tasks.Debugger.OpenFile).

func (t *gdbTarget) OpenFile(path string) (gdbstub.File, int) {
	f, e := t.d.OpenFile(path)
	if e != 0 {
		return nil, int(e)
	}
	return gdbFile{f}, 0
}

func (t *gdbTarget) Readlink(path string) (string, int) {
	s, e := t.d.Readlink(path)
	return s, int(e)
}

type gdbFile struct{ f *tasks.DebugFile }

func (f gdbFile) Pread(n int, off int64) ([]byte, int) {
	b, e := f.f.Pread(n, off)
	return b, int(e)
}

func (f gdbFile) Stat() (gdbstub.FileStat, int) {
	st, e := f.f.Stat()
	if e != 0 {
		return gdbstub.FileStat{}, int(e)
	}
	// fio_stat's fields are 32 bits where Linux's are wider: truncated,
	// as gdbserver's remote_fileio_to_fio_stat does.
	return gdbstub.FileStat{Dev: uint32(st.Dev), Ino: uint32(st.Ino), Mode: st.Mode, Nlink: uint32(st.Nlink),
		UID: st.UID, GID: st.GID, Rdev: uint32(st.Rdev), Size: uint64(st.Size), Blksize: uint64(st.Blksize),
		Blocks: uint64(st.Blocks), Atime: uint32(st.Atime), Mtime: uint32(st.Mtime), Ctime: uint32(st.Ctime)}, 0
}

func (f gdbFile) Close() { f.f.Close() }
