//go:build linux && amd64 && !race

package hostfence

import (
	"sync/atomic"
	"syscall"
)

// membarrier(2) on linux/amd64 (the syscall package's table predates it).
const (
	sysMembarrier                         = 324
	membarrierCmdQuery                    = 0
	membarrierCmdPrivateExpedited         = 1 << 3
	membarrierCmdRegisterPrivateExpedited = 1 << 4
)

// asymmetric is set once, at package initialisation, before any caller
// can store: every Store and Heavy sees its final value.
var asymmetric = register()

func register() bool {
	const both = membarrierCmdPrivateExpedited | membarrierCmdRegisterPrivateExpedited
	q, _, e := syscall.Syscall(sysMembarrier, membarrierCmdQuery, 0, 0)
	if e != 0 || q&both != both {
		return false
	}
	_, _, e = syscall.Syscall(sysMembarrier, membarrierCmdRegisterPrivateExpedited, 0, 0)
	return e == 0
}

// Asymmetric reports whether Store is a plain store that Heavy fences.
func Asymmetric() bool { return asymmetric }

// Store stores v at p for a handshake whose other side calls Heavy
// before it loads p.
func Store(p *uint64, v uint64) {
	if asymmetric {
		*p = v
		return
	}
	atomic.StoreUint64(p, v)
}

// Heavy makes every thread of the process execute a full memory barrier
// (when Asymmetric): the frequent side's Stores before it are visible
// after it.
func Heavy() {
	if !asymmetric {
		return
	}
	if _, _, e := syscall.Syscall(sysMembarrier, membarrierCmdPrivateExpedited, 0, 0); e != 0 {
		// Registered at start, so this cannot fail; if it did, a Store
		// might be unseen, and there is no safe way on.
		panic("hostfence: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): " + e.Error())
	}
}
