//go:build !linux

package tasks

import "runtime"

// pinToCPU can only keep the goroutine on one OS thread on hosts without
// a portable affinity call; the OS decides where that thread runs.
func pinToCPU(i int) { runtime.LockOSThread() }
