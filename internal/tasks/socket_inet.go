package tasks

import "encoding/binary"

// AF_INET and AF_INET6 on the loopback interface only: the local
// addresses are 127.0.0.0/8 and ::1 (and the wildcards 0.0.0.0 and ::);
// any other destination is unreachable. Addresses are kept in 16-byte
// form, IPv4 as v4-mapped (::ffff:a.b.c.d), so a dual-stack [::] socket
// compares with IPv4 ones directly; sockAddr.family says how the guest
// sees them.

const (
	ephemeralLo = 32768 // net.ipv4.ip_local_port_range
	ephemeralHi = 60999
)

// inetKey is a port of one protocol.
type inetKey struct {
	udp  bool
	port uint16
}

var v4Prefix = [12]byte{10: 0xff, 11: 0xff}

func isV4(ip [16]byte) bool { return [12]byte(ip[:12]) == v4Prefix }

func v4(a, b, c, d byte) [16]byte {
	var ip [16]byte
	copy(ip[:], v4Prefix[:])
	ip[12], ip[13], ip[14], ip[15] = a, b, c, d
	return ip
}

var (
	ip4Any      = v4(0, 0, 0, 0)
	ip4Loopback = v4(127, 0, 0, 1)
	ip6Any      [16]byte
	ip6Loopback = [16]byte{15: 1}
)

func isLoopback(ip [16]byte) bool {
	return isV4(ip) && ip[12] == 127 || ip == ip6Loopback
}

func isAny(ip [16]byte) bool { return ip == ip4Any || ip == ip6Any }

// in returns a in the encoding of a socket of family f.
func (a sockAddr) in(f int) sockAddr {
	if a.family == afINET || a.family == afINET6 {
		a.family = f
	}
	return a
}

func (s *sock) inetKey() inetKey { return inetKey{udp: s.isUDP(), port: s.local.port} }

func (s *sock) v6only() bool { return s.opts[sockOpt{ipprotoIPV6, ipv6V6ONLY}] != 0 }

func (s *sock) reuse(name int) bool { return s.opts[sockOpt{solSOCKET, name}] != 0 }

// wildcard is the unbound address of s.
func (s *sock) wildcard() sockAddr {
	if s.family == afINET6 {
		return sockAddr{family: afINET6, ip: ip6Any}
	}
	return sockAddr{family: afINET, ip: ip4Any}
}

// parseInetAddr decodes a sockaddr_in/sockaddr_in6 for s. A v6 UDP
// socket also takes a sockaddr_in destination (dest).
func (s *sock) parseInetAddr(raw []byte, forBind bool) (sockAddr, Errno) {
	if len(raw) < 2 {
		return sockAddr{}, EINVAL
	}
	fam := int(binary.LittleEndian.Uint16(raw))
	a := sockAddr{family: s.family}
	switch {
	case s.family == afINET || fam == afINET && s.isUDP() && !forBind && !s.v6only():
		if len(raw) < 16 {
			return sockAddr{}, EINVAL
		}
		if fam != afINET && !(forBind && fam == afUNSPEC) {
			return sockAddr{}, EAFNOSUPPORT
		}
		a.port = binary.BigEndian.Uint16(raw[2:])
		a.ip = v4(raw[4], raw[5], raw[6], raw[7])
		if fam == afUNSPEC && a.ip != ip4Any {
			return sockAddr{}, EAFNOSUPPORT
		}
	default:
		if len(raw) < 24 {
			return sockAddr{}, EINVAL
		}
		if fam != afINET6 {
			return sockAddr{}, EAFNOSUPPORT
		}
		a.port = binary.BigEndian.Uint16(raw[2:])
		copy(a.ip[:], raw[8:24])
		if len(raw) >= 28 {
			a.scope = binary.LittleEndian.Uint32(raw[24:])
		}
	}
	return a, 0
}

// coverage is what local addresses a bound socket receives on.
type coverage struct {
	v4, v4any, v6, v6any bool
	ip                   [16]byte
}

func (s *sock) coverageOf(a sockAddr) coverage {
	c := coverage{ip: a.ip}
	switch {
	case s.family == afINET:
		c.v4, c.v4any = true, a.ip == ip4Any
	case a.ip == ip6Any:
		c.v6, c.v6any = true, true
		c.v4, c.v4any = !s.v6only(), !s.v6only()
	case isV4(a.ip):
		c.v4, c.v4any = true, a.ip == ip4Any
	default:
		c.v6 = true
	}
	return c
}

func (c coverage) overlaps(d coverage) bool {
	return c.v4 && d.v4 && (c.v4any || d.v4any || c.ip == d.ip) ||
		c.v6 && d.v6 && (c.v6any || d.v6any || c.ip == d.ip)
}

func inetOverlap(a, b *sock) bool { return a.coverageOf(a.local).overlaps(b.coverageOf(b.local)) }

// score is how well s (bound) matches local destination ip: 0 not at
// all; an exact address beats a wildcard, an AF_INET socket beats a
// dual-stack one for IPv4 (as compute_score).
func (s *sock) score(ip [16]byte) int {
	c := s.coverageOf(s.local)
	sc := 0
	if isV4(ip) {
		switch {
		case c.v4 && c.ip == ip && !c.v4any:
			sc = 4
		case c.v4any:
			sc = 1
		default:
			return 0
		}
		if s.family == afINET {
			sc += 2
		} else {
			sc++
		}
		return sc
	}
	switch {
	case c.v6 && !c.v6any && c.ip == ip:
		return 5
	case c.v6any:
		return 2
	}
	return 0
}

// bindConflictLocked: another socket holds the port for an overlapping
// address and their options do not let them share it.
func (s *sock) bindConflictLocked(a sockAddr) bool {
	k := inetKey{udp: s.isUDP(), port: a.port}
	mine := s.coverageOf(a)
	for _, o := range s.ns.inet[k] {
		if o == s || !o.coverageOf(o.local).overlaps(mine) {
			continue
		}
		if o.reuse(soREUSEPORT) && s.reuse(soREUSEPORT) {
			continue
		}
		if o.reuse(soREUSEADDR) && s.reuse(soREUSEADDR) && (s.isUDP() || o.state != ssListening) {
			continue
		}
		return true
	}
	return false
}

func (s *sock) addBoundLocked(a sockAddr) {
	s.local, s.bound = a, true
	k := s.inetKey()
	s.ns.inet[k] = append(s.ns.inet[k], s)
}

// inetAutobindLocked binds s to the next free ephemeral port on a.
func (s *sock) inetAutobindLocked(a sockAddr) Errno {
	ns := s.ns
	i := 0
	if s.isUDP() {
		i = 1
	}
	for range ephemeralHi - ephemeralLo + 1 {
		p := ns.nextPort[i]
		if p < ephemeralLo || p > ephemeralHi {
			p = ephemeralLo
		}
		ns.nextPort[i] = p + 1
		if len(ns.inet[inetKey{udp: s.isUDP(), port: p}]) > 0 {
			continue
		}
		a.port = p
		s.addBoundLocked(a)
		return 0
	}
	return EADDRINUSE
}

// localOK: ip is an address of this host (or a wildcard).
func (s *sock) localOK(ip [16]byte) bool {
	if s.family == afINET6 && isV4(ip) && s.v6only() {
		return false
	}
	return isAny(ip) || isLoopback(ip)
}

func (s *sock) inetBind(t *Task, raw []byte) Errno {
	a, e := s.parseInetAddr(raw, true)
	if e != 0 {
		return e
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if s.bound || s.state != ssUnconnected {
		return EINVAL
	}
	if !s.localOK(a.ip) {
		if s.family == afINET6 && isV4(a.ip) && s.v6only() {
			return EINVAL
		}
		return EADDRNOTAVAIL
	}
	if a.port == 0 {
		return s.inetAutobindLocked(a)
	}
	if a.port < 1024 && !t.creds().capable(capNetBindService) {
		return EACCES
	}
	if s.bindConflictLocked(a) {
		return EADDRINUSE
	}
	s.addBoundLocked(a)
	return 0
}

// route checks a destination and returns it (wildcards mean this host)
// with the source address the host would use.
func (s *sock) route(dst sockAddr) (d, src sockAddr, e Errno) {
	d = dst
	switch d.ip {
	case ip4Any:
		d.ip = ip4Loopback
	case ip6Any:
		d.ip = ip6Loopback
	}
	if !isLoopback(d.ip) || s.family == afINET6 && isV4(d.ip) && s.v6only() {
		return d, src, ENETUNREACH
	}
	src = sockAddr{family: s.family, ip: ip6Loopback}
	if isV4(d.ip) {
		src.ip = ip4Loopback
	}
	if s.bound && !isAny(s.local.ip) {
		src.ip = s.local.ip
	}
	if s.bound {
		src.port = s.local.port
	}
	return d, src, 0
}

// lookupLocked finds the best socket bound to dst (TCP: listening).
func (ns *netStack) lookupLocked(udp bool, dst sockAddr, src sockAddr) *sock {
	var best *sock
	bestScore := 0
	for _, o := range ns.inet[inetKey{udp: udp, port: dst.port}] {
		if o.closed || !udp && o.state != ssListening {
			continue
		}
		if udp && o.hasPeer && (o.remote.ip != src.ip || o.remote.port != src.port) {
			continue
		}
		if sc := o.score(dst.ip); sc > bestScore {
			best, bestScore = o, sc
		}
	}
	return best
}

func (s *sock) inetConnect(t *Task, f *openFile, raw []byte) Errno {
	ns := s.ns
	if s.isUDP() && len(raw) >= 2 && binary.LittleEndian.Uint16(raw) == afUNSPEC {
		ns.mu.Lock()
		s.hasPeer = false
		ns.mu.Unlock()
		return 0
	}
	a, e := s.parseInetAddr(raw, false)
	if e != 0 {
		return e
	}
	ns.mu.Lock()
	if s.isUDP() {
		defer ns.mu.Unlock()
		d, src, e := s.route(a)
		if e != 0 {
			return e
		}
		if !s.bound {
			if e := s.inetAutobindLocked(s.wildcard()); e != 0 {
				return e
			}
		}
		if isAny(s.local.ip) {
			s.local.ip = src.ip
		}
		s.remote, s.hasPeer = d.in(s.family), true
		return 0
	}
	switch s.state {
	case ssConnected:
		if s.inProgress {
			s.inProgress = false
			ns.mu.Unlock()
			return 0
		}
		ns.mu.Unlock()
		return EISCONN
	case ssConnecting:
		ns.mu.Unlock()
		return EALREADY
	case ssListening:
		ns.mu.Unlock()
		return EINVAL
	}
	if s.inProgress {
		// A non-blocking connect that failed: report its error once.
		s.inProgress = false
		e := s.soErr
		s.soErr = 0
		if e != 0 {
			ns.mu.Unlock()
			return e
		}
	}
	d, src, e := s.route(a)
	if e != 0 {
		ns.mu.Unlock()
		return e
	}
	if !s.bound {
		if e := s.inetAutobindLocked(src); e != 0 {
			ns.mu.Unlock()
			return e
		}
	} else if isAny(s.local.ip) {
		s.local.ip = src.ip
	}
	l := ns.lookupLocked(false, d, s.local)
	if l == nil {
		if f.flags&oNONBLOCK != 0 {
			s.soErr, s.inProgress = ECONNREFUSED, true
			s.notifyLocked()
			ns.mu.Unlock()
			return EINPROGRESS
		}
		ns.mu.Unlock()
		return ECONNREFUSED
	}
	return s.connectStream(t, f, l, d.in(s.family))
}

// sendUDP sends one UDP datagram; a datagram to a port nobody has bound
// is dropped (a connected socket's next operation then fails with
// ECONNREFUSED, as the ICMP port-unreachable makes it on Linux).
func (s *sock) sendUDP(t *Task, b []byte, to *sockAddr, flags int) (int, Errno) {
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if s.soErr != 0 {
		e := s.soErr
		s.soErr = 0
		return 0, e
	}
	if s.shutWr {
		ns.mu.Unlock()
		e := t.sockPipe(EPIPE, flags)
		ns.mu.Lock()
		return 0, e
	}
	var dst sockAddr
	switch {
	case to != nil:
		dst = *to
	case s.hasPeer:
		dst = s.remote
	default:
		return 0, EDESTADDRREQ
	}
	max := udpMaxPayload
	if s.family == afINET6 && !isV4(dst.ip) {
		max = 65527
	}
	if len(b) > max {
		return 0, EMSGSIZE
	}
	d, src, e := s.route(dst)
	if e != 0 {
		return 0, e
	}
	if d.port == 0 {
		return 0, EINVAL
	}
	if !s.bound {
		if e := s.inetAutobindLocked(s.wildcard()); e != 0 {
			return 0, e
		}
		src.port = s.local.port
	}
	ns.loXmitLocked(s, len(b)) // delivered or not, it crossed lo
	o := ns.lookupLocked(true, d, src)
	if len(ns.raw) > 0 {
		ns.udpSeenByRawLocked(s, src, d, b, o == nil) // socket_rawip.go
	}
	if o == nil {
		if to == nil {
			s.soErr = ECONNREFUSED
			s.notifyLocked()
		}
		return len(b), 0
	}
	if o.shutRd || o.rqBytes+len(b) > o.rcvbuf() {
		return len(b), 0 // dropped, as a full socket buffer drops it
	}
	from := src.in(o.family)
	o.rq = append(o.rq, sockMsg{data: append([]byte(nil), b...), from: from})
	o.rqBytes += len(b)
	o.notifyLocked()
	return len(b), 0
}
