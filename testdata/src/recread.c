/* recread: the inputs of a recorded run (cmd/uvm's TestRecordReplay):
 * reads the file argv[1] (if given; with argv[3], renamed to argv[3]
 * first) and all of stdin, writes both to the file argv[2] (if given and
 * not empty) and reads that back, then prints the sizes and an FNV-1a
 * hash of everything read; the exit status is 3 + hash % 50. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long hash = 1469598103934665603UL;

static void mix(const char *b, long n)
{
	for (long i = 0; i < n; i++) {
		hash ^= (unsigned char)b[i];
		hash *= 1099511628211UL;
	}
}

static long slurp(int fd, char *buf, long cap)
{
	long n = 0;
	for (;;) {
		long r = read(fd, buf + n, cap - n);
		if (r <= 0)
			return r < 0 ? -1 : n;
		n += r;
		if (n == cap)
			return n;
	}
}

int main(int argc, char **argv)
{
	static char file[65536], in[65536], back[131072];
	long nf = 0, ni;

	if (argc > 3) {
		if (rename(argv[1], argv[3]) != 0) {
			perror("rename");
			return 1;
		}
		argv[1] = argv[3];
	}
	if (argc > 1) {
		int fd = open(argv[1], O_RDONLY);
		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		nf = slurp(fd, file, sizeof file);
		close(fd);
	}
	ni = slurp(0, in, sizeof in);
	if (nf < 0 || ni < 0) {
		perror("read");
		return 1;
	}
	mix(file, nf);
	mix(in, ni);
	if (argc > 2 && argv[2][0]) {
		int fd = open(argv[2], O_CREAT | O_TRUNC | O_RDWR, 0644);
		if (fd < 0) {
			perror(argv[2]);
			return 1;
		}
		if (write(fd, file, nf) != nf || write(fd, in, ni) != ni) {
			perror("write");
			return 1;
		}
		lseek(fd, 0, SEEK_SET);
		long nb = slurp(fd, back, sizeof back);
		close(fd);
		if (nb != nf + ni || memcmp(back, file, nf) || memcmp(back + nf, in, ni)) {
			printf("read back %ld bytes, not what was written\n", nb);
			return 1;
		}
	}
	printf("file %ld bytes, stdin %ld bytes, hash %016lx\n", nf, ni, hash);
	if (ni > 0)
		printf("stdin: %.*s\n", (int)(ni > 60 ? 60 : ni), in);
	return 3 + (int)(hash % 50);
}
