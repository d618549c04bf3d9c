// futex_shared: shared futexes (no FUTEX_PRIVATE_FLAG) in MAP_SHARED memory
// wake across processes and across two mappings of one object, as Linux's
// get_futex_key keys them by object and offset: a futex ping-pong between
// a parent and its fork child, process-shared semaphores and mutexes, and
// a thread waiting on one mapping of a memfd woken through another.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long futex(_Atomic uint32_t *w, int op, uint32_t val) {
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

// wait_for waits until *w == want, sleeping in FUTEX_WAIT.
static void wait_for(_Atomic uint32_t *w, uint32_t want) {
	uint32_t v;
	while ((v = atomic_load(w)) != want)
		futex(w, FUTEX_WAIT, v);
}

static void set_and_wake(_Atomic uint32_t *w, uint32_t v) {
	atomic_store(w, v);
	futex(w, FUTEX_WAKE, 1);
}

struct shared {
	_Atomic uint32_t turn;
	sem_t sem_ab, sem_ba;
	pthread_mutex_t mu;
	long counter;
};

static int pingpong(struct shared *s, int rounds) {
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		for (int i = 0; i < rounds; i++) {
			wait_for(&s->turn, 2 * i + 1);
			set_and_wake(&s->turn, 2 * i + 2);
		}
		_exit(0);
	}
	for (int i = 0; i < rounds; i++) {
		set_and_wake(&s->turn, 2 * i + 1);
		wait_for(&s->turn, 2 * i + 2);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int semaphores(struct shared *s, int rounds) {
	sem_init(&s->sem_ab, 1, 0);
	sem_init(&s->sem_ba, 1, 0);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < rounds; i++) {
			sem_wait(&s->sem_ab);
			sem_post(&s->sem_ba);
		}
		_exit(0);
	}
	for (int i = 0; i < rounds; i++) {
		sem_post(&s->sem_ab);
		sem_wait(&s->sem_ba);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static long mutexes(struct shared *s, int n) {
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&s->mu, &a);
	s->counter = 0;
	pid_t pid = fork();
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&s->mu);
		long c = s->counter;
		if (i % 64 == 0)
			sched_yield(); // hold the lock across a switch now and then
		s->counter = c + 1;
		pthread_mutex_unlock(&s->mu);
	}
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return s->counter;
}

static _Atomic uint32_t *alias_a, *alias_b;

static void *alias_waiter(void *arg) {
	(void)arg;
	wait_for(alias_a, 1); // woken through the other mapping
	set_and_wake(alias_a, 2);
	return NULL;
}

static int aliases(void) {
	int fd = memfd_create("futex", 0);
	if (fd < 0 || ftruncate(fd, 4096) != 0)
		return -1;
	alias_a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	alias_b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (alias_a == MAP_FAILED || alias_b == MAP_FAILED || alias_a == alias_b)
		return -1;
	pthread_t th;
	pthread_create(&th, NULL, alias_waiter, NULL);
	for (int i = 0; i < 20; i++)
		sched_yield(); // let the thread block on alias_a
	set_and_wake(alias_b, 1);
	wait_for(alias_b, 2);
	pthread_join(th, NULL);
	return 0;
}

int main(void) {
	struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return 1;
	printf("futex ping-pong across fork: %s\n", pingpong(s, 500) == 0 ? "ok" : "FAIL");
	printf("process-shared semaphores: %s\n", semaphores(s, 500) == 0 ? "ok" : "FAIL");
	printf("process-shared mutex: counter %ld\n", mutexes(s, 2000));
	printf("two mappings of one memfd: %s\n", aliases() == 0 ? "ok" : "FAIL");
	return 0;
}
