//go:build !linux

package tasks

import "io/fs"

// fillHostStat has nothing more to add on non-Linux hosts: the portable
// FileInfo fields are all uvm can report there.
func fillHostStat(st *hostStat, fi fs.FileInfo) {}
