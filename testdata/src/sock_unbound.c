// getsockname of sockets that were never bound: Linux answers the bare
// family (an AF_UNIX address of sizeof(sa_family_t) bytes; a netlink
// address with port id 0; an inet wildcard), never an empty address. Go's
// net.UnixConn.LocalAddr of an unbound unixgram client was nil in uvm
// (net's TestUnixgramZeroBytePayload crashed).
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void name(const char *what, int fd)
{
	struct sockaddr_storage ss;
	memset(&ss, 0x55, sizeof ss);
	socklen_t l = sizeof ss;
	int r = getsockname(fd, (struct sockaddr *)&ss, &l);
	printf("%-22s %d len %u family %d\n", what, r, (unsigned)l, ((struct sockaddr *)&ss)->sa_family);
}

int main(void)
{
	int sp[2];
	name("unix stream", socket(AF_UNIX, SOCK_STREAM, 0));
	name("unix dgram", socket(AF_UNIX, SOCK_DGRAM, 0));
	name("unix seqpacket", socket(AF_UNIX, SOCK_SEQPACKET, 0));
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sp) == 0)
		name("unix socketpair", sp[0]);
	int nl = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	struct sockaddr_nl sn;
	socklen_t l = sizeof sn;
	memset(&sn, 0x55, sizeof sn);
	int r = getsockname(nl, (struct sockaddr *)&sn, &l);
	printf("%-22s %d len %u family %d pid %u groups %u\n", "netlink route", r, (unsigned)l, sn.nl_family, sn.nl_pid, sn.nl_groups);
	name("inet udp", socket(AF_INET, SOCK_DGRAM, 0));
	name("inet6 tcp", socket(AF_INET6, SOCK_STREAM, 0));
	// A client of a bound datagram socket stays unbound after connect.
	int a = socket(AF_UNIX, SOCK_DGRAM, 0), b = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, "\0sock_unbound", 13);
	socklen_t sl = (socklen_t)(sizeof(sa_family_t) + 13);
	int rb = bind(a, (struct sockaddr *)&sa, sl);
	int rc = connect(b, (struct sockaddr *)&sa, sl);
	printf("bind %d connect %d\n", rb, rc);
	name("connected unix dgram", b);
	printf("send of 0 bytes %zd\n", send(b, "", 0, 0));
	char c;
	struct sockaddr_storage from;
	socklen_t fl = sizeof from;
	ssize_t n = recvfrom(a, &c, 1, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	printf("recvfrom %zd from-len %u\n", n, (unsigned)fl);
	return 0;
}
