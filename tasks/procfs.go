package tasks

import (
	"fmt"
	"strings"

	"uvm/vm"
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
		return []byte(formatMaps(t.tg.mm.VMAs())), true
	case "cmdline":
		return t.tg.cmdline, true
	case "environ":
		return t.tg.environ, true
	case "comm":
		name := t.tg.mm.ExePath
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		if len(name) > 15 {
			name = name[:15]
		}
		return []byte(name + "\n"), true
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
