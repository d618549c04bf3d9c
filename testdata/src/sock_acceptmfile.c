// accept(2) at RLIMIT_NOFILE: EMFILE, and the connection stays queued
// (do_accept takes the descriptor before the connection), so a later
// accept gets it; uvm took the connection first and dropped it.
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(void)
{
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	memcpy(a.sun_path, "\0uvm-acceptmfile", 16);
	socklen_t al = offsetof(struct sockaddr_un, sun_path) + 16;
	if (bind(l, (struct sockaddr *)&a, al) != 0 || listen(l, 4) != 0) {
		perror("listen");
		return 1;
	}
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, al) != 0) {
		perror("connect");
		return 1;
	}
	if (write(c, "hi", 2) != 2)
		return 1;
	struct rlimit r, low;
	getrlimit(RLIMIT_NOFILE, &r);
	low = r;
	low.rlim_cur = c + 1; // every descriptor up to c is in use
	setrlimit(RLIMIT_NOFILE, &low);
	int fd = accept(l, NULL, NULL);
	printf("accept at the limit: %d %s\n", fd, fd < 0 ? strerror(errno) : "");
	setrlimit(RLIMIT_NOFILE, &r);
	fd = accept(l, NULL, NULL);
	char b[4] = {0};
	printf("accept after raising it: %s, reads %zd \"%s\"\n", fd >= 0 ? "ok" : strerror(errno), read(fd, b, 2), b);
	return 0;
}
