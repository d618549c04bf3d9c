/* isa_crypto: the Armv8 crypto extensions through arm_neon.h intrinsics
 * (AES, PMULL, SHA1, SHA256, SHA512, SHA3), each checked against a plain C
 * reference, plus auto-vectorised loops and LSE atomics. Built with
 * -march=armv8.2-a+crypto+sha3 -O3 (arm64 only). */
#include <arm_neon.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void hex(const char *name, const uint8_t *b, int n) {
	printf("%s ", name);
	for (int i = 0; i < n; i++)
		printf("%02x", b[i]);
	printf("\n");
}

/* ---- AES-128 (FIPS-197 appendix C.1) ---- */
static const uint8_t sbox[256] = {
	0x63,0x7c,0x77,0x7b,0xf2,0x6b,0x6f,0xc5,0x30,0x01,0x67,0x2b,0xfe,0xd7,0xab,0x76,
	0xca,0x82,0xc9,0x7d,0xfa,0x59,0x47,0xf0,0xad,0xd4,0xa2,0xaf,0x9c,0xa4,0x72,0xc0,
	0xb7,0xfd,0x93,0x26,0x36,0x3f,0xf7,0xcc,0x34,0xa5,0xe5,0xf1,0x71,0xd8,0x31,0x15,
	0x04,0xc7,0x23,0xc3,0x18,0x96,0x05,0x9a,0x07,0x12,0x80,0xe2,0xeb,0x27,0xb2,0x75,
	0x09,0x83,0x2c,0x1a,0x1b,0x6e,0x5a,0xa0,0x52,0x3b,0xd6,0xb3,0x29,0xe3,0x2f,0x84,
	0x53,0xd1,0x00,0xed,0x20,0xfc,0xb1,0x5b,0x6a,0xcb,0xbe,0x39,0x4a,0x4c,0x58,0xcf,
	0xd0,0xef,0xaa,0xfb,0x43,0x4d,0x33,0x85,0x45,0xf9,0x02,0x7f,0x50,0x3c,0x9f,0xa8,
	0x51,0xa3,0x40,0x8f,0x92,0x9d,0x38,0xf5,0xbc,0xb6,0xda,0x21,0x10,0xff,0xf3,0xd2,
	0xcd,0x0c,0x13,0xec,0x5f,0x97,0x44,0x17,0xc4,0xa7,0x7e,0x3d,0x64,0x5d,0x19,0x73,
	0x60,0x81,0x4f,0xdc,0x22,0x2a,0x90,0x88,0x46,0xee,0xb8,0x14,0xde,0x5e,0x0b,0xdb,
	0xe0,0x32,0x3a,0x0a,0x49,0x06,0x24,0x5c,0xc2,0xd3,0xac,0x62,0x91,0x95,0xe4,0x79,
	0xe7,0xc8,0x37,0x6d,0x8d,0xd5,0x4e,0xa9,0x6c,0x56,0xf4,0xea,0x65,0x7a,0xae,0x08,
	0xba,0x78,0x25,0x2e,0x1c,0xa6,0xb4,0xc6,0xe8,0xdd,0x74,0x1f,0x4b,0xbd,0x8b,0x8a,
	0x70,0x3e,0xb5,0x66,0x48,0x03,0xf6,0x0e,0x61,0x35,0x57,0xb9,0x86,0xc1,0x1d,0x9e,
	0xe1,0xf8,0x98,0x11,0x69,0xd9,0x8e,0x94,0x9b,0x1e,0x87,0xe9,0xce,0x55,0x28,0xdf,
	0x8c,0xa1,0x89,0x0d,0xbf,0xe6,0x42,0x68,0x41,0x99,0x2d,0x0f,0xb0,0x54,0xbb,0x16,
};

static void aes_expand(const uint8_t key[16], uint8_t rk[11][16]) {
	uint8_t rcon = 1;
	memcpy(rk[0], key, 16);
	for (int i = 1; i <= 10; i++) {
		const uint8_t *p = rk[i - 1];
		uint8_t t[4] = {sbox[p[13]] ^ rcon, sbox[p[14]], sbox[p[15]], sbox[p[12]]};
		rcon = (uint8_t)(rcon << 1 ^ (rcon & 0x80 ? 0x1b : 0));
		for (int j = 0; j < 16; j++)
			rk[i][j] = p[j] ^ (j < 4 ? t[j] : rk[i][j - 4]);
	}
}

static void aes_test(void) {
	static const uint8_t key[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	static const uint8_t pt[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
				       0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
	uint8_t rk[11][16], out[16], back[16];
	aes_expand(key, rk);
	uint8x16_t s = vld1q_u8(pt);
	for (int i = 0; i < 9; i++)
		s = vaesmcq_u8(vaeseq_u8(s, vld1q_u8(rk[i])));
	s = veorq_u8(vaeseq_u8(s, vld1q_u8(rk[9])), vld1q_u8(rk[10]));
	vst1q_u8(out, s);
	hex("aes128 encrypt", out, 16);
	/* equivalent inverse cipher: AESD with InvMixColumns'd round keys */
	s = veorq_u8(s, vld1q_u8(rk[10]));
	for (int i = 9; i > 0; i--)
		s = vaesimcq_u8(vaesdq_u8(s, vdupq_n_u8(0))), s = veorq_u8(s, vaesimcq_u8(vld1q_u8(rk[i])));
	s = veorq_u8(vaesdq_u8(s, vdupq_n_u8(0)), vld1q_u8(rk[0]));
	vst1q_u8(back, s);
	printf("aes128 decrypt ok %d\n", memcmp(back, pt, 16) == 0);
}

/* ---- PMULL: carry-less multiply against a bit loop ---- */
static void clmul_ref(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi) {
	*lo = *hi = 0;
	for (int i = 0; i < 64; i++)
		if (b >> i & 1) {
			*lo ^= a << i;
			if (i)
				*hi ^= a >> (64 - i);
		}
}

static void pmull_test(void) {
	uint64_t x = 0x9e3779b97f4a7c15ull, acc = 0;
	int ok = 1;
	for (int i = 0; i < 200; i++) {
		uint64_t a = x, b = x * 0xbf58476d1ce4e5b9ull ^ (uint64_t)i;
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		poly128_t p = vmull_p64((poly64_t)a, (poly64_t)b);
		uint64_t lo, hi, rlo, rhi;
		memcpy(&lo, &p, 8);
		memcpy(&hi, (char *)&p + 8, 8);
		clmul_ref(a, b, &rlo, &rhi);
		ok &= lo == rlo && hi == rhi;
		poly64x2_t va = vcombine_p64(vcreate_p64(b), vcreate_p64(a));
		poly128_t p2 = vmull_high_p64(va, va); /* a clmul a */
		uint64_t lo2;
		memcpy(&lo2, &p2, 8);
		acc ^= lo ^ hi ^ lo2;
	}
	printf("pmull ok %d acc %016llx\n", ok, (unsigned long long)acc);
}

/* ---- SHA-1 and SHA-256 of "abc" (one padded block) ---- */
static void pad_abc(uint32_t w[16]) {
	uint8_t blk[64] = {'a', 'b', 'c', 0x80};
	blk[63] = 24;
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)blk[4 * i] << 24 | blk[4 * i + 1] << 16 | blk[4 * i + 2] << 8 | blk[4 * i + 3];
}

static void sha1_test(void) {
	uint32_t w[16], st[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
	pad_abc(w);
	uint32x4_t abcd = vld1q_u32(st), m[4];
	uint32_t e = st[4];
	for (int i = 0; i < 4; i++)
		m[i] = vld1q_u32(w + 4 * i);
	static const uint32_t k[4] = {0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6};
	for (int r = 0; r < 20; r++) {
		uint32x4_t wk = vaddq_u32(m[r % 4], vdupq_n_u32(k[r / 5]));
		uint32_t e1 = vsha1h_u32(vgetq_lane_u32(abcd, 0));
		if (r < 5)
			abcd = vsha1cq_u32(abcd, e, wk);
		else if (r < 10 || r >= 15)
			abcd = vsha1pq_u32(abcd, e, wk);
		else
			abcd = vsha1mq_u32(abcd, e, wk);
		e = e1;
		m[r % 4] = vsha1su1q_u32(vsha1su0q_u32(m[r % 4], m[(r + 1) % 4], m[(r + 2) % 4]), m[(r + 3) % 4]);
	}
	uint32_t out[5];
	vst1q_u32(out, vaddq_u32(abcd, vld1q_u32(st)));
	out[4] = e + st[4];
	printf("sha1(abc) %08x%08x%08x%08x%08x\n", out[0], out[1], out[2], out[3], out[4]);
}

static const uint32_t K256[64] = {
	0x428a2f98,0x71374491,0xb5c0fbcf,0xe9b5dba5,0x3956c25b,0x59f111f1,0x923f82a4,0xab1c5ed5,
	0xd807aa98,0x12835b01,0x243185be,0x550c7dc3,0x72be5d74,0x80deb1fe,0x9bdc06a7,0xc19bf174,
	0xe49b69c1,0xefbe4786,0x0fc19dc6,0x240ca1cc,0x2de92c6f,0x4a7484aa,0x5cb0a9dc,0x76f988da,
	0x983e5152,0xa831c66d,0xb00327c8,0xbf597fc7,0xc6e00bf3,0xd5a79147,0x06ca6351,0x14292967,
	0x27b70a85,0x2e1b2138,0x4d2c6dfc,0x53380d13,0x650a7354,0x766a0abb,0x81c2c92e,0x92722c85,
	0xa2bfe8a1,0xa81a664b,0xc24b8b70,0xc76c51a3,0xd192e819,0xd6990624,0xf40e3585,0x106aa070,
	0x19a4c116,0x1e376c08,0x2748774c,0x34b0bcb5,0x391c0cb3,0x4ed8aa4a,0x5b9cca4f,0x682e6ff3,
	0x748f82ee,0x78a5636f,0x84c87814,0x8cc70208,0x90befffa,0xa4506ceb,0xbef9a3f7,0xc67178f2,
};

static void sha256_test(void) {
	uint32_t w[16];
	static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	pad_abc(w);
	uint32x4_t s0 = vld1q_u32(h0), s1 = vld1q_u32(h0 + 4), m[4];
	for (int i = 0; i < 4; i++)
		m[i] = vld1q_u32(w + 4 * i);
	for (int r = 0; r < 16; r++) {
		uint32x4_t wk = vaddq_u32(m[r % 4], vld1q_u32(K256 + 4 * r));
		uint32x4_t t = s0;
		s0 = vsha256hq_u32(s0, s1, wk);
		s1 = vsha256h2q_u32(s1, t, wk);
		m[r % 4] = vsha256su1q_u32(vsha256su0q_u32(m[r % 4], m[(r + 1) % 4]), m[(r + 2) % 4], m[(r + 3) % 4]);
	}
	uint32_t out[8];
	vst1q_u32(out, vaddq_u32(s0, vld1q_u32(h0)));
	vst1q_u32(out + 4, vaddq_u32(s1, vld1q_u32(h0 + 4)));
	printf("sha256(abc) ");
	for (int i = 0; i < 8; i++)
		printf("%08x", out[i]);
	printf("\n");
}

/* ---- SHA-512 helpers and SHA-3 ops against plain C ---- */
static uint64_t ror(uint64_t x, int n) { return x >> n | x << (64 - n); }

static void sha512_sha3_test(void) {
	uint64_t x = 0x0123456789abcdefull, acc = 0;
	int ok = 1;
	for (int i = 0; i < 100; i++) {
		uint64_t v[8];
		for (int j = 0; j < 8; j++)
			v[j] = x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64x2_t a = vld1q_u64(v), b = vld1q_u64(v + 2), c = vld1q_u64(v + 4);
		/* SHA512SU0 against its definition */
		uint64x2_t su0 = vsha512su0q_u64(a, b);
		uint64_t r0 = v[0] + (ror(v[1], 1) ^ ror(v[1], 8) ^ v[1] >> 7);
		uint64_t r1 = v[1] + (ror(v[2], 1) ^ ror(v[2], 8) ^ v[2] >> 7);
		ok &= vgetq_lane_u64(su0, 0) == r0 && vgetq_lane_u64(su0, 1) == r1;
		uint64x2_t h = vsha512hq_u64(a, b, c), h2 = vsha512h2q_u64(a, b, c), su1 = vsha512su1q_u64(a, b, c);
		acc ^= vgetq_lane_u64(h, 0) ^ vgetq_lane_u64(h, 1) * 3 ^ vgetq_lane_u64(h2, 0) * 5 ^
		       vgetq_lane_u64(h2, 1) * 7 ^ vgetq_lane_u64(su1, 0) * 11 ^ vgetq_lane_u64(su1, 1) * 13;
		/* SHA3 */
		uint64x2_t e3 = vreinterpretq_u64_u8(veor3q_u8(vreinterpretq_u8_u64(a), vreinterpretq_u8_u64(b), vreinterpretq_u8_u64(c)));
		uint64x2_t bx = vreinterpretq_u64_u8(vbcaxq_u8(vreinterpretq_u8_u64(a), vreinterpretq_u8_u64(b), vreinterpretq_u8_u64(c)));
		uint64x2_t rx = vrax1q_u64(a, b), xr = vxarq_u64(a, b, 23);
		ok &= vgetq_lane_u64(e3, 0) == (v[0] ^ v[2] ^ v[4]) && vgetq_lane_u64(e3, 1) == (v[1] ^ v[3] ^ v[5]);
		ok &= vgetq_lane_u64(bx, 1) == (v[1] ^ (v[3] & ~v[5]));
		ok &= vgetq_lane_u64(rx, 0) == (v[0] ^ ror(v[2], 63)) && vgetq_lane_u64(xr, 1) == ror(v[1] ^ v[3], 23);
	}
	printf("sha512/sha3 ok %d acc %016llx\n", ok, (unsigned long long)acc);
}

/* ---- auto-vectorised loops (-O3) ---- */
static int32_t ia[1024], ib[1024];
static float fa[1024], fb[1024];
static uint8_t ua[4096];

static void vector_test(void) {
	for (int i = 0; i < 1024; i++) {
		ia[i] = i * 7 - 3000;
		ib[i] = (i * 13) % 101 - 50;
		fa[i] = (float)i * 0.25f - 100.0f;
		fb[i] = (float)(i % 17) * 1.5f;
	}
	for (int i = 0; i < 4096; i++)
		ua[i] = (uint8_t)(i * 31 + (i >> 5));
	int64_t dot = 0;
	for (int i = 0; i < 1024; i++)
		dot += (int64_t)ia[i] * ib[i];
	int32_t mx = -2147483647;
	for (int i = 0; i < 1024; i++)
		mx = ia[i] * ib[i] > mx ? ia[i] * ib[i] : mx;
	float fs = 0;
	for (int i = 0; i < 1024; i++)
		fa[i] = fa[i] * fb[i] + 0.5f;
	for (int i = 0; i < 1024; i++)
		fs += fa[i] > 0 ? fa[i] : -fa[i];
	uint32_t bsum = 0;
	for (int i = 0; i < 4096; i++)
		bsum += ua[i] ^ (uint8_t)(ua[i] >> 3);
	printf("vector dot %lld max %d fsum %.3f bsum %u\n", (long long)dot, mx, fs, bsum);
}

/* ---- LSE atomics from threads (armv8.2-a implies LSE) ---- */
static uint64_t counter;
static uint32_t flags;

static void *worker(void *arg) {
	for (int i = 0; i < 10000; i++) {
		__atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_or(&flags, 1u << ((long)arg * 8 + i % 8), __ATOMIC_RELAXED);
	}
	return 0;
}

int main(void) {
	aes_test();
	pmull_test();
	sha1_test();
	sha256_test();
	sha512_sha3_test();
	vector_test();
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], 0, worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], 0);
	printf("atomics counter %llu flags %08x\n", (unsigned long long)counter, flags);
	return 0;
}
