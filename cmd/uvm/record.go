package main

// `uvm run --det --record DIR` and `uvm replay DIR [run flags]`: a
// deterministic run shipped with its inputs. DIR holds manifest.json (the
// program, its argv, environment, working directory, every flag that
// shapes the run, the stdin reads, the recorded paths, and the run's
// trace hash and exit status), stdin (the bytes read from it) and files/
// (every file's contents the guest opened, by SHA-256). The file part is
// tasks.FileRecord; stdin is the reverse execution's tasks.StdinLog. A
// replay builds a scratch root from the recording (its writes go there),
// runs the program confined to it (--root) with the recorded stdin, and
// compares the trace hash and exit status with the recorded ones.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/uvm-emu/uvm/internal/tasks"
)

// recordManifest is DIR/manifest.json.
type recordManifest struct {
	Format int      `json:"format"`
	UVM    string   `json:"uvm"`
	Prog   string   `json:"prog"`
	Args   []string `json:"args"`
	Flags  []string `json:"flags"`
	Env    []string `json:"env"`
	Cwd    string   `json:"cwd"`
	// Stdin is each read(2) of stdin: its length (its bytes follow one
	// another in DIR/stdin) and errno.
	Stdin     []recordedRead `json:"stdin"`
	StdinHash string         `json:"stdin_sha256"`
	// StdinFile is stdin when it was a regular file: its contents (a
	// replay reads a copy of it, from the same offset, as a file).
	StdinFile *recordedStdinFile   `json:"stdin_file,omitempty"`
	Files     []tasks.RecordedPath `json:"files"`
	TraceHash string               `json:"trace_hash"`
	Exit      int                  `json:"exit"`
}

type recordedStdinFile struct {
	Blob   string `json:"blob"`
	Size   int64  `json:"size"`
	Offset int64  `json:"offset"`
}

type recordedRead struct {
	N     int `json:"n"`
	Errno int `json:"errno,omitempty"`
}

const recordFormat = 1

// defaultRecordLimit bounds a recording (and what a replay unpacks).
const defaultRecordLimit = 1 << 30

// recordEntryCost is what one recorded path counts toward the limit (as
// tasks.FileRecord counts it).
const recordEntryCost = 512

// maxManifest bounds manifest.json.
const maxManifest = 256 << 20

// recordFlags are the run flags of recording and replay.
type recordFlags struct {
	dir   *string
	limit *string
}

func addRecordFlags(fl *flag.FlagSet) *recordFlags {
	return &recordFlags{
		dir:   fl.String("record", "", "with --det: record the run's inputs (stdin, files read, program and libraries, environment, flags) into DIR for 'uvm replay DIR'"),
		limit: fl.String("record-limit", "1G", "cap on a recording (and on what 'uvm replay' unpacks): SIZE with K, M, G, T suffixes; past it the recording fails"),
	}
}

// notRecorded are the flags a recording leaves out: outputs, the debugger,
// the environment (recorded as it is) and the file system view.
var notRecorded = map[string]bool{
	"record": true, "record-limit": true, "trace": true, "strace": true, "trace-hash": true,
	"trace-insn": true, "stats": true, "pprof": true, "pprof-period": true, "pprof-contention": true,
	"cpuprofile": true, "memprofile": true, "probe-log": true, "g": true, "gdb-wait": true,
	"checkpoint-interval": true, "checkpoint-mem": true,
	"E": true, "U": true, "clean-env": true, "L": true, "root": true,
}

// replaySpec is a replay's run: set up by cmdReplay, used by runCommand.
type replaySpec struct {
	m     *recordManifest
	root  string
	stdin *tasks.StdinLog
}

// recordSession is a recording or replay in progress.
type recordSession struct {
	dir   string
	files *tasks.FileRecord
	stdin *tasks.StdinLog
	limit int64
	m     *recordManifest
	// replay: the recorded run to compare with.
	replay *replaySpec
}

// setupRecord checks the record flags and prepares opts for a recording
// or a replay (nil, 0: neither; a non-zero code: fail with it).
func setupRecord(rf *recordFlags, rp *replaySpec, fl *flag.FlagSet, opts *tasks.Options, prog string, stderr io.Writer) (*recordSession, int) {
	limit, err := parseMemLimit(*rf.limit, 0)
	if err != nil || limit <= 0 {
		fmt.Fprintf(stderr, "uvm run: --record-limit %s: want a positive size\n", *rf.limit)
		return nil, 2
	}
	if rp != nil {
		if *rf.dir != "" || opts.Root != "" || opts.Chroot != "" {
			fmt.Fprintf(stderr, "uvm replay: --record, -L and --root do not apply to a replay\n")
			return nil, 2
		}
		for _, name := range []string{"E", "U"} {
			if len(*fl.Lookup(name).Value.(*listFlag)) > 0 {
				fmt.Fprintf(stderr, "uvm replay: -%s: a replay runs with the recorded environment\n", name)
				return nil, 2
			}
		}
		opts.Chroot, opts.Cwd, opts.Env = rp.root, rp.m.Cwd, rp.m.Env
		opts.TraceHash = true
		return &recordSession{stdin: rp.stdin, replay: rp, m: rp.m}, 0
	}
	if *rf.dir == "" {
		return nil, 0
	}
	switch {
	case !opts.Deterministic:
		fmt.Fprintf(stderr, "uvm run: --record needs --det\n")
		return nil, 2
	case opts.Root != "" || opts.Chroot != "":
		fmt.Fprintf(stderr, "uvm run: --record is not available with -L or --root\n")
		return nil, 2
	case fl.Lookup("g").Value.String() != "":
		fmt.Fprintf(stderr, "uvm run: --record is not available with -g (debug the replay: uvm replay DIR -g PORT)\n")
		return nil, 2
	}
	dir := *rf.dir
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		fmt.Fprintf(stderr, "uvm run: --record %s: the directory is not empty\n", dir)
		return nil, 2
	}
	files, err := tasks.NewFileRecord(filepath.Join(dir, "files"), limit)
	if err != nil {
		fmt.Fprintf(stderr, "uvm run: --record: %v\n", err)
		return nil, 2
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "uvm run: --record: %v\n", err)
		return nil, 2
	}
	m := &recordManifest{Format: recordFormat, UVM: version, Prog: prog, Args: fl.Args()[1:], Env: opts.Env, Cwd: cwd}
	fl.VisitAll(func(f *flag.Flag) {
		if notRecorded[f.Name] {
			return
		}
		if l, ok := f.Value.(*listFlag); ok {
			for _, v := range *l {
				m.Flags = append(m.Flags, "-"+f.Name+"="+v)
			}
			return
		}
		m.Flags = append(m.Flags, "-"+f.Name+"="+f.Value.String())
	})
	// The program and the working directory: the kernel reads the
	// program itself (the interpreter and libraries come through the
	// file system, recorded there).
	abs, _ := filepath.Abs(prog)
	files.Open(abs, os.O_RDONLY)
	files.Stat(cwd, true)
	if f, ok := opts.Stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			off, err := f.Seek(0, io.SeekCurrent)
			if err != nil {
				fmt.Fprintf(stderr, "uvm run: --record: stdin: %v\n", err)
				return nil, 2
			}
			sum, n, err := files.Store(f, "stdin")
			if err != nil {
				fmt.Fprintf(stderr, "uvm run: %v\n", err)
				return nil, 2
			}
			m.StdinFile = &recordedStdinFile{Blob: sum, Size: n, Offset: off}
		}
	}
	opts.Record = files
	opts.TraceHash = true
	return &recordSession{dir: dir, files: files, stdin: &tasks.StdinLog{}, limit: limit, m: m}, 0
}

// attach gives the kernel the session's stdin record (before it starts),
// and reverse execution the same one.
func (s *recordSession) attach(k *tasks.Kernel, rev *reverseRun) {
	if s == nil {
		return
	}
	k.RecordStdin(s.stdin)
	if rev != nil {
		rev.stdin = s.stdin
	}
}

// finish writes the recording, or checks the replay, after the run ended
// with st; it returns the command's exit status.
func (s *recordSession) finish(k *tasks.Kernel, st tasks.ExitStatus, stderr io.Writer) int {
	code, hash := st.ShellCode(), k.TraceHash()
	if s.replay != nil {
		m := s.m
		if hash != m.TraceHash || code != m.Exit {
			fmt.Fprintf(stderr, "uvm replay: the replay diverged from the recording: exit status %d, trace hash %s; recorded: exit status %d, trace hash %s\n",
				code, hash, m.Exit, m.TraceHash)
			return replayDiverged
		}
		fmt.Fprintf(stderr, "uvm replay: the replay matches the recording (exit status %d, trace hash %s)\n", code, hash)
		return code
	}
	if err := s.write(code, hash); err != nil {
		fmt.Fprintf(stderr, "uvm run: --record %s: %v\n", s.dir, err)
		return 2
	}
	return code
}

// replayDiverged is uvm replay's exit status for a replay that does not
// repeat the recorded run (or a recording it cannot use).
const replayDiverged = 125

func (s *recordSession) write(code int, hash string) error {
	if err := s.files.Err(); err != nil {
		return err
	}
	if err := s.stdin.Complete(); err != nil {
		return err
	}
	var data []byte
	for _, r := range s.stdin.Reads() {
		data = append(data, r.Data...)
		s.m.Stdin = append(s.m.Stdin, recordedRead{N: len(r.Data), Errno: r.Errno})
	}
	if int64(len(data)) > s.limit-s.files.Used() {
		return fmt.Errorf("the run's inputs exceed the recording limit of %d bytes (--record-limit)", s.limit)
	}
	sum := sha256.Sum256(data)
	s.m.StdinHash = hex.EncodeToString(sum[:])
	s.m.Files = s.files.Paths()
	s.m.TraceHash, s.m.Exit = hash, code
	if err := os.WriteFile(filepath.Join(s.dir, "stdin"), data, 0o644); err != nil {
		return err
	}
	j, err := json.MarshalIndent(s.m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.dir, ".manifest.json")
	if err := os.WriteFile(tmp, append(j, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, "manifest.json"))
}

// cmdReplay is `uvm replay DIR [run flags]`.
func cmdReplay(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "usage: uvm replay DIR [run flags]\n")
		return 2
	}
	dir, extra := args[0], args[1:]
	limit := int64(defaultRecordLimit)
	for i, a := range extra { // the unpacking limit, before the run's flags are parsed
		v, ok := strings.CutPrefix(strings.TrimPrefix(a, "-"), "-record-limit=")
		if !ok && (a == "-record-limit" || a == "--record-limit") && i+1 < len(extra) {
			v, ok = extra[i+1], true
		}
		if ok {
			n, err := parseMemLimit(v, 0)
			if err != nil || n <= 0 {
				fmt.Fprintf(stderr, "uvm replay: --record-limit %s: want a positive size\n", v)
				return 2
			}
			limit = n
		}
	}
	m, stdin, err := loadRecording(dir, limit)
	if err != nil {
		fmt.Fprintf(stderr, "uvm replay: %s: %v\n", dir, err)
		return replayDiverged
	}
	if m.UVM != version {
		fmt.Fprintf(stderr, "uvm replay: %s was recorded by uvm %s, this is %s (a difference may show as a divergence)\n", dir, m.UVM, version)
	}
	root, err := os.MkdirTemp("", "uvm-replay-")
	if err != nil {
		fmt.Fprintf(stderr, "uvm replay: %v\n", err)
		return 2
	}
	defer os.RemoveAll(root)
	if err := unpackRecording(dir, m, root, limit); err != nil {
		fmt.Fprintf(stderr, "uvm replay: %s: %v\n", dir, err)
		return replayDiverged
	}
	var in io.Reader = strings.NewReader("")
	if sf := m.StdinFile; sf != nil {
		f, err := unpackStdinFile(dir, sf, limit)
		if err != nil {
			fmt.Fprintf(stderr, "uvm replay: %s: stdin: %v\n", dir, err)
			return replayDiverged
		}
		defer f.Close()
		in, stdin = f, &tasks.StdinLog{} // read as the file it was
	}
	runArgs := append(append(append([]string{}, m.Flags...), extra...), "--", m.Prog)
	runArgs = append(runArgs, m.Args...)
	return runCommand(runArgs, in, stdout, stderr, &replaySpec{m: m, root: root, stdin: stdin})
}

// loadRecording reads and checks DIR's manifest and stdin (a recording is
// untrusted input: every name, size and hash is checked).
func loadRecording(dir string, limit int64) (*recordManifest, *tasks.StdinLog, error) {
	f, err := os.Open(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	j, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, nil, err
	}
	if len(j) > maxManifest {
		return nil, nil, fmt.Errorf("manifest.json is bigger than %d bytes", maxManifest)
	}
	var m recordManifest
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("manifest.json: %v", err)
	}
	if m.Format != recordFormat {
		return nil, nil, fmt.Errorf("manifest.json: format %d, this uvm reads %d", m.Format, recordFormat)
	}
	if m.Prog == "" || !cleanAbs(m.Cwd) {
		return nil, nil, errors.New("manifest.json: no program, or a working directory that is not a clean absolute path")
	}
	for _, fl := range m.Flags {
		if !strings.HasPrefix(fl, "-") || !strings.Contains(fl, "=") {
			return nil, nil, fmt.Errorf("manifest.json: flag %q is not -NAME=VALUE", fl)
		}
		if name, _, _ := strings.Cut(fl[1:], "="); notRecorded[name] {
			return nil, nil, fmt.Errorf("manifest.json: flag %q is not one a recording holds", fl)
		}
	}
	sf, err := os.Open(filepath.Join(dir, "stdin"))
	if err != nil {
		return nil, nil, err
	}
	defer sf.Close()
	data, err := io.ReadAll(io.LimitReader(sf, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("stdin is bigger than the limit of %d bytes (--record-limit)", limit)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != m.StdinHash {
		return nil, nil, errors.New("stdin does not match its SHA-256 in manifest.json (the recording was changed)")
	}
	reads := make([]tasks.StdinRead, 0, len(m.Stdin))
	off := 0
	for _, r := range m.Stdin {
		if r.N < 0 || r.N > len(data)-off || r.Errno < 0 || r.Errno > 4095 {
			return nil, nil, errors.New("manifest.json: the stdin reads do not match stdin")
		}
		reads = append(reads, tasks.StdinRead{Data: data[off : off+r.N], Errno: r.Errno})
		off += r.N
	}
	if off != len(data) {
		return nil, nil, errors.New("manifest.json: the stdin reads do not match stdin")
	}
	return &m, tasks.NewStdinLog(reads), nil
}

// cleanAbs reports a clean absolute path.
func cleanAbs(p string) bool {
	return strings.HasPrefix(p, "/") && path.Clean(p) == p && !strings.ContainsRune(p, 0)
}

// maxPlaceholder bounds the size of a file recorded by its size alone (a
// sparse file in the replay's root).
const maxPlaceholder = 1 << 40

// unpackRecording makes the recorded paths under root (through os.Root,
// so no recorded name or symlink reaches outside it): directories, then
// files (contents checked against their SHA-256), then symlinks.
func unpackRecording(dir string, m *recordManifest, root string, limit int64) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	ps := append([]tasks.RecordedPath(nil), m.Files...)
	order := map[string]int{"dir": 0, "file": 1, "symlink": 2, "other": 3}
	for _, p := range ps {
		if _, ok := order[p.Kind]; !ok || !cleanAbs(p.Path) || p.Path == "/" {
			return fmt.Errorf("manifest.json: bad recorded path %q (%s)", p.Path, p.Kind)
		}
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if order[ps[i].Kind] != order[ps[j].Kind] {
			return order[ps[i].Kind] < order[ps[j].Kind]
		}
		return ps[i].Path < ps[j].Path
	})
	var used int64
	dirs := map[string]uint32{}
	if err := r.MkdirAll(strings.TrimPrefix(m.Cwd, "/"), 0o755); err != nil && m.Cwd != "/" {
		return err
	}
	for _, p := range ps {
		name := strings.TrimPrefix(p.Path, "/")
		mode := os.FileMode(p.Mode & 0o1777) // never set-user-ID or set-group-ID
		if used += recordEntryCost; used > limit {
			return fmt.Errorf("the recording is bigger than the limit (--record-limit)")
		}
		if err := r.MkdirAll(path.Dir(name), 0o755); err != nil && path.Dir(name) != "." {
			return fmt.Errorf("%s: %v", p.Path, err)
		}
		switch p.Kind {
		case "dir":
			if err := r.MkdirAll(name, 0o755); err != nil {
				return fmt.Errorf("%s: %v", p.Path, err)
			}
			dirs[name] = p.Mode
		case "file":
			if p.Size < 0 || p.Size > maxPlaceholder {
				return fmt.Errorf("%s: bad size %d", p.Path, p.Size)
			}
			if err := unpackFile(r, name, dir, p, limit-used); err != nil {
				return fmt.Errorf("%s: %v", p.Path, err)
			}
			if p.Blob != "" {
				used += p.Size
			}
			if err := r.Chmod(name, mode); err != nil {
				return fmt.Errorf("%s: %v", p.Path, err)
			}
		case "symlink":
			if p.Target == "" || strings.ContainsRune(p.Target, 0) {
				return fmt.Errorf("%s: bad symlink target", p.Path)
			}
			if err := r.Symlink(p.Target, name); err != nil {
				return fmt.Errorf("%s: %v", p.Path, err)
			}
		}
	}
	for name, mode := range dirs { // last: a read-only directory was filled first
		if err := r.Chmod(name, os.FileMode(mode&0o1777)|0o700); err != nil {
			return fmt.Errorf("/%s: %v", name, err)
		}
	}
	return nil
}

// unpackFile makes one recorded file: its contents (the blob, checked)
// or, recorded by size alone, a sparse file of that size.
func unpackFile(r *os.Root, name, dir string, p tasks.RecordedPath, room int64) error {
	out, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if p.Blob == "" {
		return out.Truncate(p.Size)
	}
	return copyBlob(out, dir, p.Blob, p.Size, room)
}

// copyBlob copies recorded contents blob of size bytes (at most room) to
// out, checking them.
func copyBlob(out io.Writer, dir, blob string, size, room int64) error {
	if len(blob) != 64 || strings.Trim(blob, "0123456789abcdef") != "" {
		return fmt.Errorf("bad content name %q", blob)
	}
	if size < 0 || size > room {
		return fmt.Errorf("the recording is bigger than the limit (--record-limit)")
	}
	in, err := os.Open(filepath.Join(dir, "files", blob))
	if err != nil {
		return err
	}
	defer in.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(in, size+1))
	if err != nil {
		return err
	}
	if n != size || hex.EncodeToString(h.Sum(nil)) != blob {
		return errors.New("the recorded contents do not match their SHA-256 or size (the recording was changed)")
	}
	return nil
}

// unpackStdinFile makes a scratch copy of a recorded stdin file, open at
// its recorded offset (its name is removed at once: the open file stays
// until it is closed).
func unpackStdinFile(dir string, sf *recordedStdinFile, limit int64) (*os.File, error) {
	if sf.Offset < 0 {
		return nil, fmt.Errorf("bad offset %d", sf.Offset)
	}
	f, err := os.CreateTemp("", "uvm-replay-stdin-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	if err := copyBlob(f, dir, sf.Blob, sf.Size, limit); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(sf.Offset, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
