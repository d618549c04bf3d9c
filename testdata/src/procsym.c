// procsym: reaches for the host's per-process /proc through paths only the
// host kernel's resolution would follow — a symlink to /proc/self/mem, a
// symlink to /proc, a symlink to / followed by "proc/self". Under uvm
// (unconfined) each must fail with ENOENT: the host's /proc/self is uvm's
// own process (its memory, environment and descriptors). Natively they
// reach the program's own /proc, so this program is not in MANIFEST;
// cmd/uvm's TestProcSymlinkEscape checks it.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
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

// race: one thread swaps a symlink between a harmless file and
// /proc/self/cmdline while another opens it: a check of the name before
// the open would let some opens through to the host's /proc.
static volatile int stop;
static char racelink[4096];
static void *swapper(void *a) {
	(void)a;
	while (!stop) {
		unlink(racelink);
		symlink("/proc/cpuinfo", racelink);
		unlink(racelink);
		symlink("/proc/self/cmdline", racelink);
	}
	return NULL;
}

static int race(const char *dir) {
	snprintf(racelink, sizeof racelink, "%s/procsym-race", dir);
	pthread_t th;
	pthread_create(&th, NULL, swapper, NULL);
	int leaks = 0, opened = 0;
	// At least 3000 attempts, and on until some open has gone through
	// (an open that overlaps the swaps fails as a whole: on a loaded
	// host all of the first 3000 can).
	for (int i = 0; i < 3000 || (opened == 0 && i < 1000000); i++) {
		int fd = open(racelink, O_RDONLY);
		if (fd < 0)
			continue;
		char b[64];
		ssize_t n = read(fd, b, sizeof b);
		close(fd);
		opened++;
		if (n > 0 && memcmp(b, "processor", 9) != 0)
			leaks++;
	}
	stop = 1;
	pthread_join(th, NULL);
	unlink(racelink);
	printf("race: %s\n", leaks == 0 && opened > 0 ? "no open reached the host's /proc/self" : "LEAKED");
	return leaks != 0;
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	if (argc > 2 && strcmp(argv[2], "--race") == 0)
		return race(argv[1]);
	try(argv[1], "/proc/self/mem", "", O_RDWR);
	try(argv[1], "/proc/self/environ", "", O_RDONLY);
	try(argv[1], "/proc", "/self/environ", O_RDONLY);
	try(argv[1], "/proc/self", "/fd/0", O_RDONLY);
	try(argv[1], "/", "proc/thread-self/environ", O_RDONLY);
	try(argv[1], "/proc/1", "/environ", O_RDONLY);
	try(argv[1], "/proc/cpuinfo", "", O_RDONLY); // not per-process: allowed
	return 0;
}
