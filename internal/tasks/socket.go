package tasks

import (
	"encoding/binary"
	"runtime"
	"sync"
	"weak"

	"github.com/uvm-emu/uvm/internal/signals"
)

// Sockets: a deterministic in-kernel network (net/socket.c, net/unix/,
// net/ipv4/ and net/ipv6/ as landmarks). Nothing reaches the host's
// network: AF_UNIX sockets and AF_INET/AF_INET6 loopback (TCP as a
// reliable byte stream over in-kernel buffers, UDP as a datagram queue)
// connect guest threads and processes of one uvm run. Blocking goes
// through Task.wait, so every operation works under both schedulers, and
// nothing depends on host time or randomness (ephemeral ports count up
// from 32768, inode numbers count up from 1).
//
// One lock (netStack.mu) protects every socket of a kernel; each socket
// has a channel closed at its next readiness change (pollWaker).
//
// socket.go holds the socket object, its file operations and the
// syscalls; socket_unix.go the AF_UNIX names and SCM_* messages;
// socket_inet.go the loopback addresses, ports and options.

// Address families, socket types and flags (the same on arm64 and x86-64).
const (
	afUNSPEC = 0
	afUNIX   = 1
	afINET   = 2
	afINET6  = 10

	sockSTREAM    = 1
	sockDGRAM     = 2
	sockRAW       = 3
	sockSEQPACKET = 5
	sockNONBLOCK  = oNONBLOCK
	sockCLOEXEC   = oCLOEXEC

	ipprotoIP   = 0
	ipprotoTCP  = 6
	ipprotoUDP  = 17
	ipprotoIPV6 = 41

	msgOOB          = 0x1
	msgPEEK         = 0x2
	msgDONTROUTE    = 0x4
	msgCTRUNC       = 0x8
	msgTRUNC        = 0x20
	msgDONTWAIT     = 0x40
	msgEOR          = 0x80
	msgWAITALL      = 0x100
	msgERRQUEUE     = 0x2000
	msgNOSIGNAL     = 0x4000
	msgMORE         = 0x8000
	msgWAITFORONE   = 0x10000
	msgCMSG_CLOEXEC = 0x40000000

	shutRD   = 0
	shutWR   = 1
	shutRDWR = 2

	pollPRI   = 0x2
	pollERR   = 0x8
	pollRDHUP = 0x2000
)

// Socket errnos (asm-generic values).
const (
	ENOTSOCK        Errno = 88
	EDESTADDRREQ    Errno = 89
	EMSGSIZE        Errno = 90
	EPROTOTYPE      Errno = 91
	ENOPROTOOPT     Errno = 92
	EPROTONOSUPPORT Errno = 93
	ESOCKTNOSUPPORT Errno = 94
	EOPNOTSUPP      Errno = 95
	EAFNOSUPPORT    Errno = 97
	EADDRINUSE      Errno = 98
	EADDRNOTAVAIL   Errno = 99
	ENETUNREACH     Errno = 101
	ECONNABORTED    Errno = 103
	ECONNRESET      Errno = 104
	EISCONN         Errno = 106
	ENOTCONN        Errno = 107
	ECONNREFUSED    Errno = 111
	EALREADY        Errno = 114
	EINPROGRESS     Errno = 115
)

// Buffer sizes: the receive queue of a connection (what a writer may have
// queued before it blocks) and of a datagram socket.
const (
	sockBufDefault = 212992 // net.core.rmem_default / wmem_max
	sockMaxMsg     = 1 << 24
	udpMaxPayload  = 65507
	somaxconn      = 4096
	scmMaxFD       = 253
)

// netStack is a kernel's network: every socket, the AF_UNIX name tables
// and the bound inet ports. It holds no pointer back to the Kernel, so a
// finished Kernel (and with it its netStack) can be collected.
type netStack struct {
	// mu protects every field of every socket of the stack.
	mu        sync.Mutex
	unixPaths map[string]*sock // bound inode (unixInodeKey) → AF_UNIX socket
	abstract  map[string]*sock // abstract name → bound AF_UNIX socket
	inet      map[inetKey][]*sock
	nextPort  [2]uint16 // TCP, UDP: next ephemeral port to try
	nextIno   uint64
	autobind  uint32
	netlink   map[uint32]*sock // port id → bound AF_NETLINK socket
	raw       []*sock          // every open raw IP socket, in creation order (socket_rawip.go)
	ipID      uint16           // the last IPv4 identification given (nextIPIDLocked)
	live      map[uint64]*sock // inode → every socket not yet closed (/proc/net)
	lo        loopbackStats    // lo's counters (/proc/net/dev)
}

var netStacks sync.Map // weak.Pointer[Kernel] → *netStack

// net returns the kernel's network, creating it at the first socket.
func (k *Kernel) net() *netStack {
	wp := weak.Make(k)
	if v, ok := netStacks.Load(wp); ok {
		return v.(*netStack)
	}
	ns := &netStack{unixPaths: map[string]*sock{}, abstract: map[string]*sock{}, inet: map[inetKey][]*sock{}}
	v, loaded := netStacks.LoadOrStore(wp, ns)
	if !loaded {
		runtime.AddCleanup(k, func(wp weak.Pointer[Kernel]) { netStacks.Delete(wp) }, wp)
	}
	return v.(*netStack)
}

type sockState uint8

const (
	ssUnconnected sockState = iota
	ssListening
	ssConnecting // TCP/AF_UNIX stream: waiting in a full listener's queue
	ssConnected
)

// ucred is struct ucred (SO_PEERCRED, SCM_CREDENTIALS).
type ucred struct{ pid, uid, gid uint32 }

func (c ucred) bytes() []byte {
	b := make([]byte, 12)
	binary.LittleEndian.PutUint32(b, c.pid)
	binary.LittleEndian.PutUint32(b[4:], c.uid)
	binary.LittleEndian.PutUint32(b[8:], c.gid)
	return b
}

func (t *Task) ucred() ucred {
	return ucred{uint32(t.tg.pid), t.tg.k.uid(), t.tg.k.gid()}
}

// sockMsg is one queued message (a datagram, a SEQPACKET record, or a
// chunk of a byte stream with the ancillary data sent with it).
type sockMsg struct {
	data   []byte
	from   sockAddr
	rights []*openFile // SCM_RIGHTS in flight (each holds a reference)
	cred   ucred       // the sender (AF_UNIX)
	// csumBad: a raw IPv6 packet whose checksum the receiving socket
	// checks and finds wrong; the receive drops it (rawv6_recvmsg).
	csumBad bool
	ip      *ipRecvInfo // a raw socket's packet: what its IP control messages report
	// charge is what the message counts against the receive buffer
	// (a raw socket's packet: Linux's skb truesize); 0: its length.
	charge int
}

func (m *sockMsg) charged() int {
	if m.charge > 0 {
		return m.charge
	}
	return len(m.data)
}

// sock is a socket: its open file's operations and its protocol state.
type sock struct {
	fileBase
	ns     *netStack
	family int
	typ    int
	proto  int
	ino    uint64

	state    sockState
	bound    bool
	local    sockAddr
	remote   sockAddr
	hasPeer  bool  // remote is set (connected, or a datagram default)
	peer     *sock // the other end of a connection; AF_UNIX dgram: the connected target
	listener *sock // ssConnecting: the listener whose queue is full

	rq      []sockMsg
	rqBytes int
	backlog int
	acceptQ []*sock // established connections not yet accepted
	synQ    []*sock // connectors waiting for room in acceptQ

	shutRd, shutWr bool // shutdown(2) of this end
	closed         bool // released
	tcpReset       bool // TCP: wrote to a closed peer (the RST came back)
	soErr          Errno
	inProgress     bool // a non-blocking TCP connect reported EINPROGRESS
	finRead        bool // a read returned end of file (TCP: the FIN is consumed)

	cred, peerCred ucred
	opts           map[sockOpt]int32
	linger         [2]int32
	rcvTimeo       int64 // ns, 0: none
	sndTimeo       int64

	changed chan struct{} // closed at the next readiness change

	raw *rawSock // SOCK_RAW AF_INET/AF_INET6 (socket_rawip.go); nil for the others
}

func (ns *netStack) newSock(family, typ, proto int) *sock {
	ns.nextIno++
	s := &sock{ns: ns, family: family, typ: typ, proto: proto, ino: ns.nextIno,
		opts: map[sockOpt]int32{}, changed: make(chan struct{})}
	if ns.live == nil {
		ns.live = map[uint64]*sock{}
	}
	ns.live[s.ino] = s
	return s
}

func (s *sock) connOriented() bool {
	return s.typ != sockDGRAM && s.typ != sockRAW && s.family != afNETLINK
}
func (s *sock) isInet() bool { return s.family == afINET || s.family == afINET6 }
func (s *sock) isTCP() bool  { return s.isInet() && s.typ == sockSTREAM }
func (s *sock) isUDP() bool  { return s.isInet() && s.typ == sockDGRAM }

// notifyLocked wakes whoever waits on s (ns.mu held).
func (s *sock) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// wakeup returns a channel closed at s's next readiness change
// (pollWaker).
func (s *sock) wakeup() <-chan struct{} {
	s.ns.mu.Lock()
	defer s.ns.mu.Unlock()
	return s.changed
}

// rcvShutLocked: nothing more will arrive (reads return EOF when the
// queue is empty).
func (s *sock) rcvShutLocked() bool {
	if s.shutRd {
		return true
	}
	if s.state == ssConnected && s.connOriented() {
		p := s.peer
		return p == nil || p.closed || p.shutWr
	}
	return false
}

// sndShutLocked: a write fails (EPIPE) rather than blocks.
func (s *sock) sndShutLocked() bool {
	if s.shutWr {
		return true
	}
	if s.state == ssConnected && s.connOriented() {
		p := s.peer
		if s.isTCP() {
			return p == nil || p.closed && s.tcpReset
		}
		return p == nil || p.closed || p.shutRd
	}
	return false
}

func (s *sock) rcvbuf() int {
	if v, ok := s.opts[sockOpt{solSOCKET, soRCVBUF}]; ok {
		return int(v)
	}
	return sockBufDefault
}

// roomLocked: how many bytes a writer may add to s's receive queue.
func (s *sock) roomLocked() int { return s.rcvbuf() - s.rqBytes }

// pollLocked is the socket's poll mask (all events, ns.mu held).
func (s *sock) pollLocked() uint16 {
	var rev uint16
	if s.soErr != 0 {
		rev |= pollERR
	}
	switch {
	case s.state == ssListening:
		if len(s.acceptQ) > 0 {
			rev |= pollIN
		}
		return rev
	case s.connOriented():
		if s.state == ssConnecting {
			return rev
		}
		rcv, snd := s.rcvShutLocked(), s.sndShutLocked()
		if len(s.rq) > 0 || rcv {
			rev |= pollIN
		}
		if rcv {
			rev |= pollRDHUP
		}
		if rcv && snd || s.state == ssUnconnected {
			rev |= pollHUP
		}
		if s.state == ssUnconnected || snd || s.peer != nil && s.peer.roomLocked() > 0 {
			rev |= pollOUT
		}
	default:
		if len(s.rq) > 0 || s.shutRd {
			rev |= pollIN
		}
		if s.shutRd {
			// datagram_poll (UDP, raw, AF_UNIX datagram): RCV_SHUTDOWN
			// is EPOLLRDHUP too, both directions EPOLLHUP.
			rev |= pollRDHUP
			if s.shutWr {
				rev |= pollHUP
			}
		}
		if s.family == afUNIX && s.peer != nil && !s.peer.closed && s.peer.roomLocked() <= 0 {
			break
		}
		rev |= pollOUT
	}
	return rev
}

func (s *sock) poll(events uint16) uint16 {
	s.ns.mu.Lock()
	rev := s.pollLocked()
	s.ns.mu.Unlock()
	return rev & (events | pollHUP | pollERR)
}

func (s *sock) stat(t *Task, _ *openFile) (hostStat, Errno) {
	st := t.anonStat(sIFSOCK | 0o777)
	st.ino = s.ino
	return st, 0
}

func (s *sock) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if off >= 0 {
		return nil, ESPIPE
	}
	m, e := s.recv(t, f, int(n), 0)
	return m.data, e
}

func (s *sock) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if off >= 0 {
		return 0, ESPIPE
	}
	n, e := s.send(t, f, b, nil, nil, nil, 0)
	return uint64(n), e
}

// release closes the socket: the peer sees EOF (TCP: a reset if data was
// left unread), queued connections are refused, in-flight descriptors
// are dropped.
func (s *sock) release() {
	ns := s.ns
	ns.mu.Lock()
	drop := s.closeLocked()
	ns.mu.Unlock()
	for _, f := range drop {
		dropInFlight(f)
	}
}

func (s *sock) closeLocked() (drop []*openFile) {
	if s.closed {
		return nil
	}
	s.closed = true
	delete(s.ns.live, s.ino)
	s.unbindLocked()
	if s.raw != nil {
		s.unhashRawLocked()
	}
	for _, m := range s.rq {
		drop = append(drop, m.rights...)
	}
	if p := s.peer; p != nil && s.connOriented() && s.state == ssConnected {
		// SO_LINGER on with a zero timeout is an abortive close: Linux
		// sends a reset (tcp_close: tcp_disconnect), and the peer's
		// next read after its queued data fails with ECONNRESET
		// instead of seeing EOF (net's TestNotTemporaryRead).
		abort := s.linger[0] != 0 && s.linger[1] == 0
		if s.isTCP() && (len(s.rq) > 0 || abort) && !p.closed {
			// The reset closes both directions of the peer: POLLHUP,
			// and a write after the error is read fails with EPIPE.
			p.soErr, p.tcpReset = ECONNRESET, true
		}
		p.notifyLocked()
	}
	s.rq, s.rqBytes = nil, 0
	for _, c := range s.acceptQ {
		drop = append(drop, c.closeLocked()...)
	}
	s.acceptQ = nil
	for _, c := range s.synQ {
		c.state, c.listener, c.soErr = ssUnconnected, nil, ECONNREFUSED
		c.notifyLocked()
	}
	s.synQ = nil
	if s.state == ssConnecting && s.listener != nil {
		l := s.listener
		for i, c := range l.synQ {
			if c == s {
				l.synQ = append(l.synQ[:i:i], l.synQ[i+1:]...)
				break
			}
		}
	}
	s.notifyLocked()
	return drop
}

// dropInFlight releases a descriptor that was in flight in a socket
// (called without ns.mu: it may release a socket in turn).
func dropInFlight(f *openFile) {
	if f.refs.Add(-1) == 0 {
		f.ops.release()
	}
}

// errnoSignal returns e and sends SIGPIPE for EPIPE unless MSG_NOSIGNAL.
func (t *Task) sockPipe(e Errno, flags int) Errno {
	if e == EPIPE && flags&msgNOSIGNAL == 0 {
		t.tg.sendSignal(signals.KernelInfo(signals.SIGPIPE), t)
	}
	return e
}

// block waits for ready (checked under ns.mu) with the socket's timeout
// (ns; 0: none). It returns 0 to retry, EAGAIN at the timeout, or the
// restart code for a signal.
func (s *sock) block(t *Task, ready func() bool, timeo int64) Errno {
	return s.blockOn(t, s, ready, timeo)
}

// blockOn is block waiting for changes of w (a datagram sender waits for
// room in the receiver).
func (s *sock) blockOn(t *Task, w *sock, ready func() bool, timeo int64) Errno {
	locked := func() bool {
		s.ns.mu.Lock()
		defer s.ns.mu.Unlock()
		return ready()
	}
	return t.sockWait(locked, w.wakeup, timeo)
}

// sockWait is a socket's blocking wait (sk_wait_event) for both the
// in-kernel and the host sockets: it returns 0 to retry, EAGAIN at the
// timeout (SO_RCVTIMEO/SO_SNDTIMEO in ns; 0: none), or, for a signal,
// EINTR when a timeout was set (Linux never restarts those) and the
// restart code otherwise.
func (t *Task) sockWait(ready func() bool, wake func() <-chan struct{}, timeo int64) Errno {
	to := int64(-1)
	if timeo > 0 {
		to = timeo
	}
	timedOut := t.wait(ready, wake, to)
	if t.killed.Load() {
		return EINTR
	}
	if t.sigPending() && !ready() {
		if timeo > 0 {
			return EINTR
		}
		return Errno(erestartsys)
	}
	if timedOut {
		return EAGAIN
	}
	return 0
}

// send queues b (with ancillary rights/cred) on the connection or to to.
// It returns the count sent.
func (s *sock) send(t *Task, f *openFile, b []byte, to *sockAddr, rights []*openFile, cred *ucred, flags int) (int, Errno) {
	if s.raw != nil {
		return s.rawSend(t, b, nil, flags) // write(2); sendTo takes the addressed sends
	}
	if flags&msgOOB != 0 {
		t.sockUnimpl("socket flag MSG_OOB")
		return 0, EOPNOTSUPP
	}
	nonblock := f.flags&oNONBLOCK != 0 || flags&msgDONTWAIT != 0
	if s.family == afNETLINK {
		return s.netlinkSend(t, b, to) // socket_netlink.go
	}
	if !s.connOriented() {
		return s.sendDgram(t, b, to, rights, cred, nonblock, flags)
	}
	ns := s.ns
	done := 0
	sender := t.ucred()
	if cred != nil {
		sender = *cred
	}
	for {
		ns.mu.Lock()
		if s.soErr != 0 && s.isTCP() {
			e := s.soErr
			s.soErr = 0
			ns.mu.Unlock()
			return done, e
		}
		if s.state != ssConnected {
			st := s.state
			ns.mu.Unlock()
			if s.isTCP() && st != ssConnecting {
				return 0, t.sockPipe(EPIPE, flags)
			}
			return 0, ENOTCONN
		}
		if s.sndShutLocked() {
			ns.mu.Unlock()
			if done > 0 {
				return done, 0
			}
			return 0, t.sockPipe(EPIPE, flags)
		}
		p := s.peer
		if s.isTCP() && p.closed {
			// The data reaches a closed socket, whose reset makes
			// the next write fail.
			s.tcpReset = true
			s.notifyLocked()
			ns.mu.Unlock()
			return len(b), 0
		}
		if s.typ == sockSEQPACKET {
			if len(b) > p.rcvbuf() {
				ns.mu.Unlock()
				return 0, EMSGSIZE
			}
			if p.roomLocked() >= len(b) || p.rqBytes == 0 {
				p.rq = append(p.rq, sockMsg{data: append([]byte(nil), b...), from: s.local, rights: rights, cred: sender})
				p.rqBytes += len(b)
				p.notifyLocked()
				ns.mu.Unlock()
				return len(b), 0
			}
		} else if len(b) == 0 {
			ns.mu.Unlock()
			return 0, 0
		} else if room := p.roomLocked(); room > 0 {
			k := min(room, len(b)-done)
			m := sockMsg{data: append([]byte(nil), b[done:done+k]...), from: s.local, cred: sender}
			if done == 0 {
				m.rights = rights
			}
			p.rq = append(p.rq, m)
			p.rqBytes += k
			if s.isTCP() {
				ns.loXmitLocked(s, k)
			}
			done += k
			p.notifyLocked()
			if done == len(b) {
				ns.mu.Unlock()
				return done, 0
			}
			ns.mu.Unlock()
			continue
		}
		ns.mu.Unlock()
		if nonblock {
			if done > 0 {
				return done, 0
			}
			return 0, EAGAIN
		}
		if e := s.block(t, func() bool {
			return s.state != ssConnected || s.sndShutLocked() || s.soErr != 0 || s.peer.closed || s.peer.roomLocked() > 0
		}, s.sndTimeo); e != 0 {
			if done > 0 {
				return done, 0
			}
			return 0, e
		}
	}
}

// recvResult is what a receive took.
type recvResult struct {
	data   []byte
	full   int // the message's whole length (datagrams: for MSG_TRUNC)
	from   sockAddr
	rights []*openFile
	cred   ucred
	hasMsg bool
	flags  int         // msg_flags
	ip     *ipRecvInfo // a raw socket's packet (socket_rawip.go)
}

// recv takes up to n bytes.
func (s *sock) recv(t *Task, f *openFile, n int, flags int) (recvResult, Errno) {
	var r recvResult
	if flags&msgOOB != 0 {
		t.sockUnimpl("socket flag MSG_OOB")
		return r, EOPNOTSUPP
	}
	nonblock := f.flags&oNONBLOCK != 0 || flags&msgDONTWAIT != 0
	if s.raw != nil && flags&msgERRQUEUE != 0 {
		// ip_recv_error: no ICMP error is ever queued on a raw
		// socket here (socket_rawip.go), so the error queue is empty.
		return r, EAGAIN
	}
	peek := flags&msgPEEK != 0
	ns := s.ns
	for {
		ns.mu.Lock()
		if s.state == ssListening {
			ns.mu.Unlock()
			if s.isTCP() {
				return r, ENOTCONN
			}
			return r, EINVAL
		}
		if s.connOriented() && s.state != ssConnected && len(s.rq) == 0 {
			ns.mu.Unlock()
			if s.soErr != 0 {
				return r, s.takeErr()
			}
			if s.isTCP() {
				return r, ENOTCONN
			}
			return r, EINVAL
		}
		if len(s.rq) > 0 {
			if s.typ == sockSTREAM {
				s.takeStreamLocked(&r, n, peek)
				if flags&msgWAITALL != 0 && !peek && len(r.data) < n && !s.rcvShutLocked() && s.soErr == 0 {
					ns.mu.Unlock()
					if nonblock {
						return r, 0
					}
					if e := s.block(t, func() bool { return len(s.rq) > 0 || s.rcvShutLocked() || s.soErr != 0 }, s.rcvTimeo); e != 0 {
						return r, 0
					}
					continue
				}
			} else {
				m := s.rq[0]
				if m.csumBad {
					// rawv6_recvmsg's csum_copy_err: the datagram is
					// dropped, and the error "masquerades as some
					// normal condition".
					s.rq = s.rq[1:]
					s.rqBytes -= m.charged()
					s.raw.drops++
					ns.mu.Unlock()
					if flags&msgDONTWAIT != 0 {
						return r, EAGAIN
					}
					return r, EHOSTUNREACH
				}
				r.hasMsg, r.from, r.cred, r.ip = true, m.from, m.cred, m.ip
				r.full = len(m.data)
				r.data = append(r.data, m.data[:min(n, len(m.data))]...)
				if len(m.data) > n {
					r.flags |= msgTRUNC
				}
				if !peek {
					r.rights = m.rights
					s.rq = s.rq[1:]
					s.rqBytes -= m.charged()
					s.freedLocked()
				} else {
					r.rights = nil
				}
			}
			ns.mu.Unlock()
			return r, 0
		}
		if len(r.data) > 0 {
			ns.mu.Unlock()
			return r, 0
		}
		if s.soErr != 0 {
			e := s.soErr
			s.soErr = 0
			ns.mu.Unlock()
			return r, e
		}
		if !s.connOriented() && nonblock {
			// __skb_recv_datagram (UDP, raw, AF_UNIX datagram): with no
			// time to wait the empty queue is EAGAIN before the
			// shutdown is looked at.
			ns.mu.Unlock()
			return r, EAGAIN
		}
		if s.rcvShutLocked() {
			if !peek {
				s.finRead = true
			}
			ns.mu.Unlock()
			return r, 0
		}
		ns.mu.Unlock()
		if nonblock {
			return r, EAGAIN
		}
		if e := s.block(t, func() bool {
			return len(s.rq) > 0 || s.rcvShutLocked() || s.soErr != 0 || s.connOriented() && s.state != ssConnected
		}, s.rcvTimeo); e != 0 {
			return r, e
		}
	}
}

func (s *sock) takeErr() Errno {
	s.ns.mu.Lock()
	defer s.ns.mu.Unlock()
	e := s.soErr
	s.soErr = 0
	return e
}

// takeStreamLocked copies up to n-len(r.data) bytes of the byte stream
// into r. It stops before a chunk that carries descriptors once it has
// data, so descriptors arrive with the bytes they were sent with.
func (s *sock) takeStreamLocked(r *recvResult, n int, peek bool) {
	i, off := 0, 0
	for i < len(s.rq) && len(r.data) < n {
		m := &s.rq[i]
		if len(m.rights) > 0 && (len(r.data) > 0 || r.rights != nil) {
			break
		}
		if !r.hasMsg {
			r.hasMsg, r.from, r.cred = true, m.from, m.cred
		}
		k := min(n-len(r.data), len(m.data))
		r.data = append(r.data, m.data[:k]...)
		if !peek {
			if len(m.rights) > 0 {
				r.rights = m.rights
				m.rights = nil
			}
			m.data = m.data[k:]
			s.rqBytes -= k
			if len(m.data) == 0 {
				i++
			}
		} else {
			i++
		}
		off++
	}
	if !peek {
		s.rq = s.rq[i:]
		if len(s.rq) == 0 {
			s.rq = nil
		}
		if off > 0 {
			s.freedLocked()
		}
	}
	r.full = len(r.data)
}

// freedLocked tells the writers of s that its queue has room.
func (s *sock) freedLocked() {
	if s.peer != nil {
		s.peer.notifyLocked()
	}
	if s.family == afUNIX && s.typ == sockDGRAM {
		// Unconnected senders wait on the receiver itself.
		s.notifyLocked()
	}
}

// sockUnimpl logs one line the first time the guest asks for a socket
// feature uvm does not have.
func (t *Task) sockUnimpl(what string) {
	if t.tg.k.noteUnimplemented(what) {
		t.tg.k.logf("unimplemented %s at pc 0x%x", what, t.cpu.PC())
	}
}

// fileSock returns the socket behind fd.
func (t *Task) fileSock(fd int32) (*sock, *openFile, Errno) {
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return nil, nil, EBADF
	}
	s, ok := f.ops.(*sock)
	if !ok {
		return nil, nil, ENOTSOCK
	}
	return s, f, 0
}

func (t *Task) installSock(s *sock, flags int) (int32, Errno) {
	f := &openFile{ops: s, path: "socket:[" + itoa(int(s.ino)) + "]", flags: oRDWR | flags&sockNONBLOCK}
	fd, e := t.tg.fds.alloc(f, 0, flags&sockCLOEXEC != 0)
	if e != 0 {
		s.release() // never installed: no close will free it
	}
	return fd, e
}

func famName(f int) string {
	switch f {
	case afUNSPEC:
		return "AF_UNSPEC"
	case 4:
		return "AF_IPX"
	case 16:
		return "AF_NETLINK"
	case 17:
		return "AF_PACKET"
	case 38:
		return "AF_ALG"
	case 40:
		return "AF_VSOCK"
	}
	return "family " + itoa(f)
}

// newSocket checks a socket(2) triple and makes the socket.
func (t *Task) newSocket(family, typ, proto int) (*sock, Errno) {
	base := typ & 0xf
	switch family {
	case afUNIX:
		if base == sockRAW {
			base = sockDGRAM // as unix_create does
		}
		if base != sockSTREAM && base != sockDGRAM && base != sockSEQPACKET {
			t.sockUnimpl("socket AF_UNIX type " + itoa(base))
			return nil, ESOCKTNOSUPPORT
		}
		if proto != 0 && proto != afUNIX {
			return nil, EPROTONOSUPPORT
		}
		proto = 0
	case afINET, afINET6:
		switch {
		case base == sockRAW:
			return t.newRawSock(family, typ, proto) // socket_rawip.go
		case base == sockSTREAM && (proto == 0 || proto == ipprotoTCP):
			proto = ipprotoTCP
		case base == sockDGRAM && (proto == 0 || proto == ipprotoUDP):
			proto = ipprotoUDP
		case base == sockSTREAM && proto == ipprotoMPTCP:
			// The in-kernel stack has no Multipath TCP: Linux built
			// without CONFIG_MPTCP answers EPROTONOSUPPORT (inet_create
			// finds no protocol), and Go's listeners, which probe it,
			// fall back to plain TCP on that errno. --net=host asks the
			// host kernel instead.
			t.sockUnimpl("socket " + famName2(family) + " IPPROTO_MPTCP (no Multipath TCP in the in-kernel stack: EPROTONOSUPPORT)")
			return nil, EPROTONOSUPPORT
		default:
			t.sockUnimpl("socket " + famName2(family) + " type " + itoa(base) + " protocol " + itoa(proto))
			return nil, EPROTONOSUPPORT
		}
	case afNETLINK:
		return t.newNetlinkSock(typ, proto) // socket_netlink.go
	default:
		t.sockUnimpl("socket family " + famName(family))
		return nil, EAFNOSUPPORT
	}
	if typ&^(0xf|sockNONBLOCK|sockCLOEXEC) != 0 {
		return nil, EINVAL
	}
	s := t.tg.k.net().newSockLocked(family, base, proto)
	s.cred = t.ucred()
	return s, 0
}

func (ns *netStack) newSockLocked(family, typ, proto int) *sock {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.newSock(family, typ, proto)
}

func sysSocket(t *Task, a [6]uint64) uint64 {
	s, e := t.newSocket(int(int32(a[0])), int(int32(a[1])), int(int32(a[2])))
	if e != 0 {
		return errRet(e)
	}
	return retFD(t.installSock(s, int(int32(a[1]))))
}

func sysSocketpair(t *Task, a [6]uint64) uint64 {
	family, typ := int(int32(a[0])), int(int32(a[1]))
	if family != afUNIX {
		if family == afINET || family == afINET6 {
			return errRet(EOPNOTSUPP)
		}
	}
	s1, e := t.newSocket(family, typ, int(int32(a[2])))
	if e != 0 {
		return errRet(e)
	}
	s2 := s1.pair()
	fd1, e := t.installSock(s1, typ)
	if e != 0 {
		s2.release()
		return errRet(e)
	}
	fd2, e := t.installSock(s2, typ)
	if e != 0 {
		t.tg.fds.close(fd1)
		return errRet(e)
	}
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:], uint32(fd1))
	binary.LittleEndian.PutUint32(b[4:], uint32(fd2))
	if e := t.writeBytes(a[3], b[:]); e != 0 {
		t.tg.fds.close(fd1)
		t.tg.fds.close(fd2)
		return errRet(e)
	}
	return 0
}

// pair makes and returns s1's connected twin (socketpair).
func (s1 *sock) pair() *sock {
	ns := s1.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s2 := ns.newSock(s1.family, s1.typ, s1.proto)
	s2.cred = s1.cred
	s1.peer, s2.peer = s2, s1
	s1.peerCred, s2.peerCred = s1.cred, s1.cred
	s1.state, s2.state = ssConnected, ssConnected
	s1.hasPeer, s2.hasPeer = true, true
	s1.local.family, s2.local.family, s1.remote.family, s2.remote.family = afUNIX, afUNIX, afUNIX, afUNIX
	return s2
}

// readSockaddr reads a sockaddr argument.
func (t *Task) readSockaddr(addr, n uint64) ([]byte, Errno) {
	if int32(n) < 0 || n > 128 {
		return nil, EINVAL
	}
	if addr == 0 {
		if n == 0 {
			return nil, 0
		}
		return nil, EFAULT
	}
	return t.readBuf(addr, n)
}

// putSockaddr writes b to a (sockaddr, socklen_t *) result pair.
func (t *Task) putSockaddr(addr, lenAddr uint64, b []byte) Errno {
	if addr == 0 || lenAddr == 0 {
		return 0
	}
	lb, e := t.readBuf(lenAddr, 4)
	if e != 0 {
		return e
	}
	have := int32(binary.LittleEndian.Uint32(lb))
	if have < 0 {
		return EINVAL
	}
	if e := t.writeBytes(addr, b[:min(int(have), len(b))]); e != 0 {
		return e
	}
	return t.putU32(lenAddr, uint32(len(b)))
}

func sysBind(t *Task, a [6]uint64) uint64 {
	s, _, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	raw, e := t.readSockaddr(a[1], a[2])
	if e != 0 {
		return errRet(e)
	}
	switch s.family {
	case afUNIX:
		return errOr0(s.unixBind(t, raw))
	case afNETLINK:
		return errOr0(s.netlinkBind(t, raw))
	}
	if s.raw != nil {
		return errOr0(s.rawBind(raw))
	}
	return errOr0(s.inetBind(t, raw))
}

func sysListen(t *Task, a [6]uint64) uint64 {
	s, _, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	backlog := int(int32(a[1]))
	if backlog < 0 || backlog > somaxconn {
		backlog = somaxconn
	}
	if !s.connOriented() {
		return errRet(EOPNOTSUPP)
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	switch s.state {
	case ssListening:
		s.backlog = backlog
		return 0
	case ssUnconnected:
	default:
		return errRet(EINVAL)
	}
	if !s.bound {
		if s.family == afUNIX {
			return errRet(EINVAL)
		}
		if e := s.inetAutobindLocked(s.wildcard()); e != 0 {
			return errRet(e)
		}
	}
	if s.family != afUNIX {
		// A listener needs its port to itself unless both use SO_REUSEPORT.
		for _, o := range ns.inet[s.inetKey()] {
			if o != s && o.state == ssListening && inetOverlap(o, s) && !(o.reuse(soREUSEPORT) && s.reuse(soREUSEPORT)) {
				return errRet(EADDRINUSE)
			}
		}
	}
	s.state, s.backlog = ssListening, backlog
	s.notifyLocked()
	return 0
}

// acceptFullLocked: the listener's queue holds backlog+1 connections.
func (l *sock) acceptFullLocked() bool { return len(l.acceptQ) > l.backlog }

// establishLocked connects s to a new socket queued on listener l.
func (s *sock) establishLocked(l *sock, dst sockAddr) {
	ns := s.ns
	c := ns.newSock(l.family, l.typ, l.proto)
	c.cred = l.cred
	for k, v := range l.opts {
		c.opts[k] = v
	}
	c.state, c.bound, c.hasPeer = ssConnected, true, true
	c.local, c.remote, s.remote = l.local, s.local, dst
	if s.family != afUNIX {
		c.local, c.remote, s.remote = dst.in(l.family), s.local.in(l.family), dst.in(s.family)
	}
	c.peer, s.peer = s, c
	c.peerCred, s.peerCred = s.cred, l.cred
	s.state, s.hasPeer, s.listener = ssConnected, true, nil
	l.acceptQ = append(l.acceptQ, c)
	l.notifyLocked()
	s.notifyLocked()
}

// connectStream connects s to listener l (found by the family's lookup),
// waiting for room in l's queue unless non-blocking.
func (s *sock) connectStream(t *Task, f *openFile, l *sock, dst sockAddr) Errno {
	ns := s.ns
	nonblock := f.flags&oNONBLOCK != 0
	if !l.acceptFullLocked() {
		s.establishLocked(l, dst)
		if s.isTCP() && nonblock {
			s.inProgress = true
			ns.mu.Unlock()
			return EINPROGRESS
		}
		ns.mu.Unlock()
		return 0
	}
	if s.family == afUNIX && nonblock {
		ns.mu.Unlock()
		return EAGAIN
	}
	s.state, s.listener, s.remote = ssConnecting, l, dst
	l.synQ = append(l.synQ, s)
	s.inProgress = nonblock
	ns.mu.Unlock()
	if nonblock {
		return EINPROGRESS
	}
	for {
		ns.mu.Lock()
		if s.state != ssConnecting {
			st := s.state
			e := s.soErr
			if st != ssConnected {
				s.soErr = 0
			}
			ns.mu.Unlock()
			return e
		}
		ns.mu.Unlock()
		if e := s.block(t, func() bool { return s.state != ssConnecting }, s.sndTimeo); e != 0 {
			if e == EAGAIN {
				e = EINPROGRESS
			}
			return e
		}
	}
}

func sysConnect(t *Task, a [6]uint64) uint64 {
	s, f, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	raw, e := t.readSockaddr(a[1], a[2])
	if e != 0 {
		return errRet(e)
	}
	switch s.family {
	case afUNIX:
		return errOr0(s.unixConnect(t, f, raw))
	case afNETLINK:
		return errOr0(s.netlinkConnect(t, raw))
	}
	if s.raw != nil {
		return errOr0(s.rawConnect(t, raw))
	}
	return errOr0(s.inetConnect(t, f, raw))
}

func sysAccept4(t *Task, a [6]uint64) uint64 {
	flags := int(int32(a[3]))
	if flags&^(sockNONBLOCK|sockCLOEXEC) != 0 {
		return errRet(EINVAL)
	}
	s, f, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	if !s.connOriented() {
		return errRet(EOPNOTSUPP)
	}
	if !t.tg.fds.hasFree() {
		// do_accept takes the descriptor before it waits for a
		// connection: at the limit, EMFILE, and the queue is untouched.
		return errRet(EMFILE)
	}
	ns := s.ns
	for {
		ns.mu.Lock()
		if s.state != ssListening {
			ns.mu.Unlock()
			return errRet(EINVAL)
		}
		if len(s.acceptQ) > 0 {
			c := s.acceptQ[0]
			s.acceptQ = s.acceptQ[1:]
			if len(s.synQ) > 0 {
				w := s.synQ[0]
				s.synQ = s.synQ[1:]
				w.establishLocked(s, w.remote)
			}
			addr := c.remote.encode()
			ns.mu.Unlock()
			fd, e := t.installSock(c, flags) // releases c on failure
			if e != 0 {
				return errRet(e)
			}
			if e := t.putSockaddr(a[1], a[2], addr); e != 0 {
				return errRet(e)
			}
			return uint64(fd)
		}
		ns.mu.Unlock()
		if f.flags&oNONBLOCK != 0 {
			return errRet(EAGAIN)
		}
		if e := s.block(t, func() bool { return len(s.acceptQ) > 0 || s.state != ssListening }, s.rcvTimeo); e != 0 {
			return errRet(e)
		}
	}
}

func sysAccept(t *Task, a [6]uint64) uint64 {
	a[3] = 0
	return sysAccept4(t, a)
}

func sysGetsockname(t *Task, a [6]uint64) uint64 {
	s, _, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	s.ns.mu.Lock()
	addr := s.local
	if !s.bound && s.isInet() {
		addr = s.wildcard()
	}
	if s.raw != nil {
		addr = s.rawNameLocked()
	}
	if addr.family == 0 {
		// An unbound AF_UNIX (or netlink) socket: Linux answers the bare
		// family (unix_getname: sizeof(short)), never an empty address
		// (Go's net.UnixConn.LocalAddr of an unbound unixgram client
		// was nil: TestUnixgramZeroBytePayload crashed).
		addr = sockAddr{family: s.family}
	}
	b := addr.encode()
	s.ns.mu.Unlock()
	return errOr0(t.putSockaddr(a[1], a[2], b))
}

func sysGetpeername(t *Task, a [6]uint64) uint64 {
	s, _, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	s.ns.mu.Lock()
	if s.raw != nil {
		pa, e := s.rawPeerLocked()
		s.ns.mu.Unlock()
		if e != 0 {
			return errRet(e)
		}
		return errOr0(t.putSockaddr(a[1], a[2], pa.encode()))
	}
	ok := s.hasPeer && (s.state == ssConnected || !s.connOriented())
	if s.connOriented() && s.peer != nil && s.peer.closed && s.family == afUNIX {
		ok = false
	}
	b := s.remote.encode()
	s.ns.mu.Unlock()
	if !ok {
		return errRet(ENOTCONN)
	}
	return errOr0(t.putSockaddr(a[1], a[2], b))
}

func sysShutdown(t *Task, a [6]uint64) uint64 {
	s, _, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	how := int(int32(a[1]))
	if how < shutRD || how > shutRDWR {
		return errRet(EINVAL)
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if s.raw != nil && !s.raw.connected || s.isUDP() && !s.hasPeer {
		// inet_shutdown on a TCP_CLOSE socket (an unconnected UDP or
		// raw one): ENOTCONN, but the shutdown is recorded (to wake
		// pollers).
		s.shutRd = s.shutRd || how != shutWR
		s.shutWr = s.shutWr || how != shutRD
		s.notifyLocked()
		return errRet(ENOTCONN)
	}
	if s.connOriented() && s.state != ssConnected {
		if s.state == ssListening && s.isTCP() {
			// Linux: shutting a TCP listener down closes it for accept.
			for _, c := range s.acceptQ {
				c.closeLocked()
			}
			s.acceptQ, s.state = nil, ssUnconnected
			s.notifyLocked()
			return 0
		}
		return errRet(ENOTCONN)
	}
	if how != shutWR {
		s.shutRd = true
	}
	if how != shutRD {
		s.shutWr = true
	}
	s.notifyLocked()
	if s.peer != nil {
		s.peer.notifyLocked()
	}
	return 0
}

// sendTo is sendto/sendmsg's common part.
func (t *Task) sendTo(s *sock, f *openFile, data []byte, rawTo []byte, rights []*openFile, cred *ucred, flags int) (int, Errno) {
	if s.raw != nil {
		return s.rawSend(t, data, rawTo, flags) // socket_rawip.go
	}
	var to *sockAddr
	if rawTo != nil && !s.connOriented() {
		a, e := s.parseAddr(rawTo)
		if e != 0 {
			return 0, e
		}
		to = &a
	} else if rawTo != nil && s.isTCP() {
		s.ns.mu.Lock()
		st := s.state
		s.ns.mu.Unlock()
		if st == ssConnected {
			// Linux ignores the address on a connected TCP socket.
		} else {
			return 0, t.sockPipe(EPIPE, flags)
		}
	} else if rawTo != nil {
		s.ns.mu.Lock()
		st := s.state
		s.ns.mu.Unlock()
		if st == ssConnected {
			return 0, EISCONN
		}
	}
	return s.send(t, f, data, to, rights, cred, flags)
}

func sysSendto(t *Task, a [6]uint64) uint64 {
	s, f, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	if a[2] > sockMaxMsg {
		a[2] = sockMaxMsg
	}
	data, e := t.readBuf(a[1], a[2])
	if e != 0 {
		return errRet(e)
	}
	var rawTo []byte
	if a[4] != 0 {
		if rawTo, e = t.readSockaddr(a[4], a[5]); e != 0 {
			return errRet(e)
		}
	}
	n, e := t.sendTo(s, f, data, rawTo, nil, nil, int(int32(a[3])))
	return retOr(e, uint64(n))
}

func sysRecvfrom(t *Task, a [6]uint64) uint64 {
	s, f, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	flags := int(int32(a[3]))
	n := int(min(a[2], sockMaxMsg))
	r, e := s.recv(t, f, n, flags)
	if e != 0 {
		return errRet(e)
	}
	for _, rf := range r.rights { // recvfrom has no room for descriptors
		t.tg.fds.release(rf)
	}
	if e := t.writeBytes(a[1], r.data); e != 0 {
		return errRet(e)
	}
	if a[4] != 0 {
		if e := t.putSockaddr(a[4], a[5], s.fromBytes(r)); e != 0 {
			return errRet(e)
		}
	}
	if flags&msgTRUNC != 0 && !s.connOriented() {
		return uint64(r.full)
	}
	return uint64(len(r.data))
}

// fromBytes is the source address a receive reports.
func (s *sock) fromBytes(r recvResult) []byte {
	if !r.hasMsg {
		return nil
	}
	if s.connOriented() && s.family != afUNIX {
		s.ns.mu.Lock()
		defer s.ns.mu.Unlock()
		return s.remote.encode()
	}
	return r.from.encode()
}

// ipprotoMPTCP is IPPROTO_MPTCP (Multipath TCP).
const ipprotoMPTCP = 262

// msghdr offsets (LP64: the same on both arches).
const (
	mhName       = 0
	mhNameLen    = 8
	mhIov        = 16
	mhIovLen     = 24
	mhControl    = 32
	mhControlLen = 40
	mhFlags      = 48
	msghdrSize   = 56
	mmsghdrSize  = 64
)

type iovec struct{ base, len uint64 }

func (t *Task) readIovecs(addr, n uint64) ([]iovec, uint64, Errno) {
	if n > 1024 {
		return nil, 0, EMSGSIZE
	}
	raw, e := t.readBuf(addr, n*16)
	if e != 0 {
		return nil, 0, e
	}
	iov := make([]iovec, n)
	var total uint64
	for i := range iov {
		iov[i] = iovec{binary.LittleEndian.Uint64(raw[i*16:]), binary.LittleEndian.Uint64(raw[i*16+8:])}
		// A negative length, or a sum past ssize_t, is EINVAL (as
		// import_iovec).
		if int64(iov[i].len) < 0 || int64(total+iov[i].len) < 0 {
			return nil, 0, EINVAL
		}
		total += iov[i].len
	}
	if total > sockMaxMsg {
		total = sockMaxMsg
	}
	return iov, total, 0
}

// msgHeader is a guest msghdr with its iovec array read and checked
// (readIovecs), shared by the in-kernel and the host sockets' sendmsg and
// recvmsg.
type msgHeader struct {
	addr  uint64 // the msghdr's guest address
	raw   []byte // its msghdrSize bytes
	iov   []iovec
	total uint64 // the bytes the iovecs cover, at most sockMaxMsg
}

func (t *Task) readMsgHeader(mh uint64) (msgHeader, Errno) {
	raw, e := t.readBuf(mh, msghdrSize)
	if e != 0 {
		return msgHeader{}, e
	}
	le := binary.LittleEndian
	iov, total, e := t.readIovecs(le.Uint64(raw[mhIov:]), le.Uint64(raw[mhIovLen:]))
	if e != 0 {
		return msgHeader{}, e
	}
	return msgHeader{addr: mh, raw: raw, iov: iov, total: total}, 0
}

func (m msgHeader) field64(off int) uint64 { return binary.LittleEndian.Uint64(m.raw[off:]) }

// gatherMsg reads the bytes the iovecs cover and the destination address
// (msg_name, nil when absent) for sendmsg.
func (t *Task) gatherMsg(m msgHeader) (data, to []byte, e Errno) {
	data = make([]byte, 0, m.total)
	for _, v := range m.iov {
		n := min(v.len, m.total-uint64(len(data)))
		if n == 0 {
			continue
		}
		b, e := t.readBuf(v.base, n)
		if e != 0 {
			return nil, nil, e
		}
		data = append(data, b...)
	}
	if na := m.field64(mhName); na != 0 {
		if to, e = t.readSockaddr(na, uint64(binary.LittleEndian.Uint32(m.raw[mhNameLen:]))); e != 0 {
			return nil, nil, e
		}
	}
	return data, to, 0
}

// scatterMsg writes received bytes into the iovecs and, when the guest
// asked for it, the source address into msg_name (truncated to the
// guest's msg_namelen, which then says the full length), for recvmsg.
func (t *Task) scatterMsg(m msgHeader, data, from []byte) Errno {
	off := 0
	for _, v := range m.iov {
		if off >= len(data) {
			break
		}
		k := min(int(v.len), len(data)-off)
		if e := t.writeBytes(v.base, data[off:off+k]); e != 0 {
			return e
		}
		off += k
	}
	if na := m.field64(mhName); na != 0 {
		have := binary.LittleEndian.Uint32(m.raw[mhNameLen:])
		if e := t.writeBytes(na, from[:min(int(have), len(from))]); e != 0 {
			return e
		}
		if e := t.putU32(m.addr+mhNameLen, uint32(len(from))); e != 0 {
			return e
		}
	}
	return 0
}

// sendmsg1 sends one msghdr and returns the count sent.
func (t *Task) sendmsg1(s *sock, f *openFile, mh uint64, flags int) (int, Errno) {
	m, e := t.readMsgHeader(mh)
	if e != 0 {
		return 0, e
	}
	data, rawTo, e := t.gatherMsg(m)
	if e != 0 {
		return 0, e
	}
	var rights []*openFile
	var cred *ucred
	if cl := m.field64(mhControlLen); cl > 0 {
		if rights, cred, e = t.parseCmsgs(s, m.field64(mhControl), cl); e != 0 {
			return 0, e
		}
	}
	n, e := t.sendTo(s, f, data, rawTo, rights, cred, flags)
	if e != 0 || n == 0 && len(data) > 0 {
		for _, rf := range rights {
			dropInFlight(rf)
		}
	}
	return n, e
}

// recvmsg1 receives into one msghdr and returns the count received.
func (t *Task) recvmsg1(s *sock, f *openFile, mh uint64, flags int) (int, Errno) {
	m, e := t.readMsgHeader(mh)
	if e != 0 {
		return 0, e
	}
	r, e := s.recv(t, f, int(m.total), flags)
	if e != 0 {
		return 0, e
	}
	var from []byte
	if m.field64(mhName) != 0 {
		from = s.fromBytes(r)
	}
	if e := t.scatterMsg(m, r.data, from); e != 0 {
		return 0, e
	}
	// ____sys_recvmsg starts msg_flags from the caller's MSG_CMSG_CLOEXEC.
	mflags := r.flags | flags&msgCMSG_CLOEXEC
	ctl, trunc := t.buildCmsgs(s, r, m.field64(mhControlLen), flags)
	if trunc {
		mflags |= msgCTRUNC
	}
	if len(ctl) > 0 {
		if e := t.writeBytes(m.field64(mhControl), ctl); e != 0 {
			return 0, e
		}
	}
	if e := t.putU64(mh+mhControlLen, uint64(len(ctl))); e != 0 {
		return 0, e
	}
	if e := t.putU32(mh+mhFlags, uint32(mflags)); e != 0 {
		return 0, e
	}
	if flags&msgTRUNC != 0 && !s.connOriented() {
		return r.full, 0
	}
	return len(r.data), 0
}

func sysSendmsg(t *Task, a [6]uint64) uint64 {
	s, f, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	n, e := t.sendmsg1(s, f, a[1], int(int32(a[2])))
	return retOr(e, uint64(n))
}

func sysRecvmsg(t *Task, a [6]uint64) uint64 {
	s, f, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	n, e := t.recvmsg1(s, f, a[1], int(int32(a[2])))
	return retOr(e, uint64(n))
}

func sysSendmmsg(t *Task, a [6]uint64) uint64 {
	s, f, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	vlen := min(a[2], 1024)
	flags := int(int32(a[3]))
	var i uint64
	for ; i < vlen; i++ {
		mh := a[1] + i*mmsghdrSize
		n, e := t.sendmsg1(s, f, mh, flags)
		if e != 0 {
			if i == 0 {
				return errRet(e)
			}
			break
		}
		if e := t.putU32(mh+msghdrSize, uint32(n)); e != 0 {
			return errRet(e)
		}
	}
	return i
}

func sysRecvmmsg(t *Task, a [6]uint64) uint64 {
	mt, e := t.readMmsgTimeout(a[4])
	if e != 0 {
		return errRet(e)
	}
	s, f, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	return t.recvmmsg(a[1], a[2], int(int32(a[3])), mt, func(mh uint64, flags int) (int, Errno) {
		return t.recvmsg1(s, f, mh, flags)
	})
}

// ioctler is a file kind with ioctls of its own (sysIoctl asks it after
// the generic requests). handled is false for a request it does not know.
type ioctler interface {
	ioctl(t *Task, f *openFile, req, arg uint64) (ret uint64, handled bool)
}

const (
	ioFIONREAD  = 0x541b // = SIOCINQ
	ioSIOCOUTQ  = 0x5411
	ioSIOCATMRK = 0x8905
)

func (s *sock) ioctl(t *Task, f *openFile, req, arg uint64) (uint64, bool) {
	ns := s.ns
	switch req & 0xffffffff {
	case ioFIONREAD:
		ns.mu.Lock()
		n := s.rqBytes
		if s.typ == sockDGRAM || s.raw != nil {
			n = 0
			if len(s.rq) > 0 {
				n = len(s.rq[0].data)
			}
		}
		listening := s.state == ssListening
		ns.mu.Unlock()
		if listening {
			return errRet(EINVAL), true
		}
		return errOr0(t.putU32(arg, uint32(n))), true
	case ioSIOCOUTQ:
		ns.mu.Lock()
		n := 0
		if s.connOriented() && s.peer != nil && !s.peer.closed {
			n = s.peer.rqBytes // what the peer has not read yet
		}
		ns.mu.Unlock()
		return errOr0(t.putU32(arg, uint32(n))), true
	case ioSIOCATMRK:
		return errOr0(t.putU32(arg, 0)), true
	}
	return 0, false
}

func init() {
	registerSyscall("socket", sysSocket)
	registerSyscall("socketpair", sysSocketpair)
	registerSyscall("bind", sysBind)
	registerSyscall("listen", sysListen)
	registerSyscall("accept", sysAccept)
	registerSyscall("accept4", sysAccept4)
	registerSyscall("connect", sysConnect)
	registerSyscall("getsockname", sysGetsockname)
	registerSyscall("getpeername", sysGetpeername)
	registerSyscall("shutdown", sysShutdown)
	registerSyscall("sendto", sysSendto)
	registerSyscall("recvfrom", sysRecvfrom)
	registerSyscall("sendmsg", sysSendmsg)
	registerSyscall("recvmsg", sysRecvmsg)
	registerSyscall("sendmmsg", sysSendmmsg)
	registerSyscall("recvmmsg", sysRecvmmsg)
	registerSyscall("setsockopt", sysSetsockopt)
	registerSyscall("getsockopt", sysGetsockopt)
	wrapHostSockCalls()
}
