// splice_sock: splice from a pipe into a socket whose receiver has less
// room than the pipe holds. What the socket does not take must stay in
// the pipe (Linux's splice_to_socket leaves unsent pipe buffers in place),
// so a non-blocking splice loop that drains the reader on EAGAIN moves
// every byte, in order, and leaves the pipe empty. Go's io.Copy between
// TCP connections does exactly this (net.TestSplice).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define SIZE 65536

static unsigned char buf[SIZE], got[SIZE];

static int run(const char *name, int tx, int rx) {
	int small = 4096;
	setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
	int p[2];
	if (pipe(p) != 0) {
		perror("pipe");
		return 1;
	}
	for (int i = 0; i < SIZE; i++)
		buf[i] = (unsigned char)(i * 7 + i / 251);
	if (write(p[1], buf, SIZE) != SIZE) {
		perror("write");
		return 1;
	}
	fcntl(tx, F_SETFL, O_NONBLOCK);
	long moved = 0, have = 0, spins = 0;
	while (moved < SIZE) {
		ssize_t n = splice(p[0], NULL, tx, NULL, SIZE, SPLICE_F_NONBLOCK);
		if (n > 0) {
			moved += n;
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			// The socket is full: wait for the receiver's data, drain
			// it, try again (a second without data is a stall).
			struct pollfd pf = {.fd = rx, .events = POLLIN};
			if (poll(&pf, 1, 1000) != 1 || ++spins > 100000) {
				printf("%s: stuck after %ld bytes\n", name, moved);
				return 1;
			}
			ssize_t r;
			while ((r = recv(rx, got + have, SIZE - have, MSG_DONTWAIT)) > 0)
				have += r;
			continue;
		}
		printf("%s: splice: %s after %ld bytes\n", name, strerror(errno), moved);
		return 1;
	}
	while (have < SIZE) {
		ssize_t r = recv(rx, got + have, SIZE - have, 0);
		if (r <= 0)
			break;
		have += r;
	}
	int left = -1;
	ioctl(p[0], FIONREAD, &left);
	printf("%s: moved %ld, received %ld, in order %s, left in the pipe %d\n", name, moved, have,
	       memcmp(buf, got, SIZE) == 0 ? "yes" : "no", left);
	close(p[0]);
	close(p[1]);
	return 0;
}

int main(void) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("socketpair");
		return 1;
	}
	int rc = run("unix", sv[0], sv[1]);

	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) != 0) {
		perror("listen");
		return 1;
	}
	int c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, sizeof a) != 0) {
		perror("connect");
		return 1;
	}
	int s = accept(l, NULL, NULL);
	rc |= run("tcp", c, s);
	return rc;
}
