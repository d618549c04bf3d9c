/* strings: glibc's string functions (SIMD-optimised on both arches) on many
 * lengths and alignments, including strings that end right before an
 * inaccessible page, each result compared with a simple reference
 * implementation. Every test prints its case count, its failures (the first
 * few in detail) and a hash of the reference results. Then strtok, sprintf,
 * strtol and strtod on fixed inputs. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

/* Keep GCC from turning the reference loops into calls to the very
 * functions under test. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

#define REF __attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))

static size_t pagesz;
static unsigned char *areaA, *areaB; /* 2 usable pages each, then a guard */
static unsigned long cases, fails;
static uint64_t hsh;

static void mix(uint64_t v)
{
	hsh = (hsh ^ v) * 0x100000001b3ull;
}

static void begin(void)
{
	cases = fails = 0;
	hsh = 0xcbf29ce484222325ull;
}

static void end(const char *name)
{
	printf("%-8s cases=%lu fail=%lu hash=%016llx\n", name, cases, fails,
	       (unsigned long long)hsh);
}

static void fail(const char *fn, const char *fmt, long a, long b, long c,
		 long got, long want)
{
	if (++fails <= 5) {
		printf("FAIL %s ", fn);
		printf(fmt, a, b, c);
		printf(" got=%ld want=%ld\n", got, want);
	}
}

static unsigned char *guard_map(void)
{
	unsigned char *p = mmap(NULL, 3 * pagesz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	if (mprotect(p + 2 * pagesz, pagesz, PROT_NONE)) {
		perror("mprotect");
		exit(1);
	}
	return p;
}

/* byte i of a test string: nonzero, includes bytes >= 0x80 */
static unsigned char pat(size_t i, unsigned seed)
{
	unsigned char c = (unsigned char)((i * 37 + seed * 11 + 1) & 0xff);

	return c ? c : 0x5a;
}

/* mkstr writes the n-byte string pat(0..n-1, seed) plus NUL. Since 37 is odd,
 * pat(i, seed) == pat(i + seed * 11 * 173, 0) (173 = 1/37 mod 256), so the
 * bytes come out of one precomputed period-256 pattern. */
static unsigned char master[8192 + 256];

static void init_master(void)
{
	size_t i;

	for (i = 0; i < sizeof master; i++)
		master[i] = pat(i, 0);
}

static void mkstr(unsigned char *p, size_t n, unsigned seed)
{
	memcpy(p, master + ((seed * 11u * 173u) & 255), n);
	p[n] = 0;
}

REF static size_t ref_strlen(const unsigned char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

REF static long ref_strchr(const unsigned char *s, int c)
{
	size_t i;

	for (i = 0;; i++) {
		if (s[i] == (unsigned char)c)
			return (long)i;
		if (!s[i])
			return -1;
	}
}

REF static long ref_strrchr(const unsigned char *s, int c)
{
	long r = -1;
	size_t i;

	for (i = 0;; i++) {
		if (s[i] == (unsigned char)c)
			r = (long)i;
		if (!s[i])
			return r;
	}
}

REF static int ref_memcmp(const unsigned char *a, const unsigned char *b,
			  size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

REF static int ref_strncmp(const unsigned char *a, const unsigned char *b,
			   size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
		if (!a[i])
			return 0;
	}
	return 0;
}

REF static long ref_strstr(const unsigned char *h, const unsigned char *n)
{
	size_t i, j;

	for (i = 0;; i++) {
		for (j = 0; n[j] && h[i + j] == n[j]; j++)
			;
		if (!n[j])
			return (long)i;
		if (!h[i])
			return -1;
	}
}

static int sgn(long v)
{
	return (v > 0) - (v < 0);
}

static const size_t lens[] = { 0,  1,  2,  3,	4,   5,	  6,   7,   8,	 9,
			       10, 11, 12, 13,	14,  15,  16,  17,  18,	 19,
			       20, 23, 24, 25,	30,  31,  32,  33,  39,	 47,
			       48, 49, 63, 64,	65,  95,  96,  97,  127, 128,
			       129, 191, 255, 256, 257, 511, 1000, 2047, 4000 };
#define NLENS (sizeof lens / sizeof lens[0])

/* Long strings cost the guest much more to set up and check than the
 * function under test costs, so they are only tried at every 4th offset. */
static int skip_long(size_t n, size_t offset_index)
{
	return n >= 1000 && offset_index % 4 != 0;
}

/* start offsets relative to a 64-byte aligned address */
static const size_t aligns[] = { 0,  1,  2,  3,	 4,  5,	 6,  7,	 8,  9, 10,
				 11, 12, 13, 14, 15, 16, 17, 23, 24, 31, 32,
				 33, 40, 47, 48, 56, 63 };
#define NALIGNS (sizeof aligns / sizeof aligns[0])
/* fewer offsets for the tests that combine two of them */
static const size_t al2[] = { 0, 1, 3, 7, 8, 13, 15 };
#define NAL2 (sizeof al2 / sizeof al2[0])
static const long deltas[] = { -67, -64, -33, -32, -17, -16, -15, -9, -8,
			       -7,  -3,	 -2,  -1,  1,	2,   3,	  7,  8,
			       9,   15,	 16,  17,  32,	33,  64,  67 };
#define NDELTAS (sizeof deltas / sizeof deltas[0])

static void t_strlen(void)
{
	size_t a, ai, k, got, want;
	unsigned char *s;

	begin();
	for (ai = 0; ai < NALIGNS; ai++)
		for (k = 0; k < NLENS; k++) {
			a = aligns[ai];
			if (skip_long(lens[k], ai))
				continue;
			/* at the start of the area, shifted by a */
			s = areaA + a;
			mkstr(s, lens[k], (unsigned)a);
			got = strlen((char *)s);
			want = ref_strlen(s);
			cases++;
			mix(want);
			if (got != want)
				fail("strlen", "align=%ld len=%ld%.0ld", (long)a,
				     (long)lens[k], 0, (long)got, (long)want);
			got = strnlen((char *)s, lens[k] / 2 + a);
			want = lens[k] < lens[k] / 2 + a ? lens[k] :
							   lens[k] / 2 + a;
			cases++;
			mix(want);
			if (got != want)
				fail("strnlen", "align=%ld len=%ld%.0ld",
				     (long)a, (long)lens[k], 0, (long)got,
				     (long)want);
			/* NUL is the last byte before the guard page */
			s = areaA + 2 * pagesz - 1 - lens[k] - a % 8;
			mkstr(s, lens[k] + a % 8, (unsigned)a + 1);
			got = strlen((char *)s);
			want = ref_strlen(s);
			cases++;
			mix(want);
			if (got != want)
				fail("strlen", "at-guard align=%ld len=%ld%.0ld",
				     (long)a, (long)lens[k], 0, (long)got,
				     (long)want);
		}
	end("strlen");
}

static void t_strchr(void)
{
	size_t a, ai, k, pos, got;
	long want;
	unsigned char *s;
	char *r;
	int c, guard;

	begin();
	for (guard = 0; guard < 2; guard++)
		for (ai = 0; ai < NALIGNS; ai += 2)
			for (k = 0; k < NLENS; k++) {
				size_t n = lens[k];

				a = aligns[ai];
				if (skip_long(n, ai / 2))
					continue;
				s = guard ? areaA + 2 * pagesz - 1 - n :
					    areaA + a;
				mkstr(s, n, (unsigned)a);
				/* put a fresh byte at a few positions */
				for (pos = 0; pos <= n; pos += n / 3 + 1) {
					c = 0x80 + (int)(a & 0x3f);
					if (pos < n) {
						size_t i;

						for (i = 0; i < n; i++)
							if (s[i] == c)
								s[i] = 1;
						s[pos] = (unsigned char)c;
						if (pos + 1 < n)
							s[n - 1] = (unsigned char)c;
					} else {
						c = 0; /* strchr(s, 0) finds the NUL */
					}
					r = strchr((char *)s, c);
					got = r ? (size_t)(r - (char *)s) : (size_t)-1;
					want = ref_strchr(s, c);
					cases++;
					mix((uint64_t)want);
					if ((long)got != want)
						fail("strchr",
						     "align=%ld len=%ld c=%ld",
						     (long)a, (long)n, c, (long)got,
						     want);
					r = strrchr((char *)s, c);
					got = r ? (size_t)(r - (char *)s) : (size_t)-1;
					want = ref_strrchr(s, c);
					cases++;
					mix((uint64_t)want);
					if ((long)got != want)
						fail("strrchr",
						     "align=%ld len=%ld c=%ld",
						     (long)a, (long)n, c, (long)got,
						     want);
					r = memchr(s, c, n);
					want = ref_strchr(s, c);
					if (want >= (long)n)
						want = -1;
					got = r ? (size_t)(r - (char *)s) : (size_t)-1;
					cases++;
					mix((uint64_t)want);
					if ((long)got != want)
						fail("memchr",
						     "align=%ld len=%ld c=%ld",
						     (long)a, (long)n, c, (long)got,
						     want);
					/* absent character */
					r = strchr((char *)s, 0x7f);
					want = ref_strchr(s, 0x7f);
					got = r ? (size_t)(r - (char *)s) : (size_t)-1;
					cases++;
					if ((long)got != want)
						fail("strchr",
						     "absent align=%ld len=%ld%.0ld",
						     (long)a, (long)n, 0, (long)got,
						     want);
				}
			}
	end("strchr");
}

static void t_cmp(void)
{
	size_t a1, a2, i1, i2, k, d;
	unsigned char *s1, *s2;
	int got, want;

	begin();
	for (i1 = 0; i1 < NAL2; i1++)
		for (i2 = 0; i2 < NAL2; i2 += 2)
			for (k = 0; k < NLENS; k++) {
				size_t n = lens[k];

				a1 = al2[i1];
				a2 = al2[i2];
				if (skip_long(n, i1 + i2))
					continue;
				s1 = areaA + a1;
				s2 = areaB + 2 * pagesz - 1 - n - a2;
				for (d = 0; d <= n; d += n / 4 + 1) {
					mkstr(s1, n, 7);
					mkstr(s2, n, 7);
					if (d < n) {
						/* differ at d; sign depends on
						 * case, incl. bytes >= 0x80 */
						s2[d] = (d & 1) ? 0x01 : 0xfe;
						if (s1[d] == s2[d])
							s2[d] ^= 0x40;
					}
					got = sgn(strcmp((char *)s1, (char *)s2));
					want = ref_strncmp(s1, s2, n + 1);
					cases++;
					mix((uint64_t)want);
					if (got != want)
						fail("strcmp", "a1=%ld a2=%ld len=%ld",
						     (long)a1, (long)a2, (long)n,
						     got, want);
					got = sgn(memcmp(s1, s2, n));
					want = ref_memcmp(s1, s2, n);
					cases++;
					mix((uint64_t)want);
					if (got != want)
						fail("memcmp", "a1=%ld a2=%ld len=%ld",
						     (long)a1, (long)a2, (long)n,
						     got, want);
					got = sgn(strncmp((char *)s1, (char *)s2,
							  d));
					want = ref_strncmp(s1, s2, d);
					cases++;
					mix((uint64_t)want);
					if (got != want)
						fail("strncmp",
						     "a1=%ld a2=%ld len=%ld",
						     (long)a1, (long)a2, (long)n,
						     got, want);
					/* shorter first string */
					if (n) {
						s1[n - 1] = 0;
						got = sgn(strcmp((char *)s1,
								 (char *)s2));
						want = ref_strncmp(s1, s2, n + 1);
						cases++;
						mix((uint64_t)want);
						if (got != want)
							fail("strcmp",
							     "short a1=%ld a2=%ld len=%ld",
							     (long)a1, (long)a2,
							     (long)n, got, want);
					}
				}
			}
	/* strcasecmp on a few pairs */
	{
		static const char *p[][2] = {
			{ "Hello", "hELLO" }, { "abc", "ABD" }, { "Zeta", "alpha" },
			{ "", "" },	      { "a", "" },	{ "MiXeD-123", "mixed-123" },
		};
		size_t i;

		for (i = 0; i < sizeof p / sizeof p[0]; i++) {
			printf("strcasecmp(%s,%s)=%d strncasecmp3=%d\n", p[i][0],
			       p[i][1], sgn(strcasecmp(p[i][0], p[i][1])),
			       sgn(strncasecmp(p[i][0], p[i][1], 3)));
		}
	}
	end("cmp");
}

static void t_copy(void)
{
	size_t a1, a2, i1, i2, k, i;
	unsigned char *src, *dst;
	char *r;

	begin();
	for (i1 = 0; i1 < NAL2; i1++)
		for (i2 = 0; i2 < NAL2; i2++)
			for (k = 0; k < NLENS; k++) {
				size_t n = lens[k];
				int ok = 1, f;

				a1 = al2[i1];
				a2 = al2[(i2 + i1) % NAL2];
				if (skip_long(n, i1 + i2))
					continue;
				for (f = 0; f < 4; f++) {
					src = areaA + a1;
					dst = areaB + 64 + a2;
					mkstr(src, n, (unsigned)(a1 + a2 + f));
					memset(dst - 64, 0xcc, n + 192);
					switch (f) {
					case 0:
						r = memcpy(dst, src, n);
						ok = r == (char *)dst;
						break;
					case 1:
						r = strcpy((char *)dst, (char *)src);
						ok = r == (char *)dst;
						break;
					case 2:
						r = stpcpy((char *)dst, (char *)src);
						ok = r == (char *)dst + n;
						break;
					default:
						r = strncpy((char *)dst, (char *)src,
							    n + 9);
						ok = r == (char *)dst;
						break;
					}
					for (i = 0; i < n; i++)
						if (dst[i] != src[i])
							ok = 0;
					/* what follows the copied bytes */
					if (f == 1 || f == 2)
						ok &= dst[n] == 0 &&
						      dst[n + 1] == 0xcc;
					if (f == 0)
						ok &= dst[n] == 0xcc;
					if (f == 3) {
						for (i = n; i < n + 9; i++)
							ok &= dst[i] == 0;
						ok &= dst[n + 9] == 0xcc;
					}
					for (i = 1; i <= 64; i++)
						ok &= dst[-(long)i] == 0xcc;
					cases++;
					mix(n * 4 + (unsigned)f);
					if (!ok)
						fail(f == 0 ? "memcpy" :
						     f == 1 ? "strcpy" :
						     f == 2 ? "stpcpy" :
							      "strncpy",
						     "src+%ld dst+%ld len=%ld",
						     (long)a1, (long)a2, (long)n,
						     0, 1);
				}
			}
	end("copy");
}

static void t_memmove(void)
{
	long delta;
	size_t di, k, i, base = 80;
	unsigned char *buf = areaA, ref[6000];

	begin();
	for (di = 0; di < NDELTAS; di++)
		for (k = 0; k < NLENS; k++) {
			size_t n = lens[k];
			int ok = 1;

			delta = deltas[di];
			if (n > 4000 - 100 || skip_long(n, di))
				continue;
			for (i = 0; i < n + 2 * base; i++)
				buf[i] = pat(i, 3);
			memcpy(ref, buf, n + 2 * base);
			memmove(buf + base + delta, buf + base, n);
			/* reference: copy through a temporary */
			for (i = 0; i < n; i++)
				ref[base + delta + (long)i] = pat(base + i, 3);
			for (i = 0; i < n + 2 * base; i++)
				if (buf[i] != ref[i])
					ok = 0;
			cases++;
			mix(n + (uint64_t)(delta + 100));
			if (!ok)
				fail("memmove", "delta=%ld len=%ld%.0ld", delta,
				     (long)n, 0, 0, 1);
		}
	end("memmove");
}

static void t_memset(void)
{
	size_t a, ai, k, i;
	unsigned char *d;
	int c;

	begin();
	for (ai = 0; ai < NALIGNS; ai += 3)
		for (k = 0; k < NLENS; k++)
			for (c = 0; c < 256; c += 0x55) {
				size_t n = lens[k];
				int ok = 1;

				a = aligns[ai];
				if (skip_long(n, ai / 3))
					continue;
				d = areaB + 64 + a;
				for (i = 0; i < n + 128; i++)
					d[(long)i - 64] = 0xcc ^ (unsigned char)i;
				if (memset(d, c, n) != d)
					ok = 0;
				for (i = 0; i < n; i++)
					ok &= d[i] == c;
				for (i = 0; i < 64; i++) {
					ok &= d[(long)i - 64] == (0xcc ^ i);
					ok &= d[n + i] ==
					      (unsigned char)(0xcc ^ (n + i + 64));
				}
				cases++;
				mix(n + (unsigned)c);
				if (!ok)
					fail("memset", "align=%ld len=%ld c=%ld",
					     (long)a, (long)n, c, 0, 1);
			}
	/* a whole page-aligned block of zeroes (glibc may use DC ZVA /
	 * rep stosb for this) */
	for (i = 0; i < 2 * pagesz; i++)
		areaB[i] = 0xff;
	memset(areaB, 0, 2 * pagesz);
	for (i = 0, c = 0; i < 2 * pagesz; i++)
		c |= areaB[i];
	cases++;
	if (c)
		fail("memset", "zero-two-pages%ld%.0ld%.0ld", 0, 0, 0, c, 0);
	end("memset");
}

static void t_strstr(void)
{
	static const char alpha[] = "abcab";
	size_t hl, nl, off, i;
	char *h = (char *)areaA, *nd = (char *)areaB, *r;
	long got, want;
	unsigned seed = 1;

	begin();
	for (hl = 0; hl < 300; hl += 7)
		for (nl = 1; nl < 40; nl += 3)
			for (off = 0; off < 3; off++) {
				for (i = 0; i < hl; i++) {
					seed = seed * 1103515245u + 12345u;
					h[i] = alpha[(seed >> 16) % 5];
				}
				h[hl] = 0;
				for (i = 0; i < nl; i++) {
					seed = seed * 1103515245u + 12345u;
					nd[i] = alpha[(seed >> 16) % 5];
				}
				nd[nl] = 0;
				/* often make the needle a substring */
				if (off && nl <= hl)
					memcpy(nd, h + (hl - nl) * off / 2, nl);
				r = strstr(h, nd);
				got = r ? r - h : -1;
				want = ref_strstr((unsigned char *)h,
						  (unsigned char *)nd);
				cases++;
				mix((uint64_t)want);
				if (got != want)
					fail("strstr", "hl=%ld nl=%ld off=%ld",
					     (long)hl, (long)nl, (long)off, got,
					     want);
			}
	/* long needle (glibc switches to the two-way algorithm) */
	memset(h, 'a', 3000);
	strcpy(h + 3000, "b");
	memset(nd, 'a', 299);
	strcpy(nd + 299, "b");
	r = strstr(h, nd);
	printf("strstr long: %ld\n", r ? (long)(r - h) : -1L);
	printf("strspn=%zu strcspn=%zu strpbrk=%s\n",
	       strspn("aabbccxyz", "abc"), strcspn("hello, world", ",; "),
	       strpbrk("find the vowel", "aeiou"));
	end("strstr");
}

static void t_misc(void)
{
	char buf[200], *tok, *save;
	static const char *nums[] = { "0",	    "42",	  "-17",
				      "  +123abc",  "0x1fZ",	  "0777",
				      "9223372036854775807",
				      "9223372036854775808",
				      "-9223372036854775809",
				      "zzz",	    "1010",	  "  -0" };
	static const char *dbls[] = { "0",	      "3.14159",      "-2.5e-3",
				      "1e308",	      "1e309",	      "1e-400",
				      "0x1.8p1",      "inf",	      "-Infinity",
				      "nan",	      "  .5x",	      "123456789012345678901234567890",
				      "4.9e-324",     "2.2250738585072011e-308",
				      "0.1e1",	      "junk" };
	size_t i;
	int n;

	strcpy(buf, "  the quick,brown;;fox  jumps,,over the;lazy dog ");
	printf("strtok:");
	for (tok = strtok(buf, " ,;"); tok; tok = strtok(NULL, " ,;"))
		printf(" <%s>", tok);
	printf("\n");
	strcpy(buf, "a=1&b=22&&c=333");
	printf("strtok_r:");
	for (tok = strtok_r(buf, "&", &save); tok;
	     tok = strtok_r(NULL, "&", &save))
		printf(" <%s>", tok);
	printf("\n");

	n = sprintf(buf, "%d|%5.2f|%-6s|%x|%c|%%|%08.3e|%ld", -123, 3.14159,
		    "ab", 255, 'Z', 12345.678, 1234567890123L);
	printf("sprintf(%d): %s\n", n, buf);
	n = snprintf(buf, 10, "%s", "this will be truncated");
	printf("snprintf(%d): %s\n", n, buf);

	for (i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		char *e;
		long v;
		unsigned long u;

		errno = 0;
		v = strtol(nums[i], &e, 0);
		printf("strtol(\"%s\",0)=%ld end=%ld errno=%s", nums[i], v,
		       (long)(e - nums[i]), errno == ERANGE ? "ERANGE" : "0");
		errno = 0;
		u = strtoul(nums[i], &e, 10);
		printf(" strtoul10=%lu end=%ld", u, (long)(e - nums[i]));
		v = strtol(nums[i], &e, 2);
		printf(" base2=%ld end=%ld\n", v, (long)(e - nums[i]));
	}
	for (i = 0; i < sizeof dbls / sizeof dbls[0]; i++) {
		char *e;
		double d;
		float f;

		errno = 0;
		d = strtod(dbls[i], &e);
		printf("strtod(\"%s\")=%.17g end=%ld errno=%s", dbls[i], d,
		       (long)(e - dbls[i]), errno == ERANGE ? "ERANGE" : "0");
		f = strtof(dbls[i], &e);
		printf(" strtof=%.9g\n", (double)f);
	}
	printf("atoi=%d atol=%ld atof=%g\n", atoi(" -99x"), atol("1234567"),
	       atof("2.5e2"));
	{
		char *dup = strdup("duplicate me");
		char *ndup = strndup("duplicate me", 9);

		printf("strdup=%s strndup=%s\n", dup, ndup);
		free(dup);
		free(ndup);
	}
}

int main(void)
{
	pagesz = (size_t)sysconf(_SC_PAGESIZE);
	init_master();
	areaA = guard_map();
	areaB = guard_map();
	t_strlen();
	t_strchr();
	t_cmp();
	t_copy();
	t_memmove();
	t_memset();
	t_strstr();
	t_misc();
	return 0;
}
