// shutdown(2) of datagram sockets as datagram_poll and __skb_recv_datagram
// see it: an unconnected UDP socket answers ENOTCONN but records the
// shutdown; poll shows POLLRDHUP (and POLLIN) after SHUT_RD and POLLHUP
// after both directions; a non-blocking receive on the empty queue is
// EAGAIN for UDP and AF_UNIX datagram sockets, end of file for
// SOCK_SEQPACKET (uvm answered 0 and no hang-up bits).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static void t(const char *name, int fd, int how) {
	char b[8];
	if (shutdown(fd, how) != 0) printf("%s shutdown(%d): %s\n", name, how, strerror(errno));
	struct pollfd p = {fd, POLLIN | POLLOUT | POLLRDHUP, 0};
	int r = poll(&p, 1, 0);
	printf("%s how %d poll %d revents 0x%x", name, how, r, p.revents);
	ssize_t n = recv(fd, b, sizeof b, MSG_DONTWAIT);
	printf(" recv nonblock %zd %s\n", n, n < 0 ? strerror(errno) : "");
}
int main(void) {
	for (int how = 0; how < 3; how++) {
		int u = socket(AF_INET, SOCK_DGRAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(47501 + how)};
		a.sin_addr.s_addr = htonl(0x7f000001);
		bind(u, (void *)&a, sizeof a);
		t("udp-unconnected", u, how);
		int c = socket(AF_INET, SOCK_DGRAM, 0);
		connect(c, (void *)&a, sizeof a);
		t("udp-connected", c, how);
		int sp[2];
		socketpair(AF_UNIX, SOCK_DGRAM, 0, sp);
		t("unix-dgram", sp[0], how);
		socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp);
		t("unix-seqpacket", sp[0], how);
	}
}
