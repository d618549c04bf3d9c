// fifo: a host FIFO opened by path: non-blocking open and read (EAGAIN),
// epoll readiness for data and for the writer's hang-up, EOF, and a
// blocking read that a signal interrupts (EINTR without SA_RESTART).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

static void onalrm(int sig) { (void)sig; }

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	char path[4096];
	snprintf(path, sizeof path, "%s/uvm-fifo", argv[1]);
	unlink(path);
	if (mkfifo(path, 0600) != 0) {
		printf("mkfifo: %s\n", strerrorname_np(errno));
		return 1;
	}
	int r = open(path, O_RDONLY | O_NONBLOCK);
	printf("open reader non-blocking: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	char buf[64];
	ssize_t n = read(r, buf, sizeof buf);
	printf("read with no writer yet: %zd\n", n);
	int w = open(path, O_WRONLY);
	printf("open writer: %s\n", w < 0 ? strerrorname_np(errno) : "ok");
	n = read(r, buf, sizeof buf);
	printf("read empty: %zd %s\n", n, n < 0 ? strerrorname_np(errno) : "");
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN}, out;
	printf("epoll_ctl: %d\n", epoll_ctl(ep, EPOLL_CTL_ADD, r, &ev));
	printf("epoll_wait empty: %d\n", epoll_wait(ep, &out, 1, 0));
	write(w, "hello", 5);
	n = epoll_wait(ep, &out, 1, 5000);
	printf("epoll_wait after write: %zd events %#x\n", n, n > 0 ? out.events : 0);
	n = read(r, buf, sizeof buf);
	printf("read: %zd %.5s\n", n, buf);
	close(w);
	n = epoll_wait(ep, &out, 1, 5000);
	printf("epoll_wait after close: %zd events %#x\n", n, n > 0 ? out.events : 0);
	printf("read at EOF: %zd\n", read(r, buf, sizeof buf));
	close(r);

	// A blocking read with a writer that never writes: SIGALRM ends it.
	r = open(path, O_RDWR); // a reader that is also a writer: no EOF
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = onalrm;
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	n = read(r, buf, sizeof buf);
	printf("blocking read interrupted: %zd %s\n", n, n < 0 ? strerrorname_np(errno) : "");
	close(r);
	unlink(path);
	return 0;
}
