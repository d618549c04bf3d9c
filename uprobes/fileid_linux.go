//go:build linux

package uprobes

import (
	"fmt"
	"os"
	"syscall"
)

// FileIdentity returns the (device, inode) of a host file, the identity
// uprobes match mappings by. Use it for both the probed executable and
// the VMAs that map files.
func FileIdentity(path string) (FileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, fmt.Errorf("%s: no inode information: %w", path, ErrNotSupported)
	}
	return FileID{Dev: uint64(st.Dev), Inode: st.Ino}, nil
}
