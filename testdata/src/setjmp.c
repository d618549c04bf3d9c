/* setjmp: setjmp/longjmp within a function, from nested calls, through
 * several frames, with values 0 (delivered as 1) and others, re-entry via a
 * jmp_buf chain (exception-like), and sigsetjmp/siglongjmp. */
#pragma GCC diagnostic ignored "-Winfinite-recursion"

#include <setjmp.h>
#include <stdio.h>

static jmp_buf top;
static jmp_buf *handler;
static int depth_reached;

static __attribute__((noinline)) void deep(int n, int val)
{
	volatile char pad[64]; /* make frames non-trivial */

	pad[n % 64] = (char)n;
	depth_reached = n + pad[n % 64] - n;
	if (n == 0)
		longjmp(top, val);
	deep(n - 1, val);
	pad[0]++; /* not reached */
}

static __attribute__((noinline)) int try_throw(int code)
{
	jmp_buf here, *saved = handler;
	volatile int r;

	handler = &here;
	if ((r = setjmp(here)) == 0) {
		if (code)
			longjmp(*handler, code);
		r = -1;
	}
	handler = saved;
	return r;
}

static __attribute__((noinline)) void thrower(int level, int code)
{
	if (level == 0)
		longjmp(*handler, code);
	thrower(level - 1, code);
}

static __attribute__((noinline)) int nested_try(int levels, int code)
{
	jmp_buf here, *saved = handler;
	volatile int r;

	handler = &here;
	r = setjmp(here);
	if (r == 0) {
		thrower(levels, code);
		r = -1;
	}
	handler = saved;
	return r;
}

int main(void)
{
	volatile int count = 0, acc = 0;
	volatile double fp = 1.5;
	sigjmp_buf sj;
	int r, i;

	r = setjmp(top);
	printf("setjmp returned %d (count %d)\n", r, count);
	if (count < 5) {
		count++;
		acc += r;
		fp *= 2;
		deep(count * 10, count == 3 ? 0 : count * 100);
	}
	printf("after loop: count=%d acc=%d depth=%d fp=%g\n", count, acc,
	       depth_reached, fp);

	for (i = 0; i < 4; i++)
		printf("try_throw(%d)=%d\n", i * 7, try_throw(i * 7));
	for (i = 0; i < 4; i++)
		printf("nested_try(levels=%d)=%d\n", i * 50,
		       nested_try(i * 50, 1000 + i));

	r = sigsetjmp(sj, 1);
	if (r < 3) {
		printf("sigsetjmp pass %d\n", r);
		siglongjmp(sj, r + 1);
	}
	printf("sigsetjmp done %d\n", r);
	return 0;
}
