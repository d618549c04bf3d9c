package tasks

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// AF_UNIX (net/unix/af_unix.c): path names, the abstract namespace,
// datagrams and SCM_RIGHTS/SCM_CREDENTIALS.
//
// A path-name socket is a host inode created at bind (a socket node where
// the host allows mknod, else an empty file), so stat and unlink see it
// as on Linux; the socket itself lives in netStack.unixPaths under that
// inode's device and number (unixInodeKey), as Linux finds a bound socket
// by its inode (unix_find_bsd). bind and connect look the name up as
// every other path argument is (lookupAt: relative names from the cwd's
// directory, symlinks and ".." by the host kernel, --root confinement),
// so a socket stays reachable after a rename of itself or of a directory
// above it; after an unlink the name is free again.

const (
	unixPathMax   = 108
	unixDgramQlen = 512 // net.unix.max_dgram_qlen
	solSOCKETcmsg = 1
	scmRIGHTS     = 1
	scmCREDS      = 2
)

// sockAddr is a socket address of any family.
type sockAddr struct {
	family   int
	name     string // AF_UNIX: path (as bound) or abstract name
	abstract bool
	hostKey  string // AF_UNIX path: the bound inode (unixInodeKey, table key)
	ip       [16]byte
	port     uint16
	scope    uint32
	// AF_NETLINK: the port id and multicast groups (sockaddr_nl).
	nlPid, nlGroups uint32
}

// encode is the address as the guest's struct sockaddr.
func (a sockAddr) encode() []byte {
	switch a.family {
	case afUNIX:
		b := []byte{afUNIX, 0}
		switch {
		case a.abstract:
			b = append(append(b, 0), a.name...)
		case a.name != "":
			b = append(append(b, a.name...), 0)
		}
		return b
	case afINET:
		b := make([]byte, 16)
		binary.LittleEndian.PutUint16(b, afINET)
		binary.BigEndian.PutUint16(b[2:], a.port)
		copy(b[4:8], a.ip[12:])
		return b
	case afINET6:
		b := make([]byte, 28)
		binary.LittleEndian.PutUint16(b, afINET6)
		binary.BigEndian.PutUint16(b[2:], a.port)
		copy(b[8:24], a.ip[:])
		binary.LittleEndian.PutUint32(b[24:], a.scope)
		return b
	case afNETLINK:
		return a.encodeNetlink()
	}
	return nil
}

// parseUnixAddr decodes a sockaddr_un. An address of just the family is
// the request to autobind (unnamed: name "" and !abstract).
func parseUnixAddr(raw []byte) (sockAddr, Errno) {
	if len(raw) < 2 || binary.LittleEndian.Uint16(raw) != afUNIX {
		return sockAddr{}, EINVAL
	}
	a := sockAddr{family: afUNIX}
	p := raw[2:]
	if len(p) > unixPathMax {
		return sockAddr{}, EINVAL
	}
	if len(p) == 0 {
		return a, 0
	}
	if p[0] == 0 {
		a.abstract, a.name = true, string(p[1:])
		return a, 0
	}
	if i := strings.IndexByte(string(p), 0); i >= 0 {
		p = p[:i]
	}
	a.name = string(p)
	return a, 0
}

func (s *sock) unixBind(t *Task, raw []byte) Errno {
	a, e := parseUnixAddr(raw)
	if e != 0 {
		return e
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if s.bound {
		return EINVAL
	}
	switch {
	case a.abstract:
		if o, ok := ns.abstract[a.name]; ok && !o.closed {
			return EADDRINUSE
		}
		ns.abstract[a.name] = s
	case a.name == "":
		// Autobind: a 5-hex-digit abstract name, counted (Linux
		// draws it at random).
		for {
			ns.autobind++
			a.abstract, a.name = true, fmt.Sprintf("%05x", ns.autobind&0xfffff)
			if o, ok := ns.abstract[a.name]; !ok || o.closed {
				break
			}
		}
		ns.abstract[a.name] = s
	default:
		fsys, name, e := t.unixPathLookup(a.name)
		if e != 0 {
			return e
		}
		t.tg.mu.Lock()
		umask := t.tg.umask
		t.tg.mu.Unlock()
		if err := mknodSocketVFS(fsys, name, 0o777&^umask); err != nil {
			if errnoOf(err) == EEXIST {
				return EADDRINUSE
			}
			return errnoOf(err)
		}
		fi, err := fsys.lstat(name)
		if err != nil {
			return errnoOf(err)
		}
		a.hostKey = unixInodeKey(fi)
		ns.unixPaths[a.hostKey] = s
	}
	s.local, s.bound = a, true
	return 0
}

// unbindLocked frees s's name or port.
func (s *sock) unbindLocked() {
	if !s.bound {
		return
	}
	ns := s.ns
	if s.family == afNETLINK {
		s.unbindNetlinkLocked()
		return
	}
	if s.family == afUNIX {
		if s.local.abstract {
			if ns.abstract[s.local.name] == s {
				delete(ns.abstract, s.local.name)
			}
		} else if ns.unixPaths[s.local.hostKey] == s {
			delete(ns.unixPaths, s.local.hostKey)
		}
		return
	}
	k := s.inetKey()
	l := ns.inet[k]
	for i, o := range l {
		if o == s {
			ns.inet[k] = append(l[:i:i], l[i+1:]...)
			break
		}
	}
	if len(ns.inet[k]) == 0 {
		delete(ns.inet, k)
	}
}

// unixLookupLocked finds the socket bound to a (ECONNREFUSED when the
// name exists but nobody is bound to it, ENOENT when it does not exist).
func (s *sock) unixLookupLocked(t *Task, a sockAddr) (*sock, Errno) {
	ns := s.ns
	var o *sock
	switch {
	case a.abstract:
		o = ns.abstract[a.name]
	case a.name == "":
		return nil, EINVAL
	default:
		fsys, name, e := t.unixPathLookup(a.name)
		if e != 0 {
			return nil, e
		}
		fi, err := fsys.stat(name)
		if err != nil {
			return nil, errnoOf(err)
		}
		if fi.Mode()&os.ModeSocket == 0 && fi.Mode().Type() != 0 {
			return nil, ECONNREFUSED
		}
		o = ns.unixPaths[unixInodeKey(fi)]
	}
	if o == nil || o.closed {
		return nil, ECONNREFUSED
	}
	if o.typ != s.typ {
		return nil, EPROTOTYPE
	}
	return o, 0
}

func (s *sock) unixConnect(t *Task, f *openFile, raw []byte) Errno {
	if !s.connOriented() && len(raw) >= 2 && binary.LittleEndian.Uint16(raw) == afUNSPEC {
		s.ns.mu.Lock()
		s.peer, s.hasPeer = nil, false
		s.ns.mu.Unlock()
		return 0
	}
	a, e := parseUnixAddr(raw)
	if e != 0 {
		return e
	}
	ns := s.ns
	ns.mu.Lock()
	o, e := s.unixLookupLocked(t, a)
	if e != 0 {
		ns.mu.Unlock()
		return e
	}
	if !s.connOriented() {
		s.peer, s.hasPeer, s.remote = o, true, o.local
		s.peerCred = o.cred
		ns.mu.Unlock()
		return 0
	}
	switch s.state {
	case ssConnected:
		ns.mu.Unlock()
		return EISCONN
	case ssConnecting:
		ns.mu.Unlock()
		return EALREADY
	case ssListening:
		ns.mu.Unlock()
		return EINVAL
	}
	if o.state != ssListening {
		ns.mu.Unlock()
		return ECONNREFUSED
	}
	if !s.bound {
		s.local = sockAddr{family: afUNIX}
	}
	return s.connectStream(t, f, o, o.local)
}

// sendDgram sends one datagram (AF_UNIX or UDP).
func (s *sock) sendDgram(t *Task, b []byte, to *sockAddr, rights []*openFile, cred *ucred, nonblock bool, flags int) (int, Errno) {
	if s.family != afUNIX {
		return s.sendUDP(t, b, to, flags)
	}
	ns := s.ns
	sender := t.ucred()
	if cred != nil {
		sender = *cred
	}
	if len(b) > sockBufDefault-32 {
		return 0, EMSGSIZE
	}
	for {
		ns.mu.Lock()
		if s.shutWr {
			ns.mu.Unlock()
			return 0, t.sockPipe(EPIPE, flags)
		}
		var o *sock
		var e Errno
		switch {
		case to != nil:
			o, e = s.unixLookupLocked(t, *to)
		case s.hasPeer:
			o = s.peer
			if o.closed {
				e = ECONNREFUSED
			}
		default:
			e = ENOTCONN
		}
		if e == 0 && o.hasPeer && o.peer != s && !o.peer.closed {
			e = EPERM // the receiver is connected to someone else
		}
		if e != 0 {
			ns.mu.Unlock()
			return 0, e
		}
		if o.shutRd {
			ns.mu.Unlock()
			return 0, t.sockPipe(EPIPE, flags)
		}
		if len(o.rq) == 0 || len(o.rq) < unixDgramQlen && o.roomLocked() >= len(b) {
			o.rq = append(o.rq, sockMsg{data: append([]byte(nil), b...), from: s.local, rights: rights, cred: sender})
			o.rqBytes += len(b)
			o.notifyLocked()
			ns.mu.Unlock()
			return len(b), 0
		}
		ns.mu.Unlock()
		if nonblock {
			return 0, EAGAIN
		}
		if e := s.blockOn(t, o, func() bool {
			return o.closed || len(o.rq) < unixDgramQlen && o.roomLocked() >= len(b)
		}, s.sndTimeo); e != 0 {
			return 0, e
		}
	}
}

// parseAddr decodes a destination address for s's family.
func (s *sock) parseAddr(raw []byte) (sockAddr, Errno) {
	if s.family == afNETLINK {
		return parseNetlinkAddr(raw)
	}
	if s.family == afUNIX {
		a, e := parseUnixAddr(raw)
		if e == 0 && !a.abstract && a.name == "" {
			return a, EINVAL
		}
		return a, e
	}
	return s.parseInetAddr(raw, false)
}

// parseCmsgs reads the control messages of a sendmsg.
func (t *Task) parseCmsgs(s *sock, addr, n uint64) (rights []*openFile, cred *ucred, e Errno) {
	if n > 1<<16 {
		return nil, nil, ENOBUFS
	}
	b, e := t.readBuf(addr, n)
	if e != 0 {
		return nil, nil, e
	}
	le := binary.LittleEndian
	fail := func(e Errno) ([]*openFile, *ucred, Errno) {
		for _, f := range rights {
			dropInFlight(f)
		}
		return nil, nil, e
	}
	for off := uint64(0); off+16 <= n; {
		l := le.Uint64(b[off:])
		if l < 16 || l > n-off { // not off+l: a huge l wraps
			return fail(EINVAL)
		}
		level, typ := int32(le.Uint32(b[off+8:])), int32(le.Uint32(b[off+12:]))
		data := b[off+16 : off+l]
		switch {
		case level == solSOCKETcmsg && typ == scmRIGHTS && s.family == afUNIX:
			if len(rights)+len(data)/4 > scmMaxFD {
				return fail(EINVAL)
			}
			for i := 0; i+4 <= len(data); i += 4 {
				f, ok := t.tg.fds.get(int32(le.Uint32(data[i:])))
				if !ok {
					return fail(EBADF)
				}
				f.refs.Add(1)
				rights = append(rights, f)
			}
		case level == solSOCKETcmsg && typ == scmCREDS && s.family == afUNIX:
			if len(data) < 12 {
				return fail(EINVAL)
			}
			c := ucred{le.Uint32(data), le.Uint32(data[4:]), le.Uint32(data[8:])}
			own := t.ucred()
			if c.pid != own.pid || c.uid != own.uid || c.gid != own.gid {
				if own.uid != 0 {
					return fail(EPERM)
				}
			}
			cred = &c
		case level == solSOCKETcmsg && (typ == scmRIGHTS || typ == scmCREDS):
			// On INET: ignored, as Linux's __sock_cmsg_send does.
		default:
			t.sockUnimpl(fmt.Sprintf("control message level %d type %d on %s", level, typ, famName2(s.family)))
			return fail(EINVAL)
		}
		off += (l + 7) &^ 7
	}
	return rights, cred, 0
}

func famName2(f int) string {
	switch f {
	case afUNIX:
		return "AF_UNIX"
	case afINET:
		return "AF_INET"
	case afINET6:
		return "AF_INET6"
	}
	return famName(f)
}

// buildCmsgs turns what a receive took into control messages that fit
// in space bytes: SCM_CREDENTIALS (with SO_PASSCRED) then SCM_RIGHTS
// (installing the descriptors). Descriptors that do not fit are closed
// and trunc reported (MSG_CTRUNC).
func (t *Task) buildCmsgs(s *sock, r recvResult, space uint64, flags int) (out []byte, trunc bool) {
	le := binary.LittleEndian
	putAt := func(level, typ uint32, data []byte) bool {
		need := 16 + uint64(len(data))
		if uint64(len(out))+need > space {
			return false
		}
		var h [16]byte
		le.PutUint64(h[:], need)
		le.PutUint32(h[8:], level)
		le.PutUint32(h[12:], typ)
		out = append(append(out, h[:]...), data...)
		for len(out)%8 != 0 && uint64(len(out)) < space {
			out = append(out, 0)
		}
		return true
	}
	put := func(typ uint32, data []byte) bool { return putAt(solSOCKETcmsg, typ, data) }
	if s.raw != nil && r.ip != nil {
		for _, c := range s.rawCmsgs(r.ip) { // socket_rawip.go
			if !putAt(c.level, c.typ, c.data) {
				// put_cmsg copies what fits of a message that does
				// not, with cmsg_len cut to it, and that fills
				// the buffer.
				trunc = true
				if rem := int(space) - len(out); rem >= 16 {
					var h [16]byte
					le.PutUint64(h[:], uint64(rem))
					le.PutUint32(h[8:], c.level)
					le.PutUint32(h[12:], c.typ)
					out = append(append(out, h[:]...), c.data[:min(rem-16, len(c.data))]...)
				}
				break
			}
		}
	}
	if s.family == afUNIX && r.hasMsg {
		s.ns.mu.Lock()
		pass := s.opts[sockOpt{solSOCKET, soPASSCRED}] != 0
		s.ns.mu.Unlock()
		if pass && !put(scmCREDS, r.cred.bytes()) {
			trunc = true
		}
	}
	if len(r.rights) > 0 {
		fit := 0
		if free := int64(space) - int64(len(out)) - 16; free > 0 {
			fit = min(len(r.rights), int(free/4))
		}
		var fds []byte
		for i, f := range r.rights {
			if i < fit {
				fd, e := t.tg.fds.alloc(f, 0, flags&msgCMSG_CLOEXEC != 0)
				if e == 0 {
					fds = le.AppendUint32(fds, uint32(fd))
				} else {
					trunc = true
				}
			} else {
				trunc = true
			}
			t.tg.fds.release(f) // the in-flight reference
		}
		if len(fds) > 0 {
			put(scmRIGHTS, fds)
		}
	}
	return out, trunc
}

// ENOBUFS: a control buffer too large.
const ENOBUFS Errno = 105

// unixPathLookup is where a path-name socket address resolves: relative
// to the cwd, as bind and connect take it (unix_bind's and
// unix_find_bsd's AT_FDCWD lookups).
func (t *Task) unixPathLookup(p string) (vfs, string, Errno) {
	g, e := t.guestPath(atFDCWD, p)
	if e != 0 {
		return nil, "", e
	}
	fsys, name := t.lookupAt(g, pathArg{dirfd: atFDCWD, p: p})
	return fsys, name, 0
}

// unixInodeKey is netStack.unixPaths' key for the host inode fi
// describes: its device and inode number.
func unixInodeKey(fi fs.FileInfo) string {
	st := statFromInfo(fi)
	return fmt.Sprintf("%d:%d", st.dev, st.ino)
}
