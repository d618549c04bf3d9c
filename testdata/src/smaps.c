// /proc/self/smaps: one entry per maps line (the same header lines, in
// order), each with Linux's fields; the rollup's Rss is their sum; a
// private anonymous mapping of 3 pages, 2 touched: Size 12 kB, Rss 8 kB,
// all private dirty, its VmFlags; after fork (the child sleeps in a pipe
// read) its pages are shared copy-on-write: Pss halves, Shared_Dirty. A
// MAP_SHARED anonymous page: sh/ms flags, no Anonymous. Native oracle
// (qemu-user shows its own /proc).
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

// Three buffers, touched before any read so that reading one file does
// not change the resident set the next one shows.
static char bufs[3][1 << 18];

static char *slurp(int i, const char *path) {
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *b = bufs[i];
	size_t n = 0, r;
	while (n < sizeof bufs[i] - 1 && (r = read(fileno(f), b + n, sizeof bufs[i] - 1 - n)) > 0)
		n += r;
	b[n] = 0;
	fclose(f);
	return b;
}

// entry prints the named fields of the smaps entry that starts at addr.
static void entry(const char *sm, unsigned long addr, const char *what) {
	char key[32];
	snprintf(key, sizeof key, "%lx-", addr);
	const char *p = sm;
	while ((p = strstr(p, key)) && p != sm && p[-1] != '\n')
		p++;
	if (!p) {
		printf("%s: no entry\n", what);
		return;
	}
	printf("%s:\n", what);
	const char *end = strstr(p, "VmFlags:");
	const char *fields[] = {"Size:", "KernelPageSize:", "MMUPageSize:", "Rss:", "Pss:", "Pss_Dirty:", "Shared_Clean:",
				"Shared_Dirty:", "Private_Clean:", "Private_Dirty:", "Anonymous:", "Swap:", "Locked:"};
	for (unsigned i = 0; i < sizeof fields / sizeof *fields; i++) {
		const char *f = strstr(p, fields[i]);
		long v = -1;
		if (f && f < end)
			sscanf(f + strlen(fields[i]), "%ld", &v);
		printf("  %s %ld\n", fields[i], v);
	}
	const char *nl = strchr(end, '\n');
	printf("  %.*s\n", (int)(nl - end), end);
}

int main(void) {
	long pg = sysconf(_SC_PAGESIZE);
	char *guard = mmap(NULL, 5 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a = guard + pg;
	mprotect(a, 3 * pg, PROT_READ | PROT_WRITE);
	a[0] = 1;
	a[pg] = 2;
	char *sh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sh[0] = 3;

	memset(bufs, 1, sizeof bufs);
	FILE *warm = fopen("/proc/self/maps", "r"); // stdio's buffers, once
	fclose(warm);
	char *sm = slurp(0, "/proc/self/smaps"), *maps = slurp(1, "/proc/self/maps"), *roll = slurp(2, "/proc/self/smaps_rollup");
	// Every maps line, in order, heads an smaps entry; count and sum Rss.
	int lines = 0, heads = 0, same = 1;
	long rss = 0;
	const char *m = maps, *s = sm;
	while (*m) {
		const char *nl = strchr(m, '\n');
		lines++;
		while (*s && !(strncmp(s, m, nl - m + 1) == 0))
			s = strchr(s, '\n') + 1;
		if (*s)
			heads++;
		else
			same = 0;
		m = nl + 1;
	}
	for (const char *r = sm; (r = strstr(r, "\nRss:")); r++)
		rss += atol(r + 5);
	long rollRss = -1;
	const char *rr = strstr(roll, "\nRss:");
	if (rr)
		rollRss = atol(rr + 5);
	printf("maps lines head smaps entries in order: %d\n", same && heads == lines && lines > 5);
	printf("smaps Rss sum == rollup Rss: %d\n", rss == rollRss);
	entry(sm, (unsigned long)a, "private, 2 of 3 pages touched");
	entry(sm, (unsigned long)guard, "PROT_NONE guard");
	entry(sm, (unsigned long)sh, "shared anonymous");

	int p[2];
	pipe(p);
	pid_t c = fork();
	if (c == 0) {
		char x;
		close(p[1]);
		read(p[0], &x, 1);
		_exit(0);
	}
	close(p[0]);
	sm = slurp(0, "/proc/self/smaps");
	entry(sm, (unsigned long)a, "after fork");
	a[0] = 9; // copy-on-write: this page is private again
	sm = slurp(0, "/proc/self/smaps");
	entry(sm, (unsigned long)a, "after fork and one write");
	close(p[1]);
	waitpid(c, NULL, 0);
	sm = slurp(0, "/proc/self/smaps");
	entry(sm, (unsigned long)a, "child gone");
	return 0;
}
