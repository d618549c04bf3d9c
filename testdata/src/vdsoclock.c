/* vdsoclock: the C library's clock functions (which take the vDSO when the
 * kernel maps one) against the raw system calls. For every clock, libc
 * and syscall reads interleave and must never go backwards; gettimeofday,
 * time and clock_gettime(CLOCK_REALTIME) agree with each other;
 * clock_getres answers as the syscall does; clocks the vDSO does not serve
 * (CPU-time clocks, invalid ids) still work or fail as the syscall does.
 * The last line counts the program's own clock_gettime syscalls (the test
 * compares it with uvm --stats: libc's calls must make none).
 *
 * "vdsoclock maps" also prints the [vvar]/[vdso] lines of /proc/self/maps
 * (permissions and name) and checks that the data page is read-only:
 * mprotect to writable fails with EACCES, a store is SIGSEGV, MADV_DONTNEED
 * is EINVAL, and a fork child still reads the clocks. Not in the corpus
 * default run: the maps differ between kernels. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { N = 200 };
static int bad;
static long direct; /* clock_gettime syscalls made by this program */

#define CHECK(cond, ...)                          \
	do {                                      \
		if (!(cond)) {                    \
			bad++;                    \
			printf("FAIL " __VA_ARGS__); \
			printf("\n");             \
		}                                 \
	} while (0)

static long long ns(struct timespec t) { return (long long)t.tv_sec * 1000000000LL + t.tv_nsec; }

static int sys_gettime(clockid_t id, struct timespec *ts)
{
	direct++;
	return syscall(SYS_clock_gettime, id, ts);
}

static void clocks(void)
{
	static const clockid_t ids[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
					CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME};
	for (unsigned k = 0; k < sizeof ids / sizeof ids[0]; k++) {
		struct timespec a, b, c;
		int back = 0;
		for (int i = 0; i < N; i++) {
			if (clock_gettime(ids[k], &a) || sys_gettime(ids[k], &b) || clock_gettime(ids[k], &c)) {
				CHECK(0, "clock %d: error %d", (int)ids[k], errno);
				break;
			}
			if (ns(a) > ns(b) || ns(b) > ns(c) || a.tv_nsec >= 1000000000 || c.tv_nsec >= 1000000000)
				back++;
		}
		CHECK(back == 0, "clock %d: %d reads out of order", (int)ids[k], back);
		printf("clock %d: %d interleaved reads in order\n", (int)ids[k], 3 * N);
	}
}

static void wallclock(void)
{
	int back = 0;
	struct timeval p = {0, 0};
	for (int i = 0; i < N; i++) {
		struct timeval v, s;
		struct timezone tz = {-1, -1};
		if (gettimeofday(&v, &tz) || syscall(SYS_gettimeofday, &s, NULL)) {
			CHECK(0, "gettimeofday: error %d", errno);
			break;
		}
		CHECK(tz.tz_minuteswest == 0 && tz.tz_dsttime == 0, "gettimeofday tz %d %d", tz.tz_minuteswest, tz.tz_dsttime);
		long long pv = p.tv_sec * 1000000LL + p.tv_usec, vv = v.tv_sec * 1000000LL + v.tv_usec,
			  sv = s.tv_sec * 1000000LL + s.tv_usec;
		if (pv > vv || vv > sv || v.tv_usec >= 1000000)
			back++;
		p = s;
	}
	CHECK(back == 0, "gettimeofday: %d reads out of order", back);
	/* time, clock_gettime and gettimeofday tell the same second. */
	for (int i = 0; i < N; i++) {
		struct timespec r;
		struct timeval v;
		time_t t1 = time(NULL);
		clock_gettime(CLOCK_REALTIME, &r);
		gettimeofday(&v, NULL);
		time_t t2;
		time(&t2);
		/* time() may read the coarse clock, a tick behind. */
		if (t1 > r.tv_sec || r.tv_sec > v.tv_sec || v.tv_sec > t2 + 1)
			back++;
	}
	CHECK(back == 0, "time/realtime/gettimeofday: %d out of order", back);
	printf("wall clock: %d reads in order\n", 6 * N);
}

static void getres(void)
{
	for (clockid_t id = -3; id < 16; id++) {
		struct timespec a = {-1, -1}, b = {-1, -1};
		errno = 0;
		int ra = clock_getres(id, &a), ea = errno;
		errno = 0;
		int rb = syscall(SYS_clock_getres, id, &b), eb = errno;
		CHECK(ra == rb && ea == eb && a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec,
		      "clock_getres(%d): libc %d/%d %lld.%09ld, syscall %d/%d %lld.%09ld", (int)id, ra, ea,
		      (long long)a.tv_sec, a.tv_nsec, rb, eb, (long long)b.tv_sec, b.tv_nsec);
		CHECK(clock_getres(id, NULL) == rb, "clock_getres(%d, NULL)", (int)id);
	}
	printf("clock_getres: libc equals the syscall\n");
}

static void fallbacks(void)
{
	struct timespec t;
	direct += 2; /* the vDSO passes these two on to the syscall */
	CHECK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0, "CLOCK_PROCESS_CPUTIME_ID: %d", errno);
	errno = 0;
	CHECK(clock_gettime(100, &t) == -1 && errno == EINVAL, "clock 100: errno %d", errno);
	unsigned cpu = ~0u, node = ~0u;
	CHECK(syscall(SYS_getcpu, &cpu, &node, NULL) == 0 && cpu != ~0u, "getcpu syscall: %d", errno);
	CHECK(sched_getcpu() >= 0, "sched_getcpu: %d", errno);
	printf("fallbacks: cpu clocks, invalid ids and getcpu work\n");
}

static sigjmp_buf jb;
static void onsegv(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

static void maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long vvar = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perm[8], name[64] = "";
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %63s", &lo, &hi, perm, name) < 3)
			continue;
		if (strcmp(name, "[vvar]") == 0)
			vvar = lo;
		if (strcmp(name, "[vvar]") == 0 || strcmp(name, "[vdso]") == 0)
			printf("%s %s%s\n", perm, name,
			       strcmp(name, "[vdso]") == 0 && lo == getauxval(AT_SYSINFO_EHDR) ? " at AT_SYSINFO_EHDR" : "");
	}
	if (f)
		fclose(f);
	if (!vvar) {
		printf("no [vvar]\n");
		return;
	}
	errno = 0;
	CHECK(mprotect((void *)vvar, 4096, PROT_READ | PROT_WRITE) == -1 && errno == EACCES, "mprotect vvar rw: errno %d", errno);
	errno = 0;
	CHECK(madvise((void *)vvar, 4096, MADV_DONTNEED) == -1 && errno == EINVAL, "madvise vvar: errno %d", errno);
	static volatile int stored;
	signal(SIGSEGV, onsegv);
	if (sigsetjmp(jb, 1) == 0) {
		*(volatile int *)vvar = 1;
		stored = 1; /* volatile: not moved before the faulting store */
	}
	CHECK(!stored, "store to [vvar] did not fault");
	if (!stored)
		printf("store to [vvar]: SIGSEGV\n");
	signal(SIGSEGV, SIG_DFL);
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
		_exit(ns(a) <= ns(b) ? 0 : 1);
	}
	direct++;
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork child: status %#x", st);
	printf("fork child reads the clocks\n");
}

int main(int argc, char **argv)
{
	clocks();
	wallclock();
	getres();
	fallbacks();
	if (argc > 1 && strcmp(argv[1], "maps") == 0)
		maps();
	printf("direct clock_gettime syscalls: %ld\n", direct);
	printf("%s\n", bad ? "FAILED" : "ok");
	return bad != 0;
}
