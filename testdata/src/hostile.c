// hostile: what an attacker's guest tries against the emulator's host
// process. Every step must end in Linux's errno or signal, and the output
// must equal a native run's. Usage: hostile DIR (a scratch directory).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf jb;
static volatile int lastsig;

static void onsig(int sig) {
	lastsig = sig;
	siglongjmp(jb, 1);
}

static const char *dir;

static int tmpfile_with(const char *name, const char *data, size_t n) {
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, n) != (ssize_t)n) {
		perror(path);
		exit(2);
	}
	return fd;
}

static void store16(uintptr_t addr) {
#if defined(__aarch64__)
	__asm__ volatile("movi v0.16b, #0xaa\n\tstr q0, [%0]" ::"r"(addr) : "v0", "memory");
#else
	__asm__ volatile("pcmpeqb %%xmm0, %%xmm0\n\tmovups %%xmm0, (%0)" ::"r"(addr) : "xmm0", "memory");
#endif
}

static void store8(uintptr_t addr) { *(volatile uint64_t *)addr = 1; }

// Stores whose byte range wraps past 2^64 or leaves user space.
static void wrapstores(void) {
	uintptr_t addrs[] = {(uintptr_t)-8, (uintptr_t)-1, (uintptr_t)-4096 + 8};
	for (volatile int i = 0; i < 3; i++) {
		lastsig = 0;
		if (sigsetjmp(jb, 1) == 0)
			store16(addrs[i]);
		printf("store16 %d: signal %d\n", i, lastsig);
		lastsig = 0;
		if (sigsetjmp(jb, 1) == 0)
			store8(addrs[i] | 4);
		printf("store8 %d: signal %d\n", i, lastsig);
	}
	// A store that straddles a mapped page and an unmapped one.
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(p + 4096, 4096);
	lastsig = 0;
	if (sigsetjmp(jb, 1) == 0)
		store16((uintptr_t)p + 4096 - 8);
	// (Whether the mapped half was written is the arch's business: x86
	// writes nothing, arm64 leaves it unpredictable.)
	printf("straddle: signal %d\n", lastsig);
	munmap(p, 4096);
}

static void result(const char *what, long r) {
	if (r < 0)
		printf("%s: %s\n", what, strerrorname_np(errno));
	else
		printf("%s: %ld\n", what, r);
}

// iov lengths near 2^63.
static void iovs(void) {
	int fd = tmpfile_with("iov", "hello", 5);
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(p + 4096, 4096);
	memset(p, 'x', 4096);
	struct iovec v[2] = {{p, (size_t)1 << 63}, {p, 1}};
	long r;
	result("writev len 2^63", writev(fd, v, 1));
	v[0].iov_len = 10;
	v[1].iov_len = ((size_t)1 << 63) - 5;
	r = writev(fd, v, 2);
	printf("writev sum past 2^63: %s\n", r < 0 && (errno == EFAULT || errno == EINVAL) ? "EFAULT or EINVAL" : "WRONG");
	// How much of a huge length over one readable page Linux moves
	// before the fault depends on the arch's access_ok and the kernel's
	// fault-in granularity; what matters is an answer, and no more
	// than the page.
	v[0].iov_len = (size_t)1 << 62;
	r = writev(fd, v, 1);
	printf("writev 2^62 of one page: %s\n", r == 4096 || (r < 0 && errno == EFAULT) ? "page or EFAULT" : "WRONG");
	lseek(fd, 0, SEEK_SET);
	r = readv(fd, v, 1);
	printf("readv 2^62: %s\n", (r > 0 && r <= 4096) || (r < 0 && errno == EFAULT) ? "file or EFAULT" : "WRONG");
	r = pwrite(fd, p, (size_t)1 << 62, 0);
	printf("write 2^62 of one page: %s\n", r == 4096 || (r < 0 && errno == EFAULT) ? "page or EFAULT" : "WRONG");
	static struct iovec many[1025];
	result("readv 1025 vectors", readv(fd, many, 1025));
	close(fd);
	munmap(p, 4096);
}

static void ranges(void) {
	unsigned char vec[4];
	char *p = mmap(NULL, 2 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	result("mincore wrapping length", mincore(p, (size_t)-4096, vec));
	result("mincore", mincore(p, 2 * 4096, vec));
	result("madvise wrapping length", madvise(p, (size_t)-4096, MADV_DONTNEED));
	result("mprotect wrapping length", mprotect(p, (size_t)-4096, PROT_READ));
	result("munmap wrapping length", munmap(p, (size_t)-4096));
	munmap(p, 2 * 4096);

	size_t big = (size_t)16 << 40;
	char *r = mmap(NULL, big, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	printf("reserve 16 TiB: %s\n", r == MAP_FAILED ? strerrorname_np(errno) : "ok");
	result("mprotect 16 TiB", mprotect(r, big, PROT_READ));
	result("madvise 16 TiB", madvise(r, big, MADV_DONTNEED));
	char *m = mremap(r, (size_t)4 << 40, ((size_t)4 << 40) + 4096, MREMAP_MAYMOVE);
	printf("mremap 4 TiB: %s\n", m == MAP_FAILED ? strerrorname_np(errno) : "ok");
	if (m != r)
		munmap(m, ((size_t)4 << 40) + 4096);
	result("munmap 16 TiB", munmap(r, big));
	void *f = mmap((void *)0x100000000, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	void *g = mmap((void *)0x100000000, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	printf("MAP_FIXED_NOREPLACE twice: %s, %s\n", f == MAP_FAILED ? "failed" : "ok", g == MAP_FAILED ? strerrorname_np(errno) : "ok");
	munmap(f, 4096);
}

static void files(void) {
	static char page[8192];
	for (int i = 0; i < 8192; i++)
		page[i] = 'a' + i % 26;
	int fd = tmpfile_with("small", "0123456789", 10);
	char *p = mmap(NULL, (size_t)1 << 40, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("mmap 1 TiB of a 10-byte file: %s\n", p == MAP_FAILED ? strerrorname_np(errno) : "ok");
	if (p != MAP_FAILED) {
		printf("first bytes %.10s, then %d\n", p, p[10]);
		lastsig = 0;
		if (sigsetjmp(jb, 1) == 0)
			(void)*(volatile char *)(p + 4096);
		printf("past EOF: signal %d\n", lastsig);
		munmap(p, (size_t)1 << 40);
	}
	close(fd);

	fd = tmpfile_with("priv", page, 8192);
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	p[0] = 'X';
	madvise(p, 8192, MADV_DONTNEED);
	printf("private file page after MADV_DONTNEED: %c\n", p[0]);
	char *a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a[0] = 'X';
	madvise(a, 4096, MADV_DONTNEED);
	printf("anonymous page after MADV_DONTNEED: %d\n", a[0]);
	result("MADV_FREE of a file mapping", madvise(p, 4096, MADV_FREE));
	result("MADV_REMOVE of private memory", madvise(a, 4096, MADV_REMOVE));
	munmap(p, 8192);
	munmap(a, 4096);
	close(fd);

	fd = tmpfile_with("shared", page, 8192);
	p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	memcpy(p + 4000, "MAPPED", 6);
	result("msync", msync(p, 8192, MS_SYNC));
	char buf[7] = {0};
	pread(fd, buf, 6, 4000);
	printf("file after msync: %s\n", buf);
	memcpy(p + 100, "UNMAP", 5);
	munmap(p, 3 * 4096);
	pread(fd, buf, 5, 100);
	buf[5] = 0;
	printf("file after munmap: %s\n", buf);
	close(fd);
	int ro = open("/proc/self/exe", O_RDONLY);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
	printf("shared writable map of a read-only fd: %s\n", p == MAP_FAILED ? strerrorname_np(errno) : "ok");
	close(ro);

	int z = open("/dev/zero", O_RDWR);
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE, z, 0);
	printf("mmap of /dev/zero: %s, %d\n", p == MAP_FAILED ? strerrorname_np(errno) : "ok", p == MAP_FAILED ? -1 : p[12345]);
	close(z);
	char *argv[] = {"zero", NULL};
	execve("/dev/zero", argv, argv + 1);
	printf("execve /dev/zero: %s\n", strerrorname_np(errno));
}

// MAP_SHARED|MAP_ANONYMOUS pages nobody touched before fork are shared.
static void sharedfork(void) {
	char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	p[0] = 'P';
	pid_t c = fork();
	if (c == 0) {
		memcpy(p + 4096, "child", 6);
		p[0] = 'C';
		_exit(0);
	}
	waitpid(c, NULL, 0);
	printf("shared after fork: %c %s\n", p[0], p + 4096);
}

// /proc/self/mem reads and writes the guest's own memory, as ptrace does:
// page protections do not apply, unmapped addresses are EIO.
static volatile int target = 1;
static void procmem(void) {
	int fd = open("/proc/self/mem", O_RDWR);
	if (fd < 0) {
		printf("/proc/self/mem: %s\n", strerrorname_np(errno));
		return;
	}
	int two = 2;
	long w = pwrite(fd, &two, sizeof two, (off_t)(uintptr_t)&target);
	printf("/proc/self/mem write: %ld, variable now %d\n", w, target);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w = pwrite(fd, "forced", 6, (off_t)(uintptr_t)ro);
	printf("/proc/self/mem write to a read-only page: %ld, %.6s\n", w, ro);
	char buf[8];
	munmap(ro, 4096);
	result("/proc/self/mem read of unmapped memory", pread(fd, buf, 8, (off_t)(uintptr_t)ro));
	close(fd);
}

static void environ_file(void) {
	char buf[256];
	int fd = open("/proc/self/environ", O_RDONLY);
	ssize_t n = read(fd, buf, sizeof buf);
	close(fd);
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = '|';
	printf("/proc/self/environ: %.*s\n", (int)(n < 0 ? 0 : n), buf);
}

// Concurrent mmap/munmap: no two live ranges may overlap.
enum { NTHREADS = 8, NMAPS = 200 };
static volatile int bad;

static void *mapper(void *arg) {
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u;
	unsigned char tag = (unsigned char)(uintptr_t)arg + 1;
	char *live[8] = {0};
	size_t len[8] = {0};
	for (int i = 0; i < NMAPS; i++) {
		int k = i % 8;
		if (live[k]) {
			for (size_t o = 0; o < len[k]; o += 4096)
				if ((unsigned char)live[k][o] != tag)
					bad = 1;
			munmap(live[k], len[k]);
		}
		seed = seed * 1103515245u + 12345u;
		len[k] = (1 + (seed >> 16) % 16) * 4096;
		live[k] = mmap(NULL, len[k], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (size_t o = 0; o < len[k]; o += 4096)
			live[k][o] = (char)tag;
	}
	for (int k = 0; k < 8; k++)
		munmap(live[k], len[k]);
	return NULL;
}

static void mmaprace(void) {
	pthread_t t[NTHREADS];
	for (uintptr_t i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, mapper, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("concurrent mmap: %s\n", bad ? "OVERLAP" : "ok");
}

// Resource limits as Linux enforces them.
static void limits(void) {
	struct rlimit r;
	getrlimit(RLIMIT_NOFILE, &r);
	struct rlimit low = {10, r.rlim_max};
	setrlimit(RLIMIT_NOFILE, &low);
	int opened = 0;
	while (open("/proc/self/exe", O_RDONLY) >= 0)
		opened++;
	printf("RLIMIT_NOFILE 10: opened %d more, then %s\n", opened, strerrorname_np(errno));
	result("dup2 past RLIMIT_NOFILE", dup2(0, 20));
	for (int fd = 3; fd < 10; fd++)
		close(fd);
	setrlimit(RLIMIT_NOFILE, &r);
	struct rlimit raise = {r.rlim_max, r.rlim_max};
	result("setrlimit soft up to hard", setrlimit(RLIMIT_NOFILE, &raise));
	struct rlimit bad = {20, 10};
	result("setrlimit soft above hard", setrlimit(RLIMIT_NOFILE, &bad));

	signal(SIGXFSZ, SIG_IGN);
	int fd = tmpfile_with("fsize", "", 0);
	struct rlimit fs = {100, RLIM_INFINITY};
	setrlimit(RLIMIT_FSIZE, &fs);
	char buf[200] = {0};
	// (The results are printed after the limit is lifted: stdout may be
	// a file longer than 100 bytes itself.)
	long w1 = write(fd, buf, 200);
	long w2 = write(fd, buf, 1);
	int e2 = errno;
	fs.rlim_cur = RLIM_INFINITY;
	setrlimit(RLIMIT_FSIZE, &fs);
	result("write 200 under RLIMIT_FSIZE 100", w1);
	errno = e2;
	result("write past RLIMIT_FSIZE", w2);
	close(fd);

	struct rlimit as = {(rlim_t)1 << 30, RLIM_INFINITY};
	setrlimit(RLIMIT_AS, &as);
	void *p = mmap(NULL, (size_t)2 << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	printf("mmap 2 GiB under RLIMIT_AS 1 GiB: %s\n", p == MAP_FAILED ? strerrorname_np(errno) : "ok");
	as.rlim_cur = RLIM_INFINITY;
	setrlimit(RLIMIT_AS, &as);

	struct rlimit data = {1 << 20, RLIM_INFINITY};
	setrlimit(RLIMIT_DATA, &data);
	p = sbrk(2 << 20);
	printf("sbrk 2 MiB under RLIMIT_DATA 1 MiB: %s\n", p == (void *)-1 ? strerrorname_np(errno) : "ok");
	data.rlim_cur = RLIM_INFINITY;
	setrlimit(RLIMIT_DATA, &data);
}

// memhog touches memory forever (run it under a memory limit).
static int memhog(void) {
	for (size_t mib = 0;; mib++) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			printf("mmap failed after %zu MiB\n", mib);
			return 3;
		}
		memset(p, 1, 1 << 20);
	}
}

// threads starts n threads that all block on one condition variable, then
// wakes and joins them; forks makes n children one after another, each
// exiting at once, and reaps them.
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go_on, waiting;

static void *sleeper(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mu);
	waiting++;
	while (!go_on)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static int threads(int n) {
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_t *t = calloc(n, sizeof *t);
	int made = 0;
	for (; made < n; made++)
		if (pthread_create(&t[made], &attr, sleeper, NULL) != 0)
			break;
	for (;;) {
		pthread_mutex_lock(&mu);
		int w = waiting;
		pthread_mutex_unlock(&mu);
		if (w == made)
			break;
		sched_yield();
	}
	pthread_mutex_lock(&mu);
	go_on = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	printf("threads: %d of %d started, all blocked, all joined\n", made, n);
	return made == n ? 0 : 1;
}

static int forks(int n) {
	int reaped = 0;
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0)
			_exit(i & 0x7f);
		int st;
		if (c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == (i & 0x7f))
			reaped++;
	}
	printf("forks: %d of %d reaped\n", reaped, n);
	return reaped == n ? 0 : 1;
}

// hang blocks every thread forever (a futex wait nobody wakes, after a
// thread that does the same): Linux leaves the process hanging, killable.
static void *hang_thread(void *arg) {
	static uint32_t never;
	(void)arg;
	for (;;)
		syscall(SYS_futex, &never, 0 /* FUTEX_WAIT */, 0, NULL, NULL, 0);
	return NULL;
}

static int hang(void) {
	pthread_t th;
	pthread_create(&th, NULL, hang_thread, NULL);
	printf("hanging\n");
	fflush(stdout);
	pthread_join(th, NULL);
	return 0;
}

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: hostile DIR | --memhog | --threads N | --forks N | --hang\n");
		return 2;
	}
	if (strcmp(argv[1], "--memhog") == 0)
		return memhog();
	if (strcmp(argv[1], "--threads") == 0 && argc > 2)
		return threads(atoi(argv[2]));
	if (strcmp(argv[1], "--forks") == 0 && argc > 2)
		return forks(atoi(argv[2]));
	if (strcmp(argv[1], "--hang") == 0)
		return hang();
	dir = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);
	struct sigaction sa = {0};
	sa.sa_handler = onsig;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	wrapstores();
	iovs();
	ranges();
	files();
	sharedfork();
	environ_file();
	procmem();
	mmaprace();
	limits();
	return 0;
}
