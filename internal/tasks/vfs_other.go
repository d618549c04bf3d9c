//go:build !linux

package tasks

import "errors"

// openRootVFS: confinement needs the host kernel's in-root resolution
// (openat2 RESOLVE_IN_ROOT), which only Linux has; uvm refuses to run a
// guest "confined" without it.
func openRootVFS(dir string, ro bool) (vfs, error) {
	return nil, errors.New("--root is only available on Linux hosts (it needs openat2 RESOLVE_IN_ROOT)")
}

// rootVFS is never made outside Linux (openRootVFS refuses); the type
// exists for the portable code that asks whether a vfs is one.
type rootVFS struct {
	vfs
	ro bool
}
