// POSIX timers, CPU-time timers, interval timers, timerfd, signalfd,
// rt_sigtimedwait and nanosleep's EINTR: prints only facts that hold on
// any machine (signal fields, counts with wide bounds, "elapsed at least
// the timeout"), never raw times.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000LL

static long long now(clockid_t c) {
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(long long ns) {
	struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static volatile sig_atomic_t hits, hsig, hcode, hval, hovr;
static void handler(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	hits++;
	hsig = sig;
	hcode = si->si_code;
	hval = si->si_value.sival_int;
	hovr = si->si_overrun;
}

static void on(int sig, int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | flags;
	sigaction(sig, &sa, NULL);
}

static void block(int sig, int how) {
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(how, &s, NULL);
}

static timer_t mktimer(clockid_t c, int notify, int sig, int val) {
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = notify;
	ev.sigev_signo = sig;
	ev.sigev_value.sival_int = val;
	timer_t t;
	if (timer_create(c, &ev, &t) != 0)
		printf("timer_create(%d) failed: %s\n", (int)c, strerror(errno));
	return t;
}

static void arm(timer_t t, int flags, long long value, long long interval) {
	struct itimerspec its = {{interval / 1000000000LL, interval % 1000000000LL},
				 {value / 1000000000LL, value % 1000000000LL}};
	if (timer_settime(t, flags, &its, NULL) != 0)
		printf("timer_settime failed: %s\n", strerror(errno));
}

static long long left(timer_t t, long long *interval) {
	struct itimerspec its;
	timer_gettime(t, &its);
	if (interval)
		*interval = its.it_interval.tv_sec * 1000000000LL + its.it_interval.tv_nsec;
	return its.it_value.tv_sec * 1000000000LL + its.it_value.tv_nsec;
}

static void wait_hits(int n) {
	sigset_t none;
	sigemptyset(&none);
	while (hits < n)
		sigsuspend(&none);
}

static volatile int spin_sink;
static void spin_until(volatile sig_atomic_t *v, int n) {
	while (*v < n)
		spin_sink++;
}

static void posix_timers(void) {
	printf("-- posix timers\n");
	on(SIGRTMIN, 0);
	timer_t t = mktimer(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN, 42);
	long long t0 = now(CLOCK_MONOTONIC);
	hits = 0;
	arm(t, 0, 20 * MS, 0);
	long long l = left(t, NULL);
	printf("armed: left in (0,20ms]: %d\n", l > 0 && l <= 20 * MS);
	wait_hits(1);
	printf("fired after >=20ms: %d\n", now(CLOCK_MONOTONIC) - t0 >= 20 * MS);
	printf("signo ok %d code SI_TIMER %d value %d overrun %d\n", hsig == SIGRTMIN, hcode == SI_TIMER, (int)hval, (int)hovr);
	printf("one-shot disarmed: %d\n", left(t, NULL) == 0);

	// Periodic while the signal is blocked: expirations become overruns.
	block(SIGRTMIN, SIG_BLOCK);
	arm(t, 0, 5 * MS, 5 * MS);
	long long iv;
	left(t, &iv);
	printf("interval 5ms: %d\n", iv == 5 * MS);
	sleep_ns(60 * MS);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN);
	siginfo_t si;
	int r = sigwaitinfo(&s, &si);
	printf("sigwaitinfo SIGRTMIN %d code SI_TIMER %d value %d overrun>=5 %d getoverrun matches %d\n",
	       r == SIGRTMIN, si.si_code == SI_TIMER, si.si_value.sival_int, si.si_overrun >= 5,
	       timer_getoverrun(t) == si.si_overrun);
	arm(t, 0, 0, 0);
	printf("disarmed: %d\n", left(t, NULL) == 0);
	struct timespec zero = {0, 0};
	sigtimedwait(&s, &si, &zero); // one may have come before the disarm
	sleep_ns(20 * MS);
	printf("nothing queued after disarm: %d\n", sigtimedwait(&s, &si, &zero) == -1 && errno == EAGAIN);
	printf("delete %d\n", timer_delete(t));
	struct itimerspec its;
	printf("gettime after delete EINVAL: %d\n", timer_gettime(t, &its) == -1 && errno == EINVAL);
	block(SIGRTMIN, SIG_UNBLOCK);

	// Absolute CLOCK_REALTIME deadline.
	block(SIGRTMIN + 1, SIG_BLOCK);
	t = mktimer(CLOCK_REALTIME, SIGEV_SIGNAL, SIGRTMIN + 1, 7);
	long long rt0 = now(CLOCK_REALTIME), m0 = now(CLOCK_MONOTONIC);
	arm(t, TIMER_ABSTIME, rt0 + 30 * MS, 0);
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 1);
	struct timespec five = {5, 0};
	r = sigtimedwait(&s, &si, &five);
	printf("abstime realtime: sig %d value %d after >=30ms %d\n", r == SIGRTMIN + 1, si.si_value.sival_int,
	       now(CLOCK_MONOTONIC) - m0 >= 29 * MS);
	// An absolute time in the past fires at once.
	arm(t, TIMER_ABSTIME, 1, 0);
	r = sigtimedwait(&s, &si, &five);
	printf("abstime in the past fires: %d\n", r == SIGRTMIN + 1);
	timer_delete(t);

	// SIGEV_NONE: runs, never signals.
	t = mktimer(CLOCK_BOOTTIME, SIGEV_NONE, 0, 0);
	arm(t, 0, 1000 * MS, 0);
	long long a = left(t, NULL);
	sleep_ns(10 * MS);
	long long b = left(t, NULL);
	printf("sigev_none counts down: %d\n", a > b && b > 0 && a <= 1000 * MS);
	arm(t, 0, 1 * MS, 0);
	sleep_ns(20 * MS);
	printf("sigev_none expired: %d\n", left(t, NULL) == 0);
	timer_delete(t);

	// A null sigevent is SIGEV_SIGNAL SIGALRM with the timer id as value.
	on(SIGALRM, 0);
	timer_t t2;
	timer_create(CLOCK_MONOTONIC, NULL, &t2);
	hits = 0;
	arm(t2, 0, 5 * MS, 0);
	wait_hits(1);
	printf("null sigevent: SIGALRM %d SI_TIMER %d\n", hsig == SIGALRM, hcode == SI_TIMER);
	timer_delete(t2);
	printf("CLOCK_MONOTONIC_RAW EOPNOTSUPP: %d\n", timer_create(CLOCK_MONOTONIC_RAW, NULL, &t2) == -1 && errno == EOPNOTSUPP);
	printf("bad clock EINVAL: %d\n", timer_create(99, NULL, &t2) == -1 && errno == EINVAL);
}

static volatile sig_atomic_t thr_ok;
static void *thread_timer(void *arg) {
	(void)arg;
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev.sigev_value.sival_int = 9;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	timer_t t;
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0) {
		printf("thread timer_create failed\n");
		return NULL;
	}
	arm(t, 0, 10 * MS, 0);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	siginfo_t si;
	int r = sigwaitinfo(&s, &si);
	thr_ok = r == SIGUSR1 && si.si_code == SI_TIMER && si.si_value.sival_int == 9;
	timer_delete(t);

	// This thread's CPU clock.
	on(SIGUSR2, 0);
	hits = 0;
	ev.sigev_signo = SIGUSR2;
	timer_t tc;
	timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &tc);
	long long c0 = now(CLOCK_THREAD_CPUTIME_ID);
	arm(tc, 0, 20 * MS, 0);
	spin_until(&hits, 1);
	printf("thread cpu timer: SIGUSR2 %d after >=20ms of thread cpu %d\n", hsig == SIGUSR2,
	       now(CLOCK_THREAD_CPUTIME_ID) - c0 >= 20 * MS);
	timer_delete(tc);
	return NULL;
}

static void thread_timers(void) {
	printf("-- thread timers\n");
	block(SIGUSR1, SIG_BLOCK);
	pthread_t th;
	pthread_create(&th, NULL, thread_timer, NULL);
	pthread_join(th, NULL);
	sigset_t p;
	sigpending(&p);
	printf("thread-directed timer signal taken by its thread: %d; not pending in main: %d\n", (int)thr_ok,
	       !sigismember(&p, SIGUSR1));
	block(SIGUSR1, SIG_UNBLOCK);
}

static void cpu_timers(void) {
	printf("-- cpu timers\n");
	on(SIGRTMIN + 2, 0);
	timer_t t = mktimer(CLOCK_PROCESS_CPUTIME_ID, SIGEV_SIGNAL, SIGRTMIN + 2, 5);
	hits = 0;
	long long c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	arm(t, 0, 30 * MS, 0);
	long long l = left(t, NULL);
	printf("process cpu timer armed: %d\n", l > 0 && l <= 30 * MS);
	spin_until(&hits, 1);
	printf("process cpu timer: value %d SI_TIMER %d after >=30ms cpu %d\n", (int)hval, hcode == SI_TIMER,
	       now(CLOCK_PROCESS_CPUTIME_ID) - c0 >= 30 * MS);
	// Sleeping uses no CPU time: a 10ms CPU timer does not fire in 50ms of sleep.
	hits = 0;
	arm(t, 0, 10 * MS, 0);
	sleep_ns(50 * MS);
	printf("cpu timer quiet while sleeping: %d\n", hits == 0);
	arm(t, 0, 0, 0);
	timer_delete(t);

	static const struct { int which, sig; const char *name; } its[] = {
		{ITIMER_VIRTUAL, SIGVTALRM, "ITIMER_VIRTUAL"}, {ITIMER_PROF, SIGPROF, "ITIMER_PROF"}};
	for (int i = 0; i < 2; i++) {
		on(its[i].sig, 0);
		hits = 0;
		struct itimerval v = {{0, 10000}, {0, 10000}}, g;
		long long c1 = now(CLOCK_PROCESS_CPUTIME_ID);
		setitimer(its[i].which, &v, NULL);
		spin_until(&hits, 3);
		long long used = now(CLOCK_PROCESS_CPUTIME_ID) - c1;
		getitimer(its[i].which, &g);
		printf("%s: 3 signals %d, sig ok %d, >=15ms cpu %d, interval %ld, value in (0,10ms] %d\n", its[i].name,
		       hits >= 3, hsig == its[i].sig, used >= 15 * MS, (long)g.it_interval.tv_usec,
		       g.it_value.tv_usec > 0 && g.it_value.tv_usec <= 10000);
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(its[i].which, &off, &g);
		getitimer(its[i].which, &g);
		printf("%s disarmed: %d\n", its[i].name, g.it_value.tv_usec == 0 && g.it_value.tv_sec == 0);
	}
}

static void sigwaits(void) {
	printf("-- sigtimedwait\n");
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 3);
	block(SIGRTMIN + 3, SIG_BLOCK);
	siginfo_t si;
	struct timespec zero = {0, 0}, ts = {0, 20 * MS};
	printf("zero timeout EAGAIN: %d\n", sigtimedwait(&s, &si, &zero) == -1 && errno == EAGAIN);
	long long m0 = now(CLOCK_MONOTONIC);
	int r = sigtimedwait(&s, &si, &ts);
	printf("20ms timeout EAGAIN %d after >=20ms %d\n", r == -1 && errno == EAGAIN, now(CLOCK_MONOTONIC) - m0 >= 20 * MS);
	union sigval v = {.sival_int = 77};
	sigqueue(getpid(), SIGRTMIN + 3, v);
	sigqueue(getpid(), SIGRTMIN + 3, (union sigval){.sival_int = 78});
	r = sigwaitinfo(&s, &si);
	printf("sigqueue: sig %d SI_QUEUE %d value %d pid ok %d\n", r == SIGRTMIN + 3, si.si_code == SI_QUEUE,
	       si.si_value.sival_int, si.si_pid == getpid());
	r = sigtimedwait(&s, &si, &zero);
	printf("second instance value %d\n", r == SIGRTMIN + 3 ? si.si_value.sival_int : -1);
	// Another (handled, unblocked) signal interrupts the wait with EINTR.
	on(SIGALRM, 0);
	hits = 0;
	timer_t t = mktimer(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGALRM, 0);
	arm(t, 0, 10 * MS, 0);
	struct timespec five = {5, 0};
	r = sigtimedwait(&s, &si, &five);
	printf("interrupted: EINTR %d handler ran %d\n", r == -1 && errno == EINTR, hits == 1);
	timer_delete(t);
	block(SIGRTMIN + 3, SIG_UNBLOCK);
}

static void nanosleeps(void) {
	printf("-- nanosleep\n");
	on(SIGALRM, SA_RESTART);
	hits = 0;
	timer_t t = mktimer(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGALRM, 0);
	arm(t, 0, 20 * MS, 0);
	struct timespec req = {1, 0}, rem = {0, 0};
	int r = nanosleep(&req, &rem);
	long long rl = rem.tv_sec * 1000000000LL + rem.tv_nsec;
	printf("nanosleep EINTR despite SA_RESTART %d, rem in (0,980ms] %d\n", r == -1 && errno == EINTR,
	       rl > 0 && rl < 1000 * MS);
	arm(t, 0, 20 * MS, 0);
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
	rl = rem.tv_sec * 1000000000LL + rem.tv_nsec;
	printf("clock_nanosleep EINTR %d rem ok %d\n", r == EINTR, rl > 0 && rl < 1000 * MS);
	arm(t, 0, 20 * MS, 0);
	struct timespec abs;
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_sec += 1;
	r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
	printf("abstime clock_nanosleep EINTR %d\n", r == EINTR);
	long long m0 = now(CLOCK_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_nsec += 15 * MS;
	if (abs.tv_nsec >= 1000000000L) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000L;
	}
	r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
	printf("abstime sleep %d >=15ms %d\n", r, now(CLOCK_MONOTONIC) - m0 >= 15 * MS);
	printf("thread cpu clock_nanosleep EINVAL: %d\n", clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL) == EINVAL);
	timer_delete(t);
}

static void timerfds(void) {
	printf("-- timerfd\n");
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	uint64_t n = 0;
	printf("unarmed read EAGAIN: %d\n", read(fd, &n, 8) == -1 && errno == EAGAIN);
	printf("short read EINVAL: %d\n", read(fd, &n, 4) == -1 && errno == EINVAL);
	struct pollfd p = {fd, POLLIN, 0};
	ssize_t r;
	printf("unarmed poll 0: %d\n", poll(&p, 1, 0) == 0);
	struct itimerspec its = {{0, 10 * MS}, {0, 10 * MS}}, g;
	timerfd_settime(fd, 0, &its, NULL);
	timerfd_gettime(fd, &g);
	printf("gettime interval 10ms %d value in (0,10ms] %d\n", g.it_interval.tv_nsec == 10 * MS,
	       g.it_value.tv_sec == 0 && g.it_value.tv_nsec > 0 && g.it_value.tv_nsec <= 10 * MS);
	r = poll(&p, 1, 5000);
	printf("poll ready: %d revents POLLIN %d\n", r == 1, p.revents == POLLIN);
	sleep_ns(50 * MS);
	n = 0;
	r = read(fd, &n, 8);
	printf("read 8 %d expirations>=3 %d\n", r == 8, n >= 3);
	struct itimerspec off = {{0, 0}, {0, 0}};
	timerfd_settime(fd, 0, &off, &g);
	printf("old value interval 10ms: %d\n", g.it_interval.tv_nsec == 10 * MS);
	struct itimerspec once = {{0, 0}, {0, 1 * MS}};
	timerfd_settime(fd, 0, &once, NULL);
	sleep_ns(20 * MS);
	r = read(fd, &n, 8);
	printf("one-shot read %d count %llu\n", r == 8, (unsigned long long)n);
	printf("drained: %d\n", read(fd, &n, 8) == -1 && errno == EAGAIN);
	timerfd_gettime(fd, &g);
	printf("disarmed: %d\n", g.it_value.tv_sec == 0 && g.it_value.tv_nsec == 0 && g.it_interval.tv_nsec == 0);
	close(fd);

	// Blocking read of an absolute CLOCK_REALTIME one-shot.
	fd = timerfd_create(CLOCK_REALTIME, 0);
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	long long m0 = now(CLOCK_MONOTONIC);
	long long abs = rt.tv_sec * 1000000000LL + rt.tv_nsec + 25 * MS;
	struct itimerspec a = {{0, 0}, {abs / 1000000000LL, abs % 1000000000LL}};
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &a, NULL);
	n = 0;
	r = read(fd, &n, 8);
	printf("abstime blocking read %d count %llu after >=25ms %d\n", r == 8, (unsigned long long)n,
	       now(CLOCK_MONOTONIC) - m0 >= 24 * MS);
	close(fd);
	printf("bad clock EINVAL: %d\n", timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0) == -1 && errno == EINVAL);
	printf("settime on a pipe EINVAL: %d\n", timerfd_settime(0, 0, &its, NULL) == -1 && (errno == EINVAL || errno == EBADF));
}

static void signalfds(void) {
	printf("-- signalfd\n");
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	sigaddset(&s, SIGRTMIN + 4);
	sigprocmask(SIG_BLOCK, &s, NULL);
	int fd = signalfd(-1, &s, SFD_NONBLOCK);
	struct signalfd_siginfo ssi[2];
	printf("empty read EAGAIN: %d\n", read(fd, ssi, sizeof ssi[0]) == -1 && errno == EAGAIN);
	printf("small read EINVAL: %d\n", read(fd, ssi, 100) == -1 && errno == EINVAL);
	struct pollfd p = {fd, POLLIN, 0};
	printf("poll 0: %d\n", poll(&p, 1, 0) == 0);
	kill(getpid(), SIGUSR2);
	ssize_t r = poll(&p, 1, 0);
	printf("poll after kill: %d POLLIN %d\n", r == 1, p.revents == POLLIN);
	r = read(fd, ssi, sizeof ssi);
	printf("read %d bytes: signo ok %d SI_USER %d pid ok %d\n", (int)r, ssi[0].ssi_signo == SIGUSR2,
	       ssi[0].ssi_code == SI_USER, ssi[0].ssi_pid == (uint32_t)getpid());
	sigset_t pend;
	sigpending(&pend);
	printf("dequeued: %d\n", !sigismember(&pend, SIGUSR2));
	timer_t t = mktimer(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN + 4, 123);
	arm(t, 0, 10 * MS, 0);
	printf("poll waits for the timer signal: %d\n", poll(&p, 1, 5000) == 1);
	r = read(fd, ssi, sizeof ssi);
	printf("timer via signalfd: %d bytes SI_TIMER %d int %d ptr %llu overrun %u\n", (int)r, ssi[0].ssi_code == SI_TIMER,
	       ssi[0].ssi_int, (unsigned long long)ssi[0].ssi_ptr, ssi[0].ssi_overrun);
	timer_delete(t);
	// Two queued, one read of two records.
	kill(getpid(), SIGUSR2);
	sigqueue(getpid(), SIGRTMIN + 4, (union sigval){.sival_int = 5});
	r = read(fd, ssi, sizeof ssi);
	printf("two records: %d first SIGUSR2 %d second rt %d value %d\n", (int)r, ssi[0].ssi_signo == SIGUSR2,
	       ssi[1].ssi_signo == (uint32_t)(SIGRTMIN + 4), ssi[1].ssi_int);
	// Changing the mask of an existing signalfd.
	sigset_t only;
	sigemptyset(&only);
	sigaddset(&only, SIGRTMIN + 4);
	printf("remask returns fd: %d\n", signalfd(fd, &only, 0) == fd);
	kill(getpid(), SIGUSR2);
	printf("SIGUSR2 no longer in the mask: %d\n", read(fd, ssi, sizeof ssi[0]) == -1 && errno == EAGAIN);
	struct timespec zero = {0, 0};
	siginfo_t si;
	printf("still pending for sigtimedwait: %d\n", sigtimedwait(&s, &si, &zero) == SIGUSR2);
	close(fd);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	posix_timers();
	thread_timers();
	cpu_timers();
	sigwaits();
	nanosleeps();
	timerfds();
	signalfds();
	printf("done\n");
	return 0;
}
