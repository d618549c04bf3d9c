/* clockmono: the cycle counter (x86 RDTSC, arm64 CNTVCT_EL0) is one
 * machine-wide clock: a value read by one thread after another thread's
 * read (ordered by an atomic handshake) is never smaller. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

static inline uint64_t cycles(void)
{
#if defined(__aarch64__)
	uint64_t v;
	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#endif
}

enum { ROUNDS = 2000 };
static _Atomic uint64_t last;
static _Atomic int turn;
static int backwards;

static void *player(void *arg)
{
	int me = (int)(intptr_t)arg;
	/* Thread 0 works before it plays, so a per-thread count would run
	 * ahead in thread 0 and look like time going backwards in thread 1. */
	for (volatile int spin = 0; me == 0 && spin < 200000; spin++)
		;
	for (int i = 0; i < ROUNDS; i++) {
		while (atomic_load(&turn) != me)
			;
		uint64_t now = cycles();
		if (now < atomic_load(&last))
			backwards++;
		atomic_store(&last, now);
		atomic_store(&turn, 1 - me);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, player, (void *)0);
	pthread_create(&b, NULL, player, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("cycle counter across threads: %s\n", backwards ? "WENT BACKWARDS" : "monotonic");
	return 0;
}
