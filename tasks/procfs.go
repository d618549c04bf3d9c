package tasks

import (
	"fmt"
	"strings"
	"sync"

	"github.com/uvm-emu/uvm/vm"
)

// Synthetic /proc files: what programs read about themselves must describe
// the guest, not uvm. /proc/self/{maps,cmdline,comm} and /proc/<pid>/… of
// the calling process are generated at open time; /proc/self/exe and
// /proc/self/fd/N are symlinks handled by readlink and open.

// procFile returns the contents of a synthetic /proc file for guest path
// g, or ok=false when g is not one.
func (t *Task) procFile(g string) (data []byte, ok bool) {
	rest, found := strings.CutPrefix(g, "/proc/self/")
	if !found {
		rest, found = strings.CutPrefix(g, "/proc/"+itoa(int(t.tg.pid))+"/")
	}
	if !found {
		if g == "/proc/thread-self/maps" {
			rest = "maps"
		} else {
			return nil, false
		}
	}
	switch rest {
	case "maps":
		maps := formatMaps(t.tg.mm.VMAs())
		if t.tg.arch.vsyscall {
			maps += vsyscallMapsLine
		}
		return []byte(maps), true
	case "cmdline":
		return t.tg.cmdline, true
	case "environ":
		return t.tg.environ, true
	case "status":
		return t.procStatus(), true
	case "limits":
		return t.procLimits(), true
	case "comm":
		return t.procComm(), true
	}
	return nil, false
}

// procComm is /proc/PID/comm: the main thread's name (PR_SET_NAME, or
// the executable's, at most 15 bytes).
func (t *Task) procComm() []byte {
	return []byte(t.tg.leaderComm(t) + "\n")
}

// procStatus is /proc/PID/status (the fields programs parse: identity,
// memory sizes, thread count, signal masks).
func (t *Task) procStatus() []byte {
	tg := t.tg
	name := strings.TrimSuffix(string(t.procComm()), "\n")
	tg.mu.Lock()
	threads, umask := len(tg.tasks), tg.umask
	tg.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Name:\t%s\nUmask:\t%04o\nState:\tR (running)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n",
		name, umask, tg.pid, t.tid, tg.ppid())
	c := t.creds()
	fmt.Fprintf(&b, "Uid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\nFDSize:\t%d\n",
		c.uid, c.euid, c.suid, c.fsuid, c.gid, c.egid, c.sgid, c.fsgid, tg.fds.max())
	rss := tg.mm.RSS() * vm.PageSize >> 10
	fmt.Fprintf(&b, "VmSize:\t%8d kB\nVmRSS:\t%8d kB\nThreads:\t%d\n", tg.mm.TotalVM()>>10, rss, threads)
	tg.sighand.Siglock.Lock()
	blk := t.blocked
	tg.sighand.Siglock.Unlock()
	fmt.Fprintf(&b, "SigBlk:\t%016x\n", uint64(blk))
	return []byte(b.String())
}

// procLimits is /proc/PID/limits.
func (t *Task) procLimits() []byte {
	names := [rlimNlimits]struct{ name, unit string }{
		{"Max cpu time", "seconds"}, {"Max file size", "bytes"}, {"Max data size", "bytes"},
		{"Max stack size", "bytes"}, {"Max core file size", "bytes"}, {"Max resident set", "bytes"},
		{"Max processes", "processes"}, {"Max open files", "files"}, {"Max locked memory", "bytes"},
		{"Max address space", "bytes"}, {"Max file locks", "locks"}, {"Max pending signals", "signals"},
		{"Max msgqueue size", "bytes"}, {"Max nice priority", ""}, {"Max realtime priority", ""},
		{"Max realtime timeout", "us"},
	}
	t.tg.mu.Lock()
	lim := t.tg.rlim
	t.tg.mu.Unlock()
	val := func(v uint64) string {
		if v == rlimInfinity {
			return "unlimited"
		}
		return fmt.Sprint(v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit", "Hard Limit", "Units")
	for i, n := range names {
		fmt.Fprintf(&b, "%-25s %-20s %-20s %-10s\n", n.name, val(lim[i].cur), val(lim[i].max), n.unit)
	}
	return []byte(b.String())
}

// procMemFile is /proc/PID/mem: the process's memory at the file offset,
// read and written as ptrace does (FOLL_FORCE: page protections do not
// apply, a write to code is seen by instruction fetch). Unmapped
// addresses are EIO. The address space is the one at open time.
type procMemFile struct {
	fileBase
	mm *vm.MM
	// mu protects pos.
	mu  sync.Mutex
	pos uint64
}

// at returns the address an access starts at and moves the position.
func (m *procMemFile) at(off int64, n uint64) uint64 {
	if off >= 0 {
		return uint64(off)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.pos
	m.pos += n
	return a
}

func (m *procMemFile) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	addr := m.at(off, 0)
	var out []byte
	for uint64(len(out)) < n {
		k := min(n-uint64(len(out)), vm.PageSize-addr&vm.PageMask)
		b := make([]byte, k)
		if vdsoSpecial(m.mm, addr, addr+k) || m.mm.Peek(b, addr) != nil {
			break
		}
		out = append(out, b...)
		addr += k
	}
	if len(out) == 0 && n > 0 {
		return nil, EIO
	}
	if off < 0 {
		m.at(-1, uint64(len(out)))
	}
	return out, 0
}

func (m *procMemFile) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	addr := m.at(off, 0)
	var done uint64
	for done < uint64(len(b)) {
		k := min(uint64(len(b))-done, vm.PageSize-addr&vm.PageMask)
		if vdsoSpecial(m.mm, addr, addr+k) || m.mm.Poke(b[done:done+k], addr) != nil {
			break
		}
		done += k
		addr += k
	}
	if done == 0 && len(b) > 0 {
		return 0, EIO
	}
	if off < 0 {
		m.at(-1, done)
	}
	return done, 0
}

func (m *procMemFile) seek(t *Task, f *openFile, off int64, whence int) (int64, Errno) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch whence {
	case 0:
		m.pos = uint64(off)
	case 1:
		m.pos += uint64(off)
	default:
		return 0, EINVAL
	}
	return int64(m.pos), 0
}

func (*procMemFile) stat(t *Task, _ *openFile) (hostStat, Errno) {
	st := t.anonStat(sIFREG | 0o600)
	st.blksize = 1024
	return st, 0
}

// procOpen opens the synthetic /proc files that are not plain contents
// (ok=false: g is not one).
func (t *Task) procOpen(g string, flags int) (*openFile, bool) {
	self := "/proc/" + itoa(int(t.tg.pid))
	switch g {
	case "/proc/self/mem", "/proc/thread-self/mem", self + "/mem":
		return &openFile{ops: &procMemFile{mm: t.tg.mm}, path: g, flags: flags &^ oCLOEXEC}, true
	}
	return nil, false
}

// procStat stats the synthetic /proc entries of the calling process.
func (t *Task) procStat(g string) (hostStat, bool) {
	self := "/proc/" + itoa(int(t.tg.pid))
	k := t.tg.k
	switch g {
	case "/proc/self", "/proc/thread-self", self, "/proc/self/fd", self + "/fd":
		return hostStat{mode: sIFDIR | 0o555, nlink: 2, blksize: 1024, uid: k.uid(), gid: k.gid()}, true
	}
	if _, ok := t.procFile(g); ok {
		return hostStat{mode: sIFREG | 0o444, nlink: 1, blksize: 1024, uid: k.uid(), gid: k.gid()}, true
	}
	if f, ok := t.procOpen(g, oRDONLY); ok {
		st, _ := f.ops.stat(t, f)
		return st, true
	}
	return hostStat{}, false
}

// procHidden reports whether guest path g names a per-process /proc file
// uvm does not synthesize: /proc/self/…, /proc/thread-self/… and
// /proc/N/… must never reach the host's /proc, where they would describe
// (and, for mem, modify) uvm itself or another host process.
func procHidden(g string) bool {
	rest, ok := strings.CutPrefix(g, "/proc/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	if first == "self" || first == "thread-self" {
		return true
	}
	if first == "" {
		return false
	}
	for _, c := range first {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// machineProcFile: the per-process files that /proc/mounts and /proc/net
// link to describe the machine's mounts and network, not uvm's process;
// like /proc/cpuinfo they stay the host's (README, Security model).
func machineProcFile(p string) bool {
	rest, _ := strings.CutPrefix(p, "/proc/")
	_, rest, _ = strings.Cut(rest, "/") // the pid, self or thread-self
	switch rest {
	case "mounts", "mountinfo", "mountstats", "net":
		return true
	}
	return strings.HasPrefix(rest, "net/")
}

// formatMaps renders VMAs as /proc/PID/maps does.
func formatMaps(vmas []vm.VMA) string {
	var b strings.Builder
	for _, v := range vmas {
		perm := []byte("---p")
		if v.Prot&vm.ProtRead != 0 {
			perm[0] = 'r'
		}
		if v.Prot&vm.ProtWrite != 0 {
			perm[1] = 'w'
		}
		if v.Prot&vm.ProtExec != 0 {
			perm[2] = 'x'
		}
		if v.Shared {
			perm[3] = 's'
		}
		dev := "00:00"
		if v.Dev != 0 {
			dev = fmt.Sprintf("%02x:%02x", (v.Dev>>8)&0xfff, v.Dev&0xff)
		}
		line := fmt.Sprintf("%08x-%08x %s %08x %s %d", v.Start, v.End, perm, v.Offset, dev, v.Inode)
		if v.Name != "" {
			line = fmt.Sprintf("%-72s %s", line, v.Name)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
