package tasks

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// /proc/PID/net (and the /proc/net link to self/net) for the in-kernel
// loopback network: the files of a Linux network namespace whose only
// interface is lo, up, with 127.0.0.1/8 and ::1/128 (what `unshare -n`
// followed by `ip link set lo up` shows), and the socket tables of
// uvm's netStack in Linux's formats (net/ipv4/tcp_ipv4.c, udp.c, raw.c,
// net/ipv6/*, net/unix/af_unix.c, net/ipv4/proc.c). With --net=host the
// guest was given the host's network and /proc/net stays the host's.
//
// What the netStack does not model shows as Linux shows it for an idle
// loopback connection: no retransmit timers, the initial congestion
// window and RTO, kernel pointers hidden (kptr_restrict). TCP's
// TIME_WAIT sockets and a connection whose ends have both sent FIN are
// not listed (uvm frees a connection at its last close). lo's counters
// in dev count the messages the netStack delivered (one packet per
// datagram or stream chunk, with the Ethernet, IP and UDP/TCP header
// sizes), not TCP's handshake and ACK segments.

// procNetNames are the entries of /proc/PID/net, in readdir order.
var procNetNames = []string{"dev", "if_inet6", "igmp", "igmp6", "ipv6_route", "raw", "raw6", "route",
	"sockstat", "sockstat6", "tcp", "tcp6", "udp", "udp6", "unix"}

// procNetFiles generate each entry of /proc/PID/net from the netStack.
var procNetFiles = map[string]func(ns *netStack) []byte{
	"dev":        (*netStack).procDev,
	"if_inet6":   func(*netStack) []byte { return []byte(procNetIfInet6) },
	"igmp":       func(*netStack) []byte { return []byte(procNetIGMP) },
	"igmp6":      func(*netStack) []byte { return []byte(procNetIGMP6) },
	"ipv6_route": func(*netStack) []byte { return []byte(procNetIPv6Route) },
	"route":      func(*netStack) []byte { return []byte(procNetRoute) },
	"raw":        func(ns *netStack) []byte { return ns.procInetTable(afINET, sockRAW) },
	"raw6":       func(ns *netStack) []byte { return ns.procInetTable(afINET6, sockRAW) },
	"tcp":        func(ns *netStack) []byte { return ns.procInetTable(afINET, sockSTREAM) },
	"tcp6":       func(ns *netStack) []byte { return ns.procInetTable(afINET6, sockSTREAM) },
	"udp":        func(ns *netStack) []byte { return ns.procInetTable(afINET, sockDGRAM) },
	"udp6":       func(ns *netStack) []byte { return ns.procInetTable(afINET6, sockDGRAM) },
	"unix":       (*netStack).procUnix,
	"sockstat":   func(ns *netStack) []byte { return ns.procSockstat(false) },
	"sockstat6":  func(ns *netStack) []byte { return ns.procSockstat(true) },
}

// The fixed files of a namespace with only lo (byte for byte as Linux
// 6.18 prints them; TestProcNetNative compares).
const (
	procNetIfInet6 = "00000000000000000000000000000001 01 80 10 80       lo\n"
	procNetIGMP    = "Idx\tDevice    : Count Querier\tGroup    Users Timer\tReporter\n" +
		"1\tlo        :     1      V3\n\t\t\t\t010000E0     1 0:00000000\t\t0\n"
	procNetIGMP6 = "1    lo              ff020000000000000000000000000001     1 0000000C 0\n" +
		"1    lo              ff010000000000000000000000000001     1 00000008 0\n"
	procNetIPv6Route = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n" +
		"00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n" +
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n"
	// The main table is empty: lo's routes live in the local table.
	procNetRoute = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT" +
		"                                                       \n"
)

// procNetLookup resolves c (the components after net) under /proc/PID/net.
func (t *Task) procNetLookup(p procPID, g string, c []string) (procEntry, bool, Errno) {
	uid, gid := p.owner(0)
	if len(c) == 0 {
		return t.procDirEntry(p, g, 0o555, func() []dirent {
			out := make([]dirent, 0, len(procNetNames))
			for _, n := range procNetNames {
				out = append(out, dirent{n, pathInode(g + "/" + n), dtReg})
			}
			return out
		}), true, 0
	}
	gen, ok := procNetFiles[c[0]]
	if !ok || len(c) > 1 {
		if ok {
			return procEntry{}, true, ENOTDIR
		}
		return procEntry{}, true, ENOENT
	}
	ns := t.tg.k.net()
	return procEntry{path: g, mode: sIFREG | 0o444, uid: uid, gid: gid, owner: p.tg,
		contents: func() ([]byte, Errno) { return gen(ns), 0 }}, true, 0
}

// liveLocked returns the stack's open sockets in creation order (ns.mu
// held).
func (ns *netStack) liveLocked() []*sock {
	out := make([]*sock, 0, len(ns.live))
	for _, s := range ns.live {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *sock) int { return cmpU64(a.ino, b.ino) })
	return out
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Linux's TCP states (include/net/tcp_states.h).
const (
	tcpESTABLISHED = 1
	tcpSYNSENT     = 2
	tcpFINWAIT2    = 5
	tcpCLOSE       = 7
	tcpCLOSEWAIT   = 8
	tcpLISTEN      = 10
)

// tcpStateLocked is s's state as tcp_ipv4.c prints it; ok=false when
// Linux's tables would not list it (not in the listening or established
// hash: unbound, bound but not listening, or closed).
func (s *sock) tcpStateLocked() (int, bool) {
	switch s.state {
	case ssListening:
		return tcpLISTEN, true
	case ssConnecting:
		return tcpSYNSENT, true
	case ssConnected:
		if s.tcpReset {
			return 0, false
		}
		p := s.peer
		gotFIN := p == nil || p.closed || p.shutWr
		switch {
		case !s.shutWr && !gotFIN:
			return tcpESTABLISHED, true
		case !s.shutWr:
			return tcpCLOSEWAIT, true
		case !gotFIN:
			return tcpFINWAIT2, true // loopback acknowledges the FIN at once
		}
	}
	return 0, false
}

// inetListedLocked reports whether s belongs in the family/type table,
// and its state there.
func (s *sock) inetListedLocked(family, typ int) (int, bool) {
	if s.family != family || s.typ != typ {
		return 0, false
	}
	switch typ {
	case sockSTREAM:
		return s.tcpStateLocked()
	case sockDGRAM:
		if !s.bound {
			return 0, false
		}
	}
	if s.raw != nil {
		if s.raw.connected {
			return tcpESTABLISHED, true
		}
		return tcpCLOSE, true
	}
	if s.hasPeer {
		return tcpESTABLISHED, true
	}
	return tcpCLOSE, true
}

// hexAddr4 and hexAddr6 print an address as /proc/net does: each 32-bit
// word of the network-order bytes as a little-endian number (both guest
// arches are little-endian).
func hexAddr4(ip [16]byte) string {
	return fmt.Sprintf("%08X", binary.LittleEndian.Uint32(ip[12:]))
}

func hexAddr6(ip [16]byte) string {
	var b strings.Builder
	for i := 0; i < 16; i += 4 {
		fmt.Fprintf(&b, "%08X", binary.LittleEndian.Uint32(ip[i:]))
	}
	return b.String()
}

// procInetTable renders /proc/net/{tcp,udp,raw}{,6}.
func (ns *netStack) procInetTable(family, typ int) []byte {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	v6 := family == afINET6
	var b strings.Builder
	// tcp4 and udp4 pad every line to a fixed width (seq_setwidth).
	width := 0
	switch {
	case v6 && typ == sockSTREAM:
		b.WriteString("  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")
	case v6:
		b.WriteString("  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n")
	case typ == sockSTREAM:
		width = 149
		fmt.Fprintf(&b, "%-*s\n", width, "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode")
	case typ == sockDGRAM:
		width = 127
		fmt.Fprintf(&b, "%-*s\n", width, "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops")
	default:
		b.WriteString("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n")
	}
	addr := hexAddr4
	if v6 {
		addr = hexAddr6
	}
	socks := ns.liveLocked()
	// tcp lists the listening hash before the established one.
	if typ == sockSTREAM {
		slices.SortStableFunc(socks, func(a, b *sock) int {
			return boolInt(b.state == ssListening) - boolInt(a.state == ssListening)
		})
	}
	// raw lists hash bucket by bucket, each bucket's newest socket
	// first (sk_add_node_rcu puts it at the head).
	if typ == sockRAW {
		slices.SortStableFunc(socks, func(a, b *sock) int {
			if a.proto != b.proto {
				return a.proto&255 - b.proto&255
			}
			return int(b.ino) - int(a.ino)
		})
	}
	embryo := embryosLocked(socks)
	sl := 0
	for _, s := range socks {
		st, ok := s.inetListedLocked(family, typ)
		if !ok {
			continue
		}
		lport, rport := s.local.port, uint16(0)
		var rip [16]byte
		if !v6 {
			rip = ip4Any
		}
		if s.hasPeer {
			rip, rport = s.remote.ip, s.remote.port
		}
		lip := s.local.ip
		if !s.bound {
			lip = s.wildcard().ip
		}
		drops := 0
		if r := s.raw; r != nil {
			// raw_sock_seq_show: inet_rcv_saddr, the protocol as the
			// port, inet_daddr with port 0, sk_drops.
			lip, lport, rport, drops = r.rcvAddr, uint16(s.proto), 0, r.drops
			if r.connected {
				rip = r.dst
			}
		}
		rxq := s.rqBytes
		if st == tcpCLOSEWAIT && !s.finRead {
			rxq++ // rcv_nxt counts the FIN until a read consumes it
		}
		if st == tcpLISTEN {
			rxq = len(s.acceptQ) // sk_ack_backlog
		}
		var line string
		switch typ {
		case sockSTREAM:
			// refcount, pointer, rto, ato, quick/pingpong, cwnd,
			// ssthresh (listen: fastopen queue length) of an idle
			// loopback connection.
			ino, tail := s.ino, "2 0000000000000000 20 0 0 10 -1"
			switch {
			case st == tcpLISTEN:
				tail = fmt.Sprintf("%d 0000000000000000 100 0 0 10 0", 1+min(len(s.acceptQ), 1))
			case embryo[s]:
				ino, tail = 0, "1 0000000000000000 20 0 0 10 -1"
			}
			line = fmt.Sprintf("%4d: %s:%04X %s:%04X %02X %08X:%08X %02X:%08X %08X %5d %8d %d %s",
				sl, addr(lip), lport, addr(rip), rport, st, 0, rxq, 0, 0, 0, s.cred.uid, 0, ino, tail)
			sl++
		default:
			// "sl" is the hash bucket: of the port in udp_table, of
			// the protocol in raw_v4_hashinfo.
			bucket, w := int(lport)&16383, 5
			if typ == sockRAW {
				bucket = int(lport) & 255
				if !v6 {
					w = 4 // raw_sock_seq_show's %4d
				}
			}
			line = fmt.Sprintf("%*d: %s:%04X %s:%04X %02X %08X:%08X %02X:%08X %08X %5d %8d %d 2 0000000000000000 %d",
				w, bucket, addr(lip), lport, addr(rip), rport, st, 0, rxq, 0, 0, 0, s.cred.uid, 0, s.ino, drops)
		}
		if width > 0 {
			fmt.Fprintf(&b, "%-*s\n", width, line)
		} else {
			b.WriteString(line + "\n")
		}
	}
	return []byte(b.String())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// procUnix renders /proc/net/unix: every AF_UNIX socket of the stack.
func (ns *netStack) procUnix() []byte {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var b strings.Builder
	b.WriteString("Num       RefCount Protocol Flags    Type St Inode Path\n")
	socks := ns.liveLocked()
	embryo := embryosLocked(socks)
	peerRefs := map[*sock]int{} // sockets whose peer is this one
	for _, s := range socks {
		if s.family == afUNIX && s.peer != nil {
			peerRefs[s.peer]++
		}
	}
	for _, s := range socks {
		if s.family != afUNIX {
			continue
		}
		// References: the file's and the socket's own, one from each
		// socket whose peer it is.
		ref, flags, st, ino := 2+peerRefs[s], 0, 1, s.ino // SS_UNCONNECTED
		if s.state == ssListening {
			flags = 1 << 16 // __SO_ACCEPTCON
		}
		// A datagram connect makes both ends TCP_ESTABLISHED.
		if s.state == ssConnected || s.typ == sockDGRAM && (s.peer != nil || peerRefs[s] > 0) {
			st = 3 // SS_CONNECTED
		}
		if embryo[s] {
			st, ino = 2, 0 // no struct socket yet: SS_CONNECTING, no inode
		}
		fmt.Fprintf(&b, "0000000000000000: %08X %08X %08X %04X %02X %5d", ref, 0, flags, s.typ, st, ino)
		if s.bound {
			name := s.local.name
			if s.local.abstract {
				name = "@" + strings.ReplaceAll(name, "\x00", "@")
			}
			b.WriteString(" " + name)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// embryosLocked are the connections in a listener's accept queue, which
// Linux lists with inode 0 (no struct socket before accept(2)).
func embryosLocked(socks []*sock) map[*sock]bool {
	embryo := map[*sock]bool{}
	for _, s := range socks {
		for _, c := range s.acceptQ {
			embryo[c] = true
		}
	}
	return embryo
}

// procSockstat renders sockstat (v6=false) or sockstat6.
func (ns *netStack) procSockstat(v6 bool) []byte {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var used, tcpAlloc int
	var inuse [2][3]int // [v6][tcp, udp, raw]
	var pages [2]int    // tcp, udp memory in pages
	for _, s := range ns.live {
		used++
		if !s.isInet() {
			continue
		}
		fam := boolInt(s.family == afINET6)
		switch s.typ {
		case sockSTREAM:
			tcpAlloc++
			if _, ok := s.tcpStateLocked(); ok {
				inuse[fam][0]++
			}
			pages[0] += (s.rqBytes + 4095) / 4096
		case sockDGRAM:
			if s.bound {
				inuse[fam][1]++
			}
			pages[1] += (s.rqBytes + 4095) / 4096
		case sockRAW:
			inuse[fam][2]++
		}
	}
	if v6 {
		return fmt.Appendf(nil, "TCP6: inuse %d\nUDP6: inuse %d\nUDPLITE6: inuse 0\nRAW6: inuse %d\nFRAG6: inuse 0 memory 0\n",
			inuse[1][0], inuse[1][1], inuse[1][2])
	}
	return fmt.Appendf(nil, "sockets: used %d\nTCP: inuse %d orphan 0 tw 0 alloc %d mem %d\nUDP: inuse %d mem %d\nUDPLITE: inuse 0\nRAW: inuse %d\nFRAG: inuse 0 memory 0\n",
		used, inuse[0][0], tcpAlloc, pages[0], inuse[0][1], pages[1], inuse[0][2])
}

// loopbackStats are lo's counters (protected by netStack.mu).
type loopbackStats struct{ packets, bytes uint64 }

// loXmitLocked counts one message of n payload bytes from s crossing lo
// (ns.mu held): the Ethernet header lo keeps, the IP header, and the
// UDP or TCP header (TCP with the timestamp option Linux sends).
func (ns *netStack) loXmitLocked(s *sock, n int) {
	hdr := 14 + 20
	if s.family == afINET6 {
		hdr = 14 + 40
	}
	switch s.typ {
	case sockSTREAM:
		hdr += 32
	case sockDGRAM:
		hdr += 8
	}
	ns.lo.packets++
	ns.lo.bytes += uint64(n + hdr)
}

// procDev renders /proc/net/dev: lo, which receives what it sends.
func (ns *netStack) procDev() []byte {
	ns.mu.Lock()
	lo := ns.lo
	ns.mu.Unlock()
	return fmt.Appendf(nil, "Inter-|   Receive                                                |  Transmit\n"+
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"+
		"%6s:%8d %7d %4d %4d %4d %5d %10d %9d %8d %7d %4d %4d %4d %5d %7d %10d\n",
		"lo", lo.bytes, lo.packets, 0, 0, 0, 0, 0, 0, lo.bytes, lo.packets, 0, 0, 0, 0, 0, 0)
}
