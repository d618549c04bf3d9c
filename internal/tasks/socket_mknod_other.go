//go:build !linux

package tasks

import "os"

// mknodSocket creates the inode of a bound AF_UNIX socket; hosts other
// than Linux get an empty file in its place.
func mknodSocket(hostPath string, perm uint32) error {
	f, err := os.OpenFile(hostPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(perm))
	if err != nil {
		return err
	}
	return f.Close()
}
