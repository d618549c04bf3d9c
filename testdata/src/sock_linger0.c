// An abortive close (SO_LINGER on, timeout 0) of a TCP connection on
// loopback: the peer has data queued before the reset, reads it, then
// its next read fails with ECONNRESET and the one after sees EOF; poll
// reports the error. uvm sent a plain EOF (Go's net.TestNotTemporaryRead
// failed: "Read unexpectedly returned io.EOF after socket was abruptly
// closed").
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void rd(const char *what, int fd)
{
	char b[16];
	ssize_t n = read(fd, b, sizeof b);
	if (n < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: %zd \"%.*s\"\n", what, n, (int)n, b);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &al)) {
		perror("listen");
		return 1;
	}
	int c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, sizeof a)) {
		perror("connect");
		return 1;
	}
	int s = accept(l, NULL, NULL);
	if (write(s, "before", 6) != 6)
		return 1;
	struct linger lg = {1, 0};
	printf("SO_LINGER {1,0}: %d\n", setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg));
	close(s);
	struct pollfd p = {c, POLLIN | POLLOUT, 0};
	int r = poll(&p, 1, 5000);
	printf("poll: %d revents 0x%x\n", r, p.revents);
	rd("read 1", c);
	rd("read 2", c);
	rd("read 3", c);
	int err = -1;
	socklen_t el = sizeof err;
	getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el);
	printf("SO_ERROR after: %d\n", err);
	// The same with nothing queued: the first read is the reset.
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, sizeof a))
		return 1;
	s = accept(l, NULL, NULL);
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	close(s);
	p.fd = c;
	p.events = POLLIN;
	r = poll(&p, 1, 5000);
	printf("poll: %d revents 0x%x\n", r, p.revents);
	rd("read 1", c);
	rd("read 2", c);
	ssize_t w = write(c, "x", 1);
	printf("write after reset: %zd %s\n", w, w < 0 ? strerror(errno) : "");
	return 0;
}
