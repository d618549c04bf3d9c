/* printf: integer conversions of every width and double conversions
 * (%f %e %g %a %x %o ...) including negative, huge, tiny, inf and nan. The
 * output is identical on arm64 and x86-64 (long double lives in printf_ld). */
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

static void ints(void)
{
	signed char sc[] = { 0, 1, -1, 127, -128 };
	short ss[] = { 0, 1, -1, SHRT_MAX, SHRT_MIN, 12345 };
	int si[] = { 0, 1, -1, INT_MAX, INT_MIN, 123456789, -987654321 };
	long sl[] = { 0, 1, -1, LONG_MAX, LONG_MIN, 1234567890123L };
	long long sll[] = { 0, -1, LLONG_MAX, LLONG_MIN, -123456789012345LL };
	unsigned char uc[] = { 0, 1, 200, UCHAR_MAX };
	unsigned short us[] = { 0, 1, 40000, USHRT_MAX };
	unsigned ui[] = { 0, 1, 3000000000u, UINT_MAX, 0xdeadbeefu };
	unsigned long ul[] = { 0, 1, ULONG_MAX, 0x0123456789abcdefUL };
	size_t i;

	for (i = 0; i < sizeof sc / sizeof sc[0]; i++)
		printf("hhd %hhd %4hhd %-4hhd| %hhx %hho %hhu\n", sc[i], sc[i],
		       sc[i], (unsigned char)sc[i], (unsigned char)sc[i],
		       (unsigned char)sc[i]);
	for (i = 0; i < sizeof ss / sizeof ss[0]; i++)
		printf("hd %hd %+hd %07hd %hx %ho\n", ss[i], ss[i], ss[i],
		       (unsigned short)ss[i], (unsigned short)ss[i]);
	for (i = 0; i < sizeof si / sizeof si[0]; i++)
		printf("d %d %+d % d %012d %-12d| %x %X %#x %o %#o %u\n", si[i],
		       si[i], si[i], si[i], si[i], (unsigned)si[i],
		       (unsigned)si[i], (unsigned)si[i], (unsigned)si[i],
		       (unsigned)si[i], (unsigned)si[i]);
	for (i = 0; i < sizeof sl / sizeof sl[0]; i++)
		printf("ld %ld %lx %lo %lu %21ld\n", sl[i], (unsigned long)sl[i],
		       (unsigned long)sl[i], (unsigned long)sl[i], sl[i]);
	for (i = 0; i < sizeof sll / sizeof sll[0]; i++)
		printf("lld %lld %llX %llu\n", sll[i], (unsigned long long)sll[i],
		       (unsigned long long)sll[i]);
	for (i = 0; i < sizeof uc / sizeof uc[0]; i++)
		printf("hhu %hhu %#hhx\n", uc[i], uc[i]);
	for (i = 0; i < sizeof us / sizeof us[0]; i++)
		printf("hu %hu %#hx\n", us[i], us[i]);
	for (i = 0; i < sizeof ui / sizeof ui[0]; i++)
		printf("u %u %08x %#X %o\n", ui[i], ui[i], ui[i], ui[i]);
	for (i = 0; i < sizeof ul / sizeof ul[0]; i++)
		printf("lu %lu %#lx %#lo\n", ul[i], ul[i], ul[i]);
	printf("fixed: %" PRId8 " %" PRIu16 " %" PRIx32 " %" PRId64 " %" PRIu64
	       "\n",
	       (int8_t)-5, (uint16_t)65535, (uint32_t)0xcafef00d,
	       (int64_t)INT64_MIN, (uint64_t)UINT64_MAX);
	printf("size_t %zu ssize %zd ptrdiff %td intmax %jd\n", (size_t)-1,
	       (ssize_t)-2, (ptrdiff_t)-3, (intmax_t)INTMAX_MAX);
	printf("char '%c' '%3c' '%-3c'\n", 'A', 'b', 'c');
	printf("str '%s' '%10s' '%-10s' '%.3s' '%*.*s'\n", "abc", "right",
	       "left", "truncated", 8, 2, "xyz");
	printf("pct %% star %*d %-*d|\n", 6, 42, 6, 42);
}

static void doubles(void)
{
	double d[] = { 0.0,
		       -0.0,
		       1.0,
		       -1.0,
		       0.1,
		       1.0 / 3.0,
		       -2.5,
		       3.14159265358979323846,
		       123456789.125,
		       1e15,
		       1e16,
		       -1.5e300,
		       DBL_MAX,
		       1e-5,
		       1.25e-300,
		       DBL_MIN,
		       4.9406564584124654e-324,
		       0.5,
		       2.5,
		       1e21,
		       9007199254740993.0,
		       HUGE_VAL,
		       -HUGE_VAL,
		       NAN,
		       -NAN };
	static char buf[512];
	size_t i;

	for (i = 0; i < sizeof d / sizeof d[0]; i++) {
		printf("[%zu] f=%f e=%e g=%g G=%G\n", i, d[i], d[i], d[i], d[i]);
		printf("     .0f=%.0f .3e=%.3E .17g=%.17g 12.4f=%12.4f "
		       "-12.2e=%-12.2e| +g=%+g #g=%#g a=%a\n",
		       d[i], d[i], d[i], d[i], d[i], d[i], d[i], d[i]);
	}
	/* %f of big numbers prints every digit. */
	printf("DBL_MAX %%f: %f\n", DBL_MAX);
	snprintf(buf, sizeof buf, "%.330f", 1e-320);
	printf("tiny %%.330f ends: %s\n", buf + 300);
	/* float promoted to double */
	printf("float %f %g %e\n", 1.1f, 3.4028235e38f, 1.17549435e-38f);
	/* rounding: ties-to-even on the exact binary value */
	printf("round %.1f %.1f %.1f %.2f %.0f %.0f %.0f\n", 0.25, 0.35, 0.45,
	       1.005, 0.5, 1.5, 2.5);
	printf("snprintf ret %d\n", snprintf(NULL, 0, "%g|%d", 1e100, 12345));
}

int main(void)
{
	ints();
	doubles();
	return 0;
}
