// Raw IP and ICMP ping sockets on loopback (uvm --net=host; natively as
// root): an ICMP echo to 127.0.0.1 through SOCK_RAW IPPROTO_ICMP (what
// is read includes the IPv4 header), to ::1 through SOCK_RAW
// IPPROTO_ICMPV6 (no header; the kernel fills in the checksum), and
// through SOCK_DGRAM ping sockets (no header; the kernel sets the
// identifier). Raw sockets see every ICMP message of their protocol, the
// echo request too, so only the reply is printed. Without the privilege
// the errno is printed (EPERM for raw, EACCES for ping sockets).
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static unsigned short csum(const unsigned char *p, int n)
{
	unsigned long s = 0;
	for (int i = 0; i + 1 < n; i += 2)
		s += (unsigned)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (unsigned)(p[n - 1] << 8);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (unsigned short)~s;
}

// echo sends an echo request (type req) with id and seq to dst and
// prints the first message of type rep read back.
static void echo(const char *what, int family, int type, int proto, int req, int rep)
{
	int fd = socket(family, type, proto);
	if (fd < 0) {
		printf("%s: socket: %s\n", what, strerror(errno));
		return;
	}
	unsigned char m[16] = {(unsigned char)req, 0, 0, 0, 0x12, 0x34, 0, 1, 'u', 'v', 'm', '-', 'p', 'i', 'n', 'g'};
	if (family == AF_INET) {
		unsigned short c = csum(m, sizeof m);
		m[2] = (unsigned char)(c >> 8);
		m[3] = (unsigned char)c;
	}
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof *a;
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		sl = sizeof *a;
	}
	ssize_t n = sendto(fd, m, sizeof m, 0, (struct sockaddr *)&ss, sl);
	printf("%s: sendto %zd\n", what, n);
	for (int tries = 0; tries < 4; tries++) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 5000) != 1) {
			printf("%s: no reply\n", what);
			break;
		}
		unsigned char b[256];
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		n = recvfrom(fd, b, sizeof b, 0, (struct sockaddr *)&from, &fl);
		if (n < 0) {
			printf("%s: recvfrom: %s\n", what, strerror(errno));
			break;
		}
		int off = 0;
		if (family == AF_INET && type == SOCK_RAW) {
			off = (b[0] & 15) * 4;
		}
		if (n < off + 8 || b[off] != rep)
			continue;
		if (off > 0)
			printf("%s: IPv4 header version %d ihl %d protocol %d total length %d\n", what,
			       b[0] >> 4, b[0] & 15, b[9], b[2] << 8 | b[3]);
		unsigned char *r = b + off;
		printf("%s: %zd bytes from family %d, type %d code %d", what, n, from.ss_family, r[0], r[1]);
		if (type == SOCK_RAW)
			printf(" id 0x%02x%02x", r[4], r[5]);
		printf(" seq %d payload \"%.*s\"\n", r[6] << 8 | r[7], (int)(n - off - 8), (const char *)r + 8);
		break;
	}
	close(fd);
}

int main(void)
{
	echo("raw icmp", AF_INET, SOCK_RAW, IPPROTO_ICMP, 8, 0);
	echo("raw icmpv6", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, 128, 129);
	echo("ping icmp", AF_INET, SOCK_DGRAM, IPPROTO_ICMP, 8, 0);
	echo("ping icmpv6", AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6, 128, 129);
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
	int one = 1;
	if (fd >= 0)
		printf("IP_HDRINCL set %d\n", setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof one));
	// SOL_MPTCP (284) MPTCP_INFO (1) goes to the host too: Go's
	// Conn.MultipathTCP reads it (EOPNOTSUPP on a plain TCP socket).
	int protos[] = {0, 262 /* IPPROTO_MPTCP */};
	for (int i = 0; i < 2; i++) {
		int t = socket(AF_INET, SOCK_STREAM, protos[i]);
		if (t < 0) {
			printf("tcp protocol %d: socket: %s\n", protos[i], strerror(errno));
			continue;
		}
		unsigned char info[64];
		socklen_t il = sizeof info;
		int r = getsockopt(t, 284, 1, info, &il);
		printf("tcp protocol %d: MPTCP_INFO %d %s\n", protos[i], r, r < 0 ? strerror(errno) : "");
		close(t);
	}
	return 0;
}
