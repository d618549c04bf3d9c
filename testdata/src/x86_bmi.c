/* x86-64 only (not in MANIFEST): BMI1/BMI2/LZCNT/TZCNT/MOVBE/ADX, RDTSCP,
 * RDPID and FSGSBASE through their intrinsics, plus what gcc emits for
 * -march=x86-64-v3 -mno-avx on its own (SHLX/SARX/RORX/ANDN/BLSR, MOVBE
 * loads). Built by build.sh with -march=x86-64-v3 -O2 -mno-avx -mrdpid
 * -mfsgsbase; cmd/uvm's TestX86Ext compares the output with native. */
#include <immintrin.h>
#include <x86intrin.h>
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

static uint64_t seed = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
	seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
	uint64_t v = seed;
	switch (v & 7) {
	case 0: return 0;
	case 1: return v >> (v % 64);
	case 2: return ~0ull << (v % 64);
	}
	return v;
}

/* FNV-1a over the results of one family. */
static uint64_t h;
static void mix(uint64_t v) {
	for (int i = 0; i < 8; i++) { h ^= (v >> (8 * i)) & 0xff; h *= 0x100000001b3ull; }
}
static void report(const char *name) { printf("%-8s %016llx\n", name, (unsigned long long)h); h = 0xcbf29ce484222325ull; }

__attribute__((noinline)) static uint32_t load_be32(const void *p) { uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
__attribute__((noinline)) static void store_be64(void *p, uint64_t v) { v = __builtin_bswap64(v); memcpy(p, &v, 8); }
__attribute__((noinline)) static uint64_t shifts(uint64_t a, unsigned n) { return (a << (n & 63)) ^ ((int64_t)a >> (n & 63)) ^ (a >> (n & 31)) ^ ((a >> 13) | (a << 51)); }

/* ADCX and ADOX with both carries given (gcc emits ADC for _addcarryx). */
__attribute__((noinline)) static uint64_t adx_asm(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t fl) {
	unsigned char cf, of;
	__asm__ volatile("sub $128, %%rsp\n\tpushq %[fl]\n\tpopfq\n\tadd $128, %%rsp\n\t"
		"adcx %[b], %[a]\n\tadox %[d], %[c]\n\tadcx %k[b], %k[c]\n\tsetc %[cf]\n\tseto %[of]"
		: [a] "+r"(a), [c] "+r"(c), [cf] "=q"(cf), [of] "=q"(of)
		: [b] "r"(b), [d] "m"(d), [fl] "r"(fl) : "cc");
	return a ^ (c << 1) ^ ((uint64_t)cf << 62) ^ ((uint64_t)of << 63);
}

int main(void) {
	unsigned a, b, c, d;
	__cpuid_count(7, 0, a, b, c, d);
	printf("cpuid7: bmi1=%u bmi2=%u adx=%u fsgsbase=%u rdpid=%u\n", (b >> 3) & 1, (b >> 8) & 1, (b >> 19) & 1, b & 1, (c >> 22) & 1);
	__cpuid(0x80000001, a, b, c, d);
	printf("ext: lzcnt=%u rdtscp=%u\n", (c >> 5) & 1, (d >> 27) & 1);
	__cpuid(1, a, b, c, d);
	printf("movbe=%u popcnt=%u\n", (c >> 22) & 1, (c >> 23) & 1);
	printf("hwcap2 fsgsbase=%lu\n", (getauxval(AT_HWCAP2) >> 1) & 1);
	h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 2000; i++) {
		uint64_t x = rnd(), y = rnd();
		mix(_andn_u64(x, y)); mix(_andn_u32(x, y));
		mix(_bextr_u64(x, y & 0xff, (y >> 8) & 0xff)); mix(_bextr_u32(x, y & 0x3f, (y >> 8) & 0x3f));
		mix(_blsi_u64(x)); mix(_blsmsk_u64(x)); mix(_blsr_u64(x)); mix(_blsr_u32(x));
		mix(_tzcnt_u64(x)); mix(_tzcnt_u32(x)); mix(__tzcnt_u16(x));
	}
	report("bmi1");
	for (int i = 0; i < 2000; i++) {
		uint64_t x = rnd(), y = rnd();
		unsigned long long hi;
		mix(_bzhi_u64(x, y & 0xff)); mix(_bzhi_u32(x, y & 0x3f));
		mix(_mulx_u64(x, y, &hi)); mix(hi);
		mix((uint64_t)(uint32_t)x * (uint32_t)y);
		mix(_pdep_u64(x, y)); mix(_pext_u64(x, y)); mix(_pdep_u32(x, y)); mix(_pext_u32(x, y));
		mix(shifts(x, y));
	}
	report("bmi2");
	for (int i = 0; i < 2000; i++) {
		uint64_t x = rnd();
		mix(_lzcnt_u64(x)); mix(_lzcnt_u32(x)); mix(__lzcnt16(x)); mix(_popcnt64(x));
	}
	report("lzcnt");
	unsigned char buf[64];
	for (int i = 0; i < 2000; i++) {
		uint64_t x = rnd();
		store_be64(buf + (i & 31), x);
		mix(load_be32(buf + (i & 15)));
		uint16_t v16; memcpy(&v16, buf + 3, 2); mix(__builtin_bswap16(v16));
		uint64_t v64; memcpy(&v64, buf + 5, 8); mix(__builtin_bswap64(v64));
	}
	report("movbe");
	/* ADX: a 256-bit multiply-accumulate with two carry chains. */
	for (int i = 0; i < 500; i++) {
		unsigned long long acc[5] = {0}, m = rnd(), s[4];
		for (int k = 0; k < 4; k++) s[k] = rnd();
		unsigned char cf = 0, of = 0;
		for (int k = 0; k < 4; k++) {
			unsigned long long hi, lo = _mulx_u64(s[k], m, &hi);
			cf = _addcarryx_u64(cf, acc[k], lo, &acc[k]);
			of = _addcarryx_u64(of, acc[k + 1], hi, &acc[k + 1]);
		}
		for (int k = 0; k < 5; k++) mix(acc[k]);
		mix(cf); mix(of);
		unsigned long long r;
		mix(_subborrow_u64(rnd() & 1, rnd(), rnd(), &r)); mix(r);
		mix(adx_asm(rnd(), rnd(), rnd(), rnd(), 0x202 | (rnd() & 0x8d5)));
	}
	report("adx");

	unsigned aux1, aux2;
	unsigned long long t1 = __rdtscp(&aux1), t2 = __rdtscp(&aux2);
	unsigned pid = _rdpid_u32();
	printf("rdtscp monotonic=%d aux-consistent=%d\n", t2 >= t1, aux1 == aux2 && aux1 == pid);
	if (getauxval(AT_HWCAP2) & 2) {
		unsigned long long fs = _readfsbase_u64(), gs = _readgsbase_u64();
		_writegsbase_u64(0x12345678000ull);
		unsigned long long gs2 = _readgsbase_u64();
		unsigned gs32 = _readgsbase_u32();
		_writegsbase_u64(gs);
		printf("fsbase is the TLS pointer: %d, gsbase write/read: %llx %x\n",
			fs == (unsigned long long)__builtin_thread_pointer(), gs2, gs32);
	}
	return 0;
}
