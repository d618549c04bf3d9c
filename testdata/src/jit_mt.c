/* jit_mt: cross-modifying code. A writer thread generates a function
 * returning 1 into two RWX pages, one published with
 * __builtin___clear_cache and one without; the main thread calls both.
 * Then the writer rewrites both to return 2 (again one with and one
 * without clear_cache) and the main thread calls them again, after an ISB
 * on arm64 (the context synchronisation the executing CPU needs). The
 * threads hand over through an atomic stage counter. Prints
 * "clear_cache: A B" and "no clear_cache: A B".
 *
 * x86-64 and arm64 with uvm's cache model off print "1 2" twice. Under
 * the strict arm64 model (--cache-model) the variant without clear_cache
 * deterministically prints "1 1": the executing CPU's instruction side
 * still holds the old line. Not in MANIFEST (mode-dependent output;
 * cmd/uvm/cache_test.go checks every mode). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*fn)(void);

static unsigned char *code_clear, *code_plain;
static atomic_int stage;

static void emit(unsigned char *p, int v)
{
#if defined(__aarch64__)
	uint32_t insn[2] = {0x52800000u | (uint32_t)v << 5, 0xd65f03c0u};
#elif defined(__x86_64__)
	unsigned char insn[6] = {0xb8, (unsigned char)v, 0, 0, 0, 0xc3};
#endif
	memcpy(p, insn, sizeof insn);
}

static void publish(int v)
{
	emit(code_clear, v);
	__builtin___clear_cache((char *)code_clear, (char *)code_clear + 16);
	emit(code_plain, v);
}

static void wait_for(int s)
{
	while (atomic_load_explicit(&stage, memory_order_acquire) != s)
		sched_yield();
}

static void context_sync(void)
{
#if defined(__aarch64__)
	__asm__ volatile("isb" ::: "memory");
#endif
}

static void *writer(void *arg)
{
	(void)arg;
	publish(1);
	atomic_store_explicit(&stage, 1, memory_order_release);
	wait_for(2);
	publish(2);
	atomic_store_explicit(&stage, 3, memory_order_release);
	return NULL;
}

int main(void)
{
	int prot = PROT_READ | PROT_WRITE | PROT_EXEC;
	code_clear = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	code_plain = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code_clear == MAP_FAILED || code_plain == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, writer, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	wait_for(1);
	context_sync();
	int a1 = ((fn)code_clear)(), b1 = ((fn)code_plain)();
	atomic_store_explicit(&stage, 2, memory_order_release);
	wait_for(3);
	context_sync();
	int a2 = ((fn)code_clear)(), b2 = ((fn)code_plain)();
	pthread_join(t, NULL);
	printf("clear_cache: %d %d\n", a1, a2);
	printf("no clear_cache: %d %d\n", b1, b2);
	return 0;
}
