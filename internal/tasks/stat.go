package tasks

import (
	"encoding/binary"
	"io/fs"
	"time"
)

// hostStat is the part of a host stat result a guest sees.
type hostStat struct {
	dev, ino, nlink, rdev uint64
	mode, uid, gid        uint32
	size, blocks          int64
	blksize               int64
	atime, mtime, ctime   time.Time
}

// Linux S_IF* file type bits.
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
)

// modeOf converts a Go FileMode to Linux st_mode bits.
func modeOf(m fs.FileMode) uint32 {
	mode := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	switch {
	case m&fs.ModeDir != 0:
		mode |= sIFDIR
	case m&fs.ModeSymlink != 0:
		mode |= sIFLNK
	case m&fs.ModeNamedPipe != 0:
		mode |= sIFIFO
	case m&fs.ModeSocket != 0:
		mode |= sIFSOCK
	case m&fs.ModeCharDevice != 0:
		mode |= sIFCHR
	case m&fs.ModeDevice != 0:
		mode |= sIFBLK
	default:
		mode |= sIFREG
	}
	return mode
}

func statFromInfo(fi fs.FileInfo) hostStat {
	st := hostStat{mode: modeOf(fi.Mode()), size: fi.Size(), nlink: 1, blksize: 4096,
		mtime: fi.ModTime(), atime: fi.ModTime(), ctime: fi.ModTime()}
	st.blocks = (st.size + 511) / 512
	fillHostStat(&st, fi)
	return st
}

// virtualize makes host-dependent stat fields stable in deterministic
// mode: the inode number becomes a hash of the guest path, the device a
// fixed number, and all times the deterministic epoch. Size, mode, link
// count, uid and gid stay the host's (they are what the program asked
// about). Block counts are recomputed from the size.
func (k *Kernel) virtualize(st *hostStat, guestPath string) {
	if k.det == nil {
		return
	}
	st.ino = pathInode(guestPath)
	st.dev = 0x801
	st.uid, st.gid = k.guestUID(st.uid), k.guestGID(st.gid)
	st.atime, st.mtime, st.ctime = DetEpoch, DetEpoch, DetEpoch
	st.blksize = 4096
	st.blocks = (st.size + 4095) / 4096 * 8
}

// pathInode is a stable, non-zero inode number for a path (FNV-1a).
func pathInode(p string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(p); i++ {
		h ^= uint64(p[i])
		h *= 1099511628211
	}
	return h>>1 | 1
}

// statLayout is a guest's struct stat layout.
type statLayout uint8

const (
	statGeneric statLayout = iota // asm-generic (arm64): 128 bytes
	statX86                       // x86-64: 144 bytes
)

// encode writes the arch's struct stat.
func (l statLayout) encode(st *hostStat) []byte {
	le := binary.LittleEndian
	ts := func(b []byte, t time.Time) {
		le.PutUint64(b, uint64(t.Unix()))
		le.PutUint64(b[8:], uint64(t.Nanosecond()))
	}
	if l == statX86 {
		b := make([]byte, 144)
		le.PutUint64(b[0:], st.dev)
		le.PutUint64(b[8:], st.ino)
		le.PutUint64(b[16:], st.nlink)
		le.PutUint32(b[24:], st.mode)
		le.PutUint32(b[28:], st.uid)
		le.PutUint32(b[32:], st.gid)
		le.PutUint64(b[40:], st.rdev)
		le.PutUint64(b[48:], uint64(st.size))
		le.PutUint64(b[56:], uint64(st.blksize))
		le.PutUint64(b[64:], uint64(st.blocks))
		ts(b[72:], st.atime)
		ts(b[88:], st.mtime)
		ts(b[104:], st.ctime)
		return b
	}
	b := make([]byte, 128)
	le.PutUint64(b[0:], st.dev)
	le.PutUint64(b[8:], st.ino)
	le.PutUint32(b[16:], st.mode)
	le.PutUint32(b[20:], uint32(st.nlink))
	le.PutUint32(b[24:], st.uid)
	le.PutUint32(b[28:], st.gid)
	le.PutUint64(b[32:], st.rdev)
	le.PutUint64(b[48:], uint64(st.size))
	le.PutUint32(b[56:], uint32(st.blksize))
	le.PutUint64(b[64:], uint64(st.blocks))
	ts(b[72:], st.atime)
	ts(b[88:], st.mtime)
	ts(b[104:], st.ctime)
	return b
}

// encodeStatx writes a struct statx (the same on every arch).
func encodeStatx(st *hostStat) []byte {
	le := binary.LittleEndian
	b := make([]byte, 256)
	const basicStats = 0x7ff
	le.PutUint32(b[0:], basicStats)
	le.PutUint32(b[4:], uint32(st.blksize))
	le.PutUint32(b[16:], uint32(st.nlink))
	le.PutUint32(b[20:], st.uid)
	le.PutUint32(b[24:], st.gid)
	le.PutUint16(b[28:], uint16(st.mode))
	le.PutUint64(b[32:], st.ino)
	le.PutUint64(b[40:], uint64(st.size))
	le.PutUint64(b[48:], uint64(st.blocks))
	ts := func(off int, t time.Time) {
		le.PutUint64(b[off:], uint64(t.Unix()))
		le.PutUint32(b[off+8:], uint32(t.Nanosecond()))
	}
	ts(0x40, st.atime)
	ts(0x50, st.ctime) // btime: not tracked, reported as ctime
	ts(0x60, st.ctime)
	ts(0x70, st.mtime)
	le.PutUint32(b[0x80:], uint32(st.rdev>>8)&0xfff)
	le.PutUint32(b[0x84:], uint32(st.rdev&0xff))
	le.PutUint32(b[0x88:], uint32(st.dev>>8)&0xfff)
	le.PutUint32(b[0x8c:], uint32(st.dev&0xff))
	return b
}
