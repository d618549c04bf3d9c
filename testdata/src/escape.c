// escape: tries to leave a confined root (uvm --root DIR, or chroot DIR
// natively). The harness builds DIR with bin/escape, a file inside
// (/inside.txt), and symlinks that point out of it: /abs -> /outside.txt
// (absolute), /up -> ../../../../../outside.txt (relative), /dir ->
// /.. and a file outside.txt in DIR's parent. Every attempt must resolve
// inside DIR. Usage: escape [ro] (ro: the root is read-only).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void try_open(const char *p) {
	char buf[64] = {0};
	int fd = open(p, O_RDONLY);
	if (fd < 0) {
		printf("open %s: %s\n", p, strerrorname_np(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	printf("open %s: \"%s\"\n", p, buf);
}

static void result(const char *what, int r) {
	printf("%s: %s\n", what, r < 0 ? strerrorname_np(errno) : "ok");
}

static volatile int stop;

// Swaps /race between a harmless file and a symlink out of the root while
// the main thread opens it.
static void *swapper(void *arg) {
	(void)arg;
	while (!stop) {
		symlink("/outside.txt", "/race.tmp");
		rename("/race.tmp", "/race");
		unlink("/race.tmp");
		symlink("inside.txt", "/race.tmp");
		rename("/race.tmp", "/race");
	}
	return NULL;
}

int main(int argc, char **argv) {
	int ro = argc > 1 && strcmp(argv[1], "ro") == 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	try_open("/inside.txt");
	try_open("/outside.txt");
	try_open("/../outside.txt");
	try_open("../../../../../../outside.txt");
	try_open("/abs");
	try_open("/up");
	try_open("/dir/outside.txt");
	try_open("/dir/inside.txt");
	char cwd[256];
	chdir("/dir/../..");
	printf("cwd after chdir /dir/../..: %s\n", getcwd(cwd, sizeof cwd));
	try_open("outside.txt");
	struct stat st;
	result("stat /up", stat("/up", &st));
	result("lstat /up", lstat("/up", &st));
	char *args[] = {"true", NULL};
	execv("/bin/true", args);
	printf("execv /bin/true: %s\n", strerrorname_np(errno));
	if (ro) {
		result("creat /new", open("/new", O_CREAT | O_WRONLY, 0644));
		result("mkdir /d", mkdir("/d", 0755));
		result("unlink /inside.txt", unlink("/inside.txt"));
		result("symlink /s", symlink("/x", "/s"));
		return 0;
	}
	result("link /up /hard", link("/up", "/hard"));
	try_open("/hard");
	result("symlink /s -> /../outside.txt", symlink("/../outside.txt", "/s"));
	try_open("/s");
	result("rename /s /t", rename("/s", "/t"));
	try_open("/t");
	int fd = open("/abs", O_CREAT | O_WRONLY, 0644);
	printf("creat through /abs: %s\n", fd < 0 ? strerrorname_np(errno) : "ok (inside)");
	if (fd >= 0)
		close(fd);
	try_open("/outside.txt");
	symlink("inside.txt", "/race");
	pthread_t th;
	pthread_create(&th, NULL, swapper, NULL);
	int leaked = 0;
	for (int i = 0; i < 2000; i++) {
		char buf[16] = {0};
		int rfd = open("/race", O_RDONLY);
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
