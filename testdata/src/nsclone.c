/* clone(2) asking for new namespaces as an unprivileged user (uid 1000;
 * a program started as root becomes it first): EPERM for mount, network,
 * PID, UTS and IPC namespaces, EINVAL for the flag combinations
 * copy_process refuses; no child is created. recvmsg's msg_flags carries
 * MSG_CMSG_CLOEXEC when the caller passed it (____sys_recvmsg starts
 * msg_flags from it), with and without SCM_RIGHTS / SCM_CREDENTIALS.
 * CLONE_NEWUSER alone is not here: Linux lets an unprivileged user
 * create a user namespace where uvm refuses it (README). */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *en(long r) {
	static char b[32];
	if (r >= 0)
		return "ok";
	switch (errno) {
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	}
	snprintf(b, sizeof b, "errno %d", errno);
	return b;
}

static void try(const char *what, unsigned long flags) {
	long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid(r, NULL, 0);
	printf("%-28s %s\n", what, en(r));
}

static void msgflags(const char *what, int type, int rights, int creds, int flags) {
	int sv[2];
	if (socketpair(AF_UNIX, type, 0, sv))
		return;
	int on = 1;
	if (creds)
		setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
	char data = 'x';
	struct iovec iov = {&data, 1};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr h;
	} cm;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	if (rights) {
		m.msg_control = cm.b;
		m.msg_controllen = sizeof cm.b;
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &sv[0], sizeof(int));
	}
	if (sendmsg(sv[0], &m, 0) != 1)
		perror("sendmsg");
	char rb[256], in;
	struct iovec riov = {&in, 1};
	struct msghdr r = {.msg_iov = &riov, .msg_iovlen = 1, .msg_control = rb, .msg_controllen = sizeof rb};
	long n = recvmsg(sv[1], &r, flags);
	printf("%-40s %ld flags %#x\n", what, n, (unsigned)r.msg_flags);
	close(sv[0]);
	close(sv[1]);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	if (getuid() == 0) {
		gid_t g = 1000;
		if (setgroups(1, &g) || setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000)) {
			perror("drop");
			return 1;
		}
	}
	try("CLONE_NEWNS", CLONE_NEWNS);
	try("CLONE_NEWNET", CLONE_NEWNET);
	try("CLONE_NEWPID", CLONE_NEWPID);
	try("CLONE_NEWUTS|CLONE_NEWIPC", CLONE_NEWUTS | CLONE_NEWIPC);
	try("CLONE_NEWCGROUP", CLONE_NEWCGROUP);
	try("CLONE_NEWNS|CLONE_FS", CLONE_NEWNS | CLONE_FS);
	try("CLONE_NEWUSER|CLONE_FS", CLONE_NEWUSER | CLONE_FS);
	try("CLONE_THREAD|CLONE_NEWPID", CLONE_THREAD | CLONE_SIGHAND | CLONE_VM | CLONE_NEWPID);
	try("plain fork", 0);

	msgflags("stream, no flags", SOCK_STREAM, 0, 0, 0);
	msgflags("stream, MSG_CMSG_CLOEXEC", SOCK_STREAM, 0, 0, MSG_CMSG_CLOEXEC);
	msgflags("stream, SCM_RIGHTS, MSG_CMSG_CLOEXEC", SOCK_STREAM, 1, 0, MSG_CMSG_CLOEXEC);
	msgflags("dgram, SO_PASSCRED, MSG_CMSG_CLOEXEC", SOCK_DGRAM, 0, 1, MSG_CMSG_CLOEXEC);
	msgflags("dgram, SO_PASSCRED, no flags", SOCK_DGRAM, 0, 1, 0);
	msgflags("seqpacket, MSG_CMSG_CLOEXEC", SOCK_SEQPACKET, 0, 0, MSG_CMSG_CLOEXEC);
	return 0;
}
