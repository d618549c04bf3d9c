// forkbench: fork round trips from a parent with a large resident heap
// (issue 23's fork benchmark; cmd/uvm's BenchmarkForkRoundTrip runs it).
//
//   forkbench MIB N [RUNNER...]
//                     touch MIB MiB (every page written), then time N
//                     fork + _exit + wait and N fork + execve(self --child)
//                     + wait round trips; print the rates (per second).
//                     With RUNNER the child execs RUNNER... self --child
//                     instead: qemu-user has no binfmt_misc on a host
//                     without it, so its guest execs qemu itself, as
//                     binfmt_misc would.
//   forkbench --child exit 0 at once (the execve target)
//
// Every child checks one byte of the heap before it leaves (exit status 1
// if the parent's memory did not reach it), and the parent checks each
// child's status, so a broken fork fails the run instead of looking fast.
// Output lines: "mib M", "forks N", "fork_exit_per_s R",
// "fork_exec_per_s R" (R varies from run to run; nothing else does).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int reap(pid_t pid) {
	int st;
	for (;;) {
		pid_t w = waitpid(pid, &st, 0);
		if (w == pid)
			break;
		if (w < 0 && errno == EINTR)
			continue;
		perror("waitpid");
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "forkbench: child status %#x\n", st);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv) {
	if (argc == 2 && strcmp(argv[1], "--child") == 0)
		return 0;
	if (argc < 3 || argc > 3 + 8) {
		fprintf(stderr, "usage: forkbench MIB N [RUNNER...] | forkbench --child\n");
		return 2;
	}
	char *end;
	long mib = strtol(argv[1], &end, 10);
	if (*end || mib < 1 || mib > 65536) {
		fprintf(stderr, "forkbench: MIB must be 1..65536\n");
		return 2;
	}
	long n = strtol(argv[2], &end, 10);
	if (*end || n < 1 || n > 10000000) {
		fprintf(stderr, "forkbench: N must be 1..10000000\n");
		return 2;
	}
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	self[sl] = 0;

	size_t size = (size_t)mib << 20;
	volatile unsigned char *heap = malloc(size);
	if (!heap) {
		fprintf(stderr, "forkbench: malloc %ld MiB failed\n", mib);
		return 1;
	}
	long page = sysconf(_SC_PAGESIZE);
	for (size_t off = 0; off < size; off += (size_t)page)
		heap[off] = (unsigned char)(off / (size_t)page * 7 + 1);
	size_t probe = size / 2 / (size_t)page * (size_t)page;
	unsigned char want = heap[probe];
	printf("mib %ld\nforks %ld\n", mib, n);
	fflush(stdout);

	double t0 = now();
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(heap[probe] == want ? 0 : 1);
		if (reap(pid))
			return 1;
	}
	double t1 = now();
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			if (heap[probe] != want)
				_exit(1);
			char *cargv[8 + 3];
			int k = 0;
			for (int a = 3; a < argc; a++)
				cargv[k++] = argv[a];
			cargv[k++] = self;
			cargv[k++] = "--child";
			cargv[k] = NULL;
			char *cenv[] = {NULL};
			execve(cargv[0], cargv, cenv);
			_exit(127);
		}
		if (reap(pid))
			return 1;
	}
	double t2 = now();
	printf("fork_exit_per_s %.1f\nfork_exec_per_s %.1f\n", (double)n / (t1 - t0), (double)n / (t2 - t1));
	return 0;
}
