/* cowfork: fork's copy-on-write semantics, as a program sees them.
 * 1. Private memory (heap, data, stack) written by parent and child after
 *    fork: each sees only its own writes, in every page, while both live;
 *    a grandchild's writes reach neither.
 * 2. mprotect after fork: the parent makes a shared page read-only while
 *    the child writes it (and the other way round); each side's
 *    permission is its own.
 * 3. MADV_DONTNEED after fork: dropping the page on one side leaves the
 *    other side's copy.
 * 4. Code after fork: an RWX page holding a function is rewritten by the
 *    child and then by the parent; each executes its own version.
 * 5. A thread of the parent stores to a counter while the main thread
 *    forks (20 times): in each child the counter stays frozen, in the
 *    parent it keeps moving.
 * 6. MAP_SHARED|MAP_ANONYMOUS memory stays shared after fork.
 * 7. The child's resident set counts the pages it shares (as Linux's
 *    per-process RSS does).
 *
 *   cowfork --bench MB N        touch MB MiB, then N times fork + _exit + wait
 *   cowfork --execbench MB N P  the same with fork + execve(P) + wait
 * stdout is flushed before each fork; children leave with _exit. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPAGES 64
#define PG 4096

static char data_page[PG] __attribute__((aligned(PG))) = {1};

static pid_t xfork(void)
{
	fflush(stdout);
	pid_t p = fork();
	if (p < 0) {
		perror("fork");
		exit(1);
	}
	return p;
}

static int reap(pid_t c)
{
	int st;
	if (waitpid(c, &st, 0) != c)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void xwrite(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(90);
}

static char xread(int fd)
{
	char c = 0;
	if (read(fd, &c, 1) != 1)
		_exit(91);
	return c;
}

/* check returns 1 when every byte of every page of m is what owner
 * writes: pages with (i % 2 == parity) hold mine, the others old. */
static int check(const unsigned char *m, int npages, int parity, unsigned char mine, unsigned char old)
{
	for (int i = 0; i < npages; i++)
		for (int j = 0; j < PG; j++)
			if (m[i * PG + j] != ((i % 2 == parity) ? mine : old))
				return 0;
	return 1;
}

static void fill(unsigned char *m, int npages, int parity, unsigned char v)
{
	for (int i = 0; i < npages; i++)
		if (i % 2 == parity)
			memset(m + i * PG, v, PG);
}

static void part1(void)
{
	unsigned char *heap = aligned_alloc(PG, NPAGES * PG);
	unsigned char stack[4 * PG];
	int p2c[2], c2p[2];
	memset(heap, 'P', NPAGES * PG);
	memset(stack, 's', sizeof stack);
	memset(data_page, 'd', PG);
	if (pipe(p2c) || pipe(c2p))
		exit(1);
	pid_t c = xfork();
	if (c == 0) {
		/* child: even pages, then wait for the parent's odd pages */
		fill(heap, NPAGES, 0, 'C');
		stack[0] = 'c';
		data_page[7] = 'c';
		xwrite(c2p[1], 'w');
		xread(p2c[0]);
		int ok = check(heap, NPAGES, 0, 'C', 'P') && stack[0] == 'c' && stack[PG] == 's' &&
			 data_page[7] == 'c' && data_page[8] == 'd';
		/* a grandchild shares the child's pages three ways */
		pid_t g = fork();
		if (g == 0) {
			fill(heap, NPAGES, 1, 'G');
			_exit(check(heap, NPAGES, 1, 'G', 'C') ? 0 : 1);
		}
		int gok = reap(g) == 0 && check(heap, NPAGES, 0, 'C', 'P');
		_exit(ok && gok ? 0 : 1);
	}
	xread(c2p[0]);
	fill(heap, NPAGES, 1, 'Q');
	stack[1] = 'p';
	data_page[8] = 'p';
	xwrite(p2c[1], 'w');
	int st = reap(c);
	int ok = check(heap, NPAGES, 1, 'Q', 'P') && stack[0] == 's' && stack[1] == 'p' && data_page[7] == 'd' &&
		 data_page[8] == 'p';
	printf("1 private memory: child sees only its writes=%s parent sees only its writes=%s\n",
	       st == 0 ? "yes" : "no", ok ? "yes" : "no");
	free(heap);
	close(p2c[0]), close(p2c[1]), close(c2p[0]), close(c2p[1]);
}

static sigjmp_buf jb;
static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

/* try_store reports whether a store to p succeeded (SIGSEGV caught). */
static int try_store(volatile unsigned char *p, unsigned char v)
{
	if (sigsetjmp(jb, 1))
		return 0;
	*p = v;
	return 1;
}

static void part2(void)
{
	unsigned char *m = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int p2c[2], c2p[2];
	struct sigaction sa = {0};
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	m[0] = 'A';
	m[PG] = 'a';
	if (pipe(p2c) || pipe(c2p))
		exit(1);
	pid_t c = xfork();
	if (c == 0) {
		xread(p2c[0]); /* the parent made page 0 read-only */
		int w = try_store(m, 'B');
		/* the child makes page 1 read-only; the parent writes it */
		mprotect(m + PG, PG, PROT_READ);
		int ro = !try_store(m + PG, 'b');
		xwrite(c2p[1], 'w');
		xread(p2c[0]);
		_exit(w && m[0] == 'B' && ro && m[PG] == 'a' ? 0 : 1);
	}
	mprotect(m, PG, PROT_READ);
	xwrite(p2c[1], 'w');
	xread(c2p[0]);
	int ro = !try_store(m, 'X');
	int seesA = m[0] == 'A';
	mprotect(m, PG, PROT_READ | PROT_WRITE);
	int w = try_store(m, 'D');
	int w1 = try_store(m + PG, 'e');
	xwrite(p2c[1], 'w');
	int st = reap(c);
	printf("2 mprotect: parent read-only=%s parent sees its copy=%s parent writes again=%s child=%s\n",
	       ro ? "yes" : "no", seesA ? "yes" : "no", w && w1 && m[0] == 'D' && m[PG] == 'e' ? "yes" : "no",
	       st == 0 ? "ok" : "wrong");
	signal(SIGSEGV, SIG_DFL);
	munmap(m, 2 * PG);
	close(p2c[0]), close(p2c[1]), close(c2p[0]), close(c2p[1]);
}

static void part3(void)
{
	unsigned char *m = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int p2c[2];
	memset(m, 'M', PG);
	if (pipe(p2c))
		exit(1);
	pid_t c = xfork();
	if (c == 0) {
		madvise(m, PG, MADV_DONTNEED);
		int zero = m[0] == 0 && m[PG - 1] == 0;
		m[1] = 'n';
		xread(p2c[0]); /* the parent dropped its page too */
		_exit(zero && m[1] == 'n' && m[0] == 0 ? 0 : 1);
	}
	int kept = m[0] == 'M' && m[1] == 'M';
	madvise(m, PG, MADV_DONTNEED);
	int zero = m[0] == 0 && m[1] == 0;
	xwrite(p2c[1], 'w');
	int st = reap(c);
	printf("3 MADV_DONTNEED: parent keeps its copy=%s then reads zeroes=%s child=%s\n", kept ? "yes" : "no",
	       zero ? "yes" : "no", st == 0 ? "ok" : "wrong");
	munmap(m, PG);
	close(p2c[0]), close(p2c[1]);
}

typedef int (*fn)(void);

static void emit(unsigned char *p, int v)
{
#if defined(__aarch64__)
	uint32_t insn[2] = {0x52800000u | (uint32_t)v << 5, /* mov w0, #v */
			    0xd65f03c0u};			 /* ret */
#elif defined(__x86_64__)
	unsigned char insn[6] = {0xb8, (unsigned char)v, 0, 0, 0, /* mov eax, v */
				 0xc3};				  /* ret */
#endif
	memcpy(p, insn, sizeof insn);
	__builtin___clear_cache((char *)p, (char *)p + 16);
}

static void part4(void)
{
	unsigned char *code = mmap(NULL, PG, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int p2c[2], c2p[2];
	emit(code, 1);
	int before = ((fn)code)();
	if (pipe(p2c) || pipe(c2p))
		exit(1);
	pid_t c = xfork();
	if (c == 0) {
		int a = ((fn)code)();
		emit(code, 2);
		int b = ((fn)code)();
		xwrite(c2p[1], 'w');
		xread(p2c[0]); /* the parent rewrote its copy */
		int d = ((fn)code)();
		_exit(a == 1 && b == 2 && d == 2 ? 0 : 1);
	}
	xread(c2p[0]);
	int a = ((fn)code)();
	emit(code, 3);
	int b = ((fn)code)();
	xwrite(p2c[1], 'w');
	int st = reap(c);
	printf("4 code: before fork %d, parent after the child's rewrite %d, after its own %d, child=%s\n", before, a,
	       b, st == 0 ? "ok" : "wrong");
	munmap(code, PG);
	close(p2c[0]), close(p2c[1]), close(c2p[0]), close(c2p[1]);
}

static volatile unsigned long counter;
static volatile int stop_counting, counting;

static void *count(void *arg)
{
	(void)arg;
	counting = 1;
	while (!stop_counting)
		counter++;
	return NULL;
}

static void part5(void)
{
	pthread_t th;
	int frozen = 0, moved = 0;
	enum { FORKS = 20 };
	pthread_create(&th, NULL, count, NULL);
	while (!counting)
		sched_yield();
	for (int i = 0; i < FORKS; i++) {
		unsigned long at = counter;
		pid_t c = xfork();
		if (c == 0) {
			/* only the forking thread exists here */
			unsigned long c1 = counter;
			for (int k = 0; k < 3; k++)
				sched_yield();
			_exit(counter == c1 && c1 >= at ? 0 : 1);
		}
		if (reap(c) == 0)
			frozen++;
		unsigned long now = counter;
		for (int k = 0; k < 2000 && counter == now; k++)
			usleep(500);
		if (counter != now)
			moved++;
	}
	stop_counting = 1;
	pthread_join(th, NULL);
	printf("5 thread storing during fork: frozen in %d of %d children, moving in the parent after %d\n", frozen,
	       FORKS, moved);
}

static void part6(void)
{
	volatile int *s = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s[0] = 1;
	pid_t c = xfork();
	if (c == 0) {
		s[0] = 2;
		s[1] = 3; /* an untouched part of the same page */
		_exit(0);
	}
	reap(c);
	printf("6 MAP_SHARED after fork: parent sees the child's writes=%s\n", s[0] == 2 && s[1] == 3 ? "yes" : "no");
}

static long rss_pages(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / 4;
}

static void part7(void)
{
	enum { N = 1024 }; /* 4 MiB */
	unsigned char *m = mmap(NULL, N * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < N; i++)
		m[i * PG] = 1;
	pid_t c = xfork();
	if (c == 0)
		_exit(rss_pages() >= N ? 0 : 1);
	printf("7 the child's RSS counts the shared pages=%s\n", reap(c) == 0 ? "yes" : "no");
	munmap(m, N * PG);
}

static void touch(long mb)
{
	size_t n = (size_t)mb << 20;
	unsigned char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (size_t i = 0; i < n; i += PG)
		m[i] = 1;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && (strcmp(argv[1], "--bench") == 0 || strcmp(argv[1], "--execbench") == 0)) {
		int exec = argv[1][2] == 'e';
		touch(atol(argv[2]));
		int n = atoi(argv[3]), ok = 0;
		for (int i = 0; i < n; i++) {
			pid_t c = xfork();
			if (c == 0) {
				if (exec && argc > 4)
					execl(argv[4], argv[4], (char *)NULL);
				_exit(0);
			}
			if (reap(c) == 0)
				ok++;
		}
		printf("%d of %d\n", ok, n);
		return ok == n ? 0 : 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	part1();
	part2();
	part3();
	part4();
	part5();
	part6();
	part7();
	return 0;
}
