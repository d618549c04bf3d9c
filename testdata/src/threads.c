/* threads: 4 pthreads add to a mutex-protected counter; a token is passed
 * round the threads with a condition variable so that they print in a fixed
 * order; then thread return values via pthread_join, a barrier, atomics,
 * thread-local storage and pthread_once. The output is deterministic. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4
#define ITERS 20000
#define ROUNDS 3

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter;
static int turn; /* whose turn it is to print, protected by mu */
static atomic_long acounter;
static __thread long tls_value = 1000;
static pthread_barrier_t barrier;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_calls;

static void init_once(void)
{
	once_calls++;
}

static void *worker(void *arg)
{
	long id = (long)arg, i, local = 0;
	int r;

	pthread_once(&once, init_once);
	tls_value += id;
	for (i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
		atomic_fetch_add(&acounter, 2);
		local += i % (id + 2);
	}
	pthread_barrier_wait(&barrier);
	/* every thread has finished counting here */
	for (r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&mu);
		while (turn != r * NT + (int)id)
			pthread_cond_wait(&cv, &mu);
		printf("round %d: thread %ld has the token (counter=%ld)\n", r,
		       id, counter);
		fflush(stdout);
		turn++;
		counter += 1000;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	return (void *)(local * 10 + tls_value);
}

int main(void)
{
	pthread_t th[NT];
	void *rets[NT];
	long i;

	pthread_barrier_init(&barrier, NULL, NT);
	for (i = 0; i < NT; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i)) {
			puts("pthread_create failed");
			return 1;
		}
	for (i = 0; i < NT; i++)
		pthread_join(th[i], &rets[i]);
	for (i = 0; i < NT; i++)
		printf("joined thread %ld: returned %ld\n", i, (long)rets[i]);
	printf("counter=%ld (expected %d) atomic=%ld once_calls=%d "
	       "main tls=%ld\n",
	       counter, NT * ITERS + NT * ROUNDS * 1000, (long)acounter,
	       once_calls, tls_value);
	pthread_barrier_destroy(&barrier);
	return 0;
}
