/* qsort: sorts pseudo-random ints and words with qsort(3), checks the order,
 * uses bsearch, then sorts the lines read from stdin (empty stdin is fine). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NINT 5000

static unsigned lcg_state = 12345;

static unsigned lcg(void)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return (lcg_state >> 8) & 0xffffff;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_str_desc_len(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);

	if (lx != ly)
		return lx < ly ? 1 : -1;
	return strcmp(x, y);
}

static const char *words[] = {
	"pear",	      "apple",	  "fig",      "banana",	   "cherry", "kiwi",
	"date",	      "grape",	  "lemon",    "mango",	   "nectarine",
	"orange",     "papaya",	  "quince",   "raspberry", "strawberry",
	"tangerine",  "ugli",	  "vanilla",  "watermelon", "xigua",
	"yam",	      "zucchini", "Apple",    "Zebra",	   "apples",
	"app",	      "",	  "a",	      "~tilde",	   "0zero",
	"9nine",      "mango",	  "Mango",    "MANGO",	   "m",
};

int main(void)
{
	static int v[NINT];
	char *w[sizeof words / sizeof words[0]];
	size_t nw = sizeof words / sizeof words[0];
	unsigned long sum = 0;
	char line[256], **lines = NULL;
	size_t nlines = 0, cap = 0, i;
	int key, *hit, ok = 1;

	for (i = 0; i < NINT; i++)
		v[i] = (int)lcg() - 0x800000;
	qsort(v, NINT, sizeof v[0], cmp_int);
	for (i = 1; i < NINT; i++)
		if (v[i - 1] > v[i])
			ok = 0;
	for (i = 0; i < NINT; i++)
		sum = sum * 31 + (unsigned)v[i];
	printf("ints: n=%d sorted=%s min=%d max=%d median=%d hash=%lx\n", NINT,
	       ok ? "yes" : "no", v[0], v[NINT - 1], v[NINT / 2], sum);
	for (i = 0; i < 10; i++)
		printf("%d%c", v[i * (NINT / 10)], i == 9 ? '\n' : ' ');
	key = v[1234];
	hit = bsearch(&key, v, NINT, sizeof v[0], cmp_int);
	printf("bsearch(%d): %s\n", key,
	       hit && *hit == key ? "found" : "missing");
	key = 0x7fffffff;
	hit = bsearch(&key, v, NINT, sizeof v[0], cmp_int);
	printf("bsearch(%d): %s\n", key, hit ? "found" : "missing");

	memcpy(w, words, sizeof w);
	qsort(w, nw, sizeof w[0], cmp_str);
	printf("words:");
	for (i = 0; i < nw; i++)
		printf(" [%s]", w[i]);
	printf("\n");
	qsort(w, nw, sizeof w[0], cmp_str_desc_len);
	printf("by length:");
	for (i = 0; i < nw; i++)
		printf(" %s", w[i]);
	printf("\n");

	while (fgets(line, sizeof line, stdin)) {
		if (nlines == cap) {
			cap = cap ? cap * 2 : 8;
			lines = realloc(lines, cap * sizeof *lines);
			if (!lines)
				return 1;
		}
		line[strcspn(line, "\n")] = 0;
		lines[nlines++] = strdup(line);
	}
	qsort(lines, nlines, sizeof *lines, cmp_str);
	printf("stdin: %zu lines\n", nlines);
	for (i = 0; i < nlines; i++) {
		printf("%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	return 0;
}
