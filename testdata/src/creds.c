/* creds: credentials and the calls whose answer depends on them, as an
 * unprivileged user (uid 1000, gid 1000, groups {1000}: a program
 * started as root first becomes that user; uvm --det starts as it).
 *
 *   creds DIR          the unprivileged rules (MANIFEST)
 *   creds --root DIR   the privileged rules, for a program started as
 *                      root (cmd/uvm's TestCredsRoot; not in MANIFEST)
 *
 * Only errno names and relations between ids are printed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

static const char *en(long r)
{
	if (r >= 0)
		return "ok";
	switch (errno) {
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case ESRCH: return "ESRCH";
	case EEXIST: return "EEXIST";
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EFAULT: return "EFAULT";
	case ENOTDIR: return "ENOTDIR";
	}
	static char b[32];
	snprintf(b, sizeof b, "errno %d", errno);
	return b;
}

#define SHOW(what, call) printf("%-44s %s\n", what, en((long)(call)))

static void ids(const char *when)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;
	getresuid(&r, &e, &s);
	getresgid(&rg, &eg, &sg);
	unsigned fs = setfsuid(-1), fsg = setfsgid(-1);
	printf("%s: uid %u euid %u suid %u fsuid %u / gid %u egid %u sgid %u fsgid %u\n", when, r, e, s, fs, rg, eg,
	       sg, fsg);
}

static void caps(const char *when)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0) {
		printf("%s: capget %s\n", when, en(-1));
		return;
	}
	printf("%s: caps eff %08x%08x prm %08x%08x inh %08x%08x\n", when, d[1].effective, d[0].effective,
	       d[1].permitted, d[0].permitted, d[1].inheritable, d[0].inheritable);
}

static void capability_calls(void)
{
	struct __user_cap_header_struct h = {0x12345678, 0};
	struct __user_cap_data_struct d[2] = {{0}};
	SHOW("capget bad version", syscall(SYS_capget, &h, d));
	printf("%-44s %s\n", "  header now holds version 3", h.version == _LINUX_CAPABILITY_VERSION_3 ? "yes" : "no");
	h.version = 0x12345678;
	SHOW("capget bad version, NULL data (a probe)", syscall(SYS_capget, &h, NULL));
	h.version = _LINUX_CAPABILITY_VERSION_3;
	h.pid = -1;
	SHOW("capget pid -1", syscall(SYS_capget, &h, d));
	h.pid = 999999;
	SHOW("capget pid 999999", syscall(SYS_capget, &h, d));
	h.pid = getpid();
	SHOW("capget own pid", syscall(SYS_capget, &h, d));
	h.pid = 1;
	SHOW("capset pid 1", syscall(SYS_capset, &h, d));
	h.pid = 0;
	SHOW("prctl PR_CAPBSET_READ CAP_CHOWN", prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0));
	printf("%-44s %d\n", "  value", (int)prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0));
	SHOW("prctl PR_CAPBSET_READ 41", prctl(PR_CAPBSET_READ, 41, 0, 0, 0));
	SHOW("prctl PR_SET_KEEPCAPS 2", prctl(PR_SET_KEEPCAPS, 2, 0, 0, 0));
	printf("%-44s %d\n", "prctl PR_GET_KEEPCAPS", (int)prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
}

static void namespaces(void)
{
	SHOW("unshare(0)", unshare(0));
	SHOW("unshare(CLONE_FS|CLONE_FILES|CLONE_SYSVSEM)", unshare(CLONE_FS | CLONE_FILES | CLONE_SYSVSEM));
	SHOW("unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS));
	SHOW("unshare(CLONE_NEWNET)", unshare(CLONE_NEWNET));
	SHOW("unshare(CLONE_NEWPID)", unshare(CLONE_NEWPID));
	SHOW("unshare(CLONE_NEWUTS|CLONE_NEWIPC)", unshare(CLONE_NEWUTS | CLONE_NEWIPC));
	SHOW("unshare(1)", unshare(1));
	SHOW("mount on a missing target", mount("none", "/nonexistent-uvm-dir", "tmpfs", 0, NULL));
	SHOW("umount2 bad flags", umount2("/", 0x100));
	SHOW("pivot_root", syscall(SYS_pivot_root, "/", "/"));
	SHOW("setns(-1)", setns(-1, 0));
	SHOW("setns(stdout-ish fd)", setns(1, 0));
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	SHOW("setns(pidfd, 0)", setns(pfd, 0));
	close(pfd);
}

/* unprivileged: an ordinary user's answers */
static int unprivileged(const char *dir)
{
	char w[4096], f[4200], l[4200], n[4200];
	snprintf(w, sizeof w, "%s/w", dir);
	if (geteuid() == 0) {
		/* become the ordinary user, with a directory of its own where
		 * it can reach it (DIR's parents may be root's, mode 0700) */
		snprintf(w, sizeof w, "/tmp/creds-XXXXXX");
		if (!mkdtemp(w) || chmod(w, 0755) != 0) {
			perror("mkdtemp");
			return 1;
		}
		if (chown(w, 1000, 1000) != 0)
			perror("chown");
		gid_t g = 1000;
		if (setgroups(1, &g) || setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000)) {
			perror("drop");
			return 1;
		}
	} else {
		mkdir(w, 0755);
	}
	umask(022);
	uid_t me = getuid();
	gid_t mg = getgid();
	printf("uid is 1000: %s, gid is 1000: %s\n", me == 1000 ? "yes" : "no", mg == 1000 ? "yes" : "no");
	int ng = getgroups(0, NULL);
	gid_t gs[8];
	printf("getgroups: %d, first is gid: %s\n", ng, ng == 1 && getgroups(8, gs) == 1 && gs[0] == mg ? "yes" : "no");
	ids("start");
	caps("start");

	SHOW("setuid(own uid)", setuid(me));
	SHOW("setuid(0)", setuid(0));
	SHOW("setuid(-1)", setuid(-1));
	SHOW("setresuid(-1,-1,-1)", setresuid(-1, -1, -1));
	SHOW("setresuid(0,-1,-1)", setresuid(0, -1, -1));
	SHOW("setresuid(-1,1001,-1)", setresuid(-1, 1001, -1));
	SHOW("setreuid(-1, own)", setreuid(-1, me));
	SHOW("setreuid(1001, -1)", setreuid(1001, -1));
	SHOW("setgid(0)", setgid(0));
	SHOW("setregid(own, own)", setregid(mg, mg));
	SHOW("setresgid(-1,0,-1)", setresgid(-1, 0, -1));
	SHOW("setgroups(0, NULL)", setgroups(0, NULL));
	printf("%-44s %s\n", "setfsuid(0) returns the old fsuid", setfsuid(0) == me ? "yes" : "no");
	printf("%-44s %s\n", "  and leaves it", setfsuid(-1) == me ? "yes" : "no");
	SHOW("getgroups(-1)", syscall(SYS_getgroups, -1, gs));
	ids("after the refused changes");
	caps("after");
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};
	SHOW("capset all zero", syscall(SYS_capset, &h, d));
	d[0].permitted = d[0].effective = 1 << CAP_CHOWN;
	SHOW("capset raising CAP_CHOWN", syscall(SYS_capset, &h, d));
	SHOW("prctl PR_CAPBSET_DROP", prctl(PR_CAPBSET_DROP, CAP_CHOWN, 0, 0, 0));
	capability_calls();

	/* files */
	snprintf(f, sizeof f, "%s/f", w);
	snprintf(l, sizeof l, "%s/l", w);
	int fd = open(f, O_CREAT | O_RDWR, 0644);
	SHOW("symlink", symlink("f", l));
	SHOW("chown(f, own, own)", chown(f, me, mg));
	SHOW("chown(f, -1, -1)", chown(f, -1, -1));
	SHOW("chown(f, 0, -1)", chown(f, 0, -1));
	SHOW("chown(f, -1, 0)", chown(f, -1, 0));
	SHOW("lchown(l, own, -1)", lchown(l, me, -1));
	SHOW("fchown(fd, own, own)", fchown(fd, me, mg));
	SHOW("fchown(fd, 0, 0)", fchown(fd, 0, 0));
	SHOW("fchownat(fd, \"\", AT_EMPTY_PATH)", fchownat(fd, "", me, mg, AT_EMPTY_PATH));
	SHOW("fchownat bad flags", fchownat(AT_FDCWD, f, me, mg, 0x8));
	SHOW("chown missing", chown("/nonexistent-uvm-file", me, mg));
	int p[2];
	if (pipe(p))
		return 1;
	SHOW("fchown(pipe, own, own)", fchown(p[0], me, mg));
	SHOW("fchown(pipe, 0, -1)", fchown(p[0], 0, -1));

	SHOW("access(f, R_OK|W_OK)", access(f, R_OK | W_OK));
	SHOW("access(f, X_OK)", access(f, X_OK));
	SHOW("access(f, 8)", access(f, 8));
	SHOW("faccessat2(f, W_OK, AT_EACCESS)", syscall(SYS_faccessat2, AT_FDCWD, f, W_OK, AT_EACCESS));
	SHOW("faccessat2 bad flags", syscall(SYS_faccessat2, AT_FDCWD, f, F_OK, 0x4));
	SHOW("faccessat2(l, F_OK, AT_SYMLINK_NOFOLLOW)", syscall(SYS_faccessat2, AT_FDCWD, l, F_OK, AT_SYMLINK_NOFOLLOW));
	SHOW("faccessat2(fd, \"\", R_OK, AT_EMPTY_PATH)", syscall(SYS_faccessat2, fd, "", R_OK, AT_EMPTY_PATH));
	SHOW("chmod(f, 0444)", chmod(f, 0444));
	SHOW("access(f, W_OK) after chmod 0444", access(f, W_OK));
	SHOW("access(f, R_OK)", access(f, R_OK));
	SHOW("chmod(f, 0070)", chmod(f, 0070));
	SHOW("access(f, R_OK) as owner of 0070", access(f, R_OK));
	SHOW("chmod(f, 0644)", chmod(f, 0644));
	SHOW("fchmodat2(f, 0600, 0)", syscall(SYS_fchmodat2, AT_FDCWD, f, 0600, 0));
	SHOW("fchmodat2 bad flags", syscall(SYS_fchmodat2, AT_FDCWD, f, 0600, 0x8));
	SHOW("fchmodat2(l, NOFOLLOW)", syscall(SYS_fchmodat2, AT_FDCWD, l, 0600, AT_SYMLINK_NOFOLLOW));
	SHOW("fchmodat2(fd, \"\", AT_EMPTY_PATH)", syscall(SYS_fchmodat2, fd, "", 0640, AT_EMPTY_PATH));
	struct stat st;
	stat(f, &st);
	printf("%-44s %o\n", "  mode now", st.st_mode & 07777);

	snprintf(n, sizeof n, "%s/fifo", w);
	SHOW("mknod FIFO", mknod(n, S_IFIFO | 0666, 0));
	stat(n, &st);
	printf("%-44s %s %o\n", "  is a FIFO, mode", S_ISFIFO(st.st_mode) ? "yes" : "no", st.st_mode & 0777);
	SHOW("mknod FIFO again", mknod(n, S_IFIFO | 0666, 0));
	snprintf(n, sizeof n, "%s/reg", w);
	SHOW("mknodat regular (type 0)", mknodat(AT_FDCWD, n, 0600, 0));
	stat(n, &st);
	printf("%-44s %s %o\n", "  is a regular file, mode", S_ISREG(st.st_mode) ? "yes" : "no", st.st_mode & 0777);
	snprintf(n, sizeof n, "%s/chr", w);
	SHOW("mknod char device", mknod(n, S_IFCHR | 0600, makedev(1, 3)));
	SHOW("mknod block device", mknod(n, S_IFBLK | 0600, makedev(7, 0)));
	SHOW("mknod directory type", mknod(n, S_IFDIR | 0700, 0));
	SHOW("mknod bad type", mknod(n, 0170000 | 0600, 0));
	SHOW("mknod in a missing directory", mknod("/nonexistent-uvm-dir/x", S_IFIFO | 0600, 0));
	namespaces();
	ids("end");
	const char *made[] = {"f", "l", "fifo", "reg"};
	for (int i = 0; i < 4; i++) {
		snprintf(n, sizeof n, "%s/%s", w, made[i]);
		unlink(n);
	}
	rmdir(w);
	return 0;
}

/* privileged: root's answers, and the capability fix-ups of uid changes */
static int privileged(const char *dir)
{
	char f[4200];
	snprintf(f, sizeof f, "%s/rootfile", dir);
	chmod(dir, 0755); /* the path walk's search permission is not what is tested */
	ids("root");
	caps("root");
	SHOW("prctl PR_CAPBSET_READ CAP_SYS_ADMIN", prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0));
	gid_t g[2] = {1000, 1001};
	SHOW("setgroups({1000,1001})", setgroups(2, g));
	printf("getgroups: %d\n", getgroups(0, NULL));
	SHOW("setgroups(70000)", setgroups(70000, g));
	int fd = open(f, O_CREAT | O_RDWR, 0600);
	SHOW("chown(f, 1234, 1235)", chown(f, 1234, 1235));
	struct stat st;
	stat(f, &st);
	printf("%-44s %u:%u\n", "  owner now", st.st_uid, st.st_gid);
	SHOW("access(0600 file of another user, R_OK|W_OK)", access(f, R_OK | W_OK));
	SHOW("access(non-executable file, X_OK)", access(f, X_OK));
	SHOW("fchmodat2 of another user's file", syscall(SYS_fchmodat2, AT_FDCWD, f, 0644, 0));
	close(fd);

	/* a child: setresuid keeping a saved root uid keeps the permitted set */
	pid_t c = fork();
	if (c == 0) {
		SHOW("setresuid(1000,1000,0)", setresuid(1000, 1000, 0));
		ids("  kept saved root");
		caps("  kept saved root");
		SHOW("  access(f, R_OK) as 1000", access(f, R_OK));
		SHOW("  seteuid(0)", seteuid(0));
		caps("  back to euid 0");
		SHOW("  setresuid(1000,1000,1000)", setresuid(1000, 1000, 1000));
		caps("  all 1000");
		SHOW("  setuid(0)", setuid(0));
		_exit(0);
	}
	waitpid(c, NULL, 0);
	c = fork();
	if (c == 0) {
		SHOW("PR_SET_KEEPCAPS 1", prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
		SHOW("setresuid(1000,1000,1000) with keepcaps", setresuid(1000, 1000, 1000));
		caps("  keepcaps");
		_exit(0);
	}
	waitpid(c, NULL, 0);
	c = fork();
	if (c == 0) {
		SHOW("setfsuid(1000) returns 0", setfsuid(1000) == 0 ? 0 : -1);
		caps("  fsuid 1000");
		SHOW("  access(f, R_OK) (real ids)", access(f, R_OK));
		setfsuid(0);
		caps("  fsuid 0 again");
		struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct d[2] = {{0}};
		d[0].permitted = d[0].effective = 1 << CAP_CHOWN;
		SHOW("  capset to CAP_CHOWN only", syscall(SYS_capset, &h, d));
		caps("  after capset");
		SHOW("  setuid(1000) without CAP_SETUID", setuid(1000));
		SHOW("  chown(f, 4321, -1) with CAP_CHOWN", chown(f, 4321, -1));
		d[0].permitted = d[0].effective = 1 << CAP_CHOWN | 1 << CAP_KILL;
		SHOW("  capset raising CAP_KILL", syscall(SYS_capset, &h, d));
		_exit(0);
	}
	waitpid(c, NULL, 0);
	c = fork();
	if (c == 0) {
		SHOW("PR_CAPBSET_DROP CAP_SYS_ADMIN", prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0));
		printf("%-44s %d\n", "  PR_CAPBSET_READ", (int)prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0));
		_exit(0);
	}
	waitpid(c, NULL, 0);
	SHOW("setuid(1000) as root", setuid(1000));
	ids("after setuid(1000)");
	caps("after setuid(1000)");
	SHOW("setuid(0) back", setuid(0));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && strcmp(argv[1], "--root") == 0)
		return privileged(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: creds DIR | creds --root DIR\n");
		return 2;
	}
	return unprivileged(argv[1]);
}
