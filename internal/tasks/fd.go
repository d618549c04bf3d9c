package tasks

import (
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
)

// openFile is an open file description (Linux's struct file), shared by
// dup'ed descriptors and across fork. What it does is its ops (one type
// per kind of file, see fileops.go); what every kind has is here.
type openFile struct {
	ops   fileOps
	path  string // guest-visible path (for /proc/self/fd and messages)
	flags int    // O_ACCMODE | O_APPEND | O_NONBLOCK …
	// flockKey is the file's flock(2) lock, if held (Kernel.flocks.mu).
	flockKey *flockKey
	// plockKey is the inode of the record locks taken through the file
	// (file_lock_posix.go), once one was.
	plockKey atomic.Pointer[flockKey]
	// mu protects dirents and direntPos (getdents64 state of a
	// directory: the listing taken at the first getdents and the index
	// of the next entry).
	mu        sync.Mutex
	dirents   []dirent
	direntPos int
	// refs counts descriptors (in all fd tables) that refer to the file.
	refs atomic.Int32
}

// hostOS returns the host file behind f, if it is one.
func (f *openFile) hostOS() (*os.File, bool) {
	switch h := f.ops.(type) {
	case *hostFile:
		return h.f, true
	case *hostFIFO:
		return h.f, true
	}
	return nil, false
}

type dirent struct {
	name string
	ino  uint64
	typ  uint8 // DT_*
}

// fdTable is a thread group's descriptor table (files_struct).
type fdTable struct {
	// mu protects fds.
	mu  sync.Mutex
	fds map[int32]fdEntry
	k   *Kernel
	// limit is the descriptor limit (0: the default 1024); atomic.
	limit atomic.Int32
}

type fdEntry struct {
	f       *openFile
	cloexec bool
}

func newFDTable(k *Kernel) *fdTable {
	t := &fdTable{fds: map[int32]fdEntry{}, k: k}
	if f, ok := k.opts.Stdin.(*os.File); ok {
		t.install(0, &openFile{ops: &hostFile{f: f}, path: "/dev/stdin", flags: oRDONLY}, false)
	} else {
		t.install(0, &openFile{ops: &readerFile{r: k.opts.Stdin}, path: "/dev/stdin", flags: oRDONLY}, false)
	}
	t.install(1, stdioWriter(k.opts.Stdout, "/dev/stdout"), false)
	t.install(2, stdioWriter(k.opts.Stderr, "/dev/stderr"), false)
	if k.stdioFiles[0] == nil {
		for i := range k.stdioFiles {
			k.stdioFiles[i] = t.fds[int32(i)].f
		}
	}
	return t
}

func stdioWriter(w io.Writer, name string) *openFile {
	if f, ok := w.(*os.File); ok {
		return &openFile{ops: &hostFile{f: f}, path: name, flags: oWRONLY}
	}
	return &openFile{ops: &writerFile{w: w}, path: name, flags: oWRONLY}
}

func (t *fdTable) install(fd int32, f *openFile, cloexec bool) {
	t.fds[fd] = fdEntry{f: f, cloexec: cloexec}
	f.refs.Add(1)
}

// get returns the file for fd.
func (t *fdTable) get(fd int32) (*openFile, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.fds[fd]
	return e.f, ok
}

// maxFDs bounds descriptor numbers everywhere (the hard cap of
// RLIMIT_NOFILE; the table's own limit is the soft limit).
const maxFDs = fdHardCap

// setLimit sets the descriptor limit (RLIMIT_NOFILE's soft limit).
func (t *fdTable) setLimit(n uint64) {
	t.limit.Store(int32(min(n, maxFDs)))
}

// max returns the first descriptor number the table may not use.
func (t *fdTable) max() int32 {
	if n := t.limit.Load(); n > 0 {
		return n
	}
	return 1024
}

// hasFree reports whether alloc would find a descriptor now.
func (t *fdTable) hasFree() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.fds) < int(t.max())
}

// alloc installs f at the lowest free descriptor ≥ min.
func (t *fdTable) alloc(f *openFile, min int32, cloexec bool) (int32, Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.fds) >= int(t.max()) {
		return -1, EMFILE
	}
	for fd := min; fd < t.max(); fd++ {
		if _, used := t.fds[fd]; !used {
			t.install(fd, f, cloexec)
			return fd, 0
		}
	}
	return -1, EMFILE
}

// dupTo makes newfd refer to oldfd's file (dup2/dup3).
func (t *fdTable) dupTo(oldfd, newfd int32, cloexec bool) Errno {
	if newfd < 0 || newfd >= t.max() {
		return EBADF
	}
	t.mu.Lock()
	e, ok := t.fds[oldfd]
	if !ok {
		t.mu.Unlock()
		return EBADF
	}
	old, had := t.fds[newfd]
	if had {
		delete(t.fds, newfd)
	}
	t.install(newfd, e.f, cloexec)
	t.mu.Unlock()
	if had {
		t.k.closedBy(t, old.f)
		t.release(old.f)
	}
	return 0
}

// close removes fd.
func (t *fdTable) close(fd int32) Errno {
	t.mu.Lock()
	e, ok := t.fds[fd]
	if ok {
		delete(t.fds, fd)
	}
	t.mu.Unlock()
	if !ok {
		return EBADF
	}
	t.k.closedBy(t, e.f)
	t.release(e.f)
	return 0
}

func (t *fdTable) release(f *openFile) {
	if f.refs.Add(-1) != 0 {
		return
	}
	t.k.flocks.unlock(f)
	t.k.plocks.removeOwner(f, nil)
	f.ops.release()
}

// fork copies the table for a child process (the files are shared).
func (t *fdTable) fork() *fdTable {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &fdTable{fds: make(map[int32]fdEntry, len(t.fds)), k: t.k}
	for fd, e := range t.fds {
		c.install(fd, e.f, e.cloexec)
	}
	return c
}

// closeOnExec closes the descriptors marked FD_CLOEXEC (execve).
func (t *fdTable) closeOnExec() {
	t.mu.Lock()
	var fds []int32
	for fd, e := range t.fds {
		if e.cloexec {
			fds = append(fds, fd)
		}
	}
	t.mu.Unlock()
	for _, fd := range fds {
		t.close(fd)
	}
}

func (t *fdTable) setCloexec(fd int32, on bool) Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.fds[fd]
	if !ok {
		return EBADF
	}
	e.cloexec = on
	t.fds[fd] = e
	return 0
}

func (t *fdTable) cloexec(fd int32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fds[fd].cloexec
}

func (t *fdTable) closeAll() {
	t.mu.Lock()
	fds := make([]int32, 0, len(t.fds))
	for fd := range t.fds {
		fds = append(fds, fd)
	}
	t.mu.Unlock()
	sort.Slice(fds, func(i, j int) bool { return fds[i] < fds[j] })
	for _, fd := range fds {
		t.close(fd)
	}
}

// Linux open flags (asm-generic; the same values on x86-64 and arm64 for
// everything uvm uses except O_DIRECTORY/O_NOFOLLOW/O_DIRECT/O_LARGEFILE,
// which differ on arm64 and are translated per arch).
const (
	oRDONLY    = 0
	oWRONLY    = 1
	oRDWR      = 2
	oACCMODE   = 3
	oCREAT     = 0o100
	oEXCL      = 0o200
	oNOCTTY    = 0o400
	oTRUNC     = 0o1000
	oAPPEND    = 0o2000
	oNONBLOCK  = 0o4000
	oDSYNC     = 0o10000
	oDIRECTORY = 0o200000  // x86-64 value; arm64 uses 0o40000
	oNOFOLLOW  = 0o400000  // x86-64 value; arm64 uses 0o100000
	oCLOEXEC   = 0o2000000 // same on both
	oPATH      = 0o10000000
)
