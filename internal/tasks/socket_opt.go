package tasks

import (
	"encoding/binary"
	"strings"
)

// setsockopt/getsockopt: the options language runtimes set are accepted,
// stored and reported back (booleans as 0/1, buffer sizes doubled as
// Linux does); the others fail with ENOPROTOOPT and one log line.

type sockOpt struct{ level, name int }

const (
	solSOCKET = 1

	soDEBUG         = 1
	soREUSEADDR     = 2
	soTYPE          = 3
	soERROR         = 4
	soDONTROUTE     = 5
	soBROADCAST     = 6
	soSNDBUF        = 7
	soRCVBUF        = 8
	soKEEPALIVE     = 9
	soOOBINLINE     = 10
	soNOCHECK       = 11
	soPRIORITY      = 12
	soLINGER        = 13
	soREUSEPORT     = 15
	soPASSCRED      = 16
	soPEERCRED      = 17
	soRCVLOWAT      = 18
	soSNDLOWAT      = 19
	soRCVTIMEOold   = 20
	soSNDTIMEOold   = 21
	soBINDTODEVICE  = 25
	soTIMESTAMP     = 29
	soACCEPTCONN    = 30
	soSNDBUFFORCE   = 32
	soRCVBUFFORCE   = 33
	soPASSSEC       = 34
	soTIMESTAMPNS   = 35
	soMARK          = 36
	soPROTOCOL      = 38
	soDOMAIN        = 39
	soRXQOVFL       = 40
	soPEEKOFF       = 42
	soBUSYPOLL      = 46
	soINCOMINGCPU   = 49
	soZEROCOPY      = 60
	soRCVTIMEOnew   = 66
	soSNDTIMEOnew   = 67
	tcpNODELAY      = 1
	tcpMAXSEG       = 2
	tcpCONGESTION   = 13
	ipv6V6ONLY      = 26
	sockMinSndbuf   = 4608
	sockMinRcvbuf   = 2304
	sockBufMaxSysct = 212992
)

// sockIntOpts are the plain integer options: level → name → default
// (a default of boolOpt marks a boolean whose default is 0).
const boolOpt = -1 << 30

var sockIntOpts = map[int]map[int]int32{
	solSOCKET: {soDEBUG: boolOpt, soREUSEADDR: boolOpt, soDONTROUTE: boolOpt, soBROADCAST: boolOpt,
		soKEEPALIVE: boolOpt, soOOBINLINE: boolOpt, soNOCHECK: boolOpt, soPRIORITY: 0, soREUSEPORT: boolOpt,
		soPASSCRED: boolOpt, soRCVLOWAT: 1, soSNDLOWAT: 1, soTIMESTAMP: boolOpt, soTIMESTAMPNS: boolOpt,
		soPASSSEC: boolOpt, soMARK: 0, soRXQOVFL: boolOpt, soPEEKOFF: -1, soBUSYPOLL: 0, soINCOMINGCPU: -1,
		soZEROCOPY: boolOpt, 41 /* SO_WIFI_STATUS */ : boolOpt, 43 /* SO_NOFCS */ : boolOpt,
		44 /* SO_LOCK_FILTER */ : boolOpt, 45 /* SO_SELECT_ERR_QUEUE */ : boolOpt},
	ipprotoTCP: {tcpNODELAY: boolOpt, 3 /* CORK */ : boolOpt, 4 /* KEEPIDLE */ : 7200, 5 /* KEEPINTVL */ : 75,
		6 /* KEEPCNT */ : 9, 7 /* SYNCNT */ : 6, 8 /* LINGER2 */ : 60, 9 /* DEFER_ACCEPT */ : 0,
		10 /* WINDOW_CLAMP */ : 0, 12 /* QUICKACK */ : 1, 16 /* THIN_LINEAR_TIMEOUTS */ : boolOpt,
		18 /* USER_TIMEOUT */ : 0, 23 /* FASTOPEN */ : 0, 25 /* NOTSENT_LOWAT */ : -1,
		27 /* SAVE_SYN */ : boolOpt, 30 /* FASTOPEN_CONNECT */ : boolOpt, 36 /* INQ */ : boolOpt},
	ipprotoIP: {1 /* TOS */ : 0, 2 /* TTL */ : 64, 3 /* HDRINCL */ : boolOpt, 6 /* RECVOPTS */ : boolOpt,
		7 /* RETOPTS */ : boolOpt, 8 /* PKTINFO */ : boolOpt, 10 /* MTU_DISCOVER */ : 1, 11 /* RECVERR */ : boolOpt,
		12 /* RECVTTL */ : boolOpt, 13 /* RECVTOS */ : boolOpt, 15 /* FREEBIND */ : boolOpt,
		18 /* PASSSEC */ : boolOpt, 19 /* TRANSPARENT */ : boolOpt, 21 /* MINTTL */ : 0,
		22 /* NODEFRAG */ : boolOpt, 24 /* BIND_ADDRESS_NO_PORT */ : boolOpt, 25 /* RECVFRAGSIZE */ : boolOpt,
		33 /* MULTICAST_TTL */ : 1, 34 /* MULTICAST_LOOP */ : 1},
	ipprotoIPV6: {16 /* UNICAST_HOPS */ : 64, 18 /* MULTICAST_HOPS */ : 1, 19 /* MULTICAST_LOOP */ : 1,
		23 /* MTU_DISCOVER */ : 1, 25 /* RECVERR */ : boolOpt, ipv6V6ONLY: boolOpt,
		49 /* RECVPKTINFO */ : boolOpt, 51 /* RECVHOPLIMIT */ : boolOpt, 62 /* DONTFRAG */ : boolOpt,
		66 /* RECVTCLASS */ : boolOpt, 67 /* TCLASS */ : 0, 70 /* AUTOFLOWLABEL */ : 1,
		75 /* TRANSPARENT */ : boolOpt, 78 /* FREEBIND */ : boolOpt},
	ipprotoUDP: {1 /* CORK */ : boolOpt, 103 /* SEGMENT */ : 0, 104 /* GRO */ : boolOpt},
}

// levelOK: s has options at level (else the errno Linux gives).
func (s *sock) levelOK(level int) Errno {
	switch level {
	case solSOCKET:
		return 0
	case ipprotoTCP:
		if s.isTCP() {
			return 0
		}
	case ipprotoUDP:
		if s.isUDP() {
			return 0
		}
	case ipprotoIP:
		if s.family != afUNIX {
			return 0
		}
	case ipprotoIPV6:
		if s.family == afINET6 {
			return 0
		}
	}
	if s.family == afUNIX {
		return EOPNOTSUPP
	}
	return ENOPROTOOPT
}

func optName(level, name int) string {
	l := map[int]string{solSOCKET: "SOL_SOCKET", ipprotoTCP: "IPPROTO_TCP", ipprotoIP: "IPPROTO_IP",
		ipprotoIPV6: "IPPROTO_IPV6", ipprotoUDP: "IPPROTO_UDP"}[level]
	if l == "" {
		l = "level " + itoa(level)
	}
	return l + " " + itoa(name)
}

func (s *sock) defaultBuf(name int) int32 {
	switch {
	case s.isTCP() && name == soSNDBUF:
		return 16384
	case s.isTCP():
		return 131072
	}
	return sockBufDefault
}

func sysSetsockopt(t *Task, a [6]uint64) uint64 {
	s, _, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	return t.setsockoptOn(s, a)
}

// setsockoptOn is setsockopt on s (also a --net=host socket's shadow).
func (t *Task) setsockoptOn(s *sock, a [6]uint64) uint64 {
	level, name, optlen := int(int32(a[1])), int(int32(a[2])), int32(a[4])
	if optlen < 0 {
		return errRet(EINVAL)
	}
	if s.raw != nil {
		val, e := t.readBuf(a[3], uint64(min(optlen, 256)))
		if e != 0 {
			return errRet(e)
		}
		if ret, ok := t.rawSetsockopt(s, level, name, val); ok { // socket_rawip.go
			return ret
		}
	} else if level == ipprotoIP && name == ipHDRINCL {
		return errRet(ENOPROTOOPT) // do_ip_setsockopt: raw sockets only
	}
	if e := s.levelOK(level); e != 0 {
		return errRet(e)
	}
	val, e := t.readBuf(a[3], uint64(min(optlen, 256)))
	if e != 0 {
		return errRet(e)
	}
	le := binary.LittleEndian
	intVal := func() (int32, Errno) {
		if len(val) < 4 {
			if len(val) >= 1 && level != solSOCKET {
				return int32(val[0]), 0
			}
			return 0, EINVAL
		}
		return int32(le.Uint32(val)), 0
	}
	ns := s.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	key := sockOpt{level, name}
	switch {
	case level == solSOCKET && (name == soSNDBUF || name == soRCVBUF || name == soSNDBUFFORCE || name == soRCVBUFFORCE):
		v, e := intVal()
		if e != 0 {
			return errRet(e)
		}
		if name == soSNDBUF || name == soRCVBUF {
			v = min(max(v, 0), sockBufMaxSysct)
		}
		v = max(v, 0)
		if name == soSNDBUFFORCE || name == soSNDBUF {
			key = sockOpt{solSOCKET, soSNDBUF}
			v = max(2*v, sockMinSndbuf)
		} else {
			key = sockOpt{solSOCKET, soRCVBUF}
			v = max(2*v, sockMinRcvbuf)
		}
		s.opts[key] = v
		s.notifyLocked()
		return 0
	case level == solSOCKET && (name == soRCVTIMEOold || name == soRCVTIMEOnew || name == soSNDTIMEOold || name == soSNDTIMEOnew):
		if len(val) < 16 {
			return errRet(EINVAL)
		}
		sec, usec := int64(le.Uint64(val)), int64(le.Uint64(val[8:]))
		if usec < 0 || usec >= 1e6 {
			return errRet(EDOM)
		}
		ns := int64(0)
		if sec > 0 || usec > 0 {
			ns = max(sec, 0)*1e9 + usec*1e3
		}
		if name == soRCVTIMEOold || name == soRCVTIMEOnew {
			s.rcvTimeo = ns
		} else {
			s.sndTimeo = ns
		}
		return 0
	case level == solSOCKET && name == soLINGER:
		if len(val) < 8 {
			return errRet(EINVAL)
		}
		s.linger = [2]int32{int32(le.Uint32(val)), int32(le.Uint32(val[4:]))}
		return 0
	case level == solSOCKET && name == soBINDTODEVICE:
		dev := strings.TrimRight(string(val), "\x00")
		if dev != "" && dev != "lo" {
			return errRet(ENODEV)
		}
		return 0
	case level == ipprotoTCP && name == tcpCONGESTION:
		cc := strings.TrimRight(string(val), "\x00")
		if cc != "cubic" && cc != "reno" {
			return errRet(ENOENT)
		}
		return 0
	case level == ipprotoIPV6 && name == ipv6V6ONLY && s.bound:
		return errRet(EINVAL)
	}
	def, ok := sockIntOpts[level][name]
	if !ok {
		t.sockUnimpl("setsockopt " + optName(level, name))
		return errRet(ENOPROTOOPT)
	}
	v, e := intVal()
	if e != 0 {
		return errRet(e)
	}
	if def == boolOpt && v != 0 {
		v = 1
	}
	if level == ipprotoIPV6 && name == 16 && v == -1 {
		v = 64
	}
	s.opts[key] = v
	s.notifyLocked()
	return 0
}

const EDOM Errno = 33

func sysGetsockopt(t *Task, a [6]uint64) uint64 {
	s, _, e := t.fileSock(int32(a[0]))
	if e != 0 {
		return errRet(e)
	}
	return t.getsockoptOn(s, a)
}

// getsockoptOn is getsockopt on s (also a --net=host socket's shadow).
func (t *Task) getsockoptOn(s *sock, a [6]uint64) uint64 {
	level, name := int(int32(a[1])), int(int32(a[2]))
	lb, e := t.readBuf(a[4], 4)
	if e != 0 {
		return errRet(e)
	}
	have := int32(binary.LittleEndian.Uint32(lb))
	if have < 0 {
		return errRet(EINVAL)
	}
	if s.raw != nil {
		if out, e, ok := s.rawGetsockopt(level, name); ok { // socket_rawip.go
			if e != 0 {
				return errRet(e)
			}
			n := min(int(have), len(out))
			if e := t.writeBytes(a[3], out[:n]); e != 0 {
				return errRet(e)
			}
			return errOr0(t.putU32(a[4], uint32(n)))
		}
	}
	if e := s.levelOK(level); e != 0 {
		return errRet(e)
	}
	le := binary.LittleEndian
	ns := s.ns
	ns.mu.Lock()
	var out []byte
	i32 := func(v int32) { out = le.AppendUint32(nil, uint32(v)) }
	b2i := func(b bool) int32 {
		if b {
			return 1
		}
		return 0
	}
	switch {
	case level == solSOCKET && name == soTYPE:
		i32(int32(s.typ))
	case level == solSOCKET && name == soDOMAIN:
		i32(int32(s.family))
	case level == solSOCKET && name == soPROTOCOL:
		i32(int32(s.proto))
	case level == solSOCKET && name == soACCEPTCONN:
		i32(b2i(s.state == ssListening))
	case level == solSOCKET && name == soERROR:
		i32(int32(s.soErr))
		s.soErr = 0
	case level == solSOCKET && (name == soSNDBUF || name == soRCVBUF):
		v, ok := s.opts[sockOpt{solSOCKET, name}]
		if !ok {
			v = s.defaultBuf(name)
		}
		i32(v)
	case level == solSOCKET && name == soPEERCRED:
		if s.family != afUNIX {
			ns.mu.Unlock()
			return errRet(ENODATA)
		}
		c := ucred{0, ^uint32(0), ^uint32(0)}
		if s.state == ssConnected || s.state == ssListening || s.hasPeer {
			c = s.peerCred
			if s.state == ssListening {
				c = s.cred
			}
		}
		out = c.bytes()
	case level == solSOCKET && name == soLINGER:
		out = le.AppendUint32(le.AppendUint32(nil, uint32(s.linger[0])), uint32(s.linger[1]))
	case level == solSOCKET && (name == soRCVTIMEOold || name == soRCVTIMEOnew || name == soSNDTIMEOold || name == soSNDTIMEOnew):
		ns := s.rcvTimeo
		if name == soSNDTIMEOold || name == soSNDTIMEOnew {
			ns = s.sndTimeo
		}
		out = le.AppendUint64(le.AppendUint64(nil, uint64(ns/1e9)), uint64(ns%1e9/1e3))
	case level == ipprotoTCP && name == tcpMAXSEG:
		v, ok := s.opts[sockOpt{level, name}]
		if !ok {
			v = 536
			if s.state == ssConnected {
				v = 65483
			}
		}
		i32(v)
	case level == ipprotoTCP && name == tcpCONGESTION:
		out = make([]byte, 16)
		copy(out, "cubic")
	default:
		def, ok := sockIntOpts[level][name]
		if !ok {
			ns.mu.Unlock()
			t.sockUnimpl("getsockopt " + optName(level, name))
			return errRet(ENOPROTOOPT)
		}
		v, set := s.opts[sockOpt{level, name}]
		if !set {
			v = def
			if def == boolOpt {
				v = 0
			}
		}
		i32(v)
	}
	ns.mu.Unlock()
	n := min(int(have), len(out))
	if e := t.writeBytes(a[3], out[:n]); e != 0 {
		return errRet(e)
	}
	return errOr0(t.putU32(a[4], uint32(n)))
}

// ENODATA: SO_PEERCRED of a socket that has no peer credentials.
const ENODATA Errno = 61
