/* sig_restart: the main thread blocks in read() on an empty pipe; another
 * thread sends it SIGUSR1 with pthread_kill, waits, then writes to the pipe.
 * With SA_RESTART the read is restarted transparently and returns the data;
 * without SA_RESTART it fails with EINTR (and a second read gets the data).
 * Then nanosleep interrupted by a signal: EINTR with a remaining time,
 * whatever SA_RESTART says. The helper thread sleeps 200 ms before each
 * signal so that the main thread is already blocked. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static pthread_t main_thread;
static volatile int handled;

static void handler(int sig)
{
	(void)sig;
	handled++;
}

static void *poker(void *arg)
{
	const char *data = arg;

	usleep(200000);
	pthread_kill(main_thread, SIGUSR1);
	usleep(200000);
	if (data && write(fds[1], data, strlen(data)) < 0)
		perror("write");
	return NULL;
}

static void set_handler(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

static void read_case(const char *name, int flags, char *data)
{
	pthread_t t;
	char buf[64];
	ssize_t n;

	set_handler(flags);
	handled = 0;
	pthread_create(&t, NULL, poker, data);
	errno = 0;
	n = read(fds[0], buf, sizeof buf - 1);
	if (n >= 0) {
		buf[n] = 0;
		printf("%s: read returned %zd \"%s\", handler ran %d\n", name, n, buf, handled);
	} else {
		printf("%s: read returned %zd errno %s, handler ran %d\n", name, n,
		       errno == EINTR ? "EINTR" : strerror(errno), handled);
		n = read(fds[0], buf, sizeof buf - 1);
		if (n >= 0)
			buf[n] = 0;
		printf("%s: second read returned %zd \"%s\"\n", name, n, n >= 0 ? buf : "");
	}
	pthread_join(t, NULL);
}

static void sleep_case(const char *name, int flags)
{
	pthread_t t;
	struct timespec req = {5, 0}, rem = {0, 0};
	int r;

	set_handler(flags);
	handled = 0;
	pthread_create(&t, NULL, poker, NULL);
	errno = 0;
	r = nanosleep(&req, &rem);
	printf("%s: nanosleep returned %d errno %s, remaining > 1s: %s, handler ran %d\n",
	       name, r, errno == EINTR ? "EINTR" : strerror(errno),
	       rem.tv_sec >= 1 ? "yes" : "no", handled);
	pthread_join(t, NULL);
}

int main(void)
{
	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	main_thread = pthread_self();
	setvbuf(stdout, NULL, _IOLBF, 0);
	read_case("SA_RESTART", SA_RESTART, "restarted");
	read_case("no SA_RESTART", 0, "late data");
	sleep_case("nanosleep SA_RESTART", SA_RESTART);
	sleep_case("nanosleep no SA_RESTART", 0);
	return 0;
}
