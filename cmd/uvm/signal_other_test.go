//go:build !unix

package main

import "os/exec"

func exitSignal(ee *exec.ExitError) (int, bool) { return 0, false }
