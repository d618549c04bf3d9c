/* cachestream: fills a 1 MiB array of longs, then streams over it
 * PASSES times (argv[1], default 1), summing. Prints the sum of one pass,
 * so the output does not depend on PASSES. Under uvm's cache model every
 * pass over the array (32 times a 32 KiB L1D) misses on every line: the
 * difference in L1D read misses between two runs with different PASSES
 * is exactly (difference in passes) * 1 MiB / line size, which
 * cmd/uvm/cache_test.go checks against the configured geometry (the array
 * is page aligned, so a pass touches exactly 1 MiB / line size lines). */
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 17) /* 1 MiB of longs */

static long arr[N] __attribute__((aligned(4096)));

int main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : 1;
	if (passes < 1)
		passes = 1;
	for (long i = 0; i < N; i++)
		arr[i] = i & 1023;
	long s = 0;
	for (int p = 0; p < passes; p++)
		for (long i = 0; i < N; i++)
			s += arr[i];
	printf("%ld\n", s / passes);
	return 0;
}
