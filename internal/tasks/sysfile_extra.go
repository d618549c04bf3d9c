package tasks

import (
	"encoding/binary"
	"os"
	"path"
	"syscall"

	"github.com/uvm-emu/uvm/internal/signals"
)

// File syscalls beyond sysfile.go's: truncate/ftruncate on every kind of
// file, fallocate, the utime family, statx's argument checks and
// copy_file_range. Paths resolve through t.resolve and the kernel's vfs
// (t.lookup), so --root confinement applies to them as to open(2).

// fallocate modes.
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
	fallocKnown     = 0x01 | 0x02 | 0x08 | 0x10 | 0x20 | 0x40 // + COLLAPSE, ZERO, INSERT, UNSHARE
)

// utimensat's special nanosecond values.
const (
	utimeNow  = (1 << 30) - 1
	utimeOmit = (1 << 30) - 2
)

func init() {
	registerSyscall("truncate", func(t *Task, a [6]uint64) uint64 { return t.sysTruncate(a[0], int64(a[1])) })
	registerSyscall("fallocate", func(t *Task, a [6]uint64) uint64 {
		return t.sysFallocate(int32(a[0]), a[1], int64(a[2]), int64(a[3]))
	})
	registerSyscall("utimensat", func(t *Task, a [6]uint64) uint64 {
		return t.sysUtimensat(int32(a[0]), a[1], a[2], a[3])
	})
	registerSyscall("futimesat", func(t *Task, a [6]uint64) uint64 { return t.sysFutimesat(int32(a[0]), a[1], a[2]) })
	registerSyscall("utimes", func(t *Task, a [6]uint64) uint64 { return t.sysFutimesat(atFDCWD, a[0], a[1]) })
	registerSyscall("utime", func(t *Task, a [6]uint64) uint64 { return t.sysUtime(a[0], a[1]) })
	registerSyscall("copy_file_range", func(t *Task, a [6]uint64) uint64 {
		return t.sysCopyFileRange(int32(a[0]), a[1], int32(a[2]), a[3], a[4], a[5])
	})
}

// fsizeExceeded applies RLIMIT_FSIZE to a file growing to size bytes
// (inode_newsize_ok): SIGXFSZ and EFBIG past the limit.
func (t *Task) fsizeExceeded(size int64) bool {
	lim := t.tg.rlimit(rlimitFsize)
	if lim == rlimInfinity || uint64(size) <= lim {
		return false
	}
	t.tg.sendSignal(signals.KernelInfo(signals.SIGXFSZ), t)
	return true
}

func (t *Task) sysTruncate(pathAddr uint64, length int64) uint64 {
	g, pa, e := t.resolveAt(atFDCWD, pathAddr)
	if e != 0 {
		return errRet(e)
	}
	if length < 0 {
		return errRet(EINVAL)
	}
	if _, ok := t.procStat(g); ok {
		return errRet(EACCES)
	}
	fsys, name := t.lookupAt(g, pa)
	fi, err := fsys.stat(name)
	if err != nil {
		return errRet(errnoOf(err))
	}
	switch {
	case fi.IsDir():
		return errRet(EISDIR)
	case !fi.Mode().IsRegular():
		return errRet(EINVAL)
	}
	f, err := fsys.open(name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return errRet(errnoOf(err))
	}
	defer f.Close()
	if t.fsizeExceeded(length) {
		return errRet(EFBIG)
	}
	return errOr0(errnoOf(f.Truncate(length)))
}

// sysFtruncateAny is ftruncate(2) on every kind of file: regular host
// files and memfds change size; anything else (pipes, sockets, eventfds,
// directories, /proc files) is EINVAL, as is a descriptor not open for
// writing; O_PATH descriptors are EBADF.
func (t *Task) sysFtruncateAny(fd int32, length int64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok || f.flags&oPATH != 0 {
		return errRet(EBADF)
	}
	if length < 0 {
		return errRet(EINVAL)
	}
	switch o := f.ops.(type) {
	case *memfdFile:
		if f.flags&oACCMODE == oRDONLY {
			return errRet(EINVAL)
		}
		if t.fsizeExceeded(length) {
			return errRet(EFBIG)
		}
		return errOr0(o.truncate(t, length))
	case *hostFile:
		fi, err := o.f.Stat()
		if err != nil {
			return errRet(errnoOf(err))
		}
		if !fi.Mode().IsRegular() || f.flags&oACCMODE == oRDONLY {
			return errRet(EINVAL)
		}
		if t.fsizeExceeded(length) {
			return errRet(EFBIG)
		}
		return errOr0(errnoOf(o.f.Truncate(length)))
	}
	return errRet(EINVAL)
}

func (t *Task) sysFallocate(fd int32, mode uint64, off, n int64) uint64 {
	if off < 0 || n <= 0 {
		return errRet(EINVAL)
	}
	if mode&^fallocKnown != 0 {
		return errRet(EOPNOTSUPP)
	}
	if mode&fallocPunchHole != 0 && mode&fallocKeepSize == 0 {
		return errRet(EOPNOTSUPP)
	}
	f, ok := t.tg.fds.get(fd)
	if !ok || f.flags&oPATH != 0 {
		return errRet(EBADF)
	}
	if f.flags&oACCMODE == oRDONLY {
		return errRet(EBADF)
	}
	if off+n < off {
		return errRet(EFBIG)
	}
	st, e := f.ops.stat(t, f)
	if e != 0 {
		return errRet(e)
	}
	switch st.mode & sIFMT {
	case sIFIFO:
		return errRet(ESPIPE)
	case sIFDIR:
		return errRet(EISDIR)
	case sIFREG, sIFBLK:
	default:
		return errRet(ENODEV)
	}
	if mode&fallocKeepSize == 0 && t.fsizeExceeded(off+n) {
		return errRet(EFBIG)
	}
	switch o := f.ops.(type) {
	case *memfdFile:
		return errOr0(o.fallocate(t, mode, off, n))
	case *hostFile:
		return errOr0(hostFallocate(o.f, uint32(mode), off, n))
	}
	return errRet(EOPNOTSUPP)
}

// readTimes reads utimensat's two timespecs (nil: both now) and
// reports whether both are UTIME_OMIT.
func (t *Task) readTimes(addr uint64) (*[2]syscall.Timespec, bool, Errno) {
	if addr == 0 {
		return nil, false, 0
	}
	b, e := t.readBuf(addr, 32)
	if e != 0 {
		return nil, false, e
	}
	var ts [2]syscall.Timespec
	for i := range ts {
		sec := int64(binary.LittleEndian.Uint64(b[16*i:]))
		nsec := int64(binary.LittleEndian.Uint64(b[16*i+8:]))
		if nsec != utimeNow && nsec != utimeOmit && (nsec < 0 || nsec > 999999999) {
			return nil, false, EINVAL
		}
		ts[i] = syscall.Timespec{Sec: sec, Nsec: nsec}
	}
	return &ts, ts[0].Nsec == utimeOmit && ts[1].Nsec == utimeOmit, 0
}

func (t *Task) sysUtimensat(dirfd int32, pathAddr, timesAddr, flags uint64) uint64 {
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return errRet(EINVAL)
	}
	ts, omit, e := t.readTimes(timesAddr)
	if e != 0 {
		return errRet(e)
	}
	if omit {
		return 0
	}
	return errOr0(t.utimes(dirfd, pathAddr, ts, flags))
}

// utimes sets the times of path (relative to dirfd) or, with no path,
// of dirfd itself.
func (t *Task) utimes(dirfd int32, pathAddr uint64, ts *[2]syscall.Timespec, flags uint64) Errno {
	var p string
	if pathAddr != 0 {
		var e Errno
		if p, e = t.readPath(pathAddr); e != 0 {
			return e
		}
	}
	if p == "" {
		if pathAddr != 0 && flags&atEmptyPath == 0 {
			return ENOENT
		}
		if dirfd == atFDCWD {
			p = "."
		} else {
			f, ok := t.tg.fds.get(dirfd)
			if !ok {
				return EBADF
			}
			if h, ok := f.hostOS(); ok && f.flags&oPATH == 0 {
				if readOnlyFile(t.tg.k.fs, h, f.path) {
					return EROFS
				}
				return hostUtimensat(int(h.Fd()), "", ts, 0)
			}
			// In-kernel objects (pipes, memfds, eventfds …) keep no
			// timestamps that uvm reports.
			return 0
		}
	}
	g, e := t.guestPath(dirfd, p)
	if e != 0 {
		return e
	}
	if _, ok := t.procStat(g); ok {
		return EACCES
	}
	fsys, name := t.lookupAt(g, pathArg{dirfd, p})
	nofollow := 0
	if flags&atSymlinkNofollow != 0 {
		nofollow = syscall.O_NOFOLLOW
	}
	fl := 0
	if nofollow != 0 {
		fl = atSymlinkNofollow
	}
	if hv, ok := fsys.(hostVFS); ok {
		return hostUtimensat(atFDCWD, hv.path(name), ts, fl)
	}
	if e, ok := unconfinedAt(fsys, func(dfd int) Errno { return hostUtimensat(dfd, name, ts, fl) }); ok {
		return e
	}
	if e, ok := utimensNoFollow(fsys, name, nofollow != 0, func(dfd int, n string) Errno { return hostUtimensat(dfd, n, ts, fl) }); ok {
		return e
	}
	// Confined (--root): resolve inside the root, then act on the
	// resolved file through its /proc/self/fd link.
	if readOnlyAt(fsys, name, nofollow == 0) {
		return EROFS
	}
	f, err := fsys.open(name, hostOPath|nofollow, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer f.Close()
	if nofollow != 0 {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			// The link's own times: through its directory (resolved
			// inside the root) and its last name, which is not followed.
			dir, err := fsys.open(path.Dir(name), hostOPath, 0)
			if err != nil {
				return errnoOf(err)
			}
			defer dir.Close()
			return hostUtimensat(int(dir.Fd()), path.Base(name), ts, atSymlinkNofollow)
		}
	}
	return hostUtimensat(atFDCWD, "/proc/self/fd/"+itoa(int(f.Fd())), ts, 0)
}

// readTimevals reads two struct timevals (utimes/futimesat) as timespecs.
func (t *Task) readTimevals(addr uint64) (*[2]syscall.Timespec, Errno) {
	if addr == 0 {
		return nil, 0
	}
	b, e := t.readBuf(addr, 32)
	if e != 0 {
		return nil, e
	}
	var ts [2]syscall.Timespec
	for i := range ts {
		sec := int64(binary.LittleEndian.Uint64(b[16*i:]))
		usec := int64(binary.LittleEndian.Uint64(b[16*i+8:]))
		if usec < 0 || usec >= 1e6 {
			return nil, EINVAL
		}
		ts[i] = syscall.Timespec{Sec: sec, Nsec: usec * 1000}
	}
	return &ts, 0
}

func (t *Task) sysFutimesat(dirfd int32, pathAddr, tvAddr uint64) uint64 {
	ts, e := t.readTimevals(tvAddr)
	if e != 0 {
		return errRet(e)
	}
	if pathAddr == 0 && dirfd == atFDCWD {
		return errRet(EFAULT)
	}
	return errOr0(t.utimes(dirfd, pathAddr, ts, 0))
}

func (t *Task) sysUtime(pathAddr, bufAddr uint64) uint64 {
	var ts *[2]syscall.Timespec
	if bufAddr != 0 {
		b, e := t.readBuf(bufAddr, 16)
		if e != 0 {
			return errRet(e)
		}
		ts = &[2]syscall.Timespec{{Sec: int64(binary.LittleEndian.Uint64(b))}, {Sec: int64(binary.LittleEndian.Uint64(b[8:]))}}
	}
	if pathAddr == 0 {
		return errRet(EFAULT)
	}
	return errOr0(t.utimes(atFDCWD, pathAddr, ts, 0))
}

// statx flags and mask bits that are not stat results.
const (
	atNoAutomount     = 0x800
	atStatxSyncType   = 0x6000
	statxReservedMask = 0x80000000
)

// sysStatxChecked is statx with Linux's argument checks.
func (t *Task) sysStatxChecked(dirfd int32, pathAddr, flags, mask, buf uint64) uint64 {
	if flags&^(atSymlinkNofollow|atEmptyPath|atNoAutomount|atStatxSyncType) != 0 ||
		flags&atStatxSyncType == atStatxSyncType || mask&statxReservedMask != 0 {
		return errRet(EINVAL)
	}
	return t.sysStatx(dirfd, pathAddr, flags, buf)
}

// copyChunk bounds one step of copy_file_range.
const copyChunk = 1 << 20

func (t *Task) sysCopyFileRange(infd int32, inOffAddr uint64, outfd int32, outOffAddr, n, flags uint64) uint64 {
	if flags != 0 {
		return errRet(EINVAL)
	}
	in, ok1 := t.tg.fds.get(infd)
	out, ok2 := t.tg.fds.get(outfd)
	if !ok1 || !ok2 || in.flags&oPATH != 0 || out.flags&oPATH != 0 {
		return errRet(EBADF)
	}
	if in.flags&oACCMODE == oWRONLY || out.flags&oACCMODE == oRDONLY || out.flags&oAPPEND != 0 {
		return errRet(EBADF)
	}
	for _, f := range []*openFile{in, out} {
		st, e := f.ops.stat(t, f)
		if e != 0 {
			return errRet(e)
		}
		switch st.mode & sIFMT {
		case sIFREG:
		case sIFDIR:
			return errRet(EISDIR)
		default:
			return errRet(EINVAL)
		}
	}
	inOff, outOff := int64(-1), int64(-1)
	if inOffAddr != 0 {
		v, e := t.getU64(inOffAddr)
		if e != 0 {
			return errRet(e)
		}
		if inOff = int64(v); inOff < 0 {
			return errRet(EINVAL)
		}
	}
	if outOffAddr != 0 {
		v, e := t.getU64(outOffAddr)
		if e != 0 {
			return errRet(e)
		}
		if outOff = int64(v); outOff < 0 {
			return errRet(EINVAL)
		}
	}
	if n == 0 {
		return 0
	}
	if sameFile(in, out) {
		// Overlapping ranges of one file are EINVAL.
		ip, op := inOff, outOff
		if ip < 0 {
			ip, _ = in.ops.seek(t, in, 0, 1)
		}
		if op < 0 {
			op, _ = out.ops.seek(t, out, 0, 1)
		}
		if ip < op+int64(n) && op < ip+int64(n) {
			return errRet(EINVAL)
		}
	}
	var done uint64
	for done < n {
		b, e := in.ops.read(t, in, min(n-done, copyChunk), inOff)
		if e != 0 {
			if done > 0 {
				break
			}
			return errRet(e)
		}
		if len(b) == 0 {
			break
		}
		w, e := out.ops.write(t, out, b, outOff)
		if e != 0 && w == 0 {
			if done > 0 {
				break
			}
			return errRet(e)
		}
		done += w
		if inOff >= 0 {
			inOff += int64(w)
		} else if w < uint64(len(b)) {
			in.ops.seek(t, in, int64(w)-int64(len(b)), 1)
		}
		if outOff >= 0 {
			outOff += int64(w)
		}
		if w < uint64(len(b)) {
			break
		}
	}
	if inOffAddr != 0 {
		t.putU64(inOffAddr, uint64(inOff))
	}
	if outOffAddr != 0 {
		t.putU64(outOffAddr, uint64(outOff))
	}
	return done
}

// sameFile reports whether two open files are the same file.
func sameFile(a, b *openFile) bool {
	if a.ops == b.ops {
		return true
	}
	ha, ok1 := a.hostOS()
	hb, ok2 := b.hostOS()
	if !ok1 || !ok2 {
		return false
	}
	fa, err1 := ha.Stat()
	fb, err2 := hb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
