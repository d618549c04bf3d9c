//go:build !linux

package tasks

import (
	"io/fs"
	"os"
)

type fifoTable struct{}

func openMayBlock(fsys vfs, name string, hostFlags int) bool { return false }

func (t *Task) openFIFOWait(fsys vfs, name string, hostFlags int, perm fs.FileMode) (*os.File, Errno) {
	f, err := fsys.open(name, hostFlags, perm)
	return f, errnoOf(err)
}
