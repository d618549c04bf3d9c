/* sig_alarm: setitimer(ITIMER_REAL) with a 10 ms interval and a SIGALRM
 * handler that counts ticks while the main thread spins in a loop without
 * system calls; the handler itself stops the timer at the fifth tick, so
 * the count is exact. Then getitimer after stopping, alarm() returning the
 * remaining seconds, alarm(1) + pause(), and SIGALRM's info (si_code). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define TICKS 5

static volatile sig_atomic_t ticks, alarms;
static volatile int last_code;

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	struct itimerval stop;

	(void)sig;
	(void)uc;
	last_code = si->si_code;
	if (++ticks == TICKS) {
		memset(&stop, 0, sizeof stop);
		setitimer(ITIMER_REAL, &stop, NULL);
	}
}

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

int main(void)
{
	struct sigaction sa;
	struct itimerval it, cur;
	unsigned left;
	int r;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);

	memset(&it, 0, sizeof it);
	it.it_interval.tv_usec = 10000;
	it.it_value.tv_usec = 10000;
	if (setitimer(ITIMER_REAL, &it, NULL) != 0) {
		perror("setitimer");
		return 1;
	}
	memset(&cur, 0, sizeof cur);
	getitimer(ITIMER_REAL, &cur);
	printf("timer armed: interval %ld.%06ld, value set: %s\n",
	       (long)cur.it_interval.tv_sec, (long)cur.it_interval.tv_usec,
	       cur.it_value.tv_sec || cur.it_value.tv_usec ? "yes" : "no");
	while (ticks < TICKS)
		;
	printf("ticks: %d\n", (int)ticks);
	printf("si_code is SI_KERNEL: %s\n", last_code == SI_KERNEL ? "yes" : "no");
	usleep(50000); /* five more intervals: the timer must be stopped */
	printf("ticks after 50 ms: %d\n", (int)ticks);
	memset(&cur, 0, sizeof cur);
	getitimer(ITIMER_REAL, &cur);
	printf("timer stopped: %s\n",
	       !cur.it_value.tv_sec && !cur.it_value.tv_usec &&
	       !cur.it_interval.tv_sec && !cur.it_interval.tv_usec ? "yes" : "no");

	sa.sa_handler = on_alarm;
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	left = alarm(5);
	printf("alarm(5) returned %u\n", left);
	left = alarm(0);
	printf("alarm(0) returned %u\n", left);
	alarm(1);
	errno = 0;
	r = pause();
	printf("pause returned %d errno EINTR=%s alarms=%d\n", r,
	       errno == EINTR ? "yes" : "no", (int)alarms);
	return 0;
}
