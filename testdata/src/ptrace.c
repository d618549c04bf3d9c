// ptrace(2) on a child that asked for it (PTRACE_TRACEME): the SIGTRAP
// after execve, syscall-entry/exit stops under PTRACE_SYSCALL with
// PTRACE_O_TRACESYSGOOD and PTRACE_GET_SYSCALL_INFO, the arguments read
// with PTRACE_PEEKDATA, a return value changed with PTRACE_SETREGSET, a
// variable changed with PTRACE_POKEDATA, signal-delivery-stops where the
// tracer passes one signal on (the handler runs), suppresses another and
// replaces a third, a signal given when resuming a syscall-exit-stop
// (delivered: the handler runs), PTRACE_GETSIGINFO, PTRACE_SINGLESTEP, and
// PTRACE_KILL. Only the child's syscalls after its marker (getppid) are
// shown, so glibc's start-up does not enter the output.
#define _GNU_SOURCE
#include <elf.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>

static volatile long target = 1;

static void say(const char *s) { syscall(SYS_write, 1, s, strlen(s)); }

static void on_usr1(int sig)
{
	(void)sig;
	say("child: SIGUSR1 handled\n");
}

static int child(void)
{
	char buf[64];
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, SIG_DFL); // fatal if it arrived
	syscall(SYS_getppid);     // the marker
	say("child: hello\n");
	long pid = syscall(SYS_getpid);
	snprintf(buf, sizeof buf, "child: getpid returned %ld, target %ld\n", pid, target);
	say(buf);
	syscall(SYS_kill, syscall(SYS_getpid), SIGUSR1); // passed on
	syscall(SYS_kill, syscall(SYS_getpid), SIGUSR2); // suppressed
	say("child: SIGUSR2 suppressed\n");
	syscall(SYS_kill, syscall(SYS_getpid), SIGWINCH); // replaced by SIGUSR1
	say("child: exiting\n");
	syscall(SYS_exit_group, 7);
	return 0;
}

static const char *name(long nr)
{
	switch (nr) {
	case SYS_write: return "write";
	case SYS_getpid: return "getpid";
	case SYS_getppid: return "getppid";
	case SYS_kill: return "kill";
	case SYS_rt_sigreturn: return "rt_sigreturn";
	case SYS_exit_group: return "exit_group";
	}
	return "other";
}

// regs reads or writes the tracee's return-value register.
static long retreg(pid_t pid, int set, long v)
{
	unsigned long regs[64];
	struct iovec iov = {regs, sizeof regs};
	if (ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov) != 0) {
		perror("GETREGSET");
		exit(1);
	}
#ifdef __x86_64__
	int i = offsetof(struct user_regs_struct, rax) / 8;
	if (iov.iov_len != sizeof(struct user_regs_struct))
		printf("regset size %zu\n", iov.iov_len);
#else
	int i = 0; // x0
	if (iov.iov_len != 34 * 8)
		printf("regset size %zu\n", iov.iov_len);
#endif
	if (set) {
		regs[i] = v;
		if (ptrace(PTRACE_SETREGSET, pid, NT_PRSTATUS, &iov) != 0)
			perror("SETREGSET");
	}
	return regs[i];
}

static int waitstop(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		exit(1);
	}
	if (WIFEXITED(st)) {
		printf("tracer: child exited %d\n", WEXITSTATUS(st));
		return -1;
	}
	if (WIFSIGNALED(st)) {
		printf("tracer: child killed by %s\n", strsignal(WTERMSIG(st)));
		return -1;
	}
	return st;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return child();
	pid_t pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0)
			perror("TRACEME");
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0)
			say("second TRACEME succeeded\n");
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(99);
	}
	int st = waitstop(pid);
	printf("tracer: exec stop %s %s\n", WIFSTOPPED(st) ? "stopped" : "?", strsignal(WSTOPSIG(st)));
	{
		unsigned long regs[64];
		struct iovec iov = {regs, sizeof regs};
		ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov);
#ifdef __x86_64__
		struct user_regs_struct u;
		memcpy(&u, regs, sizeof u);
		unsigned long pc = u.rip;
#else
		unsigned long pc = regs[32];
#endif
		printf("tracer: pc at the entry point %d\n", pc == getauxval(AT_ENTRY));
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL) != 0)
		perror("SETOPTIONS");
	int seen = 0, sig = 0, steps = 0;
	long last = -1; // the syscall whose exit comes next
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, 0, sig) != 0) {
			perror("PTRACE_SYSCALL");
			return 1;
		}
		sig = 0;
		if ((st = waitstop(pid)) < 0)
			break;
		if (!WIFSTOPPED(st)) {
			printf("tracer: status %#x\n", st);
			break;
		}
		int s = WSTOPSIG(st);
		if (s == (SIGTRAP | 0x80)) {
			struct ptrace_syscall_info si;
			long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof si, &si);
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
				if (si.entry.nr == SYS_getppid)
					seen = 1;
				last = si.entry.nr;
				if (!seen)
					continue;
				printf("tracer: enter %s (info size %ld)", name(si.entry.nr), n);
				if (si.entry.nr == SYS_write) {
					char text[64] = {0};
					for (int i = 0; i < 56; i += 8) {
						long w = ptrace(PTRACE_PEEKDATA, pid, si.entry.args[1] + i, 0);
						memcpy(text + i, &w, 8);
					}
					text[si.entry.args[2] < 63 ? si.entry.args[2] : 63] = 0;
					char *nl = strchr(text, '\n');
					if (nl)
						*nl = 0;
					printf(" fd %llu \"%s\"", (unsigned long long)si.entry.args[0], text);
				}
				if (si.entry.nr == SYS_kill)
					printf(" sig %llu", (unsigned long long)si.entry.args[1]);
				printf("\n");
			} else if (si.op == PTRACE_SYSCALL_INFO_EXIT && seen) {
				if (last == SYS_write && si.exit.rval == 15)
					sig = SIGUSR1; // "child: exiting": a signal given at a syscall stop is delivered
				if (last == SYS_getpid || last == SYS_getppid)
					printf("tracer: exit %s (info size %ld)\n",
					       si.exit.rval == (last == SYS_getpid ? pid : getpid()) ? "the pid" : "a wrong pid", n);
				else
					printf("tracer: exit %s%lld (info size %ld)\n", si.exit.is_error ? "error " : "",
					       (long long)si.exit.rval, n);
				if (retreg(pid, 0, 0) == pid && steps == 0) {
					// getpid's exit: change what it returns, and a
					// variable, then single-step the next instructions.
					retreg(pid, 1, 12345);
					long addr = (long)&target;
					if (ptrace(PTRACE_POKEDATA, pid, addr, 42) != 0)
						perror("POKEDATA");
					printf("tracer: getpid now returns %ld, target peeks %ld\n", retreg(pid, 0, 0),
					       ptrace(PTRACE_PEEKDATA, pid, addr, 0));
					for (; steps < 3; steps++) {
						ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
						st = waitstop(pid);
						siginfo_t info;
						ptrace(PTRACE_GETSIGINFO, pid, 0, &info);
						printf("tracer: step %d: %s code %d\n", steps, strsignal(WSTOPSIG(st)), info.si_code);
					}
				}
			}
			continue;
		}
		siginfo_t info;
		ptrace(PTRACE_GETSIGINFO, pid, 0, &info);
		printf("tracer: signal %s, siginfo signo %d code %d from the child %d\n", strsignal(s), info.si_signo,
		       info.si_code, info.si_pid == pid);
		if (s == SIGUSR1)
			sig = SIGUSR1; // pass it on
		else if (s == SIGWINCH)
			sig = SIGUSR1; // replaced
		// SIGUSR2: suppressed
	}
	// A second child, killed while stopped.
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(0);
	}
	st = waitstop(pid);
	printf("tracer: second child stopped by %s\n", strsignal(WSTOPSIG(st)));
	printf("tracer: PEEKDATA of a bad address: %ld\n", ptrace(PTRACE_PEEKDATA, pid, 8, 0));
	ptrace(PTRACE_KILL, pid, 0, 0);
	waitstop(pid);
	printf("tracer: PTRACE_CONT of a gone child: %ld\n", ptrace(PTRACE_CONT, pid, 0, 0));
	return 0;
}
