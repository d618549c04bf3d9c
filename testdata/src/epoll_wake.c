// epoll wake-ups from another thread's epoll_ctl: a thread blocked in
// epoll_wait must wake when another thread adds an item that is already
// ready (to an empty set, and to a set whose items stay idle: Go's
// netpoller adding a connected socket, EPOLLOUT|EPOLLET), modifies an item
// so that it becomes ready, or adds an idle item and then makes it ready.
// Each case runs many iterations with the other thread's delay varied
// from 0 to 4 ms, so that its epoll_ctl lands both before and after the
// waiter has gone to sleep. A lost wake-up shows as a wait that lasts
// until its 3 s timeout (half of it counts: a wake-up takes milliseconds),
// whether it then reports the event or not.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ITER 25
#define TIMEOUT_MS 3000

struct job {
	int epfd, fd, op;
	uint32_t mask;
	int delay_ms;
	int write_fd; // >= 0: write a byte here 2 ms after the epoll_ctl
};

static void sleep_ms(int ms) {
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

static long long now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void *actor(void *arg) {
	struct job *j = arg;
	sleep_ms(j->delay_ms);
	struct epoll_event ev = {.events = j->mask, .data.u64 = 0x1234};
	if (epoll_ctl(j->epfd, j->op, j->fd, &ev) != 0) {
		perror("epoll_ctl");
		exit(2);
	}
	if (j->write_fd >= 0) {
		sleep_ms(2);
		if (write(j->write_fd, "x", 1) != 1) {
			perror("write");
			exit(2);
		}
	}
	return NULL;
}

// waitfor runs job j in a new thread while this one waits on its epoll
// set; it returns the events reported (0: timed out).
static uint32_t waitfor(const char *name, int i, struct job *j) {
	pthread_t th;
	pthread_create(&th, NULL, actor, j);
	struct epoll_event ev = {0};
	long long start = now_ms();
	int n = epoll_wait(j->epfd, &ev, 1, TIMEOUT_MS);
	long long took = now_ms() - start;
	pthread_join(th, NULL);
	if (n != 1 || ev.data.u64 != 0x1234 || took >= TIMEOUT_MS / 2) {
		printf("%s: iteration %d (delay %d ms): epoll_wait = %d after %s: lost wake-up\n",
		       name, i, j->delay_ms, n, took >= TIMEOUT_MS / 2 ? "the timeout" : "a wake-up");
		exit(1);
	}
	return ev.events;
}

int main(void) {
	int i;
	uint32_t got;

	// 1. An eventfd with a count added to an empty set.
	got = 0;
	for (i = 0; i < ITER; i++) {
		int ep = epoll_create1(0), efd = eventfd(1, 0);
		struct job j = {ep, efd, EPOLL_CTL_ADD, EPOLLIN, i % 5, -1};
		got |= waitfor("add ready to empty set", i, &j);
		close(efd);
		close(ep);
	}
	printf("add ready to empty set: %d/%d woken, events %#x\n", ITER, ITER, got);

	// 2. A connected socket added edge-triggered for writing to a set that
	// holds an idle eventfd.
	got = 0;
	for (i = 0; i < ITER; i++) {
		int ep = epoll_create1(0), idle = eventfd(0, 0), sv[2];
		socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
		struct epoll_event iev = {.events = EPOLLIN, .data.u64 = 1};
		epoll_ctl(ep, EPOLL_CTL_ADD, idle, &iev);
		struct job j = {ep, sv[0], EPOLL_CTL_ADD, EPOLLOUT | EPOLLET, i % 5, -1};
		got |= waitfor("add writable socket, EPOLLET", i, &j);
		close(sv[0]);
		close(sv[1]);
		close(idle);
		close(ep);
	}
	printf("add writable socket, EPOLLET: %d/%d woken, events %#x\n", ITER, ITER, got);

	// 3. A pipe's write end watched for EPOLLIN (never), modified to
	// EPOLLOUT (ready at once).
	got = 0;
	for (i = 0; i < ITER; i++) {
		int ep = epoll_create1(0), p[2];
		pipe(p);
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x1234};
		epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev);
		struct job j = {ep, p[1], EPOLL_CTL_MOD, EPOLLOUT, i % 5, -1};
		got |= waitfor("modify to ready", i, &j);
		close(p[0]);
		close(p[1]);
		close(ep);
	}
	printf("modify to ready: %d/%d woken, events %#x\n", ITER, ITER, got);

	// 4. An empty pipe added to an empty set, then written to: the waiter
	// must watch the item it did not have when it went to sleep.
	got = 0;
	for (i = 0; i < ITER; i++) {
		int ep = epoll_create1(0), p[2];
		pipe(p);
		struct job j = {ep, p[0], EPOLL_CTL_ADD, EPOLLIN, i % 5, p[1]};
		got |= waitfor("add idle, then ready", i, &j);
		close(p[0]);
		close(p[1]);
		close(ep);
	}
	printf("add idle, then ready: %d/%d woken, events %#x\n", ITER, ITER, got);
	return 0;
}
