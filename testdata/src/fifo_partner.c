// fifo_partner: a blocking open of a host FIFO waits for its partner
// while the other threads run (a reader thread's open(O_RDONLY) and the
// main thread's open(O_WRONLY) meet, as os.TestFifoEOF's goroutines do),
// and EPOLLET on a FIFO reports every write after the reader drained it
// to EAGAIN, even when the write follows the drain at once.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[4096];

static void *reader(void *arg) {
	(void)arg;
	int r = open(path, O_RDONLY);
	if (r < 0) {
		printf("reader open: %s\n", strerrorname_np(errno));
		return NULL;
	}
	char buf[64];
	size_t got = 0;
	ssize_t n;
	while ((n = read(r, buf + got, sizeof buf - 1 - got)) > 0)
		got += n;
	buf[got] = 0;
	printf("reader got %zu bytes: %s", got, buf);
	printf("reader EOF: %zd\n", n);
	close(r);
	return NULL;
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	snprintf(path, sizeof path, "%s/uvm-fifo-partner", argv[1]);
	unlink(path);
	if (mkfifo(path, 0600) != 0) {
		printf("mkfifo: %s\n", strerrorname_np(errno));
		return 1;
	}
	pthread_t th;
	pthread_create(&th, NULL, reader, NULL);
	int w = open(path, O_WRONLY);
	printf("writer open: %s\n", w < 0 ? strerrorname_np(errno) : "ok");
	if (w >= 0) {
		const char *msg = "hello through the fifo\n";
		write(w, msg, strlen(msg));
		close(w);
	}
	pthread_join(th, NULL);

	// EPOLLET: each write after a drain to EAGAIN is a new edge.
	int r = open(path, O_RDONLY | O_NONBLOCK);
	w = open(path, O_WRONLY | O_NONBLOCK);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u32 = 7};
	epoll_ctl(ep, EPOLL_CTL_ADD, r, &ev);
	int reported = 0, bytes = 0;
	for (int i = 0; i < 20; i++) {
		write(w, "x", 1);
		struct epoll_event out;
		int n = epoll_wait(ep, &out, 1, 5000);
		if (n != 1) {
			printf("round %d: epoll_wait %d (%s)\n", i, n, n < 0 ? strerrorname_np(errno) : "timeout");
			break;
		}
		reported++;
		char buf[16];
		ssize_t k;
		while ((k = read(r, buf, sizeof buf)) > 0)
			bytes += k;
		if (errno != EAGAIN)
			printf("round %d: drain ended with %s\n", i, strerrorname_np(errno));
	}
	printf("EPOLLET reports: %d of 20, bytes read %d\n", reported, bytes);
	struct epoll_event out;
	printf("epoll_wait with nothing new: %d\n", epoll_wait(ep, &out, 1, 0));
	close(w);
	int n = epoll_wait(ep, &out, 1, 5000);
	printf("after writer close: %d events %#x\n", n, n == 1 ? out.events : 0);
	unlink(path);
	return 0;
}
