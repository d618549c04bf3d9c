// recvmmsg's timeout (Linux: read and checked before the descriptor,
// then only after each datagram) on UDP over 127.0.0.1: a zero timeout
// stops after one datagram, a long one lets MSG_DONTWAIT drain the queue
// and is written back as what is left, a bad one is EINVAL/EFAULT (before
// EBADF). Run in-kernel (MANIFEST) and on host sockets (--net=host, cmd/
// uvm's TestNetHost).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int s;
static struct sockaddr_in self;

static void sendn(int n) {
	for (int i = 0; i < n; i++) {
		char b[8];
		int l = snprintf(b, sizeof b, "d%d", i);
		sendto(s, b, l, 0, (struct sockaddr *)&self, sizeof self);
	}
}

static int drain(void) {
	char b[64];
	int n = 0;
	while (recv(s, b, sizeof b, MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

int main(void) {
	s = socket(AF_INET, SOCK_DGRAM, 0);
	self = (struct sockaddr_in){.sin_family = AF_INET};
	self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(s, (struct sockaddr *)&self, sizeof self);
	socklen_t l = sizeof self;
	getsockname(s, (struct sockaddr *)&self, &l);

	char bufs[8][32];
	struct iovec iov[8];
	struct mmsghdr mm[8];
	memset(mm, 0, sizeof mm);
	for (int i = 0; i < 8; i++) {
		iov[i] = (struct iovec){bufs[i], sizeof bufs[i]};
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}

	sendn(3);
	struct timespec zero = {0, 0};
	int n = recvmmsg(s, mm, 3, 0, &zero);
	printf("zero timeout, 3 queued: %d (%.*s) left %ld.%09ld\n", n, mm[0].msg_len, bufs[0],
	       (long)zero.tv_sec, zero.tv_nsec);
	printf("still queued: %d\n", drain());

	sendn(3);
	struct timespec longt = {100, 0};
	n = recvmmsg(s, mm, 8, MSG_DONTWAIT, &longt);
	printf("long timeout, DONTWAIT, 3 queued: %d (%.*s %.*s %.*s)\n", n, mm[0].msg_len, bufs[0],
	       mm[1].msg_len, bufs[1], mm[2].msg_len, bufs[2]);
	printf("left in (99, 100]: %d\n", longt.tv_sec == 99 || (longt.tv_sec == 100 && longt.tv_nsec == 0));

	sendn(2);
	struct timespec t2 = {100, 0};
	n = recvmmsg(s, mm, 8, MSG_WAITFORONE, &t2);
	printf("WAITFORONE, 2 queued: %d\n", n);

	struct timespec none = {100, 0};
	n = recvmmsg(s, mm, 8, MSG_DONTWAIT, &none);
	printf("nothing queued: %d %s, timeout untouched %d\n", n, n < 0 ? strerror(errno) : "",
	       none.tv_sec == 100 && none.tv_nsec == 0);

	struct timespec bad = {0, 1000000000};
	n = recvmmsg(s, mm, 8, MSG_DONTWAIT, &bad);
	printf("nsec 1e9: %d %s\n", n, n < 0 ? strerror(errno) : "");
	bad = (struct timespec){-1, 0};
	n = recvmmsg(s, mm, 8, MSG_DONTWAIT, &bad);
	printf("sec -1: %d %s\n", n, n < 0 ? strerror(errno) : "");
	n = recvmmsg(999, mm, 8, MSG_DONTWAIT, &bad);
	printf("bad fd, bad timeout: %d %s\n", n, n < 0 ? strerror(errno) : "");
	n = recvmmsg(999, mm, 8, MSG_DONTWAIT, (struct timespec *)8);
	printf("bad fd, wild timeout: %d %s\n", n, n < 0 ? strerror(errno) : "");
	n = recvmmsg(999, mm, 8, MSG_DONTWAIT, &zero);
	printf("bad fd: %d %s\n", n, n < 0 ? strerror(errno) : "");
	close(s);
	return 0;
}
