package tasks

import (
	"encoding/binary"
)

// AF_NETLINK, NETLINK_ROUTE only: the rtnetlink dumps runtimes and libcs
// read to list interfaces and addresses (Go's net.Interfaces and
// InterfaceAddrs through syscall.NetlinkRIB, glibc's getifaddrs and
// getaddrinfo's AI_ADDRCONFIG check). The emulated network has one
// interface, lo, up, with 127.0.0.1/8 and ::1/128 — what Linux shows in a
// new network namespace after `ip link set lo up` (the messages below
// carry the attributes that such a kernel sends that describe the
// interface; statistics, XDP, AF_SPEC and the other per-driver blocks are
// left out). Requests are answered at send, the replies queued on the
// socket as datagrams from the kernel (port id 0), as netlink_unicast
// does.

const (
	afNETLINK    = 16
	netlinkROUTE = 0
	nlmsgHdrLen  = 16
	nlmsgERROR   = 2
	nlmsgDONE    = 3
	nlmFREQUEST  = 0x1
	nlmFMULTI    = 0x2
	nlmFACK      = 0x4
	nlmFDUMP     = 0x300
	rtmNEWLINK   = 16
	rtmGETLINK   = 18
	rtmNEWADDR   = 20
	rtmGETADDR   = 22
	loIndex      = 1
	// netlinkRcvBuf bounds the replies queued and not yet read
	// (net.core.rmem_default).
	netlinkRcvBuf = 212992
)

// newNetlinkSock is socket(AF_NETLINK, typ, proto).
func (t *Task) newNetlinkSock(typ, proto int) (*sock, Errno) {
	base := typ & 0xf
	if base != sockRAW && base != sockDGRAM {
		return nil, ESOCKTNOSUPPORT
	}
	if typ&^(0xf|sockNONBLOCK|sockCLOEXEC) != 0 {
		return nil, EINVAL
	}
	if proto != netlinkROUTE {
		// A kernel without that netlink family (netlink_create).
		t.sockUnimpl("socket AF_NETLINK protocol " + itoa(proto))
		return nil, EPROTONOSUPPORT
	}
	s := t.tg.k.net().newSockLocked(afNETLINK, base, proto)
	s.local = sockAddr{family: afNETLINK}
	s.cred = t.ucred()
	return s, 0
}

// parseNetlinkAddr decodes a struct sockaddr_nl.
func parseNetlinkAddr(raw []byte) (sockAddr, Errno) {
	if len(raw) < 12 || binary.LittleEndian.Uint16(raw) != afNETLINK {
		return sockAddr{}, EINVAL
	}
	return sockAddr{family: afNETLINK, nlPid: binary.LittleEndian.Uint32(raw[4:]), nlGroups: binary.LittleEndian.Uint32(raw[8:])}, 0
}

// encodeNetlink is the address as struct sockaddr_nl.
func (a sockAddr) encodeNetlink() []byte {
	b := make([]byte, 12)
	binary.LittleEndian.PutUint16(b, afNETLINK)
	binary.LittleEndian.PutUint32(b[4:], a.nlPid)
	binary.LittleEndian.PutUint32(b[8:], a.nlGroups)
	return b
}

// netlinkBind is bind(2): a port id (0: the kernel picks one) and
// multicast groups (accepted: no rtnetlink notification is ever due, the
// one interface never changes).
func (s *sock) netlinkBind(t *Task, raw []byte) Errno {
	a, e := parseNetlinkAddr(raw)
	if e != 0 {
		return e
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if s.bound {
		if a.nlPid != 0 && a.nlPid != s.local.nlPid {
			return EINVAL
		}
		s.local.nlGroups = a.nlGroups
		return 0
	}
	if a.nlPid != 0 {
		if ns.netlink[a.nlPid] != nil {
			return EADDRINUSE
		}
		s.bindNetlinkLocked(a.nlPid)
	} else {
		s.autobindNetlinkLocked(t)
	}
	s.local.nlGroups = a.nlGroups
	return 0
}

func (s *sock) bindNetlinkLocked(pid uint32) {
	if s.ns.netlink == nil {
		s.ns.netlink = map[uint32]*sock{}
	}
	s.ns.netlink[pid] = s
	s.bound = true
	s.local.nlPid = pid
}

// autobindNetlinkLocked picks the port id as netlink_autobind does: the
// process's tgid when free, else negative ids from -4096 down.
func (s *sock) autobindNetlinkLocked(t *Task) {
	pid := uint32(t.tg.pid)
	for id := int32(-4096); s.ns.netlink[pid] != nil; id-- {
		pid = uint32(id)
	}
	s.bindNetlinkLocked(pid)
}

// unbindNetlinkLocked frees the port id at close.
func (s *sock) unbindNetlinkLocked() {
	if s.ns.netlink[s.local.nlPid] == s {
		delete(s.ns.netlink, s.local.nlPid)
	}
}

// netlinkConnect is connect(2): the default destination (only the
// kernel, port 0, is ever there to talk to) and an autobind.
func (s *sock) netlinkConnect(t *Task, raw []byte) Errno {
	a, e := parseNetlinkAddr(raw)
	if e != 0 {
		return e
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if !s.bound {
		s.autobindNetlinkLocked(t)
	}
	s.remote, s.hasPeer = a, true
	return 0
}

// netlinkSend handles the requests in b and queues the replies.
func (s *sock) netlinkSend(t *Task, b []byte, to *sockAddr) (int, Errno) {
	if to != nil && to.nlPid != 0 {
		// Unicast to another socket: rtnetlink users only talk to the
		// kernel.
		t.sockUnimpl("netlink unicast to port " + itoa(int(to.nlPid)))
		return 0, ECONNREFUSED
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if !s.bound {
		s.autobindNetlinkLocked(t)
	}
	queue := func(dgram []byte) {
		if s.rqBytes+len(dgram) > netlinkRcvBuf {
			// A receive queue past its buffer drops the reply and
			// reports ENOBUFS at the next receive (netlink_overrun).
			s.soErr = ENOBUFS
			return
		}
		s.rq = append(s.rq, sockMsg{data: dgram, from: sockAddr{family: afNETLINK}})
		s.rqBytes += len(dgram)
	}
	queued := len(s.rq)
	rest := b
	// Every message of the datagram is handled (each is at least a
	// header, and the replies are bounded by the receive buffer).
	for len(rest) >= nlmsgHdrLen {
		le := binary.LittleEndian
		l := le.Uint32(rest)
		if l < nlmsgHdrLen || uint64(l) > uint64(len(rest)) {
			break // as netlink_rcv_skb: a truncated message ends the batch
		}
		msg := rest[:l]
		rest = rest[min(len(rest), nlmsgAlign(int(l))):]
		typ, flags, seq := le.Uint16(msg[4:]), le.Uint16(msg[6:]), le.Uint32(msg[8:])
		if flags&nlmFREQUEST == 0 {
			continue
		}
		// A reply (a dump with its NLMSG_DONE, or one object) is one
		// datagram, the error or ack another, as the kernel's skbs.
		reply, errno := s.rtnetlink(t, typ, flags, msg[nlmsgHdrLen:])
		var dgram []byte
		for _, m := range reply {
			dgram = append(dgram, nlMessage(m.typ, m.flags, seq, s.local.nlPid, m.body)...)
		}
		if dgram != nil {
			queue(dgram)
		}
		if errno != 0 || flags&nlmFACK != 0 {
			// NLMSG_ERROR: the error (0 for an ack) and the request's
			// header.
			body := binary.LittleEndian.AppendUint32(nil, uint32(-int32(errno)))
			body = append(body, msg[:nlmsgHdrLen]...)
			queue(nlMessage(nlmsgERROR, 0, seq, s.local.nlPid, body))
		}
	}
	if len(s.rq) > queued {
		s.notifyLocked()
	}
	return len(b), 0
}

func nlmsgAlign(n int) int { return (n + 3) &^ 3 }

// nlMessage is one netlink message with its header.
func nlMessage(typ, flags uint16, seq, pid uint32, body []byte) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(nlmsgHdrLen+len(body)))
	b = le.AppendUint16(b, typ)
	b = le.AppendUint16(b, flags)
	b = le.AppendUint32(b, seq)
	b = le.AppendUint32(b, pid)
	b = append(b, body...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

type nlReply struct {
	typ, flags uint16
	body       []byte
}

// rtattr appends one route attribute.
func rtattr(b []byte, typ uint16, v []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint16(b, uint16(4+len(v)))
	b = le.AppendUint16(b, typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32attr(b []byte, typ uint16, v uint32) []byte {
	return rtattr(b, typ, binary.LittleEndian.AppendUint32(nil, v))
}

// rtnetlink answers one request (rtnetlink_rcv_msg).
func (s *sock) rtnetlink(t *Task, typ, flags uint16, body []byte) ([]nlReply, Errno) {
	done := nlReply{typ: nlmsgDONE, flags: nlmFMULTI, body: make([]byte, 4)}
	switch typ {
	case rtmGETLINK:
		if flags&nlmFDUMP == nlmFDUMP {
			return []nlReply{{typ: rtmNEWLINK, flags: nlmFMULTI, body: loLink()}, done}, 0
		}
		// One link, by index (struct ifinfomsg's ifi_index).
		if len(body) < 16 {
			return nil, EINVAL
		}
		if int32(binary.LittleEndian.Uint32(body[4:])) != loIndex {
			return nil, ENODEV
		}
		return []nlReply{{typ: rtmNEWLINK, body: loLink()}}, 0
	case rtmGETADDR:
		if flags&nlmFDUMP != nlmFDUMP {
			t.sockUnimpl("rtnetlink RTM_GETADDR without NLM_F_DUMP")
			return nil, EOPNOTSUPP
		}
		fam := byte(afUNSPEC)
		if len(body) > 0 {
			fam = body[0]
		}
		var out []nlReply
		if fam == afUNSPEC || fam == afINET {
			out = append(out, nlReply{typ: rtmNEWADDR, flags: nlmFMULTI, body: loAddr4()})
		}
		if fam == afUNSPEC || fam == afINET6 {
			out = append(out, nlReply{typ: rtmNEWADDR, flags: nlmFMULTI, body: loAddr6()})
		}
		return append(out, done), 0
	}
	t.sockUnimpl("rtnetlink message type " + itoa(int(typ)))
	return nil, EOPNOTSUPP
}

// loLink is RTM_NEWLINK for lo: struct ifinfomsg (ARPHRD_LOOPBACK, index
// 1, IFF_UP|IFF_LOOPBACK|IFF_RUNNING|IFF_LOWER_UP) and its attributes in
// Linux's order (rtnl_fill_ifinfo).
func loLink() []byte {
	b := []byte{afUNSPEC, 0, 0x04, 0x03, loIndex, 0, 0, 0, 0x49, 0, 0x01, 0, 0, 0, 0, 0}
	b = rtattr(b, 3, []byte("lo\x00")) // IFLA_IFNAME
	b = u32attr(b, 13, 1000)           // IFLA_TXQLEN
	b = rtattr(b, 16, []byte{0})       // IFLA_OPERSTATE: IF_OPER_UNKNOWN, as lo
	b = rtattr(b, 17, []byte{0})       // IFLA_LINKMODE
	b = u32attr(b, 4, 65536)           // IFLA_MTU
	b = u32attr(b, 50, 0)              // IFLA_MIN_MTU
	b = u32attr(b, 51, 0)              // IFLA_MAX_MTU
	b = u32attr(b, 27, 0)              // IFLA_GROUP
	b = u32attr(b, 30, 0)              // IFLA_PROMISCUITY
	b = u32attr(b, 31, 1)              // IFLA_NUM_TX_QUEUES
	b = u32attr(b, 40, 65535)          // IFLA_GSO_MAX_SEGS
	b = u32attr(b, 41, 65536)          // IFLA_GSO_MAX_SIZE
	b = u32attr(b, 32, 1)              // IFLA_NUM_RX_QUEUES
	b = rtattr(b, 33, []byte{1})       // IFLA_CARRIER
	b = u32attr(b, 35, 0)              // IFLA_CARRIER_CHANGES
	b = rtattr(b, 39, []byte{0})       // IFLA_PROTO_DOWN
	b = rtattr(b, 1, make([]byte, 6))  // IFLA_ADDRESS
	b = rtattr(b, 2, make([]byte, 6))  // IFLA_BROADCAST
	b = rtattr(b, 6, []byte("noqueue\x00"))
	return b
}

// cacheInfo is IFA_CACHEINFO of a permanent address: preferred and
// valid lifetimes forever.
func cacheInfo() []byte {
	return []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}
}

// loAddr4 is RTM_NEWADDR for 127.0.0.1/8 (struct ifaddrmsg: IFA_F_PERMANENT,
// RT_SCOPE_HOST, index 1).
func loAddr4() []byte {
	b := []byte{afINET, 8, 0x80, 254, loIndex, 0, 0, 0}
	ip := []byte{127, 0, 0, 1}
	b = rtattr(b, 1, ip)               // IFA_ADDRESS
	b = rtattr(b, 2, ip)               // IFA_LOCAL
	b = rtattr(b, 3, []byte("lo\x00")) // IFA_LABEL
	b = u32attr(b, 8, 0x80)            // IFA_FLAGS
	return rtattr(b, 6, cacheInfo())   // IFA_CACHEINFO
}

// loAddr6 is RTM_NEWADDR for ::1/128.
func loAddr6() []byte {
	b := []byte{afINET6, 128, 0x80, 254, loIndex, 0, 0, 0}
	b = rtattr(b, 1, ip6Loopback[:])
	b = rtattr(b, 6, cacheInfo())
	b = u32attr(b, 8, 0x80)
	return rtattr(b, 11, []byte{1}) // IFA_PROTO: IFAPROT_KERNEL_LO
}
