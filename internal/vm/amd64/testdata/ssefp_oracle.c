// ssefp_oracle: prints SSE floating-point test vectors computed by the
// host CPU (x86-64 only): op mxcsr_in a b -> result mxcsr_out [rflags].
// Build and run: gcc -O1 -o /tmp/ssefp_oracle ssefp_oracle.c &&
//   /tmp/ssefp_oracle > ssefp_vectors.txt
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rnd(void) {
	static uint64_t s = 88172645463325252ull;
	s ^= s << 13; s ^= s >> 7; s ^= s << 17;
	return s;
}

static uint64_t rf64(void) {
	uint64_t r = rnd();
	switch (rnd() % 12) {
	case 0: return (uint64_t)(rnd() % 4) << 62 >> 1;
	case 1: return r & ((1ull << 52) - 1);
	case 2: return (r & (1ull << 63 | ((1ull << 52) - 1))) | 0x7FFull << 52;
	case 3: return (r & (1ull << 63 | ((1ull << 52) - 1))) | (uint64_t)(rnd() % 3 + 1) << 52;
	case 4: return (r & (1ull << 63 | ((1ull << 52) - 1))) | (uint64_t)(0x7FE - rnd() % 3) << 52;
	case 5: { double d = (double)((int)(rnd() % 2000) - 1000) / 4; uint64_t u; __builtin_memcpy(&u, &d, 8); return u; }
	case 6: return (r & (1ull << 63 | ((1ull << 52) - 1))) | (uint64_t)(1023 + 52 + rnd() % 14 - 2) << 52;
	}
	return (r & (1ull << 63 | ((1ull << 52) - 1))) | (uint64_t)(1023 + rnd() % 120 - 60) << 52;
}

static uint32_t rf32(void) {
	uint32_t r = (uint32_t)rnd();
	switch (rnd() % 12) {
	case 0: return (uint32_t)(rnd() % 4) << 30 >> 1;
	case 1: return r & ((1u << 23) - 1);
	case 2: return (r & (1u << 31 | ((1u << 23) - 1))) | 0xFFu << 23;
	case 3: return (r & (1u << 31 | ((1u << 23) - 1))) | (uint32_t)(rnd() % 3 + 1) << 23;
	case 4: return (r & (1u << 31 | ((1u << 23) - 1))) | (uint32_t)(0xFE - rnd() % 3) << 23;
	case 5: { float f = (float)((int)(rnd() % 2000) - 1000) / 4; uint32_t u; __builtin_memcpy(&u, &f, 4); return u; }
	case 6: return (r & (1u << 31 | ((1u << 23) - 1))) | (uint32_t)(127 + 23 + rnd() % 14 - 2) << 23;
	}
	return (r & (1u << 31 | ((1u << 23) - 1))) | (uint32_t)(127 + rnd() % 60 - 30) << 23;
}

static const uint32_t modes[] = {0x1F80, 0x1FA0, 0x3F80, 0x5F80, 0x7F80, 0x1FC0, 0x9F80, 0x9FC0, 0xFFC0};

#define BIN64(name, insn) \
	static uint64_t name(uint64_t a, uint64_t b, uint32_t *m) { \
		__asm__ volatile("ldmxcsr %2\n\t" insn " %1, %0\n\tstmxcsr %2" : "+x"(a) : "x"(b), "m"(*m)); \
		return a; }
#define BIN32(name, insn) \
	static uint64_t name(uint64_t a, uint64_t b, uint32_t *m) { \
		__asm__ volatile("ldmxcsr %2\n\t" insn " %1, %0\n\tstmxcsr %2" : "+x"(a) : "x"(b), "m"(*m)); \
		return a & 0xffffffff; }
BIN64(addsd, "addsd") BIN64(subsd, "subsd") BIN64(mulsd, "mulsd") BIN64(divsd, "divsd")
BIN64(minsd, "minsd") BIN64(maxsd, "maxsd") BIN64(sqrtsd, "sqrtsd")
BIN32(addss, "addss") BIN32(subss, "subss") BIN32(mulss, "mulss") BIN32(divss, "divss")
BIN32(minss, "minss") BIN32(maxss, "maxss") BIN32(sqrtss, "sqrtss")

static uint64_t cvtsd2ss(uint64_t a, uint64_t b, uint32_t *m) {
	uint64_t r = 0;
	__asm__ volatile("ldmxcsr %2\n\tcvtsd2ss %1, %0\n\tstmxcsr %2" : "+x"(r) : "x"(b), "m"(*m));
	return r & 0xffffffff;
}
static uint64_t cvtss2sd(uint64_t a, uint64_t b, uint32_t *m) {
	uint64_t r = 0;
	__asm__ volatile("ldmxcsr %2\n\tcvtss2sd %1, %0\n\tstmxcsr %2" : "+x"(r) : "x"(b), "m"(*m));
	return r;
}
#define CVTI(name, insn, reg) \
	static uint64_t name(uint64_t a, uint64_t b, uint32_t *m) { \
		uint64_t r; __asm__ volatile("ldmxcsr %2\n\t" insn " %1, %" reg "0\n\tstmxcsr %2" : "=r"(r) : "x"(b), "m"(*m)); \
		return r; }
CVTI(cvtsd2si64, "cvtsd2si", "q") CVTI(cvttsd2si64, "cvttsd2si", "q")
CVTI(cvtss2si64, "cvtss2si", "q") CVTI(cvttss2si64, "cvttss2si", "q")
static uint64_t cvtsd2si32(uint64_t a, uint64_t b, uint32_t *m) {
	uint32_t r; __asm__ volatile("ldmxcsr %2\n\tcvtsd2si %1, %0\n\tstmxcsr %2" : "=r"(r) : "x"(b), "m"(*m)); return r; }
static uint64_t cvttss2si32(uint64_t a, uint64_t b, uint32_t *m) {
	uint32_t r; __asm__ volatile("ldmxcsr %2\n\tcvttss2si %1, %0\n\tstmxcsr %2" : "=r"(r) : "x"(b), "m"(*m)); return r; }
static uint64_t cvtsi2sd64(uint64_t a, uint64_t b, uint32_t *m) {
	uint64_t r = 0; __asm__ volatile("ldmxcsr %2\n\tcvtsi2sdq %1, %0\n\tstmxcsr %2" : "+x"(r) : "r"(b), "m"(*m)); return r; }
static uint64_t cvtsi2ss64(uint64_t a, uint64_t b, uint32_t *m) {
	uint64_t r = 0; __asm__ volatile("ldmxcsr %2\n\tcvtsi2ssq %1, %0\n\tstmxcsr %2" : "+x"(r) : "r"(b), "m"(*m)); return r & 0xffffffff; }
#define COMI(name, insn) \
	static uint64_t name(uint64_t a, uint64_t b, uint32_t *m) { \
		uint64_t f; __asm__ volatile("ldmxcsr %3\n\t" insn " %2, %1\n\tpushfq\n\tpopq %0\n\tstmxcsr %3" : "=r"(f) : "x"(a), "x"(b), "m"(*m)); \
		return f & 0x8d5; }
COMI(ucomisd, "ucomisd") COMI(comisd, "comisd") COMI(ucomiss, "ucomiss") COMI(comiss, "comiss")
#define CMPP(name, insn, p) \
	static uint64_t name(uint64_t a, uint64_t b, uint32_t *m) { \
		__asm__ volatile("ldmxcsr %2\n\t" insn " $" #p ", %1, %0\n\tstmxcsr %2" : "+x"(a) : "x"(b), "m"(*m)); \
		return a; }
CMPP(cmpsd1, "cmpsd", 1) CMPP(cmpsd3, "cmpsd", 3) CMPP(cmpsd4, "cmpsd", 4) CMPP(cmpsd6, "cmpsd", 6)
CMPP(roundsd4, "roundsd", 4) CMPP(roundsd9, "roundsd", 9) CMPP(roundsd2, "roundsd", 2) CMPP(roundsd11, "roundsd", 11)

struct op { const char *name; uint64_t (*f)(uint64_t, uint64_t, uint32_t *); int a32, b32, bint; };
static const struct op ops[] = {
	{"addsd", addsd}, {"subsd", subsd}, {"mulsd", mulsd}, {"divsd", divsd}, {"minsd", minsd},
	{"maxsd", maxsd}, {"sqrtsd", sqrtsd},
	{"addss", addss, 1, 1}, {"subss", subss, 1, 1}, {"mulss", mulss, 1, 1}, {"divss", divss, 1, 1},
	{"minss", minss, 1, 1}, {"maxss", maxss, 1, 1}, {"sqrtss", sqrtss, 1, 1},
	{"cvtsd2ss", cvtsd2ss}, {"cvtss2sd", cvtss2sd, 1, 1},
	{"cvtsd2si64", cvtsd2si64}, {"cvttsd2si64", cvttsd2si64}, {"cvtsd2si32", cvtsd2si32},
	{"cvtss2si64", cvtss2si64, 1, 1}, {"cvttss2si64", cvttss2si64, 1, 1}, {"cvttss2si32", cvttss2si32, 1, 1},
	{"cvtsi2sd64", cvtsi2sd64, 0, 0, 1}, {"cvtsi2ss64", cvtsi2ss64, 0, 0, 1},
	{"ucomisd", ucomisd}, {"comisd", comisd}, {"ucomiss", ucomiss, 1, 1}, {"comiss", comiss, 1, 1},
	{"cmpsd1", cmpsd1}, {"cmpsd3", cmpsd3}, {"cmpsd4", cmpsd4}, {"cmpsd6", cmpsd6},
	{"roundsd4", roundsd4}, {"roundsd9", roundsd9}, {"roundsd2", roundsd2}, {"roundsd11", roundsd11},
};

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 150;
	for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		for (int k = 0; k < n; k++) {
			uint32_t m = modes[rnd() % (sizeof modes / sizeof modes[0])];
			uint64_t a = ops[i].a32 ? rf32() : rf64();
			uint64_t b = ops[i].b32 ? rf32() : rf64();
			if (ops[i].bint) b = rnd() >> (rnd() % 64);
			uint32_t mi = m;
			uint64_t r = ops[i].f(a, b, &m);
			printf("%s %x %llx %llx %llx %x\n", ops[i].name, mi, (unsigned long long)a,
			       (unsigned long long)b, (unsigned long long)r, m);
		}
	}
	return 0;
}
