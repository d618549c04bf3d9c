package tasks

import (
	"encoding/binary"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hostNetSupported: --net=host works on this host.
const hostNetSupported = true

// hostSock is an AF_INET/AF_INET6 socket of --net=host: a host socket
// whose descriptor is always non-blocking. Like hostFIFO, it answers the
// guest's O_NONBLOCK/MSG_DONTWAIT itself and blocks through Task.wait
// (so signals and SIGKILL interrupt every wait), and a poller goroutine
// (hostNetPoller: one host epoll instance, edge-triggered) reports every
// readiness change of the descriptor (pollWaker) to the guest's epoll,
// poll and select.
//
// Guest memory never reaches the host kernel: addresses, option values
// and data are copied through bounded Go buffers (sockaddrs at most
// 128 bytes, options 256, data sockMaxMsg per call), and the host kernel
// validates their contents, so its errnos are Linux's.
type hostSock struct {
	fileBase
	fd                 int // host descriptor (non-blocking, close-on-exec)
	family, typ, proto int
	ino                uint64 // the host socket's inode

	// shadow answers the options uvm keeps itself (SO_RCVTIMEO,
	// SO_SNDTIMEO and every option outside hostSockOpts) as the
	// in-kernel stack does; it is never bound or connected.
	shadow *sock

	// mu protects changed and closed.
	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each readiness change
	closed  bool
}

// hostNetPoller watches every open host socket of the uvm process with
// one edge-triggered host epoll instance. Lock order: hostNetPoller.mu
// before hostSock.mu.
var hostNetPoller struct {
	once sync.Once
	epfd int
	err  error
	// mu protects socks (host fd → socket).
	mu    sync.Mutex
	socks map[int32]*hostSock
}

func hostNetPollerStart() error {
	p := &hostNetPoller
	p.once.Do(func() {
		p.epfd, p.err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if p.err != nil {
			return
		}
		p.socks = map[int32]*hostSock{}
		go hostNetPollLoop(p.epfd)
	})
	return p.err
}

func hostNetPollLoop(epfd int) {
	p := &hostNetPoller
	evs := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(epfd, evs, -1)
		if err != nil {
			continue // EINTR
		}
		for _, ev := range evs[:n] {
			p.mu.Lock()
			h := p.socks[ev.Fd]
			p.mu.Unlock()
			if h != nil {
				h.notify()
			}
		}
	}
}

// newHostSock wraps a non-blocking host socket and registers it with the
// poller; on failure it closes fd.
func newHostSock(fd, family, typ, proto int, shadow *sock) (*hostSock, Errno) {
	if err := hostNetPollerStart(); err != nil {
		unix.Close(fd)
		return nil, errnoOf(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, errnoOf(err)
	}
	h := &hostSock{fd: fd, family: family, typ: typ, proto: proto, ino: st.Ino, shadow: shadow, changed: make(chan struct{})}
	p := &hostNetPoller
	p.mu.Lock()
	p.socks[int32(fd)] = h
	err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{
		Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLPRI | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)})
	if err != nil {
		delete(p.socks, int32(fd))
	}
	p.mu.Unlock()
	if err != nil {
		unix.Close(fd)
		return nil, errnoOf(err)
	}
	return h, 0
}

func (h *hostSock) notify() {
	h.mu.Lock()
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}

func (h *hostSock) wakeup() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

func (h *hostSock) release() {
	p := &hostNetPoller
	p.mu.Lock()
	delete(p.socks, int32(h.fd))
	unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, h.fd, nil)
	h.mu.Lock()
	h.closed = true
	unix.Close(h.fd)
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
	p.mu.Unlock()
}

// revents is the host descriptor's poll mask now.
func (h *hostSock) revents() uint16 {
	fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN | unix.POLLOUT | unix.POLLPRI | unix.POLLRDHUP}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0
		}
		return uint16(fds[0].Revents)
	}
}

func (h *hostSock) poll(events uint16) uint16 {
	return h.revents() & (events | pollHUP | pollERR)
}

func (h *hostSock) stat(t *Task, _ *openFile) (hostStat, Errno) {
	st := t.anonStat(sIFSOCK | 0o777)
	st.ino = h.ino
	return st, 0
}

// timeouts are the SO_RCVTIMEO and SO_SNDTIMEO the guest set (ns).
func (h *hostSock) timeouts() (rcv, snd int64) {
	h.shadow.ns.mu.Lock()
	defer h.shadow.ns.mu.Unlock()
	return h.shadow.rcvTimeo, h.shadow.sndTimeo
}

// await blocks t until the descriptor reports one of want (or hang-up or
// an error). It returns 0 to retry, EAGAIN at the timeout (ns; 0: none),
// or the restart code for a signal, as the in-kernel sock.blockOn.
func (h *hostSock) await(t *Task, want uint16, timeo int64) Errno {
	ready := func() bool { return h.revents()&(want|pollHUP|pollERR) != 0 }
	return t.sockWait(ready, h.wakeup, timeo)
}

// bufPtr is b's first byte, nil for an empty b.
func bufPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// hostSendFlags are the send flags passed to the host; the host call
// always adds MSG_DONTWAIT and MSG_NOSIGNAL (uvm raises the guest's
// SIGPIPE itself).
const hostSendFlags = msgOOB | msgDONTROUTE | msgEOR | msgMORE | 0x800 /* MSG_CONFIRM */

// hostRecvFlags are the receive flags passed to the host.
const hostRecvFlags = msgOOB | msgPEEK | msgTRUNC | msgWAITALL

// send sends b (to: a raw sockaddr, nil for the connected peer). A
// blocking stream send sends everything unless interrupted.
func (h *hostSock) send(t *Task, f *openFile, b, to []byte, flags int) (int, Errno) {
	return h.sendCtl(t, f, b, to, nil, flags)
}

// sendCtl is send with control messages (already checked by
// hostSendCmsgs), which go with the first piece only.
func (h *hostSock) sendCtl(t *Task, f *openFile, b, to, ctl []byte, flags int) (int, Errno) {
	nonblock := f.flags&oNONBLOCK != 0 || flags&msgDONTWAIT != 0
	hf := flags&hostSendFlags | msgDONTWAIT | msgNOSIGNAL
	var toBuf []byte
	if to != nil {
		toBuf = make([]byte, max(len(to), 1))
		copy(toBuf, to)
	}
	_, sndTimeo := h.timeouts()
	done := 0
	for {
		chunk := b[done:]
		var r uintptr
		var en unix.Errno
		if ctl != nil {
			iov := unix.Iovec{Base: (*byte)(bufPtr(chunk))}
			iov.SetLen(len(chunk))
			msg := unix.Msghdr{Iov: &iov, Control: &ctl[0]}
			msg.SetIovlen(1)
			msg.SetControllen(len(ctl))
			if to != nil {
				msg.Name, msg.Namelen = &toBuf[0], uint32(len(to))
			}
			r, _, en = unix.Syscall(unix.SYS_SENDMSG, uintptr(h.fd), uintptr(unsafe.Pointer(&msg)), uintptr(hf))
		} else {
			r, _, en = unix.Syscall6(unix.SYS_SENDTO, uintptr(h.fd), uintptr(bufPtr(chunk)), uintptr(len(chunk)),
				uintptr(hf), uintptr(bufPtr(toBuf)), uintptr(len(to)))
		}
		e := Errno(en)
		switch {
		case e == 0:
			ctl = nil
			done += int(r)
			if done >= len(b) || h.typ != sockSTREAM {
				return done, 0
			}
			continue
		case e == EINTR:
			continue
		case e == EAGAIN && !nonblock:
			if e := h.await(t, pollOUT, sndTimeo); e != 0 {
				return partial(done, e)
			}
			continue
		case e == EPIPE && done == 0:
			return 0, t.sockPipe(EPIPE, flags)
		}
		return partial(done, e)
	}
}

func partial(done int, e Errno) (int, Errno) {
	if done > 0 {
		return done, 0
	}
	return 0, e
}

// hostRecv is what one receive took.
type hostRecv struct {
	data  []byte
	ret   int    // the host's count (MSG_TRUNC: the datagram's length)
	from  []byte // source address (empty for a connected stream)
	flags int    // msg_flags
	ctl   []byte // the host's control messages (recvCtl with room for them)
}

// Receive buffer caps: a stream read returns at most hostStreamChunk
// (short reads are a stream's normal answer), a datagram at most its
// largest size.
const (
	hostStreamChunk = 256 << 10
	hostDgramMax    = 65536
)

func (h *hostSock) recv(t *Task, f *openFile, n int, flags int) (hostRecv, Errno) {
	return h.recvCtl(t, f, n, 0, flags)
}

// recvCtl is recv with room for ctlCap bytes of control messages (the
// first receive's; MSG_CTRUNC comes from the host).
func (h *hostSock) recvCtl(t *Task, f *openFile, n, ctlCap int, flags int) (hostRecv, Errno) {
	var r hostRecv
	nonblock := f.flags&oNONBLOCK != 0 || flags&msgDONTWAIT != 0
	hf := flags&hostRecvFlags | msgDONTWAIT
	limit := hostDgramMax
	if h.typ == sockSTREAM {
		limit = hostStreamChunk
	}
	n = max(min(n, limit), 0)
	buf := make([]byte, n)
	name := make([]byte, 128)
	rcvTimeo, _ := h.timeouts()
	var ctl []byte
	if ctlCap > 0 {
		ctl = make([]byte, min(ctlCap, hostCtlMax))
	}
	got := 0
	for {
		iov := unix.Iovec{Base: (*byte)(bufPtr(buf[got:]))}
		iov.SetLen(n - got)
		msg := unix.Msghdr{Name: &name[0], Namelen: uint32(len(name)), Iov: &iov}
		msg.SetIovlen(1)
		if ctl != nil {
			msg.Control = &ctl[0]
			msg.SetControllen(len(ctl))
		}
		c, _, en := unix.Syscall(unix.SYS_RECVMSG, uintptr(h.fd), uintptr(unsafe.Pointer(&msg)), uintptr(hf))
		e := Errno(en)
		switch {
		case e == 0:
			k := int(c)
			if r.from == nil {
				r.from = append([]byte{}, name[:min(int(msg.Namelen), len(name))]...)
				r.flags = int(msg.Flags)
				if ctl != nil {
					r.ctl = ctl[:min(int(msg.Controllen), len(ctl))]
				}
				ctl = nil
			}
			if flags&msgWAITALL != 0 && flags&msgPEEK == 0 && h.typ == sockSTREAM && k > 0 && got+k < n && !nonblock {
				got += k
				continue
			}
			r.ret = got + k
			r.data = buf[:min(got+k, n)]
			return r, 0
		case e == EINTR:
			continue
		case e == EAGAIN && !nonblock:
			if e := h.await(t, pollIN|pollPRI, rcvTimeo); e != 0 {
				if got > 0 {
					r.ret, r.data = got, buf[:got]
					return r, 0
				}
				return r, e
			}
			continue
		}
		if got > 0 {
			r.ret, r.data = got, buf[:got]
			return r, 0
		}
		return r, e
	}
}

func (h *hostSock) read(t *Task, f *openFile, n uint64, off int64) ([]byte, Errno) {
	if off >= 0 {
		return nil, ESPIPE
	}
	r, e := h.recv(t, f, int(min(n, sockMaxMsg)), 0)
	return r.data, e
}

func (h *hostSock) write(t *Task, f *openFile, b []byte, off int64) (uint64, Errno) {
	if off >= 0 {
		return 0, ESPIPE
	}
	n, e := h.send(t, f, b, nil, 0)
	return uint64(n), e
}

func (h *hostSock) ioctl(t *Task, f *openFile, req, arg uint64) (uint64, bool) {
	switch req & 0xffffffff {
	case ioFIONREAD, ioSIOCOUTQ, ioSIOCATMRK:
		v, err := unix.IoctlGetInt(h.fd, uint(req&0xffffffff))
		if err != nil {
			return errRet(errnoOf(err)), true
		}
		return errOr0(t.putU32(arg, uint32(v))), true
	}
	return 0, false
}

// hostSockOf returns fd's host socket (ok false: not one; the in-kernel
// handler answers, with EBADF or ENOTSOCK where it is no socket at all).
func (t *Task) hostSockOf(fd uint64) (*hostSock, *openFile, bool) {
	f, ok := t.tg.fds.get(int32(fd))
	if !ok {
		return nil, nil, false
	}
	h, ok := f.ops.(*hostSock)
	return h, f, ok
}

func (t *Task) installHostSock(h *hostSock, flags int) (int32, Errno) {
	f := &openFile{ops: h, path: "socket:[" + itoa(int(h.ino)) + "]", flags: oRDWR | flags&sockNONBLOCK}
	return t.tg.fds.alloc(f, 0, flags&sockCLOEXEC != 0)
}

func hostSocket(t *Task, a [6]uint64) (uint64, bool) {
	family, typ, proto := int(int32(a[0])), int(int32(a[1])), int(int32(a[2]))
	base := typ & 0xf
	if family != afINET && family != afINET6 || typ&^(0xf|sockNONBLOCK|sockCLOEXEC) != 0 {
		return 0, false
	}
	switch {
	case base == sockSTREAM && (proto == 0 || proto == ipprotoTCP):
		proto = ipprotoTCP
	case base == sockSTREAM && proto == ipprotoMPTCP:
		// Multipath TCP (Go's listeners ask for it): the host kernel
		// says whether it has it.
	case base == sockDGRAM && (proto == 0 || proto == ipprotoUDP):
		proto = ipprotoUDP
	case hostRawSock(family, base, proto): // socket_raw.go
	default:
		return 0, false // the in-kernel checks answer (and log)
	}
	fd, err := unix.Socket(family, base|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return errRet(errnoOf(err)), true
	}
	shadow := t.tg.k.net().newSockLocked(family, base, proto)
	h, e := newHostSock(fd, family, base, proto, shadow)
	if e != 0 {
		return errRet(e), true
	}
	nfd, e := t.installHostSock(h, typ)
	if e != 0 {
		h.release()
		return errRet(e), true
	}
	return uint64(nfd), true
}

// sockaddrCall runs bind or connect with a guest sockaddr copied into a
// Go buffer (at most 128 bytes: readSockaddr).
func (t *Task) sockaddrCall(trap uintptr, h *hostSock, addr, n uint64) Errno {
	raw, e := t.readSockaddr(addr, n)
	if e != 0 {
		return e
	}
	buf := make([]byte, 128)
	copy(buf, raw)
	for {
		_, _, en := unix.Syscall(trap, uintptr(h.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(raw)))
		if en != unix.EINTR {
			return Errno(en)
		}
	}
}

func hostBind(t *Task, a [6]uint64) (uint64, bool) {
	h, _, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	return errOr0(t.sockaddrCall(unix.SYS_BIND, h, a[1], a[2])), true
}

func hostListen(t *Task, a [6]uint64) (uint64, bool) {
	h, _, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	backlog := int(int32(a[1]))
	if backlog < 0 || backlog > somaxconn {
		backlog = somaxconn
	}
	return errOr0(errnoOf(unix.Listen(h.fd, backlog))), true
}

func hostConnect(t *Task, a [6]uint64) (uint64, bool) {
	h, f, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	e := t.sockaddrCall(unix.SYS_CONNECT, h, a[1], a[2])
	if e != EINPROGRESS || f.flags&oNONBLOCK != 0 {
		return errOr0(e), true
	}
	// A blocking connect waits for the handshake, then reports its result.
	_, sndTimeo := h.timeouts()
	for h.revents()&(pollOUT|pollERR|pollHUP) == 0 {
		if e := h.await(t, pollOUT, sndTimeo); e != 0 {
			if e == EAGAIN {
				e = EINPROGRESS
			}
			return errRet(e), true
		}
	}
	v, err := unix.GetsockoptInt(h.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return errRet(errnoOf(err)), true
	}
	return errOr0(Errno(v)), true
}

func hostAccept4(t *Task, a [6]uint64) (uint64, bool) {
	h, f, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	flags := int(int32(a[3]))
	if flags&^(sockNONBLOCK|sockCLOEXEC) != 0 {
		return errRet(EINVAL), true
	}
	if !t.tg.fds.hasFree() {
		return errRet(EMFILE), true // before the host's accept takes a connection
	}
	name := make([]byte, 128)
	rcvTimeo, _ := h.timeouts()
	for {
		l := uint32(len(name))
		r, _, en := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(h.fd), uintptr(unsafe.Pointer(&name[0])),
			uintptr(unsafe.Pointer(&l)), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
		e := Errno(en)
		switch {
		case e == EINTR:
			continue
		case e == EAGAIN && f.flags&oNONBLOCK == 0:
			if e := h.await(t, pollIN, rcvTimeo); e != 0 {
				return errRet(e), true
			}
			continue
		case e != 0:
			return errRet(e), true
		}
		shadow := t.tg.k.net().newSockLocked(h.family, h.typ, h.proto)
		c, e := newHostSock(int(r), h.family, h.typ, h.proto, shadow)
		if e != 0 {
			return errRet(e), true
		}
		fd, e := t.installHostSock(c, flags)
		if e != 0 {
			c.release()
			return errRet(e), true
		}
		if e := t.putSockaddr(a[1], a[2], name[:min(int(l), len(name))]); e != 0 {
			return errRet(e), true
		}
		return uint64(fd), true
	}
}

func hostAccept(t *Task, a [6]uint64) (uint64, bool) {
	a[3] = 0
	return hostAccept4(t, a)
}

// nameCall runs getsockname or getpeername into a bounded buffer.
func hostNameCall(trap uintptr) hostSockCall {
	return func(t *Task, a [6]uint64) (uint64, bool) {
		h, _, ok := t.hostSockOf(a[0])
		if !ok {
			return 0, false
		}
		name := make([]byte, 128)
		l := uint32(len(name))
		_, _, en := unix.Syscall(trap, uintptr(h.fd), uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&l)))
		if en != 0 {
			return errRet(Errno(en)), true
		}
		return errOr0(t.putSockaddr(a[1], a[2], name[:min(int(l), len(name))])), true
	}
}

func hostShutdown(t *Task, a [6]uint64) (uint64, bool) {
	h, _, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	return errOr0(errnoOf(unix.Shutdown(h.fd, int(int32(a[1]))))), true
}

func hostSendto(t *Task, a [6]uint64) (uint64, bool) {
	h, f, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	data, e := t.readBuf(a[1], min(a[2], sockMaxMsg))
	if e != 0 {
		return errRet(e), true
	}
	var to []byte
	if a[4] != 0 {
		if to, e = t.readSockaddr(a[4], a[5]); e != 0 {
			return errRet(e), true
		}
	}
	n, e := h.send(t, f, data, to, int(int32(a[3])))
	return retOr(e, uint64(n)), true
}

func hostRecvfrom(t *Task, a [6]uint64) (uint64, bool) {
	h, f, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	r, e := h.recv(t, f, int(min(a[2], sockMaxMsg)), int(int32(a[3])))
	if e != 0 {
		return errRet(e), true
	}
	if e := t.writeBytes(a[1], r.data); e != 0 {
		return errRet(e), true
	}
	if a[4] != 0 {
		if e := t.putSockaddr(a[4], a[5], r.from); e != 0 {
			return errRet(e), true
		}
	}
	return uint64(r.ret), true
}

// sendmsg1 sends one guest msghdr on a host socket.
func (h *hostSock) sendmsg1(t *Task, f *openFile, mh uint64, flags int) (int, Errno) {
	m, e := t.readMsgHeader(mh)
	if e != 0 {
		return 0, e
	}
	data, to, e := t.gatherMsg(m)
	if e != 0 {
		return 0, e
	}
	var ctl []byte
	if cl := m.field64(mhControlLen); cl > 0 {
		if ctl, e = t.hostSendCmsgs(h, m.field64(mhControl), cl); e != 0 {
			return 0, e
		}
	}
	return h.sendCtl(t, f, data, to, ctl, flags)
}

// recvmsg1 receives into one guest msghdr from a host socket, with the
// host's control messages (those of the passed-through IP_PKTINFO,
// IP_RECVTOS, SO_TIMESTAMP… options) checked and copied out.
func (h *hostSock) recvmsg1(t *Task, f *openFile, mh uint64, flags int) (int, Errno) {
	m, e := t.readMsgHeader(mh)
	if e != 0 {
		return 0, e
	}
	space := m.field64(mhControlLen)
	if int64(space) < 0 {
		space = 0
	}
	r, e := h.recvCtl(t, f, int(m.total), int(min(space, hostCtlMax)), flags)
	if e != 0 {
		return 0, e
	}
	if e := t.scatterMsg(m, r.data, r.from); e != 0 {
		return 0, e
	}
	ctl := t.hostRecvCmsgs(r.ctl)
	if len(ctl) > 0 {
		if e := t.writeBytes(m.field64(mhControl), ctl); e != 0 {
			return 0, e
		}
	}
	if e := t.putU64(mh+mhControlLen, uint64(len(ctl))); e != 0 {
		return 0, e
	}
	if e := t.putU32(mh+mhFlags, uint32(r.flags)); e != 0 {
		return 0, e
	}
	return r.ret, 0
}

func hostSendmsg(t *Task, a [6]uint64) (uint64, bool) {
	h, f, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	n, e := h.sendmsg1(t, f, a[1], int(int32(a[2])))
	return retOr(e, uint64(n)), true
}

func hostRecvmsg(t *Task, a [6]uint64) (uint64, bool) {
	h, f, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	n, e := h.recvmsg1(t, f, a[1], int(int32(a[2])))
	return retOr(e, uint64(n)), true
}

// hostMmsg is sendmmsg (send) or recvmmsg on a host socket.
func hostMmsg(send bool) hostSockCall {
	return func(t *Task, a [6]uint64) (uint64, bool) {
		h, f, ok := t.hostSockOf(a[0])
		if !ok {
			return 0, false
		}
		flags := int(int32(a[3]))
		if !send {
			mt, e := t.readMmsgTimeout(a[4])
			if e != 0 {
				return errRet(e), true
			}
			return t.recvmmsg(a[1], a[2], flags, mt, func(mh uint64, flags int) (int, Errno) {
				return h.recvmsg1(t, f, mh, flags)
			}), true
		}
		vlen := min(a[2], 1024)
		var i uint64
		for ; i < vlen; i++ {
			mh := a[1] + i*mmsghdrSize
			n, e := h.sendmsg1(t, f, mh, flags)
			if e != 0 {
				if i == 0 {
					return errRet(e), true
				}
				break
			}
			if e := t.putU32(mh+msghdrSize, uint32(n)); e != 0 {
				return errRet(e), true
			}
		}
		return i, true
	}
}

// hostSockOpts are the options passed through to the host socket; the
// others (timeouts, SO_BINDTODEVICE, SO_PASSCRED, …) are answered by the
// shadow socket as the in-kernel stack answers them.
var hostSockOpts = func() map[sockOpt]bool {
	m := map[sockOpt]bool{}
	for level, names := range map[int][]int{
		solSOCKET: {soREUSEADDR, soREUSEPORT, soKEEPALIVE, soBROADCAST, soSNDBUF, soRCVBUF, soLINGER,
			soERROR, soTYPE, soDOMAIN, soPROTOCOL, soACCEPTCONN, soOOBINLINE, soRCVLOWAT,
			scmTIMESTAMP, scmTIMESTAMPNS, scmTIMESTAMPNEW, scmTIMESTAMPNSN},
		// NODELAY, MAXSEG, CORK, KEEPIDLE, KEEPINTVL, KEEPCNT, QUICKACK,
		// USER_TIMEOUT, NOTSENT_LOWAT
		ipprotoTCP: {tcpNODELAY, tcpMAXSEG, 3, 4, 5, 6, 12, 18, 25},
		// TOS, TTL, MTU_DISCOVER, MULTICAST_TTL, MULTICAST_LOOP, and
		// those asking for control messages (socket_host_cmsg_linux.go)
		ipprotoIP: {1, 2, 10, 33, 34, cmsgIPPKTINFO, cmsgIPRECVTTL, cmsgIPRECVTOS},
		// V6ONLY, UNICAST_HOPS, MULTICAST_HOPS, MULTICAST_LOOP, TCLASS,
		// and the control message ones
		ipprotoIPV6: {ipv6V6ONLY, 16, 18, 19, 67, cmsgIPV6RECVPKT, cmsgIPV6RECVHOP, cmsgIPV6RECVTCL, cmsgIPV6DONTFRAG},
		// raw sockets (socket_raw.go): SOL_RAW ICMP_FILTER, SOL_ICMPV6
		// ICMPV6_FILTER (IP_HDRINCL and IPV6_CHECKSUM below)
		255: {1}, ipprotoICMPV6: {1},
		// SOL_MPTCP: MPTCP_INFO, MPTCP_TCPINFO, MPTCP_SUBFLOW_ADDRS,
		// MPTCP_FULL_INFO (Go's Conn.MultipathTCP reads MPTCP_INFO:
		// EOPNOTSUPP after a fallback to TCP)
		284: {1, 2, 3, 4},
	} {
		for _, n := range names {
			m[sockOpt{level, n}] = true
		}
	}
	m[sockOpt{ipprotoIP, 3}], m[sockOpt{ipprotoIPV6, 7}] = true, true // IP_HDRINCL, IPV6_CHECKSUM
	return m
}()

const hostOptMax = 256

func hostSetsockopt(t *Task, a [6]uint64) (uint64, bool) {
	h, _, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	level, name, optlen := int(int32(a[1])), int(int32(a[2])), int32(a[4])
	if !hostSockOpts[sockOpt{level, name}] {
		return t.setsockoptOn(h.shadow, a), true
	}
	if optlen < 0 {
		return errRet(EINVAL), true
	}
	val, e := t.readBuf(a[3], uint64(min(optlen, hostOptMax)))
	if e != 0 {
		return errRet(e), true
	}
	buf := make([]byte, hostOptMax)
	copy(buf, val)
	_, _, en := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(h.fd), uintptr(level), uintptr(name),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(val)), 0)
	return errOr0(Errno(en)), true
}

func hostGetsockopt(t *Task, a [6]uint64) (uint64, bool) {
	h, _, ok := t.hostSockOf(a[0])
	if !ok {
		return 0, false
	}
	level, name := int(int32(a[1])), int(int32(a[2]))
	if !hostSockOpts[sockOpt{level, name}] {
		return t.getsockoptOn(h.shadow, a), true
	}
	lb, e := t.readBuf(a[4], 4)
	if e != 0 {
		return errRet(e), true
	}
	have := int32(binary.LittleEndian.Uint32(lb))
	if have < 0 {
		return errRet(EINVAL), true
	}
	buf := make([]byte, hostOptMax)
	l := uint32(min(have, hostOptMax))
	_, _, en := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(h.fd), uintptr(level), uintptr(name),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&l)), 0)
	if en != 0 {
		return errRet(Errno(en)), true
	}
	l = min(l, hostOptMax)
	if e := t.writeBytes(a[3], buf[:l]); e != 0 {
		return errRet(e), true
	}
	return errOr0(t.putU32(a[4], l)), true
}

var hostSockCalls = map[string]hostSockCall{
	"socket": hostSocket, "bind": hostBind, "listen": hostListen, "connect": hostConnect,
	"accept": hostAccept, "accept4": hostAccept4,
	"getsockname": hostNameCall(unix.SYS_GETSOCKNAME), "getpeername": hostNameCall(unix.SYS_GETPEERNAME),
	"shutdown": hostShutdown, "sendto": hostSendto, "recvfrom": hostRecvfrom,
	"sendmsg": hostSendmsg, "recvmsg": hostRecvmsg, "sendmmsg": hostMmsg(true), "recvmmsg": hostMmsg(false),
	"setsockopt": hostSetsockopt, "getsockopt": hostGetsockopt,
}
