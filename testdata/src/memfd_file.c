/* File syscalls: truncate/ftruncate (regular, read-only, pipe, memfd),
 * fallocate (mode 0, KEEP_SIZE, PUNCH_HOLE), utimensat (UTIME_NOW,
 * UTIME_OMIT, AT_SYMLINK_NOFOLLOW), utimes, futimens, statx argument
 * checks and fields, copy_file_range, memfd_create (read/write/seek,
 * MAP_SHARED coherent with write(2) and between two mappings, seals,
 * /proc/self/fd name). Works in a directory under argv[1]. Prints no
 * inode numbers or times (--det virtualises every stat time). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

static void check(const char *what, long r) {
	if (r < 0) printf("%s: -1 %s\n", what, strerrorname_np(errno));
	else printf("%s: %ld\n", what, r);
}

static long fsize(const char *p) {
	struct stat st;
	return stat(p, &st) < 0 ? -1 : (long)st.st_size;
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/memfd_file.d", argc > 1 ? argv[1] : ".");
	mkdir(dir, 0755);
	if (chdir(dir) < 0) { perror("chdir"); return 1; }
	int fd = open("a", O_CREAT | O_RDWR | O_TRUNC, 0644);
	write(fd, "0123456789", 10);
	check("truncate 4", truncate("a", 4));
	printf("size %ld\n", fsize("a"));
	check("truncate grow", truncate("a", 8192));
	printf("size %ld\n", fsize("a"));
	check("truncate neg", truncate("a", -1));
	check("truncate dir", truncate(".", 0));
	check("truncate missing", truncate("nope", 0));
	check("ftruncate 100", ftruncate(fd, 100));
	printf("size %ld\n", fsize("a"));
	int ro = open("a", O_RDONLY);
	check("ftruncate rdonly", ftruncate(ro, 0));
	int p[2];
	pipe(p);
	check("ftruncate pipe", ftruncate(p[1], 0));
	check("ftruncate badfd", ftruncate(99, 0));
	/* fallocate */
	check("fallocate 0", fallocate(fd, 0, 0, 4096 * 3));
	printf("size %ld\n", fsize("a"));
	check("fallocate keep", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4096 * 5));
	printf("size %ld\n", fsize("a"));
	pwrite(fd, "xxxxxxxxxx", 10, 4096);
	check("punch hole", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 4096));
	char b[16] = {0};
	pread(fd, b, 10, 4096);
	printf("after punch zero %d, size %ld\n", b[0] == 0 && b[9] == 0, fsize("a"));
	check("punch without keep", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 1));
	check("fallocate rdonly", fallocate(ro, 0, 0, 1));
	check("fallocate pipe", fallocate(p[1], 0, 0, 1));
	check("fallocate len 0", fallocate(fd, 0, 0, 0));
	/* times */
	struct timespec ts[2] = {{1000000000, 5}, {1100000000, 7}};
	check("utimensat", utimensat(AT_FDCWD, "a", ts, 0));
	struct stat st;
	stat("a", &st);
	struct timespec omit[2] = {{0, UTIME_OMIT}, {1200000000, 0}};
	check("utimensat omit", utimensat(AT_FDCWD, "a", omit, 0));
	stat("a", &st);
	struct timespec now[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
	check("utimensat now", utimensat(AT_FDCWD, "a", now, 0));
	stat("a", &st);
	struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
	check("utimensat bad nsec", utimensat(AT_FDCWD, "a", bad, 0));
	check("utimensat bad flag", utimensat(AT_FDCWD, "a", ts, 0x4000));
	symlink("a", "lnk");
	struct timespec lt[2] = {{1300000000, 0}, {1300000000, 0}};
	check("utimensat nofollow", utimensat(AT_FDCWD, "lnk", lt, AT_SYMLINK_NOFOLLOW));
	struct stat lst;
	lstat("lnk", &lst);
	stat("a", &st);
	struct timeval tv[2] = {{1400000000, 3}, {1400000001, 4}};
	check("utimes", utimes("a", tv));
	stat("a", &st);
	struct utimbuf ub = {1500000000, 1500000002};
	check("utime", utime("a", &ub));
	stat("a", &st);
	struct timespec ft[2] = {{1600000000, 0}, {1600000009, 0}};
	check("futimens", futimens(fd, ft));
	fstat(fd, &st);
	check("utimensat missing", utimensat(AT_FDCWD, "nope", ts, 0));
	/* statx */
	struct statx sx;
	check("statx", statx(AT_FDCWD, "a", 0, STATX_BASIC_STATS, &sx));
	printf("statx mask basic %d size %llu mode %o\n", (sx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS,
	       (unsigned long long)sx.stx_size, sx.stx_mode & 07777);
	check("statx bad flags", statx(AT_FDCWD, "a", 0x80000, STATX_BASIC_STATS, &sx));
	check("statx reserved mask", statx(AT_FDCWD, "a", 0, 0x80000000u, &sx));
	check("statx sync both", statx(AT_FDCWD, "a", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx));
	check("statx empty path", statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &sx));
	printf("fd size %llu\n", (unsigned long long)sx.stx_size);
	/* copy_file_range */
	ftruncate(fd, 0);
	pwrite(fd, "abcdefghijklmnopqrstuvwxyz", 26, 0);
	int out = open("b", O_CREAT | O_RDWR | O_TRUNC, 0644);
	loff_t in_off = 3, out_off = 0;
	check("copy_file_range", copy_file_range(fd, &in_off, out, &out_off, 10, 0));
	printf("offsets %lld %lld\n", (long long)in_off, (long long)out_off);
	lseek(fd, 20, SEEK_SET);
	check("copy_file_range pos", copy_file_range(fd, NULL, out, NULL, 100, 0));
	printf("in pos %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	memset(b, 0, sizeof b);
	pread(out, b, 16, 0);
	printf("b: \"%s\"\n", b);
	check("copy_file_range flags", copy_file_range(fd, NULL, out, NULL, 1, 1));
	check("copy_file_range pipe", copy_file_range(fd, NULL, p[1], NULL, 1, 0));
	check("copy_file_range rdonly out", copy_file_range(fd, NULL, ro, NULL, 1, 0));
	loff_t o1 = 0, o2 = 5;
	check("copy_file_range overlap", copy_file_range(fd, &o1, fd, &o2, 10, 0));
	/* memfd */
	int m = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	check("memfd_create", m >= 0 ? 0 : -1);
	char link[256] = {0}, path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", m);
	readlink(path, link, sizeof link - 1);
	printf("link \"%s\" cloexec %d\n", link, fcntl(m, F_GETFD) & FD_CLOEXEC);
	check("write", write(m, "hello memfd", 11));
	fstat(m, &st);
	printf("size %ld mode %o regular %d\n", (long)st.st_size, st.st_mode & 07777, S_ISREG(st.st_mode));
	check("lseek", lseek(m, 0, SEEK_SET));
	memset(b, 0, sizeof b);
	read(m, b, 5);
	printf("read \"%s\"\n", b);
	check("ftruncate memfd", ftruncate(m, 8192));
	char *m1 = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	char *m2 = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	printf("map sees \"%.11s\"\n", m1);
	strcpy(m1 + 4096, "via map");
	printf("other map sees \"%s\"\n", m2 + 4096);
	memset(b, 0, sizeof b);
	pread(m, b, 7, 4096);
	printf("pread sees \"%s\"\n", b);
	pwrite(m, "WRITE", 5, 0);
	printf("map sees write \"%.11s\"\n", m2);
	char *priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, m, 0);
	priv[0] = 'p';
	printf("private copy \"%.5s\" file \"%.5s\"\n", priv, m1);
	int maps = 0;
	FILE *mf = fopen("/proc/self/maps", "r");
	char line[512];
	while (fgets(line, sizeof line, mf))
		if (strstr(line, "/memfd:test (deleted)")) maps++;
	fclose(mf);
	printf("maps lines %d\n", maps);
	check("F_GET_SEALS", fcntl(m, F_GET_SEALS));
	check("seal write while mapped", fcntl(m, F_ADD_SEALS, F_SEAL_WRITE));
	munmap(m1, 8192);
	munmap(m2, 8192);
	check("F_ADD_SEALS shrink|grow", fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
	check("shrink sealed", ftruncate(m, 10));
	check("grow sealed", ftruncate(m, 9000));
	check("write past end sealed", pwrite(m, "z", 1, 8192));
	check("write inside", pwrite(m, "z", 1, 0));
	check("F_ADD_SEALS write|seal", fcntl(m, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SEAL));
	check("write sealed", write(m, "z", 1));
	check("mmap shared write sealed", mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0) == MAP_FAILED ? -1 : 0);
	check("F_ADD_SEALS after seal", fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK));
	check("F_GET_SEALS", fcntl(m, F_GET_SEALS));
	int m3 = memfd_create("nosealing", 0);
	check("seals without ALLOW_SEALING", fcntl(m3, F_ADD_SEALS, F_SEAL_WRITE));
	check("F_GET_SEALS", fcntl(m3, F_GET_SEALS));
	check("F_GET_SEALS on file", fcntl(fd, F_GET_SEALS));
	check("memfd bad flags", memfd_create("x", 0x100));
	char longname[300];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	check("memfd long name", memfd_create(longname, 0));
	unlink("lnk");
	unlink("a");
	unlink("b");
	chdir("..");
	rmdir(dir);
	return 0;
}
