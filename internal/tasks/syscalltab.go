package tasks

//go:generate go run ./internal/sysgen -o sysnames.go

import (
	"fmt"
	"sync"
)

// syscallEntry is what the syscall round trip needs about one syscall
// number of an arch, precomputed from the arch's names (sysnames.go),
// the sysno enum, sysCallTable and namedSyscalls so that Task.syscall
// makes no map lookup per call. This is the only number → handler
// mapping: an arch's number reaches the enum through its Linux name.
type syscallEntry struct {
	no      sysno          // the enum member named name; sysNone when none
	name    string         // names[nr]; "" when the arch has no such syscall
	handler syscallHandler // sysCallTable[no], else namedSyscalls[name]; nil: ENOSYS
	byName  bool           // handler came from namedSyscalls (counted by name in --stats)
	inLoop  bool           // may run on the fast path, inside the CPU's Run (fastpath.go)
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

// sysnoByName is the enum member of each Linux name (from sysNames);
// built by init.
var sysnoByName = map[string]sysno{}

func init() {
	for s := sysno(1); s < sysCount; s++ {
		if sysNames[s] == "" {
			panic(fmt.Sprintf("tasks: sysno %d has no name", s))
		}
		sysnoByName[sysNames[s]] = s
	}
}

// lookupSyscall is the entry for nr from the maps.
func (a *arch) lookupSyscall(nr uint64) syscallEntry {
	name := a.names[nr]
	no := sysnoByName[name]
	e := syscallEntry{no: no, name: name}
	if no != sysNone {
		e.handler = sysCallTable[no]
	}
	if e.handler == nil && namedSyscalls[name] != nil {
		e.handler, e.byName = namedSyscalls[name], true
	}
	e.inLoop = inLoop(no, e.handler)
	return e
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
