package tasks

import (
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/uvm-emu/uvm/internal/vm"
)

const (
	atFDCWD           = -100
	atSymlinkNofollow = 0x100
	atRemoveDir       = 0x200
	atEmptyPath       = 0x1000
)

// guestPath makes p absolute against dirfd (AT_FDCWD or a directory).
func (t *Task) guestPath(dirfd int32, p string) (string, Errno) {
	if p == "" {
		return "", ENOENT
	}
	if path.IsAbs(p) {
		return t.procCanon(path.Clean(p))
	}
	base := t.tg.getCwd()
	if dirfd != atFDCWD {
		f, ok := t.tg.fds.get(dirfd)
		if !ok {
			return "", EBADF
		}
		_, isDir := f.ops.(*procDirFile)
		if _, ok := f.hostOS(); !ok && !isDir {
			return "", ENOTDIR
		}
		base = f.path
	}
	return t.procCanon(path.Join(base, p))
}

// hiddenHostPath is where guest paths that must not reach the host
// resolve: a name that cannot exist, so every
// operation on it fails with ENOENT (and nothing can be created there).
const hiddenHostPath = "/proc/uvm-hidden/nonexistent"

// lookup maps a guest absolute path to the file system it resolves in and
// the name there: /proc/self/exe is the running program's file (given to
// the guest whatever its root), per-process /proc paths that uvm does not
// synthesize resolve nowhere, everything else goes to the kernel's vfs.
func (t *Task) lookup(gp string) (vfs, string) {
	if gp == "/proc/self/exe" {
		return hostVFS{}, t.tg.mm.ExePath
	}
	if exe, ok := t.procExeHost(gp); ok {
		return hostVFS{}, exe
	}
	if procHidden(gp) && !machineProcFile(gp) || procUnmodelled(gp) {
		// Not one of the synthetic files (those are served before
		// lookup is asked): the guest gets ENOENT, never the host's.
		return hostVFS{}, hiddenHostPath
	}
	if procHidden(gp) {
		if !t.tg.k.hostNet() {
			// /proc/PID/net is uvm's in the loopback network
			// (proc_net.go): nothing of the host's answers.
			return hostVFS{}, hiddenHostPath
		}
		gp = machineProcPath(gp)
	}
	return t.tg.k.fs, gp
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	neg := i < 0
	if neg {
		i = -i
	}
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}

func (tg *ThreadGroup) getCwd() string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.cwd
}

// openFlags translates the arch's O_DIRECTORY/O_NOFOLLOW to the x86-64
// values uvm uses inside and drops O_DIRECT and O_LARGEFILE.
func (t *Task) openFlags(f uint64) int {
	return t.tg.arch.hostOpenFlags(f)
}

// hostOpenFlags is openFlags for the arch.
func (a *arch) hostOpenFlags(f uint64) int {
	fl, b := int(f), a.openFlagBits
	out := fl &^ (b.directory | b.nofollow | b.direct | b.largefile)
	if fl&b.directory != 0 {
		out |= oDIRECTORY
	}
	if fl&b.nofollow != 0 {
		out |= oNOFOLLOW
	}
	return out
}

// guestOpenFlags is the inverse of hostOpenFlags for the flags uvm keeps:
// O_DIRECTORY and O_NOFOLLOW in the arch's own values (fdinfo's flags).
func (a *arch) guestOpenFlags(fl int) int {
	b := a.openFlagBits
	out := fl &^ (oDIRECTORY | oNOFOLLOW)
	if fl&oDIRECTORY != 0 {
		out |= b.directory
	}
	if fl&oNOFOLLOW != 0 {
		out |= b.nofollow
	}
	return out
}

func (t *Task) sysOpenat(dirfd int32, pathAddr, flags, mode uint64) uint64 {
	g, pa, e := t.resolveAt(dirfd, pathAddr)
	if e != 0 {
		return errRet(e)
	}
	fl := t.openFlags(flags)
	hostFlags := 0
	switch fl & oACCMODE {
	case oRDONLY:
		hostFlags = os.O_RDONLY
	case oWRONLY:
		hostFlags = os.O_WRONLY
	case oRDWR:
		hostFlags = os.O_RDWR
	default:
		return errRet(EINVAL)
	}
	if fl&oCREAT != 0 {
		hostFlags |= os.O_CREATE
	}
	if fl&oEXCL != 0 {
		hostFlags |= os.O_EXCL
	}
	if fl&oTRUNC != 0 {
		hostFlags |= os.O_TRUNC
	}
	if fl&oAPPEND != 0 {
		hostFlags |= os.O_APPEND
	}
	if fl&oNONBLOCK != 0 {
		// A FIFO's open must not wait for its other end (the host
		// open would block this thread where no signal reaches it).
		hostFlags |= syscall.O_NONBLOCK
	}
	if g, pa, e = t.procFollowAt(g, pa, fl&oNOFOLLOW == 0); e != 0 {
		return errRet(e)
	}
	if of, ok, e := t.procOpenAt(g, fl); ok {
		if e != 0 {
			return errRet(e)
		}
		fd, e := t.tg.fds.alloc(of, 0, fl&oCLOEXEC != 0)
		return retFD(fd, e)
	}
	fsys, name := t.lookupAt(g, pa)
	if fl&oNOFOLLOW != 0 {
		if fi, err := fsys.lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return errRet(ELOOP)
		}
	}
	if of, ok, e := t.devOpen(g, fl); ok {
		if e != 0 {
			return errRet(e)
		}
		fd, e := t.tg.fds.alloc(of, 0, fl&oCLOEXEC != 0)
		return retFD(fd, e)
	}
	t.tg.mu.Lock()
	perm := fs.FileMode(uint32(mode) & 0o7777 &^ t.tg.umask)
	t.tg.mu.Unlock()
	var hf *os.File
	if openMayBlock(fsys, name, hostFlags) {
		if hf, e = t.openFIFOWait(fsys, name, hostFlags, perm); e != 0 {
			return errRet(e)
		}
	} else {
		var err error
		if hf, err = fsys.open(name, hostFlags, perm); err != nil {
			if errnoOf(err) == ENOENT {
				// A symlink into uvm's /proc or /dev (synthViaLinks).
				if of, ok, e := t.openSynthVia(g, fl); ok {
					if e != 0 {
						return errRet(e)
					}
					fd, e := t.tg.fds.alloc(of, 0, fl&oCLOEXEC != 0)
					return retFD(fd, e)
				}
			}
			return errRet(errnoOf(err))
		}
	}
	if fl&oDIRECTORY != 0 {
		if fi, err := hf.Stat(); err != nil || !fi.IsDir() {
			hf.Close()
			return errRet(ENOTDIR)
		}
	}
	var ops fileOps = &hostFile{f: hf}
	if fifo := newHostFIFO(hf); fifo != nil {
		fifo.count(&t.tg.k.fifos, fl&oACCMODE != oRDONLY, t.tg.k.det != nil)
		ops = fifo
	}
	of := &openFile{ops: ops, path: g, flags: fl &^ oCLOEXEC}
	fd, e := t.tg.fds.alloc(of, 0, fl&oCLOEXEC != 0)
	if e != 0 {
		hf.Close()
	}
	return retFD(fd, e)
}

func (t *Task) sysRead(fd int32, buf, n uint64, off int64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok || f.flags&oACCMODE == oWRONLY {
		return errRet(EBADF)
	}
	data, e := t.readFile(f, n, off)
	if e != 0 {
		return errRet(e)
	}
	if t.tg.mm.WriteAt(data, buf) != nil {
		return errRet(EFAULT)
	}
	return uint64(len(data))
}

// readFile reads up to n bytes from f (at off when off >= 0).
func (t *Task) readFile(f *openFile, n uint64, off int64) ([]byte, Errno) {
	return f.ops.read(t, f, min(n, readMax), off)
}

// sysSendfile copies between descriptors inside the kernel.
func (t *Task) sysSendfile(outfd, infd int32, offAddr, count uint64) uint64 {
	in, ok := t.tg.fds.get(infd)
	out, ok2 := t.tg.fds.get(outfd)
	if !ok || !ok2 || in.flags&oACCMODE == oWRONLY || out.flags&oACCMODE == oRDONLY {
		return errRet(EBADF)
	}
	if e := t.sendfileSrcErr(in, offAddr != 0); e != 0 {
		return errRet(e)
	}
	off := int64(-1)
	if offAddr != 0 {
		v, e := t.getU64(offAddr)
		if e != 0 {
			return errRet(e)
		}
		off = int64(v)
	}
	data, e := t.readFile(in, min(count, 1<<20), off)
	if e != 0 {
		return errRet(e)
	}
	if len(data) == 0 {
		return 0
	}
	r := t.writeFile(out, data, -1)
	written := r
	if int64(r) < 0 {
		written = 0 // EAGAIN from a full socket, EPIPE …: nothing moved
	}
	if off >= 0 {
		if e := t.putU64(offAddr, uint64(off)+written); e != 0 {
			return errRet(e)
		}
	} else if h, isHost := in.hostOS(); isHost && written < uint64(len(data)) {
		// Give back what was read but not written: the input position
		// moves by what reached the output (a retry after EAGAIN then
		// sends the same bytes, as Linux's sendfile does).
		h.Seek(int64(written)-int64(len(data)), io.SeekCurrent)
	}
	return r
}

// maxRW is Linux's MAX_RW_COUNT: one read or write moves at most this
// many bytes (INT_MAX rounded down to a page).
const maxRW = 0x7ffff000

// rwChunk is the largest host buffer one step of a guest write uses; a
// bigger write goes through in chunks, so a guest length never sizes a
// host allocation.
const rwChunk = 1 << 20

func (t *Task) sysWrite(fd int32, buf, n uint64, off int64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok || f.flags&oACCMODE == oRDONLY {
		return errRet(EBADF)
	}
	if int64(n) < 0 {
		return errRet(EINVAL)
	}
	done, r := t.writeGuest(f, buf, min(n, maxRW), off)
	if done == 0 {
		return r
	}
	return done
}

// writeGuest writes n bytes of guest memory at buf to f in chunks of at
// most rwChunk, stopping at the first short write. It returns the bytes
// written and the result of the last step (an error return when nothing
// could be written).
func (t *Task) writeGuest(f *openFile, buf, n uint64, off int64) (done, last uint64) {
	if n == 0 {
		b, e := t.readBuf(buf, 0)
		if e != 0 {
			return 0, errRet(e)
		}
		return 0, t.writeFile(f, b, off)
	}
	for done < n {
		k := min(n-done, rwChunk)
		b, e := t.readBuf(buf+done, k)
		if e != 0 {
			// As Linux's copy from user: what is readable before the
			// fault is written; EFAULT only when nothing is.
			if b = t.readPrefix(buf+done, k); len(b) == 0 {
				return done, errRet(e)
			}
			k = uint64(len(b))
		}
		o := off
		if off >= 0 {
			o = off + int64(done)
		}
		r := t.writeFile(f, b, o)
		if int64(r) < 0 {
			return done, r
		}
		done += r
		if r < k {
			break
		}
	}
	return done, done
}

func (t *Task) writeFile(f *openFile, b []byte, off int64) uint64 {
	n, e := f.ops.write(t, f, b, off)
	if e != 0 {
		return errRet(e)
	}
	return n
}

// readPrefix reads the readable prefix of [addr, addr+n), page by page
// up to the first fault.
func (t *Task) readPrefix(addr, n uint64) []byte {
	var out []byte
	for n > 0 {
		k := min(n, vm.PageSize-addr&vm.PageMask)
		b := make([]byte, k)
		if t.tg.mm.ReadAt(b, addr) != nil {
			break
		}
		out = append(out, b...)
		addr += k
		n -= k
	}
	return out
}

// sysReadv implements readv/writev. A vector of at most rwChunk bytes is
// written as one buffer (so a pipe write of up to PIPE_BUF stays atomic);
// a bigger one segment by segment, in chunks.
// iovSeg is one struct iovec.
type iovSeg struct{ base, len uint64 }

// readIovec reads and checks cnt struct iovecs at iov as Linux's
// rw_copy_check_uvector: more than UIO_MAXIOV, a negative length or a sum
// that overflows ssize_t is EINVAL; the lengths are then capped so that
// they sum to at most MAX_RW_COUNT. It returns the segments and their sum.
func (t *Task) readIovec(iov, cnt uint64) ([]iovSeg, uint64, Errno) {
	const uioMaxIOV = 1024
	if cnt > uioMaxIOV {
		return nil, 0, EINVAL
	}
	raw, e := t.readBuf(iov, cnt*16)
	if e != 0 {
		return nil, 0, e
	}
	segs := make([]iovSeg, cnt)
	var total uint64
	for i := range segs {
		segs[i] = iovSeg{binary.LittleEndian.Uint64(raw[i*16:]), binary.LittleEndian.Uint64(raw[i*16+8:])}
		if int64(segs[i].len) < 0 || total+segs[i].len < total || int64(total+segs[i].len) < 0 {
			return nil, 0, EINVAL
		}
		if total+segs[i].len > maxRW {
			segs[i].len = maxRW - total
		}
		total += segs[i].len
	}
	return segs, total, 0
}

func (t *Task) sysReadv(fd int32, iov, cnt uint64, write bool) uint64 {
	segs, total, e := t.readIovec(iov, cnt)
	if e != 0 {
		return errRet(e)
	}
	f, ok := t.tg.fds.get(fd)
	if !ok || write && f.flags&oACCMODE == oRDONLY || !write && f.flags&oACCMODE == oWRONLY {
		return errRet(EBADF)
	}
	if write && total <= rwChunk {
		buf := make([]byte, 0, total)
		for _, s := range segs {
			b, e := t.readBuf(s.base, s.len)
			if e != 0 {
				return errRet(e)
			}
			buf = append(buf, b...)
		}
		return t.writeFile(f, buf, -1)
	}
	var done uint64
	for _, s := range segs {
		if s.len == 0 {
			continue
		}
		var r uint64
		if write {
			var n uint64
			n, r = t.writeGuest(f, s.base, s.len, -1)
			if n > 0 {
				r = n
			}
		} else {
			r = t.sysRead(fd, s.base, s.len, -1)
		}
		if int64(r) < 0 {
			if done > 0 {
				return done
			}
			return r
		}
		done += r
		if r < s.len {
			break
		}
	}
	return done
}

func (t *Task) sysLseek(fd int32, off int64, whence int) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	pos, e := f.ops.seek(t, f, off, whence)
	if e != 0 {
		return errRet(e)
	}
	return uint64(pos)
}

func (t *Task) statFile(f *openFile) (hostStat, Errno) { return f.ops.stat(t, f) }

func (t *Task) sysFstat(fd int32, buf uint64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	st, e := t.statFile(f)
	if e != 0 {
		return errRet(e)
	}
	return errOr0(t.writeBytes(buf, t.tg.arch.statLayout.encode(&st)))
}

func (t *Task) writeBytes(addr uint64, b []byte) Errno {
	if t.tg.mm.WriteAt(b, addr) != nil {
		return EFAULT
	}
	return 0
}

// statAt stats a path or, with AT_EMPTY_PATH and an empty path, dirfd.
func (t *Task) statAt(dirfd int32, pathAddr, flags uint64) (hostStat, Errno) {
	p, e := t.readPath(pathAddr)
	if e != 0 {
		return hostStat{}, e
	}
	if p == "" {
		if flags&atEmptyPath == 0 {
			return hostStat{}, ENOENT
		}
		f, ok := t.tg.fds.get(dirfd)
		if !ok && dirfd != atFDCWD {
			return hostStat{}, EBADF
		}
		if dirfd == atFDCWD {
			p = "."
		} else {
			return t.statFile(f)
		}
	}
	g, e := t.guestPath(dirfd, p)
	if e != 0 {
		return hostStat{}, e
	}
	// A trailing slash asks for a directory: the last component is
	// followed even with AT_SYMLINK_NOFOLLOW, and must be one (as
	// path_lookupat's LOOKUP_DIRECTORY).
	dirOnly := len(p) > 1 && strings.HasSuffix(p, "/")
	follow := flags&atSymlinkNofollow == 0 || dirOnly
	pa := pathArg{dirfd, p}
	if g, pa, e = t.procFollowAt(g, pa, follow); e != 0 {
		return hostStat{}, e
	}
	if st, ok, e := t.procStatAt(g, follow); ok {
		if e == 0 && dirOnly && st.mode&sIFMT != sIFDIR {
			e = ENOTDIR
		}
		return st, e
	}
	if st, ok := t.devStat(g); ok {
		return st, 0
	}
	fsys, name := t.lookupAt(g, pa)
	var fi fs.FileInfo
	var err error
	if flags&atSymlinkNofollow != 0 && !dirOnly {
		fi, err = fsys.lstat(name)
	} else {
		fi, err = fsys.stat(name)
	}
	if err != nil {
		if errnoOf(err) == ENOENT {
			if st, ok, e := t.statSynthVia(g, follow); ok {
				if e == 0 && dirOnly && st.mode&sIFMT != sIFDIR {
					e = ENOTDIR
				}
				return st, e
			}
		}
		return hostStat{}, errnoOf(err)
	}
	if dirOnly && !fi.IsDir() {
		return hostStat{}, ENOTDIR
	}
	st := statFromInfo(fi)
	t.tg.k.virtualize(&st, g)
	return st, 0
}

// openSynthVia opens what guest path g leads to through symlinks into
// uvm's /proc or /dev (synthViaLinks) after the host found nothing
// there; ok=false: g leads to neither.
func (t *Task) openSynthVia(g string, fl int) (*openFile, bool, Errno) {
	n, ok := t.synthViaLinks(g, fl&oNOFOLLOW == 0)
	if !ok {
		return nil, false, 0
	}
	n, _, e := t.procFollowAt(n, pathArg{atFDCWD, n}, fl&oNOFOLLOW == 0)
	if e != 0 {
		return nil, true, e
	}
	if of, ok, e := t.procOpenAt(n, fl); ok {
		return of, true, e
	}
	return t.devOpen(n, fl)
}

// statSynthVia is statAt's openSynthVia.
func (t *Task) statSynthVia(g string, follow bool) (hostStat, bool, Errno) {
	n, ok := t.synthViaLinks(g, follow)
	if !ok {
		return hostStat{}, false, 0
	}
	n, _, e := t.procFollowAt(n, pathArg{atFDCWD, n}, follow)
	if e != 0 {
		return hostStat{}, true, e
	}
	if st, ok, e := t.procStatAt(n, follow); ok {
		return st, true, e
	}
	st, ok := t.devStat(n)
	return st, ok, 0
}

func (t *Task) sysFstatat(dirfd int32, pathAddr, buf, flags uint64) uint64 {
	st, e := t.statAt(dirfd, pathAddr, flags)
	if e != 0 {
		return errRet(e)
	}
	return errOr0(t.writeBytes(buf, t.tg.arch.statLayout.encode(&st)))
}

func (t *Task) sysStatx(dirfd int32, pathAddr, flags, buf uint64) uint64 {
	st, e := t.statAt(dirfd, pathAddr, flags)
	if e != 0 {
		return errRet(e)
	}
	return errOr0(t.writeBytes(buf, encodeStatx(&st)))
}

// Linux dirent types.
const (
	dtUnknown = 0
	dtFIFO    = 1
	dtChr     = 2
	dtDir     = 4
	dtBlk     = 6
	dtReg     = 8
	dtLnk     = 10
	dtSock    = 12
)

func direntType(m fs.FileMode) uint8 {
	switch {
	case m.IsDir():
		return dtDir
	case m&fs.ModeSymlink != 0:
		return dtLnk
	case m&fs.ModeNamedPipe != 0:
		return dtFIFO
	case m&fs.ModeSocket != 0:
		return dtSock
	case m&fs.ModeCharDevice != 0:
		return dtChr
	case m&fs.ModeDevice != 0:
		return dtBlk
	case m.IsRegular():
		return dtReg
	}
	return dtUnknown
}

// sysGetdents64 lists a directory. Entries come in name order ("." and
// ".." first), which makes listings stable across hosts and runs.
func (t *Task) sysGetdents64(fd int32, buf, n uint64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dirents == nil {
		list, e := f.ops.readdir(t, f)
		if e != 0 {
			return errRet(e)
		}
		f.dirents = list
	}
	var out []byte
	for f.direntPos < len(f.dirents) {
		d := f.dirents[f.direntPos]
		reclen := (19 + len(d.name) + 1 + 7) &^ 7
		if uint64(len(out)+reclen) > n {
			if len(out) == 0 {
				return errRet(EINVAL)
			}
			break
		}
		rec := make([]byte, reclen)
		binary.LittleEndian.PutUint64(rec[0:], d.ino)
		binary.LittleEndian.PutUint64(rec[8:], uint64(f.direntPos+1))
		binary.LittleEndian.PutUint16(rec[16:], uint16(reclen))
		rec[18] = d.typ
		copy(rec[19:], d.name)
		out = append(out, rec...)
		f.direntPos++
	}
	if e := t.writeBytes(buf, out); e != 0 {
		return errRet(e)
	}
	return uint64(len(out))
}

func (t *Task) sysReadlinkat(dirfd int32, pathAddr, buf, n uint64) uint64 {
	g, pa, e := t.resolveAt(dirfd, pathAddr)
	if e != 0 {
		return errRet(e)
	}
	target, ok, e := t.procReadlink(g)
	if ok && e != 0 {
		return errRet(e)
	}
	if !ok {
		var err error
		fsys, name := t.lookupAt(g, pa)
		target, err = fsys.readlink(name)
		if err != nil {
			// A link inside uvm's /proc reached through a symlink
			// (synthViaLinks; readlink follows all but the last).
			via, viaOK := "", false
			if errnoOf(err) == ENOENT {
				via, viaOK = t.synthViaLinks(g, false)
			}
			if !viaOK {
				return errRet(errnoOf(err))
			}
			if target, ok, e = t.procReadlink(via); !ok {
				return errRet(errnoOf(err))
			} else if e != 0 {
				return errRet(e)
			}
		}
	}
	if int(n) <= 0 {
		return errRet(EINVAL)
	}
	b := []byte(target)
	if uint64(len(b)) > n {
		b = b[:n]
	}
	if e := t.writeBytes(buf, b); e != 0 {
		return errRet(e)
	}
	return uint64(len(b))
}

// fcntl commands.
const (
	fDUPFD         = 0
	fGETFD         = 1
	fSETFD         = 2
	fGETFL         = 3
	fSETFL         = 4
	fGETLK         = 5
	fSETLK         = 6
	fSETLKW        = 7
	fDUPFD_CLOEXEC = 1030
)

func (t *Task) sysFcntl(fd int32, cmd, arg uint64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	switch cmd {
	case fDUPFD, fDUPFD_CLOEXEC:
		nfd, e := t.tg.fds.alloc(f, int32(arg), cmd == fDUPFD_CLOEXEC)
		return retFD(nfd, e)
	case fGETFD:
		if t.tg.fds.cloexec(fd) {
			return 1
		}
		return 0
	case fSETFD:
		return errOr0(t.tg.fds.setCloexec(fd, arg&1 != 0))
	case fGETFL:
		fl := f.flags
		if t.tg.arch.openFlagBits.directory != oDIRECTORY {
			// The internal x86-64 bits would read as other flags here.
			fl &^= oDIRECTORY | oNOFOLLOW
		}
		return uint64(fl)
	case fSETFL:
		const settable = oAPPEND | oNONBLOCK
		f.flags = f.flags&^settable | int(arg)&settable
		return 0
	case fGETLK, fSETLK, fSETLKW, fOFD_GETLK, fOFD_SETLK, fOFD_SETLKW:
		return t.sysFcntlLock(f, cmd, arg)
	}
	return errRet(EINVAL)
}

// ioctl requests uvm knows.
const (
	ioTCGETS     = 0x5401
	ioTIOCGWINSZ = 0x5413
	ioTIOCGPGRP  = 0x540f
	ioFIONBIO    = 0x5421
	ioFIONCLEX   = 0x5450
	ioFIOCLEX    = 0x5451
)

// sysIoctl: every guest fd is a non-terminal as far as uvm reports (guest
// output is not a tty, so stdio buffering matches a redirected run).
func (t *Task) sysIoctl(fd int32, req, arg uint64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	switch req & 0xffffffff {
	case ioTCGETS, ioTIOCGWINSZ, ioTIOCGPGRP:
		return errRet(ENOTTY)
	case ioFIONBIO:
		v, err := t.readBuf(arg, 4)
		if err != 0 {
			return errRet(err)
		}
		if binary.LittleEndian.Uint32(v) != 0 {
			f.flags |= oNONBLOCK
		} else {
			f.flags &^= oNONBLOCK
		}
		return 0
	case ioFIOCLEX:
		return errOr0(t.tg.fds.setCloexec(fd, true))
	case ioFIONCLEX:
		return errOr0(t.tg.fds.setCloexec(fd, false))
	}
	if k, ok := f.ops.(ioctler); ok { // the file kind's own requests (sockets, pipes)
		if r, handled := k.ioctl(t, f, req, arg); handled {
			return r
		}
	}
	name := "ioctl 0x" + hexString(req)
	if t.tg.k.noteUnimplemented(name) {
		t.tg.k.logf("unimplemented %s on fd %d at pc 0x%x", name, fd, t.cpu.PC())
	}
	return errRet(ENOTTY)
}

func hexString(v uint64) string {
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0"
	}
	var b [16]byte
	n := len(b)
	for v > 0 {
		n--
		b[n] = digits[v&15]
		v >>= 4
	}
	return string(b[n:])
}

func (t *Task) sysPipe2(fdsAddr, flags uint64) uint64 {
	if flags&^(oCLOEXEC|oNONBLOCK|0o40000) != 0 {
		return errRet(EINVAL)
	}
	p := newPipe()
	cloexec := flags&oCLOEXEC != 0
	nb := int(flags & oNONBLOCK)
	rf := &openFile{ops: &pipeEnd{p: p}, path: "pipe:[r]", flags: oRDONLY | nb}
	wf := &openFile{ops: &pipeEnd{p: p, isWrite: true}, path: "pipe:[w]", flags: oWRONLY | nb}
	rfd, e := t.tg.fds.alloc(rf, 0, cloexec)
	if e != 0 {
		return errRet(e)
	}
	wfd, e := t.tg.fds.alloc(wf, 0, cloexec)
	if e != 0 {
		t.tg.fds.close(rfd)
		return errRet(e)
	}
	var b [8]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(rfd))
	binary.LittleEndian.PutUint32(b[4:], uint32(wfd))
	if e := t.writeBytes(fdsAddr, b[:]); e != 0 {
		t.tg.fds.close(rfd)
		t.tg.fds.close(wfd)
		return errRet(e)
	}
	return 0
}

// lastIsDot reports whether the path at addr ends in "." or ".." (after
// trailing slashes): Linux's LAST_DOT/LAST_DOTDOT, which unlink, rmdir
// and rename refuse. The lexically cleaned guest path no longer shows it
// ("d/." is "d"), so it is read from the argument itself.
// A name whose directory does not exist is ENOENT first, as the parent's
// lookup fails before the last component is looked at.
func (t *Task) lastIsDot(dirfd int32, addr uint64) (dot, dotdot bool, e Errno) {
	p, e := t.readPath(addr)
	if e != 0 {
		return false, false, e
	}
	p = strings.TrimRight(p, "/")
	i := strings.LastIndexByte(p, '/')
	last := p[i+1:]
	if last != "." && last != ".." {
		return false, false, 0
	}
	if i > 0 {
		g, e := t.guestPath(dirfd, p[:i])
		if e != 0 {
			return false, false, e
		}
		fsys, name := t.lookupAt(g, pathArg{dirfd, p[:i]})
		if _, err := fsys.stat(name); err != nil {
			return false, false, errnoOf(err)
		}
	}
	return last == ".", last == "..", 0
}

func (t *Task) sysUnlinkat(dirfd int32, pathAddr, flags uint64) uint64 {
	g, pa, e := t.resolveAt(dirfd, pathAddr)
	if e != 0 {
		return errRet(e)
	}
	if dot, dotdot, e := t.lastIsDot(dirfd, pathAddr); e != 0 || dot || dotdot {
		switch {
		case e != 0:
			return errRet(e)
		case flags&atRemoveDir == 0:
			return errRet(EISDIR)
		case dot:
			return errRet(EINVAL)
		default:
			return errRet(ENOTEMPTY)
		}
	}
	fsys, name := t.lookupAt(g, pa)
	fi, err := fsys.lstat(name)
	if err != nil {
		return errRet(errnoOf(err))
	}
	if flags&atRemoveDir != 0 {
		if !fi.IsDir() {
			return errRet(ENOTDIR)
		}
		return errOr0(errnoOf(fsys.rmdir(name)))
	}
	if fi.IsDir() {
		return errRet(EISDIR)
	}
	return errOr0(errnoOf(fsys.unlink(name)))
}

func (t *Task) sysMkdirat(dirfd int32, pathAddr, mode uint64) uint64 {
	g, pa, e := t.resolveAt(dirfd, pathAddr)
	if e != 0 {
		return errRet(e)
	}
	t.tg.mu.Lock()
	// mode & (S_IRWXUGO|S_ISVTX) & ~umask, as vfs_mkdir keeps the
	// sticky bit.
	perm := fs.FileMode(uint32(mode) & 0o777 &^ t.tg.umask)
	t.tg.mu.Unlock()
	if mode&0o1000 != 0 {
		perm |= fs.ModeSticky
	}
	fsys, name := t.lookupAt(g, pa)
	return errOr0(errnoOf(fsys.mkdir(name, perm)))
}

// twoPaths resolves the two path arguments of rename and link; both must
// be in the same file system (EXDEV otherwise).
func (t *Task) twoPaths(oldfd int32, oldAddr uint64, newfd int32, newAddr uint64) (fsys vfs, o, n string, e Errno) {
	og, opa, e := t.resolveAt(oldfd, oldAddr)
	if e != 0 {
		return nil, "", "", e
	}
	ng, npa, e := t.resolveAt(newfd, newAddr)
	if e != 0 {
		return nil, "", "", e
	}
	ofs, o := t.lookupAt(og, opa)
	nfs, n := t.lookupAt(ng, npa)
	if two, ok := pairVFS(ofs, nfs); ok {
		return two, o, n, 0
	}
	if ofs != nfs {
		return nil, "", "", EXDEV
	}
	return ofs, o, n, 0
}

func (t *Task) sysRenameat(oldfd int32, oldAddr uint64, newfd int32, newAddr uint64) uint64 {
	fsys, o, n, e := t.twoPaths(oldfd, oldAddr, newfd, newAddr)
	if e != 0 {
		return errRet(e)
	}
	d1, dd1, e1 := t.lastIsDot(oldfd, oldAddr)
	d2, dd2, e2 := t.lastIsDot(newfd, newAddr)
	switch {
	case e1 != 0:
		return errRet(e1)
	case e2 != 0:
		return errRet(e2)
	case d1 || dd1 || d2 || dd2:
		return errRet(EBUSY)
	}
	return errOr0(errnoOf(fsys.rename(o, n)))
}

func (t *Task) sysGetcwd(buf, size uint64) uint64 {
	cwd, e := t.cwdPath()
	if e != 0 {
		return errRet(e)
	}
	b := append([]byte(cwd), 0)
	if uint64(len(b)) > size {
		return errRet(ERANGE)
	}
	if e := t.writeBytes(buf, b); e != 0 {
		return errRet(e)
	}
	return uint64(len(b))
}

// procChdir is chdir into a synthetic /proc directory (after its magic
// links are followed): the cwd is the guest path alone, with no host
// anchor. ok is false for names outside the synthetic /proc.
func (t *Task) procChdir(g string) (ret uint64, ok bool) {
	st, ok, e := t.procStatAt(g, true)
	if !ok {
		return 0, false
	}
	if e == 0 && st.mode&sIFMT != sIFDIR {
		e = ENOTDIR
	}
	if e != 0 {
		return errRet(e), true
	}
	t.tg.mu.Lock()
	t.tg.cwd, t.tg.cwdDir = g, nil
	t.tg.mu.Unlock()
	return 0, true
}

func (t *Task) sysChdir(pathAddr uint64) uint64 {
	g, pa, e := t.resolveAt(atFDCWD, pathAddr)
	if e != 0 {
		return errRet(e)
	}
	if g, pa, e = t.procFollowAt(g, pa, true); e != 0 {
		return errRet(e)
	}
	if r, ok := t.procChdir(g); ok {
		return r
	}
	fsys, name := t.lookupAt(g, pa)
	return t.chdirAt(fsys, name, g)
}

func (t *Task) sysFchdir(fd int32) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	if h, ok := f.hostOS(); ok && anchorInRoot(t.tg.k.fs, h) {
		if fsys, ok := anchorVFS(t.tg.k.fs, h, f.path); ok {
			return t.chdirAt(fsys, ".", f.path)
		}
	}
	if r, ok := t.procChdir(f.path); ok {
		return r
	}
	if raw, ok := t.mountArg(t.tg.k.fs, pathArg{fd, "."}); ok {
		return t.chdirAt(t.tg.k.fs, raw, f.path)
	}
	fsys, name := t.lookup(f.path)
	return t.chdirAt(fsys, name, f.path)
}

func (t *Task) sysFchmod(fd int32, mode uint64) uint64 {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	h, isHost := f.hostOS()
	if !isHost {
		return errRet(EBADF)
	}
	if readOnlyFile(t.tg.k.fs, h, f.path) {
		return errRet(EROFS)
	}
	return errOr0(errnoOf(h.Chmod(fs.FileMode(mode & 0o777))))
}

func (t *Task) sysCloseRange(first, last uint32, flags uint64) uint64 {
	if first > last {
		return errRet(EINVAL)
	}
	const closeRangeCloexec = 4
	for fd := first; fd <= last && fd < uint32(t.tg.fds.max()); fd++ {
		if flags&closeRangeCloexec != 0 {
			t.tg.fds.setCloexec(int32(fd), true)
		} else {
			t.tg.fds.close(int32(fd))
		}
	}
	return 0
}

// pollReady is the readiness of f for the requested events.
func pollReady(f *openFile, events uint16) uint16 { return f.ops.poll(events) }

// poll events.
const (
	pollIN   = 0x1
	pollOUT  = 0x4
	pollHUP  = 0x10
	pollNVAL = 0x20
)

func (t *Task) sysLinkat(oldfd int32, oldAddr uint64, newfd int32, newAddr, flags uint64) uint64 {
	if flags&^uint64(0x400|atEmptyPath) != 0 { // AT_SYMLINK_FOLLOW, AT_EMPTY_PATH
		return errRet(EINVAL)
	}
	fsys, o, n, e := t.twoPaths(oldfd, oldAddr, newfd, newAddr)
	if e != 0 {
		return errRet(e)
	}
	return errOr0(errnoOf(fsys.link(o, n)))
}

func (t *Task) sysSymlinkat(targetAddr uint64, newfd int32, newAddr uint64) uint64 {
	target, e := t.readPath(targetAddr)
	if e != 0 {
		return errRet(e)
	}
	ng, npa, e := t.resolveAt(newfd, newAddr)
	if e != 0 {
		return errRet(e)
	}
	fsys, name := t.lookupAt(ng, npa)
	return errOr0(errnoOf(fsys.symlink(target, name)))
}
