/* coremark: a CoreMark-like CPU workload (not the real CoreMark): linked
 * list find/reverse/merge sort, integer matrix multiply, a number-parsing
 * state machine and CRC-16, all fed back into each other. Iterations from
 * argv[1] (default 10). Deterministic output; also usable as a benchmark. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_N 200
#define MAT_N 24
#define STATE_LEN 1024

static uint16_t crcu8(uint8_t data, uint16_t crc)
{
	int i;

	for (i = 0; i < 8; i++) {
		uint8_t x16 = (uint8_t)((data & 1) ^ (crc & 1));

		data >>= 1;
		if (x16 == 1) {
			crc ^= 0x4002;
			crc = (uint16_t)((crc >> 1) | 0x8000);
		} else
			crc >>= 1;
	}
	return crc;
}

static uint16_t crc16(int16_t v, uint16_t crc)
{
	crc = crcu8((uint8_t)v, crc);
	return crcu8((uint8_t)((uint16_t)v >> 8), crc);
}

static uint16_t crc32w(uint32_t v, uint16_t crc)
{
	crc = crc16((int16_t)v, crc);
	return crc16((int16_t)(v >> 16), crc);
}

/* ---- list ---- */
struct node {
	struct node *next;
	int16_t idx;
	int16_t data;
};

static struct node pool[LIST_N];

static struct node *list_build(uint16_t seed)
{
	struct node *head = NULL;
	int i;

	for (i = LIST_N - 1; i >= 0; i--) {
		pool[i].idx = (int16_t)i;
		pool[i].data = (int16_t)((i * 7919 + seed * 31) & 0x7fff);
		pool[i].next = head;
		head = &pool[i];
	}
	return head;
}

static struct node *list_find(struct node *l, int16_t data)
{
	for (; l; l = l->next)
		if ((l->data & 0xff) == data)
			return l;
	return NULL;
}

static struct node *list_reverse(struct node *l)
{
	struct node *prev = NULL, *next;

	while (l) {
		next = l->next;
		l->next = prev;
		prev = l;
		l = next;
	}
	return prev;
}

static int by_data(const struct node *a, const struct node *b)
{
	return a->data != b->data ? a->data - b->data : a->idx - b->idx;
}

static int by_idx(const struct node *a, const struct node *b)
{
	return a->idx - b->idx;
}

static struct node *list_sort(struct node *l,
			      int (*cmp)(const struct node *,
					 const struct node *))
{
	struct node *a, *b, *tail, head;

	if (!l || !l->next)
		return l;
	/* split */
	a = l;
	b = l->next;
	while (b && b->next) {
		a = a->next;
		b = b->next->next;
	}
	b = a->next;
	a->next = NULL;
	a = list_sort(l, cmp);
	b = list_sort(b, cmp);
	tail = &head;
	while (a && b) {
		if (cmp(a, b) <= 0) {
			tail->next = a;
			a = a->next;
		} else {
			tail->next = b;
			b = b->next;
		}
		tail = tail->next;
	}
	tail->next = a ? a : b;
	return head.next;
}

static uint16_t bench_list(uint16_t seed, uint16_t crc)
{
	struct node *l = list_build(seed), *f;
	int i, found = 0, missed = 0;

	for (i = 0; i < 40; i++) {
		f = list_find(l, (int16_t)((i * 13 + seed) & 0xff));
		if (f) {
			found++;
			crc = crc16(f->idx, crc);
		} else
			missed++;
		if (i % 8 == 0)
			l = list_reverse(l);
	}
	l = list_sort(l, by_data);
	for (f = l, i = 0; f && i < 16; f = f->next, i++)
		crc = crc16(f->data, crc);
	l = list_sort(l, by_idx);
	for (f = l, i = 0; f; f = f->next, i++)
		if (f->idx != i)
			crc = crc16(-1, crc); /* would signal a broken sort */
	crc = crc16((int16_t)found, crc);
	return crc16((int16_t)missed, crc);
}

/* ---- matrix ---- */
static int16_t ma[MAT_N][MAT_N], mb[MAT_N][MAT_N];
static int32_t mc[MAT_N][MAT_N];

static uint16_t bench_matrix(uint16_t seed, uint16_t crc)
{
	int i, j, k;
	int32_t sum = 0, maxv = INT32_MIN;

	for (i = 0; i < MAT_N; i++)
		for (j = 0; j < MAT_N; j++) {
			ma[i][j] = (int16_t)(((i + 1) * (j + seed)) % 127 - 50);
			mb[i][j] = (int16_t)(((i * j) ^ seed) % 101 - 40);
		}
	for (i = 0; i < MAT_N; i++)
		for (j = 0; j < MAT_N; j++) {
			int32_t acc = 0;

			for (k = 0; k < MAT_N; k++)
				acc += (int32_t)ma[i][k] * mb[k][j];
			mc[i][j] = acc;
		}
	for (i = 0; i < MAT_N; i++)
		for (j = 0; j < MAT_N; j++) {
			int32_t v = mc[i][j] * 3 + (int32_t)seed;

			v = (v >> 2) & 0xffff; /* bit extraction */
			sum += v;
			if (mc[i][j] > maxv)
				maxv = mc[i][j];
		}
	crc = crc32w((uint32_t)sum, crc);
	return crc32w((uint32_t)maxv, crc);
}

/* ---- state machine ---- */
enum state { S_START, S_INT, S_FLOAT, S_EXP, S_SCI, S_HEX, S_INVALID, NSTATE };

static const char *const tokens[] = { "5012",	  "1.2345",  "-110.700",
				      "0x1F7",	  "+6.5e-3", "T0.3e-1F",
				      "-.1",	  "123e45",  "9x",
				      "0xbad",	  "7.",	     "--1",
				      "1e",	  "3.14159", "0",
				      "-0x10" };

static char sbuf[STATE_LEN];

static enum state classify(const char **p, unsigned *trans)
{
	enum state s = S_START;
	const char *c = *p;

	for (; *c && *c != ','; c++) {
		enum state prev = s;

		switch (s) {
		case S_START:
			if (*c >= '0' && *c <= '9')
				s = (*c == '0' && (c[1] == 'x' || c[1] == 'X')) ?
					    S_HEX :
					    S_INT;
			else if (*c == '+' || *c == '-')
				s = S_INT;
			else if (*c == '.')
				s = S_FLOAT;
			else
				s = S_INVALID;
			if (s == S_HEX)
				c++;
			break;
		case S_INT:
			if (*c == '.')
				s = S_FLOAT;
			else if (*c == 'e' || *c == 'E')
				s = S_EXP;
			else if (*c < '0' || *c > '9')
				s = S_INVALID;
			break;
		case S_FLOAT:
			if (*c == 'e' || *c == 'E')
				s = S_EXP;
			else if (*c < '0' || *c > '9')
				s = S_INVALID;
			break;
		case S_EXP:
			if ((*c >= '0' && *c <= '9') || *c == '+' || *c == '-')
				s = S_SCI;
			else
				s = S_INVALID;
			break;
		case S_SCI:
			if (*c < '0' || *c > '9')
				s = S_INVALID;
			break;
		case S_HEX:
			if (!((*c >= '0' && *c <= '9') ||
			      (*c >= 'a' && *c <= 'f') ||
			      (*c >= 'A' && *c <= 'F')))
				s = S_INVALID;
			break;
		default:
			break;
		}
		if (s != prev)
			trans[s]++;
	}
	*p = *c ? c + 1 : c;
	return s;
}

static uint16_t bench_state(uint16_t seed, uint16_t crc)
{
	unsigned final[NSTATE] = { 0 }, trans[NSTATE] = { 0 };
	const char *p;
	size_t len = 0, t;
	int i;

	for (i = 0; len < STATE_LEN - 16; i++) {
		const char *tok = tokens[(i * 5 + seed) % 16];

		t = strlen(tok);
		memcpy(sbuf + len, tok, t);
		len += t;
		sbuf[len++] = ',';
	}
	sbuf[len] = 0;
	/* corrupt a few bytes depending on the seed */
	for (i = 0; i < 8; i++)
		sbuf[(seed * 17 + i * 97) % len] ^= 1;
	for (p = sbuf; *p;)
		final[classify(&p, trans)]++;
	for (i = 0; i < NSTATE; i++) {
		crc = crc16((int16_t)final[i], crc);
		crc = crc16((int16_t)trans[i], crc);
	}
	return crc;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 10;
	uint16_t crc = 0, clist = 0, cmat = 0, cstate = 0;
	int i;

	for (i = 0; i < iters; i++) {
		uint16_t seed = (uint16_t)(crc ^ (uint16_t)i);

		clist = bench_list(seed, clist);
		cmat = bench_matrix((uint16_t)(seed & 0xff), cmat);
		cstate = bench_state(seed, cstate);
		crc = crc16((int16_t)clist, crc);
		crc = crc16((int16_t)cmat, crc);
		crc = crc16((int16_t)cstate, crc);
		if (i < 3 || i == iters - 1)
			printf("iteration %d: list=%04x matrix=%04x state=%04x "
			       "crc=%04x\n",
			       i, clist, cmat, cstate, crc);
	}
	printf("coremark-like: iterations=%d final crc=0x%04x\n", iters, crc);
	return 0;
}
