//go:build !linux

package tasks

import "os"

// intoHostProc: only Linux hosts have a procfs that could hand the guest
// uvm's own process (see procguard_linux.go).
func intoHostProc(hp string, follow bool) bool { return false }

// openGuarded is os.OpenFile where no host procfs can be reached.
func openGuarded(hp string, flags int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(hp, flags, perm)
}
