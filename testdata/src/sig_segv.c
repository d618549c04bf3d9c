/* sig_segv: an SA_SIGINFO handler for SIGSEGV that records si_signo, si_code
 * and si_addr and leaves with siglongjmp. Faults: a store and a load at the
 * unmapped address 0x10 (SEGV_MAPERR, si_addr 0x10), a store to a read-only
 * mmap page and a load from a PROT_NONE page (SEGV_ACCERR, si_addr = the
 * faulting byte), a load from a page after munmap (SEGV_MAPERR), and a call
 * into a non-executable page (SEGV_ACCERR, si_addr = the page). Also checks
 * that the handler runs with SIGSEGV blocked and that siglongjmp restores the
 * mask. Only relations between addresses are printed, never addresses. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf jb;
static volatile int got_signo, got_code, blocked_in_handler, calls;
static void *volatile got_addr;

static void handler(int sig, siginfo_t *si, void *uc)
{
	sigset_t cur;

	(void)uc;
	calls++;
	got_signo = si->si_signo;
	got_code = si->si_code;
	got_addr = si->si_addr;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	blocked_in_handler = sigismember(&cur, sig);
	siglongjmp(jb, 1);
}

static const char *code_name(int c)
{
	switch (c) {
	case SEGV_MAPERR:
		return "SEGV_MAPERR";
	case SEGV_ACCERR:
		return "SEGV_ACCERR";
	default:
		return "other";
	}
}

static void report(const char *what, int faulted, void *want_addr)
{
	if (!faulted) {
		printf("%s: no fault\n", what);
		return;
	}
	printf("%s: signo=%d code=%s addr_ok=%s blocked_in_handler=%s\n", what,
	       got_signo, code_name(got_code),
	       got_addr == want_addr ? "yes" : "no",
	       blocked_in_handler ? "yes" : "no");
}

static long page;

int main(void)
{
	struct sigaction sa;
	sigset_t cur;
	int *volatile bad = (int *)0x10;
	volatile int sink;
	int i;
	char *ro, *none, *gone, *data;

	page = sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0) {
		perror("sigaction");
		return 1;
	}

	/* A store to 0x10, three times: the handler must keep working. */
	for (i = 0; i < 3; i++) {
		if (!sigsetjmp(jb, 1)) {
			*bad = 1;
			report("store to 0x10", 0, NULL);
		} else {
			report("store to 0x10", 1, (void *)0x10);
		}
	}
	if (!sigsetjmp(jb, 1)) {
		sink = *bad;
		report("load from 0x10", 0, NULL);
	} else {
		report("load from 0x10", 1, (void *)0x10);
	}

	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gone = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	data = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || none == MAP_FAILED || gone == MAP_FAILED ||
	    data == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	gone[0] = 1;
	munmap(gone, page);

	if (!sigsetjmp(jb, 1)) {
		sink = ro[8];
		printf("load from read-only page: ok, value %d\n", sink);
		((volatile char *)ro)[8] = 1;
		report("store to read-only page", 0, NULL);
	} else {
		report("store to read-only page", 1, ro + 8);
	}
	if (!sigsetjmp(jb, 1)) {
		sink = ((volatile char *)none)[100];
		report("load from PROT_NONE page", 0, NULL);
	} else {
		report("load from PROT_NONE page", 1, none + 100);
	}
	if (!sigsetjmp(jb, 1)) {
		sink = ((volatile char *)gone)[7];
		report("load from unmapped page", 0, NULL);
	} else {
		report("load from unmapped page", 1, gone + 7);
	}
	/* The page is readable and writable but not executable. */
	memset(data, 0, page);
	if (!sigsetjmp(jb, 1)) {
		void (*volatile fn)(void) = (void (*)(void))data;
		fn();
		report("call into non-executable page", 0, NULL);
	} else {
		report("call into non-executable page", 1, data);
	}

	/* mprotect makes the read-only page writable: no more fault. */
	mprotect(ro, page, PROT_READ | PROT_WRITE);
	if (!sigsetjmp(jb, 1)) {
		((volatile char *)ro)[8] = 5;
		printf("store after mprotect: ok, value %d\n", ro[8]);
	} else {
		report("store after mprotect", 1, ro + 8);
	}

	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("SIGSEGV blocked after siglongjmp: %s\n",
	       sigismember(&cur, SIGSEGV) ? "yes" : "no");
	printf("handler calls: %d\n", calls);
	(void)sink;
	return 0;
}
