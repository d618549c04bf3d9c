/* ckpt_mt: reverse execution's checkpoint test program. Three threads
 * and main compute without blocking (integer and floating-point state
 * live across slices) while main reads a file given as argv[1] a few
 * bytes at a time, computing between reads (its offset lives across
 * slices); then the results. Arguments: [FILE [ITERATIONS]]. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NT 3

static volatile unsigned long result[NT + 1];
static volatile double fresult[NT + 1];
static long iters = 400000;
static volatile long reads; /* read(2) calls made so far */

static void compute(long id, long n)
{
	long i;
	unsigned long h = 1469598103934665603UL + (unsigned long)id;
	double x = 1.0 + id;

	for (i = 0; i < n; i++) {
		h = (h ^ (unsigned long)i) * 1099511628211UL;
		x = x * 0.999999 + (double)(h & 7) * 0.125;
		if ((i & 4095) == 0)
			result[id] = h; /* memory changes along the way */
	}
	result[id] = h;
	fresult[id] = x;
}

static void *work(void *arg)
{
	compute((long)arg, iters);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NT];
	long i;
	unsigned long sum = 0, nread = 0;
	int fd = -1;

	if (argc > 2)
		iters = atol(argv[2]);
	for (i = 0; i < NT; i++)
		if (pthread_create(&th[i], NULL, work, (void *)i) != 0)
			return 1;
	if (argc > 1 && (fd = open(argv[1], O_RDONLY)) < 0) {
		perror("open");
		return 1;
	}
	for (i = 0; fd >= 0; i++) {
		unsigned char b[7];
		ssize_t n = read(fd, b, sizeof b);

		reads++;
		if (n <= 0)
			break;
		for (ssize_t j = 0; j < n; j++)
			sum = sum * 31 + b[j];
		nread += (unsigned long)n;
		compute(NT, iters / 100); /* between reads: compute */
	}
	if (fd < 0)
		compute(NT, iters);
	for (i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i <= NT; i++)
		printf("%ld: %016lx %.6f\n", i, result[i], fresult[i]);
	printf("read %lu bytes, sum %016lx\n", nread, sum);
	return 0;
}
