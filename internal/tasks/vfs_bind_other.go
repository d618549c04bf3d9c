//go:build !linux

package tasks

import (
	"errors"
	"os"
)

func newMountVFS(base vfs, binds []Bind) (vfs, error) {
	return nil, errors.New("--bind needs a Linux host (descriptor-relative lookups)")
}

// readOnlyAt reports a file system that refuses every change (there are
// no binds here).
func readOnlyAt(fsys vfs, name string, follow bool) bool {
	r, ok := fsys.(interface{ readOnly() bool })
	return ok && r.readOnly()
}

func utimensNoFollow(fsys vfs, name string, nofollow bool, op func(dirfd int, name string) Errno) (Errno, bool) {
	return 0, false
}

func (t *Task) mountArg(fsys vfs, a pathArg) (string, bool) { return "", false }

func readOnlyFile(fsys vfs, h *os.File, g string) bool { return readOnlyAt(fsys, g, true) }
