/* fib: naive recursive Fibonacci; N from argv[1], default 30. Also a
 * call/return-heavy benchmark. */
#include <stdio.h>
#include <stdlib.h>

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30;

	printf("fib(%d) = %ld\n", n, fib(n));
	return 0;
}
