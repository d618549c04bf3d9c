//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

func exitSignal(ee *exec.ExitError) (int, bool) {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal()), true
	}
	return 0, false
}
