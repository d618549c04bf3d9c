// sendfile(2) sources: Linux's sendfile reads through the input's
// splice_read, which regular files and devices have and pipes, sockets
// and eventfds lack (EINVAL before anything moves; ESPIPE first when an
// offset is given for a descriptor without positional reads). Go's
// io.Copy from an os.Pipe into a TCP connection tries sendfile and falls
// back to read/write on EINVAL; uvm answered EAGAIN for the empty pipe
// and Go's copy waited forever for the socket to be writable (net's
// TestCopyPipeIntoTCP hung).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

static void show(const char *what, ssize_t n)
{
	if (n < 0)
		printf("%-28s -1 %s\n", what, strerror(errno));
	else
		printf("%-28s %zd\n", what, n);
}

// drain prints what the socket's reader has (non-blocking).
static void drain(int fd)
{
	char buf[64];
	ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
	if (n < 0)
		printf("  reader: -1 %s\n", strerror(errno));
	else
		printf("  reader: %zd \"%.*s\"\n", n, (int)n, buf);
}

int main(void)
{
	int p[2], s[2], u[2];
	off_t off = 0;
	if (pipe2(p, O_NONBLOCK) || socketpair(AF_UNIX, SOCK_STREAM, 0, s) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, u)) {
		perror("setup");
		return 1;
	}
	show("empty non-blocking pipe", sendfile(s[0], p[0], NULL, 100));
	if (write(p[1], "ab", 2) != 2)
		return 1;
	show("pipe with data", sendfile(s[0], p[0], NULL, 100));
	show("pipe with an offset", sendfile(s[0], p[0], &off, 100));
	drain(s[1]);
	char buf[8];
	show("the pipe still holds", read(p[0], buf, sizeof buf));
	close(p[1]);
	show("pipe at EOF", sendfile(s[0], p[0], NULL, 100));

	if (write(u[1], "cd", 2) != 2)
		return 1;
	show("socket", sendfile(s[0], u[0], NULL, 100));
	show("socket with an offset", sendfile(s[0], u[0], &off, 100));
	drain(s[1]);

	int e = eventfd(1, 0);
	show("eventfd", sendfile(s[0], e, NULL, 8));

	int z = open("/dev/zero", O_RDONLY);
	show("/dev/zero", sendfile(s[0], z, NULL, 10));
	recv(s[1], buf, sizeof buf, MSG_DONTWAIT);
	recv(s[1], buf, sizeof buf, MSG_DONTWAIT);

	int m = memfd_create("src", 0);
	if (m < 0 || write(m, "hello, sendfile", 15) != 15)
		return 1;
	off = 7;
	show("memfd at offset 7", sendfile(s[0], m, &off, 100));
	printf("  offset now %lld\n", (long long)off);
	drain(s[1]);
	lseek(m, 0, SEEK_SET);
	int q[2];
	if (pipe(q))
		return 1;
	show("memfd into a pipe", sendfile(q[1], m, NULL, 5));
	show("  pipe read", read(q[0], buf, sizeof buf));
	return 0;
}
