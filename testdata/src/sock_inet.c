// AF_INET/AF_INET6 loopback: TCP echo between threads over 127.0.0.1
// and ::1, getsockname/getpeername, ECONNREFUSED, non-blocking connect
// with poll, a dual-stack listener, IPV6_V6ONLY, SO_REUSEADDR, options,
// half-close, UDP with sendto/recvfrom, connect, sendmmsg/recvmmsg.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static char rbuf[8][128];
static int ri;
static const char *res(long r) {
	char *b = rbuf[ri++ & 7];
	if (r < 0)
		snprintf(b, 128, "-1 %s", strerror(errno));
	else
		snprintf(b, 128, "%ld", r);
	return b;
}

#define CHECK(x) do { if (!(x)) { printf("FAIL %s:%d %s errno=%d\n", __FILE__, __LINE__, #x, errno); exit(1); } } while (0)

static const char *addrstr(struct sockaddr_storage *ss) {
	static char b[4][80];
	static int i;
	char *o = b[i++ & 3];
	char ip[64];
	if (ss->ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
		snprintf(o, 80, "inet %s", ip);
	} else if (ss->ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
		snprintf(o, 80, "inet6 %s", ip);
	} else
		snprintf(o, 80, "family %d", ss->ss_family);
	return o;
}

static int port(struct sockaddr_storage *ss) {
	return ntohs(ss->ss_family == AF_INET ? ((struct sockaddr_in *)ss)->sin_port : ((struct sockaddr_in6 *)ss)->sin6_port);
}

static socklen_t loopback(int family, int p, struct sockaddr_storage *ss) {
	memset(ss, 0, sizeof *ss);
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(p);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof *a;
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
	a->sin6_family = AF_INET6;
	a->sin6_port = htons(p);
	a->sin6_addr = in6addr_loopback;
	return sizeof *a;
}

struct srv {
	int fd, family, n;
};

static void *echo_server(void *arg) {
	struct srv *s = arg;
	for (int k = 0; k < s->n; k++) {
		struct sockaddr_storage peer;
		socklen_t pl = sizeof peer;
		int c = accept(s->fd, (struct sockaddr *)&peer, &pl);
		CHECK(c >= 0);
		char buf[4096];
		ssize_t n;
		long total = 0;
		while ((n = read(c, buf, sizeof buf)) > 0) {
			CHECK(write(c, buf, n) == n);
			total += n;
		}
		shutdown(c, SHUT_WR);
		close(c);
		(void)total;
	}
	return NULL;
}

static int listener(int family, struct sockaddr_storage *bound) {
	int l = socket(family, SOCK_STREAM, 0);
	CHECK(l >= 0);
	int on = 1;
	CHECK(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0);
	struct sockaddr_storage a;
	socklen_t al = loopback(family, 0, &a);
	CHECK(bind(l, (struct sockaddr *)&a, al) == 0);
	CHECK(listen(l, 8) == 0);
	socklen_t bl = sizeof *bound;
	CHECK(getsockname(l, (struct sockaddr *)bound, &bl) == 0);
	return l;
}

static void tcp_echo(int family) {
	struct sockaddr_storage la;
	int l = listener(family, &la);
	printf("%s listener on %s, ephemeral port %d\n", family == AF_INET ? "tcp4" : "tcp6", addrstr(&la),
	       port(&la) >= 32768 && port(&la) <= 60999);
	struct srv s = {l, family, 2};
	pthread_t th;
	pthread_create(&th, NULL, echo_server, &s);
	for (int k = 0; k < 2; k++) {
		int c = socket(family, SOCK_STREAM, 0);
		CHECK(connect(c, (struct sockaddr *)&la, family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) == 0);
		struct sockaddr_storage me, peer;
		socklen_t ml = sizeof me, pl = sizeof peer;
		CHECK(getsockname(c, (struct sockaddr *)&me, &ml) == 0);
		CHECK(getpeername(c, (struct sockaddr *)&peer, &pl) == 0);
		printf("client %d: local %s len %d, peer %s port match %d\n", k, addrstr(&me), (int)ml, addrstr(&peer), port(&peer) == port(&la));
		int on = 1;
		CHECK(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) == 0);
		CHECK(setsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) == 0);
		int v = 0;
		socklen_t vl = sizeof v;
		CHECK(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &vl) == 0);
		printf("  nodelay %d", v);
		CHECK(getsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &v, &vl) == 0);
		printf(" keepalive %d\n", v);
		// A large transfer: the writer blocks on a full buffer while the
		// echo thread drains it.
		static char big[300000], back[300000];
		for (size_t i = 0; i < sizeof big; i++)
			big[i] = (char)(i * 7 + k);
		size_t sent = 0, got = 0;
		while (sent < sizeof big) {
			ssize_t n = write(c, big + sent, sizeof big - sent > 50000 ? 50000 : sizeof big - sent);
			CHECK(n > 0);
			sent += n;
			while (got < sent) {
				n = read(c, back + got, sizeof back - got);
				CHECK(n > 0);
				got += n;
			}
		}
		CHECK(shutdown(c, SHUT_WR) == 0);
		char x;
		ssize_t eof = read(c, &x, 1);
		printf("  echoed %zu bytes intact %d, eof after half-close %zd\n", got, memcmp(big, back, sizeof big) == 0, eof);
		close(c);
	}
	pthread_join(th, NULL);
	close(l);
}

static void refused(void) {
	struct sockaddr_storage a;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	socklen_t al = loopback(AF_INET, 0, &a);
	CHECK(bind(s, (struct sockaddr *)&a, al) == 0);
	socklen_t bl = sizeof a;
	CHECK(getsockname(s, (struct sockaddr *)&a, &bl) == 0);
	close(s); // bound, never listened: the port refuses
	int c = socket(AF_INET, SOCK_STREAM, 0);
	printf("connect to closed port: %s\n", res(connect(c, (struct sockaddr *)&a, al)));
	close(c);
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	printf("non-blocking connect to closed port: %s", res(connect(c, (struct sockaddr *)&a, al)));
	struct pollfd p = {c, POLLOUT, 0};
	CHECK(poll(&p, 1, 1000) == 1);
	int err = 0;
	socklen_t el = sizeof err;
	CHECK(getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el) == 0);
	printf(", POLLOUT %d POLLERR %d SO_ERROR %s\n", (p.revents & POLLOUT) != 0, (p.revents & POLLERR) != 0, strerror(err));
	close(c);
	c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in far = {.sin_family = AF_INET, .sin_port = htons(80)};
	inet_pton(AF_INET, "192.0.2.1", &far.sin_addr);
	int fl = fcntl(c, F_GETFL);
	fcntl(c, F_SETFL, fl | O_NONBLOCK);
	int r = connect(c, (struct sockaddr *)&far, sizeof far);
	printf("connect off-host fails: %d\n", r < 0);
	close(c);
}

static void nonblocking_connect(void) {
	struct sockaddr_storage la;
	int l = listener(AF_INET, &la);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	int fl = fcntl(c, F_GETFL);
	CHECK(fcntl(c, F_SETFL, fl | O_NONBLOCK) == 0);
	printf("non-blocking connect: %s", res(connect(c, (struct sockaddr *)&la, sizeof(struct sockaddr_in))));
	struct pollfd p = {c, POLLOUT, 0};
	CHECK(poll(&p, 1, 1000) == 1);
	int err = -1;
	socklen_t el = sizeof err;
	CHECK(getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el) == 0);
	printf(", writable %d, SO_ERROR %d\n", (p.revents & POLLOUT) != 0, err);
	struct pollfd lp = {l, POLLIN, 0};
	CHECK(poll(&lp, 1, 1000) == 1);
	int s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	char buf[16];
	printf("read nothing yet: %s\n", res(read(c, buf, sizeof buf)));
	CHECK(write(s, "hi", 2) == 2);
	p.events = POLLIN;
	CHECK(poll(&p, 1, 1000) == 1);
	int avail = -1;
	CHECK(ioctl(c, FIONREAD, &avail) == 0);
	printf("FIONREAD %d, read %s\n", avail, res(read(c, buf, sizeof buf)));
	close(s);
	p.events = POLLIN | POLLRDHUP;
	CHECK(poll(&p, 1, 1000) == 1);
	printf("peer closed: POLLIN %d POLLRDHUP %d, read %s\n", (p.revents & POLLIN) != 0, (p.revents & POLLRDHUP) != 0, res(read(c, buf, sizeof buf)));
	close(c);
	// Backlog: listen(1) queues two connections; a third non-blocking
	// connect stays in progress until accept makes room.
	close(l);
}

static void dual_stack(void) {
	int l = socket(AF_INET6, SOCK_STREAM, 0);
	int v = -1;
	socklen_t vl = sizeof v;
	CHECK(getsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl) == 0);
	printf("v6only default %d\n", v);
	struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_addr = in6addr_any};
	CHECK(bind(l, (struct sockaddr *)&any, sizeof any) == 0);
	CHECK(listen(l, 4) == 0);
	struct sockaddr_storage la;
	socklen_t ll = sizeof la;
	CHECK(getsockname(l, (struct sockaddr *)&la, &ll) == 0);
	printf("[::] listener %s\n", addrstr(&la));
	struct sockaddr_storage to;
	socklen_t tl = loopback(AF_INET, port(&la), &to);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(connect(c, (struct sockaddr *)&to, tl) == 0);
	struct sockaddr_storage peer, me;
	socklen_t pl = sizeof peer, ml = sizeof me;
	int s = accept(l, (struct sockaddr *)&peer, &pl);
	CHECK(s >= 0);
	CHECK(getsockname(s, (struct sockaddr *)&me, &ml) == 0);
	printf("v4 client accepted by [::]: peer %s len %d, local %s\n", addrstr(&peer), (int)pl, addrstr(&me));
	close(s);
	close(c);
	// An IPv4 listener on the same port conflicts with [::] (not V6ONLY).
	int l4 = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port(&la))};
	printf("bind 0.0.0.0 on [::]'s port: %s\n", res(bind(l4, (struct sockaddr *)&a4, sizeof a4)));
	close(l4);
	close(l);
	l = socket(AF_INET6, SOCK_STREAM, 0);
	int on = 1;
	CHECK(setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) == 0);
	CHECK(bind(l, (struct sockaddr *)&any, sizeof any) == 0);
	CHECK(listen(l, 4) == 0);
	ll = sizeof la;
	CHECK(getsockname(l, (struct sockaddr *)&la, &ll) == 0);
	tl = loopback(AF_INET, port(&la), &to);
	c = socket(AF_INET, SOCK_STREAM, 0);
	printf("v4 connect to V6ONLY listener: %s\n", res(connect(c, (struct sockaddr *)&to, tl)));
	close(c);
	tl = loopback(AF_INET6, port(&la), &to);
	c = socket(AF_INET6, SOCK_STREAM, 0);
	printf("v6 connect to V6ONLY listener: %s\n", res(connect(c, (struct sockaddr *)&to, tl)));
	close(c);
	close(l);
}

static void reuse(void) {
	struct sockaddr_storage a;
	socklen_t al = loopback(AF_INET, 0, &a);
	int s1 = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(bind(s1, (struct sockaddr *)&a, al) == 0);
	socklen_t bl = sizeof a;
	CHECK(getsockname(s1, (struct sockaddr *)&a, &bl) == 0);
	int s2 = socket(AF_INET, SOCK_STREAM, 0);
	printf("second bind: %s\n", res(bind(s2, (struct sockaddr *)&a, al)));
	close(s2);
	int on = 1;
	setsockopt(s1, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
	s2 = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s2, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
	printf("second bind, both SO_REUSEADDR: %s\n", res(bind(s2, (struct sockaddr *)&a, al)));
	close(s2);
	close(s1);
	int u1 = socket(AF_INET, SOCK_DGRAM, 0), u2 = socket(AF_INET, SOCK_DGRAM, 0);
	setsockopt(u1, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
	setsockopt(u2, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
	al = loopback(AF_INET, 0, &a);
	CHECK(bind(u1, (struct sockaddr *)&a, al) == 0);
	bl = sizeof a;
	CHECK(getsockname(u1, (struct sockaddr *)&a, &bl) == 0);
	printf("udp SO_REUSEPORT bind: %s\n", res(bind(u2, (struct sockaddr *)&a, al)));
	close(u1);
	close(u2);
	int t = socket(AF_INET, SOCK_STREAM, 0);
	int sz = 65536;
	CHECK(setsockopt(t, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz) == 0);
	int got = 0;
	socklen_t gl = sizeof got;
	CHECK(getsockopt(t, SOL_SOCKET, SO_RCVBUF, &got, &gl) == 0);
	printf("SO_RCVBUF set 65536 reads %d\n", got);
	close(t);
}

static void udp(int family) {
	int a = socket(family, SOCK_DGRAM, 0), b = socket(family, SOCK_DGRAM, 0);
	struct sockaddr_storage aa, ba, from;
	socklen_t al = loopback(family, 0, &aa);
	CHECK(bind(a, (struct sockaddr *)&aa, al) == 0);
	socklen_t bl = sizeof aa;
	CHECK(getsockname(a, (struct sockaddr *)&aa, &bl) == 0);
	CHECK(sendto(b, "ping", 4, 0, (struct sockaddr *)&aa, al) == 4);
	bl = sizeof ba;
	CHECK(getsockname(b, (struct sockaddr *)&ba, &bl) == 0);
	printf("udp%d sender autobound to %s ephemeral %d\n", family == AF_INET ? 4 : 6, addrstr(&ba), port(&ba) >= 32768);
	char buf[64];
	socklen_t fl = sizeof from;
	ssize_t n = recvfrom(a, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
	printf("  got '%.*s' from %s port match %d\n", (int)n, buf, addrstr(&from), port(&from) == port(&ba));
	CHECK(sendto(a, "pong", 4, 0, (struct sockaddr *)&from, fl) == 4);
	n = recv(b, buf, sizeof buf, 0);
	printf("  reply '%.*s'\n", (int)n, buf);
	// sendmmsg/recvmmsg.
	CHECK(connect(b, (struct sockaddr *)&aa, al) == 0);
	struct mmsghdr mm[3];
	struct iovec iov[3];
	char *msgs[] = {"one", "two", "three"};
	memset(mm, 0, sizeof mm);
	for (int i = 0; i < 3; i++) {
		iov[i].iov_base = msgs[i];
		iov[i].iov_len = strlen(msgs[i]);
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	printf("  sendmmsg %s\n", res(sendmmsg(b, mm, 3, 0)));
	char rb[3][16];
	memset(mm, 0, sizeof mm);
	for (int i = 0; i < 3; i++) {
		iov[i].iov_base = rb[i];
		iov[i].iov_len = sizeof rb[i];
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	int r = recvmmsg(a, mm, 3, MSG_DONTWAIT, NULL);
	printf("  recvmmsg %d:", r);
	for (int i = 0; i < r; i++)
		printf(" %.*s", (int)mm[i].msg_len, rb[i]);
	printf("\n");
	close(a);
	// The port is gone: a connected socket learns it from the next call.
	CHECK(send(b, "lost", 4, 0) == 4);
	printf("  after ICMP: %s\n", res(recv(b, buf, sizeof buf, MSG_DONTWAIT)));
	close(b);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);
	tcp_echo(AF_INET);
	tcp_echo(AF_INET6);
	refused();
	nonblocking_connect();
	dual_stack();
	reuse();
	udp(AF_INET);
	udp(AF_INET6);
	printf("done\n");
	return 0;
}
