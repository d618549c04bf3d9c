package gdbstub

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fileTarget is memTarget with files (HostFiles) and a chosen auxv.
type fileTarget struct {
	*memTarget
	auxv   []byte
	files  map[string][]byte
	links  map[string]string
	closed int
}

func (t *fileTarget) Auxv() ([]byte, error) { return t.auxv, nil }

func (t *fileTarget) OpenFile(path string) (File, int) {
	b, ok := t.files[path]
	if !ok {
		return nil, 2 // ENOENT
	}
	return &memFile{t: t, b: b}, 0
}

func (t *fileTarget) Readlink(path string) (string, int) {
	s, ok := t.links[path]
	if !ok {
		return "", 22
	}
	return s, 0
}

type memFile struct {
	t *fileTarget
	b []byte
}

func (f *memFile) Pread(n int, off int64) ([]byte, int) {
	if off >= int64(len(f.b)) {
		return nil, 0
	}
	return f.b[off:min(int64(len(f.b)), off+int64(n))], 0
}
func (f *memFile) Stat() (FileStat, int) {
	return FileStat{Mode: 0o100644, Nlink: 1, Size: uint64(len(f.b)), Blksize: 4096, Mtime: 1234}, 0
}
func (f *memFile) Close() { f.t.closed++ }

// noAckMode switches a fresh session to no-ack mode, as gdb does.
func noAckMode(c *client) {
	c.send(string(encodePacket(nil, []byte("qSupported:multiprocess+"))))
	c.reply(true)
	c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
	c.reply(true)
}

func hexName(s string) string { return hex.EncodeToString([]byte(s)) }

func TestHostIO(t *testing.T) {
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(i * 7) // every byte value, '$' '#' '}' '*' included
	}
	tg := &fileTarget{memTarget: newMemTarget(AMD64), files: map[string][]byte{"/lib/libc.so.6": data},
		links: map[string]string{"/proc/1001/exe": "/usr/bin/prog"}}
	c, _ := startSession(t, tg, Options{PacketSize: 0x1000})
	noAckMode(c)
	require.Equal(t, "F0", c.cmd("vFile:setfs:0"))
	require.Equal(t, "F0", c.cmd("vFile:setfs:3e9"), "the debugged pid")
	require.Equal(t, "F-1,16", c.cmd("vFile:setfs:7"), "another process: EINVAL")
	require.Equal(t, "F-1,2", c.cmd("vFile:open:"+hexName("/nonexistent")+",0,0"))
	require.Equal(t, "F-1,1e", c.cmd("vFile:open:"+hexName("/lib/libc.so.6")+",1,0"), "writing: EROFS")
	require.Equal(t, "F0", c.cmd("vFile:open:"+hexName("/lib/libc.so.6")+",0,0"))

	// Read it back in the chunks the reply size allows.
	var got []byte
	for off := 0; ; {
		r := c.cmd(fmt.Sprintf("vFile:pread:0,2000,%x", off))
		head, body, ok := strings.Cut(r, ";")
		require.True(t, ok, "pread reply %q", r[:min(len(r), 20)])
		var n int
		fmt.Sscanf(head, "F%x", &n)
		require.Equal(t, n, len(body))
		require.LessOrEqual(t, n, 0x1000/2, "the escaped reply fits the packet size")
		if n == 0 {
			break
		}
		got = append(got, body...)
		off += n
	}
	require.Equal(t, data, got)

	r := c.cmd("vFile:fstat:0")
	require.True(t, strings.HasPrefix(r, "F40;"), r)
	st := []byte(r[4:])
	require.Len(t, st, 64)
	require.Equal(t, uint32(0o100644), binary.BigEndian.Uint32(st[8:]))
	require.Equal(t, uint64(len(data)), binary.BigEndian.Uint64(st[28:]))
	require.Equal(t, uint32(1234), binary.BigEndian.Uint32(st[56:]))

	require.Equal(t, "F0", c.cmd("vFile:close:0"))
	require.Equal(t, 1, tg.closed)
	require.Equal(t, "F-1,9", c.cmd("vFile:close:0"), "closed twice: EBADF")
	require.Equal(t, "F-1,9", c.cmd("vFile:pread:0,10,0"))
	require.Equal(t, "F-1,16", c.cmd("vFile:pread:zz,10,0"))
	require.Equal(t, "F-1,1e", c.cmd("vFile:unlink:"+hexName("/lib/libc.so.6")))
	require.Equal(t, "F-1,1e", c.cmd("vFile:pwrite:0,0,41"))
	require.Equal(t, "Fd;/usr/bin/prog", c.cmd("vFile:readlink:"+hexName("/proc/1001/exe")))
	require.Equal(t, "F-1,16", c.cmd("vFile:open:"+hexName("/a\x00b")+",0,0"), "a NUL in the name")
	require.Equal(t, "", c.cmd("vFile:frobnicate:0"), "unknown: empty")

	// A client that never closes: the session bounds its descriptors
	// and closes them when it ends.
	for i := 0; i < maxHostFiles; i++ {
		require.Equal(t, fmt.Sprintf("F%x", i), c.cmd("vFile:open:"+hexName("/lib/libc.so.6")+",0,0"))
	}
	require.Equal(t, "F-1,18", c.cmd("vFile:open:"+hexName("/lib/libc.so.6")+",0,0"), "EMFILE")
}

func TestHostIOUnsupported(t *testing.T) {
	c, _ := startSession(t, newMemTarget(AMD64), Options{})
	noAckMode(c)
	require.Equal(t, "", c.cmd("vFile:setfs:0"), "a target without files: gdb falls back to its own")
}

// putLinkMap writes struct link_map at addr in the target's memory.
func putLinkMap(m []byte, addr, lAddr, name, ld, next uint64) {
	o := addr - 0x10000
	binary.LittleEndian.PutUint64(m[o:], lAddr)
	binary.LittleEndian.PutUint64(m[o+8:], name)
	binary.LittleEndian.PutUint64(m[o+16:], ld)
	binary.LittleEndian.PutUint64(m[o+24:], next)
}

func svr4Target(rDebug uint64) *fileTarget {
	tg := &fileTarget{memTarget: newMemTarget(AMD64)}
	m := tg.mem[:]
	// Program headers at 0x10000: PT_PHDR (vaddr 0x40: bias 0xffc0) and
	// PT_DYNAMIC at vaddr 0x240 → 0x10200.
	binary.LittleEndian.PutUint32(m[0:], ptPHDR)
	binary.LittleEndian.PutUint64(m[16:], 0x40)
	binary.LittleEndian.PutUint32(m[56:], ptDYNAMIC)
	binary.LittleEndian.PutUint64(m[56+16:], 0x240)
	// The dynamic section: DT_NEEDED, DT_DEBUG, DT_NULL.
	binary.LittleEndian.PutUint64(m[0x200:], 1)
	binary.LittleEndian.PutUint64(m[0x210:], dtDEBUG)
	binary.LittleEndian.PutUint64(m[0x218:], rDebug)
	// r_debug at 0x10300: r_version, r_map.
	binary.LittleEndian.PutUint64(m[0x300:], 1)
	binary.LittleEndian.PutUint64(m[0x308:], 0x10400)
	copy(m[0x810:], "/lib/libc.so.6\x00")
	copy(m[0x830:], "/opt/l<&\">.so\x00")
	putLinkMap(m, 0x10400, 0, 0x10800, 0x10200, 0x10440)         // the program: ""
	putLinkMap(m, 0x10440, 0x7f0000, 0x10810, 0x7f1000, 0x10480) // libc
	putLinkMap(m, 0x10480, 0x7fe000, 0x10800, 0x7fe100, 0x104c0) // no name (the vDSO)
	putLinkMap(m, 0x104c0, 0x600000, 0x10830, 0x601000, 0x10440) // loops back to libc
	auxv := make([]byte, 0, 64)
	for _, kv := range [][2]uint64{{atPHDR, 0x10000}, {atPHENT, 56}, {atPHNUM, 2}, {0, 0}} {
		auxv = binary.LittleEndian.AppendUint64(auxv, kv[0])
		auxv = binary.LittleEndian.AppendUint64(auxv, kv[1])
	}
	tg.auxv = auxv
	return tg
}

func TestLibrariesSVR4(t *testing.T) {
	c, _ := startSession(t, svr4Target(0x10300), Options{})
	noAckMode(c)
	r := c.cmd("qSupported")
	require.Contains(t, r, "qXfer:libraries-svr4:read+")
	want := `<library-list-svr4 version="1.0" main-lm="0x10400">` +
		`<library name="/lib/libc.so.6" lm="0x10440" l_addr="0x7f0000" l_ld="0x7f1000" lmid="0x0"/>` +
		`<library name="/opt/l&lt;&amp;&quot;&gt;.so" lm="0x104c0" l_addr="0x600000" l_ld="0x601000" lmid="0x0"/>` +
		`</library-list-svr4>`
	require.Equal(t, "l"+want, c.cmd("qXfer:libraries-svr4:read::0,1000"))
	require.Equal(t, "m"+want[:10], c.cmd("qXfer:libraries-svr4:read::0,a"))

	// Before the loader has filled DT_DEBUG, and with r_debug out of
	// the process's memory: an empty list, not an error.
	for _, rd := range []uint64{0, 0xdead0000} {
		c, _ := startSession(t, svr4Target(rd), Options{})
		noAckMode(c)
		require.Equal(t, `l<library-list-svr4 version="1.0"/>`, c.cmd("qXfer:libraries-svr4:read::0,1000"))
	}
}
