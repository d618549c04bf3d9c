// Loopback TCP throughput between two threads (not in MANIFEST; cmd/uvm's
// BenchmarkLoopbackTCP runs it under uvm and qemu-user).
//   sock_bench bytes MB   one connection, MB MiB in 64 KiB writes
//   sock_bench conns N    N connect/accept/close rounds
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int lfd;

static void *sink(void *arg) {
	(void)arg;
	static char buf[65536];
	int c = accept(lfd, 0, 0);
	long got = 0, r;
	while ((r = read(c, buf, sizeof buf)) > 0)
		got += r;
	close(c);
	return (void *)got;
}

static void *acceptor(void *arg) {
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		close(accept(lfd, 0, 0));
	return 0;
}

int main(int argc, char **argv) {
	if (argc != 3)
		return 2;
	long n = atol(argv[2]);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	socklen_t l = sizeof a;
	if (bind(lfd, (void *)&a, sizeof a) || listen(lfd, 128) || getsockname(lfd, (void *)&a, &l))
		return 1;
	pthread_t t;
	void *res;
	if (!strcmp(argv[1], "bytes")) {
		pthread_create(&t, 0, sink, 0);
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (void *)&a, sizeof a))
			return 1;
		static char buf[65536];
		for (long i = 0; i < n * 16; i++)
			for (long off = 0; off < (long)sizeof buf;) {
				long w = write(c, buf + off, sizeof buf - off);
				if (w <= 0)
					return 1;
				off += w;
			}
		close(c);
		pthread_join(t, &res);
		return (long)res == n << 20 ? 0 : 1;
	}
	pthread_create(&t, 0, acceptor, (void *)n);
	for (long i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (void *)&a, sizeof a))
			return 1;
		close(c);
	}
	pthread_join(t, &res);
	return 0;
}
