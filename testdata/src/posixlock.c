/* POSIX record locks between processes (fcntl F_GETLK/F_SETLK/F_SETLKW
 * and F_OFD_*): what another process sees (type, range, l_pid), range
 * splitting and merging, EAGAIN, a blocked F_SETLKW woken by the unlock,
 * EDEADLK, EINTR by a signal, release on close of another descriptor of
 * the inode and at exit, OFD locks (l_pid -1, per open file description),
 * argument errors. In a file under argv[1] (default: the cwd). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char path[4096];
static pid_t parent;

static const char *en(int r) {
	static char b[32];
	if (r == 0)
		return "ok";
	switch (errno) {
	case EAGAIN: return "EAGAIN";
	case EACCES: return "EACCES";
	case EDEADLK: return "EDEADLK";
	case EINTR: return "EINTR";
	case EINVAL: return "EINVAL";
	case EBADF: return "EBADF";
	case EOVERFLOW: return "EOVERFLOW";
	}
	snprintf(b, sizeof b, "errno %d", errno);
	return b;
}

static int lk(int fd, int cmd, int type, off_t start, off_t len) {
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	return fcntl(fd, cmd, &fl);
}

/* getlk prints what F_GETLK (or F_OFD_GETLK) reports for a write lock on start..len. */
static void getlk(const char *what, int fd, int cmd, int type, off_t start, off_t len, pid_t owner) {
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	int r = fcntl(fd, cmd, &fl);
	if (r != 0) {
		printf("%-34s %s\n", what, en(r));
		return;
	}
	if (fl.l_type == F_UNLCK) {
		printf("%-34s unlocked\n", what);
		return;
	}
	printf("%-34s %s start %lld len %lld pid %s\n", what, fl.l_type == F_WRLCK ? "write" : "read",
	       (long long)fl.l_start, (long long)fl.l_len,
	       fl.l_pid == owner ? "owner" : fl.l_pid == -1 ? "-1" : "other");
}

static int wait_child(pid_t c) {
	int st;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

static void onalarm(int s) { (void)s; }

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	snprintf(path, sizeof path, "%s/posixlock.dat", argc > 1 ? argv[1] : ".");
	parent = getpid();
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	if (write(fd, "0123456789", 10) != 10)
		return 1;

	/* Locks the parent holds, as a child sees them. */
	printf("setlk write 0..99: %s\n", en(lk(fd, F_SETLK, F_WRLCK, 0, 100)));
	printf("unlock 10..19 (split): %s\n", en(lk(fd, F_SETLK, F_UNLCK, 10, 10)));
	printf("setlk read 200..: %s\n", en(lk(fd, F_SETLK, F_RDLCK, 200, 0)));
	pid_t c = fork();
	if (c == 0) {
		int cfd = open(path, O_RDWR);
		getlk("child getlk 0..9", cfd, F_GETLK, F_RDLCK, 0, 10, parent);
		getlk("child getlk 10..19", cfd, F_GETLK, F_WRLCK, 10, 10, parent);
		getlk("child getlk 15..", cfd, F_GETLK, F_WRLCK, 15, 0, parent);
		getlk("child getlk read 300..", cfd, F_GETLK, F_RDLCK, 300, 0, parent);
		getlk("child getlk write 300..", cfd, F_GETLK, F_WRLCK, 300, 0, parent);
		printf("child setlk write 50..50: %s\n", en(lk(cfd, F_SETLK, F_WRLCK, 50, 1)));
		printf("child setlk read 250..259: %s\n", en(lk(cfd, F_SETLK, F_RDLCK, 250, 10)));
		printf("child setlk write 10..19: %s\n", en(lk(cfd, F_SETLK, F_WRLCK, 10, 10)));
		_exit(0);
	}
	printf("child exit %d\n", wait_child(c));
	getlk("own getlk sees no own lock", fd, F_GETLK, F_WRLCK, 0, 0, parent);

	/* Merging: 100..149 joins 0..99 into 0..149 (after the 10..19 hole). */
	printf("setlk write 100..149 (merge): %s\n", en(lk(fd, F_SETLK, F_WRLCK, 100, 50)));
	printf("setlk write 10..19 (fill): %s\n", en(lk(fd, F_SETLK, F_WRLCK, 10, 10)));
	if ((c = fork()) == 0) {
		getlk("child getlk merged", fd, F_GETLK, F_WRLCK, 5, 1, parent);
		getlk("child getlk 149", fd, F_GETLK, F_WRLCK, 149, 1, parent);
		getlk("child getlk 150..199", fd, F_GETLK, F_WRLCK, 150, 50, parent);
		_exit(0);
	}
	printf("child exit %d\n", wait_child(c));
	/* Downgrading the middle to a read lock splits it in three. */
	printf("setlk read 40..59: %s\n", en(lk(fd, F_SETLK, F_RDLCK, 40, 20)));
	if ((c = fork()) == 0) {
		getlk("child getlk read 40..59", fd, F_GETLK, F_RDLCK, 40, 20, parent);
		getlk("child getlk write 45", fd, F_GETLK, F_WRLCK, 45, 1, parent);
		getlk("child getlk read 60", fd, F_GETLK, F_RDLCK, 60, 1, parent);
		_exit(0);
	}
	printf("child exit %d\n", wait_child(c));

	/* A blocked F_SETLKW in the child wakes when the parent unlocks. */
	int p1[2], p2[2];
	if (pipe(p1) || pipe(p2))
		return 1;
	if ((c = fork()) == 0) {
		int cfd = open(path, O_RDWR);
		char b = 'x';
		if (write(p1[1], &b, 1) != 1) /* about to block */
			_exit(9);
		int r = lk(cfd, F_SETLKW, F_WRLCK, 0, 10);
		printf("child setlkw 0..9 after unlock: %s\n", en(r));
		if (write(p2[1], &b, 1) != 1)
			_exit(9);
		pause();
		_exit(0);
	}
	char b;
	if (read(p1[0], &b, 1) != 1)
		return 1;
	usleep(100000);
	int ur = lk(fd, F_SETLK, F_UNLCK, 0, 0);
	if (read(p2[0], &b, 1) != 1)
		return 1;
	printf("parent had unlocked all: %s\n", en(ur));
	getlk("parent getlk 0..9", fd, F_GETLK, F_WRLCK, 0, 10, c);
	printf("parent setlk 0..9: %s\n", en(lk(fd, F_SETLK, F_WRLCK, 0, 10)));
	kill(c, SIGKILL);
	printf("child killed: %d\n", wait_child(c));
	getlk("after the child's death", fd, F_GETLK, F_WRLCK, 0, 0, c);

	/* EDEADLK: the child holds 20..29 and waits for the parent's 0..9
	 * while the parent waits for 20..29: whichever wait comes second
	 * would close the cycle and fails (the other then gets its lock). */
	printf("parent setlk 0..9: %s\n", en(lk(fd, F_SETLK, F_WRLCK, 0, 10)));
	if ((c = fork()) == 0) {
		int cfd = open(path, O_RDWR);
		char b = 'x';
		if (lk(cfd, F_SETLK, F_WRLCK, 20, 10) != 0)
			_exit(8);
		if (write(p1[1], &b, 1) != 1)
			_exit(9);
		int r = lk(cfd, F_SETLKW, F_WRLCK, 0, 10);
		_exit(r == 0 ? 0 : errno == EDEADLK ? 1 : 2);
	}
	if (read(p1[0], &b, 1) != 1)
		return 1;
	usleep(100000);
	int pr = lk(fd, F_SETLKW, F_WRLCK, 20, 10);
	int pe = errno;
	lk(fd, F_SETLK, F_UNLCK, 0, 0);
	int cr = wait_child(c);
	printf("deadlock detected once: %s\n", (pr != 0 && pe == EDEADLK && cr == 0) || (pr == 0 && cr == 1) ? "yes" : "no");

	/* EINTR: a signal ends a blocked F_SETLKW (no SA_RESTART). */
	struct sigaction sa = {.sa_handler = onalarm};
	sigaction(SIGALRM, &sa, NULL);
	printf("parent setlk 0..9: %s\n", en(lk(fd, F_SETLK, F_WRLCK, 0, 10)));
	if ((c = fork()) == 0) {
		int cfd = open(path, O_RDWR);
		alarm(1);
		printf("child setlkw interrupted: %s\n", en(lk(cfd, F_SETLKW, F_WRLCK, 5, 1)));
		_exit(0);
	}
	printf("child exit %d\n", wait_child(c));

	/* Closing any descriptor of the inode drops the process's locks. */
	int fd2 = open(path, O_RDONLY);
	close(fd2);
	if ((c = fork()) == 0) {
		getlk("after close of another fd", fd, F_GETLK, F_WRLCK, 0, 0, parent);
		_exit(0);
	}
	printf("child exit %d\n", wait_child(c));

	/* OFD locks: owned by the open file description. */
	int o1 = open(path, O_RDWR), o2 = open(path, O_RDWR);
	printf("ofd setlk write 0..9 on o1: %s\n", en(lk(o1, F_OFD_SETLK, F_WRLCK, 0, 10)));
	printf("ofd setlk write 5..5 on o2: %s\n", en(lk(o2, F_OFD_SETLK, F_WRLCK, 5, 1)));
	printf("posix setlk write 5..5: %s\n", en(lk(fd, F_SETLK, F_WRLCK, 5, 1)));
	getlk("ofd getlk on o2", o2, F_OFD_GETLK, F_WRLCK, 0, 0, parent);
	getlk("posix getlk", fd, F_GETLK, F_WRLCK, 0, 0, parent);
	int o3 = dup(o1);
	close(o1);
	getlk("after close of o1 (o3 dup)", o2, F_OFD_GETLK, F_WRLCK, 0, 0, parent);
	close(o3);
	getlk("after close of o3", o2, F_OFD_GETLK, F_WRLCK, 0, 0, parent);
	if ((c = fork()) == 0) {
		/* The child shares o2's description: its OFD lock is the child's too. */
		printf("child ofd setlk on o2: %s\n", en(lk(o2, F_OFD_SETLK, F_WRLCK, 0, 10)));
		_exit(0);
	}
	printf("child exit %d\n", wait_child(c));
	getlk("posix getlk after child's ofd", fd, F_GETLK, F_RDLCK, 0, 0, parent);
	close(o2);

	/* Argument errors. */
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_pid = 1};
	printf("ofd setlk with l_pid: %s\n", en(fcntl(fd, F_OFD_SETLK, &fl)));
	printf("getlk F_UNLCK: %s\n", en(lk(fd, F_GETLK, F_UNLCK, 0, 0)));
	printf("setlk type 7: %s\n", en(lk(fd, F_SETLK, 7, 0, 0)));
	printf("setlk start -1: %s\n", en(lk(fd, F_SETLK, F_WRLCK, -1, 1)));
	printf("setlk len -5 at 2: %s\n", en(lk(fd, F_SETLK, F_WRLCK, 2, -5)));
	printf("setlk len -2 at 5: %s\n", en(lk(fd, F_SETLK, F_WRLCK, 5, -2)));
	if ((c = fork()) == 0) {
		getlk("child sees 3..4", fd, F_GETLK, F_WRLCK, 0, 0, parent);
		_exit(0);
	}
	printf("child exit %d\n", wait_child(c));
	printf("setlk overflow: %s\n", en(lk(fd, F_SETLK, F_WRLCK, 0x7fffffffffffff00LL, 0x1000)));
	int ro = open(path, O_RDONLY);
	printf("write lock on read-only fd: %s\n", en(lk(ro, F_SETLK, F_WRLCK, 0, 1)));
	struct flock fe = {.l_type = F_RDLCK, .l_whence = SEEK_END, .l_start = -2, .l_len = 1};
	printf("read lock SEEK_END-2: %s\n", en(fcntl(ro, F_SETLK, &fe)));
	if ((c = fork()) == 0) {
		getlk("child sees SEEK_END lock", fd, F_GETLK, F_WRLCK, 6, 10, parent);
		_exit(0);
	}
	printf("child exit %d\n", wait_child(c));
	unlink(path);
	return 0;
}
