package tasks

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// --trace/--strace decoding of socket addresses: the sockaddr arguments
// of the socket syscalls print as strace prints them,
// {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")},
// instead of their address. Inputs (bind, connect, sendto) are decoded
// from the caller's buffer and length; results (accept, accept4,
// getsockname, getpeername, recvfrom) only after a successful call, from
// the length the kernel wrote back. A buffer uvm cannot read prints as
// the plain address.

// sockaddrArgs: syscall name → (sockaddr argument, its length argument,
// whether the length is a socklen_t * written by the call).
var sockaddrArgs = map[string]struct {
	addr, len int
	out       bool
}{
	"bind": {1, 2, false}, "connect": {1, 2, false}, "sendto": {4, 5, false},
	"accept": {1, 2, true}, "accept4": {1, 2, true}, "getsockname": {1, 2, true},
	"getpeername": {1, 2, true}, "recvfrom": {4, 5, true},
}

// traceSockaddrArg returns the decoded argument i of syscall name, or
// ok false when it is not a sockaddr uvm can show.
func (t *Task) traceSockaddrArg(name string, i int, args [6]uint64, ret *uint64) (string, bool) {
	sa, ok := sockaddrArgs[name]
	if !ok || sa.addr != i || args[i] == 0 {
		return "", false
	}
	n := args[sa.len]
	if sa.out {
		if ret == nil || int64(*ret) < 0 {
			return "", false
		}
		lb, e := t.readBuf(n, 4)
		if e != 0 {
			return "", false
		}
		n = uint64(binary.LittleEndian.Uint32(lb))
	}
	n = min(n, 128)
	raw, e := t.readBuf(args[i], n)
	if e != 0 || len(raw) < 2 {
		return "", false
	}
	return formatSockaddr(raw), true
}

// formatSockaddr is strace's rendering of a sockaddr.
func formatSockaddr(raw []byte) string {
	le, be := binary.LittleEndian, binary.BigEndian
	fam := int(le.Uint16(raw))
	var b strings.Builder
	b.WriteString("{sa_family=")
	switch fam {
	case afINET:
		b.WriteString("AF_INET")
		if len(raw) >= 8 {
			ip := netip.AddrFrom4([4]byte(raw[4:8]))
			b.WriteString(", sin_port=htons(" + strconv.Itoa(int(be.Uint16(raw[2:]))) + "), sin_addr=inet_addr(\"" + ip.String() + "\")")
		}
	case afINET6:
		b.WriteString("AF_INET6")
		if len(raw) >= 24 {
			ip := netip.AddrFrom16([16]byte(raw[8:24]))
			b.WriteString(", sin6_port=htons(" + strconv.Itoa(int(be.Uint16(raw[2:]))) + "), sin6_flowinfo=htonl(" +
				strconv.FormatUint(uint64(be.Uint32(raw[4:])), 10) + "), inet_pton(AF_INET6, \"" + ip.String() + "\", &sin6_addr)")
			if len(raw) >= 28 {
				b.WriteString(", sin6_scope_id=" + strconv.FormatUint(uint64(le.Uint32(raw[24:])), 10))
			}
		}
	case afUNIX:
		b.WriteString("AF_UNIX")
		path := raw[2:]
		switch {
		case len(path) == 0:
		case path[0] == 0:
			b.WriteString(", sun_path=@" + strconv.Quote(string(path[1:])))
		default:
			if i := strings.IndexByte(string(path), 0); i >= 0 {
				path = path[:i]
			}
			b.WriteString(", sun_path=" + strconv.Quote(string(path)))
		}
	case 16: // AF_NETLINK
		b.WriteString("AF_NETLINK")
		if len(raw) >= 12 {
			b.WriteString(", nl_pid=" + strconv.FormatUint(uint64(le.Uint32(raw[4:])), 10) +
				", nl_groups=" + fmt.Sprintf("%08x", le.Uint32(raw[8:])))
		}
	default:
		b.WriteString(famName(fam) + ", sa_data=" + strconv.Quote(string(raw[2:])))
	}
	b.WriteString("}")
	return b.String()
}
