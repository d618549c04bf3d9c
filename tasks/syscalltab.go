package tasks

import "sync"

// syscallEntry is what the syscall round trip needs about one syscall
// number of an arch, precomputed from the arch's maps (table, names) and
// namedSyscalls so that Task.syscall makes no map lookup per call.
type syscallEntry struct {
	no    sysno          // table[nr]; sysNone when the enum lacks it
	name  string         // names[nr]; "" when the arch has no such syscall
	named syscallHandler // namedSyscalls[name]; nil when none
}

// maxDenseSyscall bounds the dense per-arch tables (both arches' numbers
// are below 512); larger numbers take the maps.
const maxDenseSyscall = 1024

// syscallTablesOnce builds the dense tables once, after every init has
// registered its named syscalls (NewKernel runs it).
var syscallTablesOnce sync.Once

func buildSyscallTables() {
	for _, a := range []*arch{&arm64ABI, &amd64ABI} {
		n := 0
		for nr := range a.table {
			if nr < maxDenseSyscall && int(nr) >= n {
				n = int(nr) + 1
			}
		}
		for nr := range a.names {
			if nr < maxDenseSyscall && int(nr) >= n {
				n = int(nr) + 1
			}
		}
		dense := make([]syscallEntry, n)
		for nr := range dense {
			dense[nr] = a.lookupSyscall(uint64(nr))
		}
		a.dense = dense
	}
}

// lookupSyscall is the entry for nr from the maps.
func (a *arch) lookupSyscall(nr uint64) syscallEntry {
	no, ok := a.table[nr]
	if !ok {
		no = sysNone
	}
	name := a.names[nr]
	return syscallEntry{no: no, name: name, named: namedSyscalls[name]}
}

// entry returns the entry for nr: from the dense table when nr is
// in it, else from the maps (a guest may pass any number).
func (a *arch) entry(nr uint64) *syscallEntry {
	if nr < uint64(len(a.dense)) {
		return &a.dense[nr]
	}
	e := a.lookupSyscall(nr)
	return &e
}
