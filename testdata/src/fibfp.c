/* fibfp: naive recursive Fibonacci under a two-level call chain
 * (main -> run -> fib), built with frame pointers and DWARF line tables
 * (see build.sh) for uvm's guest profiler tests; N from argv[1], default 30. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) long run(int n)
{
	long r = fib(n);

	/* keep run a real frame (no tail call to fib) */
	__asm__ volatile("" : "+r"(r));
	return r;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30;

	printf("fib(%d) = %ld\n", n, run(n));
	return 0;
}
