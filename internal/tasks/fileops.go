package tasks

import (
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"sync"
)

// fileOps is what an open file description does, as Linux's
// file_operations: one implementation per kind of file (a host file or
// directory, a pipe end, an eventfd, an epoll instance, a synthetic /proc
// file, the host's stdin/stdout). Adding a kind of file is adding one
// type. Kinds embed fileBase, which answers every operation with the errno
// Linux gives for a file that lacks it.
//
// Methods are called without any fdTable lock held; f is the open file
// the operation is on (for its flags, position and directory state).
type fileOps interface {
	// read returns up to n bytes (n ≤ readMax) from offset off, or from
	// the file position when off < 0, blocking through t.wait when the
	// file is empty and not O_NONBLOCK.
	read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno)
	// write writes b at off (off < 0: at the file position) and returns
	// the count written.
	write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno)
	// seek is lseek; it returns the new position.
	seek(t *Task, f *openFile, off int64, whence int) (int64, Errno)
	// stat is fstat.
	stat(t *Task, f *openFile) (hostStat, Errno)
	// readdir lists a directory (getdents64), "." and ".." first.
	readdir(t *Task, f *openFile) ([]dirent, Errno)
	// poll returns the ready events of events (poll(2) bits).
	poll(events uint16) uint16
	// release runs when the last descriptor of the file is closed.
	release()
}

// readMax is the most one read asks of a file (the host buffer it sizes).
const readMax = 1 << 24

// fileBase is the behaviour of an operation a kind does not have.
type fileBase struct{}

func (fileBase) read(*Task, *openFile, uint64, int64) ([]byte, Errno)  { return nil, EINVAL }
func (fileBase) write(*Task, *openFile, []byte, int64) (uint64, Errno) { return 0, EINVAL }
func (fileBase) seek(*Task, *openFile, int64, int) (int64, Errno)      { return 0, ESPIPE }
func (fileBase) readdir(*Task, *openFile) ([]dirent, Errno)            { return nil, ENOTDIR }
func (fileBase) poll(events uint16) uint16                             { return events & (pollIN | pollOUT) }
func (fileBase) release()                                              {}
func (fileBase) stat(t *Task, _ *openFile) (hostStat, Errno) {
	return t.anonStat(0o600), 0
}

// anonStat is the stat of an in-kernel object with the given mode bits.
func (t *Task) anonStat(mode uint32) hostStat {
	return hostStat{mode: mode, nlink: 1, blksize: 4096, uid: t.tg.k.uid(), gid: t.tg.k.gid()}
}

// hostFile is a host file, directory or device opened by path.
type hostFile struct {
	fileBase
	f *os.File
}

func (h *hostFile) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if off < 0 && t.tg.k.stdio.in != nil && t.tg.k.isStdin(h.f) { // debug_reverse.go
		return t.tg.k.stdinRead(func() ([]byte, Errno) { return h.readHost(t, f, n, off) })
	}
	return h.readHost(t, f, n, off)
}

func (h *hostFile) readHost(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if fi, err := h.f.Stat(); err == nil && fi.IsDir() {
		return nil, EISDIR
	}
	b := make([]byte, n)
	var got int
	var err error
	if off >= 0 {
		got, err = h.f.ReadAt(b, off)
	} else {
		got, err = h.f.Read(b)
	}
	if err != nil && err != io.EOF && got == 0 {
		return nil, errnoOf(err)
	}
	return b[:got], 0
}

func (h *hostFile) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if skip := t.tg.k.stdioMuted(h.f, b); skip > 0 { // debug_reverse.go
		var n uint64
		if skip < len(b) {
			n, _ = h.writeHost(t, f, b[skip:], off) // the run wrote the whole of b
		}
		return uint64(skip) + n, 0
	}
	return h.writeHost(t, f, b, off)
}

func (h *hostFile) writeHost(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if t.tg.rlimit(rlimitFsize) != rlimInfinity {
		pos := off
		if pos < 0 {
			if f.flags&oAPPEND != 0 {
				pos, _ = h.f.Seek(0, io.SeekEnd)
			} else {
				pos, _ = h.f.Seek(0, io.SeekCurrent)
			}
		}
		if fi, err := h.f.Stat(); err == nil && fi.Mode().IsRegular() {
			n, e := t.checkFsize(pos, uint64(len(b)))
			if e != 0 {
				return 0, e
			}
			b = b[:n]
		}
	}
	var got int
	var err error
	if off >= 0 {
		got, err = h.f.WriteAt(b, off)
	} else {
		got, err = h.f.Write(b)
	}
	if err != nil && got == 0 {
		return 0, errnoOf(err)
	}
	return uint64(got), 0
}

func (h *hostFile) seek(t *Task, f *openFile, off int64, whence int) (int64, Errno) {
	if whence > 2 || whence < 0 {
		return 0, EINVAL
	}
	if fi, err := h.f.Stat(); err == nil {
		if fi.Mode()&fs.ModeNamedPipe != 0 {
			return 0, ESPIPE
		}
		if fi.IsDir() {
			return f.seekDir(off, whence)
		}
	}
	pos, err := h.f.Seek(off, whence)
	if err != nil {
		return 0, errnoOf(err)
	}
	return pos, 0
}

func (h *hostFile) stat(t *Task, f *openFile) (hostStat, Errno) {
	fi, err := h.f.Stat()
	if err != nil {
		return hostStat{}, errnoOf(err)
	}
	st := statFromInfo(fi)
	t.tg.k.virtualize(&st, f.path)
	return st, 0
}

// readdir lists the host directory in name order (stable across hosts and
// runs), with virtual inode numbers in deterministic mode.
func (h *hostFile) readdir(t *Task, f *openFile) ([]dirent, Errno) {
	fi, err := h.f.Stat()
	if err != nil || !fi.IsDir() {
		return nil, ENOTDIR
	}
	// The listing comes from the open descriptor itself, never from its
	// path again (which may have been renamed or swapped since).
	if _, err := h.f.Seek(0, io.SeekStart); err != nil {
		return nil, errnoOf(err)
	}
	ents, err := h.f.ReadDir(-1)
	if err != nil {
		return nil, errnoOf(err)
	}
	self := statFromInfo(fi)
	list := []dirent{{".", self.ino, dtDir}}
	parent := self.ino
	if f.path != "/" {
		// From the descriptor, as every entry's below: the path may
		// name another directory by now, or be longer than PATH_MAX.
		if ino, ok := inoAt(h.f, "..", true); ok {
			parent = ino
		} else {
			pfs, pname := t.lookup(path.Dir(f.path))
			if pfi, err := pfs.stat(pname); err == nil {
				parent = statFromInfo(pfi).ino
			}
		}
	}
	if t.tg.k.det != nil {
		list[0].ino, parent = pathInode(f.path), pathInode(path.Dir(f.path))
	}
	list = append(list, dirent{"..", parent, dtDir})
	efs, _ := t.lookup(f.path)
	_, unconfined := efs.(hostVFS)
	for _, e := range ents {
		// The descriptor's own entry: the path may name another
		// directory by now, or be longer than PATH_MAX.
		ino, ok := inoAt(h.f, e.Name(), false)
		if !ok && unconfined {
			if info, err := e.Info(); err == nil {
				ino = statFromInfo(info).ino
			}
		} else if !ok {
			if info, err := efs.lstat(path.Join(f.path, e.Name())); err == nil {
				ino = statFromInfo(info).ino
			}
		}
		if t.tg.k.det != nil {
			ino = pathInode(path.Join(f.path, e.Name()))
		}
		list = append(list, dirent{e.Name(), ino, direntType(e.Type())})
	}
	sort.SliceStable(list[2:], func(i, j int) bool { return list[2+i].name < list[2+j].name })
	return list, 0
}

func (h *hostFile) release() {
	if h.f.Fd() > 2 {
		h.f.Close()
	}
}

// readerFile is guest stdin backed by a host io.Reader (not a file).
type readerFile struct {
	fileBase
	r io.Reader
}

func (r *readerFile) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if off >= 0 {
		return nil, ESPIPE
	}
	if t.tg.k.stdio.in != nil && t.tg.k.isStdin(r.r) { // debug_reverse.go
		return t.tg.k.stdinRead(func() ([]byte, Errno) { return r.readHost(n) })
	}
	return r.readHost(n)
}

func (r *readerFile) readHost(n uint64) ([]byte, Errno) {
	b := make([]byte, n)
	got, err := r.r.Read(b)
	if err != nil && err != io.EOF && got == 0 {
		return nil, errnoOf(err)
	}
	return b[:got], 0
}

func (*readerFile) write(*Task, *openFile, []byte, int64) (uint64, Errno) { return 0, EBADF }

// stat: a host reader looks like a pipe.
func (*readerFile) stat(t *Task, _ *openFile) (hostStat, Errno) { return t.anonStat(sIFIFO | 0o600), 0 }

// writerFile is guest stdout/stderr backed by a host io.Writer.
type writerFile struct {
	fileBase
	w io.Writer
}

func (*writerFile) read(*Task, *openFile, uint64, int64) ([]byte, Errno) { return nil, EBADF }

func (w *writerFile) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if off >= 0 {
		return 0, ESPIPE
	}
	skip := t.tg.k.stdioMuted(w.w, b) // debug_reverse.go
	if skip == len(b) {
		return uint64(skip), 0
	}
	got, err := w.w.Write(b[skip:])
	got += skip
	if err != nil && got == 0 {
		return 0, errnoOf(err)
	}
	return uint64(got), 0
}

func (*writerFile) stat(t *Task, _ *openFile) (hostStat, Errno) { return t.anonStat(sIFIFO | 0o600), 0 }

// memFile is a read-only in-memory file: a synthetic /proc file generated
// at open time.
type memFile struct {
	fileBase
	// mu protects pos.
	mu   sync.Mutex
	data []byte
	pos  int64
}

func (m *memFile) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pos := m.pos
	if off >= 0 {
		pos = off
	}
	if pos >= int64(len(m.data)) {
		return nil, 0
	}
	out := append([]byte(nil), m.data[pos:min(int64(len(m.data)), pos+int64(n))]...)
	if off < 0 {
		m.pos += int64(len(out))
	}
	return out, 0
}

func (*memFile) write(*Task, *openFile, []byte, int64) (uint64, Errno) { return 0, EBADF }

func (m *memFile) seek(t *Task, f *openFile, off int64, whence int) (int64, Errno) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var base int64
	switch whence {
	case 0:
	case 1:
		base = m.pos
	case 2:
		base = int64(len(m.data))
	default:
		return 0, EINVAL
	}
	if base+off < 0 {
		return 0, EINVAL
	}
	m.pos = base + off
	return m.pos, 0
}

func (*memFile) stat(t *Task, _ *openFile) (hostStat, Errno) {
	st := t.anonStat(sIFREG | 0o444)
	st.blksize = 1024
	return st, 0
}

// pipeEnd is one end of an in-kernel pipe.
type pipeEnd struct {
	fileBase
	p       *pipe
	isWrite bool
}

func (e *pipeEnd) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if off >= 0 {
		return nil, ESPIPE
	}
	return e.p.read(t, n, f.flags&oNONBLOCK != 0)
}

func (e *pipeEnd) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if off >= 0 {
		return 0, ESPIPE
	}
	n, errno := e.p.write(t, b, f.flags&oNONBLOCK != 0)
	return uint64(n), errno
}

func (*pipeEnd) stat(t *Task, _ *openFile) (hostStat, Errno) { return t.anonStat(sIFIFO | 0o600), 0 }

func (e *pipeEnd) poll(events uint16) uint16 {
	var rev uint16
	if !e.isWrite && e.p.readable() {
		rev |= pollIN
		e.p.mu.Lock()
		if len(e.p.buf) == 0 && e.p.writers == 0 {
			rev |= pollHUP
		}
		e.p.mu.Unlock()
	}
	if e.isWrite && e.p.writable() {
		rev |= pollOUT
	}
	return rev & (events | pollHUP)
}

func (e *pipeEnd) release() { e.p.closeEnd(e.isWrite) }

// seekDir is lseek on a directory: SEEK_SET to an entry index (0 lists
// the directory afresh).
func (f *openFile) seekDir(off int64, whence int) (int64, Errno) {
	if whence != 0 || off < 0 {
		return 0, EINVAL
	}
	f.mu.Lock()
	f.direntPos = int(off)
	if off == 0 {
		f.dirents = nil
	}
	f.mu.Unlock()
	return off, 0
}
