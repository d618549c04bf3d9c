/* The mount table through /etc/mtab and mountstats, as a confined guest
   sees them (cmd/uvm TestMtab): getmntent(3) on each path argument (in
   the test: /etc/mtab, a link to ../proc/self/mounts as on Debian, and
   links to it by an absolute name, through a link to a directory, a
   chain of links and a link on a bind), then the symlinks' other uses
   (stat, lstat, statfs, readlink, access, O_NOFOLLOW, a link to
   ../dev/null) and /proc/self/mountstats and /proc/PID/mountstats.
   Host-specific fields (devices, disk types, sources) are left out. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

static int virt(const char *t) { return !strcmp(t, "proc") || !strcmp(t, "devtmpfs"); }

static void mtab(const char *p) {
	FILE *f = setmntent(p, "r");
	if (!f) { printf("%s: setmntent: %s\n", p, strerror(errno)); return; }
	struct mntent *m;
	while ((m = getmntent(f)))
		printf("%s: %s %s %s %s freq=%d passno=%d\n", p, m->mnt_dir, virt(m->mnt_type) ? m->mnt_type : "disk",
		       virt(m->mnt_type) ? m->mnt_fsname : "-", hasmntopt(m, "ro") ? "ro" : "rw", m->mnt_freq, m->mnt_passno);
	endmntent(f);
}

static void mountstats(const char *p) {
	FILE *f = fopen(p, "r");
	if (!f) { printf("%s: open: %s\n", p, strerror(errno)); return; }
	char line[4096];
	while (fgets(line, sizeof line, f)) {
		char dev[1024], pt[1024], type[256];
		if (sscanf(line, "device %1023s mounted on %1023s with fstype %255s", dev, pt, type) != 3) {
			printf("%s: bad line %s", p, line);
			continue;
		}
		printf("mountstats %s %s %s\n", pt, virt(type) ? type : "disk", virt(type) ? dev : "-");
	}
	fclose(f);
}

static const char *kind(mode_t m) {
	return S_ISREG(m) ? "reg" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "lnk" : S_ISCHR(m) ? "chr" : "other";
}

int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) mtab(argv[i]);

	struct stat a, b;
	if (stat("/etc/mtab", &a) == 0 && stat("/proc/self/mounts", &b) == 0)
		printf("stat /etc/mtab: %s, same inode as /proc/self/mounts: %s\n", kind(a.st_mode),
		       a.st_dev == b.st_dev && a.st_ino == b.st_ino ? "yes" : "no");
	else printf("stat /etc/mtab: %s\n", strerror(errno));
	if (lstat("/etc/mtab", &a) == 0) printf("lstat /etc/mtab: %s\n", kind(a.st_mode));
	if (lstat("/etc/pself/status", &a) == 0) printf("lstat /etc/pself/status: %s\n", kind(a.st_mode));
	else printf("lstat /etc/pself/status: %s\n", strerror(errno));
	if (lstat("/etc/pself/exe", &a) == 0) printf("lstat /etc/pself/exe: %s\n", kind(a.st_mode));
	struct statfs s;
	if (statfs("/etc/mtab", &s) == 0) printf("statfs /etc/mtab: %s\n", s.f_type == 0x9fa0 ? "proc" : "other");
	else printf("statfs /etc/mtab: %s\n", strerror(errno));
	char buf[256];
	ssize_t n = readlink("/etc/mtab", buf, sizeof buf - 1);
	printf("readlink /etc/mtab: %.*s\n", n < 0 ? 0 : (int)n, buf);
	n = readlink("/etc/pself/exe", buf, sizeof buf - 1);
	if (n < 0) printf("readlink /etc/pself/exe: %s\n", strerror(errno));
	else printf("readlink /etc/pself/exe: %.*s\n", (int)n, buf);
	printf("access /etc/mtab R_OK: %s\n", access("/etc/mtab", R_OK) == 0 ? "ok" : strerror(errno));
	int fd = open("/etc/mtab", O_RDONLY | O_NOFOLLOW);
	printf("open /etc/mtab O_NOFOLLOW: %s\n", fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0) close(fd);
	fd = open("/etc/dangling", O_RDONLY);
	printf("open /etc/dangling: %s\n", fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0) close(fd);
	fd = open("/etc/null", O_RDWR);
	if (fd < 0) printf("open /etc/null: %s\n", strerror(errno));
	else {
		ssize_t w = write(fd, "x", 1), r = read(fd, buf, sizeof buf);
		fstat(fd, &a);
		printf("/etc/null: %s %d:%d write %zd read %zd\n", kind(a.st_mode), (int)(a.st_rdev >> 8), (int)(a.st_rdev & 0xff), w, r);
		close(fd);
	}

	mountstats("/proc/self/mountstats");
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/mountstats", getpid());
	mountstats(p);
	if (stat("/proc/self/mountstats", &a) == 0) printf("mountstats mode %o\n", a.st_mode & 07777);
	snprintf(p, sizeof p, "/proc/self/task/%d/mountstats", gettid());
	printf("task mountstats: %s\n", stat(p, &a) == 0 ? "exists" : strerror(errno));
	return 0;
}
