package tasks

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/vm"
)

// memfd_create (mm/memfd.c): an anonymous regular file whose bytes live in
// a vm.SharedObject, the same memory every MAP_SHARED mapping of it
// shares, so read/write/ftruncate through the descriptor and loads and
// stores through any mapping (in any process) see one file, as with
// Linux's shmem. Seals (F_ADD_SEALS/F_GET_SEALS) are supported when the
// file was created with MFD_ALLOW_SEALING.

// memfd_create flags and seals.
const (
	mfdCloexec       = 0x1
	mfdAllowSealing  = 0x2
	mfdHugetlb       = 0x4
	mfdNoexecSeal    = 0x8
	mfdExec          = 0x10
	sealSeal         = 0x1
	sealShrink       = 0x2
	sealGrow         = 0x4
	sealWrite        = 0x8
	sealFutureWrite  = 0x10
	sealExec         = 0x20
	sealAll          = sealSeal | sealShrink | sealGrow | sealWrite | sealFutureWrite | sealExec
	fAddSeals        = 1033
	fGetSeals        = 1034
	memfdNameMax     = 249
	memfdMaxFileSize = 1 << 40
)

// memfdSerial numbers memfds for their stat inode.
var memfdSerial atomic.Uint64

type memfdFile struct {
	fileBase
	obj *vm.SharedObject
	ino uint64
	// mu protects size, pos and seals.
	mu    sync.Mutex
	size  int64
	pos   int64
	seals uint32
}

func init() {
	registerSyscall("memfd_create", func(t *Task, a [6]uint64) uint64 { return t.sysMemfdCreate(a[0], a[1]) })
}

func (t *Task) sysMemfdCreate(nameAddr, flags uint64) uint64 {
	if flags&^(mfdCloexec|mfdAllowSealing|mfdHugetlb|mfdNoexecSeal|mfdExec) != 0 || flags&(mfdExec|mfdNoexecSeal) == mfdExec|mfdNoexecSeal {
		return errRet(EINVAL)
	}
	if flags&mfdHugetlb != 0 {
		if t.tg.k.noteUnimplemented("memfd_create MFD_HUGETLB") {
			t.tg.k.logf("unimplemented memfd_create MFD_HUGETLB (no hugetlbfs)")
		}
		return errRet(EINVAL)
	}
	if nameAddr == 0 {
		return errRet(EFAULT)
	}
	name, err := t.tg.mm.ReadString(nameAddr, memfdNameMax+1)
	if err != nil {
		if strings.Contains(err.Error(), "too long") {
			return errRet(EINVAL)
		}
		return errRet(EFAULT)
	}
	if len(name) > memfdNameMax {
		return errRet(EINVAL)
	}
	m := &memfdFile{obj: vm.NewSharedObject(nil), ino: 0x6d656d00 + memfdSerial.Add(1)}
	if flags&mfdAllowSealing == 0 {
		m.seals = sealSeal
	}
	if flags&mfdNoexecSeal != 0 {
		m.seals = sealExec
	}
	f := &openFile{ops: m, path: "/memfd:" + name + " (deleted)", flags: oRDWR}
	fd, e := t.tg.fds.alloc(f, 0, flags&mfdCloexec != 0)
	return retFD(fd, e)
}

func (m *memfdFile) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pos := off
	if off < 0 {
		pos = m.pos
	}
	if pos >= m.size {
		return nil, 0
	}
	b := make([]byte, min(int64(n), m.size-pos))
	m.obj.ReadAt(b, uint64(pos))
	if off < 0 {
		m.pos += int64(len(b))
	}
	return b, 0
}

func (m *memfdFile) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seals&(sealWrite|sealFutureWrite) != 0 {
		return 0, EPERM
	}
	pos := off
	if off < 0 {
		pos = m.pos
		if f.flags&oAPPEND != 0 {
			pos = m.size
		}
	}
	if pos+int64(len(b)) > m.size && m.seals&sealGrow != 0 {
		return 0, EPERM
	}
	if pos >= memfdMaxFileSize {
		return 0, EFBIG
	}
	n, e := t.checkFsize(pos, uint64(len(b)))
	if e != 0 {
		return 0, e
	}
	b = b[:min(n, uint64(memfdMaxFileSize-pos))]
	m.obj.WriteAt(b, uint64(pos))
	m.size = max(m.size, pos+int64(len(b)))
	if off < 0 {
		m.pos = pos + int64(len(b))
	}
	return uint64(len(b)), 0
}

func (m *memfdFile) seek(t *Task, f *openFile, off int64, whence int) (int64, Errno) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var pos int64
	switch whence {
	case 0:
		pos = off
	case 1:
		pos = m.pos + off
	case 2:
		pos = m.size + off
	case 3, 4: // SEEK_DATA, SEEK_HOLE: one data extent, then the hole at EOF
		if off < 0 || off >= m.size {
			return 0, ENXIO
		}
		pos = off
		if whence == 4 {
			pos = m.size
		}
	default:
		return 0, EINVAL
	}
	if pos < 0 {
		return 0, EINVAL
	}
	m.pos = pos
	return pos, 0
}

func (m *memfdFile) stat(t *Task, f *openFile) (hostStat, Errno) {
	m.mu.Lock()
	size := m.size
	m.mu.Unlock()
	st := t.anonStat(sIFREG | 0o777)
	st.size, st.blocks, st.ino = size, (size+4095)/4096*8, m.ino
	return st, 0
}

// truncate is ftruncate of the memfd.
func (m *memfdFile) truncate(t *Task, size int64) Errno {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case size < m.size && m.seals&sealShrink != 0, size > m.size && m.seals&sealGrow != 0:
		return EPERM
	case size > memfdMaxFileSize:
		return EFBIG
	}
	if size < m.size {
		m.obj.Truncate(uint64(size))
	}
	m.size = size
	return 0
}

// fallocate supports mode 0, FALLOC_FL_KEEP_SIZE and PUNCH_HOLE, as
// shmem does.
func (m *memfdFile) fallocate(t *Task, mode uint64, off, n int64) Errno {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch mode {
	case 0, fallocKeepSize:
		if end := off + n; mode == 0 && end > m.size {
			if m.seals&sealGrow != 0 {
				return EPERM
			}
			m.size = end
		}
		return 0
	case fallocKeepSize | fallocPunchHole:
		if m.seals&(sealWrite|sealFutureWrite) != 0 {
			return EPERM
		}
		m.obj.Punch(uint64(off), uint64(n))
		return 0
	}
	return EOPNOTSUPP
}

// addSeals is F_ADD_SEALS.
func (m *memfdFile) addSeals(t *Task, f *openFile, seals uint64) Errno {
	if seals&^sealAll != 0 {
		return EINVAL
	}
	if f.flags&oACCMODE == oRDONLY {
		return EPERM
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seals&sealSeal != 0 {
		return EPERM
	}
	if seals&sealWrite != 0 && m.seals&sealWrite == 0 && t.tg.k.writableMappings(m.obj) {
		return EBUSY
	}
	m.seals |= uint32(seals)
	return 0
}

// writableMappings reports whether a live address space maps obj shared
// and writable (F_SEAL_WRITE is refused then).
func (k *Kernel) writableMappings(obj *vm.SharedObject) bool {
	k.procMu.Lock()
	tgs := make([]*ThreadGroup, 0, len(k.procs))
	for _, tg := range k.procs {
		if !tg.proc.zombie {
			tgs = append(tgs, tg)
		}
	}
	k.procMu.Unlock()
	for _, tg := range tgs {
		tg.mu.Lock()
		mm := tg.mm
		tg.mu.Unlock()
		for _, v := range mm.VMAs() {
			if v.Obj == obj && v.Prot&vm.ProtWrite != 0 {
				return true
			}
		}
	}
	return false
}

// mapping fills in a mapping of the memfd (sysmm.go fileMapping):
// MAP_SHARED maps the file's own pages, MAP_PRIVATE copies them on first
// touch.
func (m *memfdFile) mapping(f *openFile, v *vm.VMA, off, prot, flags uint64) Errno {
	if f.flags&oACCMODE == oWRONLY {
		return EACCES
	}
	m.mu.Lock()
	seals := m.seals
	m.mu.Unlock()
	if flags&mapShared != 0 && prot&uint64(vm.ProtWrite) != 0 {
		if f.flags&oACCMODE != oRDWR {
			return EACCES
		}
		if seals&(sealWrite|sealFutureWrite) != 0 {
			return EPERM
		}
	}
	v.Name, v.Offset, v.Inode = f.path, off, m.ino
	if v.Shared {
		v.Obj = m.obj
	} else {
		v.File = memfdBacking{m}
	}
	return 0
}

// memfdBacking is the memfd behind a private mapping of it.
type memfdBacking struct{ m *memfdFile }

func (b memfdBacking) ReadAt(p []byte, off int64) (int, error) {
	b.m.mu.Lock()
	size := b.m.size
	b.m.mu.Unlock()
	if off >= size {
		return 0, fmt.Errorf("memfd: read past EOF")
	}
	n := min(int64(len(p)), size-off)
	b.m.obj.ReadAt(p[:n], uint64(off))
	clear(p[n:])
	return int(n), nil
}

func (b memfdBacking) WriteAt(p []byte, off int64) (int, error) {
	b.m.obj.WriteAt(p, uint64(off))
	return len(p), nil
}

func (b memfdBacking) Size() (int64, error) {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	return b.m.size, nil
}

// sysFcntlSeals handles F_ADD_SEALS/F_GET_SEALS, and passes every other
// command on to sysFcntl.
func (t *Task) sysFcntlSeals(fd int32, cmd, arg uint64) uint64 {
	if cmd != fAddSeals && cmd != fGetSeals {
		return t.sysFcntl(fd, cmd, arg)
	}
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	m, ok := f.ops.(*memfdFile)
	if !ok {
		return errRet(EINVAL)
	}
	if cmd == fGetSeals {
		m.mu.Lock()
		defer m.mu.Unlock()
		return uint64(m.seals)
	}
	return errOr0(m.addSeals(t, f, arg))
}
