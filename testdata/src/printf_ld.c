/* printf_ld: long double formatting (%Lf %Le %Lg %La) and the default NaN a
 * float operation produces. Both are architecture-specific: long double is
 * the x87 80-bit format on x86-64 and IEEE binary128 on arm64, and 0.0/0.0
 * yields -nan on x86-64 (SSE default NaN has the sign bit set) but +nan on
 * arm64. So this program has per-arch expected outputs. */
#include <float.h>
#include <math.h>
#include <stdio.h>

int main(void)
{
	volatile long double third = 1.0L, ten = 10.0L, big = 1e300L;
	volatile double zero = 0.0, dinf = INFINITY;
	volatile float fzero = 0.0f;
	long double v[6];
	int i;

	third /= 3.0L;
	big *= big; /* 1e600: finite in both long double formats */
	v[0] = third;
	v[1] = -ten * third;
	v[2] = big;
	v[3] = 1.0L / big;
	v[4] = LDBL_EPSILON;
	v[5] = 12345.6789L;
	printf("LDBL_MANT_DIG=%d LDBL_MAX_EXP=%d sizeof=%zu\n", LDBL_MANT_DIG,
	       LDBL_MAX_EXP, sizeof(long double));
	for (i = 0; i < 6; i++)
		printf("[%d] Lf=%Lf Le=%.25Le Lg=%Lg La=%La\n", i, v[i], v[i],
		       v[i], v[i]);
	printf("LDBL_MAX %Lg LDBL_MIN %Lg\n", LDBL_MAX, LDBL_MIN);
	printf("ld inf %Lf nan %Lf\n", (long double)INFINITY,
	       (long double)NAN);
	printf("default NaN: double %f float %f inf-inf %f\n", zero / zero,
	       (double)(fzero / fzero), dinf - dinf);
	return 0;
}
