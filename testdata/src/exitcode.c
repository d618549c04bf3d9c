/* exitcode: prints one line, then exit(42). */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	puts("exiting with 42");
	exit(42);
}
