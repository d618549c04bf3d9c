// bind: reads and writes through bind mounts and tries to leave them
// (uvm run --bind; natively, real bind mounts in a mount namespace). The
// harness builds the guest's tree under BASE (argv[1], "" under --root):
//   BASE/etc/secret.txt   "jail-etc"
//   BASE/data             <- bind of HOSTRW (read-write)
//   BASE/ro               <- bind of HOSTRO (read-only)
//   BASE/cfg.txt          <- bind of the host file HOSTCFG (read-only)
// with HOSTRW/file.txt "rw-data", HOSTRW/sub/, HOSTRW/up -> ../outside.txt,
// HOSTRW/abs -> BASE/etc/secret.txt, HOSTRW/top -> .. (climbs to BASE),
// HOSTRO/file.txt "ro-data", HOSTRO/tow -> BASE/data/file.txt, HOSTCFG
// "cfg", and outside.txt "OUTSIDE" in HOSTRW's parent (never reachable).
// A fourth bind, of HOSTNEST, sits inside the first at BASE/data/sub/nest:
// HOSTNEST/n.txt "nested", HOSTNEST/up2 -> ../../file.txt.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static const char *base = "";

static const char *P(const char *p) {
	static char bufs[4][4096];
	static int i;
	char *b = bufs[i++ & 3];
	snprintf(b, 4096, "%s%s", base, p);
	return b;
}

static void show_fd(const char *what, int fd) {
	char buf[64] = {0};
	if (fd < 0) {
		printf("%s: %s\n", what, strerrorname_np(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	printf("%s: \"%s\"\n", what, buf);
}

static void try_open(const char *p) {
	char what[256];
	snprintf(what, sizeof what, "open %s", p);
	show_fd(what, open(P(p), O_RDONLY));
}

static void result(const char *what, int r) {
	printf("%s: %s\n", what, r < 0 ? strerrorname_np(errno) : "ok");
}

static volatile int stop;

// Swaps /data/race between a file and symlinks that climb out of the
// bind while the main thread opens it.
static void *swapper(void *arg) {
	(void)arg;
	const char *targets[] = {"../outside.txt", "../../../../outside.txt", "/../outside.txt"};
	for (int i = 0; !stop; i++) {
		unlink(P("/data/race"));
		if (i & 1) {
			int fd = open(P("/data/race"), O_WRONLY | O_CREAT, 0644);
			if (fd >= 0) {
				write(fd, "harmless\n", 9);
				close(fd);
			}
		} else {
			symlink(targets[(i / 2) % 3], P("/data/race"));
		}
	}
	return NULL;
}

static void list(const char *p) {
	struct dirent **ents;
	int n = scandir(P(p), &ents, NULL, alphasort);
	if (n < 0) {
		printf("ls %s: %s\n", p, strerrorname_np(errno));
		return;
	}
	printf("ls %s:", p);
	for (int i = 0; i < n; i++) {
		printf(" %s", ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	printf("\n");
}

int main(int argc, char **argv) {
	if (argc > 1)
		base = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);

	// Reads through the binds.
	try_open("/data/file.txt");
	try_open("/ro/file.txt");
	try_open("/cfg.txt");
	list("/ro");
	struct stat st;
	result("stat /data/sub is a dir", stat(P("/data/sub"), &st) < 0 ? -1 : S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1));

	// Leaving a bind: ".." at its top is the mount point's parent in the
	// guest's tree, symlinks resolve there too.
	try_open("/data/up");
	try_open("/data/abs");
	try_open("/data/top/etc/secret.txt");
	try_open("/data/top/outside.txt");
	try_open("/data/sub/../../etc/secret.txt");
	try_open("/data/sub/../up");
	result("chdir /data/sub", chdir(P("/data/sub")));
	char cwd[4096];
	if (getcwd(cwd, sizeof cwd))
		printf("getcwd: %s\n", cwd + strlen(base));
	show_fd("open ../file.txt", open("../file.txt", O_RDONLY));
	show_fd("open ../../etc/secret.txt", open("../../etc/secret.txt", O_RDONLY));
	show_fd("open ../../outside.txt", open("../../outside.txt", O_RDONLY));
	show_fd("open ../top/etc/secret.txt", open("../top/etc/secret.txt", O_RDONLY));
	result("chdir ../..", chdir("../.."));
	if (getcwd(cwd, sizeof cwd))
		printf("getcwd: %s\n", cwd[strlen(base)] ? cwd + strlen(base) : "/");
	int dfd = open(P("/data"), O_RDONLY | O_DIRECTORY);
	show_fd("openat data ../etc/secret.txt", openat(dfd, "../etc/secret.txt", O_RDONLY));
	show_fd("openat data up", openat(dfd, "up", O_RDONLY));
	close(dfd);

	// A bind inside a bind.
	try_open("/data/sub/nest/n.txt");
	try_open("/data/sub/nest/up2");
	result("rename /data/sub/nest/n.txt /data/sub/n", rename(P("/data/sub/nest/n.txt"), P("/data/sub/n")));
	result("link /data/file.txt /data/sub/nest/l", link(P("/data/file.txt"), P("/data/sub/nest/l")));
	result("rmdir /data/sub/nest", rmdir(P("/data/sub/nest")));
	result("rmdir /data/sub", rmdir(P("/data/sub")));

	// Writes inside the read-write bind reach the host directory.
	int fd = open(P("/data/new.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	result("create /data/new.txt", fd);
	if (fd >= 0) {
		result("write", write(fd, "written\n", 8) == 8 ? 0 : -1);
		close(fd);
	}
	result("rename /data/new.txt /data/sub/moved.txt", rename(P("/data/new.txt"), P("/data/sub/moved.txt")));
	try_open("/data/sub/moved.txt");
	result("mkdir /data/d", mkdir(P("/data/d"), 0755));
	result("rmdir /data/d", rmdir(P("/data/d")));

	// Every change on the read-only bind: EROFS.
	result("open /ro/file.txt O_WRONLY", open(P("/ro/file.txt"), O_WRONLY));
	result("open /ro/file.txt O_RDWR", open(P("/ro/file.txt"), O_RDWR));
	result("open /ro/file.txt O_TRUNC", open(P("/ro/file.txt"), O_RDONLY | O_TRUNC));
	result("creat /ro/new", open(P("/ro/new"), O_WRONLY | O_CREAT, 0644));
	result("creat excl /ro/file.txt", open(P("/ro/file.txt"), O_WRONLY | O_CREAT | O_EXCL, 0644));
	result("unlink /ro/file.txt", unlink(P("/ro/file.txt")));
	result("rename /ro/file.txt /ro/x", rename(P("/ro/file.txt"), P("/ro/x")));
	result("link /ro/file.txt /ro/l", link(P("/ro/file.txt"), P("/ro/l")));
	result("symlink /ro/s", symlink("file.txt", P("/ro/s")));
	result("mkdir /ro/d", mkdir(P("/ro/d"), 0755));
	result("mkdir /ro/file.txt", mkdir(P("/ro/file.txt"), 0755));
	result("rmdir /ro", rmdir(P("/ro")));
	result("chmod /ro/file.txt", chmod(P("/ro/file.txt"), 0600));
	result("utimes /ro/file.txt", utimes(P("/ro/file.txt"), NULL));
	result("chown /ro/file.txt", chown(P("/ro/file.txt"), getuid(), -1));
	result("lchown /ro/tow", lchown(P("/ro/tow"), getuid(), -1));
	result("truncate /ro/file.txt", truncate(P("/ro/file.txt"), 0));
	result("mkfifo /ro/fifo", mkfifo(P("/ro/fifo"), 0644));
	fd = open(P("/ro/file.txt"), O_RDONLY);
	result("fchmod /ro/file.txt", fchmod(fd, 0600));
	result("fchown /ro/file.txt", fchown(fd, getuid(), -1));
	close(fd);
	result("open /cfg.txt O_WRONLY", open(P("/cfg.txt"), O_WRONLY));
	result("truncate /cfg.txt", truncate(P("/cfg.txt"), 0));
	result("access /ro/file.txt R_OK", access(P("/ro/file.txt"), R_OK));
	result("access /ro/file.txt W_OK", access(P("/ro/file.txt"), W_OK));
	fd = open(P("/ro/file.txt"), O_RDONLY);
	result("futimens /ro/file.txt", futimens(fd, NULL));
	close(fd);
	// A symlink on the read-only bind to a file on the read-write one:
	// the target's mount decides.
	fd = open(P("/ro/tow"), O_WRONLY | O_APPEND);
	result("open /ro/tow O_WRONLY", fd);
	if (fd >= 0)
		close(fd);

	// A file opened through a symlink to the read-only bind stays on it
	// when the symlink is pointed at the read-write one.
	result("symlink /swing -> /ro", symlink(P("/ro"), P("/swing")));
	fd = open(P("/swing/file.txt"), O_RDONLY);
	unlink(P("/swing"));
	result("symlink /swing -> /data", symlink(P("/data"), P("/swing")));
	result("fchmod /swing/file.txt (opened on /ro)", fchmod(fd, 0600));
	result("fchown /swing/file.txt (opened on /ro)", fchown(fd, getuid(), -1));
	result("futimens /swing/file.txt (opened on /ro)", futimens(fd, NULL));
	close(fd);
	unlink(P("/swing"));

	// Across mounts: EXDEV; mount points stay.
	result("rename /data/file.txt /ro/x", rename(P("/data/file.txt"), P("/ro/x")));
	result("rename /data/file.txt /moved.txt", rename(P("/data/file.txt"), P("/moved.txt")));
	result("rename /etc/secret.txt /data/s", rename(P("/etc/secret.txt"), P("/data/s")));
	result("link /data/file.txt /lnk", link(P("/data/file.txt"), P("/lnk")));
	result("rename /data /data2", rename(P("/data"), P("/data2")));
	result("rmdir /data", rmdir(P("/data")));
	result("unlink /cfg.txt", unlink(P("/cfg.txt")));
	try_open("/data/file.txt");
	try_open("/etc/secret.txt");

	// A symlink race inside the bind: never the file outside it.
	pthread_t th;
	pthread_create(&th, NULL, swapper, NULL);
	int escaped = 0, opened = 0;
	for (int i = 0; i < 1000000 && opened < 300; i++) {
		char buf[16] = {0};
		int rfd = open(P("/data/race"), O_RDONLY);
		if (rfd < 0)
			continue;
		opened++;
		if (read(rfd, buf, sizeof buf - 1) > 0 && strncmp(buf, "OUTSIDE", 7) == 0)
			escaped++;
		close(rfd);
	}
	stop = 1;
	pthread_join(th, NULL);
	unlink(P("/data/race"));
	printf("race: escaped %d times%s\n", escaped, opened ? "" : " (never opened)");
	return 0;
}
