package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// Recording of a run's file inputs (uvm run --record; cmd/uvm/record.go
// writes the rest). A FileRecord sees every path operation of an
// unconfined run (hostVFS) before it happens and keeps the state the
// path had before the guest changed it:
//
//   - every component of the path, as the host resolves it: directories,
//     symbolic links (with their targets, followed as the host follows
//     them) and the final entry, or its absence;
//   - the contents of a regular file the guest opens (unless it opens it
//     with O_TRUNC, or made or replaced it itself), stored once per
//     content under its SHA-256; a file only stat'ed is kept as its mode
//     and size;
//   - the entries of a directory the guest opens or changes, taken before
//     its first change (so a listing in the replay shows what the
//     original showed).
//
// A path is recorded the first time it is seen; later changes are the
// guest's own, which a replay makes again. The recording is bounded (the
// limit counts file bytes and 512 bytes per entry); past it the recording
// fails (Err) and records nothing more.

// RecordedPath is one recorded path: its kind ("file", "dir", "symlink"
// or "other", which a replay does not make), permission bits, size,
// contents (Blob: SHA-256 in hex; empty for a file kept by its size
// alone) and symlink target.
type RecordedPath struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Mode   uint32 `json:"mode"`
	Size   int64  `json:"size,omitempty"`
	Blob   string `json:"blob,omitempty"`
	Target string `json:"target,omitempty"`
}

// FileRecord records a run's file inputs into a directory of blobs.
type FileRecord struct {
	mu sync.Mutex
	// blobs is where contents go (DIR/files).
	blobs string
	// limit and used bound the recording (protected by mu).
	limit, used int64
	// err is the first failure (protected by mu).
	err error
	// paths holds every path seen (absent ones with an empty Kind);
	// listed the directories whose entries were taken; dirty the paths
	// the guest made, replaced or removed, whose state is its own
	// (protected by mu).
	paths  map[string]*RecordedPath
	listed map[string]bool
	dirty  map[string]bool
}

// NewFileRecord records into blobs (created) at most limit bytes.
func NewFileRecord(blobs string, limit int64) (*FileRecord, error) {
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return nil, err
	}
	return &FileRecord{blobs: blobs, limit: limit, paths: map[string]*RecordedPath{},
		listed: map[string]bool{}, dirty: map[string]bool{}}, nil
}

// Err is why the recording is incomplete (nil: it is complete).
func (r *FileRecord) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Paths returns the recorded paths that exist, sorted.
func (r *FileRecord) Paths() []RecordedPath {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]RecordedPath, 0, len(r.paths))
	for _, p := range r.paths {
		if p.Kind != "" {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Used is what the recording holds, in bytes as the limit counts them.
func (r *FileRecord) Used() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.used
}

// charge counts n bytes; false (and the recording failed) past the limit.
func (r *FileRecord) chargeLocked(n int64) bool {
	if r.err != nil {
		return false
	}
	if n > r.limit-r.used {
		r.err = fmt.Errorf("--record: the run's inputs exceed the recording limit of %d bytes (--record-limit)", r.limit)
		return false
	}
	r.used += n
	return true
}

const recordEntryCost = 512

// symlinkDepth is Linux's MAXSYMLINKS.
const symlinkDepth = 40

// noteLocked records p's own state (not following it) the first time.
func (r *FileRecord) noteLocked(p string) *RecordedPath {
	if e, ok := r.paths[p]; ok {
		return e
	}
	e := &RecordedPath{Path: p}
	if r.err != nil || !r.chargeLocked(recordEntryCost) {
		return e // not kept: the recording failed
	}
	r.paths[p] = e
	fi, err := os.Lstat(p)
	if err != nil || intoHostProc(p, false) {
		return e // absent, unreachable or the host's /proc: the replay lacks it too
	}
	e.Mode = uint32(fi.Mode().Perm())
	switch {
	case fi.Mode().IsRegular():
		e.Kind, e.Size = "file", fi.Size()
	case fi.IsDir():
		e.Kind = "dir"
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Kind = "symlink"
		if e.Target, err = os.Readlink(p); err != nil {
			e.Kind = "other"
		}
	default:
		e.Kind = "other"
	}
	return e
}

// resolveLocked records every component of p (cleaned, absolute) and
// returns the path it resolves to (following a final symlink with
// follow) and whether that exists.
func (r *FileRecord) resolveLocked(p string, follow bool, depth int) (string, bool) {
	parts := strings.Split(strings.TrimPrefix(path.Clean("/"+p), "/"), "/")
	cur := "/"
	for i, c := range parts {
		if c == "" {
			continue
		}
		next := path.Join(cur, c)
		e := r.noteLocked(next)
		if e.Kind == "" {
			return next, false
		}
		if e.Kind == "symlink" && (i < len(parts)-1 || follow) {
			if depth >= symlinkDepth {
				return next, false
			}
			t := e.Target
			if !path.IsAbs(t) {
				t = path.Join(cur, t)
			}
			return r.resolveLocked(path.Join(append([]string{t}, parts[i+1:]...)...), follow, depth+1)
		}
		cur = next
	}
	return cur, true
}

// listLocked records the entries of directory d (once, before it changes).
func (r *FileRecord) listLocked(d string) {
	if r.listed[d] || r.dirty[d] || r.err != nil {
		return
	}
	r.listed[d] = true
	f, err := openGuarded(d, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			r.noteLocked(path.Join(d, n))
		}
		if err != nil || r.err != nil {
			return
		}
	}
}

// captureLocked stores the contents of regular file e (once).
func (r *FileRecord) captureLocked(e *RecordedPath) {
	if e.Kind != "file" || e.Blob != "" || r.dirty[e.Path] || r.err != nil {
		return
	}
	// As the guest's opens: never the host's /proc, nor (swapped in
	// since) a symlink, FIFO or device.
	f, err := openGuarded(e.Path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if sum, n, ok := r.storeLocked(f, e.Path); ok {
		e.Blob, e.Size = sum, n
	}
}

// Store records the contents of regular file f from its start (without
// moving its offset), as Open does a file's; name is for messages.
func (r *FileRecord) Store(f *os.File, name string) (sum string, size int64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum, size, ok := r.storeLocked(io.NewSectionReader(f, 0, 1<<62), name)
	if !ok {
		return "", 0, r.err
	}
	return sum, size, nil
}

// storeLocked copies what in holds into a blob named by its SHA-256,
// within the limit; false when the recording failed.
func (r *FileRecord) storeLocked(in io.Reader, name string) (string, int64, bool) {
	if r.err != nil {
		return "", 0, false
	}
	tmp, err := os.CreateTemp(r.blobs, ".blob-*")
	if err != nil {
		r.err = fmt.Errorf("--record: %v", err)
		return "", 0, false
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	room := r.limit - r.used
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(in, room+1))
	tmp.Close()
	if err != nil {
		r.err = fmt.Errorf("--record: reading %s: %v", name, err)
		return "", 0, false
	}
	if !r.chargeLocked(n) {
		return "", 0, false
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if err := os.Rename(tmp.Name(), filepath.Join(r.blobs, sum)); err != nil {
		r.err = fmt.Errorf("--record: %v", err)
		return "", 0, false
	}
	return sum, n, true
}

// Open records path g before it is opened with host flags (the
// program, an interpreter, a library or any file: its contents are kept
// unless flags truncate it).
func (r *FileRecord) Open(g string, flags int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.resolveLocked(g, flags&syscall.O_NOFOLLOW == 0, 0)
	if !ok {
		if flags&os.O_CREATE != 0 {
			r.changeLocked(p)
		}
		return
	}
	e := r.paths[p]
	switch {
	case e == nil:
	case e.Kind == "dir" && flags&hostOPath == 0:
		r.listLocked(p)
	case flags&os.O_TRUNC == 0 && flags&hostOPath == 0:
		r.captureLocked(e)
	}
	if flags&os.O_TRUNC != 0 {
		r.dirty[p] = true
	}
}

// Stat records path g before a stat (follow) or lstat, readlink or
// chmod.
func (r *FileRecord) Stat(g string, follow bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resolveLocked(g, follow, 0)
}

// Change records path g (not followed) and its directory before the
// guest creates, removes or replaces g.
func (r *FileRecord) Change(g string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p, _ := r.resolveLocked(g, false, 0)
	r.changeLocked(p)
}

// Source records path g (not followed) with its contents before the
// guest links or renames it elsewhere (where its contents may be read).
func (r *FileRecord) Source(g string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.resolveLocked(g, false, 0); ok {
		if e := r.paths[p]; e != nil {
			r.captureLocked(e)
		}
	}
}

func (r *FileRecord) changeLocked(p string) {
	d := path.Dir(p)
	r.resolveLocked(d, true, 0)
	r.listLocked(d)
	r.dirty[d], r.dirty[p] = true, true
}

// errRecordConfined: the recording sees unconfined runs only.
var errRecordConfined = errors.New("--record: not available with --root, --bind or -L")

// StdinRead is one recorded read(2) of stdin: its bytes and errno.
type StdinRead struct {
	Data  []byte
	Errno int
}

// Reads returns what the log holds, in order.
func (log *StdinLog) Reads() []StdinRead {
	log.mu.Lock()
	defer log.mu.Unlock()
	out := make([]StdinRead, len(log.reads))
	for i, r := range log.reads {
		out[i] = StdinRead{Data: r.b, Errno: int(r.err)}
	}
	return out
}

// NewStdinLog is a log holding reads (a replayed run's stdin): the kernel
// reads them first, then its stdin stream.
func NewStdinLog(reads []StdinRead) *StdinLog {
	log := &StdinLog{}
	for _, r := range reads {
		log.reads = append(log.reads, stdinRead{b: r.Data, err: Errno(r.Errno)})
		log.size += int64(len(r.Data))
	}
	return log
}
