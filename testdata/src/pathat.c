// pathat: relative names are looked up from the directory a descriptor or
// the cwd holds, not from a path remembered when it was opened: a rename
// of the directory or a parent after open, "dir/." and "dir/", ".." after
// a symlink (the symlink's target's parent, not a lexical step back),
// getcwd after renames and removal, and a directory chain deeper than
// PATH_MAX walked with chdir and *at calls. Works in a directory under
// argv[1]; prints only paths relative to it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char base[4096]; // realpath of the work directory
static size_t baselen;

static const char *E(int r) { return r < 0 ? strerrorname_np(errno) : "ok"; }

// cwd prints the raw getcwd syscall's answer relative to base.
static void cwd(const char *what) {
	static char buf[8192];
	long n = syscall(SYS_getcwd, buf, sizeof buf);
	if (n < 0) {
		printf("%s: getcwd %s\n", what, strerrorname_np(errno));
		return;
	}
	if (strncmp(buf, base, baselen) == 0)
		printf("%s: getcwd BASE%s\n", what, buf + baselen);
	else
		printf("%s: getcwd outside BASE\n", what);
}

static int mkfile(int dfd, const char *name, const char *text) {
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	int r = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	close(fd);
	return r;
}

static void catl(int dfd, const char *name, const char *label) {
	char buf[64] = {0};
	int fd = openat(dfd, name, O_RDONLY);
	if (fd < 0) {
		printf("read %s: %s\n", label, strerrorname_np(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	printf("read %s: \"%s\"\n", label, buf);
}

static void cat(int dfd, const char *name) { catl(dfd, name, name); }

static void renamed(void) {
	mkdir("d", 0755);
	mkdir("d/sub", 0755);
	int fd = open("d/sub", O_RDONLY | O_DIRECTORY);
	printf("rename d e: %s\n", E(rename("d", "e")));
	printf("openat(sub, f, O_CREAT): %s\n", E(mkfile(fd, "f", "in sub\n")));
	cat(AT_FDCWD, "e/sub/f");
	printf("stat d/sub/f: %s\n", E(access("d/sub/f", F_OK)));
	printf("mkdirat(sub, g): %s\n", E(mkdirat(fd, "g", 0755)));
	printf("renameat(sub, f, sub, g/f2): %s\n", E(renameat(fd, "f", fd, "g/f2")));
	cat(fd, "g/f2");
	printf("mkfile(sub, ../top): %s\n", E(mkfile(fd, "../top", "top of e\n")));
	cat(AT_FDCWD, "e/top");
	printf("symlinkat(sub, l): %s\n", E(symlinkat("g/f2", fd, "l")));
	char t[64] = {0};
	printf("readlinkat(sub, l): %s \"%s\"\n", E(readlinkat(fd, "l", t, sizeof t - 1)), t);
	printf("linkat(sub, g/f2, AT_FDCWD, e/hard): %s\n", E(linkat(fd, "g/f2", AT_FDCWD, "e/hard", 0)));
	printf("fchmodat(sub, g/f2, 0600): %s\n", E(fchmodat(fd, "g/f2", 0600, 0)));
	struct stat st;
	const char *r = E(fstatat(fd, "g/f2", &st, 0));
	printf("fstatat(sub, g/f2): %s mode %o nlink %d\n", r, st.st_mode & 07777, (int)st.st_nlink);
	printf("unlinkat(sub, l): %s\n", E(unlinkat(fd, "l", 0)));
	// A second rename, of the parent's parent this time.
	mkdir("e/sub/g/deep", 0755);
	int dfd = open("e/sub/g/deep", O_RDONLY | O_DIRECTORY);
	printf("rename e e2: %s\n", E(rename("e", "e2")));
	cat(dfd, "../f2");
	cat(dfd, "../../../top");
	printf("fchdir(deep): %s\n", E(fchdir(dfd)));
	cwd("after fchdir to the renamed deep");
	printf("rename ../../../../e2 e3: %s\n", E(rename("../../../../e2", "../../../../e3")));
	cwd("after renaming a parent of the cwd");
	cat(AT_FDCWD, "../f2");
	printf("chdir BASE: %s\n", E(chdir(base)));
	close(dfd);
	close(fd);
}

static void dots(void) {
	mkdir("a", 0755);
	mkdir("a/b", 0755);
	mkdir("a/b/c", 0755);
	mkfile(AT_FDCWD, "a/b/marker", "marker in a/b\n");
	mkfile(AT_FDCWD, "top", "top of BASE\n");
	symlink("a/b/c", "lnk");
	// The kernel follows lnk to a/b/c, then ".." is a/b.
	cat(AT_FDCWD, "lnk/../marker");
	cat(AT_FDCWD, "lnk/../../../top");
	int fd = open(".", O_RDONLY | O_DIRECTORY);
	cat(fd, "lnk/../marker");
	struct stat st;
	const char *r = E(stat("lnk/..", &st));
	printf("stat lnk/..: %s dir %d\n", r, S_ISDIR(st.st_mode));
	printf("mkdir lnk/../made: %s\n", E(mkdir("lnk/../made", 0755)));
	printf("stat a/b/made: %s\n", E(stat("a/b/made", &st)));
	printf("rmdir lnk/../made: %s\n", E(rmdir("lnk/../made")));
	r = E(stat("a/.", &st));
	printf("stat a/.: %s dir %d\n", r, S_ISDIR(st.st_mode));
	printf("stat a/: %s\n", E(stat("a/", &st)));
	printf("stat top/: %s\n", E(stat("top/", &st)));
	printf("stat top/.: %s\n", E(stat("top/.", &st)));
	printf("open top/: %s\n", E(open("top/", O_RDONLY)));
	printf("mkdir a/.: %s\n", E(mkdir("a/.", 0755)));
	printf("mkdir a/b/..: %s\n", E(mkdir("a/b/..", 0755)));
	printf("mkdir new/: %s\n", E(mkdir("new/", 0755)));
	printf("rmdir new/: %s\n", E(rmdir("new/")));
	printf("unlink top/: %s\n", E(unlink("top/")));
	printf("fstatat(fd, a/./b/./c/.): %s\n", E(fstatat(fd, "a/./b/./c/.", &st, 0)));
	r = E(fstatat(fd, "lnk/.", &st, AT_SYMLINK_NOFOLLOW));
	printf("fstatat(fd, lnk/., NOFOLLOW) dir: %s %d\n", r, S_ISDIR(st.st_mode));
	r = E(fstatat(fd, "lnk", &st, AT_SYMLINK_NOFOLLOW));
	printf("fstatat(fd, lnk, NOFOLLOW) link: %s %d\n", r, S_ISLNK(st.st_mode));
	printf("chdir lnk/..: %s\n", E(chdir("lnk/..")));
	cwd("after chdir lnk/..");
	cat(AT_FDCWD, "marker");
	printf("fchdir BASE: %s\n", E(fchdir(fd)));
	close(fd);
}

static void removed(void) {
	mkdir("gone", 0755);
	printf("chdir gone: %s\n", E(chdir("gone")));
	printf("rmdir ../gone: %s\n", E(rmdir("../gone")));
	cwd("after removing the cwd");
	struct stat st;
	const char *r = E(stat(".", &st));
	printf("stat .: %s nlink %d\n", r, (int)st.st_nlink);
	printf("create x: %s\n", E(mkfile(AT_FDCWD, "x", "x")));
	printf("chdir BASE: %s\n", E(chdir(base)));
}

#define LEVELS 24
static void deep(void) {
	char name[201];
	memset(name, 'n', 200);
	name[200] = 0;
	int fds[LEVELS];
	int okm = 0, okc = 0;
	for (int i = 0; i < LEVELS; i++) {
		okm += mkdir(name, 0755) == 0;
		okc += chdir(name) == 0;
		fds[i] = open(".", O_RDONLY | O_DIRECTORY);
	}
	printf("deep: %d mkdir, %d chdir ok (%d levels of 200 bytes)\n", okm, okc, LEVELS);
	cwd("deep");
	errno = 0;
	char *g = getcwd(NULL, 0);
	printf("libc getcwd deep: %s\n", g ? "a path" : strerrorname_np(errno));
	free(g);
	printf("create leaf: %s\n", E(mkfile(AT_FDCWD, "leaf", "leaf\n")));
	cat(AT_FDCWD, "leaf");
	// Relative names longer than PATH_MAX in total, from a shallow
	// descriptor, taken in steps.
	char rel[4096];
	rel[0] = 0;
	for (int i = 0; i < 19; i++) {
		strcat(rel, name);
		strcat(rel, "/");
	}
	printf("openat(level 4, 19 levels down) len %zu\n", strlen(rel) + 4);
	strcat(rel, "leaf");
	catl(fds[4], rel, "19 levels down");
	printf("chdir to level 12 via fchdir: %s\n", E(fchdir(fds[12])));
	mkfile(fds[2], "mid", "mid\n");
	char up[200 + 12 * 3 + 8] = "";
	strcat(up, name);
	for (int i = 0; i < 11; i++)
		strcat(up, "/..");
	strcat(up, "/mid");
	catl(AT_FDCWD, up, "level 13/.. x11 /mid");
	printf("unlinkat(level 2, mid): %s\n", E(unlinkat(fds[2], "mid", 0)));
	printf("fchdir deepest: %s\n", E(fchdir(fds[LEVELS - 1])));
	printf("unlink leaf: %s\n", E(unlink("leaf")));
	int okr = 0;
	for (int i = LEVELS - 1; i >= 0; i--) {
		close(fds[i]);
		if (chdir("..") == 0 && rmdir(name) == 0)
			okr++;
	}
	printf("deep: %d rmdir ok\n", okr);
	cwd("back");
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/uvmpathat", argv[1]);
	if (mkdir(dir, 0755) < 0 || !realpath(dir, base) || chdir(base) < 0) {
		printf("setup: %s\n", strerrorname_np(errno));
		return 1;
	}
	baselen = strlen(base);
	cwd("start");
	renamed();
	dots();
	removed();
	deep();
	return 0;
}
