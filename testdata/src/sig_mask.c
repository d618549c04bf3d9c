/* sig_mask: signal masks and sigaction semantics in one thread.
 * - sigaction returns the old action (handler, SA_ flags, sa_mask);
 *   sigaction(SIGKILL) fails with EINVAL;
 * - SIGUSR1 blocked with sigprocmask and raised stays pending (sigpending),
 *   sigsuspend with an empty mask runs the handler and returns EINTR, and
 *   the old mask is back afterwards;
 * - a standard signal raised three times while blocked is delivered once; a
 *   real-time signal queued three times with sigqueue is delivered three
 *   times, in order, with its si_value;
 * - inside the handler the signal and sa_mask are blocked; SA_NODEFER lets a
 *   re-raise nest, without it the re-raise runs after the handler returns;
 * - SA_RESETHAND resets the disposition to SIG_DFL on delivery;
 * - setting SIG_IGN discards a pending signal; SIGKILL and SIGSTOP cannot be
 *   blocked.
 * The handlers append to an event log that is printed afterwards. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char events[256];
static volatile int nevents;
static volatile int depth;
static volatile int in_handler_blocked_self, in_handler_blocked_mask;

static void log_event(char c)
{
	if (nevents < (int)sizeof events - 1)
		events[nevents++] = c;
}

static void print_events(const char *what)
{
	events[nevents] = 0;
	printf("%s: %s\n", what, events);
	nevents = 0;
}

static void h_count(int sig)
{
	sigset_t cur;

	log_event('h');
	sigprocmask(SIG_BLOCK, NULL, &cur);
	in_handler_blocked_self = sigismember(&cur, sig);
	in_handler_blocked_mask = sigismember(&cur, SIGUSR2);
}

/* Enters, re-raises itself once, leaves: '[' enter, ']' leave. */
static void h_nest(int sig)
{
	log_event('[');
	if (depth++ == 0)
		raise(sig);
	log_event(']');
}

static void h_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	log_event((char)('0' + si->si_value.sival_int));
	if (si->si_code != SI_QUEUE)
		log_event('?');
}

static void h_plain(int sig)
{
	(void)sig;
	log_event('r');
}

static const char *yesno(int b)
{
	return b ? "yes" : "no";
}

static int blocked(int sig)
{
	sigset_t cur;

	sigprocmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static int pending(int sig)
{
	sigset_t p;

	sigpending(&p);
	return sigismember(&p, sig);
}

int main(void)
{
	struct sigaction sa, old;
	sigset_t set, oldset, empty;
	union sigval v;
	int r, i;

	sigemptyset(&empty);

	/* sigaction returns the old action. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h_count;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	memset(&old, 0, sizeof old);
	sigaction(SIGUSR1, &sa, &old);
	printf("first old action is SIG_DFL: %s\n", yesno(old.sa_handler == SIG_DFL));
	memset(&old, 0, sizeof old);
	sigaction(SIGUSR1, NULL, &old);
	printf("query: handler=%s SA_RESTART=%s SA_SIGINFO=%s mask has SIGUSR2=%s "
	       "mask has SIGINT=%s\n",
	       yesno(old.sa_handler == h_count), yesno(old.sa_flags & SA_RESTART),
	       yesno(old.sa_flags & SA_SIGINFO), yesno(sigismember(&old.sa_mask, SIGUSR2)),
	       yesno(sigismember(&old.sa_mask, SIGINT)));
	r = sigaction(SIGKILL, &sa, NULL);
	printf("sigaction(SIGKILL): %s\n", r == -1 && errno == EINVAL ? "EINVAL" : "accepted");
	r = sigaction(SIGSTOP, &sa, NULL);
	printf("sigaction(SIGSTOP): %s\n", r == -1 && errno == EINVAL ? "EINVAL" : "accepted");

	/* Block, raise, pending, sigsuspend. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &oldset);
	printf("SIGUSR1 blocked before: %s, now: %s\n", yesno(sigismember(&oldset, SIGUSR1)),
	       yesno(blocked(SIGUSR1)));
	raise(SIGUSR1);
	printf("after raise while blocked: handler ran %d times, pending=%s\n", nevents,
	       yesno(pending(SIGUSR1)));
	raise(SIGUSR1);
	raise(SIGUSR1);
	errno = 0;
	r = sigsuspend(&empty);
	printf("sigsuspend returned %d errno EINTR=%s\n", r, yesno(errno == EINTR));
	print_events("events after sigsuspend");
	printf("in handler: SIGUSR1 blocked=%s SIGUSR2 (sa_mask) blocked=%s\n",
	       yesno(in_handler_blocked_self), yesno(in_handler_blocked_mask));
	printf("after sigsuspend: SIGUSR1 blocked=%s pending=%s SIGUSR2 blocked=%s\n",
	       yesno(blocked(SIGUSR1)), yesno(pending(SIGUSR1)), yesno(blocked(SIGUSR2)));
	sigprocmask(SIG_SETMASK, &oldset, NULL);
	printf("after restoring: SIGUSR1 blocked=%s\n", yesno(blocked(SIGUSR1)));
	raise(SIGUSR1);
	print_events("unblocked raise");

	/* Real-time signals queue. */
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = h_rt;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 1; i <= 3; i++) {
		v.sival_int = i;
		sigqueue(getpid(), SIGRTMIN + 1, v);
	}
	printf("rt signal pending=%s\n", yesno(pending(SIGRTMIN + 1)));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	print_events("rt deliveries (si_value)");

	/* Nesting with and without SA_NODEFER. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h_nest;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
	depth = 0;
	raise(SIGUSR2);
	print_events("without SA_NODEFER");
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGUSR2, &sa, NULL);
	depth = 0;
	raise(SIGUSR2);
	print_events("with SA_NODEFER");

	/* SA_RESETHAND. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h_plain;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	memset(&old, 0, sizeof old);
	sigaction(SIGUSR2, NULL, &old);
	printf("SA_RESETHAND before delivery: handler installed=%s\n",
	       yesno(old.sa_handler == h_plain));
	raise(SIGUSR2);
	print_events("SA_RESETHAND delivery");
	memset(&old, 0, sizeof old);
	sigaction(SIGUSR2, NULL, &old);
	printf("SA_RESETHAND after delivery: SIG_DFL=%s\n", yesno(old.sa_handler == SIG_DFL));

	/* SIG_IGN discards a pending signal. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR2);
	printf("SIGUSR2 pending while blocked: %s\n", yesno(pending(SIGUSR2)));
	signal(SIGUSR2, SIG_IGN);
	printf("SIGUSR2 pending after SIG_IGN: %s\n", yesno(pending(SIGUSR2)));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGUSR2);
	printf("ignored SIGUSR2 raised: still alive\n");

	/* SIGKILL and SIGSTOP cannot be blocked. */
	sigfillset(&set);
	sigprocmask(SIG_SETMASK, &set, &oldset);
	printf("after blocking everything: SIGKILL blocked=%s SIGSTOP blocked=%s "
	       "SIGTERM blocked=%s\n",
	       yesno(blocked(SIGKILL)), yesno(blocked(SIGSTOP)), yesno(blocked(SIGTERM)));
	sigprocmask(SIG_SETMASK, &oldset, NULL);
	return 0;
}
