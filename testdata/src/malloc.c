/* malloc: malloc/calloc/realloc/free churn over many sizes with a running
 * checksum of the data, plus large blocks that glibc serves with mmap (and
 * realloc of them, which uses mremap) and a brk-growing phase. Addresses
 * are never printed; only data-derived values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 512

static uint64_t rng = 88172645463325252ull;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

/* For the large blocks only every 64th byte (and the last one) is written
 * and hashed: that still touches every page. */
static void fill_sparse(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i += 64)
		p[i] = (unsigned char)(seed + i / 64 * 7);
	p[n - 1] = (unsigned char)seed;
}

static uint64_t hash_sparse(uint64_t h, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += 64)
		h = (h ^ p[i]) * 1099511628211ull;
	return (h ^ p[n - 1]) * 1099511628211ull;
}

int main(void)
{
	static unsigned char *slot[SLOTS];
	static size_t len[SLOTS];
	uint64_t h = 14695981039346656037ull;
	size_t live = 0, peak = 0, i, j, k;
	unsigned long ops = 0, bad = 0;
	int round;

	/* Phase 1: random small/medium churn. */
	for (round = 0; round < 6000; round++) {
		uint64_t r = xorshift();
		size_t s = r % SLOTS;
		size_t n;

		switch ((r >> 16) % 4) {
		case 0:
		case 1:
			if (slot[s]) {
				h = hash_bytes(h, slot[s], len[s]);
				live -= len[s];
				free(slot[s]);
			}
			n = (r >> 24) % ((r >> 40) % 16 == 0 ? 4096 : 200) + 1;
			slot[s] = malloc(n);
			if (!slot[s])
				return 1;
			fill(slot[s], n, (unsigned)r);
			len[s] = n;
			live += n;
			break;
		case 2:
			if (slot[s]) {
				n = (r >> 24) % 4000 + 1;
				k = n < len[s] ? n : len[s];
				h = hash_bytes(h, slot[s], k);
				slot[s] = realloc(slot[s], n);
				if (!slot[s])
					return 1;
				/* the prefix must survive the move */
				for (j = 0; j < k; j++)
					if (slot[s][j] !=
					    (unsigned char)(slot[s][0] + j * 7))
						bad++;
				/* extend the pattern over the grown part */
				for (j = k; j < n; j++)
					slot[s][j] =
						(unsigned char)(slot[s][0] + j * 7);
				live = live - len[s] + n;
				len[s] = n;
			}
			break;
		case 3:
			if (slot[s]) {
				h = hash_bytes(h, slot[s], len[s]);
				live -= len[s];
				free(slot[s]);
				slot[s] = NULL;
				len[s] = 0;
			} else {
				n = (r >> 24) % 300 + 1;
				slot[s] = calloc(n, 1);
				if (!slot[s])
					return 1;
				for (j = 0; j < n; j++)
					if (slot[s][j])
						bad++;
				fill(slot[s], n, (unsigned)(r >> 3));
				len[s] = n;
				live += n;
			}
			break;
		}
		if (live > peak)
			peak = live;
		ops++;
	}
	for (i = 0; i < SLOTS; i++) {
		if (slot[i])
			h = hash_bytes(h, slot[i], len[i]);
		free(slot[i]);
		slot[i] = NULL;
	}
	printf("churn: ops=%lu peak_live=%zu bad=%lu hash=%016llx\n", ops, peak,
	       bad, (unsigned long long)h);

	/* Phase 2: large blocks (mmap threshold is 128 KiB by default). */
	for (i = 0; i < 6; i++) {
		size_t n = ((size_t)1 << (17 + i)) + 12345;
		unsigned char *p = malloc(n);
		uint64_t hh = 14695981039346656037ull;

		if (!p)
			return 1;
		fill_sparse(p, n, (unsigned)i);
		p = realloc(p, n * 2);
		if (!p)
			return 1;
		fill_sparse(p + n, n, (unsigned)i + 1);
		hh = hash_sparse(hh, p, 2 * n);
		p = realloc(p, n / 3);
		if (!p)
			return 1;
		hh = hash_sparse(hh, p, n / 3);
		printf("large[%zu]: size=%zu hash=%016llx\n", i, n,
		       (unsigned long long)hh);
		free(p);
	}

	/* Phase 3: a linked list of 30000 nodes (brk growth), then free. */
	{
		struct node {
			struct node *next;
			unsigned long v;
		} *head = NULL, *nd;
		unsigned long sum = 0, cnt = 0;

		for (i = 0; i < 30000; i++) {
			nd = malloc(sizeof *nd);
			if (!nd)
				return 1;
			nd->v = i * i % 1000003;
			nd->next = head;
			head = nd;
		}
		while (head) {
			nd = head;
			head = head->next;
			sum += nd->v;
			cnt++;
			free(nd);
		}
		printf("list: nodes=%lu sum=%lu\n", cnt, sum);
	}

	/* Phase 4: aligned allocation. */
	{
		void *a = aligned_alloc(4096, 10000), *b = NULL;
		int rc = posix_memalign(&b, 256, 1000);

		printf("aligned_alloc 4096: %s, posix_memalign 256: rc=%d %s\n",
		       a && ((uintptr_t)a & 4095) == 0 ? "aligned" : "BAD", rc,
		       b && ((uintptr_t)b & 255) == 0 ? "aligned" : "BAD");
		free(a);
		free(b);
	}
	return 0;
}
