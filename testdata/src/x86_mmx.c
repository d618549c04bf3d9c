/* x86-64 only (not in MANIFEST): MMX and the SSE-on-MMX forms. gcc
 * implements the mmintrin.h intrinsics with SSE registers on x86-64, so the
 * MMX instructions themselves are written as inline assembly; the program
 * also checks the x87/MMX aliasing (an x87 value seen through mm0, EMMS
 * before x87 code, the FXSAVE image) and uses the intrinsics that do reach
 * MMX registers (_mm_stream_pi, _mm_cvtpi32_ps …). Built by build.sh with
 * -O2 -mssse3; cmd/uvm's TestX86Ext compares the output with native. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tmmintrin.h>
#include <emmintrin.h>

static uint64_t seed = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
	seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
	switch (seed & 7) {
	case 0: return 0;
	case 1: return 0x8000800080008000ull ^ (seed & 0x00ff00ff00ff00ffull);
	case 2: return 0x7f7f7f7f80808080ull;
	}
	return seed;
}

static uint64_t h;
static void mix(uint64_t v) {
	for (int i = 0; i < 8; i++) { h ^= (v >> (8 * i)) & 0xff; h *= 0x100000001b3ull; }
}

/* OP2(name, insn): name(a, b) = a insn b on mm0/mm1 (mm1 also from memory). */
#define OP2(name, insn) \
	static uint64_t name(uint64_t a, uint64_t b) { \
		uint64_t r; \
		__asm__ volatile("movq %1, %%mm0\n\t" insn " %2, %%mm0\n\tmovq %%mm0, %0" \
			: "=m"(r) : "m"(a), "y"(b) : "mm0"); \
		return r; }
#define OP2I(name, insn, imm) \
	static uint64_t name(uint64_t a, uint64_t b) { \
		uint64_t r; \
		__asm__ volatile("movq %1, %%mm0\n\t" insn " $" #imm ", %2, %%mm0\n\tmovq %%mm0, %0" \
			: "=m"(r) : "m"(a), "ym"(b) : "mm0"); \
		return r; }
#define SHI(name, insn, imm) \
	static uint64_t name(uint64_t a, uint64_t b) { \
		uint64_t r; (void)b; \
		__asm__ volatile("movq %1, %%mm0\n\t" insn " $" #imm ", %%mm0\n\tmovq %%mm0, %0" \
			: "=m"(r) : "m"(a) : "mm0"); \
		return r; }
#define SHR(name, insn) \
	static uint64_t name(uint64_t a, uint64_t b) { \
		uint64_t r, n = b & 127; \
		__asm__ volatile("movq %1, %%mm0\n\t" insn " %2, %%mm0\n\tmovq %%mm0, %0" \
			: "=m"(r) : "m"(a), "m"(n) : "mm0"); \
		return r; }

OP2(paddb, "paddb") OP2(paddw, "paddw") OP2(paddd, "paddd") OP2(paddq, "paddq")
OP2(psubb, "psubb") OP2(psubw, "psubw") OP2(psubd, "psubd") OP2(psubq, "psubq")
OP2(paddsb, "paddsb") OP2(paddsw, "paddsw") OP2(paddusb, "paddusb") OP2(paddusw, "paddusw")
OP2(psubsb, "psubsb") OP2(psubsw, "psubsw") OP2(psubusb, "psubusb") OP2(psubusw, "psubusw")
OP2(pmullw, "pmullw") OP2(pmulhw, "pmulhw") OP2(pmulhuw, "pmulhuw") OP2(pmuludq, "pmuludq")
OP2(pmaddwd, "pmaddwd") OP2(pavgb, "pavgb") OP2(pavgw, "pavgw") OP2(psadbw, "psadbw")
OP2(pmaxub, "pmaxub") OP2(pmaxsw, "pmaxsw") OP2(pminub, "pminub") OP2(pminsw, "pminsw")
OP2(pcmpeqb, "pcmpeqb") OP2(pcmpeqw, "pcmpeqw") OP2(pcmpeqd, "pcmpeqd")
OP2(pcmpgtb, "pcmpgtb") OP2(pcmpgtw, "pcmpgtw") OP2(pcmpgtd, "pcmpgtd")
OP2(pand, "pand") OP2(pandn, "pandn") OP2(por, "por") OP2(pxor, "pxor")
OP2(punpcklbw, "punpcklbw") OP2(punpcklwd, "punpcklwd") OP2(punpckldq, "punpckldq")
OP2(punpckhbw, "punpckhbw") OP2(punpckhwd, "punpckhwd") OP2(punpckhdq, "punpckhdq")
OP2(packsswb, "packsswb") OP2(packssdw, "packssdw") OP2(packuswb, "packuswb")
OP2(pshufb, "pshufb") OP2(phaddw, "phaddw") OP2(phaddd, "phaddd") OP2(phaddsw, "phaddsw")
OP2(phsubw, "phsubw") OP2(phsubd, "phsubd") OP2(phsubsw, "phsubsw") OP2(pmaddubsw, "pmaddubsw")
OP2(pmulhrsw, "pmulhrsw") OP2(psignb, "psignb") OP2(psignw, "psignw") OP2(psignd, "psignd")
OP2(pabsb, "pabsb") OP2(pabsw, "pabsw") OP2(pabsd, "pabsd")
OP2I(palignr3, "palignr", 3) OP2I(palignr13, "palignr", 13) OP2I(pshufw1b, "pshufw", 0x1b) OP2I(pshufw_e4, "pshufw", 0x9c)
SHI(psllw5, "psllw", 5) SHI(pslld17, "pslld", 17) SHI(psllq40, "psllq", 40) SHI(psrlw9, "psrlw", 9)
SHI(psrld31, "psrld", 31) SHI(psrlq1, "psrlq", 1) SHI(psraw3, "psraw", 3) SHI(psrad20, "psrad", 20)
SHR(psllw_r, "psllw") SHR(pslld_r, "pslld") SHR(psllq_r, "psllq") SHR(psrlw_r, "psrlw")
SHR(psrld_r, "psrld") SHR(psrlq_r, "psrlq") SHR(psraw_r, "psraw") SHR(psrad_r, "psrad")

static uint64_t (*const ops[])(uint64_t, uint64_t) = {
	paddb, paddw, paddd, paddq, psubb, psubw, psubd, psubq, paddsb, paddsw, paddusb, paddusw,
	psubsb, psubsw, psubusb, psubusw, pmullw, pmulhw, pmulhuw, pmuludq, pmaddwd, pavgb, pavgw, psadbw,
	pmaxub, pmaxsw, pminub, pminsw, pcmpeqb, pcmpeqw, pcmpeqd, pcmpgtb, pcmpgtw, pcmpgtd,
	pand, pandn, por, pxor, punpcklbw, punpcklwd, punpckldq, punpckhbw, punpckhwd, punpckhdq,
	packsswb, packssdw, packuswb, pshufb, phaddw, phaddd, phaddsw, phsubw, phsubd, phsubsw, pmaddubsw,
	pmulhrsw, psignb, psignw, psignd, pabsb, pabsw, pabsd, palignr3, palignr13, pshufw1b, pshufw_e4,
	psllw5, pslld17, psllq40, psrlw9, psrld31, psrlq1, psraw3, psrad20,
	psllw_r, pslld_r, psllq_r, psrlw_r, psrld_r, psrlq_r, psraw_r, psrad_r,
};

int main(void) {
	int nops = sizeof ops / sizeof ops[0];
	for (int k = 0; k < nops; k++) {
		h = 0xcbf29ce484222325ull;
		for (int i = 0; i < 300; i++) {
			uint64_t a = rnd(), b = rnd();
			mix(ops[k](a, b));
		}
		printf("op%02d %016llx\n", k, (unsigned long long)h);
	}
	__asm__ volatile("emms");

	/* GPR moves, PEXTRW/PINSRW, PMOVMSKB, MASKMOVQ, MOVNTQ, MOVQ2DQ. */
	h = 0xcbf29ce484222325ull;
	unsigned char buf[32] __attribute__((aligned(16)));
	for (int i = 0; i < 300; i++) {
		uint64_t a = rnd(), b = rnd(), r1, r3;
		unsigned r2, r4;
		memset(buf, 0x5a, sizeof buf);
		__asm__ volatile(
			"movq %[a], %%mm0\n\tmovd %k[b], %%mm1\n\tpextrw $2, %%mm0, %[r2]\n\t"
			"pinsrw $1, %k[b], %%mm0\n\tpmovmskb %%mm0, %[r4]\n\tmovq %%mm0, %[r1]\n\t"
			"movq %%mm1, %%mm2\n\tpxor %%mm0, %%mm2\n\tmovq %%mm2, %[r3]\n\t"
			"lea %[buf], %%rdi\n\tmaskmovq %%mm1, %%mm0\n\tmovntq %%mm2, %[nt]\n\tsfence"
			: [r1] "=r"(r1), [r2] "=r"(r2), [r3] "=m"(r3), [r4] "=r"(r4), [buf] "+m"(buf),
			  [nt] "=m"(*(uint64_t *)(buf + 16))
			: [a] "r"(a), [b] "r"(b) : "rdi", "mm0", "mm1", "mm2", "memory");
		mix(r1); mix(r2); mix(r3); mix(r4);
		for (int k = 0; k < 32; k += 8) { uint64_t v; memcpy(&v, buf + k, 8); mix(v); }
		__m128i x;
		__asm__ volatile("movq %1, %%mm3\n\tmovq2dq %%mm3, %0" : "=x"(x) : "m"(a) : "mm3");
		mix(_mm_cvtsi128_si64(x));
		__m64 m;
		__asm__ volatile("movdq2q %1, %%mm4\n\tmovq %%mm4, %0" : "=m"(m) : "x"(_mm_set_epi64x(b, a)) : "mm4");
		mix((uint64_t)m);
	}
	__asm__ volatile("emms");
	printf("moves %016llx\n", (unsigned long long)h);

	/* Conversions between MMX and XMM (MXCSR rounding, NaN/overflow → 0x80000000). */
	h = 0xcbf29ce484222325ull;
	for (int i = 0; i < 300; i++) {
		uint64_t a = rnd();
		float f[4] = {(float)(int64_t)a / 3e3f, (float)(int32_t)(a >> 32) * 1.5f, 1e10f, -2.5f};
		double d[2] = {(double)(int64_t)a / 7e9, -(double)(a >> 40) - 0.5};
		uint64_t r[4];
		__m128 fx, fy;
		__m128d dx;
		memcpy(&fx, f, 16);
		memcpy(&dx, d, 16);
		__asm__ volatile(
			"cvtps2pi %[fx], %%mm0\n\tmovq %%mm0, %[r0]\n\tcvttps2pi %[fx], %%mm1\n\tmovq %%mm1, %[r1]\n\t"
			"cvtpd2pi %[dx], %%mm2\n\tmovq %%mm2, %[r2]\n\tcvttpd2pi %[dx], %%mm3\n\tmovq %%mm3, %[r3]\n\t"
			"movq %[a], %%mm4\n\tmovaps %[fx], %[fy]\n\tcvtpi2ps %%mm4, %[fy]"
			: [r0] "=m"(r[0]), [r1] "=m"(r[1]), [r2] "=m"(r[2]), [r3] "=m"(r[3]), [fy] "=&x"(fy)
			: [fx] "x"(fx), [dx] "x"(dx), [a] "m"(a) : "mm0", "mm1", "mm2", "mm3", "mm4");
		for (int k = 0; k < 4; k++) mix(r[k]);
		memcpy(f, &fy, 16);
		for (int k = 0; k < 4; k++) { uint32_t v; memcpy(&v, &f[k], 4); mix(v); }
		__asm__ volatile("cvtpi2pd %1, %0" : "=x"(dx) : "m"(a));
		memcpy(d, &dx, 16);
		mix((uint64_t)(int64_t)d[0]); mix((uint64_t)(int64_t)d[1]);
	}
	__asm__ volatile("emms");
	printf("cvt %016llx\n", (unsigned long long)h);

	/* x87 and MMX share registers: an x87 1.0 read as mm0, an MMX write
	 * read back by the x87 unit (sign and exponent all ones: -inf here), the FXSAVE tag
	 * byte in MMX mode and after EMMS, and long double code after EMMS. */
	uint64_t one, tw1, tw2;
	unsigned char fx[512] __attribute__((aligned(16)));
	long double nanv;
	__asm__ volatile("fld1\n\tmovq %%mm7, %0\n\tfstp %%st(0)" : "=m"(one) : : "mm7");
	__asm__ volatile("movq %1, %%mm7\n\tfxsave %2\n\temms\n\tfldt %3" : "=t"(nanv) : "m"(one), "m"(fx), "m"(fx[144]));
	tw1 = fx[4];
	__asm__ volatile("fxsave %0" : "=m"(fx));
	tw2 = fx[4];
	printf("x87 1.0 as mm: %016llx, tags in mmx mode %02llx after emms+fld %02llx, mm7 as x87: %Lg\n",
		(unsigned long long)one, (unsigned long long)tw1, (unsigned long long)tw2,
		nanv);
	long double s = 0;
	for (int i = 1; i <= 50; i++) s += 1.0L / i;
	printf("harmonic(50) = %.18Lf\n", s);

	/* Intrinsics that keep MMX registers. */
	__m64 dst[2] = {0};
	_mm_stream_pi(&dst[0], (__m64)0x0123456789abcdefull);
	_mm_sfence();
	printf("stream %016llx\n", (unsigned long long)dst[0]);
	_mm_empty();
	return 0;
}
