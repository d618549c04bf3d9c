// munmap_race: once munmap (or an mprotect taking write away) returns, no
// other thread can store into the page any more: the writer thread,
// storing in a tight loop, faults at its next store (Linux flushes the
// other CPUs' TLBs before munmap returns). Prints how many stores landed
// after the call returned (0 or 1: the one in flight) for both calls.
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

static volatile long *page;
static atomic_long done_stores;
static atomic_int stop, faulted;
static sigjmp_buf env;

static void on_segv(int sig) {
	(void)sig;
	atomic_store(&faulted, 1);
	siglongjmp(env, 1);
}

static void *writer(void *arg) {
	(void)arg;
	if (sigsetjmp(env, 1))
		return NULL;
	for (long i = 1; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		page[i & 511] = i;
		atomic_store_explicit(&done_stores, i, memory_order_relaxed);
	}
	return NULL;
}

static void run(const char *what, int use_mprotect) {
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	atomic_store(&done_stores, 0);
	atomic_store(&stop, 0);
	atomic_store(&faulted, 0);
	pthread_t t;
	pthread_create(&t, NULL, writer, NULL);
	while (atomic_load(&done_stores) < 100000)
		;
	if (use_mprotect)
		mprotect((void *)page, 4096, PROT_READ);
	else
		munmap((void *)page, 4096);
	long at_return = atomic_load(&done_stores);
	struct timespec ts = {0, 20 * 1000 * 1000};
	for (int i = 0; i < 10 && !atomic_load(&faulted); i++)
		nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	long after = atomic_load(&done_stores) - at_return;
	printf("%s: writer faulted %d, stores after return %s\n", what, atomic_load(&faulted),
	       after <= 1 ? "<= 1" : "many");
	if (use_mprotect)
		munmap((void *)page, 4096);
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	run("munmap", 0);
	run("mprotect", 1);
	return 0;
}
