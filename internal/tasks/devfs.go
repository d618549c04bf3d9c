package tasks

import (
	"io"
	"strings"
)

// uvm's own /dev: the character devices every program expects are
// in-kernel objects, never the host's (so they exist under --root, and
// /dev/urandom follows the seeded generator in --det), and /dev/stdin,
// /dev/stdout, /dev/stderr and /dev/fd/N are the guest's descriptors.

// memDev is one of the memory character devices (drivers/char/mem.c).
type memDev struct {
	fileBase
	minor uint64
}

// Minor numbers of the memory devices (major 1).
const (
	devNullMinor    = 3
	devZeroMinor    = 5
	devFullMinor    = 7
	devRandomMinor  = 8
	devURandomMinor = 9
)

var memDevs = map[string]uint64{
	"/dev/null": devNullMinor, "/dev/zero": devZeroMinor, "/dev/full": devFullMinor,
	"/dev/random": devRandomMinor, "/dev/urandom": devURandomMinor,
}

func (d *memDev) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	switch d.minor {
	case devNullMinor:
		return nil, 0
	case devRandomMinor, devURandomMinor:
		b := make([]byte, min(n, 1<<20))
		if _, err := io.ReadFull(t.tg.k.opts.Random, b); err != nil {
			return nil, EIO
		}
		return b, 0
	}
	return make([]byte, min(n, 1<<20)), 0 // zero, full
}

func (d *memDev) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if d.minor == devFullMinor {
		return 0, ENOSPC
	}
	return uint64(len(b)), 0 // null and zero discard; random takes entropy
}

// seek succeeds and reports 0, as Linux's memory devices do.
func (*memDev) seek(*Task, *openFile, int64, int) (int64, Errno) { return 0, 0 }

func (d *memDev) stat(t *Task, _ *openFile) (hostStat, Errno) {
	st := t.anonStat(sIFCHR | 0o666)
	st.rdev = 1<<8 | d.minor
	st.dev = 6 // devtmpfs
	st.ino = d.minor
	return st, 0
}

// devSynthetic reports that g names one of uvm's /dev entries (devOpen's
// names).
func devSynthetic(g string) bool {
	if _, ok := memDevs[g]; ok {
		return true
	}
	switch g {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	return strings.HasPrefix(g, "/dev/fd/")
}

// devOpen opens uvm's /dev entries (ok=false: g is not one).
func (t *Task) devOpen(g string, flags int) (*openFile, bool, Errno) {
	if minor, ok := memDevs[g]; ok {
		return &openFile{ops: &memDev{minor: minor}, path: g, flags: flags &^ oCLOEXEC}, true, 0
	}
	fd := int32(-1)
	switch g {
	case "/dev/stdin":
		fd = 0
	case "/dev/stdout":
		fd = 1
	case "/dev/stderr":
		fd = 2
	default:
		rest, ok := strings.CutPrefix(g, "/dev/fd/")
		if !ok {
			return nil, false, 0
		}
		n := 0
		for _, c := range rest {
			if c < '0' || c > '9' || n > 1<<20 {
				return nil, true, ENOENT
			}
			n = n*10 + int(c-'0')
		}
		fd = int32(n)
	}
	// The descriptor's open file, as Linux's /proc/self/fd magic link
	// gives (uvm shares the description, offset included).
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return nil, true, ENOENT
	}
	return f, true, 0
}

// devStat stats uvm's /dev entries.
func (t *Task) devStat(g string) (hostStat, bool) {
	if minor, ok := memDevs[g]; ok {
		st, _ := (&memDev{minor: minor}).stat(t, nil)
		return st, true
	}
	f, ok, e := t.devOpen(g, oRDONLY)
	if !ok || e != 0 {
		return hostStat{}, false
	}
	st, e := f.ops.stat(t, f)
	return st, e == 0
}
