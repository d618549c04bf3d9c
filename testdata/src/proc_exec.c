/* proc_exec: execve of other corpus programs found in the directory of this
 * program (readlink("/proc/self/exe")), so that the path resolves the same
 * way natively, under qemu and under uvm.
 * 1. execve of a missing file fails with ENOENT (and we are still here).
 * 2. fork + execve("hello"): the parent waits, exit status 0.
 * 3. fork + execve("args", argv, envp): the new program sees exactly the
 *    given arguments and environment; exit status 3.
 * 4. Finally, with a second thread running, the main thread execve's
 *    "hello": the process becomes hello (the thread is gone) and the exit
 *    status is hello's. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[PATH_MAX];

static void path_of(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
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

static pid_t spawn(const char *path, char *const argv[], char *const envp[])
{
	pid_t p;

	fflush(stdout);
	p = fork();
	if (p < 0) {
		perror("fork");
		_exit(1);
	}
	if (p == 0) {
		execve(path, argv, envp);
		printf("execve %s failed: %s\n", argv[0], strerror(errno));
		fflush(stdout);
		_exit(127);
	}
	return p;
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	char path[PATH_MAX + 16];
	char *hello_argv[] = {"hello", NULL};
	char *args_argv[] = {"args", "one", "two words", "", NULL};
	char *args_env[] = {"UVM_TEST_ENV=set by proc_exec", "OTHER=x", NULL};
	char *noenv[] = {NULL};
	char *slash;
	ssize_t n;
	pid_t child, got;
	pthread_t t;
	int st = 0;

	n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	if (n <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (!slash) {
		fprintf(stderr, "no directory in %s\n", dir);
		return 1;
	}
	*slash = 0;

	/* 1 */
	path_of(path, sizeof path, "no-such-program");
	errno = 0;
	execve(path, hello_argv, noenv);
	printf("execve of a missing file: errno ENOENT=%s\n", errno == ENOENT ? "yes" : "no");

	/* 2 */
	path_of(path, sizeof path, "hello");
	printf("running hello:\n");
	child = spawn(path, hello_argv, noenv);
	got = waitpid(child, &st, 0);
	print_status("hello", got, child, st);

	/* 3 */
	path_of(path, sizeof path, "args");
	printf("running args:\n");
	child = spawn(path, args_argv, args_env);
	got = waitpid(child, &st, 0);
	print_status("args", got, child, st);

	/* 4 */
	if (pthread_create(&t, NULL, idle_thread, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	path_of(path, sizeof path, "hello");
	printf("execve hello from a process with two threads:\n");
	fflush(stdout);
	execve(path, hello_argv, noenv);
	printf("execve failed: %s\n", strerror(errno));
	return 1;
}
