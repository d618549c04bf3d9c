package tasks

import "testing"

// TestSyscallTables checks every number uvm maps against the kernel
// headers' names: a wrong number would silently run the wrong handler.
func TestSyscallTables(t *testing.T) {
	for _, c := range []struct {
		arch  string
		table map[uint64]sysno
		names map[uint64]string
	}{{"arm64", arm64Sys, arm64SysNames}, {"amd64", amd64Sys, amd64SysNames}} {
		for nr, no := range c.table {
			want := c.names[nr]
			if want != no.String() {
				t.Errorf("%s syscall %d: uvm maps it to %s, the kernel calls it %q", c.arch, nr, no, want)
			}
		}
	}
}
