// --net=host: control messages on host UDP sockets over 127.0.0.1 and
// ::1. Not in MANIFEST (the in-kernel stack has no IP-level control
// messages): cmd/uvm's TestNetHost runs it and compares it with a native
// run. IP_PKTINFO/IP_RECVTOS/IP_RECVTTL/SO_TIMESTAMP(NS) received,
// IP_TOS/IP_TTL/IP_PKTINFO sent, MSG_CTRUNC for short buffers, the IPv6
// forms, and the refusals: SCM_RIGHTS on INET, a bad cmsg_len, a wild
// control pointer, a huge msg_controllen.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void show(struct msghdr *m, int n) {
	printf("  got %d flags%s%s controllen %s\n", n, m->msg_flags & MSG_CTRUNC ? " CTRUNC" : "",
	       m->msg_flags & MSG_TRUNC ? " TRUNC" : "", m->msg_controllen ? "nonzero" : "0");
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		unsigned char *d = CMSG_DATA(c);
		printf("  cmsg level %d type %d len %zu", c->cmsg_level, c->cmsg_type, (size_t)c->cmsg_len);
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, d, sizeof pi);
			char a[32], b[32];
			inet_ntop(AF_INET, &pi.ipi_spec_dst, a, sizeof a);
			inet_ntop(AF_INET, &pi.ipi_addr, b, sizeof b);
			printf(" pktinfo ifindex>0=%d spec_dst %s addr %s", pi.ipi_ifindex > 0, a, b);
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
			printf(" tos %#x", d[0]);
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) {
			int v;
			memcpy(&v, d, sizeof v);
			printf(" ttl %d", v);
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMP) {
			struct timeval tv;
			memcpy(&tv, d, sizeof tv);
			long dt = (long)(now.tv_sec - tv.tv_sec);
			printf(" timestamp within 60 s: %d", dt >= 0 && dt < 60 && tv.tv_usec >= 0 && tv.tv_usec < 1000000);
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			memcpy(&ts, d, sizeof ts);
			long dt = (long)(now.tv_sec - ts.tv_sec);
			printf(" timestampns within 60 s: %d", dt >= 0 && dt < 60 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			memcpy(&pi, d, sizeof pi);
			char a[64];
			inet_ntop(AF_INET6, &pi.ipi6_addr, a, sizeof a);
			printf(" pktinfo6 ifindex>0=%d addr %s", pi.ipi6_ifindex > 0, a);
		} else if (c->cmsg_level == IPPROTO_IPV6 && (c->cmsg_type == IPV6_HOPLIMIT || c->cmsg_type == IPV6_TCLASS)) {
			int v;
			memcpy(&v, d, sizeof v);
			printf(" %s %d", c->cmsg_type == IPV6_HOPLIMIT ? "hoplimit" : "tclass", v);
		}
		printf("\n");
	}
}

static union {
	char buf[512];
	struct cmsghdr align;
} ctl;

static int recv1(int s, size_t space, int flags) {
	char data[64];
	struct iovec iov = {data, sizeof data};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = space ? ctl.buf : NULL, .msg_controllen = space};
	memset(ctl.buf, 0, sizeof ctl.buf);
	int n = recvmsg(s, &m, flags);
	if (n < 0) {
		printf("  recvmsg: %s\n", strerror(errno));
		return n;
	}
	show(&m, n);
	return n;
}

static void put(struct msghdr *m, int level, int type, const void *v, size_t l) {
	struct cmsghdr *c = (struct cmsghdr *)((char *)m->msg_control + m->msg_controllen);
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(l);
	memcpy(CMSG_DATA(c), v, l);
	m->msg_controllen += CMSG_SPACE(l);
}

static void send1(int s, struct sockaddr *to, socklen_t tl, const char *what, struct msghdr *tmpl) {
	struct iovec iov = {(void *)what, strlen(what)};
	struct msghdr m = *tmpl;
	m.msg_name = to;
	m.msg_namelen = tl;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	int n = sendmsg(s, &m, 0);
	printf("sendmsg %s: %d %s\n", what, n, n < 0 ? strerror(errno) : "");
}

// No receive waits past 10 s (a datagram that was never sent).
static void timeo(int s) {
	struct timeval tv = {10, 0};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

int main(void) {
	int one = 1;
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	timeo(s);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(s, (struct sockaddr *)&a, sizeof a);
	socklen_t l = sizeof a;
	getsockname(s, (struct sockaddr *)&a, &l);
	printf("IP_PKTINFO %d IP_RECVTOS %d IP_RECVTTL %d SO_TIMESTAMP %d\n",
	       setsockopt(s, IPPROTO_IP, IP_PKTINFO, &one, sizeof one), setsockopt(s, IPPROTO_IP, IP_RECVTOS, &one, sizeof one),
	       setsockopt(s, IPPROTO_IP, IP_RECVTTL, &one, sizeof one), setsockopt(s, SOL_SOCKET, SO_TIMESTAMP, &one, sizeof one));
	int v = 0;
	l = sizeof v;
	getsockopt(s, IPPROTO_IP, IP_PKTINFO, &v, &l);
	printf("getsockopt IP_PKTINFO %d\n", v);

	char cbuf[256] __attribute__((aligned(8)));
	struct msghdr m = {.msg_control = cbuf};
	int tos = 0x10, ttl = 7;
	put(&m, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
	put(&m, IPPROTO_IP, IP_TTL, &ttl, sizeof ttl);
	struct in_pktinfo pi = {0};
	pi.ipi_spec_dst.s_addr = htonl(INADDR_LOOPBACK);
	put(&m, IPPROTO_IP, IP_PKTINFO, &pi, sizeof pi);
	send1(s, (struct sockaddr *)&a, sizeof a, "tos+ttl+pktinfo", &m);
	printf("recv, room for all:\n");
	recv1(s, sizeof ctl.buf, 0);

	struct msghdr none = {0};
	send1(s, (struct sockaddr *)&a, sizeof a, "plain", &none);
	printf("recv, no room:\n");
	recv1(s, 0, 0);
	send1(s, (struct sockaddr *)&a, sizeof a, "plain2", &none);
	printf("recv, room for one:\n");
	recv1(s, CMSG_SPACE(sizeof(struct timeval)), 0);

	setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
	send1(s, (struct sockaddr *)&a, sizeof a, "ns", &none);
	printf("recv, SO_TIMESTAMPNS:\n");
	recv1(s, sizeof ctl.buf, 0);

	struct msghdr r = {.msg_control = cbuf};
	int fd = 0;
	put(&r, SOL_SOCKET, SCM_RIGHTS, &fd, sizeof fd);
	send1(s, (struct sockaddr *)&a, sizeof a, "SCM_RIGHTS", &r);
	struct msghdr bad = {.msg_control = cbuf};
	put(&bad, IPPROTO_IP, IP_TTL, &ttl, sizeof ttl);
	((struct cmsghdr *)cbuf)->cmsg_len = 8;
	send1(s, (struct sockaddr *)&a, sizeof a, "cmsg_len 8", &bad);
	((struct cmsghdr *)cbuf)->cmsg_len = 200;
	send1(s, (struct sockaddr *)&a, sizeof a, "cmsg_len past the buffer", &bad);
	struct msghdr tiny = {.msg_control = cbuf, .msg_controllen = 8};
	send1(s, (struct sockaddr *)&a, sizeof a, "controllen 8", &tiny);
	struct msghdr wild = {.msg_control = (void *)16, .msg_controllen = 32};
	send1(s, (struct sockaddr *)&a, sizeof a, "wild control", &wild);
	struct msghdr huge = {.msg_control = cbuf, .msg_controllen = 1 << 30};
	send1(s, (struct sockaddr *)&a, sizeof a, "controllen 1 GiB", &huge);
	printf("drain:\n");
	while (recv1(s, sizeof ctl.buf, MSG_DONTWAIT) >= 0)
		;
	close(s);

	int s6 = socket(AF_INET6, SOCK_DGRAM, 0);
	timeo(s6);
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	if (bind(s6, (struct sockaddr *)&a6, sizeof a6) < 0) {
		printf("no ::1: %s\n", strerror(errno));
		return 0;
	}
	l = sizeof a6;
	getsockname(s6, (struct sockaddr *)&a6, &l);
	printf("IPV6_RECVPKTINFO %d IPV6_RECVHOPLIMIT %d IPV6_RECVTCLASS %d\n",
	       setsockopt(s6, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one),
	       setsockopt(s6, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof one),
	       setsockopt(s6, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof one));
	struct msghdr m6 = {.msg_control = cbuf};
	int hop = 9, tc = 0x20;
	put(&m6, IPPROTO_IPV6, IPV6_HOPLIMIT, &hop, sizeof hop);
	put(&m6, IPPROTO_IPV6, IPV6_TCLASS, &tc, sizeof tc);
	send1(s6, (struct sockaddr *)&a6, sizeof a6, "v6 hoplimit+tclass", &m6);
	printf("recv v6:\n");
	recv1(s6, sizeof ctl.buf, 0);
	close(s6);
	return 0;
}
