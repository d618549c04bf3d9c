package tasks

import "testing"

// TestSyscallTables checks the one number → handler path: every enum
// member is a syscall some arch names (else its handler is unreachable),
// has exactly one handler (in sysCallTable or registered by name) unless
// Task.syscall runs it itself.
func TestSyscallTables(t *testing.T) {
	special := map[sysno]bool{sysExit: true, sysExitGroup: true, sysExecve: true, sysExecveat: true, sysRtSigreturn: true}
	named := map[string]bool{}
	for _, names := range []map[uint64]string{arm64SysNames, amd64SysNames} {
		for _, n := range names {
			named[n] = true
		}
	}
	for s := sysno(1); s < sysCount; s++ {
		if !named[s.String()] {
			t.Errorf("sysno %d (%s): no arch has a syscall of that name", s, s)
		}
		inTable, byName := sysCallTable[s] != nil, namedSyscalls[s.String()] != nil
		switch {
		case inTable && byName:
			t.Errorf("%s: in sysCallTable and registered by name", s)
		case special[s] && (inTable || byName):
			t.Errorf("%s: Task.syscall runs it itself, yet it has a handler", s)
		case !special[s] && !inTable && !byName:
			t.Errorf("%s: no handler", s)
		}
	}
	for _, a := range []*arch{&arm64ABI, &amd64ABI} {
		for nr, name := range a.names {
			if e := a.lookupSyscall(nr); e.name != name || (e.no != sysNone) != (sysnoByName[name] != 0) {
				t.Errorf("%s %d %s: entry %+v", a.name, nr, name, e)
			}
		}
	}
}
