/* args: prints argc, argv[1..] and the variable UVM_TEST_ENV, then exits 3.
 * argv[0] is not printed verbatim (it depends on how the guest was started);
 * only whether it is non-empty. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *v = getenv("UVM_TEST_ENV");
	int i;

	printf("argc=%d\n", argc);
	printf("argv[0] non-empty: %s\n", argv[0] && argv[0][0] ? "yes" : "no");
	for (i = 1; i < argc; i++)
		printf("argv[%d]=\"%s\" (len %zu)\n", i, argv[i], strlen(argv[i]));
	printf("argv[argc] is NULL: %s\n", argv[argc] == NULL ? "yes" : "no");
	printf("UVM_TEST_ENV=%s\n", v ? v : "(unset)");
	return 3;
}
