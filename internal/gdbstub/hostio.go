package gdbstub

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
)

// Host I/O: the vFile packets (gdb's "Host I/O Packets"; gdbserver's
// hostio.cc). gdb's default sysroot is "target:", so with them it reads
// the program, its shared libraries and /proc/PID files through the stub,
// as the debugged process sees them, instead of from the machine gdb runs
// on. Only reading is offered: an open for writing, pwrite and unlink
// answer EROFS.

// HostFiles is implemented by a target whose files gdb may read. Errors
// are Linux errno values (0: none).
type HostFiles interface {
	// OpenFile opens path read-only in the debugged process's view.
	OpenFile(path string) (File, int)
	// Readlink reads a symbolic link in that view.
	Readlink(path string) (string, int)
}

// File is a file opened by HostFiles.OpenFile.
type File interface {
	// Pread reads up to n bytes at off; an empty result is the end.
	Pread(n int, off int64) ([]byte, int)
	// Stat is fstat.
	Stat() (FileStat, int)
	Close()
}

// FileStat is the stat gdb's fileio protocol carries (struct fio_stat).
type FileStat struct {
	Dev, Ino, Mode, Nlink, UID, GID, Rdev uint32
	Size, Blksize, Blocks                 uint64
	Atime, Mtime, Ctime                   uint32
}

// maxHostFiles bounds the descriptors one session may hold open.
const maxHostFiles = 64

// gdb's fileio errno values (gdb/include/gdb/fileio.h): most are the
// Linux numbers; ENOSYS is 88 and ENAMETOOLONG 91; the rest is EUNKNOWN.
func fileioErrno(linux int) int {
	switch linux {
	case 1, 2, 4, 9, 13, 14, 16, 17, 19, 20, 21, 22, 23, 24, 27, 28, 29, 30:
		return linux
	case 36:
		return 91
	case 38:
		return 88
	}
	return 9999
}

const (
	fioEBADF  = 9
	fioEINVAL = 22
	fioEMFILE = 24
	fioEROFS  = 30
)

func fioError(errno int) []byte { return fmt.Appendf(nil, "F-1,%x", errno) }

// hostIO answers vFile:OP:ARGS.
func (s *session) hostIO(p []byte) []byte {
	hf, ok := s.t.(HostFiles)
	if !ok {
		return replyEmpty
	}
	op, args, _ := bytes.Cut(p[len("vFile:"):], []byte(":"))
	a := bytes.Split(args, []byte(","))
	num := func(i int) (uint64, bool) {
		if i >= len(a) {
			return 0, false
		}
		return parseHex(a[i])
	}
	name := func() (string, bool) {
		if len(a) == 0 || len(a[0]) > 2*4096 {
			return "", false
		}
		b, ok := decodeHex(nil, a[0])
		return string(b), ok && bytes.IndexByte(b, 0) < 0
	}
	switch string(op) {
	case "setfs":
		pid, ok := num(0)
		if !ok || (pid != 0 && pid != uint64(s.t.Pid())) {
			return fioError(fioEINVAL)
		}
		return []byte("F0")
	case "open":
		path, ok1 := name()
		flags, ok2 := num(1)
		if !ok1 || !ok2 {
			return fioError(fioEINVAL)
		}
		if flags != 0 { // anything but O_RDONLY
			return fioError(fioEROFS)
		}
		if len(s.files) >= maxHostFiles {
			return fioError(fioEMFILE)
		}
		f, errno := hf.OpenFile(path)
		if errno != 0 {
			return fioError(fileioErrno(errno))
		}
		if s.files == nil {
			s.files = map[uint64]File{}
		}
		fd := uint64(0)
		for s.files[fd] != nil {
			fd++
		}
		s.files[fd] = f
		return fmt.Appendf(nil, "F%x", fd)
	case "pread":
		fd, ok1 := num(0)
		n, ok2 := num(1)
		off, ok3 := num(2)
		f := s.files[fd]
		if !ok1 || !ok2 || !ok3 || off > 1<<62 {
			return fioError(fioEINVAL)
		}
		if f == nil {
			return fioError(fioEBADF)
		}
		// Escaping may double every byte: keep the reply within max.
		n = min(n, uint64(s.max-32)/2)
		data, errno := f.Pread(int(n), int64(off))
		if errno != 0 {
			return fioError(fileioErrno(errno))
		}
		return append(fmt.Appendf(nil, "F%x;", len(data)), data...)
	case "close":
		fd, ok := num(0)
		f := s.files[fd]
		if !ok || f == nil {
			return fioError(fioEBADF)
		}
		f.Close()
		delete(s.files, fd)
		return []byte("F0")
	case "fstat":
		fd, ok := num(0)
		f := s.files[fd]
		if !ok || f == nil {
			return fioError(fioEBADF)
		}
		st, errno := f.Stat()
		if errno != 0 {
			return fioError(fileioErrno(errno))
		}
		b := encodeFioStat(st)
		return append(fmt.Appendf(nil, "F%x;", len(b)), b...)
	case "readlink":
		path, ok := name()
		if !ok {
			return fioError(fioEINVAL)
		}
		target, errno := hf.Readlink(path)
		if errno != 0 {
			return fioError(fileioErrno(errno))
		}
		target = target[:min(len(target), s.max/2-32)]
		return append([]byte("F"+strconv.FormatInt(int64(len(target)), 16)+";"), target...)
	case "pwrite", "unlink":
		return fioError(fioEROFS)
	}
	return replyEmpty
}

// encodeFioStat is struct fio_stat: big-endian, 64 bytes.
func encodeFioStat(st FileStat) []byte {
	b := make([]byte, 0, 64)
	for _, v := range []uint32{st.Dev, st.Ino, st.Mode, st.Nlink, st.UID, st.GID, st.Rdev} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	for _, v := range []uint64{st.Size, st.Blksize, st.Blocks} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	for _, v := range []uint32{st.Atime, st.Mtime, st.Ctime} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// closeFiles closes what the client left open when the session ends.
func (s *session) closeFiles() {
	for fd, f := range s.files {
		f.Close()
		delete(s.files, fd)
	}
}
