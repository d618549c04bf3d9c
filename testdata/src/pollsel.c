// poll, ppoll, select and pselect6: readiness of pipes, eventfds and
// timerfds, timeouts (elapsed at least the timeout, the time left written
// back), wake-ups from another thread, EINTR after a handler (also with
// SA_RESTART), and the temporary signal masks of ppoll and pselect6.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000LL

static long long now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile sig_atomic_t hits;
static void handler(int sig) {
	(void)sig;
	hits++;
}

static void on(int sig, int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

static timer_t alarm_in(int sig, long long ns) {
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = sig;
	timer_t t;
	timer_create(CLOCK_MONOTONIC, &ev, &t);
	struct itimerspec its = {{0, 0}, {ns / 1000000000LL, ns % 1000000000LL}};
	timer_settime(t, 0, &its, NULL);
	return t;
}

static int pw[2];
static void *writer(void *arg) {
	(void)arg;
	struct timespec ts = {0, 20 * MS};
	nanosleep(&ts, NULL);
	if (write(pw[1], "x", 1) != 1)
		printf("write failed\n");
	return NULL;
}

static int blocked(int sig) {
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	int p[2];
	pipe(p);
	printf("-- poll\n");
	struct pollfd fds[3] = {{p[0], POLLIN, 0}, {-1, POLLIN, 0}, {p[1], POLLOUT, 0}};
	long long t0 = now();
	int r = poll(fds, 1, 20);
	printf("empty pipe: timeout 0 %d after >=20ms %d\n", r, now() - t0 >= 20 * MS);
	r = poll(fds, 3, 0);
	printf("writable end: %d revents %d %d %d\n", r, fds[0].revents, fds[1].revents, fds[2].revents == POLLOUT);
	write(p[1], "ab", 2);
	r = poll(fds, 1, -1);
	printf("data: %d POLLIN %d\n", r, fds[0].revents == POLLIN);
	struct pollfd bad = {1000, POLLIN, 0};
	r = poll(&bad, 1, 0);
	printf("closed fd: %d POLLNVAL %d\n", r, bad.revents == POLLNVAL);
	char buf[8];
	read(p[0], buf, sizeof buf);

	pipe(pw);
	pthread_t th;
	pthread_create(&th, NULL, writer, NULL);
	struct pollfd wp = {pw[0], POLLIN, 0};
	r = poll(&wp, 1, 10000);
	printf("woken by another thread: %d\n", r == 1 && wp.revents == POLLIN);
	pthread_join(th, NULL);
	read(pw[0], buf, 1);
	close(pw[1]);
	r = poll(&wp, 1, 0);
	printf("writer closed: POLLHUP %d\n", r == 1 && (wp.revents & POLLHUP));
	close(pw[0]);

	int efd = eventfd(0, EFD_NONBLOCK);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	struct pollfd many[3] = {{p[0], POLLIN, 0}, {efd, POLLIN, 0}, {tfd, POLLIN, 0}};
	struct itimerspec its = {{0, 0}, {0, 15 * MS}};
	timerfd_settime(tfd, 0, &its, NULL);
	r = poll(many, 3, 10000);
	printf("pipe+eventfd+timerfd: timerfd first %d (%d %d %d)\n", r == 1, many[0].revents, many[1].revents,
	       many[2].revents == POLLIN);
	uint64_t one = 1;
	write(efd, &one, 8);
	r = poll(many, 3, 0);
	printf("eventfd too: %d\n", r);

	on(SIGUSR1, SA_RESTART);
	hits = 0;
	timer_t t = alarm_in(SIGUSR1, 10 * MS);
	r = poll(fds, 1, 5000);
	printf("poll interrupted (SA_RESTART): EINTR %d handler %d\n", r == -1 && errno == EINTR, (int)hits);
	timer_delete(t);

	printf("-- ppoll\n");
	struct timespec ts = {0, 20 * MS};
	t0 = now();
	r = ppoll(fds, 1, &ts, NULL);
	printf("timeout: %d after >=20ms %d\n", r, now() - t0 >= 20 * MS);
	sigset_t usr1, empty;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&empty);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	hits = 0;
	raise(SIGUSR1);
	printf("pending while blocked: handler %d\n", (int)hits);
	ts.tv_sec = 5;
	r = ppoll(fds, 1, &ts, &empty);
	printf("ppoll with empty mask: EINTR %d handler %d still blocked after %d\n", r == -1 && errno == EINTR, (int)hits,
	       blocked(SIGUSR1));
	ts.tv_sec = 0;
	ts.tv_nsec = 1 * MS;
	r = ppoll(fds, 1, &ts, &usr1);
	printf("ppoll keeping it blocked: %d\n", r);

	printf("-- select\n");
	fd_set rs, ws;
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	struct timeval tv = {0, 20000};
	t0 = now();
	r = select(p[0] + 1, &rs, NULL, NULL, &tv);
	printf("timeout: %d after >=20ms %d time left zeroed %d set cleared %d\n", r, now() - t0 >= 20 * MS,
	       tv.tv_sec == 0 && tv.tv_usec == 0, !FD_ISSET(p[0], &rs));
	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_SET(p[0], &rs);
	FD_SET(p[1], &ws);
	int nfds = (p[0] > p[1] ? p[0] : p[1]) + 1;
	r = select(nfds, &rs, &ws, NULL, NULL);
	printf("writable: %d w %d r %d\n", r, FD_ISSET(p[1], &ws), FD_ISSET(p[0], &rs));
	write(p[1], "z", 1);
	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_SET(p[0], &rs);
	FD_SET(p[1], &ws);
	tv.tv_sec = 1;
	tv.tv_usec = 0;
	r = select(nfds, &rs, &ws, NULL, &tv);
	printf("both: %d r %d w %d time left <=1s %d\n", r, FD_ISSET(p[0], &rs), FD_ISSET(p[1], &ws),
	       tv.tv_sec * 1000000 + tv.tv_usec <= 1000000);
	read(p[0], buf, 1);
	fd_set bs;
	FD_ZERO(&bs);
	FD_SET(40, &bs);
	printf("bad fd EBADF: %d\n", select(41, &bs, NULL, NULL, NULL) == -1 && errno == EBADF);
	FD_ZERO(&rs);
	FD_SET(efd, &rs);
	r = select(efd + 1, &rs, NULL, NULL, NULL);
	printf("eventfd readable: %d\n", r == 1 && FD_ISSET(efd, &rs));
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	hits = 0;
	t = alarm_in(SIGUSR1, 10 * MS);
	tv.tv_sec = 5;
	r = select(p[0] + 1, &rs, NULL, NULL, &tv);
	printf("select interrupted (SA_RESTART): EINTR %d handler %d\n", r == -1 && errno == EINTR, (int)hits);
	timer_delete(t);

	printf("-- pselect\n");
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	hits = 0;
	raise(SIGUSR1);
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	ts.tv_sec = 5;
	ts.tv_nsec = 0;
	r = pselect(p[0] + 1, &rs, NULL, NULL, &ts, &empty);
	printf("pselect with empty mask: EINTR %d handler %d still blocked after %d\n", r == -1 && errno == EINTR, (int)hits,
	       blocked(SIGUSR1));
	ts.tv_sec = 0;
	ts.tv_nsec = 20 * MS;
	t0 = now();
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	r = pselect(p[0] + 1, &rs, NULL, NULL, &ts, &usr1);
	printf("pselect timeout: %d after >=20ms %d\n", r, now() - t0 >= 20 * MS);
	printf("done\n");
	return 0;
}
