/* isa_fhm: FEAT_FHM (FMLAL, FMLAL2, FMLSL, FMLSL2; vector and by element)
 * and the half-precision FEAT_FCMA forms (FCMLA .8H/.4H vector and by
 * element, FCADD .8H) by inline asm (arm64 only), built with
 * -march=armv8.4-a+fp16+fp16fml. Operands: halves and singles including
 * NaNs, infinities, denormals and values near overflow, under every FPCR
 * rounding mode with FZ, FZ16 and DN; per instruction and FPCR state it
 * prints a hash of the results and the FPSR flags. Expected output from
 * qemu-aarch64 -cpu max. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

typedef struct { uint64_t lo, hi; } v128;

static const uint16_t H[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x3c01, 0x7bff, 0xfbff, 0x0001, 0x8001, 0x03ff,
	0x0400, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfd55, 0x3555, 0x4248, 0x1400, 0x5bff, 0xc3ff, 0x2e66, 0x0200, 0x7a00};
static const uint32_t S[] = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x00000001, 0x807fffff, 0x7f7fffff,
	0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffa00123, 0x33800000, 0xb3800000, 0x4f7fc004, 0x3f804008};
#define NH (sizeof H / sizeof H[0])
#define NS (sizeof S / sizeof S[0])

static uint64_t hash;
static void mix(uint64_t x) {
	for (int i = 0; i < 8; i++) {
		hash ^= (x >> (8 * i)) & 0xff;
		hash *= 0x100000001b3ull;
	}
}

static v128 vh(int k) { /* eight halves from the table */
	v128 v = {0, 0};
	for (int i = 0; i < 4; i++) {
		v.lo |= (uint64_t)H[(k + 7 * i) % NH] << (16 * i);
		v.hi |= (uint64_t)H[(k + 7 * i + 3 + k / NH) % NH] << (16 * i);
	}
	return v;
}
static v128 vs(int k) { /* four singles */
	v128 v;
	v.lo = S[k % NS] | (uint64_t)S[(k * 5 + 1) % NS] << 32;
	v.hi = S[(k * 3 + 2) % NS] | (uint64_t)S[(k * 7 + 3) % NS] << 32;
	return v;
}

#define OP3(name, insn)                                                                        \
	static void name(v128 *d, const v128 *n, const v128 *m) {                              \
		__asm__ volatile("ldr q0, [%0]\n ldr q1, [%1]\n ldr q2, [%2]\n" insn "\n str q0, [%0]" \
				 : : "r"(d), "r"(n), "r"(m) : "v0", "v1", "v2", "memory");            \
	}
OP3(fmlal_v, "fmlal v0.4s, v1.4h, v2.4h")
OP3(fmlal2_v, "fmlal2 v0.4s, v1.4h, v2.4h")
OP3(fmlsl_v, "fmlsl v0.4s, v1.4h, v2.4h")
OP3(fmlsl2_v, "fmlsl2 v0.2s, v1.2h, v2.2h")
OP3(fmlal_e, "fmlal v0.4s, v1.4h, v2.h[5]")
OP3(fmlal2_e, "fmlal2 v0.2s, v1.2h, v2.h[2]")
OP3(fmlsl_e, "fmlsl v0.4s, v1.4h, v2.h[7]")
OP3(fmlsl2_e, "fmlsl2 v0.4s, v1.4h, v2.h[0]")
OP3(fcmla0, "fcmla v0.8h, v1.8h, v2.8h, #0")
OP3(fcmla90, "fcmla v0.8h, v1.8h, v2.8h, #90")
OP3(fcmla180, "fcmla v0.4h, v1.4h, v2.4h, #180")
OP3(fcmla270, "fcmla v0.8h, v1.8h, v2.8h, #270")
OP3(fcmla_e, "fcmla v0.8h, v1.8h, v2.h[3], #90")
OP3(fcmla_e4, "fcmla v0.4h, v1.4h, v2.h[1], #270")
OP3(fcadd90, "fcadd v0.8h, v1.8h, v2.8h, #90")
OP3(fcadd270, "fcadd v0.4h, v1.4h, v2.4h, #270")

static const struct {
	const char *name;
	void (*f)(v128 *, const v128 *, const v128 *);
	int single;
} ops[] = {
	{"fmlal", fmlal_v, 1}, {"fmlal2", fmlal2_v, 1}, {"fmlsl", fmlsl_v, 1}, {"fmlsl2.2s", fmlsl2_v, 1},
	{"fmlal h[5]", fmlal_e, 1}, {"fmlal2.2s h[2]", fmlal2_e, 1}, {"fmlsl h[7]", fmlsl_e, 1}, {"fmlsl2 h[0]", fmlsl2_e, 1},
	{"fcmla #0", fcmla0, 0}, {"fcmla #90", fcmla90, 0}, {"fcmla.4h #180", fcmla180, 0}, {"fcmla #270", fcmla270, 0},
	{"fcmla h[3] #90", fcmla_e, 0}, {"fcmla.4h h[1] #270", fcmla_e4, 0}, {"fcadd #90", fcadd90, 0}, {"fcadd.4h #270", fcadd270, 0},
};

static void set_fpcr(uint64_t v) { __asm__ volatile("msr fpcr, %0" : : "r"(v)); }
static uint64_t get_fpsr(void) { uint64_t v; __asm__ volatile("mrs %0, fpsr" : "=r"(v)); return v; }
static void set_fpsr(uint64_t v) { __asm__ volatile("msr fpsr, %0" : : "r"(v)); }

int main(void) {
	unsigned long hw = getauxval(AT_HWCAP);
	printf("hwcap asimdfhm %lu fcma %lu asimdhp %lu\n", hw >> 23 & 1, hw >> 14 & 1, hw >> 10 & 1);
	/* one explicit result: (1+2^-10)^2 + 0 has no intermediate rounding */
	v128 d = {0, 0}, n = {0x3c01, 0}, m = {0x3c01, 0};
	fmlal_v(&d, &n, &m);
	printf("fmlal (1+2^-10)^2 = %08llx\n", (unsigned long long)(uint32_t)d.lo);
	static const uint64_t modes[] = {0, 1 << 22, 2 << 22, 3 << 22, 1 << 24, 1 << 19, 1 << 25, 1 << 24 | 1 << 19,
		1 << 25 | 1 << 19 | 2 << 22, 1 << 24 | 1 << 25 | 3 << 22, 1 << 26 | 1 << 19};
	for (unsigned o = 0; o < sizeof ops / sizeof ops[0]; o++) {
		for (unsigned md = 0; md < sizeof modes / sizeof modes[0]; md++) {
			hash = 0xcbf29ce484222325ull;
			uint64_t flags = 0;
			for (int k = 0; k < 300; k++) {
				v128 a = ops[o].single ? vs(k) : vh(k + 11), x = vh(k), y = vh(k * 13 + 5);
				set_fpcr(modes[md]);
				set_fpsr(0);
				ops[o].f(&a, &x, &y);
				uint64_t f = get_fpsr();
				set_fpcr(0);
				flags |= f;
				mix(a.lo);
				mix(a.hi);
				mix(f);
			}
			printf("%-20s fpcr %08llx: %016llx fpsr %02llx\n", ops[o].name, (unsigned long long)modes[md],
			       (unsigned long long)hash, (unsigned long long)flags);
		}
	}
	return 0;
}
