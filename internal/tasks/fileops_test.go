package tasks

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
)

// testTask is a task with a real kernel and address space but no guest
// program: enough for the file operations, which never run guest code.
func testTask(t *testing.T) *Task {
	k := NewKernel(Options{Deterministic: true, Cwd: t.TempDir()})
	mm := vm.NewMM()
	tg := &ThreadGroup{k: k, arch: &amd64ABI, mm: mm, done: make(chan struct{}), rlim: k.defaultRlimits(), sighand: &signals.Sighand{}}
	tg.fds = newFDTable(k)
	return &Task{tg: tg, cpu: amd64.NewCPU(mm)}
}

func TestPipeEndOps(t *testing.T) {
	task := testTask(t)
	p := newPipe()
	r := &openFile{ops: &pipeEnd{p: p}, flags: oRDONLY | oNONBLOCK}
	w := &openFile{ops: &pipeEnd{p: p, isWrite: true}, flags: oWRONLY | oNONBLOCK}
	require.Equal(t, uint16(0), r.ops.poll(pollIN|pollOUT), "empty pipe: nothing to read")
	require.Equal(t, uint16(pollOUT), w.ops.poll(pollIN|pollOUT))
	_, e := r.ops.read(task, r, 10, -1)
	require.Equal(t, EAGAIN, e)
	_, e = r.ops.read(task, r, 10, 0)
	require.Equal(t, ESPIPE, e, "pread on a pipe")
	n, e := w.ops.write(task, w, []byte("hello"), -1)
	require.Zero(t, e)
	require.Equal(t, uint64(5), n)
	require.Equal(t, uint16(pollIN), r.ops.poll(pollIN))
	b, e := r.ops.read(task, r, 3, -1)
	require.Zero(t, e)
	require.Equal(t, "hel", string(b))
	w.ops.release()
	b, _ = r.ops.read(task, r, 10, -1)
	require.Equal(t, "lo", string(b))
	require.Equal(t, uint16(pollIN|pollHUP), r.ops.poll(pollIN), "writer gone: EOF and HUP")
	b, e = r.ops.read(task, r, 10, -1)
	require.Zero(t, e)
	require.Empty(t, b, "EOF")
	st, _ := r.ops.stat(task, r)
	require.Equal(t, uint32(sIFIFO|0o600), st.mode)
}

func TestMemFileOps(t *testing.T) {
	task := testTask(t)
	f := &openFile{ops: &memFile{data: []byte("0123456789")}, flags: oRDONLY}
	b, _ := f.ops.read(task, f, 4, -1)
	require.Equal(t, "0123", string(b))
	b, _ = f.ops.read(task, f, 4, 8)
	require.Equal(t, "89", string(b), "pread leaves the position")
	pos, e := f.ops.seek(task, f, -2, 2)
	require.Zero(t, e)
	require.Equal(t, int64(8), pos)
	_, e = f.ops.seek(task, f, -20, 1)
	require.Equal(t, EINVAL, e)
	_, e = f.ops.write(task, f, []byte("x"), -1)
	require.Equal(t, EBADF, e)
	_, e = f.ops.readdir(task, f)
	require.Equal(t, ENOTDIR, e)
}

func TestEventFileOps(t *testing.T) {
	task := testTask(t)
	f := &openFile{ops: &eventFile{ev: newEventFD(0, true)}, flags: oRDWR | oNONBLOCK}
	_, e := f.ops.read(task, f, 8, -1)
	require.Equal(t, EAGAIN, e)
	_, e = f.ops.read(task, f, 4, -1)
	require.Equal(t, EINVAL, e, "eventfd reads are 8 bytes")
	n, e := f.ops.write(task, f, []byte{2, 0, 0, 0, 0, 0, 0, 0}, -1)
	require.Zero(t, e)
	require.Equal(t, uint64(8), n)
	require.Equal(t, uint16(pollIN|pollOUT), f.ops.poll(pollIN|pollOUT))
	b, _ := f.ops.read(task, f, 8, -1)
	require.Equal(t, []byte{1, 0, 0, 0, 0, 0, 0, 0}, b, "EFD_SEMAPHORE takes one")
	_, e = f.ops.write(task, f, bytes.Repeat([]byte{0xff}, 8), -1)
	require.Equal(t, EINVAL, e)
}

func TestHostFileOps(t *testing.T) {
	task := testTask(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b"), []byte("data"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), nil, 0o644))
	d, err := os.Open(dir)
	require.NoError(t, err)
	df := &openFile{ops: &hostFile{f: d}, path: dir, flags: oRDONLY}
	_, e := df.ops.read(task, df, 10, -1)
	require.Equal(t, EISDIR, e)
	list, e := df.ops.readdir(task, df)
	require.Zero(t, e)
	var names []string
	for _, de := range list {
		names = append(names, de.name)
	}
	require.Equal(t, ".,..,a,b", strings.Join(names, ","), "name order, dot entries first")
	df.ops.release()

	hf, err := os.OpenFile(filepath.Join(dir, "b"), os.O_RDWR, 0)
	require.NoError(t, err)
	f := &openFile{ops: &hostFile{f: hf}, path: filepath.Join(dir, "b"), flags: oRDWR}
	task.tg.rlim[rlimitFsize].cur = 6
	n, e := f.ops.write(task, f, []byte("0123456789"), 0)
	require.Zero(t, e)
	require.Equal(t, uint64(6), n, "RLIMIT_FSIZE cuts the write")
	_, e = f.ops.write(task, f, []byte("x"), 6)
	require.Equal(t, EFBIG, e)
	b, _ := f.ops.read(task, f, 100, 0)
	require.Equal(t, "012345", string(b))
	f.ops.release()
}

// Descriptor limits: the table never hands out a descriptor at or past
// RLIMIT_NOFILE.
func TestFDTableLimit(t *testing.T) {
	task := testTask(t)
	fds := task.tg.fds
	fds.setLimit(5)
	for i := 3; i < 5; i++ {
		fd, e := fds.alloc(&openFile{ops: &memFile{}}, 0, false)
		require.Zero(t, e)
		require.Equal(t, int32(i), fd)
	}
	_, e := fds.alloc(&openFile{ops: &memFile{}}, 0, false)
	require.Equal(t, EMFILE, e)
	require.Equal(t, EBADF, fds.dupTo(0, 5, false))
	require.Zero(t, fds.close(3))
	fd, e := fds.alloc(&openFile{ops: &memFile{}}, 0, false)
	require.Zero(t, e)
	require.Equal(t, int32(3), fd, "lowest free descriptor")
}
