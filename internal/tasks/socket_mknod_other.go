//go:build !linux

package tasks

import "os"

// mknodSocketVFS creates the inode of a bound AF_UNIX socket at name in
// fsys; hosts other than Linux get an empty file in its place.
func mknodSocketVFS(fsys vfs, name string, perm uint32) error {
	f, err := fsys.open(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(perm))
	if err != nil {
		return err
	}
	return f.Close()
}
