// epoll over sockets and pipes: level- and edge-triggered readiness,
// EPOLLONESHOT, EPOLLRDHUP/EPOLLHUP, a listening socket, EPERM for a
// regular file, and ready lists in descriptor order.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(x) do { if (!(x)) { printf("FAIL %s:%d %s errno=%d\n", __FILE__, __LINE__, #x, errno); exit(1); } } while (0)

static int ep;

static void show(const char *what, int timeout) {
	struct epoll_event ev[8];
	int n = epoll_wait(ep, ev, 8, timeout);
	printf("%s: %d", what, n);
	for (int i = 0; i < n; i++) {
		unsigned e = ev[i].events;
		printf(" [%lu%s%s%s%s%s]", (unsigned long)ev[i].data.u64, e & EPOLLIN ? " IN" : "", e & EPOLLOUT ? " OUT" : "",
		       e & EPOLLRDHUP ? " RDHUP" : "", e & EPOLLHUP ? " HUP" : "", e & EPOLLERR ? " ERR" : "");
	}
	printf("\n");
}

static void add(int fd, unsigned events, unsigned long tag) {
	struct epoll_event ev = {.events = events, .data.u64 = tag};
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0);
	int sv[2], p[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(pipe(p) == 0);
	// Level-triggered: reported while readable.
	add(sv[1], EPOLLIN | EPOLLRDHUP, 1);
	add(p[0], EPOLLIN, 2);
	show("nothing ready", 0);
	// (Linux lists items in the order they became ready, uvm in
	// descriptor order: the test makes them agree.)
	CHECK(write(sv[0], "abc", 3) == 3);
	CHECK(write(p[1], "x", 1) == 1);
	show("level: both", 0);
	show("level: again", 0);
	char buf[16];
	CHECK(read(p[0], buf, 1) == 1);
	CHECK(read(sv[1], buf, 3) == 3);
	show("level: drained", 0);
	// Edge-triggered.
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP, .data.u64 = 11};
	CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, sv[1], &ev) == 0);
	ev.data.u64 = 12;
	CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev) == 0);
	CHECK(write(sv[0], "12345", 5) == 5);
	CHECK(write(p[1], "yy", 2) == 2);
	show("edge: new data", 0);
	show("edge: no new event", 0);
	CHECK(read(sv[1], buf, 2) == 2);
	show("edge: after partial socket read", 0);
	CHECK(write(sv[0], "6", 1) == 1);
	show("edge: more socket data", 0);
	CHECK(read(sv[1], buf, sizeof buf) == 4);
	CHECK(read(p[0], buf, sizeof buf) == 2);
	// One-shot.
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 21;
	CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev) == 0);
	CHECK(write(p[1], "z", 1) == 1);
	show("oneshot: first", 0);
	show("oneshot: disarmed", 0);
	ev.data.u64 = 22;
	CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev) == 0);
	show("oneshot: rearmed", 0);
	CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL) == 0);
	int r = epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL);
	printf("del twice: %d %s\n", r, strerror(errno));
	// Writability of the other end, then the peer's close.
	add(sv[0], EPOLLOUT, 3);
	show("writable end", 0);
	CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, sv[0], NULL) == 0);
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.u64 = 1;
	CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, sv[1], &ev) == 0);
	CHECK(shutdown(sv[0], SHUT_WR) == 0);
	show("peer SHUT_WR", 0);
	close(sv[0]);
	show("peer closed", 0);
	// The write end of a pipe whose reader is gone.
	close(p[0]);
	// A listener and a child that connects after a while: the wait blocks.
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0);
	CHECK(listen(l, 4) == 0);
	socklen_t al = sizeof a;
	CHECK(getsockname(l, (struct sockaddr *)&a, &al) == 0);
	CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, sv[1], NULL) == 0);
	add(l, EPOLLIN, 4);
	pid_t pid = fork();
	if (pid == 0) {
		usleep(20000);
		int c = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(connect(c, (struct sockaddr *)&a, sizeof a) == 0);
		CHECK(write(c, "from child", 10) == 10);
		close(c);
		_exit(0);
	}
	show("listener (blocking wait)", 5000);
	int s = accept4(l, NULL, NULL, SOCK_NONBLOCK);
	CHECK(s >= 0);
	add(s, EPOLLIN | EPOLLRDHUP | EPOLLET, 5);
	waitpid(pid, NULL, 0);
	show("accepted socket", 1000);
	ssize_t n = read(s, buf, sizeof buf);
	printf("read '%.*s'\n", (int)n, buf);
	printf("then %zd\n", read(s, buf, sizeof buf));
	close(s);
	close(l);
	// Regular files cannot be watched.
	int f = open(argc > 1 ? argv[0] : "/proc/self/exe", O_RDONLY);
	ev.events = EPOLLIN;
	r = epoll_ctl(ep, EPOLL_CTL_ADD, f, &ev);
	printf("regular file: %d %s\n", r, strerror(errno));
	close(f);
	// An eventfd-free timeout.
	show("empty with timeout", 10);
	printf("done\n");
	return 0;
}
