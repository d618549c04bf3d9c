/* fileio: file system calls in a scratch directory created under argv[1]
 * (or the current directory): create/write/read/pread/pwrite, lseek incl.
 * SEEK_END and holes, fstat/stat/lstat sizes and types, rename, link count,
 * symlink/readlink, dup, stdio on files, opendir/readdir (sorted here),
 * ftruncate, unlink, rmdir, and errors (ENOENT, EEXIST, ENOTEMPTY).
 * Nothing printed depends on inode numbers, times, the pid or the path. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096];

static const char *path(const char *name)
{
	static char buf[2][4200];
	static int which;

	which ^= 1;
	snprintf(buf[which], sizeof buf[which], "%s/%s", dir, name);
	return buf[which];
}

static const char *err(int e)
{
	switch (e) {
	case 0:
		return "ok";
	case ENOENT:
		return "ENOENT";
	case EEXIST:
		return "EEXIST";
	case ENOTEMPTY:
		return "ENOTEMPTY";
	case EBADF:
		return "EBADF";
	case EISDIR:
		return "EISDIR";
	case ENOTDIR:
		return "ENOTDIR";
	case EINVAL:
		return "EINVAL";
	default:
		return "other";
	}
}

static void check(const char *what, int rc)
{
	printf("%s: %s\n", what, rc < 0 ? err(errno) : "ok");
}

static const char *kind(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink" :
								       "other";
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[64];
	int n = 0, i;

	if (!d) {
		printf("opendir: %s\n", err(errno));
		return;
	}
	while ((e = readdir(d)) && n < 64)
		names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], cmpstr);
	printf("listing (%d):", n);
	for (i = 0; i < n; i++) {
		struct stat st;

		if (strcmp(names[i], ".") && strcmp(names[i], "..") &&
		    lstat(path(names[i]), &st) == 0)
			printf(" %s[%s,%lld]", names[i], kind(st.st_mode),
			       S_ISDIR(st.st_mode) ? 0LL :
						     (long long)st.st_size);
		else
			printf(" %s", names[i]);
		free(names[i]);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : ".";
	char buf[8192], small[64];
	struct stat st;
	ssize_t n;
	off_t off;
	FILE *f;
	int fd, fd2, i;
	long sum;

	umask(022);
	snprintf(dir, sizeof dir, "%s/uvm-fileio-%d", base, (int)getpid());
	check("mkdir", mkdir(dir, 0755));
	check("mkdir again", mkdir(dir, 0755));

	fd = open(path("data.bin"), O_CREAT | O_RDWR | O_TRUNC, 0644);
	check("open data.bin", fd);
	for (i = 0; i < (int)sizeof buf; i++)
		buf[i] = (char)(i * 13 + 7);
	n = write(fd, buf, 5000);
	printf("write: %zd\n", n);
	n = write(fd, "tail-end", 8);
	printf("write: %zd\n", n);
	off = lseek(fd, 0, SEEK_CUR);
	printf("lseek cur: %lld\n", (long long)off);
	off = lseek(fd, 0, SEEK_SET);
	printf("lseek set: %lld\n", (long long)off);
	memset(buf, 0, sizeof buf);
	n = read(fd, buf, sizeof buf);
	for (i = 0, sum = 0; i < 5000; i++)
		sum += (unsigned char)buf[i] * (i % 251 + 1);
	printf("read: %zd sum=%ld tail=%.8s\n", n, sum, buf + 5000);
	n = read(fd, buf, sizeof buf);
	printf("read at eof: %zd\n", n);
	off = lseek(fd, -8, SEEK_END);
	n = read(fd, small, 4);
	printf("lseek end-8: %lld read %zd '%.4s'\n", (long long)off, n, small);
	n = pwrite(fd, "PW", 2, 10);
	n = pread(fd, small, 6, 8);
	printf("pwrite/pread: %zd '%c%c' pos=%lld\n", n, small[2], small[3],
	       (long long)lseek(fd, 0, SEEK_CUR));
	/* a hole: seek past the end and write */
	off = lseek(fd, 20000, SEEK_SET);
	n = write(fd, "X", 1);
	check("fstat", fstat(fd, &st));
	printf("fstat: size=%lld type=%s mode=%o\n", (long long)st.st_size,
	       kind(st.st_mode), (unsigned)(st.st_mode & 0777));
	n = pread(fd, small, 4, 19998);
	printf("hole bytes: %d %d %c\n", small[0], small[1], small[2]);
	check("ftruncate", ftruncate(fd, 1234));
	fstat(fd, &st);
	printf("after ftruncate: size=%lld\n", (long long)st.st_size);
	fd2 = dup(fd);
	printf("dup shares offset: %lld\n",
	       (long long)(lseek(fd, 100, SEEK_SET), lseek(fd2, 0, SEEK_CUR)));
	close(fd2);
	check("close", close(fd));
	check("close again", close(fd));

	/* stdio */
	f = fopen(path("text.txt"), "w");
	for (i = 1; i <= 100; i++)
		fprintf(f, "line %d: %d\n", i, i * i);
	fclose(f);
	f = fopen(path("text.txt"), "r");
	sum = 0;
	i = 0;
	while (fgets(buf, sizeof buf, f)) {
		int a, b;

		if (sscanf(buf, "line %d: %d", &a, &b) == 2)
			sum += b - a;
		i++;
	}
	fclose(f);
	printf("stdio: lines=%d sum=%ld\n", i, sum);
	f = fopen(path("text.txt"), "a");
	fputs("appended\n", f);
	fclose(f);
	check("stat text.txt", stat(path("text.txt"), &st));
	printf("text.txt size=%lld nlink=%ld\n", (long long)st.st_size,
	       (long)st.st_nlink);

	check("link", link(path("text.txt"), path("hard.txt")));
	stat(path("text.txt"), &st);
	printf("nlink after link: %ld\n", (long)st.st_nlink);
	check("symlink", symlink("text.txt", path("sym.lnk")));
	n = readlink(path("sym.lnk"), small, sizeof small - 1);
	small[n < 0 ? 0 : n] = 0;
	printf("readlink: %zd '%s'\n", n, small);
	check("stat via symlink", stat(path("sym.lnk"), &st));
	printf("  -> %s size=%lld\n", kind(st.st_mode), (long long)st.st_size);
	lstat(path("sym.lnk"), &st);
	printf("lstat: %s\n", kind(st.st_mode));
	check("rename", rename(path("data.bin"), path("moved.bin")));
	check("mkdir sub", mkdir(path("sub"), 0700));
	fd = openat(AT_FDCWD, path("sub/inner"), O_CREAT | O_WRONLY, 0600);
	check("openat sub/inner", fd);
	close(fd);
	check("access moved.bin", access(path("moved.bin"), R_OK | W_OK));
	check("access data.bin", access(path("data.bin"), F_OK));
	check("open missing", open(path("nope"), O_RDONLY));
	check("open O_EXCL existing",
	      open(path("moved.bin"), O_CREAT | O_EXCL | O_WRONLY, 0644));
	check("read dir", (fd = open(dir, O_RDONLY | O_DIRECTORY)) < 0 ?
				  -1 :
				  (int)read(fd, buf, 10));
	close(fd);
	list();

	check("rmdir non-empty", rmdir(path("sub")));
	check("unlink sub/inner", unlink(path("sub/inner")));
	check("rmdir sub", rmdir(path("sub")));
	check("unlink moved.bin", unlink(path("moved.bin")));
	check("unlink text.txt", unlink(path("text.txt")));
	stat(path("hard.txt"), &st);
	printf("hard.txt survives: size=%lld nlink=%ld\n",
	       (long long)st.st_size, (long)st.st_nlink);
	check("unlink hard.txt", unlink(path("hard.txt")));
	check("unlink sym.lnk", unlink(path("sym.lnk")));
	check("unlink again", unlink(path("sym.lnk")));
	list();
	check("rmdir", rmdir(dir));
	check("rmdir again", rmdir(dir));
	return 0;
}
