package tasks

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rawTask is a test task with CAP_NET_RAW (testTask's --det identity has
// no capabilities).
func rawTask(t *testing.T) *Task {
	task := testTask(t)
	c := task.creds().clone()
	c.capEff |= 1 << capNetRaw
	task.credp.Store(c)
	return task
}

func rawSock4(t *testing.T, task *Task, proto int) (*sock, *openFile) {
	s, e := task.newSocket(afINET, sockRAW, proto)
	require.Zero(t, e)
	return s, &openFile{ops: s, flags: oRDWR | oNONBLOCK}
}

func icmpEchoMsg(typ byte, seq uint16, data string) []byte {
	m := append([]byte{typ, 0, 0, 0, 0x12, 0x34, byte(seq >> 8), byte(seq)}, data...)
	binary.BigEndian.PutUint16(m[2:], inetChecksum(m, 0))
	return m
}

// TestRawSocketCreate: the protocol is checked before the privilege, as
// inet_create does; without CAP_NET_RAW a raw socket is EPERM.
func TestRawSocketCreate(t *testing.T) {
	task := testTask(t)
	_, e := task.newSocket(afINET, sockRAW, ipprotoICMP)
	require.Equal(t, EPERM, e, "the --det guest is unprivileged")
	_, e = task.newSocket(afINET, sockRAW, 0)
	require.Equal(t, EPROTONOSUPPORT, e)
	_, e = task.newSocket(afINET6, sockRAW, ipprotoMax)
	require.Equal(t, EINVAL, e)
	task = rawTask(t)
	s, e := task.newSocket(afINET6, sockRAW|sockNONBLOCK, ipprotoICMPV6)
	require.Zero(t, e)
	require.Equal(t, 2, s.raw.csumOff, "ICMPv6: the kernel computes the checksum at offset 2")
	require.False(t, s.connOriented())
	r, e := task.newSocket(afINET, sockRAW, ipprotoRAW)
	require.Zero(t, e)
	require.True(t, r.raw.hdrincl, "IPPROTO_RAW is IP_HDRINCL")
	require.Len(t, task.tg.k.net().raw, 2)
	r.release()
	require.Len(t, task.tg.k.net().raw, 1, "a closed raw socket leaves delivery")
	_, e = task.newSocket(afINET, sockRAW|0x100, ipprotoICMP)
	require.Equal(t, EINVAL, e, "unknown type flags")
	ret, ok := task.rawSetsockopt(s, ipprotoIPV6, ipv6V6ONLY, []byte{1, 0, 0, 0})
	require.True(t, ok)
	require.Equal(t, errRet(EINVAL), ret)

	// A protocol number past 255 is cut to the header's 8 bits: a
	// "protocol 262" datagram is TCP's.
	hi, hf := rawSock4(t, task, ipprotoMPTCP)
	tcp, _ := rawSock4(t, task, ipprotoTCP)
	_, e = task.sendTo(hi, hf, []byte("x"), sin(ip4Loopback, 0), nil, nil, 0)
	require.Zero(t, e)
	require.Len(t, tcp.rq, 1)
	require.Empty(t, hi.rq)
}

// TestRawICMPEcho: an echo request to 127.0.0.1 reaches every raw ICMP
// socket with the IPv4 header the kernel built, followed by the
// kernel's echo reply; bound and connected sockets see only what
// matches them; ICMP_FILTER drops a type.
func TestRawICMPEcho(t *testing.T) {
	task := rawTask(t)
	s, f := rawSock4(t, task, ipprotoICMP)
	bound, bf := rawSock4(t, task, ipprotoICMP)
	require.Zero(t, bound.rawBind(sin(v4(127, 0, 0, 2), 0)))
	conn, cf := rawSock4(t, task, ipprotoICMP)
	require.Zero(t, conn.rawConnect(task, sin(v4(127, 0, 0, 3), 0)))
	other, of := rawSock4(t, task, ipprotoTCP)

	req := icmpEchoMsg(icmpEcho, 1, "ping")
	n, e := task.sendTo(s, f, req, sin(ip4Loopback, 0), nil, nil, 0)
	require.Zero(t, e)
	require.Equal(t, len(req), n)
	require.Len(t, s.rq, 2, "the request and the kernel's reply")
	for i, want := range []struct {
		typ  byte
		frag uint16
		id   uint16
	}{{icmpEcho, ipDF, 1}, {icmpEchoRep, 0, 2}} {
		r, e := s.recv(task, f, 100, 0)
		require.Zero(t, e)
		p := r.data
		require.Len(t, p, ipv4HdrLen+len(req))
		require.Equal(t, byte(0x45), p[0])
		require.Equal(t, uint16(len(p)), binary.BigEndian.Uint16(p[2:]))
		require.Equal(t, want.id, binary.BigEndian.Uint16(p[4:]), "identifications count up")
		require.Equal(t, want.frag, binary.BigEndian.Uint16(p[6:]), "DF on the raw socket's packet, none on the ICMP socket's")
		require.Equal(t, byte(64), p[8])
		require.Equal(t, byte(ipprotoICMP), p[9])
		require.Zero(t, inetChecksum(p[:ipv4HdrLen], 0), "header checksum")
		require.Equal(t, []byte{127, 0, 0, 1, 127, 0, 0, 1}, p[12:20])
		require.Equal(t, want.typ, p[20], "message %d", i)
		require.Zero(t, inetChecksum(p[20:], 0), "ICMP checksum")
		require.Equal(t, req[4:], p[24:], "identifier, sequence and data echoed")
		require.Equal(t, sockAddr{family: afINET, ip: ip4Loopback}, r.from, "the source, port 0")
	}
	_, e = bound.recv(task, bf, 100, 0)
	require.Equal(t, EAGAIN, e, "bound to 127.0.0.2: not for it")
	_, e = conn.recv(task, cf, 100, 0)
	require.Equal(t, EAGAIN, e, "connected to 127.0.0.3: not from there")
	_, e = other.recv(task, of, 100, 0)
	require.Equal(t, EAGAIN, e, "another protocol")

	// To 127.0.0.3 from the connected socket: it sees the reply only.
	n, e = task.sendTo(conn, cf, icmpEchoMsg(icmpEcho, 2, "c"), nil, nil, nil, 0)
	require.Zero(t, e)
	require.Equal(t, 9, n)
	require.Len(t, conn.rq, 1)
	require.Equal(t, byte(icmpEchoRep), conn.rq[0].data[20])
	require.Equal(t, v4(127, 0, 0, 3), conn.rq[0].from.ip)
	require.Len(t, s.rq, 2)
	s.rq, s.rqBytes = nil, 0

	// ICMP_FILTER drops echo replies.
	task.rawSetsockopt(s, solRAW, icmpFILTER, []byte{1 << icmpEchoRep, 0, 0, 0})
	task.sendTo(s, f, req, sin(ip4Loopback, 0), nil, nil, 0)
	require.Len(t, s.rq, 1)
	require.Equal(t, byte(icmpEcho), s.rq[0].data[20])
	// A wrong checksum: the request is seen, nothing answers it.
	s.rq, s.rqBytes = nil, 0
	bad := append([]byte(nil), req...)
	bad[2] ^= 1
	task.rawSetsockopt(s, solRAW, icmpFILTER, []byte{0, 0, 0, 0})
	task.sendTo(s, f, bad, sin(ip4Loopback, 0), nil, nil, 0)
	require.Len(t, s.rq, 1)
	// Shorter than an ICMP header: no raw ICMP socket takes it.
	s.rq, s.rqBytes = nil, 0
	task.sendTo(s, f, req[:4], sin(ip4Loopback, 0), nil, nil, 0)
	require.Empty(t, s.rq)
}

// TestRawSendErrors: destinations off lo, addresses, sizes.
func TestRawSendErrors(t *testing.T) {
	task := rawTask(t)
	s, f := rawSock4(t, task, 253)
	_, e := task.sendTo(s, f, []byte("x"), nil, nil, nil, 0)
	require.Equal(t, EDESTADDRREQ, e)
	_, e = task.sendTo(s, f, []byte("x"), sin(v4(10, 1, 2, 3), 0), nil, nil, 0)
	require.Equal(t, ENETUNREACH, e, "only lo exists")
	_, e = task.sendTo(s, f, []byte("x"), sin(ip4Loopback, 0)[:8], nil, nil, 0)
	require.Equal(t, EINVAL, e)
	_, e = task.sendTo(s, f, make([]byte, ipMaxPacket-ipv4HdrLen+1), sin(ip4Loopback, 0), nil, nil, 0)
	require.Equal(t, EMSGSIZE, e)
	_, e = task.sendTo(s, f, make([]byte, sockMaxMsg), sin(ip4Loopback, 0), nil, nil, 0)
	require.Equal(t, EMSGSIZE, e)
	n, e := task.sendTo(s, f, make([]byte, ipMaxPacket-ipv4HdrLen), sin(ip4Loopback, 0), nil, nil, 0)
	require.Zero(t, e)
	require.Equal(t, ipMaxPacket-ipv4HdrLen, n)
	require.Len(t, s.rq, 1)
	require.Len(t, s.rq[0].data, ipMaxPacket)
	require.Equal(t, EADDRNOTAVAIL, s.rawBind(sin(v4(10, 1, 2, 3), 0)))
	require.Equal(t, EINVAL, s.rawBind(sin(ip4Loopback, 0)[:15]))
	require.Equal(t, ENETUNREACH, s.rawConnect(task, sin(v4(10, 1, 2, 3), 0)))
}

// TestRawRcvbuf: a raw socket queues while it holds less than SO_RCVBUF
// of truesize (the check is before adding, as __sock_queue_rcv_skb's);
// the rest is dropped. The counts are Linux 6.18's on x86-64 (measured
// natively: N sends of each size to 127.0.0.1 / ::1, then count).
func TestRawRcvbuf(t *testing.T) {
	task := rawTask(t)
	for _, c := range []struct {
		v6            bool
		rcvbuf, size  int
		queued, sends int
	}{
		{false, 4096, 1, 5, 300}, {false, 20000, 200, 25, 300}, {false, 100000, 100, 121, 300},
		{false, 4096, 500, 4, 300}, {false, 100000, 1000, 44, 300}, {false, 100000, 3000, 23, 300},
		{false, 100000, 4000, 12, 300}, {false, 100000, 16000, 7, 300}, {false, 100000, 30000, 4, 300},
		{false, 100000, 60000, 2, 300}, {false, 500000, 200, 601, 1000}, {false, 500000, 210, 391, 1000},
		{true, 100000, 180, 121, 600}, {true, 100000, 200, 79, 600}, {true, 100000, 1000, 44, 600},
		{true, 1000000, 8000, 61, 600}, {true, 1000000, 16000, 60, 600}, {true, 1000000, 60000, 17, 600},
	} {
		fam, to := afINET, sin(ip4Loopback, 0)
		if c.v6 {
			fam, to = afINET6, sockAddr{family: afINET6, ip: ip6Loopback}.encode()
		}
		s, e := task.newSocket(fam, sockRAW, 253)
		require.Zero(t, e)
		s.opts[sockOpt{solSOCKET, soRCVBUF}] = int32(c.rcvbuf)
		f := &openFile{ops: s}
		b := make([]byte, c.size)
		for range c.sends {
			_, e := task.sendTo(s, f, b, to, nil, nil, 0)
			require.Zero(t, e, "a full receiver does not fail the send")
		}
		require.Len(t, s.rq, c.queued, "v6 %v, SO_RCVBUF %d, %d-byte payloads", c.v6, c.rcvbuf, c.size)
		s.release()
	}
}

// TestRawHdrincl: with IP_HDRINCL the sender's header is kept and the
// kernel fills in the source, identification, total length and checksum;
// it is delivered by its own addresses.
func TestRawHdrincl(t *testing.T) {
	task := rawTask(t)
	s, f := rawSock4(t, task, ipprotoICMP)
	h, hf := rawSock4(t, task, ipprotoRAW)
	pkt := append([]byte{0x45, 0x10, 0x99, 0x99, 0, 0, 0, 0, 7, ipprotoICMP, 0xde, 0xad, 0, 0, 0, 0, 127, 0, 0, 1},
		icmpEchoMsg(icmpEcho, 1, "hdr")...)
	n, e := task.sendTo(h, hf, pkt, sin(ip4Loopback, 0), nil, nil, 0)
	require.Zero(t, e)
	require.Equal(t, len(pkt), n)
	require.Len(t, s.rq, 2, "request and reply")
	r, _ := s.recv(task, f, 100, 0)
	p := r.data
	require.Equal(t, []byte{0x45, 0x10}, p[:2])
	require.Equal(t, uint16(len(pkt)), binary.BigEndian.Uint16(p[2:]))
	require.NotZero(t, binary.BigEndian.Uint16(p[4:]), "a zero identification is chosen")
	require.Equal(t, byte(7), p[8], "the sender's TTL")
	require.Zero(t, inetChecksum(p[:20], 0))
	require.Equal(t, []byte{127, 0, 0, 1}, p[12:16], "a zero source is filled in")
	s.rq, s.rqBytes = nil, 0

	_, e = task.sendTo(h, hf, pkt[:19], sin(ip4Loopback, 0), nil, nil, 0)
	require.Equal(t, EINVAL, e)
	short := append([]byte(nil), pkt...)
	short[0] = 0x44
	_, e = task.sendTo(h, hf, short, sin(ip4Loopback, 0), nil, nil, 0)
	require.Equal(t, EINVAL, e, "IHL < 5")
	short[0] = 0x4f
	_, e = task.sendTo(h, hf, short[:30], sin(ip4Loopback, 0), nil, nil, 0)
	require.Equal(t, EINVAL, e, "IHL past the data")
	other := append([]byte(nil), pkt...)
	other[16] = 10
	_, e = task.sendTo(h, hf, other, sin(ip4Loopback, 0), nil, nil, 0)
	require.Zero(t, e)
	require.Len(t, s.rq, 1, "delivered by the route, matched by the header; no reply to a non-local source")
	s.rq, s.rqBytes = nil, 0
	frag := append([]byte(nil), pkt...)
	frag[6] = 0x20
	_, e = task.sendTo(h, hf, frag, sin(ip4Loopback, 0), nil, nil, 0)
	require.Zero(t, e)
	require.Empty(t, s.rq, "a lone fragment is never reassembled")
	_, e = task.sendTo(h, hf, make([]byte, loMTU+1), sin(ip4Loopback, 0), nil, nil, 0)
	require.Equal(t, EMSGSIZE, e)
}

// TestRaw6: ICMPv6 raw sockets get the payload with the checksum the
// kernel computed; the kernel answers an echo; a socket checking
// IPV6_CHECKSUM drops a wrong one at the receive.
func TestRaw6(t *testing.T) {
	task := rawTask(t)
	s, e := task.newSocket(afINET6, sockRAW, ipprotoICMPV6)
	require.Zero(t, e)
	f := &openFile{ops: s, flags: oRDWR}
	to := sockAddr{family: afINET6, ip: ip6Loopback}.encode()
	req := []byte{icmp6Echo, 0, 0xff, 0xff, 0x12, 0x34, 0, 1, 'v', '6'}
	n, e := task.sendTo(s, f, req, to, nil, nil, 0)
	require.Zero(t, e)
	require.Equal(t, len(req), n)
	require.Len(t, s.rq, 2)
	for _, typ := range []byte{icmp6Echo, icmp6EchoRep} {
		r, e := s.recv(task, f, 100, 0)
		require.Zero(t, e)
		require.Len(t, r.data, len(req), "no IPv6 header")
		require.Equal(t, typ, r.data[0])
		require.Zero(t, inetChecksum(r.data, pseudo6(ip6Loopback, ip6Loopback, len(r.data), ipprotoICMPV6)))
		require.Equal(t, req[4:], r.data[4:])
		require.Equal(t, sockAddr{family: afINET6, ip: ip6Loopback}, r.from)
	}
	ret, ok := task.rawSetsockopt(s, ipprotoIPV6, ipv6CHECKSUM, []byte{4, 0, 0, 0})
	require.True(t, ok)
	require.Equal(t, errRet(EINVAL), ret, "RFC 3542: not on an ICMPv6 socket")
	_, e = task.sendTo(s, f, req[:3], to, nil, nil, 0)
	require.Equal(t, EINVAL, e, "no room for the checksum")

	a, _ := task.newSocket(afINET6, sockRAW, 253)
	b, _ := task.newSocket(afINET6, sockRAW, 253)
	bf := &openFile{ops: b, flags: oRDWR}
	ret, _ = task.rawSetsockopt(a, ipprotoIPV6, ipv6CHECKSUM, []byte{3, 0, 0, 0})
	require.Equal(t, errRet(EINVAL), ret, "odd offset")
	task.rawSetsockopt(b, ipprotoIPV6, ipv6CHECKSUM, []byte{2, 0, 0, 0})
	data := []byte("ck\x00\x00summed!!")
	_, e = task.sendTo(a, &openFile{ops: a}, data, to, nil, nil, 0)
	require.Zero(t, e)
	require.Len(t, b.rq, 1)
	require.True(t, b.rq[0].csumBad, "the sender computed none")
	_, e = b.recv(task, bf, 100, msgDONTWAIT)
	require.Equal(t, EAGAIN, e)
	require.Empty(t, b.rq, "dropped")
	task.sendTo(a, &openFile{ops: a}, data, to, nil, nil, 0)
	_, e = b.recv(task, bf, 100, 0)
	require.Equal(t, EHOSTUNREACH, e, "a blocking receive masquerades")
	task.rawSetsockopt(a, solRAW, ipv6CHECKSUM, []byte{2, 0, 0, 0})
	task.sendTo(a, &openFile{ops: a}, data, to, nil, nil, 0)
	r, e := b.recv(task, bf, 100, 0)
	require.Zero(t, e)
	require.Zero(t, inetChecksum(r.data, pseudo6(ip6Loopback, ip6Loopback, len(r.data), 253)))

	require.Equal(t, EADDRNOTAVAIL, s.rawBind(sockAddr{family: afINET6, ip: ip4Loopback}.encode()), "IPv6 only")
	_, e = task.sendTo(s, f, req, sockAddr{family: afINET6, ip: ip4Loopback}.encode(), nil, nil, 0)
	require.Equal(t, ENETUNREACH, e)
}

// TestRawNames: getsockname's port is the protocol; getpeername needs a
// connected port (both arches' syscall numbers).
func TestRawNames(t *testing.T) {
	bothArches(t, func(t *testing.T, a *arch) {
		task := testTaskArch(t, a)
		c := task.creds().clone()
		c.capEff |= 1 << capNetRaw
		task.credp.Store(c)
		fd := callSyscall(t, task, "socket", afINET, sockRAW, ipprotoICMP)
		require.Less(t, int64(fd), int64(1024))
		name := func(call string) (uint64, []byte) {
			require.NoError(t, task.tg.mm.WriteAt([]byte{64, 0, 0, 0}, scratch+256))
			r := callSyscall(t, task, call, fd, scratch, scratch+256)
			b := make([]byte, 16)
			require.NoError(t, task.tg.mm.ReadAt(b, scratch))
			return r, b
		}
		r, b := name("getsockname")
		require.Zero(t, r)
		require.Equal(t, sockAddr{family: afINET, ip: ip4Any, port: ipprotoICMP}.encode(), b)
		r, _ = name("getpeername")
		require.Equal(t, errRet(ENOTCONN), r)
		require.NoError(t, task.tg.mm.WriteAt(sin(v4(127, 0, 0, 3), 0), scratch+512))
		require.Zero(t, callSyscall(t, task, "connect", fd, scratch+512, 16))
		r, _ = name("getpeername")
		require.Equal(t, errRet(ENOTCONN), r, "connected to port 0")
		r, b = name("getsockname")
		require.Zero(t, r)
		require.Equal(t, sockAddr{family: afINET, ip: ip4Loopback, port: ipprotoICMP}.encode(), b, "the route's source")
		require.NoError(t, task.tg.mm.WriteAt(sin(v4(127, 0, 0, 3), 7), scratch+512))
		require.Zero(t, callSyscall(t, task, "connect", fd, scratch+512, 16))
		r, b = name("getpeername")
		require.Zero(t, r)
		require.Equal(t, sin(v4(127, 0, 0, 3), 7), b)
		require.Equal(t, errRet(EINVAL), callSyscall(t, task, "bind", fd, scratch+512, 16), "bound after connect")
		require.Equal(t, errRet(EOPNOTSUPP), callSyscall(t, task, "listen", fd, 1))
	})
}

// TestRawCmsgs: IP_RECVTTL/IP_PKTINFO/IP_RECVTOS and the IPv6 hop limit,
// packet info and traffic class, in the kernel's order; IP_PKTINFO's
// interface and specific destination only for a packet queued while it
// was on (ipv4_pktinfo_prepare).
func TestRawCmsgs(t *testing.T) {
	task := rawTask(t)
	s, f := rawSock4(t, task, 253)
	s.opts[sockOpt{ipprotoIP, ipTTL}] = 9
	s.opts[sockOpt{ipprotoIP, ipTOS}] = 0x20
	task.sendTo(s, f, []byte("a"), sin(v4(127, 0, 0, 9), 0), nil, nil, 0)
	for _, o := range []int{ipRECVTTL, ipPKTINFO, ipRECVTOS} {
		s.opts[sockOpt{ipprotoIP, o}] = 1
	}
	task.sendTo(s, f, []byte("b"), sin(v4(127, 0, 0, 9), 0), nil, nil, 0)
	want := func(pktinfo []byte) []ipCmsg {
		return []ipCmsg{{ipprotoIP, ipPKTINFO, pktinfo}, {ipprotoIP, ipTTL, []byte{9, 0, 0, 0}}, {ipprotoIP, ipTOS, []byte{0x20}}}
	}
	r, _ := s.recv(task, f, 100, 0)
	require.Equal(t, want([]byte{0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 9}), s.rawCmsgs(r.ip))
	r, _ = s.recv(task, f, 100, 0)
	require.Equal(t, want([]byte{1, 0, 0, 0, 127, 0, 0, 9, 127, 0, 0, 9}), s.rawCmsgs(r.ip))
	ctl, trunc := task.buildCmsgs(s, r, 20, 0)
	require.True(t, trunc, "20 bytes hold no in_pktinfo message")
	require.Equal(t, []byte{20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0}, ctl,
		"what fits of it, cmsg_len cut to 20, and nothing after (put_cmsg)")

	s6, _ := task.newSocket(afINET6, sockRAW, 253)
	f6 := &openFile{ops: s6}
	s6.opts[sockOpt{ipprotoIPV6, ipv6HOPS}] = 7
	s6.opts[sockOpt{ipprotoIPV6, ipv6TCLASS}] = 0x28
	for _, o := range []int{ipv6RECVHOPLIMIT, ipv6RECVTCLASS, ipv6RECVPKTINFO} {
		s6.opts[sockOpt{ipprotoIPV6, o}] = 1
	}
	ret, ok := task.rawSetsockopt(s6, ipprotoIPV6, ipv62292HOPLIMIT, []byte{1, 0, 0, 0})
	require.True(t, ok)
	require.Zero(t, ret)
	task.sendTo(s6, f6, []byte("c"), sockAddr{family: afINET6, ip: ip6Loopback}.encode(), nil, nil, 0)
	r, _ = s6.recv(task, f6, 100, 0)
	pi := append(ip6Loopback[:], 1, 0, 0, 0)
	require.Equal(t, []ipCmsg{{ipprotoIPV6, ipv6PKTINFO, pi}, {ipprotoIPV6, ipv6HOPLIMIT, []byte{7, 0, 0, 0}},
		{ipprotoIPV6, ipv6TCLASS, []byte{0x28, 0, 0, 0}}, {ipprotoIPV6, ipv62292HOPLIMIT, []byte{7, 0, 0, 0}}}, s6.rawCmsgs(r.ip))
}

// TestRawSeesUDP: the in-kernel UDP's datagrams reach raw IPPROTO_UDP
// sockets (the checksum field holding the pseudo header's sum, as on
// lo), a datagram to a closed port makes an ICMP port unreachable for
// the raw ICMP sockets, and a UDP datagram sent through a raw socket
// reaches the UDP socket of its port unless its checksum is wrong.
func TestRawSeesUDP(t *testing.T) {
	task := rawTask(t)
	ru, _ := rawSock4(t, task, ipprotoUDP)
	ri, _ := rawSock4(t, task, ipprotoICMP)
	tx, _ := task.newSocket(afINET, sockDGRAM, 0)
	rx, _ := task.newSocket(afINET, sockDGRAM, 0)
	require.Zero(t, tx.inetBind(task, sin(ip4Loopback, 40001)))
	require.Zero(t, rx.inetBind(task, sin(ip4Loopback, 40002)))
	txf, rxf := &openFile{ops: tx}, &openFile{ops: rx, flags: oNONBLOCK}
	_, e := task.sendTo(tx, txf, []byte("data"), sin(ip4Loopback, 40002), nil, nil, 0)
	require.Zero(t, e)
	require.Len(t, ru.rq, 1)
	p := ru.rq[0].data
	require.Len(t, p, 20+8+4)
	require.Equal(t, byte(ipprotoUDP), p[9])
	require.Equal(t, []byte{0x9c, 0x41, 0x9c, 0x42, 0, 12}, p[20:26])
	require.Equal(t, ^inetChecksum(nil, pseudo4(ip4Loopback, ip4Loopback, 12, ipprotoUDP)), binary.BigEndian.Uint16(p[26:]))
	require.Empty(t, ri.rq, "delivered: no error")
	require.Len(t, rx.rq, 1)

	task.sendTo(tx, txf, []byte("gone"), sin(ip4Loopback, 40003), nil, nil, 0)
	require.Len(t, ri.rq, 1)
	m := ri.rq[0].data
	require.Equal(t, []byte{3, 3}, m[20:22], "port unreachable")
	require.Equal(t, byte(0xc0), m[1], "internetwork control precedence")
	require.Zero(t, inetChecksum(m[20:], 0))
	require.Equal(t, ru.rq[1].data, m[28:], "the whole datagram quoted (it fits in 576 bytes)")

	// Through the raw socket: no checksum (0), then a wrong one.
	rx.rq, rx.rqBytes = nil, 0
	u := []byte{0x9c, 0x49, 0x9c, 0x42, 0, 10, 0, 0, 'h', 'i'}
	_, e = task.sendTo(ru, &openFile{ops: ru}, u, sin(ip4Loopback, 0), nil, nil, 0)
	require.Zero(t, e)
	r, e := rx.recv(task, rxf, 100, 0)
	require.Zero(t, e)
	require.Equal(t, "hi", string(r.data))
	require.Equal(t, sockAddr{family: afINET, ip: ip4Loopback, port: 40009}, r.from)
	u[6] = 0x12
	task.sendTo(ru, &openFile{ops: ru}, u, sin(ip4Loopback, 0), nil, nil, 0)
	_, e = rx.recv(task, rxf, 100, 0)
	require.Equal(t, EAGAIN, e, "a wrong checksum is dropped")
	u[5] = 200 // longer than the packet
	u[6] = 0
	task.sendTo(ru, &openFile{ops: ru}, u, sin(ip4Loopback, 0), nil, nil, 0)
	_, e = rx.recv(task, rxf, 100, 0)
	require.Equal(t, EAGAIN, e, "a UDP length past the packet is dropped")
}

// TestRawProcNet: /proc/net/raw lists raw sockets as raw_sock_seq_show
// does (compared with Linux 6.18 by hand: the same program natively):
// inet_rcv_saddr, the protocol as the port, inet_daddr with port 0, the
// state, the receive queue's truesize, sk_drops; a protocol's sockets
// newest first.
func TestRawProcNet(t *testing.T) {
	task := rawTask(t)
	a, af := rawSock4(t, task, ipprotoICMP)
	b, _ := rawSock4(t, task, ipprotoICMP)
	c, _ := rawSock4(t, task, 253)
	require.Zero(t, b.rawBind(sin(v4(127, 0, 0, 2), 0)))
	require.Zero(t, c.rawConnect(task, sin(v4(127, 0, 0, 3), 9)))
	a.opts[sockOpt{solSOCKET, soRCVBUF}] = sockMinRcvbuf
	for range 5 {
		task.sendTo(a, af, icmpEchoMsg(icmpEcho, 1, ""), sin(ip4Loopback, 0), nil, nil, 0)
	}
	lines := strings.Split(string(task.tg.k.net().procInetTable(afINET, sockRAW)), "\n")
	require.Equal(t, []string{
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops",
		"   1: 0200007F:0001 00000000:0000 07 00000000:00000000 00:00000000 00000000  1000        0 " + itoa(int(b.ino)) + " 2 0000000000000000 0",
		"   1: 00000000:0001 00000000:0000 07 00000000:000009C0 00:00000000 00000000  1000        0 " + itoa(int(a.ino)) + " 2 0000000000000000 7",
		" 253: 0100007F:00FD 0300007F:0000 01 00000000:00000000 00:00000000 00000000  1000        0 " + itoa(int(c.ino)) + " 2 0000000000000000 0",
		"",
	}, lines)
}

// TestRawShutdown: shutdown of an unconnected raw socket is ENOTCONN but
// recorded: poll shows POLLRDHUP (and POLLHUP for both directions); an
// empty queue is EAGAIN to a non-blocking receive, end of file to a
// blocking one (Linux 6.18, natively).
func TestRawShutdown(t *testing.T) {
	bothArches(t, func(t *testing.T, a *arch) {
		task := testTaskArch(t, a)
		c := task.creds().clone()
		c.capEff |= 1 << capNetRaw
		task.credp.Store(c)
		fd := callSyscall(t, task, "socket", afINET, sockRAW, 253)
		s, f, e := task.fileSock(int32(fd))
		require.Zero(t, e)
		require.Equal(t, errRet(ENOTCONN), callSyscall(t, task, "shutdown", fd, shutRD))
		require.Equal(t, uint16(pollIN|pollOUT|pollRDHUP), s.poll(pollIN|pollOUT|pollRDHUP))
		_, e = s.recv(task, f, 10, msgDONTWAIT)
		require.Equal(t, EAGAIN, e)
		r, e := s.recv(task, f, 10, 0)
		require.Zero(t, e)
		require.Empty(t, r.data, "end of file")
		require.Equal(t, errRet(ENOTCONN), callSyscall(t, task, "shutdown", fd, shutWR))
		require.Equal(t, uint16(pollIN|pollOUT|pollRDHUP|pollHUP), s.poll(pollIN|pollOUT|pollRDHUP))
	})
}

// TestRawErrQueue: MSG_ERRQUEUE reads the (always empty) error queue,
// not a queued packet; turning IP_RECVERR on says once that nothing
// will be queued there.
func TestRawErrQueue(t *testing.T) {
	task := rawTask(t)
	s, f := rawSock4(t, task, 253)
	task.sendTo(s, f, []byte("x"), sin(ip4Loopback, 0), nil, nil, 0)
	_, e := s.recv(task, f, 100, msgERRQUEUE)
	require.Equal(t, EAGAIN, e)
	require.Len(t, s.rq, 1, "the packet stays")
	ret, ok := task.rawSetsockopt(s, ipprotoIP, ipRECVERR, []byte{1, 0, 0, 0})
	require.False(t, ok, "stored as any IP option")
	require.Zero(t, ret)
	require.Equal(t, 1, task.tg.k.unimpl["raw socket IP_RECVERR/IPV6_RECVERR (the error queue stays empty)"])
}
