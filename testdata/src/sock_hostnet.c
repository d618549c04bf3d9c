// --net=host: the guest's AF_INET sockets are host sockets. Not in
// MANIFEST (it needs a host peer): cmd/uvm's TestNetHost runs it.
//   sock_hostnet client PORT   connect (non-blocking, poll, SO_ERROR) to
//                              127.0.0.1:PORT, send a line, print the reply
//   sock_hostnet refused PORT  a blocking connect to a closed port
//   sock_hostnet server        listen on 127.0.0.1:0 (prints the port),
//                              wait in epoll, accept4, echo one line
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in loopback(int port) {
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int readline(int fd, char *buf, int n) {
	int got = 0;
	while (got < n - 1) {
		int r = read(fd, buf + got, 1);
		if (r <= 0)
			break;
		if (buf[got++] == '\n')
			break;
	}
	buf[got] = 0;
	return got;
}

static int client(int port) {
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = loopback(port);
	int r = connect(s, (struct sockaddr *)&a, sizeof a);
	printf("connect: %s\n", r == 0 ? "0" : strerror(errno));
	struct pollfd p = {.fd = s, .events = POLLOUT};
	int n = poll(&p, 1, 10000);
	printf("poll: %d revents=%#x\n", n, p.revents & POLLOUT);
	int err = -1;
	socklen_t l = sizeof err;
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &l);
	printf("SO_ERROR: %d\n", err);
	int one = 1, v = 0;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	l = sizeof v;
	getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &l);
	printf("TCP_NODELAY: %d\n", v);
	struct sockaddr_in peer;
	l = sizeof peer;
	getpeername(s, (struct sockaddr *)&peer, &l);
	printf("peer: %s port ok=%d\n", inet_ntoa(peer.sin_addr), ntohs(peer.sin_port) == port);
	fcntl(s, F_SETFL, 0);
	const char *msg = "hello from guest\n";
	printf("send: %zd\n", send(s, msg, strlen(msg), 0));
	char buf[256];
	readline(s, buf, sizeof buf);
	printf("reply: %s", buf);
	printf("eof: %zd\n", read(s, buf, sizeof buf));
	close(s);
	return 0;
}

static int refused(int port) {
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = loopback(port);
	int r = connect(s, (struct sockaddr *)&a, sizeof a);
	printf("connect: %s\n", r == 0 ? "0" : strerror(errno));
	return 0;
}

static int server(void) {
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = loopback(0);
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 8) < 0) {
		printf("bind/listen: %s\n", strerror(errno));
		return 1;
	}
	socklen_t al = sizeof a;
	getsockname(l, (struct sockaddr *)&a, &al);
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN}, out;
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	printf("epoll: %d\n", epoll_wait(ep, &out, 1, 20000));
	struct sockaddr_in from;
	al = sizeof from;
	int c = accept4(l, (struct sockaddr *)&from, &al, SOCK_CLOEXEC);
	printf("accepted from %s\n", c < 0 ? strerror(errno) : inet_ntoa(from.sin_addr));
	char buf[256], reply[300];
	readline(c, buf, sizeof buf);
	snprintf(reply, sizeof reply, "echo: %s", buf);
	printf("write: %zd\n", write(c, reply, strlen(reply)));
	shutdown(c, SHUT_WR);
	printf("eof: %zd\n", read(c, buf, sizeof buf));
	close(c);
	close(l);
	return 0;
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "client"))
		return client(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "refused"))
		return refused(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "server"))
		return server();
	fprintf(stderr, "usage: sock_hostnet client PORT | refused PORT | server\n");
	return 2;
}
