// AF_UNIX sockets: stream echo between processes over a path name, the
// abstract namespace, socketpair with SCM_RIGHTS/SCM_CREDENTIALS and
// SO_PEERCRED, datagrams, SEQPACKET records, MSG_PEEK/DONTWAIT/WAITALL,
// FIONREAD, shutdown and EPIPE/SIGPIPE.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t sigpipes;
static void onpipe(int s) { (void)s; sigpipes++; }

// res formats a syscall result: the value, or -1 and the errno's text.
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

static socklen_t mkaddr(struct sockaddr_un *a, const char *path, int abstract) {
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (abstract) {
		memcpy(a->sun_path + 1, path, strlen(path));
		return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path);
	}
	strcpy(a->sun_path, path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static void stream_echo(const char *dir) {
	char path[200];
	snprintf(path, sizeof path, "%s/echo.sock", dir);
	struct sockaddr_un a;
	socklen_t al = mkaddr(&a, path, 0);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(l >= 0);
	CHECK(bind(l, (struct sockaddr *)&a, al) == 0);
	struct stat st;
	CHECK(stat(path, &st) == 0);
	printf("stat socket: %d\n", S_ISSOCK(st.st_mode));
	int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("bind again: %s\n", res(bind(l2, (struct sockaddr *)&a, al)));
	close(l2);
	int c0 = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("connect before listen: %s\n", res(connect(c0, (struct sockaddr *)&a, al)));
	close(c0);
	CHECK(listen(l, 4) == 0);
	int one = -1;
	socklen_t ol = sizeof one;
	CHECK(getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &one, &ol) == 0);
	printf("acceptconn %d\n", one);
	pid_t pid = fork();
	if (pid == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK(connect(c, (struct sockaddr *)&a, al) == 0);
		const char *msgs[] = {"hello", "unix", "world"};
		for (int i = 0; i < 3; i++) {
			char buf[64];
			CHECK(write(c, msgs[i], strlen(msgs[i])) == (ssize_t)strlen(msgs[i]));
			ssize_t n = read(c, buf, sizeof buf);
			CHECK(n == (ssize_t)strlen(msgs[i]));
			if (buf[0] != msgs[i][0] - 32)
				_exit(3);
		}
		shutdown(c, SHUT_WR);
		char b;
		_exit(read(c, &b, 1) == 0 ? 0 : 4);
	}
	struct sockaddr_un peer;
	socklen_t pl = sizeof peer;
	int s = accept(l, (struct sockaddr *)&peer, &pl);
	CHECK(s >= 0);
	printf("accepted peer len %d family %d\n", (int)pl, peer.sun_family);
	struct sockaddr_un me;
	socklen_t ml = sizeof me;
	CHECK(getsockname(s, (struct sockaddr *)&me, &ml) == 0);
	printf("accepted sockname matches: %d\n", ml == al && strcmp(me.sun_path, path) == 0);
	struct ucred cr;
	socklen_t cl = sizeof cr;
	CHECK(getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0);
	printf("peercred pid is child: %d uid ok: %d\n", cr.pid == pid, cr.uid == getuid());
	char buf[64];
	ssize_t n;
	int total = 0;
	while ((n = read(s, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			buf[i] = buf[i] >= 'a' && buf[i] <= 'z' ? buf[i] - 32 : buf[i];
		CHECK(write(s, buf, n) == n);
		total += n;
	}
	printf("echoed %d bytes, eof %zd\n", total, n);
	close(s);
	int status;
	waitpid(pid, &status, 0);
	printf("child exit %d\n", WEXITSTATUS(status));
	close(l);
	int c1 = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("connect after close: %s\n", res(connect(c1, (struct sockaddr *)&a, al)));
	CHECK(unlink(path) == 0);
	printf("connect after unlink: %s\n", res(connect(c1, (struct sockaddr *)&a, al)));
	close(c1);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("rebind after unlink: %d\n", bind(l, (struct sockaddr *)&a, al));
	close(l);
	unlink(path);
}

static void abstract_ns(void) {
	struct sockaddr_un a;
	socklen_t al = mkaddr(&a, "uvm-test-abstract", 1);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(bind(l, (struct sockaddr *)&a, al) == 0);
	int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("abstract bind again: %s\n", res(bind(l2, (struct sockaddr *)&a, al)));
	close(l2);
	CHECK(listen(l, 1) == 0);
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(connect(c, (struct sockaddr *)&a, al) == 0);
	int s = accept4(l, NULL, NULL, SOCK_NONBLOCK);
	CHECK(s >= 0);
	printf("accept4 nonblock: %d\n", (fcntl(s, F_GETFL) & O_NONBLOCK) != 0);
	char buf[8];
	printf("empty nonblocking read: %s\n", res(read(s, buf, sizeof buf)));
	struct sockaddr_un pn;
	socklen_t pl = sizeof pn;
	CHECK(getpeername(c, (struct sockaddr *)&pn, &pl) == 0);
	printf("abstract peername len ok %d first NUL %d name %.*s\n", pl == al, pn.sun_path[0] == 0,
	       (int)(pl - offsetof(struct sockaddr_un, sun_path) - 1), pn.sun_path + 1);
	close(c);
	close(s);
	close(l);
	struct sockaddr_un z;
	memset(&z, 0, sizeof z);
	z.sun_family = AF_UNIX;
	int ab = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK(bind(ab, (struct sockaddr *)&z, sizeof(sa_family_t)) == 0);
	pl = sizeof pn;
	CHECK(getsockname(ab, (struct sockaddr *)&pn, &pl) == 0);
	printf("autobind len %d abstract %d\n", (int)pl, pn.sun_path[0] == 0);
	close(ab);
}

static void pair_rights(void) {
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	struct sockaddr_un a;
	socklen_t al = sizeof a;
	CHECK(getsockname(sv[0], (struct sockaddr *)&a, &al) == 0);
	printf("socketpair sockname len %d\n", (int)al);
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		char c;
		struct iovec iov = {&c, 1};
		union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
		struct msghdr m = {0};
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = u.buf;
		m.msg_controllen = sizeof u.buf;
		CHECK(recvmsg(sv[1], &m, 0) == 1);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		CHECK(cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS);
		int fd;
		memcpy(&fd, CMSG_DATA(cm), sizeof fd);
		const char *msg = "through a passed pipe\n";
		CHECK(write(fd, msg, strlen(msg)) == (ssize_t)strlen(msg));
		_exit(0);
	}
	close(sv[1]);
	char c = 'x';
	struct iovec iov = {&c, 1};
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
	memset(&u, 0, sizeof u);
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof u.buf;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	CHECK(sendmsg(sv[0], &m, 0) == 1);
	close(p[1]);
	int status;
	waitpid(pid, &status, 0);
	char buf[64];
	ssize_t n = read(p[0], buf, sizeof buf);
	printf("read from pipe: %.*s", (int)n, buf);
	printf("then eof: %zd\n", read(p[0], buf, sizeof buf));
	close(p[0]);
	close(sv[0]);

	// SCM_CREDENTIALS with SO_PASSCRED.
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
	int on = 1;
	CHECK(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == 0);
	struct ucred cr = {getpid(), getuid(), getgid()};
	union { char buf[CMSG_SPACE(sizeof cr)]; struct cmsghdr align; } cu;
	memset(&cu, 0, sizeof cu);
	m.msg_control = cu.buf;
	m.msg_controllen = sizeof cu.buf;
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof cr);
	memcpy(CMSG_DATA(cm), &cr, sizeof cr);
	c = 'c';
	CHECK(sendmsg(sv[0], &m, 0) == 1);
	memset(&cu, 0, sizeof cu);
	m.msg_controllen = sizeof cu.buf;
	CHECK(recvmsg(sv[1], &m, 0) == 1);
	cm = CMSG_FIRSTHDR(&m);
	struct ucred got = {0};
	if (cm && cm->cmsg_type == SCM_CREDENTIALS)
		memcpy(&got, CMSG_DATA(cm), sizeof got);
	printf("scm_credentials: type %d pid ok %d uid ok %d\n", cm ? cm->cmsg_type : -1, got.pid == getpid(), got.uid == getuid());
	// Automatic credentials: no control message sent.
	CHECK(send(sv[0], "d", 1, 0) == 1);
	memset(&cu, 0, sizeof cu);
	m.msg_controllen = sizeof cu.buf;
	CHECK(recvmsg(sv[1], &m, 0) == 1);
	cm = CMSG_FIRSTHDR(&m);
	printf("auto credentials: %d\n", cm != NULL && cm->cmsg_type == SCM_CREDENTIALS);
	socklen_t cl = sizeof got;
	CHECK(getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &got, &cl) == 0);
	printf("socketpair peercred self %d\n", got.pid == getpid());
	close(sv[0]);
	close(sv[1]);
}

static void dgram(const char *dir) {
	char p1[200], p2[200];
	snprintf(p1, sizeof p1, "%s/d1", dir);
	snprintf(p2, sizeof p2, "%s/d2", dir);
	struct sockaddr_un a1, a2, from;
	socklen_t l1 = mkaddr(&a1, p1, 0), l2 = mkaddr(&a2, p2, 0);
	int s1 = socket(AF_UNIX, SOCK_DGRAM, 0), s2 = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK(bind(s1, (struct sockaddr *)&a1, l1) == 0);
	CHECK(bind(s2, (struct sockaddr *)&a2, l2) == 0);
	CHECK(sendto(s1, "first", 5, 0, (struct sockaddr *)&a2, l2) == 5);
	CHECK(sendto(s1, "second!", 7, 0, (struct sockaddr *)&a2, l2) == 7);
	int avail = -1;
	CHECK(ioctl(s2, FIONREAD, &avail) == 0);
	printf("dgram FIONREAD %d\n", avail);
	char buf[64];
	socklen_t fl = sizeof from;
	ssize_t n = recvfrom(s2, buf, 3, 0, (struct sockaddr *)&from, &fl);
	printf("truncated recv %zd '%.*s' from %s\n", n, (int)n, buf, strrchr(from.sun_path, '/'));
	n = recv(s2, buf, 2, MSG_TRUNC);
	printf("MSG_TRUNC recv %zd\n", n);
	n = recv(s2, buf, sizeof buf, MSG_DONTWAIT);
	printf("empty dgram: %s\n", res(n));
	CHECK(connect(s1, (struct sockaddr *)&a2, l2) == 0);
	CHECK(send(s1, "conn", 4, 0) == 4);
	n = recv(s2, buf, sizeof buf, 0);
	printf("connected dgram '%.*s'\n", (int)n, buf);
	close(s2);
	printf("send to closed: %s\n", res(send(s1, "x", 1, 0)));
	close(s1);
	unlink(p1);
	unlink(p2);
}

static void seqpacket(void) {
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	CHECK(write(sv[0], "abc", 3) == 3);
	CHECK(write(sv[0], "defgh", 5) == 5);
	char buf[16];
	struct iovec iov = {buf, 2};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	ssize_t n = recvmsg(sv[1], &m, 0);
	printf("seqpacket truncated %zd flags trunc %d\n", n, (m.msg_flags & MSG_TRUNC) != 0);
	n = read(sv[1], buf, sizeof buf);
	printf("seqpacket next record '%.*s'\n", (int)n, buf);
	close(sv[0]);
	printf("seqpacket eof %zd\n", read(sv[1], buf, sizeof buf));
	close(sv[1]);
}

static void flags_and_shutdown(void) {
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[0], "peekaboo", 8) == 8);
	char buf[32];
	ssize_t n = recv(sv[1], buf, 4, MSG_PEEK);
	printf("peek '%.*s'\n", (int)n, buf);
	int avail;
	CHECK(ioctl(sv[1], FIONREAD, &avail) == 0);
	printf("FIONREAD after peek %d\n", avail);
	n = recv(sv[1], buf, sizeof buf, 0);
	printf("read '%.*s'\n", (int)n, buf);
	printf("dontwait: %s\n", res(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT)));
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 4; i++) {
			CHECK(write(sv[0], "ab", 2) == 2);
			usleep(1000);
		}
		_exit(0);
	}
	n = recv(sv[1], buf, 8, MSG_WAITALL);
	printf("waitall got %zd '%.*s'\n", n, (int)n, buf);
	waitpid(pid, NULL, 0);
	// Half-close.
	CHECK(shutdown(sv[0], SHUT_WR) == 0);
	printf("read after peer SHUT_WR: %zd\n", read(sv[1], buf, sizeof buf));
	printf("write after own SHUT_WR: %s", res(send(sv[0], "x", 1, MSG_NOSIGNAL)));
	printf(" sigpipes %d\n", (int)sigpipes);
	CHECK(write(sv[1], "back", 4) == 4);
	n = read(sv[0], buf, sizeof buf);
	printf("other direction still open: '%.*s'\n", (int)n, buf);
	close(sv[1]);
	printf("write to closed peer: %s", res(write(sv[0], "x", 1)));
	printf(" sigpipes %d\n", (int)sigpipes);
	printf("MSG_NOSIGNAL: %s", res(send(sv[0], "x", 1, MSG_NOSIGNAL)));
	printf(" sigpipes %d\n", (int)sigpipes);
	close(sv[0]);
	int u = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("unconnected: send %s", res(send(u, "x", 1, MSG_NOSIGNAL)));
	printf(", getpeername %s\n", res(getpeername(u, (struct sockaddr *)buf, &(socklen_t){sizeof buf})));
	int v = 0;
	socklen_t vl = sizeof v;
	CHECK(getsockopt(u, SOL_SOCKET, SO_TYPE, &v, &vl) == 0);
	printf("SO_TYPE %d SO_DOMAIN ", v);
	CHECK(getsockopt(u, SOL_SOCKET, SO_DOMAIN, &v, &vl) == 0);
	printf("%d\n", v);
	close(u);
	printf("socket(AF_UNIX, SOCK_RAW) is a datagram socket: %s", res(v = socket(AF_UNIX, SOCK_RAW, 0)));
	CHECK(getsockopt(v, SOL_SOCKET, SO_TYPE, &v, &vl) == 0);
	printf(" type %d\n", v);
	printf("not a socket: %s\n", res(shutdown(1, SHUT_RD)));
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, onpipe);
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	stream_echo(dir);
	abstract_ns();
	pair_rights();
	dgram(dir);
	seqpacket();
	flags_and_shutdown();
	printf("done\n");
	return 0;
}
