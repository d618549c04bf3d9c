package tasks

import (
	"fmt"
	"strings"
	"sync"

	"github.com/uvm-emu/uvm/internal/vm"
)

// Synthetic /proc files (see procfs_pid.go and procfs_machine.go for the
// tree): the contents helpers shared by them.

// procLimits is /proc/PID/limits.
func procLimits(tg *ThreadGroup) []byte {
	names := [rlimNlimits]struct{ name, unit string }{
		{"Max cpu time", "seconds"}, {"Max file size", "bytes"}, {"Max data size", "bytes"},
		{"Max stack size", "bytes"}, {"Max core file size", "bytes"}, {"Max resident set", "bytes"},
		{"Max processes", "processes"}, {"Max open files", "files"}, {"Max locked memory", "bytes"},
		{"Max address space", "bytes"}, {"Max file locks", "locks"}, {"Max pending signals", "signals"},
		{"Max msgqueue size", "bytes"}, {"Max nice priority", ""}, {"Max realtime priority", ""},
		{"Max realtime timeout", "us"},
	}
	tg.mu.Lock()
	lim := tg.rlim
	tg.mu.Unlock()
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

// procUnmodelled reports whether guest path g is under /proc but neither
// a per-process path (procHidden) nor one of the host's machine files
// uvm passes through (/proc/mounts and /proc/net, links to
// machineProcFile's): uvm's /proc has nothing there, and the host's
// must not answer for it.
func procUnmodelled(g string) bool {
	c, ok := procSplit(g)
	if !ok || len(c) == 0 || procHidden(g) {
		return false
	}
	return c[0] != "mounts" && c[0] != "net"
}

// machineProcFile: the per-process files that /proc/net links to
// describe the machine's network, not uvm's process; they stay the
// host's (README, Security model). The mount table is uvm's
// (proc_mounts.go).
func machineProcFile(p string) bool {
	rest, _ := strings.CutPrefix(p, "/proc/")
	_, rest, _ = strings.Cut(rest, "/") // the pid, self or thread-self
	switch rest {
	case "net":
		return true
	}
	return strings.HasPrefix(rest, "net/")
}

// machineProcPath is the host path of machine file g (/proc/PID/mounts,
// /proc/PID/net/…, PID a guest pid after procCanon): the same file of
// the host's /proc/self, which describes the same machine.
func machineProcPath(g string) string {
	rest, _ := strings.CutPrefix(g, "/proc/")
	_, rest, _ = strings.Cut(rest, "/")
	if strings.HasPrefix(rest, "task/") {
		rest = rest[len("task/"):]
		_, rest, _ = strings.Cut(rest, "/")
	}
	return "/proc/self/" + rest
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
