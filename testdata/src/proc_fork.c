/* proc_fork: fork, pipes and wait statuses.
 * 1. The child writes a line (with getppid() == parent checked) to a pipe
 *    and exits with 7; the parent reads to EOF and waitpid reports
 *    WIFEXITED, WEXITSTATUS 7; a SIGCHLD handler has run.
 * 2. The child's memory is a copy: its writes are not seen by the parent.
 * 3. WNOHANG on a child blocked reading a pipe returns 0; the parent then
 *    writes a byte, and the child exits with that byte as its status.
 * 4. A child killed with SIGKILL by the parent: WIFSIGNALED, WTERMSIG 9.
 * 5. A child that stores to NULL: WIFSIGNALED, WTERMSIG 11.
 * 6. wait() with no children left fails with ECHILD.
 * stdout is flushed before each fork; children leave with _exit. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sigchld;
static int shared_value = 100;

static void on_chld(int sig)
{
	(void)sig;
	sigchld++;
}

static void print_status(const char *what, pid_t got, pid_t want, int st)
{
	printf("%s: waitpid returned the child=%s", what, got == want ? "yes" : "no");
	if (WIFEXITED(st))
		printf(" WIFEXITED status=%d\n", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf(" WIFSIGNALED signal=%d\n", WTERMSIG(st));
	else
		printf(" other status 0x%x\n", st);
}

static pid_t xfork(void)
{
	pid_t p;

	fflush(stdout);
	p = fork();
	if (p < 0) {
		perror("fork");
		_exit(1);
	}
	return p;
}

int main(void)
{
	int fds[2], in[2], st = 0;
	pid_t parent = getpid(), child, got;
	char buf[128];
	ssize_t n, total = 0;
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);

	/* 1 + 2 */
	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	child = xfork();
	if (child == 0) {
		char msg[64];
		int len;

		close(fds[0]);
		shared_value = 200;
		len = snprintf(msg, sizeof msg, "hello from the child, ppid ok=%s\n",
			       getppid() == parent ? "yes" : "no");
		if (write(fds[1], msg, len) != len)
			_exit(1);
		_exit(7);
	}
	printf("fork returned a child pid different from ours: %s\n",
	       child > 0 && child != parent ? "yes" : "no");
	close(fds[1]);
	while ((n = read(fds[0], buf + total, sizeof buf - 1 - total)) > 0)
		total += n;
	buf[total] = 0;
	close(fds[0]);
	printf("parent read: %s", buf);
	got = waitpid(child, &st, 0);
	print_status("exit(7)", got, child, st);
	printf("SIGCHLD handler ran: %s\n", sigchld > 0 ? "yes" : "no");
	printf("parent's copy unchanged: %d\n", shared_value);

	/* 3 */
	if (pipe(in) != 0) {
		perror("pipe");
		return 1;
	}
	child = xfork();
	if (child == 0) {
		unsigned char c = 0;

		close(in[1]);
		if (read(in[0], &c, 1) != 1)
			_exit(1);
		_exit(c);
	}
	close(in[0]);
	got = waitpid(child, &st, WNOHANG);
	printf("WNOHANG on a blocked child returned %d\n", (int)got);
	if (write(in[1], "\x2a", 1) != 1)
		perror("write");
	close(in[1]);
	got = waitpid(child, &st, 0);
	print_status("exit(byte from pipe)", got, child, st);

	/* 4 */
	child = xfork();
	if (child == 0) {
		for (;;)
			pause();
	}
	kill(child, SIGKILL);
	got = waitpid(child, &st, 0);
	print_status("SIGKILL", got, child, st);

	/* 5 */
	child = xfork();
	if (child == 0) {
		volatile int *volatile p = NULL;

		signal(SIGSEGV, SIG_DFL);
		*p = 1;
		_exit(0);
	}
	got = waitpid(child, &st, 0);
	print_status("store to NULL", got, child, st);

	/* 6 */
	errno = 0;
	got = wait(&st);
	printf("wait with no children: %d errno ECHILD=%s\n", (int)got,
	       errno == ECHILD ? "yes" : "no");
	return 0;
}
