// x86-64-v3 guest (AVX, AVX2, FMA, F16C): auto-vectorised loops, immintrin.h
// intrinsics, glibc's string functions (ifunc-selected from CPUID), and a
// signal delivered while YMM state is live (the handler clobbers it; the
// kernel's XSAVE signal frame must restore it). Built with
// -march=x86-64-v3 -O3; run under uvm with --cpu x86-64-v3.
#include <immintrin.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

static float fa[N], fb[N], fc[N];
static double da[N], db[N];
static int32_t ia[N], ib[N];
static uint8_t ba[N];

static uint64_t hash(const void *p, size_t n) {
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

__attribute__((noinline)) static void saxpy(float a, float *x, const float *y, int n) {
	for (int i = 0; i < n; i++) x[i] = a * x[i] + y[i];
}

__attribute__((noinline)) static double dot(const double *x, const double *y, int n) {
	double s = 0;
	for (int i = 0; i < n; i++) s += x[i] * y[i];
	return s;
}

__attribute__((noinline)) static int64_t isum(const int32_t *x, const int32_t *y, int n) {
	int64_t s = 0;
	for (int i = 0; i < n; i++) s += (int64_t)(x[i] * y[i]) ^ (x[i] >> 3);
	return s;
}

__attribute__((noinline)) static void clampbytes(uint8_t *b, int n, uint8_t lo, uint8_t hi) {
	for (int i = 0; i < n; i++) b[i] = b[i] < lo ? lo : b[i] > hi ? hi : b[i];
}

__attribute__((noinline)) static void conv(float *out, const int32_t *in, int n) {
	for (int i = 0; i < n; i++) out[i] = (float)in[i] * 0.5f + (float)(in[i] & 7);
}

static volatile sig_atomic_t got;

static void handler(int sig) {
	(void)sig;
	// Clobber every YMM register's upper half.
	__asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n"
	                 "vmovdqa %%ymm0, %%ymm8\n vmovdqa %%ymm0, %%ymm9\n"
	                 ::: "xmm0", "xmm8", "xmm9");
	got++;
}

int main(void) {
	uint32_t seed = 12345;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		fa[i] = (float)(seed >> 8) / 65536.0f - 100.0f;
		fb[i] = (float)(seed & 0xFFFF) / 1024.0f;
		da[i] = (double)(int32_t)seed / 3.0;
		db[i] = (double)(seed >> 16) / 7.0;
		ia[i] = (int32_t)seed;
		ib[i] = (int32_t)(seed >> 11) - 5000;
		ba[i] = (uint8_t)(seed >> 24);
	}
	saxpy(1.5f, fa, fb, N);
	printf("saxpy %016llx\n", (unsigned long long)hash(fa, sizeof fa));
	printf("dot %.17g\n", dot(da, db, N));
	printf("isum %lld\n", (long long)isum(ia, ib, N));
	clampbytes(ba, N, 40, 200);
	printf("clamp %016llx\n", (unsigned long long)hash(ba, sizeof ba));
	conv(fc, ia, N);
	printf("conv %016llx\n", (unsigned long long)hash(fc, sizeof fc));

	// Intrinsics.
	__m256d x = _mm256_set_pd(1.0 / 3, -2.5, 1e300, 3.25);
	__m256d y = _mm256_set_pd(3.0, 0.1, 1e10, -7.0);
	__m256d z = _mm256_fmadd_pd(x, y, _mm256_set1_pd(-1.0));
	double zd[4];
	_mm256_storeu_pd(zd, z);
	printf("fmadd %a %a %a %a\n", zd[0], zd[1], zd[2], zd[3]);
	__m256i bytes = _mm256_loadu_si256((const __m256i *)ba);
	__m256i ctl = _mm256_loadu_si256((const __m256i *)(ba + 100));
	__m256i sh = _mm256_shuffle_epi8(bytes, ctl);
	__m256i perm = _mm256_permutevar8x32_epi32(sh, _mm256_set_epi32(0, 7, 1, 6, 2, 5, 3, 4));
	__m256i bl = _mm256_blendv_epi8(perm, bytes, ctl);
	printf("mask %08x\n", (unsigned)_mm256_movemask_epi8(bl));
	int32_t idx[8] = {0, 17, 3, 999, 512, 8, 77, 1};
	__m256i g = _mm256_i32gather_epi32(ia, _mm256_loadu_si256((const __m256i *)idx), 4);
	int32_t gv[8];
	_mm256_storeu_si256((__m256i *)gv, g);
	printf("gather %d %d %d %d\n", gv[0], gv[3], gv[5], gv[7]);
	__m128i ph = _mm256_cvtps_ph(_mm256_loadu_ps(fa), _MM_FROUND_TO_NEAREST_INT);
	__m256 back = _mm256_cvtph_ps(ph);
	float bv[8];
	_mm256_storeu_ps(bv, back);
	printf("f16 %a %a %a\n", bv[0], bv[1], bv[7]);
	__m256i m = _mm256_set_epi32(-1, 0, -1, 0, 0, -1, -1, 0);
	__m256 ml = _mm256_maskload_ps(fb, m);
	_mm256_storeu_ps(bv, ml);
	printf("maskload %a %a %a\n", bv[1], bv[2], bv[7]);

	// glibc string functions (AVX2 variants when CPUID says so).
	static char s1[4096], s2[4096];
	for (int i = 0; i < 4095; i++) s1[i] = 'a' + (i * 7) % 26;
	s1[3000] = 0;
	memcpy(s2, s1, sizeof s1);
	s2[2500] = 'Z';
	printf("strlen %zu strchr %td memcmp %d strcmp %d memchr %td\n", strlen(s1), strchr(s1, 'z') - s1,
	       memcmp(s1, s2, 4096) < 0, strcmp(s1 + 1, s2 + 1) > 0, (char *)memchr(s2, 'Z', 4096) - s2);
	memset(s2, 'q', 1000);
	printf("memset %016llx\n", (unsigned long long)hash(s2, sizeof s2));

	// A signal while ymm8/ymm9 hold live values.
	signal(SIGUSR1, handler);
	__m256i live = _mm256_set_epi64x(0x1111222233334444ll, 0x5555666677778888ll, 0x99990000aaaabbbbll, 0x123456789abcdefll);
	__m256i out;
	__asm__ volatile("vmovdqa %1, %%ymm8\n"
	                 "mov $62, %%eax\n mov %2, %%edi\n mov %3, %%esi\n syscall\n" // kill(getpid(), SIGUSR1)
	                 "vmovdqa %%ymm8, %0\n"
	                 : "=x"(out) : "x"(live), "r"(getpid()), "r"(SIGUSR1) : "rax", "rdi", "rsi", "rcx", "r11", "memory", "xmm8");
	long long ov[4];
	_mm256_storeu_si256((__m256i *)ov, out);
	printf("signal %d ymm8 %llx %llx %llx %llx\n", got, ov[0], ov[1], ov[2], ov[3]);
	return 0;
}
