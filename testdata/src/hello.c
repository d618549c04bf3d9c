/* hello: the smallest guest — one puts() call, exit status 0. */
#include <stdio.h>

int main(void)
{
	puts("Hello, world!");
	return 0;
}
