/* sysloop: the syscall and signal round trips, for cmd/uvm's benchmarks
 * (BenchmarkSyscall, BenchmarkSignal).
 *
 *   sysloop [getpid|signal N]
 *   getpid N: N getpid system calls (guest syscall/svc -> kernel -> back).
 *   signal N: N self-directed SIGUSR1 (tgkill), each delivered to a handler
 *             and returned from with rt_sigreturn.
 * Without arguments both run 1000 times. Each mode prints its count and
 * whether every call was seen (the handler counts its runs; getpid must
 * return the same pid every time); the exit status is 1 on a mismatch. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned long handled;

static void handler(int sig)
{
	(void)sig;
	handled++;
}

static int loop_getpid(unsigned long n)
{
	long pid = syscall(SYS_getpid);
	unsigned long same = 0;
	for (unsigned long i = 0; i < n; i++)
		same += syscall(SYS_getpid) == pid;
	printf("getpid %lu %s\n", n, same == n ? "ok" : "MISMATCH");
	return same == n ? 0 : 1;
}

static int loop_signal(unsigned long n)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 1;
	}
	long pid = syscall(SYS_getpid), tid = syscall(SYS_gettid);
	handled = 0;
	for (unsigned long i = 0; i < n; i++)
		syscall(SYS_tgkill, pid, tid, SIGUSR1);
	printf("signal %lu %s\n", n, handled == n ? "ok" : "MISMATCH");
	return handled == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 1)
		return loop_getpid(1000) | loop_signal(1000);
	if (argc != 3) {
		fprintf(stderr, "usage: sysloop [getpid|signal N]\n");
		return 2;
	}
	unsigned long n = strtoul(argv[2], NULL, 0);
	if (strcmp(argv[1], "getpid") == 0)
		return loop_getpid(n);
	if (strcmp(argv[1], "signal") == 0)
		return loop_signal(n);
	fprintf(stderr, "sysloop: unknown mode %s\n", argv[1]);
	return 2;
}
