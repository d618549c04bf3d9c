/* pidfd_open/pidfd_send_signal/pidfd_getfd, waitid(P_PIDFD), poll on a
 * pidfd (readable once the child exits); prctl PR_SET_NAME/PR_GET_NAME
 * (and /proc/self/comm, /proc/self/status Name), PR_SET_PDEATHSIG,
 * PR_SET_CHILD_SUBREAPER, PR_GET/SET_DUMPABLE; getrusage SELF, THREAD,
 * CHILDREN. Prints no pids or times. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void check(const char *what, long r) {
	if (r < 0) printf("%s: -1 %s\n", what, strerrorname_np(errno));
	else printf("%s: %ld\n", what, r);
}

static int pidfd_open(pid_t pid, unsigned flags) { return syscall(SYS_pidfd_open, pid, flags); }

static void readfile(const char *p, char *buf, size_t n) {
	int fd = open(p, O_RDONLY);
	ssize_t k = read(fd, buf, n - 1);
	buf[k > 0 ? k : 0] = 0;
	close(fd);
}

static volatile long sink;

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* prctl names */
	check("PR_SET_NAME", prctl(PR_SET_NAME, "renamed-process-long"));
	char name[32] = {0};
	prctl(PR_GET_NAME, name);
	printf("name \"%s\"\n", name);
	char buf[4096];
	readfile("/proc/self/comm", buf, sizeof buf);
	printf("comm %s", buf);
	readfile("/proc/self/status", buf, sizeof buf);
	char *nl = strchr(buf, '\n');
	*nl = 0;
	printf("status %s\n", buf);
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE));
	check("SET_DUMPABLE 0", prctl(PR_SET_DUMPABLE, 0));
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE));
	check("SET_DUMPABLE 2", prctl(PR_SET_DUMPABLE, 2));
	prctl(PR_SET_DUMPABLE, 1);
	int v = -1;
	prctl(PR_GET_CHILD_SUBREAPER, &v);
	printf("subreaper %d\n", v);

	/* pidfd */
	int pipefd[2];
	pipe(pipefd);
	pid_t c = fork();
	if (c == 0) {
		char ch;
		read(pipefd[0], &ch, 1);
		_exit(ch);
	}
	int pfd = pidfd_open(c, 0);
	check("pidfd_open", pfd >= 0 ? 0 : -1);
	printf("cloexec %d\n", fcntl(pfd, F_GETFD) & FD_CLOEXEC);
	struct pollfd pp = {pfd, POLLIN, 0};
	check("poll running", poll(&pp, 1, 0));
	int got = syscall(SYS_pidfd_getfd, pfd, pipefd[1], 0);
	check("pidfd_getfd", got >= 0 ? 0 : -1);
	write(got, "\x05", 1);
	check("poll exited", poll(&pp, 1, -1));
	printf("revents in %d\n", (pp.revents & POLLIN) != 0);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	check("waitid P_PIDFD", waitid(P_PIDFD, pfd, &si, WEXITED));
	printf("code exited %d status %d pid matches %d\n", si.si_code == CLD_EXITED, si.si_status, si.si_pid == c);
	check("pidfd_send_signal reaped", syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0));
	close(pfd);
	c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	pfd = pidfd_open(c, 0);
	check("pidfd_send_signal flags", syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 8));
	check("pidfd_send_signal", syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0));
	int st;
	waitpid(c, &st, 0);
	printf("killed by %d\n", WTERMSIG(st));
	check("pidfd_open bad flags", pidfd_open(getpid(), 1));
	check("pidfd_open 0", pidfd_open(0, 0));
	check("pidfd_send_signal on pipe", syscall(SYS_pidfd_send_signal, pipefd[0], 0, NULL, 0));
	check("waitid P_PIDFD bad fd", waitid(P_PIDFD, pipefd[0], &si, WEXITED));
	int self = pidfd_open(getpid(), 0);
	check("waitid P_PIDFD self", waitid(P_PIDFD, self, &si, WEXITED | WNOHANG));

	/* subreaper: a grandchild orphaned by its parent comes to us */
	check("SET_CHILD_SUBREAPER", prctl(PR_SET_CHILD_SUBREAPER, 1));
	prctl(PR_GET_CHILD_SUBREAPER, &v);
	printf("subreaper %d\n", v);
	int sync[2];
	pipe(sync);
	c = fork();
	if (c == 0) {
		pid_t g = fork();
		if (g == 0) {
			/* PR_SET_PDEATHSIG: SIGUSR1 when the middle process exits */
			close(sync[0]);
			signal(SIGUSR1, SIG_DFL);
			prctl(PR_SET_PDEATHSIG, SIGUSR1);
			int s = 0;
			prctl(PR_GET_PDEATHSIG, &s);
			write(sync[1], &s, sizeof s);
			for (;;) pause();
		}
		int s;
		read(sync[0], &s, sizeof s);
		printf("grandchild pdeathsig %d\n", s);
		_exit(3);
	}
	waitpid(c, &st, 0);
	printf("middle exited %d\n", WEXITSTATUS(st));
	pid_t w = waitpid(-1, &st, 0);
	printf("reaped orphan %d, signaled %d sig %d\n", w > 0, WIFSIGNALED(st), WTERMSIG(st));

	/* getrusage */
	for (long i = 0; i < 3000000; i++) sink += i;
	struct rusage ru, rt, rc;
	check("RUSAGE_SELF", getrusage(RUSAGE_SELF, &ru));
	check("RUSAGE_THREAD", getrusage(RUSAGE_THREAD, &rt));
	check("RUSAGE_CHILDREN", getrusage(RUSAGE_CHILDREN, &rc));
	check("RUSAGE bad", getrusage(7, &ru));
	long us = ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
	printf("self cpu > 0 %d, maxrss > 0 %d, minflt > 0 %d\n", us > 0, ru.ru_maxrss > 0, ru.ru_minflt > 0);
	printf("children maxrss > 0 %d\n", rc.ru_maxrss > 0);
	return 0;
}
