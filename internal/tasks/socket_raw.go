package tasks

// Raw IP sockets (socket(AF_INET/AF_INET6, SOCK_RAW, proto)) and ICMP
// ping sockets (SOCK_DGRAM with IPPROTO_ICMP/IPPROTO_ICMPV6). With
// --net=host they are host sockets (hostSocket in socket_host_linux.go):
// the host kernel decides, so an unprivileged uvm gets EPERM for a raw
// socket and EACCES for a ping socket outside net.ipv4.ping_group_range,
// as a guest on that host would; on loopback IPPROTO_ICMP raw sockets
// read the IPv4 header with the message and ICMPv6 raw sockets do not,
// which is the host kernel's own behaviour passed through. In the
// in-kernel network (--net=loopback) raw sockets are socket_rawip.go's
// (CAP_NET_RAW: EPERM for the unprivileged --det guest); ping sockets
// are not there and fail loudly with EPROTONOSUPPORT (newSocket's
// default case logs the family, type and protocol).

// Protocol numbers of the ping sockets.
const (
	ipprotoICMP   = 1
	ipprotoICMPV6 = 58
)

// hostRawSock reports whether a socket(2) triple of AF_INET/AF_INET6 is
// a raw or ping socket that --net=host hands to the host kernel. proto
// of a raw socket is any protocol number the host accepts (it answers
// EINVAL or EPROTONOSUPPORT itself for a bad one).
func hostRawSock(family, base, proto int) bool {
	switch base {
	case sockRAW:
		return true
	case sockDGRAM:
		return family == afINET && proto == ipprotoICMP || family == afINET6 && proto == ipprotoICMPV6
	}
	return false
}
