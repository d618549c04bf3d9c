/* jit: generates a function returning 1 into memory, calls it, rewrites
 * it to return 2 and calls it again; (a) with __builtin___clear_cache
 * after each write, (b) without; in an RWX mapping and in an RW mapping
 * switched to RX with mprotect around each write. Prints both results of
 * each variant.
 *
 * x86-64 has a coherent instruction cache: every variant prints "1 2".
 * arm64 needs DC CVAU + IC IVAU + ISB (what __clear_cache does) before
 * new code is guaranteed to execute: under uvm's strict cache model
 * (--cache-model) the variants without it deterministically print the
 * OLD result "1 1"; with the model off (or --icache coherent) they print
 * "1 2". Not in MANIFEST: its output depends on the cache mode
 * (cmd/uvm/cache_test.go checks every mode). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*fn)(void);

static void emit(unsigned char *p, int v)
{
#if defined(__aarch64__)
	uint32_t insn[2] = {0x52800000u | (uint32_t)v << 5, /* mov w0, #v */
			    0xd65f03c0u};			 /* ret */
#elif defined(__x86_64__)
	unsigned char insn[6] = {0xb8, (unsigned char)v, 0, 0, 0, /* mov eax, v */
				 0xc3};				  /* ret */
#endif
	memcpy(p, insn, sizeof insn);
}

static void flush(unsigned char *p, int on)
{
	if (on)
		__builtin___clear_cache((char *)p, (char *)p + 16);
}

static void *map(int prot)
{
	void *p = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	return p;
}

static void setprot(unsigned char *p, int prot)
{
	if (mprotect(p, 4096, prot) != 0)
		perror("mprotect");
}

int main(void)
{
	for (int clear = 1; clear >= 0; clear--) {
		/* RWX: write and execute the same mapping. */
		unsigned char *p = map(PROT_READ | PROT_WRITE | PROT_EXEC);
		if (!p)
			return 1;
		emit(p, 1);
		flush(p, clear);
		int a = ((fn)p)();
		emit(p, 2);
		flush(p, clear);
		int b = ((fn)p)();
		printf("rwx %s: %d %d\n", clear ? "clear_cache" : "no clear_cache", a, b);
		munmap(p, 4096);

		/* RW -> RX: W^X with mprotect around each write. */
		p = map(PROT_READ | PROT_WRITE);
		if (!p)
			return 1;
		emit(p, 1);
		flush(p, clear);
		setprot(p, PROT_READ | PROT_EXEC);
		a = ((fn)p)();
		setprot(p, PROT_READ | PROT_WRITE);
		emit(p, 2);
		flush(p, clear);
		setprot(p, PROT_READ | PROT_EXEC);
		b = ((fn)p)();
		printf("rw-rx %s: %d %d\n", clear ? "clear_cache" : "no clear_cache", a, b);
		munmap(p, 4096);
	}
	return 0;
}
