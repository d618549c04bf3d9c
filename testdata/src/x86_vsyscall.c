// x86_vsyscall: calls the legacy vsyscall page's entry points (the
// kernel's default vsyscall=xonly mode emulates them), with bad pointers
// (SIGSEGV, SI_KERNEL or SEGV_MAPERR), jumps into the page off an entry
// point and reads it (SIGSEGV), and prints the page's /proc/self/maps line.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>

typedef long (*gtod_fn)(struct timeval *, struct timezone *);
typedef long (*time_fn)(long *);
typedef long (*getcpu_fn)(unsigned *, unsigned *, void *);

static sigjmp_buf jb;
static void onsegv(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	printf("signal %d code %d addr %p\n", sig, si->si_code, si->si_addr);
	siglongjmp(jb, 1);
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = onsegv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	setvbuf(stdout, NULL, _IONBF, 0);

	struct timeval tv = {0, 0};
	struct timezone tz = {1, 1};
	long r = ((gtod_fn)0xffffffffff600000)(&tv, &tz);
	struct timeval now;
	gettimeofday(&now, NULL);
	printf("gettimeofday: ret %ld, plausible %d, tz %d %d\n", r, tv.tv_sec > 1600000000 && tv.tv_sec <= now.tv_sec, tz.tz_minuteswest, tz.tz_dsttime);
	if (sigsetjmp(jb, 1) == 0) {
		r = ((gtod_fn)0xffffffffff600000)((struct timeval *)8, NULL);
		printf("gettimeofday(bad ptr): ret %ld\n", r);
	}
	if (sigsetjmp(jb, 1) == 0) {
		r = ((gtod_fn)0xffffffffff600000)((struct timeval *)0xffff900000000000, NULL);
		printf("gettimeofday(kernel ptr): ret %ld\n", r);
	}
	long t = 0;
	r = ((time_fn)0xffffffffff600400)(&t);
	printf("time: ret==arg %d, plausible %d\n", r == t, t > 1600000000);
	unsigned cpu = 99, node = 99;
	r = ((getcpu_fn)0xffffffffff600800)(&cpu, &node, NULL);
	printf("getcpu: ret %ld, cpu<1024 %d, node %u\n", r, cpu < 1024, node);
	if (sigsetjmp(jb, 1) == 0) {
		((time_fn)0xffffffffff600404)(NULL);
		printf("misaligned entry returned\n");
	}
	if (sigsetjmp(jb, 1) == 0) {
		((time_fn)0xffffffffff600c00)(NULL);
		printf("entry 3 returned\n");
	}
	if (sigsetjmp(jb, 1) == 0) {
		volatile unsigned char *p = (unsigned char *)0xffffffffff600000;
		printf("read %x\n", *p);
	}
	FILE *f = fopen("/proc/self/maps", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, "[vsyscall]"))
			fputs(line, stdout);
	return 0;
}
