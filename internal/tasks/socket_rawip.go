package tasks

import "encoding/binary"

// Raw IP sockets of the in-kernel loopback network (--net=loopback):
// socket(AF_INET/AF_INET6, SOCK_RAW, proto), as net/ipv4/raw.c and
// net/ipv6/raw.c have them, over an IP layer that has one interface, lo
// (127.0.0.0/8 and ::1).
//
// A datagram sent through a raw socket to a loopback address becomes an
// IP packet (ipPacket) that is delivered, as ip_local_deliver does, to
// every raw socket of its protocol that matches it (raw_v4_match /
// raw_v6_match: the protocol, the bound local address if any, the
// connected remote address if any, and ICMP_FILTER / ICMPV6_FILTER), and
// then to the kernel's own handler of the protocol. Two are modelled:
// ICMP's and ICMPv6's echo (icmp_echo, icmpv6_echo_reply: an echo
// request to a loopback address from a loopback address is answered
// with an echo reply, which the raw sockets see in turn) and UDP input
// (udpInputLocked: a checked datagram goes to the in-kernel UDP socket of
// its port, else an ICMP port unreachable comes back). The in-kernel
// UDP's own datagrams, and its port unreachables, are shown to the raw
// sockets too (udpSeenByRawLocked). The in-kernel TCP has no packets:
// raw sockets never see its segments and a raw TCP segment reaches
// nothing (Linux would answer it with a reset); no other ICMP error
// (protocol unreachable, ...) is generated.
//
// IPv4 raw sockets receive the IPv4 header with the payload; the header
// is built as ip_build_and_send_pkt / __ip_make_skb build it (version 4,
// IHL 5, IP_TOS, total length, DF, IP_TTL or 64, the protocol, the
// checksum); with IP_HDRINCL (set for IPPROTO_RAW) the sender supplies
// it and the kernel fills in what raw_send_hdrinc fills in. IPv6 raw
// sockets receive the payload only; the kernel computes the ICMPv6
// checksum (and the one IPV6_CHECKSUM asks for) on send and checks it on
// receive. The IPv4 identification and every other choice come from
// counters, never from host time or randomness, so runs repeat (Linux
// hashes a random secret into the identification).
//
// Not modelled, each failing loudly or documented here: the lo-only
// world has no route off the host (ENETUNREACH), so an IPv6 raw socket
// neither sends to nor connects to a v4-mapped address (Linux routes the
// one by its default route and connects the other through IPv4), fragments
// (IP_HDRINCL packets with MF or an offset are dropped: a lone fragment
// times out in reassembly), IPv6 extension headers in IPV6_HDRINCL
// packets (EOPNOTSUPP, logged), IP options on a sent packet
// (IP_OPTIONS is ENOPROTOOPT) and in an echo reply (Linux echoes the
// request's), the timestamp and other ICMP requests (unanswered).
//
// Every field here is protected by netStack.mu.

// Protocol numbers and options of raw sockets.
const (
	ipprotoRAW = 255
	solRAW     = 255 // SOL_RAW

	icmpFILTER   = 1  // SOL_RAW ICMP_FILTER
	icmp6FILTER  = 1  // IPPROTO_ICMPV6 ICMP6_FILTER
	ipHDRINCL    = 3  // IPPROTO_IP IP_HDRINCL
	ipTOS        = 1  // IPPROTO_IP IP_TOS
	ipTTL        = 2  // IPPROTO_IP IP_TTL
	ipv6CHECKSUM = 7  // IPPROTO_IPV6 (and SOL_RAW) IPV6_CHECKSUM
	ipv6HDRINCL  = 36 // IPPROTO_IPV6 IPV6_HDRINCL
	ipv6HOPS     = 16 // IPPROTO_IPV6 IPV6_UNICAST_HOPS

	ipprotoMax   = 263    // IPPROTO_MAX: socket(2)'s protocol bound
	ipMaxPacket  = 0xffff // the largest IPv4 datagram
	loMTU        = 65536  // the loopback interface's MTU
	ipv6MaxPlen  = 0xffff // IPV6_MAXPLEN
	ipv4HdrLen   = 20
	ipv6HdrLen   = 40
	ipDF         = 0x4000
	ipMF         = 0x2000
	icmpEcho     = 8
	icmpEchoRep  = 0
	icmp6Echo    = 128
	icmp6EchoRep = 129

	// EHOSTUNREACH: what a blocking receive of a datagram whose
	// checksum is wrong answers (rawv6_recvmsg's csum_copy_err).
	EHOSTUNREACH Errno = 113
)

// rawSock is the raw-socket part of a sock (raw_sock/raw6_sock with
// inet_sock's addresses).
type rawSock struct {
	// rcvAddr is inet_rcv_saddr (sk_v6_rcv_saddr): the bound local
	// address packets must be sent to (the wildcard: any). srcAddr is
	// inet_saddr: the source of what s sends (the wildcard: the route's
	// choice; a multicast or broadcast bind leaves it so).
	rcvAddr, srcAddr [16]byte
	// connected: connect(2) set dst/dport (sk_state TCP_ESTABLISHED);
	// only packets from dst are received, and send needs no address.
	connected bool
	dst       [16]byte
	dport     uint16 // inet_dport: the port connect was given (getpeername: ENOTCONN if 0)
	hdrincl   bool   // IP_HDRINCL / IPV6_HDRINCL
	// icmpFilter is ICMP_FILTER (a set bit 1<<type drops that type);
	// icmp6Filter ICMP6_FILTER (bit type&31 of word type>>5).
	icmpFilter  uint32
	icmp6Filter [8]uint32
	// csumOff is IPV6_CHECKSUM: the offset of the checksum the kernel
	// computes on send and checks on receive, -1 for none (IPPROTO_ICMPV6:
	// always 2).
	csumOff int
	drops   int // sk_drops: packets a full receive buffer or a wrong checksum dropped (/proc/net/raw)
}

// ipPacket is one IP datagram on lo: the addresses (16-byte form), the
// protocol and the bytes a raw socket of the family reads (the IPv4
// header and payload; the IPv6 payload).
type ipPacket struct {
	v6       bool
	src, dst [16]byte
	proto    int
	data     []byte
	hdrLen   int // the IPv4 header's length in data (0 for IPv6)
	ttl, tos int // the TTL (hop limit) and TOS (traffic class)
	truesize int // what the packet charges a receive buffer (skbTruesize)
}

// Linux's receive-buffer accounting charges a packet its skb's truesize,
// not its length: the buffer its sender allocated (x86-64, Linux 6.18:
// the data rounded up to 64 bytes, plus struct skb_shared_info, taken
// from the 576-byte small-head cache or rounded to a kmalloc size) plus
// struct sk_buff; past SKB_MAX_ALLOC the payload goes to page fragments
// and counts as it is. A raw socket, as __sock_queue_rcv_skb, queues
// while it holds less than SO_RCVBUF, so these sizes decide how many
// packets fit.
const (
	skbSharedInfo = 320
	skbStruct     = 256
	skbSmallHead  = 576
	skbMaxAlloc   = 4*4096 - skbSharedInfo // SKB_MAX_ORDER(0, 2)
	skbExtra4     = 16 + 15                // __ip_append_data: LL_RESERVED_SPACE(lo) + 15
	skbExtra6     = 16 + 8                 // __ip6_append_data: LL_RESERVED_SPACE(lo) + a fragment header
)

// skbHead is the truesize of a linear skb of n bytes (__alloc_skb).
func skbHead(n int) int {
	a := (n+63)&^63 + skbSharedInfo
	if a <= skbSmallHead {
		return skbSmallHead + skbStruct
	}
	k := 1024
	for k < a {
		k <<= 1
	}
	return k + skbStruct
}

// skbTruesize is the truesize of a packet built by ip_append_data (v6:
// ip6_append_data): headers of hdr bytes and data bytes of payload.
func skbTruesize(v6 bool, hdr, data int) int {
	extra := skbExtra4
	if v6 {
		extra = skbExtra6
	}
	if hdr+data+extra < skbMaxAlloc {
		return skbHead(hdr + data + extra)
	}
	return skbHead(hdr+extra) + data
}

// ipRecvInfo is what a raw socket's IP control messages report of a
// received packet (ip_cmsg_recv_offset, ip6_datagram_recv_ctl).
type ipRecvInfo struct {
	dst      [16]byte
	ttl, tos int
	// pktinfo: IP_PKTINFO was on when the packet was queued
	// (ipv4_pktinfo_prepare), so it reports the interface and the
	// specific destination; else only ipi_addr.
	pktinfo bool
}

// ipCmsg is one IP control message of a receive.
type ipCmsg struct {
	level, typ uint32
	data       []byte
}

// Receive options of raw sockets and the control messages they ask for.
const (
	ipPKTINFO        = 8  // IP_PKTINFO: cmsg IP_PKTINFO (struct in_pktinfo)
	ipRECVTTL        = 12 // cmsg IP_TTL (int)
	ipRECVTOS        = 13 // cmsg IP_TOS (one byte)
	ipRECVERR        = 11 // IP_RECVERR: the error queue (never filled here)
	ipv6RECVERR      = 25 // IPV6_RECVERR
	ipv62292PKTINFO  = 2  // IPV6_2292PKTINFO: cmsg of that type (struct in6_pktinfo)
	ipv62292HOPLIMIT = 8  // IPV6_2292HOPLIMIT: cmsg of that type (int)
	ipv6RECVPKTINFO  = 49 // cmsg IPV6_PKTINFO
	ipv6PKTINFO      = 50
	ipv6RECVHOPLIMIT = 51 // cmsg IPV6_HOPLIMIT (int)
	ipv6HOPLIMIT     = 52
	ipv6RECVTCLASS   = 66 // cmsg IPV6_TCLASS (int)
	ipv6TCLASS       = 67
	loIfindex        = 1
)

// rawCmsgs is the IP control messages the options of s ask for about a
// received packet, in the kernel's order.
func (s *sock) rawCmsgs(ri *ipRecvInfo) []ipCmsg {
	le := binary.LittleEndian
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	on := func(level, name int) bool { return s.opts[sockOpt{level, name}] != 0 }
	var out []ipCmsg
	if s.family == afINET {
		if on(ipprotoIP, ipPKTINFO) {
			b := make([]byte, 8, 12) // ipi_ifindex, ipi_spec_dst
			if ri.pktinfo {
				le.PutUint32(b, loIfindex)
				copy(b[4:], ri.dst[12:])
			}
			b = append(b, ri.dst[12:]...) // ipi_addr
			out = append(out, ipCmsg{ipprotoIP, ipPKTINFO, b})
		}
		if on(ipprotoIP, ipRECVTTL) {
			out = append(out, ipCmsg{ipprotoIP, ipTTL, le.AppendUint32(nil, uint32(ri.ttl))})
		}
		if on(ipprotoIP, ipRECVTOS) {
			out = append(out, ipCmsg{ipprotoIP, ipTOS, []byte{byte(ri.tos)}})
		}
		return out
	}
	pktinfo := func() []byte { return le.AppendUint32(append([]byte(nil), ri.dst[:]...), loIfindex) }
	if on(ipprotoIPV6, ipv6RECVPKTINFO) {
		out = append(out, ipCmsg{ipprotoIPV6, ipv6PKTINFO, pktinfo()})
	}
	if on(ipprotoIPV6, ipv6RECVHOPLIMIT) {
		out = append(out, ipCmsg{ipprotoIPV6, ipv6HOPLIMIT, le.AppendUint32(nil, uint32(ri.ttl))})
	}
	if on(ipprotoIPV6, ipv6RECVTCLASS) {
		out = append(out, ipCmsg{ipprotoIPV6, ipv6TCLASS, le.AppendUint32(nil, uint32(ri.tos))})
	}
	if on(ipprotoIPV6, ipv62292PKTINFO) {
		out = append(out, ipCmsg{ipprotoIPV6, ipv62292PKTINFO, pktinfo()})
	}
	if on(ipprotoIPV6, ipv62292HOPLIMIT) {
		out = append(out, ipCmsg{ipprotoIPV6, ipv62292HOPLIMIT, le.AppendUint32(nil, uint32(ri.ttl))})
	}
	return out
}

func (p *ipPacket) payload() []byte { return p.data[p.hdrLen:] }

// newRawSock checks a SOCK_RAW socket(2) triple as inet_create and
// inet6_create do: the protocol (0 matches no raw protosw entry), then
// CAP_NET_RAW.
func (t *Task) newRawSock(family, typ, proto int) (*sock, Errno) {
	if typ&^(0xf|sockNONBLOCK|sockCLOEXEC) != 0 || proto < 0 || proto >= ipprotoMax {
		return nil, EINVAL
	}
	if proto == ipprotoIP {
		return nil, EPROTONOSUPPORT
	}
	if !t.creds().capable(capNetRaw) {
		return nil, EPERM
	}
	ns := t.tg.k.net()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s := ns.newSock(family, sockRAW, proto)
	s.cred = t.ucred()
	s.raw = &rawSock{rcvAddr: s.wildcard().ip, srcAddr: s.wildcard().ip, csumOff: -1, hdrincl: proto == ipprotoRAW}
	if family == afINET6 && proto == ipprotoICMPV6 {
		s.raw.csumOff = 2 // rawv6_init_sk
	}
	ns.raw = append(ns.raw, s)
	return s, 0
}

// unhashRawLocked takes a closed raw socket out of delivery.
func (s *sock) unhashRawLocked() {
	ns := s.ns
	for i, o := range ns.raw {
		if o == s {
			ns.raw = append(ns.raw[:i:i], ns.raw[i+1:]...)
			return
		}
	}
}

// isMulticastOrBroadcast: a bind address that leaves the source to the
// route (224.0.0.0/4, 255.255.255.255; ff00::/8).
func isMulticastOrBroadcast(ip [16]byte) bool {
	if isV4(ip) {
		return ip[12]&0xf0 == 0xe0 || [4]byte(ip[12:]) == [4]byte{255, 255, 255, 255}
	}
	return ip[0] == 0xff
}

// rawBind is raw_bind / rawv6_bind.
func (s *sock) rawBind(raw []byte) Errno {
	var ip [16]byte
	if s.family == afINET {
		// raw_bind reads sin_addr without checking the family.
		if len(raw) < 16 {
			return EINVAL
		}
		ip = v4(raw[4], raw[5], raw[6], raw[7])
	} else {
		if len(raw) < 24 || binary.LittleEndian.Uint16(raw) != afINET6 {
			return EINVAL
		}
		copy(ip[:], raw[8:24])
		if isV4(ip) {
			return EADDRNOTAVAIL // raw IPv6 sockets are IPv6 only
		}
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	r := s.raw
	if r.connected {
		return EINVAL // sk_state is not TCP_CLOSE
	}
	if !isAny(ip) && !isLoopback(ip) && !isMulticastOrBroadcast(ip) {
		return EADDRNOTAVAIL
	}
	r.rcvAddr, r.srcAddr = ip, ip
	if isMulticastOrBroadcast(ip) {
		r.srcAddr = s.wildcard().ip
	}
	return 0
}

// rawConnect is ip4_datagram_connect / ip6_datagram_connect for a raw
// socket: the destination is remembered (and filters what is received),
// and an unbound socket takes the route's source as its local address.
func (s *sock) rawConnect(t *Task, raw []byte) Errno {
	ns := s.ns
	if len(raw) < 2 {
		return EINVAL
	}
	fam := int(binary.LittleEndian.Uint16(raw))
	if fam == afUNSPEC {
		ns.mu.Lock()
		defer ns.mu.Unlock()
		r := s.raw
		r.connected, r.dst, r.dport = false, s.wildcard().ip, 0
		return 0
	}
	var dst [16]byte
	var port uint16
	if s.family == afINET {
		if len(raw) < 16 {
			return EINVAL
		}
		if fam != afINET {
			return EAFNOSUPPORT
		}
		dst, port = v4(raw[4], raw[5], raw[6], raw[7]), binary.BigEndian.Uint16(raw[2:])
	} else {
		if fam != afINET6 {
			return EAFNOSUPPORT // ip6_datagram_connect_v6_only (Linux 6.18 checks the family first)
		}
		if len(raw) < 24 {
			return EINVAL
		}
		copy(dst[:], raw[8:24])
		port = binary.BigEndian.Uint16(raw[2:])
		if isV4(dst) {
			// __ip6_datagram_connect connects the IPv6 socket through
			// IPv4 (__ip4_datagram_connect); raw IPv6 sockets here are
			// IPv6 only.
			t.sockUnimpl("connect of a raw AF_INET6 socket to a v4-mapped address")
			return EAFNOSUPPORT
		}
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	d, src, e := s.rawRouteLocked(dst)
	if e != 0 {
		return e
	}
	r := s.raw
	if isAny(r.srcAddr) {
		r.srcAddr = src
	}
	if isAny(r.rcvAddr) {
		r.rcvAddr = src
	}
	r.connected, r.dst, r.dport = true, d, port
	return 0
}

// rawRouteLocked is the output route of a raw socket: the destination
// (the wildcard means this host: the bound source, else the loopback
// address) and the source address, or ENETUNREACH for anything off lo.
func (s *sock) rawRouteLocked(dst [16]byte) (d, src [16]byte, e Errno) {
	r := s.raw
	d = dst
	if isAny(d) {
		switch {
		case s.family == afINET6:
			d = ip6Loopback // rawv6_sendmsg: "::" means loopback
		case !isAny(r.srcAddr):
			d = r.srcAddr
		default:
			d = ip4Loopback
		}
	}
	if !isLoopback(d) || isV4(d) != (s.family == afINET) {
		return d, src, ENETUNREACH
	}
	src = r.srcAddr
	if isAny(src) {
		// The local route's preferred source (127.0.0.1 for all of
		// 127.0.0.0/8).
		src = ip4Loopback
		if s.family == afINET6 {
			src = ip6Loopback
		}
	}
	return d, src, 0
}

// rawName is getsockname of a raw socket: the bound (or connected-to
// source) address and, in the port, the protocol (inet_create sets
// inet_sport to the protocol number).
func (s *sock) rawNameLocked() sockAddr {
	a := sockAddr{family: s.family, ip: s.raw.rcvAddr, port: uint16(s.proto)}
	if isAny(a.ip) {
		a.ip = s.raw.srcAddr
	}
	return a
}

// rawPeerLocked is getpeername: ENOTCONN unless connected to a non-zero
// port (inet_getname tests inet_dport).
func (s *sock) rawPeerLocked() (sockAddr, Errno) {
	r := s.raw
	if !r.connected || r.dport == 0 {
		return sockAddr{}, ENOTCONN
	}
	return sockAddr{family: s.family, ip: r.dst, port: r.dport}, 0
}

// rawSend is raw_sendmsg / rawv6_sendmsg: rawTo is the destination
// sockaddr (nil or empty: the connected peer).
func (s *sock) rawSend(t *Task, b []byte, rawTo []byte, flags int) (int, Errno) {
	if s.family == afINET6 {
		return s.raw6Send(t, b, rawTo, flags)
	}
	if len(b) > ipMaxPacket {
		return 0, EMSGSIZE
	}
	if flags&msgOOB != 0 {
		return 0, EOPNOTSUPP
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	r := s.raw
	var dst [16]byte
	if len(rawTo) > 0 {
		if len(rawTo) < 16 {
			return 0, EINVAL
		}
		// AF_UNSPEC is taken for AF_INET ("forgot to set AF_INET").
		if fam := binary.LittleEndian.Uint16(rawTo); fam != afINET && fam != afUNSPEC {
			return 0, EAFNOSUPPORT
		}
		dst = v4(rawTo[4], rawTo[5], rawTo[6], rawTo[7])
	} else {
		if !r.connected {
			return 0, EDESTADDRREQ
		}
		dst = r.dst
	}
	d, src, e := s.rawRouteLocked(dst)
	if e != 0 {
		return 0, e
	}
	if r.hdrincl {
		return s.rawSendHdrincLocked(b, d, src)
	}
	if len(b)+ipv4HdrLen > ipMaxPacket {
		return 0, EMSGSIZE
	}
	pkt := make([]byte, ipv4HdrLen+len(b))
	pkt[0] = 0x45
	pkt[1] = byte(s.ipOptLocked(ipTOS, 0))
	binary.BigEndian.PutUint16(pkt[2:], uint16(len(pkt)))
	binary.BigEndian.PutUint16(pkt[4:], ns.nextIPIDLocked())
	binary.BigEndian.PutUint16(pkt[6:], ipDF) // IP_PMTUDISC_WANT and a packet within the MTU
	pkt[8] = byte(s.ttlLocked())
	pkt[9] = byte(s.proto)
	copy(pkt[12:16], src[12:])
	copy(pkt[16:20], d[12:])
	binary.BigEndian.PutUint16(pkt[10:], inetChecksum(pkt[:ipv4HdrLen], 0))
	copy(pkt[ipv4HdrLen:], b)
	// The header's protocol byte is what receivers match (a protocol
	// number past 255 is cut to 8 bits, as iph->protocol is).
	ns.ipDeliverLocked(&ipPacket{src: src, dst: d, proto: int(pkt[9]), data: pkt, hdrLen: ipv4HdrLen,
		truesize: skbTruesize(false, ipv4HdrLen, len(b))})
	return len(b), 0
}

// rawSendHdrincLocked is raw_send_hdrinc: b is the whole packet; a zero
// source and identification are filled in, the total length and the
// header checksum set. A version other than 4 is sent and dropped by
// the receiving side (ip_rcv), a fragment waits for the rest forever.
func (s *sock) rawSendHdrincLocked(b []byte, d, src [16]byte) (int, Errno) {
	ns := s.ns
	if len(b) > loMTU {
		return 0, EMSGSIZE
	}
	if len(b) < ipv4HdrLen {
		return 0, EINVAL
	}
	hl := int(b[0]&0xf) * 4
	if hl > len(b) || hl < ipv4HdrLen {
		return 0, EINVAL // IHL past the data, or too short for a header (Linux 6.x)
	}
	if b[0]>>4 != 4 || len(b) > ipMaxPacket {
		return len(b), 0 // ip_rcv drops it (inhdr_error / a length past tot_len's range)
	}
	pkt := append([]byte(nil), b...)
	if [4]byte(pkt[12:16]) == [4]byte{} {
		copy(pkt[12:16], src[12:])
	}
	binary.BigEndian.PutUint16(pkt[2:], uint16(len(pkt)))
	if binary.BigEndian.Uint16(pkt[4:]) == 0 {
		binary.BigEndian.PutUint16(pkt[4:], ns.nextIPIDLocked())
	}
	pkt[10], pkt[11] = 0, 0
	binary.BigEndian.PutUint16(pkt[10:], inetChecksum(pkt[:hl], 0))
	if binary.BigEndian.Uint16(pkt[6:])&(ipMF|0x1fff) != 0 {
		return len(b), 0 // a fragment: never reassembled
	}
	// The packet goes where the sockaddr routed it (lo); it is
	// delivered locally by its header's addresses (ip_local_deliver on
	// the output route's dst).
	p := &ipPacket{proto: int(pkt[9]), data: pkt, hdrLen: hl, truesize: skbHead(len(b) + skbExtra4)} // one linear skb
	p.src = v4(pkt[12], pkt[13], pkt[14], pkt[15])
	p.dst = v4(pkt[16], pkt[17], pkt[18], pkt[19])
	ns.ipDeliverLocked(p)
	return len(b), 0
}

// raw6Send is rawv6_sendmsg.
func (s *sock) raw6Send(t *Task, b []byte, rawTo []byte, flags int) (int, Errno) {
	if flags&msgOOB != 0 {
		return 0, EOPNOTSUPP
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	r := s.raw
	proto := s.proto
	var dst [16]byte
	if len(rawTo) > 0 {
		if len(rawTo) < 24 {
			return 0, EINVAL
		}
		if fam := binary.LittleEndian.Uint16(rawTo); fam != afINET6 && fam != afUNSPEC {
			return 0, EAFNOSUPPORT
		}
		// The port, when set, is the protocol (nexthdr): only an
		// IPPROTO_RAW socket may name another.
		if p := int(binary.BigEndian.Uint16(rawTo[2:])); p != 0 {
			if p != s.proto && s.proto != ipprotoRAW {
				return 0, EINVAL
			}
			proto = p
		}
		copy(dst[:], rawTo[8:24])
	} else {
		if !r.connected {
			return 0, EDESTADDRREQ
		}
		dst = r.dst
	}
	if proto > 255 {
		return 0, EINVAL
	}
	d, src, e := s.rawRouteLocked(dst)
	if e != 0 {
		return 0, e
	}
	if r.hdrincl {
		return s.raw6SendHdrincLocked(t, b)
	}
	if len(b) > ipv6MaxPlen {
		return 0, EMSGSIZE
	}
	pl := append([]byte(nil), b...)
	if off := r.csumOff; off >= 0 {
		// rawv6_push_pending_frames: the checksum over the pseudo
		// header and the payload, with the field itself taken as 0.
		if off >= len(pl)-1 {
			return 0, EINVAL
		}
		pl[off], pl[off+1] = 0, 0
		binary.BigEndian.PutUint16(pl[off:], inetChecksum(pl, pseudo6(src, d, len(pl), proto)))
	}
	hops := s.opts[sockOpt{ipprotoIPV6, ipv6HOPS}]
	if hops < 1 || hops > 255 {
		hops = 64
	}
	ns.ipDeliverLocked(&ipPacket{v6: true, src: src, dst: d, proto: proto, data: pl,
		ttl: int(hops), tos: int(s.opts[sockOpt{ipprotoIPV6, ipv6TCLASS}] & 0xff), truesize: skbTruesize(true, ipv6HdrLen, len(pl))})
	return len(b), 0
}

// raw6SendHdrincLocked is rawv6_send_hdrinc: b is the IPv6 header and
// payload, sent as it is (no checksum is computed).
func (s *sock) raw6SendHdrincLocked(t *Task, b []byte) (int, Errno) {
	if len(b) > loMTU {
		return 0, EMSGSIZE
	}
	if len(b) < ipv6HdrLen {
		return 0, EINVAL
	}
	plen := int(binary.BigEndian.Uint16(b[4:]))
	if b[0]>>4 != 6 || ipv6HdrLen+plen > len(b) {
		return len(b), 0 // ipv6_rcv drops it
	}
	switch next := b[6]; next {
	case 0, 43, 44, 50, 51, 60, 135, 139, 140: // extension headers
		t.sockUnimpl("raw IPv6 IPV6_HDRINCL packet with extension header " + itoa(int(next)))
		return 0, EOPNOTSUPP
	}
	p := &ipPacket{v6: true, proto: int(b[6]), data: append([]byte(nil), b[ipv6HdrLen:ipv6HdrLen+plen]...),
		ttl: int(b[7]), tos: int(binary.BigEndian.Uint16(b) >> 4 & 0xff), truesize: skbHead(len(b) + skbExtra4)}
	copy(p.src[:], b[8:24])
	copy(p.dst[:], b[24:40])
	s.ns.ipDeliverLocked(p)
	return len(b), 0
}

// ipOptLocked is an IPPROTO_IP integer option of s (def when unset).
func (s *sock) ipOptLocked(name int, def int32) int32 {
	if v, ok := s.opts[sockOpt{ipprotoIP, name}]; ok {
		return v
	}
	return def
}

// ttlLocked is the TTL of what s sends: IP_TTL when set to 1..255,
// else net.ipv4.ip_default_ttl.
func (s *sock) ttlLocked() int32 {
	if v := s.ipOptLocked(ipTTL, 64); v >= 1 && v <= 255 {
		return v
	}
	return 64
}

// nextIPIDLocked is the next IPv4 identification: a counter (Linux's
// ip_select_ident hashes a random secret; this keeps runs repeatable).
func (ns *netStack) nextIPIDLocked() uint16 {
	ns.ipID++
	if ns.ipID == 0 {
		ns.ipID = 1
	}
	return ns.ipID
}

// ipDeliverLocked is ip_local_deliver / ip6_input for a packet a raw
// socket sent on lo: a copy to every matching raw socket
// (raw_local_deliver), then the protocol's kernel handler (ICMP echo,
// UDP input).
func (ns *netStack) ipDeliverLocked(p *ipPacket) {
	ns.rawDeliverLocked(p)
	switch p.proto {
	case ipprotoICMP, ipprotoICMPV6:
		ns.icmpEchoLocked(p)
	case ipprotoUDP:
		ns.udpInputLocked(p)
	}
}

// rawDeliverLocked is raw_local_deliver: a copy of p to every matching
// raw socket.
func (ns *netStack) rawDeliverLocked(p *ipPacket) {
	if !p.v6 {
		p.ttl, p.tos = int(p.data[8]), int(p.data[1])
	}
	for _, o := range ns.raw {
		if o.closed || (o.family == afINET6) != p.v6 || !o.rawMatch(p) {
			continue
		}
		o.rawQueueLocked(p)
	}
}

// udpSeenByRawLocked is what raw sockets see of a datagram the
// in-kernel UDP sends (sendUDP) from src to d: the IP packet, by the raw
// IPPROTO_UDP sockets, and when no socket has the port (unreachable),
// the ICMP port unreachable the kernel answers it with, by the raw ICMP
// sockets.
func (ns *netStack) udpSeenByRawLocked(s *sock, src, d sockAddr, b []byte, unreachable bool) {
	v6 := !isV4(d.ip)
	u := make([]byte, 8+len(b))
	binary.BigEndian.PutUint16(u, src.port)
	binary.BigEndian.PutUint16(u[2:], d.port)
	binary.BigEndian.PutUint16(u[4:], uint16(len(u)))
	copy(u[8:], b)
	p := &ipPacket{v6: v6, src: src.ip, dst: d.ip, proto: ipprotoUDP}
	if v6 {
		p.truesize = skbTruesize(true, ipv6HdrLen+8, len(b))
	} else {
		p.truesize = skbTruesize(false, ipv4HdrLen+8, len(b))
	}
	var sum uint32
	if v6 {
		sum = pseudo6(src.ip, d.ip, len(u), ipprotoUDP)
		p.ttl = int(s.opts[sockOpt{ipprotoIPV6, ipv6HOPS}])
		if p.ttl < 1 || p.ttl > 255 {
			p.ttl = 64
		}
		p.tos = int(s.opts[sockOpt{ipprotoIPV6, ipv6TCLASS}] & 0xff)
	} else {
		sum = pseudo4(src.ip, d.ip, len(u), ipprotoUDP)
	}
	// lo checksums in "hardware" (CHECKSUM_PARTIAL): what the packet
	// carries, and what a raw socket reads, is the pseudo header's sum
	// (udp4_hwcsum / udp6_hwcsum_outgoing: ~csum_tcpudp_magic).
	binary.BigEndian.PutUint16(u[6:], ^inetChecksum(nil, sum))
	if v6 {
		p.data = u
	} else {
		p.data = ipv4Header(byte(s.ipOptLocked(ipTOS, 0)), len(u), ns.nextIPIDLocked(), ipDF, byte(s.ttlLocked()), ipprotoUDP, src.ip, d.ip)
		p.data = append(p.data, u...)
		p.hdrLen = ipv4HdrLen
	}
	ns.rawDeliverLocked(p)
	if unreachable {
		ns.icmpPortUnreachLocked(p)
	}
}

// ipv4Header builds an IPv4 header without options for a payload of n
// bytes, with its checksum.
func ipv4Header(tos byte, n int, id, frag uint16, ttl, proto byte, src, dst [16]byte) []byte {
	h := make([]byte, ipv4HdrLen, ipv4HdrLen+n)
	h[0], h[1] = 0x45, tos
	binary.BigEndian.PutUint16(h[2:], uint16(ipv4HdrLen+n))
	binary.BigEndian.PutUint16(h[4:], id)
	binary.BigEndian.PutUint16(h[6:], frag)
	h[8], h[9] = ttl, proto
	copy(h[12:16], src[12:])
	copy(h[16:20], dst[12:])
	binary.BigEndian.PutUint16(h[10:], inetChecksum(h, 0))
	return h
}

// udpInputLocked is udp_rcv for a UDP packet a raw socket sent: checked
// (length, checksum: a zero one is "none" in IPv4 only) and queued on
// the in-kernel UDP socket that has the port, or answered with an ICMP
// port unreachable.
func (ns *netStack) udpInputLocked(p *ipPacket) {
	u := p.payload()
	if len(u) < 8 {
		return
	}
	ulen := int(binary.BigEndian.Uint16(u[4:]))
	if ulen < 8 || ulen > len(u) {
		return
	}
	u = u[:ulen]
	c := binary.BigEndian.Uint16(u[6:])
	switch {
	case p.v6 && (c == 0 || inetChecksum(u, pseudo6(p.src, p.dst, ulen, ipprotoUDP)) != 0):
		return
	case !p.v6 && c != 0 && inetChecksum(u, pseudo4(p.src, p.dst, ulen, ipprotoUDP)) != 0:
		return
	}
	src := sockAddr{ip: p.src, port: binary.BigEndian.Uint16(u)}
	d := sockAddr{ip: p.dst, port: binary.BigEndian.Uint16(u[2:])}
	o := ns.lookupLocked(true, d, src)
	if o == nil {
		ns.icmpPortUnreachLocked(p)
		return
	}
	if o.shutRd || o.rqBytes+ulen-8 > o.rcvbuf() {
		return
	}
	src.family = afINET6
	if isV4(src.ip) {
		src.family = afINET
	}
	o.rq = append(o.rq, sockMsg{data: append([]byte(nil), u[8:]...), from: src.in(o.family)})
	o.rqBytes += ulen - 8
	o.notifyLocked()
}

// icmpPortUnreachLocked is icmp_send / icmp6_send of a port unreachable
// for UDP packet p, seen by the raw ICMP sockets: as much of p (its
// IPv4 header and data; IPv6: a rebuilt header with flow label 0, where
// Linux hashes one) as fits in 576 (IPv6: 1280) bytes. Linux rate-limits
// ICMP errors by host time (icmp_msgs_per_sec); this answers every one.
func (ns *netStack) icmpPortUnreachLocked(p *ipPacket) {
	if !isLoopback(p.src) {
		return
	}
	if !p.v6 {
		quote := p.data[:min(len(p.data), 576-ipv4HdrLen-8)]
		m := make([]byte, 8, 8+len(quote))
		m[0], m[1] = 3, 3 // ICMP_DEST_UNREACH, ICMP_PORT_UNREACH
		m = append(m, quote...)
		binary.BigEndian.PutUint16(m[2:], inetChecksum(m, 0))
		h := ipv4Header(p.data[1]&0x1e|0xc0, len(m), ns.nextIPIDLocked(), 0, 64, ipprotoICMP, p.dst, p.src)
		ns.rawDeliverLocked(&ipPacket{src: p.dst, dst: p.src, proto: ipprotoICMP, data: append(h, m...), hdrLen: ipv4HdrLen,
			truesize: skbTruesize(false, ipv4HdrLen, len(m))})
		return
	}
	orig := make([]byte, ipv6HdrLen, ipv6HdrLen+len(p.data))
	binary.BigEndian.PutUint32(orig, 6<<28|uint32(p.tos)<<20)
	binary.BigEndian.PutUint16(orig[4:], uint16(len(p.data)))
	orig[6], orig[7] = byte(p.proto), byte(p.ttl)
	copy(orig[8:24], p.src[:])
	copy(orig[24:40], p.dst[:])
	orig = append(orig, p.data...)
	quote := orig[:min(len(orig), 1280-ipv6HdrLen-8)]
	m := make([]byte, 8, 8+len(quote))
	m[0], m[1] = 1, 4 // ICMPV6_DEST_UNREACH, ICMPV6_PORT_UNREACH
	m = append(m, quote...)
	binary.BigEndian.PutUint16(m[2:], inetChecksum(m, pseudo6(p.dst, p.src, len(m), ipprotoICMPV6)))
	ns.rawDeliverLocked(&ipPacket{v6: true, src: p.dst, dst: p.src, proto: ipprotoICMPV6, data: m, ttl: 64,
		truesize: skbTruesize(true, ipv6HdrLen, len(m))})
}

// pseudo4 is the sum of the IPv4 pseudo header (RFC 768).
func pseudo4(src, dst [16]byte, n, proto int) uint32 {
	var s uint32
	for i := 12; i < 16; i += 2 {
		s += uint32(binary.BigEndian.Uint16(src[i:])) + uint32(binary.BigEndian.Uint16(dst[i:]))
	}
	return s + uint32(n) + uint32(proto)
}

// rawMatch is raw_v4_match / raw_v6_match plus the ICMP filters.
func (o *sock) rawMatch(p *ipPacket) bool {
	r := o.raw
	if o.proto != p.proto {
		return false
	}
	if r.connected && !isAny(r.dst) && r.dst != p.src {
		return false
	}
	if !isAny(r.rcvAddr) && r.rcvAddr != p.dst {
		return false
	}
	pl := p.payload()
	switch {
	case !p.v6 && p.proto == ipprotoICMP:
		// icmp_filter: a message shorter than struct icmphdr is
		// dropped; types below 32 by the filter.
		if len(pl) < 8 {
			return false
		}
		return pl[0] >= 32 || r.icmpFilter&(1<<pl[0]) == 0
	case p.v6 && p.proto == ipprotoICMPV6:
		// rawv6_filter needs the 4-byte ICMPv6 header.
		if len(pl) < 4 {
			return false
		}
		return r.icmp6Filter[pl[0]>>5]&(1<<(pl[0]&31)) == 0
	}
	return true
}

// rawQueueLocked queues a copy of p on raw socket o (raw_rcv_skb,
// rawv6_rcv): dropped when the receive queue already holds SO_RCVBUF
// bytes of truesize (__sock_queue_rcv_skb checks before adding). An IPv6 socket that
// checks a checksum (IPV6_CHECKSUM, ICMPv6) marks a wrong one, which
// the receive then drops.
func (o *sock) rawQueueLocked(p *ipPacket) {
	if o.rqBytes >= o.rcvbuf() {
		o.raw.drops++
		return
	}
	m := sockMsg{data: append([]byte(nil), p.data...), from: sockAddr{family: o.family, ip: p.src},
		ip: &ipRecvInfo{dst: p.dst, ttl: p.ttl, tos: p.tos, pktinfo: o.opts[sockOpt{ipprotoIP, ipPKTINFO}] != 0}}
	if p.v6 && o.raw.csumOff >= 0 {
		// rawv6_rcv checks the whole payload's sum (the offset only
		// says where the sender's kernel put it).
		m.csumBad = inetChecksum(p.data, pseudo6(p.src, p.dst, len(p.data), p.proto)) != 0
	}
	m.charge = max(p.truesize, len(m.data))
	o.rq = append(o.rq, m)
	o.rqBytes += m.charge
	o.notifyLocked()
}

// icmpEchoLocked answers an ICMP or ICMPv6 echo request (icmp_echo,
// icmpv6_echo_reply): the reply goes from the request's destination to
// its source with the request's identifier, sequence and data, if both
// are loopback addresses and the request's checksum is right.
func (ns *netStack) icmpEchoLocked(p *ipPacket) {
	if !isLoopback(p.src) || !isLoopback(p.dst) {
		return
	}
	pl := p.payload()
	switch {
	case !p.v6 && p.proto == ipprotoICMP:
		if len(pl) < 8 || pl[0] != icmpEcho || inetChecksum(pl, 0) != 0 {
			return
		}
		rep := make([]byte, ipv4HdrLen+len(pl))
		if len(rep) > ipMaxPacket {
			return
		}
		rep[0] = 0x45
		rep[1] = p.data[1] // the request's TOS
		binary.BigEndian.PutUint16(rep[2:], uint16(len(rep)))
		binary.BigEndian.PutUint16(rep[4:], ns.nextIPIDLocked())
		// The ICMP socket does no path MTU discovery: no DF.
		rep[8] = 64
		rep[9] = ipprotoICMP
		copy(rep[12:16], p.dst[12:])
		copy(rep[16:20], p.src[12:])
		binary.BigEndian.PutUint16(rep[10:], inetChecksum(rep[:ipv4HdrLen], 0))
		icmp := rep[ipv4HdrLen:]
		copy(icmp, pl)
		icmp[0] = icmpEchoRep // the code stays the request's
		icmp[2], icmp[3] = 0, 0
		binary.BigEndian.PutUint16(icmp[2:], inetChecksum(icmp, 0))
		ns.ipDeliverLocked(&ipPacket{src: p.dst, dst: p.src, proto: ipprotoICMP, data: rep, hdrLen: ipv4HdrLen,
			truesize: skbTruesize(false, ipv4HdrLen, len(pl))})
	case p.v6 && p.proto == ipprotoICMPV6:
		if len(pl) < 8 || pl[0] != icmp6Echo || inetChecksum(pl, pseudo6(p.src, p.dst, len(pl), ipprotoICMPV6)) != 0 {
			return
		}
		rep := append([]byte(nil), pl...)
		rep[0] = icmp6EchoRep
		rep[2], rep[3] = 0, 0
		binary.BigEndian.PutUint16(rep[2:], inetChecksum(rep, pseudo6(p.dst, p.src, len(rep), ipprotoICMPV6)))
		ns.ipDeliverLocked(&ipPacket{v6: true, src: p.dst, dst: p.src, proto: ipprotoICMPV6, data: rep, ttl: 64, tos: p.tos,
			truesize: skbTruesize(true, ipv6HdrLen, len(rep))})
	}
}

// pseudo6 is the sum of the IPv6 pseudo header (RFC 8200 8.1).
func pseudo6(src, dst [16]byte, n, proto int) uint32 {
	var s uint32
	for i := 0; i < 16; i += 2 {
		s += uint32(binary.BigEndian.Uint16(src[i:])) + uint32(binary.BigEndian.Uint16(dst[i:]))
	}
	return s + uint32(n>>16) + uint32(n&0xffff) + uint32(proto)
}

// inetChecksum is the Internet checksum (RFC 1071) of b added to sum:
// 0 for data that carries its right checksum.
func inetChecksum(b []byte, sum uint32) uint16 {
	s := uint64(sum)
	for len(b) >= 2 {
		s += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint64(b[0]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// rawSetsockopt handles the options raw sockets have of their own
// (raw_setsockopt, rawv6_setsockopt); handled is false for the others,
// which setsockoptOn treats as any socket's.
func (t *Task) rawSetsockopt(s *sock, level, name int, val []byte) (ret uint64, handled bool) {
	r := s.raw
	ns := s.ns
	i32 := func() (int32, Errno) {
		if len(val) < 4 {
			return 0, EINVAL
		}
		return int32(binary.LittleEndian.Uint32(val)), 0
	}
	if v, _ := intOrByte(val); v != 0 && (level == ipprotoIP && name == ipRECVERR || level == ipprotoIPV6 && name == ipv6RECVERR) {
		// Accepted (ping sets it), but nothing is ever queued: the
		// model sends raw sockets no ICMP errors about their packets.
		t.sockUnimpl("raw socket IP_RECVERR/IPV6_RECVERR (the error queue stays empty)")
	}
	if s.family == afINET {
		switch {
		case level == solRAW && name == icmpFILTER:
			if s.proto != ipprotoICMP {
				return errRet(EOPNOTSUPP), true
			}
			ns.mu.Lock()
			f := binary.LittleEndian.AppendUint32(nil, r.icmpFilter)
			copy(f, val) // raw_seticmpfilter copies at most 4 bytes
			r.icmpFilter = binary.LittleEndian.Uint32(f)
			ns.mu.Unlock()
			return 0, true
		case level == solRAW:
			return errRet(ENOPROTOOPT), true
		case level == ipprotoIP && name == ipHDRINCL:
			v, e := intOrByte(val)
			if e != 0 {
				return errRet(e), true
			}
			ns.mu.Lock()
			r.hdrincl = v != 0
			ns.mu.Unlock()
			return 0, true
		}
		return 0, false
	}
	switch {
	case level == ipprotoICMPV6:
		if s.proto != ipprotoICMPV6 {
			return errRet(EOPNOTSUPP), true
		}
		if name != icmp6FILTER {
			return errRet(ENOPROTOOPT), true
		}
		ns.mu.Lock()
		var f []byte
		for _, w := range r.icmp6Filter {
			f = binary.LittleEndian.AppendUint32(f, w)
		}
		copy(f, val) // rawv6_seticmpfilter copies at most 32 bytes
		for i := range r.icmp6Filter {
			r.icmp6Filter[i] = binary.LittleEndian.Uint32(f[4*i:])
		}
		ns.mu.Unlock()
		return 0, true
	case level == ipprotoIP:
		// ipv6_setsockopt: a raw IPv6 socket has no IPPROTO_IP level.
		return errRet(ENOPROTOOPT), true
	case level == ipprotoIPV6 && name == ipv6V6ONLY:
		return errRet(EINVAL), true // ipv6_setsockopt: inet_num (the protocol) is set
	case level == ipprotoIPV6 && (name == ipv62292PKTINFO || name == ipv62292HOPLIMIT):
		// The RFC 2292 receive options (busybox ping6 asks for the hop
		// limit): booleans, as the RFC 3542 ones in sockIntOpts.
		v, e := intOrByte(val)
		if e != 0 {
			return errRet(e), true
		}
		ns.mu.Lock()
		s.opts[sockOpt{level, name}] = min(max(v, 0), 1)
		ns.mu.Unlock()
		return 0, true
	case level == solRAW || level == ipprotoIPV6 && (name == ipv6CHECKSUM || name == ipv6HDRINCL):
		v, e := i32()
		if e != 0 {
			return errRet(e), true
		}
		ns.mu.Lock()
		defer ns.mu.Unlock()
		switch name {
		case ipv6HDRINCL:
			r.hdrincl = v != 0
		case ipv6CHECKSUM:
			if s.proto == ipprotoICMPV6 && level == ipprotoIPV6 {
				return errRet(EINVAL), true // RFC 3542: not on ICMPv6 sockets
			}
			if v > 0 && v&1 != 0 {
				return errRet(EINVAL), true
			}
			r.csumOff = int(max(v, -1))
		default:
			return errRet(ENOPROTOOPT), true
		}
		return 0, true
	}
	return 0, false
}

// intOrByte is do_ip_setsockopt's integer argument: an int, or one byte.
func intOrByte(val []byte) (int32, Errno) {
	switch {
	case len(val) >= 4:
		return int32(binary.LittleEndian.Uint32(val)), 0
	case len(val) >= 1:
		return int32(val[0]), 0
	}
	return 0, EINVAL
}

// rawGetsockopt is rawSetsockopt's getsockopt side: the option's bytes
// (which the caller truncates to its buffer), or handled false.
func (s *sock) rawGetsockopt(level, name int) (out []byte, e Errno, handled bool) {
	r := s.raw
	le := binary.LittleEndian
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	b2i := func(b bool) uint32 {
		if b {
			return 1
		}
		return 0
	}
	if s.family == afINET {
		switch {
		case level == solRAW && name == icmpFILTER:
			if s.proto != ipprotoICMP {
				return nil, EOPNOTSUPP, true
			}
			return le.AppendUint32(nil, r.icmpFilter), 0, true
		case level == solRAW:
			return nil, ENOPROTOOPT, true
		case level == ipprotoIP && name == ipHDRINCL:
			return le.AppendUint32(nil, b2i(r.hdrincl)), 0, true
		}
		return nil, 0, false
	}
	switch {
	case level == ipprotoICMPV6:
		if s.proto != ipprotoICMPV6 {
			return nil, EOPNOTSUPP, true
		}
		if name != icmp6FILTER {
			return nil, ENOPROTOOPT, true
		}
		for _, w := range r.icmp6Filter {
			out = le.AppendUint32(out, w)
		}
		return out, 0, true
	case level == ipprotoIP:
		return nil, ENOPROTOOPT, true
	case level == ipprotoIPV6 && (name == ipv62292PKTINFO || name == ipv62292HOPLIMIT):
		return le.AppendUint32(nil, uint32(s.opts[sockOpt{level, name}])), 0, true
	case level == solRAW || level == ipprotoIPV6 && (name == ipv6CHECKSUM || name == ipv6HDRINCL):
		switch name {
		case ipv6HDRINCL:
			return le.AppendUint32(nil, b2i(r.hdrincl)), 0, true
		case ipv6CHECKSUM:
			return le.AppendUint32(nil, uint32(int32(r.csumOff))), 0, true
		}
		return nil, ENOPROTOOPT, true
	}
	return nil, 0, false
}
