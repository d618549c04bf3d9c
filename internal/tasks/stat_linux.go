//go:build linux

package tasks

import (
	"io/fs"
	"syscall"
	"time"
)

func fillHostStat(st *hostStat, fi fs.FileInfo) {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	st.dev, st.ino, st.nlink, st.rdev = uint64(s.Dev), s.Ino, uint64(s.Nlink), uint64(s.Rdev)
	st.mode, st.uid, st.gid = s.Mode, s.Uid, s.Gid
	st.blocks, st.blksize = s.Blocks, int64(s.Blksize)
	st.atime = time.Unix(s.Atim.Sec, s.Atim.Nsec)
	st.ctime = time.Unix(s.Ctim.Sec, s.Ctim.Nsec)
}
