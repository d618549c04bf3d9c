// prctl PR_SET_DUMPABLE/PR_GET_DUMPABLE and what it changes, run by an
// unprivileged user: /proc/PID of an undumpable process is owned by
// root and its ptrace-checked files (environ) refuse another process of
// the same user (EACCES) but not the process itself; execve makes it
// dumpable again. Started as root (a native oracle, uvm in parallel mode
// as root), it first becomes uid/gid 1000, uvm --det's identity (which
// makes it undumpable, as every change of the effective ids does), and
// execs itself, which makes it dumpable again.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void look(pid_t pid, const char *what) {
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d", pid);
	int r = stat(path, &st);
	const char *owner = r ? strerror(errno) : st.st_uid == 0 && st.st_gid == 0 ? "root" : st.st_uid == getuid() ? "me" : "other";
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	r = stat(path, &st);
	const char *fowner = r ? strerror(errno) : st.st_uid == 0 ? "root" : st.st_uid == getuid() ? "me" : "other";
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	int fd = open(path, O_RDONLY);
	printf("%s: /proc/PID owner %s, status owner %s, environ %s\n", what, owner, fowner, fd >= 0 ? "opens" : strerror(errno));
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	printf("%s: stat %s\n", what, fd >= 0 ? "opens" : strerror(errno));
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv) {
	if (getuid() == 0) {
		if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000)) {
			perror("dropping root");
			return 1;
		}
		if (prctl(PR_GET_DUMPABLE) != 0) {
			printf("root -> uid 1000 left the process dumpable\n");
			return 1;
		}
		char *args[] = {argv[0], NULL};
		execv("/proc/self/exe", args);
		perror("execv");
		return 1;
	}
	if (argc > 1) {
		printf("after execve: PR_GET_DUMPABLE %d\n", prctl(PR_GET_DUMPABLE));
		look(getpid(), "self after execve");
		return 0;
	}
	printf("PR_GET_DUMPABLE %d\n", prctl(PR_GET_DUMPABLE));
	int r = prctl(PR_SET_DUMPABLE, 2);
	printf("PR_SET_DUMPABLE 2: %d %s\n", r, r ? strerror(errno) : "");
	r = prctl(PR_SET_DUMPABLE, 3);
	printf("PR_SET_DUMPABLE 3: %d %s\n", r, r ? strerror(errno) : "");
	setfsuid(getuid()); // no change: still dumpable
	printf("after setfsuid(uid): %d\n", prctl(PR_GET_DUMPABLE));

	int go[2], back[2];
	pipe(go);
	pipe(back);
	pid_t c = fork();
	if (c == 0) {
		char x;
		prctl(PR_SET_DUMPABLE, 0);
		write(back[1], "u", 1);
		read(go[0], &x, 1);
		prctl(PR_SET_DUMPABLE, 1);
		write(back[1], "d", 1);
		read(go[0], &x, 1);
		_exit(0);
	}
	char x;
	read(back[0], &x, 1);
	look(c, "child undumpable");
	write(go[1], "1", 1);
	read(back[0], &x, 1);
	look(c, "child dumpable again");
	write(go[1], "2", 1);
	waitpid(c, NULL, 0);

	prctl(PR_SET_DUMPABLE, 0);
	printf("self PR_GET_DUMPABLE %d\n", prctl(PR_GET_DUMPABLE));
	look(getpid(), "self undumpable");
	fflush(stdout);
	char *args[] = {argv[0], "exec", NULL};
	execv("/proc/self/exe", args);
	printf("execv: %s\n", strerror(errno));
	return 1;
}
