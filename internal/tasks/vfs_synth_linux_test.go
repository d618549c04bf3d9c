//go:build linux

package tasks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
)

// TestSynthViaLinks: under --root, symlinks in the root's tree that lead
// into uvm's /proc or /dev are walked in uvm to the synthetic path
// (relative, absolute, through a directory link, chained, the last one
// only when followed); names that stay on the host, loops, and any walk
// unconfined give nothing.
func TestSynthViaLinks(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"etc", "proc", "dev", "a/b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"etc/mtab": "../proc/self/mounts", "etc/abs": "/proc/self/mounts",
		"etc/pself": "../proc/self", "etc/chain": "mtab", "etc/null": "/dev/null", "etc/host": "../a/b",
		"etc/loop": "loop", "a/b/up": "../../proc"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	newTask := func(opts Options) *Task {
		k := NewKernel(opts)
		mm := vm.NewMM()
		tg := &ThreadGroup{k: k, arch: &amd64ABI, mm: mm, done: make(chan struct{}), rlim: k.defaultRlimits(), sighand: &signals.Sighand{}, pid: 5}
		tg.fds = newFDTable(k)
		return &Task{tg: tg, cpu: amd64.NewCPU(mm), tid: 5}
	}
	task := newTask(Options{Deterministic: true, Chroot: dir, Cwd: "/"})
	if err := task.tg.k.fsErr; err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		g          string
		followLast bool
		want       string
	}{
		{"/etc/mtab", true, "/proc/5/mounts"},
		{"/etc/abs", true, "/proc/5/mounts"},
		{"/etc/chain", true, "/proc/5/mounts"},
		{"/etc/pself/status", false, "/proc/5/status"},
		{"/etc/pself", true, "/proc/self"},
		{"/etc/null", true, "/dev/null"},
		{"/etc/host/up/cpuinfo", true, "/proc/cpuinfo"},
		{"/etc/host/../../etc/mtab", true, "/proc/5/mounts"},
		{"/etc/mtab", false, ""},
		{"/etc/host", true, ""},
		{"/etc/loop/x", true, ""},
		{"/nonexistent/x", true, ""},
	} {
		got, ok := task.synthViaLinks(c.g, c.followLast)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("%s follow=%v: %q, want %q", c.g, c.followLast, got, c.want)
		}
	}
	// The one-lookup filter: a name missing before any symlink is not
	// walked; a symlink on the way is.
	for g, want := range map[string]bool{"/a/b/missing": false, "/a/missing/x": false, "/etc/mtab": true,
		"/etc/pself/x": true, "/etc/host/up/x": true} {
		if got := task.tg.k.synthMayLink(g); got != want {
			t.Errorf("synthMayLink(%s) = %v, want %v", g, got, want)
		}
	}
	// Unconfined the host's /proc answers (and its guard refuses).
	host := newTask(Options{Deterministic: true, Cwd: "/"})
	if g, ok := host.synthViaLinks(filepath.Join(dir, "etc/mtab"), true); ok {
		t.Errorf("unconfined: %q", g)
	}
}
