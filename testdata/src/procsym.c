// procsym: reaches for the host's per-process /proc through paths only the
// host kernel's resolution would follow — a symlink to /proc/self/mem, a
// symlink to /proc, a symlink to / followed by "proc/self". Under uvm
// (unconfined) each must fail with ENOENT: the host's /proc/self is uvm's
// own process (its memory, environment and descriptors). Natively they
// reach the program's own /proc, so this program is not in MANIFEST;
// cmd/uvm's TestProcSymlinkEscape checks it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void try(const char *dir, const char *target, const char *suffix, int flags) {
	char link[4096], p[4200];
	snprintf(link, sizeof link, "%s/procsym-link", dir);
	unlink(link);
	if (symlink(target, link) != 0) {
		printf("symlink: %s\n", strerrorname_np(errno));
		return;
	}
	snprintf(p, sizeof p, "%s%s", link, suffix);
	int fd = open(p, flags);
	struct stat st;
	int sr = stat(p, &st);
	char buf[64];
	ssize_t n = readlink(p, buf, sizeof buf);
	printf("%s%s: open %s, stat %s, readlink %s\n", target, suffix, fd < 0 ? strerrorname_np(errno) : "opened",
	       sr < 0 ? "fails" : "ok", n < 0 ? "fails" : "ok");
	if (fd >= 0)
		close(fd);
	unlink(link);
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	try(argv[1], "/proc/self/mem", "", O_RDWR);
	try(argv[1], "/proc/self/environ", "", O_RDONLY);
	try(argv[1], "/proc", "/self/environ", O_RDONLY);
	try(argv[1], "/proc/self", "/fd/0", O_RDONLY);
	try(argv[1], "/", "proc/thread-self/environ", O_RDONLY);
	try(argv[1], "/proc/1", "/environ", O_RDONLY);
	try(argv[1], "/proc/cpuinfo", "", O_RDONLY); // not per-process: allowed
	return 0;
}
