// ssefns: exercises glibc's SIMD string functions (whose ifunc variant
// depends on the advertised SSE level), floating-point formatting and
// parsing, libm rounding functions and x87 long double arithmetic. The
// output must be byte-identical natively and under uvm.
#define _GNU_SOURCE
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

static uint64_t s = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }

static char A[1024], B[1024];
static wchar_t W[300];

static void fill(char *p, int n, const char *alpha) {
	int k = strlen(alpha);
	for (int i = 0; i < n; i++) p[i] = alpha[rnd() % k];
	p[n] = 0;
}

int main(void) {
	uint64_t h = 0;
#define MIX(x) (h = h * 1000003u ^ (uint64_t)(x))
	for (int it = 0; it < 3000; it++) {
		int oa = rnd() % 64, ob = rnd() % 64;
		int na = rnd() % 300, nb = rnd() % 300;
		char *a = A + oa, *b = B + ob;
		fill(a, na, it & 1 ? "abcdefgh" : "aAbB");
		if (rnd() % 3 == 0) { memcpy(b, a, na + 1); if (na && rnd() % 2) b[rnd() % na] ^= 1; nb = na; }
		else fill(b, nb, "abcAB");
		MIX(strlen(a)); MIX(strnlen(a, rnd() % 400));
		int c = strcmp(a, b); MIX(c < 0 ? -1 : c > 0);
		c = strncmp(a, b, rnd() % 300); MIX(c < 0 ? -1 : c > 0);
		c = strcasecmp(a, b); MIX(c < 0 ? -1 : c > 0);
		c = strncasecmp(a, b, rnd() % 300); MIX(c < 0 ? -1 : c > 0);
		c = memcmp(a, b, na < nb ? na : nb); MIX(c < 0 ? -1 : c > 0);
		char *p = strchr(a, 'c'); MIX(p ? p - a : -1);
		p = strrchr(a, 'b'); MIX(p ? p - a : -1);
		p = memchr(a, 'h', na); MIX(p ? p - a : -1);
		p = memrchr(a, 'a', na); MIX(p ? p - a : -1);
		MIX(strspn(a, "abAB")); MIX(strcspn(a, "gh")); MIX(strcspn(a, "cdefghijklmnop"));
		p = strpbrk(a, "dC"); MIX(p ? p - a : -1);
		char pat[8]; int pl = rnd() % 5; memcpy(pat, a + (na > pl ? rnd() % (na - pl + 1) : 0), pl); pat[pl] = 0;
		p = strstr(a, pat); MIX(p ? p - a : -1);
		p = strcasestr(a, "Ab"); MIX(p ? p - a : -1);
		p = memmem(a, na, pat, pl); MIX(p ? p - a : -1);
		char d[1100];
		memcpy(d + (it % 32), a, na + 1); MIX(strlen(d + (it % 32)));
		memmove(d + 3, d + (it % 32), na); MIX(d[3 + na / 2]);
		strcpy(d, a); strcat(d, b); MIX(strlen(d));
		stpcpy(d, b); MIX(d[nb / 2]);
		memset(d, it & 0xff, na); MIX(d[na / 3]);
		for (int i = 0; i < na && i < 299; i++) W[i] = a[i];
		W[na < 299 ? na : 299] = 0;
		MIX(wcslen(W)); MIX(wcsnlen(W, rnd() % 300));
		wchar_t *wp = wcschr(W, L'b'); MIX(wp ? wp - W : -1);
	}
	printf("strings %016llx\n", (unsigned long long)h);

	// formatting and parsing of doubles, floats and long doubles
	h = 0;
	char buf[128];
	for (int i = 0; i < 2000; i++) {
		uint64_t bits = rnd();
		double x;
		if (i % 4 == 0) bits = (bits & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1023 + (int)(rnd() % 200) - 100) << 52);
		memcpy(&x, &bits, 8);
		snprintf(buf, sizeof buf, "%.17g|%a|%e|%f", x, x, x, i % 7 == 0 ? x : 0.0);
		for (char *q = buf; *q; q++) MIX(*q);
		double y = strtod(buf, NULL);
		uint64_t yb; memcpy(&yb, &y, 8); MIX(yb);
		float f = (float)x;
		snprintf(buf, sizeof buf, "%.9g", f);
		MIX(strtof(buf, NULL) == f || f != f);
		long double l = (long double)x * 3.0L / 7.0L + (long double)(int64_t)rnd() / 65536.0L;
		snprintf(buf, sizeof buf, "%.21Lg|%La", l, l);
		for (char *q = buf; *q; q++) MIX(*q);
		long double m = strtold(buf, NULL);
		MIX(m == l || l != l);
	}
	printf("format %016llx\n", (unsigned long long)h);

	// libm rounding (SSE4.1 ROUNDSD variants when advertised) and basics
	h = 0;
	for (int i = 0; i < 3000; i++) {
		double x = ((double)(int64_t)rnd()) / (double)(1ull << (rnd() % 60));
		double r[] = {floor(x), ceil(x), trunc(x), round(x), rint(x), nearbyint(x), sqrt(fabs(x)),
			fmod(x, 3.25), remainder(x, 1.5), ldexp(x, -3), frexp(x, &(int){0}), hypot(x, 3.0),
			(double)lrint(x / 1e6), (double)llround(x / 1e3), cbrt(x), fma(x, 1.0000001, -x)};
		for (unsigned k = 0; k < sizeof r / sizeof r[0]; k++) { uint64_t b; memcpy(&b, &r[k], 8); MIX(b); }
		float fx = (float)x;
		float rf[] = {floorf(fx), ceilf(fx), truncf(fx), roundf(fx), rintf(fx), sqrtf(fabsf(fx))};
		for (unsigned k = 0; k < 6; k++) { uint32_t b; memcpy(&b, &rf[k], 4); MIX(b); }
	}
	printf("libm %016llx\n", (unsigned long long)h);

	// rounding modes through fesetround (MXCSR and FCW)
	h = 0;
	int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
	for (int m = 0; m < 4; m++) {
		fesetround(modes[m]);
		volatile double a = 1.0, b = 3.0;
		volatile long double la = 1.0L, lb = 3.0L;
		double q = a / b; long double lq = la / lb;
		uint64_t qb; memcpy(&qb, &q, 8); MIX(qb);
		snprintf(buf, sizeof buf, "%.25Lg %.3f %.0f", lq, 2.0005, 2.5);
		for (char *c = buf; *c; c++) MIX(*c);
		MIX(lrint(2.5)); MIX(llrintl(-2.5L)); MIX((int64_t)nearbyint(-3.5));
	}
	fesetround(FE_TONEAREST);
	feclearexcept(FE_ALL_EXCEPT);
	volatile double z = 0.0, one = 1.0;
	volatile double t = one / z; (void)t;
	MIX(fetestexcept(FE_ALL_EXCEPT));
	t = one / 3.0;
	MIX(fetestexcept(FE_ALL_EXCEPT));
	volatile long double lt = 1.0L / (long double)z; (void)lt;
	MIX(fetestexcept(FE_ALL_EXCEPT));
	printf("fenv %016llx\n", (unsigned long long)h);

	// long double arithmetic (x87)
	long double acc = 1.0L;
	for (int i = 1; i < 200; i++) {
		acc = acc * (long double)i / (long double)(i + 1) + 1.0L / (long double)i;
		if (i % 50 == 0) printf("ld %d %.21Lg %La\n", i, acc, acc);
	}
	long double sq = sqrtl(2.0L), fl = floorl(-acc), rm = fmodl(acc * 1e10L, 7.0L);
	printf("ld sqrt2=%.21Lg floor=%.3Lf fmodl=%.21Lg rint=%.1Lf\n", sq, fl, rm, rintl(acc * 1000));
	printf("ld ldexp=%La scalbn=%La frexp=%La\n", ldexpl(acc, 1000), scalbnl(acc, -16400), frexpl(acc, &(int){0}));
	return 0;
}
