// splice: splice(2), tee(2) and vmsplice(2) between files, pipes and
// sockets, with their offsets, flags and error answers.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static void show(const char *what, ssize_t r) {
	if (r < 0)
		printf("%s: -1 %s\n", what, strerrorname_np(errno));
	else
		printf("%s: %zd\n", what, r);
}

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: splice DIR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	char path[4096], path2[4096];
	snprintf(path, sizeof path, "%s/splice-src", argv[1]);
	snprintf(path2, sizeof path2, "%s/splice-dst", argv[1]);
	int src = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	int dst = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char data[100000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = "abcdefghijklmnopqrstuvwxyz"[i % 26] ^ (i / 997 & 7);
	if (write(src, data, sizeof data) != sizeof data)
		return 1;

	int p[2];
	pipe(p);
	// file -> pipe at an offset, pipe -> file at the position.
	loff_t off = 10;
	ssize_t total = 0, r;
	while ((r = splice(src, &off, p[1], NULL, 70000, 0)) > 0) {
		ssize_t k = splice(p[0], NULL, dst, NULL, r, SPLICE_F_MOVE);
		if (k != r) {
			show("short pipe->file", k);
			break;
		}
		total += k;
	}
	show("file->pipe->file total", total);
	printf("offset after: %lld, src position %lld\n", (long long)off, (long long)lseek(src, 0, SEEK_CUR));
	char back[100000];
	ssize_t got = pread(dst, back, sizeof back, 0);
	printf("copy equal: %d (%zd bytes)\n", got == (ssize_t)sizeof data - 10 && memcmp(back, data + 10, got) == 0, got);

	// Errors.
	off = 0;
	show("file->file", splice(src, NULL, dst, NULL, 10, 0));
	show("offset on pipe", splice(p[0], &off, dst, NULL, 10, 0));
	show("bad flags", splice(src, NULL, p[1], NULL, 10, 0x100));
	show("empty pipe nonblock", splice(p[0], NULL, dst, NULL, 10, SPLICE_F_NONBLOCK));
	show("wrong direction", splice(p[1], NULL, dst, NULL, 10, 0));
	show("negative offset", (off = -1, splice(src, &off, p[1], NULL, 10, 0)));
	show("zero length", splice(src, NULL, p[1], NULL, 0, 0));
	show("same pipe", splice(p[0], NULL, p[1], NULL, 10, 0));

	// tee: duplicate without consuming.
	int q[2];
	pipe(q);
	write(p[1], "tee-data", 8);
	show("tee", tee(p[0], q[1], 100, 0));
	char a[16] = {0}, b[16] = {0};
	read(p[0], a, sizeof a - 1);
	read(q[0], b, sizeof b - 1);
	printf("tee read: %s / %s\n", a, b);
	show("tee file", tee(src, q[1], 10, 0));
	show("tee empty nonblock", tee(p[0], q[1], 10, SPLICE_F_NONBLOCK));

	// socket -> pipe -> file (what Go's io.Copy does).
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	write(sv[0], "from a socket\n", 14);
	shutdown(sv[0], SHUT_WR);
	ftruncate(dst, 0);
	lseek(dst, 0, SEEK_SET);
	r = splice(sv[1], NULL, p[1], NULL, 4096, 0);
	show("socket->pipe", r);
	show("pipe->file", splice(p[0], NULL, dst, NULL, r, 0));
	show("socket at EOF", splice(sv[1], NULL, p[1], NULL, 4096, 0));
	got = pread(dst, back, sizeof back, 0);
	printf("file has: %.*s", (int)got, back);

	// vmsplice in and out of a pipe.
	struct iovec iov[2] = {{"vm", 2}, {"splice\n", 7}};
	show("vmsplice write", vmsplice(p[1], iov, 2, 0));
	char c[16] = {0};
	struct iovec in = {c, sizeof c};
	show("vmsplice read", vmsplice(p[0], &in, 1, 0));
	printf("vmsplice got: %s", c);
	show("vmsplice on a file", vmsplice(src, iov, 1, 0));

	// EOF and EPIPE.
	close(p[1]);
	show("pipe at EOF", splice(p[0], NULL, dst, NULL, 10, 0));
	close(q[0]);
	show("to a pipe without reader", splice(src, &(loff_t){0}, q[1], NULL, 10, 0));
	unlink(path);
	unlink(path2);
	return 0;
}
