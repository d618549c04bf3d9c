//go:build linux

package tasks

import (
	"runtime"
	"syscall"
	"unsafe"
)

// pinToCPU locks the calling goroutine to its OS thread and binds that
// thread to host CPU i mod NumCPU (like the kernel bench's -a).
func pinToCPU(i int) {
	runtime.LockOSThread()
	n := runtime.NumCPU()
	if i < 0 {
		i = -i
	}
	cpu := i % n
	var mask [16]uint64 // 1024 CPUs
	if cpu >= len(mask)*64 {
		return
	}
	mask[cpu/64] |= 1 << (cpu % 64)
	syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, uintptr(len(mask)*8), uintptr(unsafe.Pointer(&mask[0])))
}
