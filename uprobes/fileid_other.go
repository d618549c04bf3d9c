//go:build !linux

package uprobes

import (
	"os"
	"path/filepath"
)

// FileIdentity returns an identity for a host file. Without inode
// numbers it is a hash of the absolute path (Dev 0).
func FileIdentity(path string) (FileID, error) {
	if _, err := os.Stat(path); err != nil {
		return FileID{}, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return FileID{}, err
	}
	h := uint64(14695981039346656037)
	for i := 0; i < len(abs); i++ {
		h ^= uint64(abs[i])
		h *= 1099511628211
	}
	return FileID{Inode: h>>1 | 1}, nil
}
