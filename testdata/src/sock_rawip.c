// Raw IP sockets on loopback (needs CAP_NET_RAW: natively as root, or
// uvm without --det run by root; uvm's in-kernel network models them,
// internal/tasks/socket_rawip.go). Prints what Linux decides and nothing
// it chooses at random (the IPv4 identification, hence the header
// checksum's value, is printed only as "ok").
//
// IPv4: getsockname (the port is the protocol), an ICMP echo to
// 127.0.0.1 (the request and the kernel's reply, both read with their
// IPv4 header), which sockets see what (bound to 127.0.0.2, connected to
// 127.0.0.3, ICMP_FILTER), IP_HDRINCL (the kernel fills in the source,
// total length and checksum), MSG_PEEK, MSG_TRUNC, FIONREAD, poll,
// EMSGSIZE, getpeername, errors. IPv6: ICMPv6 echo to ::1 (payload only,
// the kernel's checksum), ICMP6_FILTER, IPV6_CHECKSUM on another
// protocol and a wrong checksum dropped by the receive.
#define _GNU_SOURCE // POLLRDHUP
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROTO_EXP 253 // RFC 3692 experimentation: no kernel handler
#define ICMP_FILTER 1 // linux/icmp.h (SOL_RAW)

static unsigned sum16(const unsigned char *p, int n, unsigned long s)
{
	for (int i = 0; i + 1 < n; i += 2)
		s += (unsigned)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (unsigned)(p[n - 1] << 8);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (unsigned)(~s & 0xffff);
}

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

static struct sockaddr_in sin4(const char *ip, int port)
{
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static void name(const char *what, int fd, int peer)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof ss;
	int r = peer ? getpeername(fd, (struct sockaddr *)&ss, &l) : getsockname(fd, (struct sockaddr *)&ss, &l);
	if (r < 0) {
		printf("%s: %s: %s\n", what, peer ? "getpeername" : "getsockname", strerror(errno));
		return;
	}
	char buf[64];
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		printf("%s: %s len %d family %d %s port %d\n", what, peer ? "peer" : "name", (int)l, a->sin_family,
		       inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf), ntohs(a->sin_port));
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		printf("%s: %s len %d family %d %s port %d\n", what, peer ? "peer" : "name", (int)l, a->sin6_family,
		       inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf), ntohs(a->sin6_port));
	}
}

// drain prints every datagram queued on fd (an IPv4 raw socket: the
// header's fields, then the ICMP or payload bytes).
static void drain(const char *what, int fd)
{
	int n = 0;
	for (;;) {
		unsigned char b[2048];
		struct sockaddr_in from;
		socklen_t fl = sizeof from;
		memset(&from, 0xee, sizeof from);
		ssize_t r = recvfrom(fd, b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (r < 0) {
			if (errno != EAGAIN)
				printf("%s: recvfrom: %s\n", what, strerror(errno));
			break;
		}
		n++;
		char s[32], d[32], f[32];
		int hl = (b[0] & 15) * 4;
		inet_ntop(AF_INET, b + 12, s, sizeof s);
		inet_ntop(AF_INET, b + 16, d, sizeof d);
		inet_ntop(AF_INET, &from.sin_addr, f, sizeof f);
		printf("%s: %zd bytes from %s port %d (namelen %d family %d): v%d ihl %d tos %d len %d frag 0x%04x ttl %d proto %d hsum %s %s -> %s",
		       what, r, f, ntohs(from.sin_port), (int)fl, from.sin_family, b[0] >> 4, b[0] & 15, b[1],
		       b[2] << 8 | b[3], b[6] << 8 | b[7], b[8], b[9], sum16(b, hl, 0) == 0 ? "ok" : "BAD", s, d);
		if (b[9] == IPPROTO_ICMP && r >= hl + 8) {
			unsigned char *ic = b + hl;
			printf(" icmp type %d code %d sum %s id 0x%02x%02x seq %d \"%.*s\"", ic[0], ic[1],
			       sum16(ic, r - hl, 0) == 0 ? "ok" : "BAD", ic[4], ic[5], ic[6] << 8 | ic[7], (int)(r - hl - 8),
			       (char *)ic + 8);
		} else {
			printf(" payload %zd bytes \"%.*s\"", r - hl, (int)(r - hl > 16 ? 16 : r - hl), (char *)b + hl);
		}
		printf("\n");
	}
	if (n == 0)
		printf("%s: nothing\n", what);
}

static void drain6(const char *what, int fd)
{
	int n = 0;
	for (;;) {
		unsigned char b[2048];
		struct sockaddr_in6 from;
		socklen_t fl = sizeof from;
		ssize_t r = recvfrom(fd, b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (r < 0) {
			if (errno != EAGAIN)
				printf("%s: recvfrom: %s\n", what, strerror(errno));
			break;
		}
		n++;
		char f[64];
		inet_ntop(AF_INET6, &from.sin6_addr, f, sizeof f);
		printf("%s: %zd bytes from %s port %d scope %u (namelen %d):", what, r, f, ntohs(from.sin6_port),
		       from.sin6_scope_id, (int)fl);
		for (int i = 0; i < r && i < 16; i++)
			printf(" %02x", b[i]);
		printf("\n");
	}
	if (n == 0)
		printf("%s: nothing\n", what);
}

// cmsgs receives one datagram with recvmsg and prints its control
// messages (level, type, length, the data as numbers).
static void cmsgs_n(const char *what, int fd, size_t ctllen)
{
	unsigned char b[2048];
	union {
		unsigned char b[256];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct iovec iov = {b, sizeof b};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = ctllen};
	ssize_t r = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (r < 0) {
		printf("%s: recvmsg: %s\n", what, strerror(errno));
		return;
	}
	printf("%s: %zd bytes, controllen %zu, flags 0x%x\n", what, r, (size_t)mh.msg_controllen, mh.msg_flags);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		int n = (int)(c->cmsg_len - CMSG_LEN(0));
		printf("%s:   cmsg level %d type %d len %zu:", what, c->cmsg_level, c->cmsg_type, (size_t)c->cmsg_len);
		unsigned char *d = CMSG_DATA(c);
		if (n == 4) {
			printf(" %d", *(int *)d);
		} else {
			for (int i = 0; i < n; i++)
				printf(" %d", d[i]);
		}
		printf("\n");
	}
}

static void cmsgs(const char *what, int fd) { cmsgs_n(what, fd, 256); }

static int echo_msg(unsigned char *m, int type, int seq, const char *data)
{
	int n = 8 + (int)strlen(data);
	memset(m, 0, 8);
	m[0] = (unsigned char)type;
	m[4] = 0x12;
	m[5] = 0x34;
	m[6] = (unsigned char)(seq >> 8);
	m[7] = (unsigned char)seq;
	memcpy(m + 8, data, strlen(data));
	if (type == ICMP_ECHO) {
		unsigned c = sum16(m, n, 0);
		m[2] = (unsigned char)(c >> 8);
		m[3] = (unsigned char)c;
	}
	return n;
}

static void v4(void)
{
	printf("socket proto 0: %s\n", err(socket(AF_INET, SOCK_RAW, 0)));
	printf("socket proto -1: %s\n", err(socket(AF_INET, SOCK_RAW, -1)));
	printf("socket proto 263: %s\n", err(socket(AF_INET, SOCK_RAW, 263)));

	int s = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (s < 0) {
		printf("raw icmp: socket: %s\n", strerror(errno));
		return;
	}
	name("s", s, 0);
	name("s", s, 1);
	int v;
	socklen_t vl = sizeof v;
	getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &vl);
	printf("s: SO_TYPE %d", v);
	getsockopt(s, SOL_SOCKET, SO_PROTOCOL, &v, &vl);
	printf(" SO_PROTOCOL %d", v);
	getsockopt(s, IPPROTO_IP, IP_HDRINCL, &v, &vl);
	printf(" IP_HDRINCL %d\n", v);

	int bound = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	struct sockaddr_in a = sin4("127.0.0.2", 0);
	printf("bind 127.0.0.2: %s\n", err(bind(bound, (struct sockaddr *)&a, sizeof a)));
	name("bound", bound, 0);
	a = sin4("10.1.2.3", 0);
	printf("bind again to 10.1.2.3: %s\n", err(bind(bound, (struct sockaddr *)&a, sizeof a)));
	printf("bind short: %s\n", err(bind(bound, (struct sockaddr *)&a, 8)));

	int conn = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	a = sin4("127.0.0.3", 0);
	printf("connect 127.0.0.3: %s\n", err(connect(conn, (struct sockaddr *)&a, sizeof a)));
	name("conn", conn, 0);
	name("conn", conn, 1);
	printf("bind after connect: %s\n", err(bind(conn, (struct sockaddr *)&a, sizeof a)));

	unsigned char m[256];
	int n = echo_msg(m, ICMP_ECHO, 1, "to-127.0.0.1");
	a = sin4("127.0.0.1", 0);
	printf("s sendto 127.0.0.1: %zd\n", sendto(s, m, n, 0, (struct sockaddr *)&a, sizeof a));
	drain("s", s);
	drain("bound", bound);
	drain("conn", conn);

	n = echo_msg(m, ICMP_ECHO, 2, "to-127.0.0.2");
	a = sin4("127.0.0.2", 0);
	a.sin_family = AF_UNSPEC; // raw_sendmsg takes it for AF_INET
	printf("s sendto 127.0.0.2 (AF_UNSPEC): %zd\n", sendto(s, m, n, 0, (struct sockaddr *)&a, sizeof a));
	drain("s", s);
	drain("bound", bound);
	drain("conn", conn);

	n = echo_msg(m, ICMP_ECHO, 3, "conn-send");
	printf("conn send: %zd\n", send(conn, m, n, 0));
	drain("s", s);
	drain("conn", conn);

	// ICMP_FILTER: drop echo replies on s.
	unsigned filt = 1 << ICMP_ECHOREPLY;
	printf("ICMP_FILTER: %s\n", err(setsockopt(s, SOL_RAW, ICMP_FILTER, &filt, sizeof filt)));
	filt = 0;
	vl = sizeof filt;
	getsockopt(s, SOL_RAW, ICMP_FILTER, &filt, &vl);
	printf("ICMP_FILTER get 0x%x len %d\n", filt, (int)vl);
	n = echo_msg(m, ICMP_ECHO, 4, "filtered");
	a = sin4("127.0.0.1", 0);
	sendto(s, m, n, 0, (struct sockaddr *)&a, sizeof a);
	drain("s", s);
	filt = 0;
	setsockopt(s, SOL_RAW, ICMP_FILTER, &filt, sizeof filt);
	// An ICMP message shorter than its 8-byte header reaches no raw socket.
	printf("s sendto 4 bytes: %zd\n", sendto(s, m, 4, 0, (struct sockaddr *)&a, sizeof a));
	drain("s", s);
	// A wrong ICMP checksum: raw sockets see the request, no reply comes.
	n = echo_msg(m, ICMP_ECHO, 5, "bad-sum");
	m[2] ^= 1;
	sendto(s, m, n, 0, (struct sockaddr *)&a, sizeof a);
	drain("s", s);
	int probe = socket(AF_INET, SOCK_DGRAM, 0);
	printf("udp IP_HDRINCL: %s\n", err(setsockopt(probe, IPPROTO_IP, IP_HDRINCL, &(int){1}, sizeof(int))));
	printf("udp SOL_RAW ICMP_FILTER: %s\n", err(setsockopt(probe, SOL_RAW, ICMP_FILTER, &filt, sizeof filt)));
	close(probe);

	// IP_HDRINCL through IPPROTO_RAW: source 0, length and checksum wrong,
	// TTL 7, TOS 0x10; the kernel fixes what raw_send_hdrinc fixes.
	int hr = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	vl = sizeof v;
	getsockopt(hr, IPPROTO_IP, IP_HDRINCL, &v, &vl);
	printf("IPPROTO_RAW: IP_HDRINCL %d\n", v);
	name("hr", hr, 0);
	unsigned char pk[256] = {0x45, 0x10, 0x99, 0x99, 0, 0, 0, 0, 7, IPPROTO_ICMP, 0xde, 0xad, 0, 0, 0, 0, 127, 0, 0, 1};
	n = echo_msg(pk + 20, ICMP_ECHO, 6, "hdrincl");
	printf("hr sendto: %zd\n", sendto(hr, pk, 20 + n, 0, (struct sockaddr *)&a, sizeof a));
	drain("s", s);
	printf("hr sendto 19 bytes: %s\n", err(sendto(hr, pk, 19, 0, (struct sockaddr *)&a, sizeof a)));
	pk[0] = 0x4f; // IHL 15: 60 bytes, past the 30 sent
	printf("hr sendto IHL past length: %s\n", err(sendto(hr, pk, 30, 0, (struct sockaddr *)&a, sizeof a)));
	pk[0] = 0x44; // IHL 4: sent untouched, dropped on input
	printf("hr sendto IHL 4: %s\n", err(sendto(hr, pk, 20 + n, 0, (struct sockaddr *)&a, sizeof a)));
	pk[0] = 0x65; // version 6 in an IPv4 packet: dropped on input
	printf("hr sendto version 6: %s\n", err(sendto(hr, pk, 20 + n, 0, (struct sockaddr *)&a, sizeof a)));
	pk[0] = 0x45;
	pk[6] = 0x20; // MF: a first fragment, never completed
	printf("hr sendto fragment: %s\n", err(sendto(hr, pk, 20 + n, 0, (struct sockaddr *)&a, sizeof a)));
	pk[6] = 0;
	pk[16] = 10; // to 10.0.0.1 by its header, routed to lo by the address
	printf("hr sendto header to 10.0.0.1: %s\n", err(sendto(hr, pk, 20 + n, 0, (struct sockaddr *)&a, sizeof a)));
	drain("s", s);
	v = 0;
	printf("IP_HDRINCL off: %s\n", err(setsockopt(hr, IPPROTO_IP, IP_HDRINCL, &v, sizeof v)));
	vl = sizeof v;
	getsockopt(hr, IPPROTO_IP, IP_HDRINCL, &v, &vl);
	printf("IPPROTO_RAW: IP_HDRINCL now %d\n", v);
	close(hr);

	// A protocol without a kernel handler: TTL, TOS, MSG_PEEK, MSG_TRUNC,
	// FIONREAD, poll, EMSGSIZE.
	int e1 = socket(AF_INET, SOCK_RAW, PROTO_EXP);
	int e2 = socket(AF_INET, SOCK_RAW, PROTO_EXP);
	v = 9;
	setsockopt(e1, IPPROTO_IP, IP_TTL, &v, sizeof v);
	v = 0x20;
	setsockopt(e1, IPPROTO_IP, IP_TOS, &v, sizeof v);
	struct pollfd p = {e2, POLLIN | POLLOUT, 0};
	int pr = poll(&p, 1, 0);
	printf("e2 poll before: %d revents 0x%x\n", pr, p.revents);
	printf("e1 send unconnected: %s\n", err(send(e1, "x", 1, 0)));
	a = sin4("127.0.0.1", 0);
	char big[300];
	memset(big, 'z', sizeof big);
	memcpy(big, "experimental", 12);
	printf("e1 sendto 300: %zd\n", sendto(e1, big, 300, 0, (struct sockaddr *)&a, sizeof a));
	pr = poll(&p, 1, 0);
	printf("e2 poll after: %d revents 0x%x\n", pr, p.revents);
	int q = -1;
	ioctl(e2, FIONREAD, &q);
	printf("e2 FIONREAD %d\n", q);
	unsigned char small[24];
	printf("e2 recv MSG_ERRQUEUE: %s\n", err(recv(e2, small, sizeof small, MSG_ERRQUEUE | MSG_DONTWAIT)));
	ssize_t r = recv(e2, small, sizeof small, MSG_PEEK);
	printf("e2 peek 24: %zd \"%.4s\"\n", r, small + 20);
	struct iovec iov = {small, sizeof small};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	r = recvmsg(e2, &mh, MSG_TRUNC);
	printf("e2 recvmsg MSG_TRUNC 24: %zd flags 0x%x\n", r, mh.msg_flags);
	drain("e2", e2);
	int on = 1;
	setsockopt(e1, IPPROTO_IP, IP_RECVTTL, &on, sizeof on);
	setsockopt(e1, IPPROTO_IP, IP_PKTINFO, &on, sizeof on);
	setsockopt(e1, IPPROTO_IP, IP_RECVTOS, &on, sizeof on);
	cmsgs("e1", e1); // queued before IP_PKTINFO was set: only ipi_addr
	a = sin4("127.0.0.9", 0);
	sendto(e1, "again", 5, 0, (struct sockaddr *)&a, sizeof a);
	cmsgs("e1", e1);
	sendto(e1, "short", 5, 0, (struct sockaddr *)&a, sizeof a);
	cmsgs_n("e1 (20-byte control buffer)", e1, 20);
	a = sin4("127.0.0.1", 0);
	static char huge[70000];
	printf("e1 sendto 65515: %s\n", err(sendto(e1, huge, 65515, 0, (struct sockaddr *)&a, sizeof a)));
	printf("e1 sendto 65516: %s\n", err(sendto(e1, huge, 65516, 0, (struct sockaddr *)&a, sizeof a)));
	printf("e1 sendto 65536: %s\n", err(sendto(e1, huge, 65536, 0, (struct sockaddr *)&a, sizeof a)));
	r = recv(e2, huge, sizeof huge, MSG_DONTWAIT);
	printf("e2 recv: %zd (header length %d)\n", r, (huge[2] << 8 & 0xff00) | (huge[3] & 0xff));
	drain("e2", e2);
	struct sockaddr_in6 s6 = {0};
	s6.sin6_family = AF_INET6;
	printf("e1 sendto AF_INET6: %s\n", err(sendto(e1, "x", 1, 0, (struct sockaddr *)&s6, sizeof s6)));
	printf("e1 sendto short address: %s\n", err(sendto(e1, "x", 1, 0, (struct sockaddr *)&a, 8)));
	printf("e1 shutdown unconnected: %s\n", err(shutdown(e1, SHUT_RDWR)));
	p.fd = e1;
	p.events = POLLIN | POLLOUT | POLLRDHUP;
	pr = poll(&p, 1, 0);
	printf("e1 poll after shutdown: %d revents 0x%x\n", pr, p.revents);
	printf("e1 recv MSG_DONTWAIT after shutdown: %s\n", err(recv(e1, small, sizeof small, MSG_DONTWAIT)));
	printf("e1 listen: %s\n", err(listen(e1, 1)));
	a.sin_family = AF_UNSPEC;
	printf("conn disconnect: %s\n", err(connect(conn, (struct sockaddr *)&a, sizeof a)));
	name("conn", conn, 1);
	a = sin4("127.0.0.3", 7);
	printf("conn connect port 7: %s\n", err(connect(conn, (struct sockaddr *)&a, sizeof a)));
	name("conn", conn, 1);
	printf("conn shutdown: %s\n", err(shutdown(conn, SHUT_RD)));
	r = recv(conn, small, sizeof small, 0);
	printf("conn recv after SHUT_RD: %zd\n", r);
	close(e1);
	close(e2);
	close(s);
	close(bound);
	close(conn);
}

// udp4: what raw sockets see of the kernel's UDP (the datagram, by a
// raw IPPROTO_UDP socket; the port unreachable for a closed port, by a
// raw ICMP socket), and a UDP datagram sent through a raw socket to a
// UDP socket (a wrong checksum is dropped, a zero one means none).
static void udp4(void)
{
	int ru = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
	int ri = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	int tx = socket(AF_INET, SOCK_DGRAM, 0), rx = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = sin4("127.0.0.1", 40001);
	bind(tx, (struct sockaddr *)&a, sizeof a);
	a = sin4("127.0.0.1", 40002);
	bind(rx, (struct sockaddr *)&a, sizeof a);
	printf("udp sendto 40002: %zd\n", sendto(tx, "udp-data", 8, 0, (struct sockaddr *)&a, sizeof a));
	unsigned char b[1024];
	ssize_t r = recv(ru, b, sizeof b, MSG_DONTWAIT);
	if (r >= 28)
		// On lo the UDP checksum is left to the "hardware"
		// (CHECKSUM_PARTIAL): the field holds the pseudo header's sum.
		printf("ru: %zd bytes: len %d frag 0x%04x ttl %d proto %d hsum %s udp %d -> %d len %d sum field 0x%04x \"%.*s\"\n",
		       r, b[2] << 8 | b[3], b[6] << 8 | b[7], b[8], b[9], sum16(b, 20, 0) == 0 ? "ok" : "BAD",
		       b[20] << 8 | b[21], b[22] << 8 | b[23], b[24] << 8 | b[25], b[26] << 8 | b[27], (int)(r - 28),
		       (char *)b + 28);
	else
		printf("ru: %s\n", err(r));
	r = recv(rx, b, sizeof b, MSG_DONTWAIT);
	printf("rx: %zd\n", r);
	a = sin4("127.0.0.1", 40003);
	printf("udp sendto closed 40003: %zd\n", sendto(tx, "nobody", 6, 0, (struct sockaddr *)&a, sizeof a));
	drain("ru", ru);
	r = recv(ri, b, sizeof b, MSG_DONTWAIT);
	if (r >= 56) {
		unsigned char *q = b + 28;
		printf("ri: %zd bytes: tos 0x%02x len %d frag 0x%04x ttl %d hsum %s icmp type %d code %d sum %s; quoted: len %d "
		       "frag 0x%04x ttl %d proto %d udp %d -> %d sum field 0x%04x \"%.*s\"\n",
		       r, b[1], b[2] << 8 | b[3], b[6] << 8 | b[7], b[8], sum16(b, 20, 0) == 0 ? "ok" : "BAD", b[20], b[21],
		       sum16(b + 20, (int)r - 20, 0) == 0 ? "ok" : "BAD", q[2] << 8 | q[3], q[6] << 8 | q[7],
		       q[8], q[9], q[20] << 8 | q[21], q[22] << 8 | q[23], q[26] << 8 | q[27], (int)(r - 56), (char *)q + 28);
	} else {
		printf("ri: %s\n", err(r));
	}
	drain("ri", ri);
	// Through the raw socket: UDP header 40009 -> 40002 with no checksum,
	// then a wrong one, then to the closed port.
	unsigned char u[16] = {0x9c, 0x49, 0x9c, 0x42, 0, 14, 0, 0, 'r', 'a', 'w', 'u', 'd', 'p'};
	a = sin4("127.0.0.1", 0);
	printf("ru sendto: %zd\n", sendto(ru, u, 14, 0, (struct sockaddr *)&a, sizeof a));
	struct sockaddr_in from;
	socklen_t fl = sizeof from;
	r = recvfrom(rx, b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	printf("rx: %zd from port %d \"%.*s\"\n", r, ntohs(from.sin_port), r > 0 ? (int)r : 0, (char *)b);
	u[6] = 0x12;
	sendto(ru, u, 14, 0, (struct sockaddr *)&a, sizeof a);
	printf("rx after a wrong checksum: %s\n", err(recv(rx, b, sizeof b, MSG_DONTWAIT)));
	u[6] = 0;
	u[3] = 0x43; // 40003
	sendto(ru, u, 14, 0, (struct sockaddr *)&a, sizeof a);
	r = recv(ri, b, sizeof b, MSG_DONTWAIT);
	printf("ri: %zd bytes, type %d code %d\n", r, r > 21 ? b[20] : -1, r > 21 ? b[21] : -1);
	drain("ru", ru);
	close(ru);
	close(ri);
	close(tx);
	close(rx);
}

// udp6: the same for IPv6 (the raw sockets read no IPv6 header; the
// ICMPv6 error quotes one; its flow label, which Linux hashes, is not
// printed).
static void udp6(void)
{
	int ru = socket(AF_INET6, SOCK_RAW, IPPROTO_UDP);
	int ri = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
	int tx = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 a = {0};
	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_loopback;
	a.sin6_port = htons(40011);
	bind(tx, (struct sockaddr *)&a, sizeof a);
	a.sin6_port = htons(40013);
	printf("udp6 sendto closed 40013: %zd\n", sendto(tx, "nobody6", 7, 0, (struct sockaddr *)&a, sizeof a));
	drain6("ru6", ru);
	unsigned char b[1500];
	ssize_t r = recv(ri, b, sizeof b, MSG_DONTWAIT);
	if (r >= 56)
		printf("ri6: %zd bytes: type %d code %d; quoted: version %d tclass %d plen %d next %d hops %d udp %d -> %d \"%.*s\"\n", r,
		       b[0], b[1], b[8] >> 4, (b[8] & 15) << 4 | b[9] >> 4, b[12] << 8 | b[13], b[14], b[15], b[48] << 8 | b[49],
		       b[50] << 8 | b[51], (int)(r - 56), (char *)b + 56);
	else
		printf("ri6: %s\n", err(r));
	// A raw IPv6 UDP socket whose kernel computes the UDP checksum
	// (IPV6_CHECKSUM 6) reaches a UDP socket; without it (a zero
	// checksum, invalid in IPv6) nothing arrives.
	int rx = socket(AF_INET6, SOCK_DGRAM, 0);
	a.sin6_port = htons(40012);
	bind(rx, (struct sockaddr *)&a, sizeof a);
	a.sin6_port = 0;
	unsigned char u[14] = {0x9c, 0x4f, 0x9c, 0x4c, 0, 14, 0, 0, 'r', 'a', 'w', 'u', 'd', 'p'};
	printf("ru6 sendto no checksum: %s\n", err(sendto(ru, u, 14, 0, (struct sockaddr *)&a, sizeof a)));
	printf("rx6: %s\n", err(recv(rx, b, sizeof b, MSG_DONTWAIT)));
	int v = 6;
	setsockopt(ru, IPPROTO_IPV6, IPV6_CHECKSUM, &v, sizeof v);
	printf("ru6 sendto with IPV6_CHECKSUM 6: %s\n", err(sendto(ru, u, 14, 0, (struct sockaddr *)&a, sizeof a)));
	struct sockaddr_in6 from;
	socklen_t fl = sizeof from;
	r = recvfrom(rx, b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	printf("rx6: %zd from port %d \"%.*s\"\n", r, ntohs(from.sin6_port), r > 0 ? (int)r : 0, (char *)b);
	drain6("ri6", ri);
	close(rx);
	close(ru);
	close(ri);
	close(tx);
}

static void v6(void)
{
	int s = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
	if (s < 0) {
		printf("raw icmpv6: socket: %s\n", strerror(errno));
		return;
	}
	name("s6", s, 0);
	int v;
	socklen_t vl = sizeof v;
	printf("s6 IPV6_CHECKSUM get: %s", err(getsockopt(s, IPPROTO_IPV6, IPV6_CHECKSUM, &v, &vl)));
	printf(" %d\n", v);
	v = 4;
	printf("s6 IPV6_CHECKSUM set: %s\n", err(setsockopt(s, IPPROTO_IPV6, IPV6_CHECKSUM, &v, sizeof v)));
	printf("s6 IP_TTL: %s\n", err(setsockopt(s, IPPROTO_IP, IP_TTL, &v, sizeof v)));
	struct sockaddr_in6 a = {0};
	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_loopback;
	unsigned char m[64];
	int n = echo_msg(m, ICMP6_ECHO_REQUEST, 1, "to-::1");
	printf("s6 sendto ::1: %zd\n", sendto(s, m, n, 0, (struct sockaddr *)&a, sizeof a));
	drain6("s6", s);
	struct icmp6_filter f;
	ICMP6_FILTER_SETPASSALL(&f);
	ICMP6_FILTER_SETBLOCK(ICMP6_ECHO_REQUEST, &f);
	printf("ICMP6_FILTER: %s\n", err(setsockopt(s, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof f)));
	memset(&m, 0, sizeof m);
	n = echo_msg(m, ICMP6_ECHO_REQUEST, 2, "filtered");
	printf("s6 sendto ::1 again: %zd\n", sendto(s, m, n, 0, (struct sockaddr *)&a, sizeof a));
	drain6("s6", s);
	printf("s6 sendto 3 bytes: %s\n", err(sendto(s, m, 3, 0, (struct sockaddr *)&a, sizeof a)));
	a.sin6_port = htons(17);
	printf("s6 sendto port 17: %s\n", err(sendto(s, m, n, 0, (struct sockaddr *)&a, sizeof a)));
	a.sin6_port = 0;
	struct sockaddr_in6 b6 = a;
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &b6.sin6_addr);
	printf("s6 bind v4-mapped: %s\n", err(bind(s, (struct sockaddr *)&b6, sizeof b6)));
	struct sockaddr_in a4 = sin4("127.0.0.1", 0);
	printf("s6 connect AF_INET: %s\n", err(connect(s, (struct sockaddr *)&a4, sizeof a4)));
	printf("s6 connect AF_INET6 short: %s\n", err(connect(s, (struct sockaddr *)&a, 20)));
	printf("s6 bind ::1: %s\n", err(bind(s, (struct sockaddr *)&a, sizeof a)));
	name("s6", s, 0);

	// IPV6_CHECKSUM on an experimental protocol: the sender's kernel
	// writes it at offset 2; a receiver that checks drops a wrong one.
	int e1 = socket(AF_INET6, SOCK_RAW, PROTO_EXP);
	int e2 = socket(AF_INET6, SOCK_RAW, PROTO_EXP);
	v = 3;
	printf("e1 IPV6_CHECKSUM 3: %s\n", err(setsockopt(e1, IPPROTO_IPV6, IPV6_CHECKSUM, &v, sizeof v)));
	v = 2;
	printf("e1 IPV6_CHECKSUM 2: %s\n", err(setsockopt(e1, IPPROTO_IPV6, IPV6_CHECKSUM, &v, sizeof v)));
	vl = sizeof v;
	getsockopt(e1, IPPROTO_IPV6, IPV6_CHECKSUM, &v, &vl);
	printf("e1 IPV6_CHECKSUM get %d\n", v);
	unsigned char d[12] = {'c', 'k', 0, 0, 's', 'u', 'm', 'm', 'e', 'd', '!', '!'};
	printf("e1 sendto: %zd\n", sendto(e1, d, sizeof d, 0, (struct sockaddr *)&a, sizeof a));
	printf("e1 sendto 2 bytes: %s\n", err(sendto(e1, d, 2, 0, (struct sockaddr *)&a, sizeof a)));
	drain6("e2", e2);
	v = 2;
	setsockopt(e2, IPPROTO_IPV6, IPV6_CHECKSUM, &v, sizeof v);
	v = -1;
	setsockopt(e1, IPPROTO_IPV6, IPV6_CHECKSUM, &v, sizeof v);
	printf("e1 sendto unchecked: %zd\n", sendto(e1, d, sizeof d, 0, (struct sockaddr *)&a, sizeof a));
	unsigned char b[64];
	printf("e2 recv wrong sum: %s\n", err(recv(e2, b, sizeof b, MSG_DONTWAIT)));
	printf("e2 recv again: %s\n", err(recv(e2, b, sizeof b, MSG_DONTWAIT)));
	int on = 1;
	setsockopt(e1, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof on);
	setsockopt(e1, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on);
	setsockopt(e1, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof on);
	printf("e1 IPV6_2292HOPLIMIT: %s\n", err(setsockopt(e1, IPPROTO_IPV6, IPV6_2292HOPLIMIT, &on, sizeof on)));
	cmsgs("e1", e1);
	drain6("e1", e1);
	// Connected and IPV6_HDRINCL: a crafted header (hop limit 5, traffic
	// class 0x30, payload length 4 of the 6 bytes after it).
	int c6 = socket(AF_INET6, SOCK_RAW, PROTO_EXP);
	printf("c6 connect ::1: %s\n", err(connect(c6, (struct sockaddr *)&a, sizeof a)));
	name("c6", c6, 0);
	name("c6", c6, 1);
	int h6 = socket(AF_INET6, SOCK_RAW, IPPROTO_RAW);
	vl = sizeof v;
	getsockopt(h6, IPPROTO_IPV6, IPV6_HDRINCL, &v, &vl);
	printf("h6 IPV6_HDRINCL %d\n", v);
	unsigned char p6[46] = {0x63, 0x00, 0, 0, 0, 4, PROTO_EXP, 5};
	p6[23] = 1; // src ::1
	p6[39] = 1; // dst ::1
	memcpy(p6 + 40, "hdr6!!", 6);
	setsockopt(c6, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof on);
	setsockopt(c6, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof on);
	printf("h6 sendto: %s\n", err(sendto(h6, p6, sizeof p6, 0, (struct sockaddr *)&a, sizeof a)));
	printf("h6 sendto 39 bytes: %s\n", err(sendto(h6, p6, 39, 0, (struct sockaddr *)&a, sizeof a)));
	cmsgs("c6", c6);
	drain6("c6", c6);
	close(c6);
	close(h6);
	v = 7;
	setsockopt(e1, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &v, sizeof v);
	v = 0x28;
	setsockopt(e1, IPPROTO_IPV6, IPV6_TCLASS, &v, sizeof v);
	sendto(e1, d, sizeof d, 0, (struct sockaddr *)&a, sizeof a);
	cmsgs("e1", e1);
	close(e1);
	close(e2);
	close(s);
}

// rcvbuf: how many packets of each size a raw socket with a given
// SO_RCVBUF holds (Linux charges each its skb's truesize).
static void rcvbuf(void)
{
	static char b[70000];
	int sizes[] = {1, 200, 210, 500, 3000, 16000, 60000};
	for (int fam = 0; fam < 2; fam++) {
		for (int k = 0; k < 7; k++) {
			int r = socket(fam ? AF_INET6 : AF_INET, SOCK_RAW, PROTO_EXP);
			int v = 50000;
			setsockopt(r, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
			struct sockaddr_in a4 = sin4("127.0.0.1", 0);
			struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
			int n = 0;
			for (int i = 0; i < 200; i++)
				sendto(r, b, sizes[k], 0, fam ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4,
				       fam ? sizeof a6 : sizeof a4);
			while (recv(r, b, sizeof b, MSG_DONTWAIT) > 0)
				n++;
			printf("rcvbuf %s SO_RCVBUF 100000: %d-byte payloads: %d queued\n", fam ? "v6" : "v4", sizes[k], n);
			close(r);
		}
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	v4();
	udp4();
	v6();
	udp6();
	rcvbuf();
	return 0;
}
