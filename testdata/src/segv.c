/* segv: prints a line (flushed), then stores to NULL. The expected outcome is
 * death by SIGSEGV (exit status 128+11 = 139) with nothing printed after the
 * crash point. */
#include <stdio.h>

int main(void)
{
	volatile int *p = (volatile int *)0;

	puts("before the crash");
	fflush(stdout);
	*p = 1;
	puts("after the crash (must not appear)");
	return 0;
}
