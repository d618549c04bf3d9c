// escape_at: tries to leave a confined root (uvm --root DIR, or chroot DIR
// natively) through descriptor-relative lookups: ".." from a directory
// descriptor and from the cwd, symlinks made relative to a descriptor,
// a descriptor whose directory is renamed meanwhile, the *at calls that
// create, link, rename and remove, a chain deeper than PATH_MAX, and a
// thread moving the descriptor's directory while another climbs out of
// it. The root is escape's (see cmd/uvm root_test.go's makeJail): /inside.txt
// inside, outside.txt in DIR's parent, /abs -> /outside.txt, /up ->
// ../../../../../outside.txt, /dir -> /.. . Every attempt must resolve
// inside DIR. "escape_at stdin" tries the same from a directory outside
// the root given as stdin.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void try_at(int dfd, const char *label, const char *p) {
	char buf[64] = {0};
	int fd = openat(dfd, p, O_RDONLY);
	if (fd < 0) {
		printf("openat(%s, %s): %s\n", label, p, strerrorname_np(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	printf("openat(%s, %s): \"%s\"\n", label, p, buf);
}

static void result(const char *what, int r) {
	printf("%s: %s\n", what, r < 0 ? strerrorname_np(errno) : "ok");
}

static int same(int fd, const char *p) {
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat(p, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void cwd(const char *what) {
	char buf[8192];
	printf("%s: getcwd %s\n", what, getcwd(buf, sizeof buf) ? buf : strerrorname_np(errno));
}

static volatile int stop;

// Moves /m/a/b between depths (/m/a/b <-> /b) while the main thread climbs
// out of it through its descriptor.
static void *mover(void *arg) {
	(void)arg;
	while (!stop) {
		rename("/m/a/b", "/b");
		rename("/b", "/m/a/b");
	}
	return NULL;
}

// Swaps a symlink in the descriptor's directory between one inside and
// one pointing out.
static void *swapper(void *arg) {
	int dfd = *(int *)arg;
	while (!stop) {
		symlinkat("/../../outside.txt", dfd, "sw.tmp");
		renameat(dfd, "sw.tmp", dfd, "sw");
		unlinkat(dfd, "sw.tmp", 0);
		symlinkat("/inside.txt", dfd, "sw.tmp");
		renameat(dfd, "sw.tmp", dfd, "sw");
	}
	return NULL;
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && strcmp(argv[1], "stdin") == 0) {
		// stdin is a directory outside the root, handed in by the
		// harness: natively (chroot) it is a way out; uvm must not
		// look anything up from it.
		try_at(0, "stdin", "outside.txt");
		try_at(0, "stdin", "jail/inside.txt");
		result("fchdir stdin", fchdir(0));
		try_at(AT_FDCWD, "cwd", "outside.txt");
		try_at(AT_FDCWD, "cwd", "inside.txt");
		return 0;
	}
	int root = open("/", O_RDONLY | O_DIRECTORY);
	try_at(root, "/", "inside.txt");
	try_at(root, "/", "../outside.txt");
	try_at(root, "/", "../../../../outside.txt");
	int up = openat(root, "..", O_RDONLY | O_DIRECTORY);
	printf("openat(/, ..) is the root: %d\n", same(up, "/"));
	close(up);
	up = openat(root, "dir/..", O_RDONLY | O_DIRECTORY);
	printf("openat(/, dir/..) is the root: %d\n", same(up, "/"));
	close(up);

	mkdir("/sub", 0755);
	mkdir("/sub/inner", 0755);
	int sub = open("/sub/inner", O_RDONLY | O_DIRECTORY);
	try_at(sub, "inner", "../../inside.txt");
	try_at(sub, "inner", "../../../../../../outside.txt");
	try_at(sub, "inner", "../../abs");
	try_at(sub, "inner", "../../up");
	try_at(sub, "inner", "../../dir/outside.txt");
	try_at(sub, "inner", "../../dir/inside.txt");
	try_at(sub, "inner", "../../dir/../../outside.txt");
	result("symlinkat /../outside.txt inner/s1", symlinkat("/../outside.txt", sub, "s1"));
	result("symlinkat ../../../../../outside.txt inner/s2", symlinkat("../../../../../outside.txt", sub, "s2"));
	result("symlinkat ../../inside.txt inner/s3", symlinkat("../../inside.txt", sub, "s3"));
	result("symlinkat / inner/rootl", symlinkat("/", sub, "rootl"));
	try_at(sub, "inner", "s1");
	try_at(sub, "inner", "s2");
	try_at(sub, "inner", "s3");
	try_at(sub, "inner", "rootl/../outside.txt");
	try_at(sub, "inner", "rootl/inside.txt");

	result("rename /sub /sub2", rename("/sub", "/sub2"));
	try_at(sub, "inner", "../../inside.txt");
	try_at(sub, "inner", "../../../outside.txt");
	try_at(sub, "inner", "s3");
	result("fchdir inner", fchdir(sub));
	cwd("after fchdir");
	try_at(AT_FDCWD, "cwd", "../../../outside.txt");
	result("chdir ../../../..", chdir("../../../.."));
	cwd("after chdir ../../../..");
	try_at(AT_FDCWD, "cwd", "outside.txt");

	result("mkdirat(inner, ../../../made)", mkdirat(sub, "../../../made", 0755));
	struct stat st;
	result("stat /made", stat("/made", &st));
	result("linkat(inner, ../../../../outside.txt, /, hard)", linkat(sub, "../../../../outside.txt", root, "hard", 0));
	result("renameat(inner, ../../../../outside.txt, /, stolen)", renameat(sub, "../../../../outside.txt", root, "stolen"));
	result("unlinkat(inner, ../../../../outside.txt)", unlinkat(sub, "../../../../outside.txt", 0));
	result("fchmodat(inner, ../../../../outside.txt, 0)", fchmodat(sub, "../../../../outside.txt", 0, 0));
	result("fstatat(inner, ../../../../outside.txt)", fstatat(sub, "../../../../outside.txt", &st, 0));
	int fd = openat(sub, "s1", O_CREAT | O_WRONLY, 0644);
	printf("creat through inner/s1: %s\n", fd < 0 ? strerrorname_np(errno) : "ok (inside)");
	if (fd >= 0)
		close(fd);
	try_at(root, "/", "outside.txt");
	result("unlink /outside.txt", unlink("/outside.txt"));

	// Deeper than PATH_MAX inside the root, then climbing further.
	char name[201];
	memset(name, 'd', 200);
	name[200] = 0;
	int okc = 0;
	for (int i = 0; i < 24; i++) {
		mkdir(name, 0755);
		okc += chdir(name) == 0;
	}
	printf("deep: %d chdir ok\n", okc);
	char climb[3 * 40 + 16] = "";
	for (int i = 0; i < 40; i++)
		strcat(climb, "../");
	strcat(climb, "outside.txt");
	try_at(AT_FDCWD, "deep", climb);
	climb[3 * 40] = 0;
	result("chdir ../ x40", chdir(climb));
	cwd("after climbing");

	// Races.
	mkdir("/m", 0755);
	mkdir("/m/a", 0755);
	mkdir("/m/a/b", 0755);
	int b = open("/m/a/b", O_RDONLY | O_DIRECTORY);
	pthread_t th;
	pthread_create(&th, NULL, mover, NULL);
	int leaked = 0, inside = 0;
	for (int i = 0; i < 2000; i++) {
		char buf[16] = {0};
		int rfd = openat(b, "../../../../outside.txt", O_RDONLY);
		if (rfd >= 0) {
			if (read(rfd, buf, sizeof buf - 1) > 0 && strncmp(buf, "OUTSIDE", 7) == 0)
				leaked++;
			close(rfd);
		}
		rfd = openat(b, "../../../inside.txt", O_RDONLY);
		if (rfd >= 0) {
			inside++;
			close(rfd);
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("rename race: %d reads of the outside file, inside reached: %d\n", leaked, inside > 0);
	stop = 0;
	pthread_create(&th, NULL, swapper, &b);
	leaked = 0;
	for (int i = 0; i < 2000; i++) {
		char buf[16] = {0};
		int rfd = openat(b, "sw", O_RDONLY);
		if (rfd >= 0) {
			if (read(rfd, buf, sizeof buf - 1) > 0 && strncmp(buf, "OUTSIDE", 7) == 0)
				leaked++;
			close(rfd);
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("symlink race: %d reads of the outside file\n", leaked);
	return 0;
}
