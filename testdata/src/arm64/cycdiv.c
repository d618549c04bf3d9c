/* Two hot functions with the same instruction count: divloop's loop body
 * is {udiv, subs, b.ne}, aluloop's {add, subs, b.ne}. Under the timing
 * model's cycle clock (uvm run --det --model M --pprof-clock=cycles) the
 * divide loop gets its share of the profile by cycles, under the
 * instruction clock half of it (cmd/uvm/pprofclock_test.go). Two threads
 * run the same loops. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define CALLS 300
#define ITERS 1000

__attribute__((noinline)) uint64_t divloop(uint64_t n, uint64_t a, uint64_t b)
{
	uint64_t r = 0;
	__asm__ volatile("1: udiv %0, %2, %3\n"
			 "   subs %1, %1, #1\n"
			 "   b.ne 1b\n"
			 : "=&r"(r), "+r"(n)
			 : "r"(a), "r"(b)
			 : "cc");
	return r;
}

__attribute__((noinline)) uint64_t aluloop(uint64_t n, uint64_t a, uint64_t b)
{
	uint64_t r = 0;
	__asm__ volatile("1: add %0, %2, %3\n"
			 "   subs %1, %1, #1\n"
			 "   b.ne 1b\n"
			 : "=&r"(r), "+r"(n)
			 : "r"(a), "r"(b)
			 : "cc");
	return r;
}

static void *work(void *arg)
{
	uint64_t s = 0, k = (uint64_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < CALLS; i++) {
		s += divloop(ITERS, 1000003 * (i + k), 7 + i % 5);
		s += aluloop(ITERS, 1000003 * (i + k), 7 + i % 5);
	}
	return (void *)(uintptr_t)s;
}

int main(void)
{
	pthread_t th;
	void *r1, *r2;
	if (pthread_create(&th, NULL, work, (void *)1) != 0)
		return 1;
	r1 = work((void *)2);
	pthread_join(th, &r2);
	printf("cycdiv %lu %lu\n", (unsigned long)(uintptr_t)r1, (unsigned long)(uintptr_t)r2);
	return 0;
}
