//go:build !linux

package tasks

// intoHostProc: only Linux hosts have a procfs that could hand the guest
// uvm's own process (see procguard_linux.go).
func intoHostProc(hp string, follow bool) bool { return false }
