// Which CPU each thread runs on, by every route a program has: the getcpu
// system call, glibc's sched_getcpu (the vDSO's getcpu on x86-64, the
// system call on arm64 when rseq is not registered) and, on x86-64, RDPID
// and RDTSCP's TSC_AUX (node << 12 | cpu). uvm runs each thread on one
// virtual CPU, a function of its thread id; cmd/uvm's TestGetcpu checks
// the routes agree. Not in MANIFEST: natively the numbers are the
// scheduler's.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *report(void *arg)
{
	(void)arg;
	unsigned cpu = ~0u, node = ~0u;
	long r = syscall(SYS_getcpu, &cpu, &node, NULL);
	int g = sched_getcpu();
	pthread_mutex_lock(&mu);
	printf("tid %ld: syscall %ld cpu %u node %u, sched_getcpu %d", (long)syscall(SYS_gettid), r, cpu, node, g);
#ifdef __x86_64__
	unsigned long pid;
	unsigned lo, hi, aux;
	__asm__ volatile("rdpid %0" : "=r"(pid));
	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	printf(", rdpid %lu, tsc_aux %u", pid, aux);
#endif
	printf("\n");
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void)
{
	pthread_t th[6];
	report(NULL);
	for (int i = 0; i < 6; i++) {
		pthread_create(&th[i], NULL, report, NULL);
		pthread_join(th[i], NULL);
	}
	return 0;
}
