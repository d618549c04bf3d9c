/* sig_tgkill: thread-directed and process-directed signals.
 * 1. Thread A sends tgkill(SIGUSR2) to thread B, which has SIGUSR2 blocked
 *    and waits in sigsuspend with an empty mask: the handler runs in B
 *    (gettid() == B's tid), with si_code SI_TKILL and si_pid == getpid().
 * 2. Thread A sends tgkill(SIGUSR2) to thread C, which spins in a loop
 *    without system calls until its handler has run.
 * 3. kill(getpid(), SIGUSR1) while every thread but D blocks SIGUSR1: the
 *    process-directed signal is delivered to D (si_code SI_USER).
 * Thread ids are compared, never printed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pid_t pid;
static volatile pid_t handler_tid, target_tid, c_tid, d_tid;
static volatile int handler_code, handler_pid_ok, handled;
static pthread_barrier_t barrier;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	handler_tid = my_tid();
	handler_code = si->si_code;
	handler_pid_ok = si->si_pid == pid;
	handled++;
}

static void block(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Thread B: blocks SIGUSR2, waits for it in sigsuspend (SIGUSR1 stays
 * blocked, as inherited from the main thread). */
static void *thread_b(void *arg)
{
	sigset_t mask;

	(void)arg;
	block(SIGUSR2);
	target_tid = my_tid();
	pthread_barrier_wait(&barrier);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	while (!handled)
		sigsuspend(&mask);
	return NULL;
}

/* Thread C: spins until the handler has run in it. */
static void *thread_c(void *arg)
{
	(void)arg;
	c_tid = my_tid();
	pthread_barrier_wait(&barrier);
	while (!handled)
		;
	return NULL;
}

/* Thread D: the only one with SIGUSR1 unblocked. */
static void *thread_d(void *arg)
{
	sigset_t mask;

	(void)arg;
	d_tid = my_tid();
	pthread_barrier_wait(&barrier);
	sigemptyset(&mask);
	while (!handled)
		sigsuspend(&mask);
	return NULL;
}

static const char *yesno(int b)
{
	return b ? "yes" : "no";
}

static const char *code_name(int c)
{
	return c == SI_TKILL ? "SI_TKILL" : c == SI_USER ? "SI_USER" : "other";
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;

	pid = getpid();
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	/* The main thread ("A") blocks SIGUSR1 for the process-directed case;
	 * threads inherit the mask. */
	block(SIGUSR1);

	/* 1: blocked target in sigsuspend. */
	pthread_barrier_init(&barrier, NULL, 2);
	handled = 0;
	pthread_create(&t, NULL, thread_b, NULL);
	pthread_barrier_wait(&barrier);
	syscall(SYS_tgkill, pid, target_tid, SIGUSR2);
	pthread_join(t, NULL);
	printf("tgkill to a thread in sigsuspend: handled=%d tid matches=%s "
	       "not the sender=%s code=%s si_pid ok=%s\n",
	       handled, yesno(handler_tid == target_tid), yesno(handler_tid != my_tid()),
	       code_name(handler_code), yesno(handler_pid_ok));

	/* 2: spinning target. */
	handled = 0;
	handler_tid = 0;
	pthread_create(&t, NULL, thread_c, NULL);
	pthread_barrier_wait(&barrier);
	syscall(SYS_tgkill, pid, c_tid, SIGUSR2);
	pthread_join(t, NULL);
	printf("tgkill to a spinning thread: handled=%d tid matches=%s code=%s\n",
	       handled, yesno(handler_tid == c_tid), code_name(handler_code));

	/* 3: process-directed, only D can take it. */
	handled = 0;
	handler_tid = 0;
	pthread_create(&t, NULL, thread_d, NULL);
	pthread_barrier_wait(&barrier);
	kill(pid, SIGUSR1);
	pthread_join(t, NULL);
	printf("kill to the process: handled=%d delivered to the one thread "
	       "that does not block it=%s code=%s si_pid ok=%s\n",
	       handled, yesno(handler_tid == d_tid), code_name(handler_code),
	       yesno(handler_pid_ok));
	return 0;
}
