/* gdbwatch: the guest of the debugger tests (cmd/uvm/gdb_test.go): a
 * global written in steps (watch, reverse execution), another only read
 * (rwatch), a getppid (catch syscall) and, with the argument "fork",
 * "vfork" or "exec", a child process or an execve of itself (fork, vfork
 * and exec events; "vforkexec": a vfork child that execs itself); with "stdin", numbers read from stdin, each added
 * and echoed at once (reverse execution re-reads stdin and writes no
 * output twice). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

volatile long counter;
volatile long limit = 5;

__attribute__((noinline)) void bump(long i)
{
	counter += i;
}

int main(int argc, char **argv)
{
	for (long i = 1; i <= limit; i++)
		bump(i);
	long ppid = getppid();
	if (argc > 1 && strcmp(argv[1], "stdin") == 0) {
		char line[64];
		while (fgets(line, sizeof line, stdin)) {
			long v = atol(line);
			bump(v);
			printf("read %ld\n", v);
			fflush(stdout);
		}
	}
	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			bump(100);
			printf("child counter=%ld\n", counter);
			fflush(stdout);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
	}
	if (argc > 1 && (strcmp(argv[1], "vfork") == 0 || strcmp(argv[1], "vforkexec") == 0)) {
		int ex = strcmp(argv[1], "vforkexec") == 0;
		pid_t pid = vfork();
		if (pid == 0) {
			/* The parent's memory: it sees counter 115. */
			bump(100);
			if (ex)
				execl("/proc/self/exe", "gdbwatch", (char *)0);
			_exit(7);
		}
		int st;
		waitpid(pid, &st, 0);
		printf("vfork child status %d\n", WEXITSTATUS(st));
	}
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		execl("/proc/self/exe", "gdbwatch", (char *)0);
		perror("execl");
		return 1;
	}
	printf("counter=%ld ppid-positive=%d\n", counter, ppid > 0);
	return 0;
}
