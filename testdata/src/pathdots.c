#define _GNU_SOURCE
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
// pathdots: unlink, rmdir and rename of names ending in "." or "..": Linux
// refuses them (EISDIR, EINVAL, ENOTEMPTY, EBUSY) after looking up the
// parent (ENOENT), and rmdir of "dir/." must never remove dir.
static char base[4096];
static const char *P(const char *rel) {
	static char bufs[4][4200];
	static int n;
	char *b = bufs[n++ & 3];
	snprintf(b, 4200, "%s/%s", base, rel);
	return b;
}
int main(int argc, char **argv){ if (argc < 2) return 2; snprintf(base, sizeof base, "%s/uvmdots", argv[1]); mkdir(base,0755); mkdir(P("d"),0755);
 printf("rmdir d/.: %s\n", rmdir(P("d/."))?strerrorname_np(errno):"ok");
 printf("rmdir d/..: %s\n", rmdir(P("d/.."))?strerrorname_np(errno):"ok");
 printf("unlink d/.: %s\n", unlink(P("d/."))?strerrorname_np(errno):"ok");
 printf("rename d/. e: %s\n", rename(P("d/."), P("e"))?strerrorname_np(errno):"ok");
 printf("rename d e/..: %s\n", rename(P("d"), P("e/.."))?strerrorname_np(errno):"ok");
 int fd=open(P("d"), O_RDONLY|O_DIRECTORY);
 printf("unlinkat(fd, \".\", AT_REMOVEDIR): %s\n", unlinkat(fd, ".", AT_REMOVEDIR)?strerrorname_np(errno):"ok");
 printf("rmdir d: %s\n", rmdir(P("d"))?strerrorname_np(errno):"ok");
 rmdir(base); return 0; }
