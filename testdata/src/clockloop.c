/* clockloop: reads CLOCK_MONOTONIC and CLOCK_REALTIME around a fixed
 * amount of work and prints the elapsed nanoseconds and the realtime
 * seconds. Under uvm's deterministic mode time is virtual (advanced only by
 * retired instructions), so the output is exactly reproducible and scales
 * with --ns-per-insn. It also prints 8 bytes from getrandom, which come
 * from --seed. Not in MANIFEST: its output is mode-dependent. */
#include <stdio.h>
#include <time.h>
#include <sys/random.h>

static volatile unsigned long sink;

static long long ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	long long t0 = ns(CLOCK_MONOTONIC);
	long long prev = t0, backwards = 0;
	for (int i = 0; i < 1000; i++) {
		for (int j = 0; j < 100; j++)
			sink += (unsigned long)i * j;
		long long t = ns(CLOCK_MONOTONIC);
		if (t < prev)
			backwards++;
		prev = t;
	}
	printf("elapsed_ns=%lld backwards=%lld\n", prev - t0, backwards);
	printf("realtime_s=%lld\n", ns(CLOCK_REALTIME) / 1000000000LL);
	unsigned char r[8];
	if (getrandom(r, sizeof r, 0) != sizeof r)
		return 1;
	printf("random=");
	for (int i = 0; i < 8; i++)
		printf("%02x", r[i]);
	printf("\n");
	return 0;
}
