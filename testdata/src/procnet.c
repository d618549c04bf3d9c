// /proc/net's socket tables (tcp, tcp6, udp, udp6, unix) for the
// program's own sockets in known states: listeners with and without a
// connection waiting in the accept queue, established pairs with unread
// bytes, a half-closed pair (FIN_WAIT2 / CLOSE_WAIT), a dual-stack
// listener that accepted an IPv4 client, bound and connected UDP
// sockets, AF_UNIX stream, datagram and seqpacket sockets, bound by path
// and in the abstract namespace, a socketpair and an embryo connection.
//
// Lines are found by inode (fstat of each descriptor) and printed with
// the descriptor's label instead of the inode (and "self" for the
// caller's uid), sorted by label; the
// kernel's hash-order slot numbers, kernel pointers and the TCP
// congestion fields after the inode are left out, so the output is the
// same natively (outside any namespace) and under uvm.
//
//   procnet DIR   (binds its AF_UNIX socket at DIR/pn.sock, printed as
//                 the relative name pn.sock)
//   procnet -ns   also prints the namespace-wide files verbatim (dev,
//                 if_inet6, route, ipv6_route, igmp, igmp6, sockstat,
//                 sockstat6, before any socket exists; sockstat and
//                 sockstat6 again with the sockets): only comparable with
//                 a native run inside `unshare -n` with lo up, and
//                 sockstat's used, alloc and mem count the whole host's.
//   procnet -cat NAME   prints /proc/net/NAME after a "== NAME" line.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAXS 64
static struct {
	char label[32];
	unsigned long ino;
	int fd;
} socks[MAXS];
static int nsocks;

static void track(const char *label, int fd)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		printf("%s: bad fd\n", label);
		exit(1);
	}
	snprintf(socks[nsocks].label, sizeof socks[nsocks].label, "%s", label);
	socks[nsocks].fd = fd;
	socks[nsocks++].ino = st.st_ino;
}

static const char *labelOf(unsigned long ino)
{
	for (int i = 0; i < nsocks; i++)
		if (socks[i].ino == ino)
			return socks[i].label;
	return NULL;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int in4(int type, int port, int listenq)
{
	int fd = socket(AF_INET, type, 0), one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
		die("bind4");
	if (listenq && listen(fd, listenq) != 0)
		die("listen");
	return fd;
}

static int in6(int type, int port, int any, int listenq)
{
	int fd = socket(AF_INET6, type, 0), one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	if (!any)
		a.sin6_addr = in6addr_loopback;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
		die("bind6");
	if (listenq && listen(fd, listenq) != 0)
		die("listen6");
	return fd;
}

static void connect4(int fd, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
		die("connect4");
}

static void connect6(int fd, int port)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = in6addr_loopback};
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
		die("connect6");
}

static int cmpline(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// table prints the program's lines of /proc/net/NAME. inet tables: the
// fields from local_address to timeout, the label for the inode; inode
// 0 (a connection waiting in an accept queue) is labelled by its ports
// when one of them is the program's. unix: RefCount to St, the label,
// the path.
static void table(const char *name)
{
	char path[64], buf[512], *out[MAXS * 2];
	int n = 0;
	snprintf(path, sizeof path, "/proc/net/%s", name);
	FILE *f = fopen(path, "r");
	if (!f)
		die(path);
	int unixTable = strcmp(name, "unix") == 0;
	if (!fgets(buf, sizeof buf, f)) // the header
		die("header");
	while (fgets(buf, sizeof buf, f) && n < MAXS * 2) {
		char *fields[24];
		int nf = 0;
		for (char *p = strtok(buf, " \n"); p && nf < 24; p = strtok(NULL, " \n"))
			fields[nf++] = p;
		char line[512];
		if (unixTable) {
			if (nf < 7)
				continue;
			unsigned long ino = strtoul(fields[6], NULL, 10);
			const char *l = labelOf(ino);
			const char *p = nf > 7 ? fields[7] : "";
			if (!l && !(ino == 0 && strcmp(p, "pn.sock") == 0))
				continue;
			snprintf(line, sizeof line, "%s: %s %s %s %s %s %s", l ? l : "unix-embryo", fields[1], fields[2],
				 fields[3], fields[4], fields[5], p);
		} else {
			if (nf < 10)
				continue;
			unsigned long ino = strtoul(fields[9], NULL, 10);
			const char *l = labelOf(ino);
			char embryo[64];
			if (!l && ino == 0) {
				unsigned lp = strtoul(strchr(fields[1], ':') + 1, NULL, 16);
				unsigned rp = strtoul(strchr(fields[2], ':') + 1, NULL, 16);
				// Only the program's own embryo (both ends its
				// ports): another process's TIME_WAIT socket can have
				// an ephemeral local port in the range too.
				if (lp < 47000 || lp > 47100 || rp < 47000 || rp > 47100)
					continue;
				snprintf(embryo, sizeof embryo, "%s-embryo-%u-%u", name, lp, rp);
				l = embryo;
			}
			if (!l)
				continue;
			// The owner: "self" when it is the caller (uvm --det
			// runs the guest as uid 1000).
			char uid[32];
			snprintf(uid, sizeof uid, "%s", fields[7]);
			if (strtoul(uid, NULL, 10) == getuid())
				snprintf(uid, sizeof uid, "self");
			snprintf(line, sizeof line, "%s: %s %s %s %s %s %s %s %s", l, fields[1], fields[2], fields[3],
				 fields[4], fields[5], fields[6], uid, fields[8]);
		}
		out[n++] = strdup(line);
	}
	fclose(f);
	qsort(out, n, sizeof out[0], cmpline);
	printf("== %s\n", name);
	for (int i = 0; i < n; i++)
		printf("%s\n", out[i]);
}

static void verbatim(const char *name)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/net/%s", name);
	FILE *f = fopen(path, "r");
	if (!f)
		die(path);
	printf("== %s\n", name);
	size_t k;
	while ((k = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, k, stdout);
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "-cat") == 0 && argc > 2) {
		verbatim(argv[2]);
		return 0;
	}
	int ns = strcmp(argv[1], "-ns") == 0;
	if (ns) {
		const char *files[] = {"dev", "if_inet6", "route", "ipv6_route", "igmp", "igmp6", "sockstat", "sockstat6"};
		for (unsigned i = 0; i < sizeof files / sizeof files[0]; i++)
			verbatim(files[i]);
		char tmp[] = "/tmp/procnetXXXXXX";
		if (!mkdtemp(tmp))
			die("mkdtemp");
		argv[1] = tmp;
	}
	if (chdir(argv[1]) != 0)
		die("chdir");
	char lnk[64];
	ssize_t k = readlink("/proc/net", lnk, sizeof lnk - 1);
	lnk[k > 0 ? k : 0] = 0;
	printf("/proc/net -> %s\n", lnk);

	// TCP over IPv4.
	int l1 = in4(SOCK_STREAM, 47001, 4);
	int c1 = in4(SOCK_STREAM, 47002, 0);
	connect4(c1, 47001);
	int a1 = accept(l1, NULL, NULL);
	if (write(a1, "hello", 5) != 5)
		die("write");
	int l2 = in4(SOCK_STREAM, 47003, 4);
	int c2 = in4(SOCK_STREAM, 47004, 0);
	connect4(c2, 47003);
	int a2 = accept(l2, NULL, NULL);
	shutdown(c2, SHUT_WR);
	// Wait for the FIN (peeked: it stays unread) and its ACK.
	char ch;
	if (recv(a2, &ch, 1, MSG_PEEK) != 0)
		die("peek FIN");
	usleep(20000);
	int l3 = in4(SOCK_STREAM, 47005, 4);
	int c3 = in4(SOCK_STREAM, 47006, 0);
	connect4(c3, 47005); // left in l3's accept queue
	int b1 = in4(SOCK_STREAM, 47007, 0); // bound, not listening: unlisted
	track("tcp-listen", l1);
	track("tcp-client", c1);
	track("tcp-accepted", a1);
	track("tcp-halfclosed-client", c2);
	track("tcp-halfclosed-server", a2);
	track("tcp-listen-halfclosed", l2);
	track("tcp-listen-pending", l3);
	track("tcp-pending-client", c3);
	track("tcp-bound-only", b1);

	// TCP over IPv6, and a dual-stack listener with an IPv4 client.
	int l6 = in6(SOCK_STREAM, 47011, 0, 4);
	int c6 = in6(SOCK_STREAM, 47012, 0, 0);
	connect6(c6, 47011);
	int a6 = accept(l6, NULL, NULL);
	if (write(c6, "abc", 3) != 3)
		die("write6");
	int ld = in6(SOCK_STREAM, 47013, 1, 4);
	int cd = in4(SOCK_STREAM, 47014, 0);
	connect4(cd, 47013);
	int ad = accept(ld, NULL, NULL);
	track("tcp6-listen", l6);
	track("tcp6-client", c6);
	track("tcp6-accepted", a6);
	track("tcp6-dual-listen", ld);
	track("tcp6-dual-accepted", ad);
	track("tcp-dual-client", cd);

	// UDP.
	int u1 = in4(SOCK_DGRAM, 47021, 0);
	int u2 = in4(SOCK_DGRAM, 47022, 0);
	connect4(u2, 47021);
	int u6 = in6(SOCK_DGRAM, 47023, 1, 0);
	int u7 = in6(SOCK_DGRAM, 47024, 0, 0);
	connect6(u7, 47023);
	int uu = socket(AF_INET, SOCK_DGRAM, 0); // unbound: unlisted
	track("udp-bound", u1);
	track("udp-connected", u2);
	track("udp6-any", u6);
	track("udp6-connected", u7);
	track("udp-unbound", uu);

	// AF_UNIX.
	int ul = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "pn.sock"};
	if (bind(ul, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ul, 4) != 0)
		die("unix listen");
	int uc = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(uc, (struct sockaddr *)&sa, sizeof sa) != 0)
		die("unix connect");
	int ua = accept(ul, NULL, NULL);
	int ue = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(ue, (struct sockaddr *)&sa, sizeof sa) != 0) // stays an embryo
		die("unix connect 2");
	int d1 = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un ab = {.sun_family = AF_UNIX};
	memcpy(ab.sun_path, "\0pn\0x", 5);
	socklen_t abl = offsetof(struct sockaddr_un, sun_path) + 5;
	if (bind(d1, (struct sockaddr *)&ab, abl) != 0)
		die("abstract bind");
	int d2 = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (connect(d2, (struct sockaddr *)&ab, abl) != 0)
		die("abstract connect");
	int sq = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	int un = socket(AF_UNIX, SOCK_STREAM, 0);
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		die("socketpair");
	track("unix-listen", ul);
	track("unix-client", uc);
	track("unix-accepted", ua);
	track("unix-embryo-client", ue);
	track("unix-dgram-abstract", d1);
	track("unix-dgram-connected", d2);
	track("unix-seqpacket", sq);
	track("unix-unbound", un);
	track("unix-pair0", sp[0]);
	track("unix-pair1", sp[1]);

	table("tcp");
	table("tcp6");
	table("udp");
	table("udp6");
	table("unix");
	if (ns) {
		verbatim("sockstat");
		verbatim("sockstat6");
	}
	unlink("pn.sock");
	// Abortive closes: no TIME_WAIT keeps the ports from the next run.
	for (int i = 0; i < nsocks; i++) {
		struct linger lg = {1, 0};
		setsockopt(socks[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		close(socks[i].fd);
	}
	return 0;
}
