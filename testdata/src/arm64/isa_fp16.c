/* isa_fp16: FEAT_FP16 half-precision arithmetic (arm64 only), built with
 * -march=armv8.2-a+fp16 -O3 so that GCC vectorises the _Float16 loops
 * (FADD/FMUL/FMLA/FDIV/FMAXNM... .8h) and uses scalar H-register
 * arithmetic, conversions, compares and FCSEL. Results are printed as
 * bit patterns. Arguments select the --cpu model checks of
 * cmd/uvm/arm64model_test.go:
 *   isa_fp16 hwcap  prints AT_HWCAP, AT_HWCAP2 and the ID registers;
 *   isa_fp16 lse    executes an LDADD (SIGILL without FEAT_LSE);
 *   isa_fp16 fp16   executes FADD Hd (SIGILL without FEAT_FP16). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#define N 67

static _Float16 a[N], b[N], c[N], r[N];

static uint16_t bits(_Float16 x) {
	uint16_t u;
	memcpy(&u, &x, 2);
	return u;
}

static uint32_t sum(const _Float16 *v, int n) {
	uint32_t h = 0;
	for (int i = 0; i < n; i++)
		h = h * 31 + bits(v[i]);
	return h;
}

__attribute__((noinline)) static void vadd(void) {
	for (int i = 0; i < N; i++)
		r[i] = a[i] + b[i];
}
__attribute__((noinline)) static void vfma(void) {
	for (int i = 0; i < N; i++)
		r[i] = a[i] * b[i] + c[i];
}
__attribute__((noinline)) static void vdiv(void) {
	for (int i = 0; i < N; i++)
		r[i] = a[i] / b[i];
}
__attribute__((noinline)) static void vmax(void) {
	for (int i = 0; i < N; i++)
		r[i] = __builtin_fmaxf16(a[i], b[i]);
}
__attribute__((noinline)) static void vmin(void) {
	for (int i = 0; i < N; i++)
		r[i] = __builtin_fminf16(a[i], c[i]);
}
__attribute__((noinline)) static void vabs(void) {
	for (int i = 0; i < N; i++)
		r[i] = __builtin_fabsf16(a[i] - b[i]);
}
__attribute__((noinline)) static void vsel(void) {
	for (int i = 0; i < N; i++)
		r[i] = a[i] < b[i] ? c[i] : -a[i];
}
__attribute__((noinline)) static void vsqrt(void) {
	for (int i = 0; i < N; i++)
		r[i] = __builtin_sqrtf16(__builtin_fabsf16(a[i]));
}
__attribute__((noinline)) static _Float16 dot(void) {
	_Float16 s = 0;
	for (int i = 0; i < N; i++)
		s += a[i] * b[i];
	return s;
}
__attribute__((noinline)) static _Float16 vmaxv(void) {
	_Float16 m = a[0];
	for (int i = 1; i < N; i++)
		m = __builtin_fmaxf16(m, a[i]);
	return m;
}

static uint64_t fpcr(void) {
	uint64_t v;
	__asm__ volatile("mrs %0, fpcr" : "=r"(v));
	return v;
}
static void setfpcr(uint64_t v) { __asm__ volatile("msr fpcr, %0" ::"r"(v)); }
static uint64_t fpsr(void) {
	uint64_t v;
	__asm__ volatile("mrs %0, fpsr" : "=r"(v));
	return v;
}
static void setfpsr(uint64_t v) { __asm__ volatile("msr fpsr, %0" ::"r"(v)); }

/* scalar ops in inline assembly, so that the compiler cannot fold them */
static uint16_t hmul(uint16_t x, uint16_t y) {
	uint16_t z;
	__asm__ volatile("fmov h0, %w1\n fmov h1, %w2\n fmul h0, h0, h1\n fmov %w0, h0" : "=r"(z) : "r"(x), "r"(y) : "v0", "v1");
	return z;
}
static uint16_t hrecpe(uint16_t x) {
	uint16_t z;
	__asm__ volatile("fmov h0, %w1\n frecpe h0, h0\n fmov %w0, h0" : "=r"(z) : "r"(x) : "v0");
	return z;
}
static uint16_t hrsqrte(uint16_t x) {
	uint16_t z;
	__asm__ volatile("fmov h0, %w1\n frsqrte h0, h0\n fmov %w0, h0" : "=r"(z) : "r"(x) : "v0");
	return z;
}

static int hwcap_mode(void) {
	uint64_t isar0, isar1, pfr0, midr;
	__asm__ volatile("mrs %0, ID_AA64ISAR0_EL1" : "=r"(isar0));
	__asm__ volatile("mrs %0, ID_AA64ISAR1_EL1" : "=r"(isar1));
	__asm__ volatile("mrs %0, ID_AA64PFR0_EL1" : "=r"(pfr0));
	__asm__ volatile("mrs %0, MIDR_EL1" : "=r"(midr));
	printf("hwcap %lx hwcap2 %lx isar0 %lx isar1 %lx pfr0 %lx midr %lx\n", getauxval(AT_HWCAP),
	       getauxval(AT_HWCAP2), isar0, isar1, pfr0, midr);
	return 0;
}

int main(int argc, char **argv) {
	if (argc > 1) {
		if (!strcmp(argv[1], "hwcap"))
			return hwcap_mode();
		if (!strcmp(argv[1], "lse")) {
			static uint64_t v = 1;
			uint64_t old;
			__asm__ volatile("ldaddal %1, %0, [%2]" : "=r"(old) : "r"((uint64_t)2), "r"(&v) : "memory");
			printf("lse: %lu %lu\n", old, v);
			return 0;
		}
		if (!strcmp(argv[1], "fp16")) {
			printf("fp16: %04x\n", hmul(0x3e00, 0x4000));
			return 0;
		}
		return 2;
	}
	uint32_t seed = 12345;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		a[i] = (_Float16)((int)(seed >> 16 & 0x3ff) - 512) / (_Float16)37.0;
		seed = seed * 1103515245 + 12345;
		b[i] = (_Float16)((int)(seed >> 16 & 0x3ff) - 500) / (_Float16)13.0;
		seed = seed * 1103515245 + 12345;
		c[i] = (_Float16)(seed >> 16 & 0xffff) * (_Float16)0.0001;
	}
	b[3] = 0; /* a division by zero */
	a[5] = (_Float16)65504.0;
	b[5] = (_Float16)2.0; /* overflow */
	a[7] = (_Float16)6e-8; /* subnormal */
	setfpsr(0);
	vadd();
	printf("add %08x\n", sum(r, N));
	vfma();
	printf("fma %08x\n", sum(r, N));
	vdiv();
	printf("div %08x\n", sum(r, N));
	vmax();
	printf("max %08x\n", sum(r, N));
	vmin();
	printf("min %08x\n", sum(r, N));
	vabs();
	printf("abd %08x\n", sum(r, N));
	vsel();
	printf("sel %08x\n", sum(r, N));
	vsqrt();
	printf("sqrt %08x\n", sum(r, N));
	printf("dot %04x maxv %04x\n", bits(dot()), bits(vmaxv()));
	printf("fpsr %lx\n", fpsr() & 0x9f);
	unsigned long isum = 0;
	for (int i = 0; i < N; i++)
		isum = isum * 3 + (unsigned long)(long)a[i] + (unsigned long)(int)(b[i] * (_Float16)100.0);
	printf("cvt %lu %04x %04x\n", isum, bits((_Float16)-12345), bits((_Float16)(unsigned)70000));
	/* rounding modes and FZ16 */
	uint64_t saved = fpcr();
	for (int rm = 0; rm < 4; rm++) {
		setfpcr(saved | (uint64_t)rm << 22);
		printf("rm%d %04x %04x\n", rm, hmul(0x3c01, 0x3c01), hmul(0x0201, 0x3bff));
	}
	setfpsr(0);
	setfpcr(saved | 1 << 19);
	printf("fz16 fpcr %lx mul %04x %04x fpsr %lx\n", fpcr() >> 19 & 1, hmul(0x0200, 0x4000), hmul(0x0400, 0x3800), fpsr() & 0x9f);
	setfpcr(saved);
	printf("recpe %04x %04x %04x rsqrte %04x %04x %04x\n", hrecpe(0x3c00), hrecpe(0x4d00), hrecpe(0x0001), hrsqrte(0x3c00),
	       hrsqrte(0x4400), hrsqrte(0x0010));
	printf("hwcap fphp %d asimdhp %d\n", (int)(getauxval(AT_HWCAP) >> 9 & 1), (int)(getauxval(AT_HWCAP) >> 10 & 1));
	return 0;
}
