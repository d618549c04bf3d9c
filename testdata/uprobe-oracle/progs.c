/* Whole programs for the uprobe oracle (cmd/uvm TestUprobeOracleWholePrograms):
 * the kernel (perf uprobes) and uvm probe the same functions of this static
 * x86-64 program and must count the same hits and see the same return
 * values. progs MODE runs one scenario; it prints what it computed and,
 * where the number of calls depends on timing, how many calls it made
 * ("calls FUNC N"), so that hits can be checked against the program's own
 * count. Build: build.sh (gcc -O1, no inlining, no sibling calls: every
 * probed function is entered by a call and returns by a ret). */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define P __attribute__((noinline, noclone, used))

static volatile long sink;

/* leaf: the common probed function; its return value is checked. */
P long leaf(long x)
{
	sink++;
	return x * 3 + 1;
}

/* fib: recursion (hits = calls; uretprobes: every return). */
P long fib(long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* deep: recursion deeper than MAX_URETPROBE_DEPTH (64): the kernel
 * hijacks no return address beyond 64 pending instances. */
P long deep(long n)
{
	return n == 0 ? 0 : 1 + deep(n - 1);
}

/* longjmp out of probed functions: their return instances are dropped
 * (the kernel checks the stack pointer when the next return or entry
 * comes) and their uretprobes never fire. */
static jmp_buf jb;
P void thrower(long d)
{
	if (d == 0)
		longjmp(jb, 1);
	thrower(d - 1);
	sink++;
}
P long catcher(long d)
{
	if (setjmp(jb))
		return 100 + d;
	thrower(d);
	return 0;
}

/* forker: forks inside a probed function; the child inherits the pending
 * return instance (dup_utask) and both return (1 in the child, 2 in the
 * parent). */
P long forker(void)
{
	pid_t p = fork();
	if (p < 0)
		exit(9);
	return p == 0 ? 1 : 2;
}

static volatile sig_atomic_t usr1s, ticks;

/* on_usr1: a probed signal handler; it calls leaf. Its uretprobe fires
 * when it returns into the signal trampoline (sa_restorer). */
P void on_usr1(int sig)
{
	(void)sig;
	usr1s++;
	sink += leaf(100 + usr1s);
}

/* raiser: takes a signal during the probed function (kill returns with
 * SIGUSR1 pending; the handler runs before raiser goes on). */
P long raiser(long x)
{
	kill(getpid(), SIGUSR1);
	return leaf(x) + 1;
}

P void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

/* xol_area finds the [uprobes] mapping in /proc/self/maps (0: none). */
static unsigned long xol_area(void)
{
	char line[512];
	unsigned long lo = 0, a, b;
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "[uprobes]") && sscanf(line, "%lx-%lx", &a, &b) == 2)
			lo = a;
	fclose(f);
	return lo;
}

/* try_mremap prints mremap's result on the XOL area: the errno, or
 * "moved"/"same" and where the area is afterwards. */
static void try_mremap(const char *what, unsigned long xol, size_t newlen, int flags, unsigned long to)
{
	void *r = mremap((void *)xol, 4096, newlen, flags, (void *)to);
	if (r == MAP_FAILED)
		printf("mremap %s: errno %d\n", what, errno);
	else
		printf("mremap %s: ok, %s; [uprobes] %s\n", what, (unsigned long)r == xol ? "in place" : "moved",
			xol_area() == xol ? "unmoved" : "moved");
}

static void *worker(void *arg)
{
	long id = (long)arg, i, s = 0;
	for (i = 0; i < 100; i++)
		s += leaf(id * 1000 + i);
	return (void *)s;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	long i, s = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "recursion")) {
		printf("fib(15) = %ld\n", fib(15));
		printf("deep(100) = %ld\n", deep(100));
		printf("deep(60) = %ld\n", deep(60));
	} else if (!strcmp(m, "loop")) {
		for (i = 0; i < 1000; i++)
			s += leaf(i);
		printf("sum %ld\n", s);
	} else if (!strcmp(m, "longjmp")) {
		for (i = 0; i < 5; i++)
			s += catcher(i);
		/* Returns after the dropped instances still fire. */
		s += leaf(7) + catcher(0) + leaf(8);
		printf("sum %ld\n", s);
	} else if (!strcmp(m, "threads")) {
		pthread_t t[4];
		for (i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, (void *)(i + 1));
		for (i = 0; i < 10; i++)
			s += leaf(i);
		for (i = 0; i < 4; i++) {
			void *r;
			pthread_join(t[i], &r);
			s += (long)r;
		}
		printf("sum %ld\n", s);
	} else if (!strcmp(m, "fork")) {
		pid_t p;
		int st;
		for (i = 0; i < 3; i++)
			s += leaf(i);
		p = fork();
		if (p == 0) {
			for (i = 0; i < 5; i++)
				s += leaf(10 + i);
			_exit(s & 0x7f);
		}
		waitpid(p, &st, 0);
		for (i = 0; i < 7; i++)
			s += leaf(20 + i);
		if (forker() == 1) {
			leaf(50);
			_exit(0);
		}
		wait(&st);
		s += leaf(60);
		printf("sum %ld child %d\n", s, WEXITSTATUS(st));
	} else if (!strcmp(m, "signal")) {
		signal(SIGUSR1, on_usr1);
		for (i = 0; i < 3; i++)
			s += raiser(i);
		printf("sum %ld usr1 %d\n", s, (int)usr1s);
	} else if (!strcmp(m, "itimer")) {
		/* Timer signals arrive at any instruction, also during the
		 * out-of-line single-step of leaf's first instruction. */
		struct itimerval it = {{0, 200}, {0, 200}};
		signal(SIGALRM, on_tick);
		setitimer(ITIMER_REAL, &it, NULL);
		for (i = 0; i < 10000; i++)
			s += leaf(i & 7);
		memset(&it, 0, sizeof it);
		setitimer(ITIMER_REAL, &it, NULL);
		printf("sum %ld\ncalls on_tick %d\n", s, (int)ticks);
	} else if (!strcmp(m, "mremap")) {
		/* The XOL area is a special mapping: the kernel refuses to
		 * move or grow it (6.13+: xol_mremap). */
		unsigned long xol, spare;
		s = leaf(1);
		xol = xol_area();
		if (!xol) {
			printf("no [uprobes] mapping\n");
			return 0;
		}
		spare = (unsigned long)mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap((void *)spare, 8192);
		try_mremap("grow", xol, 8192, 0, 0);
		try_mremap("grow-maymove", xol, 8192, MREMAP_MAYMOVE, 0);
		try_mremap("move", xol, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, spare);
		try_mremap("same", xol, 4096, 0, 0);
		s += leaf(2);
		printf("sum %ld; [uprobes] %s\n", s, xol_area() == xol ? "unmoved" : "moved");
	} else {
		return 2;
	}
	return 0;
}
