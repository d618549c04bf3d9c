// pathexec: execve's program and script interpreter names and AF_UNIX
// socket path names are looked up as every other path is: relative names
// from the cwd's directory (which a rename of its parent leaves in
// place), ".." after a symlink by the kernel, and a bound socket found by
// its inode (after a rename of the socket file, through a symlink).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

// tail is the last two components of p.
static const char *tail(const char *p) {
	const char *s = p + strlen(p);
	int n = 0;
	while (s > p) {
		s--;
		if (*s == '/' && ++n == 2)
			return s + 1;
	}
	return p;
}

static int child(int argc, char **argv) {
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n < 0 ? 0 : n] = 0;
	printf("  child:");
	for (int i = 0; i < argc; i++)
		printf(" [%s]", argv[i]);
	printf(" execfn=%s exe=%s\n", (const char *)getauxval(AT_EXECFN), tail(exe));
	return 0;
}

static void run(const char *what, const char *prog, char **argv) {
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		execv(prog, argv);
		printf("  %s: execve: %s\n", what, strerrorname_np(errno));
		fflush(stdout);
		_exit(127);
	}
	int st;
	waitpid(p, &st, 0);
	printf("%s: exit %d\n", what, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static int copy_self(const char *to) {
	int in = open("/proc/self/exe", O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0 || out < 0)
		return -1;
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	return close(out);
}

static int sock_connect(const char *path) {
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	int r = connect(c, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	close(c);
	errno = e;
	return r;
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return child(argc, argv);
	if (argc < 2)
		return 2;
	char d[4096], p[4096];
	snprintf(d, sizeof d, "%s/p", argv[1]);
	mkdir(d, 0755);
	snprintf(d, sizeof d, "%s/p/a", argv[1]);
	mkdir(d, 0755);
	snprintf(p, sizeof p, "%s/p/a/x", argv[1]);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/p/a/x/y", argv[1]);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/p/a/x/prog", argv[1]);
	if (copy_self(p) != 0) {
		printf("copy: %s\n", strerrorname_np(errno));
		return 1;
	}
	if (chdir(d) != 0)
		return 1;
	symlink("x/y", "sub");
	// The cwd's parent is renamed: the cwd stays where it is.
	char from[4096], to[4096];
	snprintf(from, sizeof from, "%s/p", argv[1]);
	snprintf(to, sizeof to, "%s/q", argv[1]);
	if (rename(from, to) != 0)
		return 1;

	char *av[] = {"prog", "child", "one", NULL};
	// sub is x/y, so sub/.. is x (not "."): x/prog is the program.
	run("execve ./sub/../prog", "./sub/../prog", av);
	run("execve sub/../prog", "sub/../prog", av);
	run("execve x/./prog", "x/./prog", av);
	run("execve ./prog (none here)", "./prog", av);

	// A script whose interpreter is relative to the cwd, run by a
	// relative name: the interpreter gets the name as written.
	int fd = open("x/scr", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	const char *hdr = "#!x/prog child\n";
	write(fd, hdr, strlen(hdr));
	close(fd);
	char *sv[] = {"scr", "two", NULL};
	run("execve ./sub/../scr", "./sub/../scr", sv);

	// AF_UNIX path names from the moved cwd.
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strcpy(a.sun_path, "sub/../s.sock");
	int r = bind(s, (struct sockaddr *)&a, sizeof a);
	printf("bind sub/../s.sock: %s\n", r == 0 ? "ok" : strerrorname_np(errno));
	listen(s, 4);
	struct stat st;
	printf("x/s.sock is a socket: %d\n", stat("x/s.sock", &st) == 0 && S_ISSOCK(st.st_mode));
	printf("connect x/s.sock: %s\n", sock_connect("x/s.sock") == 0 ? "ok" : strerrorname_np(errno));
	snprintf(p, sizeof p, "%s/q/a/x/s.sock", argv[1]);
	printf("connect by the new absolute path: %s\n", sock_connect(p) == 0 ? "ok" : strerrorname_np(errno));
	rename("x/s.sock", "x/moved.sock");
	printf("connect x/moved.sock after rename: %s\n", sock_connect("x/moved.sock") == 0 ? "ok" : strerrorname_np(errno));
	symlink("x/moved.sock", "link.sock");
	printf("connect link.sock (symlink): %s\n", sock_connect("link.sock") == 0 ? "ok" : strerrorname_np(errno));
	printf("connect x/s.sock after rename: %s\n", sock_connect("x/s.sock") == 0 ? "ok" : strerrorname_np(errno));
	int f = open("x/plain", O_WRONLY | O_CREAT, 0644);
	close(f);
	printf("connect x/plain (a regular file): %s\n", sock_connect("x/plain") == 0 ? "ok" : strerrorname_np(errno));
	unlink("x/moved.sock");
	printf("connect x/moved.sock after unlink: %s\n", sock_connect("x/moved.sock") == 0 ? "ok" : strerrorname_np(errno));
	close(s);
	return 0;
}
