/* sig_altstack: unbounded recursion overflows the stack; the SIGSEGV handler
 * (SA_ONSTACK | SA_SIGINFO) runs on an alternate signal stack set up with
 * sigaltstack, checks that sigaltstack(NULL, &old) reports SS_ONSTACK, that
 * its own locals lie inside the alternate stack and that changing the
 * alternate stack while on it fails with EPERM, then recovers with
 * siglongjmp. Done twice. Also: the sigaltstack query outside the handler,
 * a too-small stack (ENOMEM) and SS_DISABLE. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALT_SIZE (256 * 1024)

static sigjmp_buf jb;
static char *alt;
static volatile int h_onstack, h_local_in_alt, h_eperm, h_signo, calls;
static volatile long depth;
static volatile long stop_at = -1; /* never reached: keeps the recursion */

static void handler(int sig, siginfo_t *si, void *uc)
{
	stack_t old, nss;
	char local;

	(void)si;
	(void)uc;
	calls++;
	h_signo = sig;
	memset(&old, 0, sizeof old);
	sigaltstack(NULL, &old);
	h_onstack = (old.ss_flags & SS_ONSTACK) != 0;
	h_local_in_alt = &local >= alt && &local < alt + ALT_SIZE;
	nss.ss_sp = alt;
	nss.ss_size = ALT_SIZE;
	nss.ss_flags = 0;
	h_eperm = sigaltstack(&nss, NULL) == -1 && errno == EPERM;
	siglongjmp(jb, 1);
}

static long recurse(long n)
{
	volatile char buf[512];

	buf[0] = (char)n;
	depth = n;
	if (n == stop_at)
		return 0;
	return recurse(n + 1) + buf[0];
}

int main(void)
{
	struct sigaction sa;
	stack_t ss, old;
	int i, r;

	alt = malloc(ALT_SIZE);
	if (!alt)
		return 1;

	memset(&old, 0, sizeof old);
	sigaltstack(NULL, &old);
	printf("initial: SS_DISABLE=%s SS_ONSTACK=%s\n",
	       old.ss_flags & SS_DISABLE ? "yes" : "no",
	       old.ss_flags & SS_ONSTACK ? "yes" : "no");

	ss.ss_sp = alt;
	ss.ss_size = 1024;
	ss.ss_flags = 0;
	r = sigaltstack(&ss, NULL);
	printf("1024-byte stack: %s\n",
	       r == -1 && errno == ENOMEM ? "ENOMEM" : "accepted");

	ss.ss_size = ALT_SIZE;
	if (sigaltstack(&ss, NULL) != 0) {
		perror("sigaltstack");
		return 1;
	}
	memset(&old, 0, sizeof old);
	sigaltstack(NULL, &old);
	printf("installed: sp matches=%s size matches=%s flags=%d\n",
	       old.ss_sp == alt ? "yes" : "no",
	       old.ss_size == ALT_SIZE ? "yes" : "no", old.ss_flags);

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);

	for (i = 0; i < 2; i++) {
		if (!sigsetjmp(jb, 1)) {
			recurse(0);
			printf("round %d: recursion returned\n", i);
		} else {
			printf("round %d: signo=%d SS_ONSTACK in handler=%s "
			       "handler locals on alt stack=%s "
			       "sigaltstack while on it=%s deep=%s\n",
			       i, h_signo, h_onstack ? "yes" : "no",
			       h_local_in_alt ? "yes" : "no",
			       h_eperm ? "EPERM" : "allowed",
			       depth > 1000 ? "yes" : "no");
		}
	}

	memset(&old, 0, sizeof old);
	sigaltstack(NULL, &old);
	printf("after: SS_ONSTACK=%s\n",
	       old.ss_flags & SS_ONSTACK ? "yes" : "no");

	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	memset(&old, 0, sizeof old);
	sigaltstack(NULL, &old);
	printf("disabled: SS_DISABLE=%s\n",
	       old.ss_flags & SS_DISABLE ? "yes" : "no");
	printf("handler calls: %d\n", calls);
	return 0;
}
