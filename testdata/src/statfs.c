/* statfs(2) and fstatfs(2) as a confined guest sees them (cmd/uvm
   TestStatfs): for each path argument, statfs and fstatfs of a descriptor
   opened on it, then fstatfs of a pipe, a socket, an eventfd and a memfd.
   Printed: the file system type (proc, tmpfs and the kernel's pseudo file
   systems by name, the root's host file system, whatever it is, as
   "root's"), f_bsize, f_namelen, f_frsize,
   f_flags by name, and the block and inode counts as relations (all zero,
   or a tmpfs with nothing stored), never the host-specific numbers;
   whether fstatfs agrees with statfs field by field and whether f_fsid is
   the device st_dev reports (simple_statfs's). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

static const char *typename(long t) {
	switch (t) {
	case 0x9fa0: return "proc";
	case 0x01021994: return "tmpfs";
	case 0x50495045: return "pipefs";
	case 0x534f434b: return "sockfs";
	case 0x09041934: return "anon_inodefs";
	case 0: return "root's";
	}
	return "other";
}

static void flags(unsigned long f) {
	static const struct { unsigned long bit; const char *name; } names[] = {
		{0x1, "rdonly"}, {0x2, "nosuid"}, {0x4, "nodev"}, {0x8, "noexec"}, {0x10, "sync"},
		{0x20, "valid"}, {0x40, "mand"}, {0x400, "noatime"}, {0x800, "nodiratime"},
		{0x1000, "relatime"}, {0x2000, "nosymfollow"},
	};
	printf(" flags=");
	const char *sep = "";
	for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
		if (f & names[i].bit) { printf("%s%s", sep, names[i].name); sep = ","; f &= ~names[i].bit; }
	if (f) printf("%s0x%lx", sep, f);
}

static void counts(const struct statfs *s) {
	if (!s->f_blocks && !s->f_bfree && !s->f_bavail && !s->f_files && !s->f_ffree) {
		printf(" counts=zero");
		return;
	}
	if (!s->f_type) {
		printf(" counts=%s", s->f_bfree <= s->f_blocks && s->f_bavail <= s->f_bfree && s->f_ffree <= s->f_files ? "sane" : "insane");
		return;
	}
	printf(" counts=%s", s->f_blocks > 0 && s->f_bfree == s->f_blocks && s->f_bavail == s->f_bfree &&
		s->f_files == s->f_blocks && s->f_ffree > 0 && s->f_ffree < s->f_files ? "empty-tmpfs" : "other");
}

static void show(const char *what, const struct statfs *s) {
	printf("%s type=%s bsize=%ld namelen=%ld frsize=%ld", what, typename(s->f_type), (long)s->f_bsize,
		(long)s->f_namelen, (long)s->f_frsize);
	flags(s->f_flags);
	counts(s);
}

static int same(const struct statfs *a, const struct statfs *b) {
	/* f_bfree, f_bavail and f_ffree of a disk may move between the calls. */
	return a->f_type == b->f_type && a->f_bsize == b->f_bsize && a->f_blocks == b->f_blocks &&
		a->f_files == b->f_files && !memcmp(&a->f_fsid, &b->f_fsid, sizeof a->f_fsid) &&
		a->f_namelen == b->f_namelen && a->f_frsize == b->f_frsize && a->f_flags == b->f_flags;
}

static const char *fsidIsDev(const struct statfs *s, dev_t dev) {
	unsigned long long id = (minor(dev) & 0xff) | (major(dev) << 8) | ((unsigned long long)(minor(dev) & ~0xff) << 12);
	return (unsigned)s->f_fsid.__val[0] == (unsigned)id && (unsigned)s->f_fsid.__val[1] == (unsigned)(id >> 32) ? "dev" : "other";
}

static void onfd(const char *what, int fd, int fsid) {
	struct statfs s;
	struct stat st;
	if (fd < 0) { printf("%s: open: %s\n", what, strerror(errno)); return; }
	if (fstatfs(fd, &s) != 0) { printf("%s: fstatfs: %s\n", what, strerror(errno)); close(fd); return; }
	show(what, &s);
	if (fsid && fstat(fd, &st) == 0) printf(" fsid=%s", fsidIsDev(&s, st.st_dev));
	printf("\n");
	close(fd);
}

int main(int argc, char **argv) {
	struct statfs root;
	if (statfs("/", &root) != 0) { printf("/: statfs: %s\n", strerror(errno)); return 1; }
	for (int i = 1; i < argc; i++) {
		struct statfs s, fs;
		struct stat st;
		if (statfs(argv[i], &s) != 0) { printf("%s: statfs: %s\n", argv[i], strerror(errno)); continue; }
		struct statfs orig = s;
		if (s.f_type == root.f_type && s.f_blocks == root.f_blocks && !memcmp(&s.f_fsid, &root.f_fsid, sizeof s.f_fsid)) {
			/* The host file system of the root: any type. */
			s.f_type = 0;
			show(argv[i], &s);
		} else
			show(argv[i], &s);
		if (!strcmp(typename(s.f_type), "proc") && stat(argv[i], &st) == 0)
			printf(" fsid=%s", fsidIsDev(&s, st.st_dev));
		int fd = open(argv[i], O_RDONLY);
		if (fd < 0) printf(" open: %s", strerror(errno));
		else {
			if (fstatfs(fd, &fs) != 0) printf(" fstatfs: %s", strerror(errno));
			else printf(" fstatfs=%s", same(&orig, &fs) ? "same" : "differs");
			close(fd);
		}
		printf("\n");
	}
	int p[2], sv[2];
	if (pipe(p) == 0) {
		char name[64];
		snprintf(name, sizeof name, "/proc/self/fd/%d", p[0]);
		struct statfs s;
		if (statfs(name, &s) == 0) { show("/proc/self/fd/PIPE", &s); printf("\n"); }
		else printf("/proc/self/fd/PIPE: statfs: %s\n", strerror(errno));
		close(p[1]);
		onfd("pipe", p[0], 1);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) { close(sv[1]); onfd("socket", sv[0], 1); }
	onfd("eventfd", eventfd(0, 0), 1);
	onfd("memfd", memfd_create("statfs", 0), 0);
	struct statfs s;
	if (fstatfs(-1, &s) != 0) printf("fstatfs(-1): %s\n", strerror(errno));
	return 0;
}
