/* dynhello: a dynamically linked program (PT_INTERP, libc.so.6): uvm loads
 * the interpreter, which maps libc with mmap and relocates. Prints its
 * arguments, uses malloc, stdio, a libc string function through its ifunc,
 * and getenv. Built WITHOUT -static (see build.sh's DYNAMIC list). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char *buf = malloc(1 << 20);
	memset(buf, 'x', 1 << 20);
	buf[(1 << 20) - 1] = 0;
	printf("dynamic: %d args, strlen %zu\n", argc, strlen(buf));
	for (int i = 1; i < argc; i++)
		printf("arg %d: %s\n", i, argv[i]);
	const char *v = getenv("DYNHELLO");
	printf("DYNHELLO=%s\n", v ? v : "(unset)");
	free(buf);
	return 3;
}
