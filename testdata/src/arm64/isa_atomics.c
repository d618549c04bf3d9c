/* isa_atomics: FEAT_LSE atomics in every size from four threads.
 * Built with -march=armv8.1-a -mno-outline-atomics so that GCC emits
 * LDADD/LDCLR/LDEOR/LDSET/LDSMAX/LDUMIN/SWP/CAS/CASP inline (arm64 only). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 4
#define ITERS 20000

static uint8_t c8;
static uint16_t c16;
static uint32_t c32;
static uint64_t c64;
static uint64_t bits64;
static int32_t smax32 = -1000;
static uint16_t umin16 = 0xffff;
static uint64_t xor64;
static uint32_t swapped;
static uint64_t pair[2] __attribute__((aligned(16)));

/* CASPAL: GCC 12 has no inline 128-bit compare-and-swap. On return *lo:*hi
 * hold the old memory value. */
static void caspal(uint64_t *p, uint64_t *lo, uint64_t *hi, uint64_t nlo, uint64_t nhi) {
	register uint64_t x0 __asm__("x0") = *lo, x1 __asm__("x1") = *hi;
	register uint64_t x2 __asm__("x2") = nlo, x3 __asm__("x3") = nhi;
	__asm__ volatile("caspal x0, x1, x2, x3, [%4]" : "+r"(x0), "+r"(x1) : "r"(x2), "r"(x3), "r"(p) : "memory");
	*lo = x0;
	*hi = x1;
}
static uint32_t casw;
static int32_t asmax = -5;
static uint16_t aumin = 60000;
static int64_t asmin = 1000;
static uint8_t aumax;
static uint32_t astadd;
static uint8_t casb;

static void *worker(void *arg) {
	long id = (long)arg;
	for (int i = 0; i < ITERS; i++) {
		__atomic_fetch_add(&c8, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c16, 3, __ATOMIC_ACQUIRE);
		__atomic_fetch_sub(&c32, 1, __ATOMIC_RELEASE);
		__atomic_fetch_add(&c64, (uint64_t)id << 32 | 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_or(&bits64, 1ull << ((id * 16 + i) % 64), __ATOMIC_SEQ_CST);
		if (i % 7 == 0)
			__atomic_fetch_and(&bits64, ~(1ull << ((id * 16 + i + 32) % 64)), __ATOMIC_SEQ_CST);
		__atomic_fetch_xor(&xor64, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1 + id), __ATOMIC_ACQ_REL);
		/* signed max / unsigned min through CAS loops the compiler may turn into LDSMAX/LDUMIN */
		int32_t v = (int32_t)((i * 2654435761u) >> 8) - (1 << 22);
		int32_t cur = __atomic_load_n(&smax32, __ATOMIC_RELAXED);
		while (v > cur && !__atomic_compare_exchange_n(&smax32, &cur, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			;
		uint16_t u = (uint16_t)(i * 40503u + id);
		uint16_t ucur = __atomic_load_n(&umin16, __ATOMIC_RELAXED);
		while (u < ucur && !__atomic_compare_exchange_n(&umin16, &ucur, u, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			;
		/* the min/max atomics GCC does not emit from C */
		int32_t o32;
		uint16_t o16;
		int64_t o64;
		uint8_t o8;
		__asm__ volatile("ldsmaxal %w1, %w0, [%2]" : "=&r"(o32) : "r"(v), "r"(&asmax) : "memory");
		__asm__ volatile("lduminh %w1, %w0, [%2]" : "=&r"(o16) : "r"((uint32_t)u), "r"(&aumin) : "memory");
		__asm__ volatile("ldsminl %1, %0, [%2]" : "=&r"(o64) : "r"((int64_t)v * 3 - id), "r"(&asmin) : "memory");
		__asm__ volatile("ldumaxab %w1, %w0, [%2]" : "=&r"(o8) : "r"((uint32_t)(i * 7 + id) & 0x7f), "r"(&aumax) : "memory");
		__asm__ volatile("staddl %w0, [%1]" : : "r"((uint32_t)id), "r"(&astadd) : "memory");
		(void)o32, (void)o16, (void)o64, (void)o8;
		__atomic_exchange_n(&swapped, (uint32_t)(id + 1), __ATOMIC_SEQ_CST);
		/* 128-bit compare-and-swap (CASP): both halves count */
		uint64_t lo = pair[0], hi = pair[1];
		for (;;) {
			uint64_t plo = lo, phi = hi;
			caspal(pair, &lo, &hi, lo + 1, hi + 1);
			if (lo == plo && hi == phi)
				break;
		}
		uint32_t w = __atomic_load_n(&casw, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&casw, &w, w + 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			;
		uint8_t b = __atomic_load_n(&casb, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&casb, &b, (uint8_t)(b + 1), 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	return 0;
}

int main(void) {
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], 0, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], 0);
	printf("c8 %u c16 %u c32 %u c64 %#llx\n", c8, c16, c32, (unsigned long long)c64);
	printf("smax32 %d umin16 %u xor64 %#llx\n", smax32, umin16, (unsigned long long)xor64);
	printf("ldsmax %d ldumin %u ldsmin %lld ldumax %u stadd %u\n", asmax, aumin, (long long)asmin, aumax, astadd);
	printf("swapped in 1..%d: %d\n", THREADS, swapped >= 1 && swapped <= THREADS);
	printf("pair %#llx:%#llx casw %u casb %u\n", (unsigned long long)pair[1], (unsigned long long)pair[0], casw, casb);
	/* a failing strong CAS returns the current value */
	uint64_t expect = 5;
	int ok = __atomic_compare_exchange_n(&c64, &expect, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	printf("cas fail %d old %#llx\n", ok, (unsigned long long)expect);
	return 0;
}
