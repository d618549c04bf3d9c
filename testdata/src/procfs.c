// procfs: reads /proc as programs do and checks what it finds against
// what the same process knows by other means (getpid, getppid, getcwd,
// getrlimit, the auxiliary vector, sched_getaffinity, uname, its own
// memory), for itself, its threads (task/TID) and a forked child
// (/proc/CHILD: sleeping, zombie, reaped). The output is the same natively
// and under uvm (MANIFEST). Two more modes for cmd/uvm's TestProcfs:
//   procfs dump   prints the machine files and the process's own files
//                 (golden under --det: every byte deterministic)
//   procfs perm   (as root) the ptrace-access rule: a child that drops to
//                 another uid may not read its parent's environ, auxv, mem,
//                 fd/ or cwd, but may read status; root may read the
//                 child's.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;

static void check(int ok, const char *what) {
	if (!ok) {
		printf("FAIL: %s\n", what);
		fails++;
	}
}

// slurp reads a whole file (NUL-terminated in buf); -errno on failure.
static ssize_t slurp(const char *p, char *buf, size_t n) {
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, buf + got, n - 1 - got);
		if (r < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		got += r;
		if (got == n - 1)
			break;
	}
	close(fd);
	buf[got] = 0;
	return got;
}

// field returns the value of "Key:\t..." in a status-like text.
static const char *field(const char *text, const char *key, char *out, size_t n) {
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, kl) == 0 && l[kl] == ':') {
			const char *v = l + kl + 1;
			while (*v == '\t' || *v == ' ')
				v++;
			size_t i = 0;
			while (v[i] && v[i] != '\n' && i < n - 1) {
				out[i] = v[i];
				i++;
			}
			out[i] = 0;
			return out;
		}
	}
	out[0] = 0;
	return NULL;
}

static long fieldnum(const char *text, const char *key) {
	char v[256];
	if (!field(text, key, v, sizeof v))
		return -1;
	return strtol(v, NULL, 10);
}

static int dir_has(const char *dir, const char *name, int *count) {
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int found = 0, n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		if (strcmp(e->d_name, name) == 0)
			found = 1;
	}
	closedir(d);
	if (count)
		*count = n;
	return found;
}

static char buf[1 << 16];
static volatile uint64_t secret = 0x1122334455667788ull;
static pthread_barrier_t bar, done;

static void *worker(void *a) {
	(void)a;
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&done);
	return NULL;
}

static void self_checks(int argc, char **argv, char **envp) {
	char p[512], v[256], l[256];
	pid_t pid = getpid();

	// /proc lists self, thread-self, the machine files and this pid.
	snprintf(v, sizeof v, "%d", pid);
	check(dir_has("/proc", v, NULL) == 1, "/proc lists own pid");
	check(dir_has("/proc", "self", NULL) == 1 && dir_has("/proc", "cpuinfo", NULL) == 1, "/proc fixed entries");
	ssize_t n = readlink("/proc/self", l, sizeof l - 1);
	l[n > 0 ? n : 0] = 0;
	check(strcmp(l, v) == 0, "/proc/self -> pid");
	n = readlink("/proc/thread-self", l, sizeof l - 1);
	l[n > 0 ? n : 0] = 0;
	snprintf(p, sizeof p, "%d/task/%d", pid, (int)syscall(SYS_gettid));
	check(strcmp(l, p) == 0, "/proc/thread-self -> pid/task/tid");
	struct stat st;
	check(lstat("/proc/self", &st) == 0 && S_ISLNK(st.st_mode), "lstat /proc/self is a link");
	check(stat("/proc/self", &st) == 0 && S_ISDIR(st.st_mode), "stat /proc/self is a directory");
	printf("self: ok\n");

	// status and stat agree with the process's own view.
	check(slurp("/proc/self/status", buf, sizeof buf) > 0, "read status");
	check(fieldnum(buf, "Pid") == pid && fieldnum(buf, "Tgid") == pid && fieldnum(buf, "PPid") == getppid(),
	      "status Pid/Tgid/PPid");
	check(fieldnum(buf, "Threads") == 1, "status Threads: 1");
	field(buf, "State", v, sizeof v);
	check(strcmp(v, "R (running)") == 0, "status State: R (running)");
	field(buf, "Uid", v, sizeof v);
	snprintf(p, sizeof p, "%d\t%d\t", getuid(), geteuid());
	check(strncmp(v, p, strlen(p)) == 0, "status Uid");
	check(fieldnum(buf, "VmRSS") > 0, "status VmRSS");
	check(slurp("/proc/self/stat", buf, sizeof buf) > 0, "read stat");
	int spid, sppid;
	char comm[64], state;
	check(sscanf(buf, "%d (%63[^)]) %c %d", &spid, comm, &state, &sppid) == 4 && spid == pid && state == 'R' &&
		      sppid == getppid(),
	      "stat pid (comm) R ppid");
	int nf = 0;
	for (char *s = buf; *s; s++)
		nf += *s == ' ';
	check(nf == 51, "stat has 52 fields");
	long size, res;
	check(slurp("/proc/self/statm", buf, sizeof buf) > 0 && sscanf(buf, "%ld %ld", &size, &res) == 2 && size > 0 &&
		      res > 0 && res <= size,
	      "statm size resident");
	printf("status, stat, statm: ok\n");

	// cmdline, environ and auxv are what the process was started with.
	n = slurp("/proc/self/cmdline", buf, sizeof buf);
	size_t off = 0;
	int same = n > 0;
	for (int i = 0; i < argc && same; i++) {
		same = strcmp(buf + off, argv[i]) == 0;
		off += strlen(argv[i]) + 1;
	}
	check(same && off == (size_t)n, "cmdline is argv");
	n = slurp("/proc/self/environ", buf, sizeof buf);
	off = 0;
	same = n >= 0;
	for (char **e = envp; *e && same; e++) {
		same = strcmp(buf + off, *e) == 0;
		off += strlen(*e) + 1;
	}
	check(same && off == (size_t)n, "environ is envp");
	n = slurp("/proc/self/auxv", buf, sizeof buf);
	int pagesz = 0, entry = 0;
	for (unsigned long *a = (unsigned long *)buf; (char *)(a + 2) <= buf + n && a[0]; a += 2) {
		pagesz |= a[0] == AT_PAGESZ && a[1] == (unsigned long)getpagesize();
		entry |= a[0] == AT_ENTRY && a[1] == getauxval(AT_ENTRY);
	}
	check(pagesz && entry, "auxv AT_PAGESZ, AT_ENTRY");
	printf("cmdline, environ, auxv: ok\n");

	// comm: writable for the process's own threads.
	int fd = open("/proc/self/comm", O_WRONLY);
	check(fd >= 0 && write(fd, "procfs-renamed", 14) == 14, "write comm");
	close(fd);
	char pn[17] = {0};
	prctl(PR_GET_NAME, pn);
	slurp("/proc/self/comm", buf, sizeof buf);
	check(strcmp(pn, "procfs-renamed") == 0 && strcmp(buf, "procfs-renamed\n") == 0, "comm renamed");
	printf("comm: ok\n");

	// limits match getrlimit.
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	slurp("/proc/self/limits", buf, sizeof buf);
	char *mo = strstr(buf, "Max open files");
	long soft = -1, hard = -1;
	check(mo && sscanf(mo + 25, "%ld %ld", &soft, &hard) == 2 && soft == (long)rl.rlim_cur &&
		      hard == (long)rl.rlim_max,
	      "limits Max open files");
	check(strncmp(buf, "Limit                     Soft Limit           Hard Limit           Units", 72) == 0,
	      "limits header");
	printf("limits: ok\n");

	// fd, fdinfo.
	fd = open("/proc/self/status", O_RDONLY);
	lseek(fd, 5, SEEK_SET);
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	n = readlink(p, l, sizeof l - 1);
	l[n > 0 ? n : 0] = 0;
	snprintf(v, sizeof v, "/proc/%d/status", pid);
	check(strcmp(l, v) == 0, "fd/N link");
	snprintf(p, sizeof p, "/proc/self/fdinfo/%d", fd);
	slurp(p, buf, sizeof buf);
	check(fieldnum(buf, "pos") == 5, "fdinfo pos");
	field(buf, "flags", v, sizeof v);
	check((strtol(v, NULL, 8) & O_ACCMODE) == O_RDONLY && v[0] == '0', "fdinfo flags");
	check(fieldnum(buf, "mnt_id") >= 0, "fdinfo mnt_id");
	dup2(fd, 100);
	close(fd);
	check(dir_has("/proc/self/fd", "100", NULL) == 1 && dir_has("/proc/self/fdinfo", "100", NULL) == 1, "fd/ lists N");
	close(100);
	check(dir_has("/proc/self/fd", "100", NULL) == 0, "closed fd not listed");
	int efd = eventfd(7, EFD_CLOEXEC);
	snprintf(p, sizeof p, "/proc/self/fdinfo/%d", efd);
	slurp(p, buf, sizeof buf);
	field(buf, "eventfd-count", v, sizeof v);
	check(strtol(v, NULL, 16) == 7, "fdinfo eventfd-count");
	field(buf, "flags", v, sizeof v);
	check((strtol(v, NULL, 8) & O_CLOEXEC) != 0, "fdinfo O_CLOEXEC");
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x42};
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	snprintf(p, sizeof p, "/proc/self/fdinfo/%d", ep);
	slurp(p, buf, sizeof buf);
	char *tfd = strstr(buf, "tfd:");
	int tn = -1;
	unsigned evs = 0;
	unsigned long data = 0;
	check(tfd && sscanf(tfd, "tfd: %d events: %x data: %lx", &tn, &evs, &data) == 3 && tn == efd && (evs & EPOLLIN) &&
		      data == 0x42,
	      "fdinfo epoll tfd");
	close(ep);
	close(efd);
	printf("fd, fdinfo: ok\n");

	// cwd, root, exe.
	char cwd[4096];
	getcwd(cwd, sizeof cwd);
	static char lk[4096];
	n = readlink("/proc/self/cwd", lk, sizeof lk - 1);
	lk[n > 0 ? n : 0] = 0;
	check(strcmp(lk, cwd) == 0, "cwd link");
	n = readlink("/proc/self/root", lk, sizeof lk - 1);
	lk[n > 0 ? n : 0] = 0;
	check(strcmp(lk, "/") == 0, "root link");
	n = readlink("/proc/self/exe", lk, sizeof lk - 1);
	check(n > 0 && lk[0] == '/', "exe link");
	check(stat("/proc/self/exe", &st) == 0 && S_ISREG(st.st_mode), "stat exe follows");
	struct stat a, b;
	check(stat("/proc/self/cwd", &a) == 0 && stat(cwd, &b) == 0 && a.st_ino == b.st_ino, "stat cwd follows");
	check(stat("/proc/self/root/proc/self/cwd/.", &a) == 0 && a.st_ino == b.st_ino, "root/… and cwd/. resolve");
	printf("cwd, root, exe: ok\n");

	// oom_score, oom_score_adj.
	slurp("/proc/self/oom_score", buf, sizeof buf);
	long sc = strtol(buf, NULL, 10);
	check(sc >= 0 && sc <= 2000, "oom_score in range");
	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	check(fd >= 0 && write(fd, "100\n", 4) == 4, "write oom_score_adj");
	close(fd);
	slurp("/proc/self/oom_score_adj", buf, sizeof buf);
	check(strcmp(buf, "100\n") == 0, "oom_score_adj reads back");
	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	check(fd >= 0 && write(fd, "5000", 4) < 0 && errno == EINVAL, "oom_score_adj range");
	close(fd);
	printf("oom_score: ok\n");

	// mem reads and writes the process's memory.
	fd = open("/proc/self/mem", O_RDWR);
	uint64_t got = 0, put = 0x0102030405060708ull;
	check(fd >= 0 && pread(fd, &got, 8, (off_t)(uintptr_t)&secret) == 8 && got == secret, "mem read");
	check(pwrite(fd, &put, 8, (off_t)(uintptr_t)&secret) == 8 && secret == put, "mem write");
	close(fd);
	printf("mem: ok\n");

	// maps and smaps_rollup.
	n = slurp("/proc/self/maps", buf, sizeof buf);
	check(n > 0 && strstr(buf, "[stack]") != NULL, "maps has [stack]");
	slurp("/proc/self/smaps_rollup", buf, sizeof buf);
	check(strstr(buf, "[rollup]") && fieldnum(buf, "Rss") > 0, "smaps_rollup Rss");
	printf("maps, smaps_rollup: ok\n");

	// the machine files.
	cpu_set_t set;
	sched_getaffinity(0, sizeof set, &set);
	slurp("/proc/cpuinfo", buf, sizeof buf);
	int procs = 0;
	for (char *s = buf; (s = strstr(s, "processor\t:")); s++)
		procs++;
	check(procs == CPU_COUNT(&set), "cpuinfo: one processor per CPU");
	check(strstr(buf, "\nflags\t\t: fpu") || strstr(buf, "\nFeatures\t: fp"), "cpuinfo flags/Features");
	slurp("/proc/stat", buf, sizeof buf);
	int cpus = 0;
	for (char *s = buf; (s = strstr(s, "\ncpu")); s++)
		cpus++;
	check(strncmp(buf, "cpu  ", 5) == 0 && cpus == procs && strstr(buf, "\nbtime "), "stat: cpu lines, btime");
	slurp("/proc/meminfo", buf, sizeof buf);
	long tot = fieldnum(buf, "MemTotal"), fr = fieldnum(buf, "MemFree");
	check(tot > 0 && fr >= 0 && fr <= tot, "meminfo MemTotal, MemFree");
	double up, idle;
	slurp("/proc/uptime", buf, sizeof buf);
	check(sscanf(buf, "%lf %lf", &up, &idle) == 2 && up >= 0, "uptime");
	double l1, l5, l15;
	int run, tot2, last;
	slurp("/proc/loadavg", buf, sizeof buf);
	check(sscanf(buf, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &run, &tot2, &last) == 6 && run >= 1 && last >= pid,
	      "loadavg");
	struct utsname u;
	uname(&u);
	slurp("/proc/version", buf, sizeof buf);
	snprintf(v, sizeof v, "Linux version %s ", u.release);
	check(strncmp(buf, v, strlen(v)) == 0, "version");
	slurp("/proc/sys/kernel/ostype", buf, sizeof buf);
	check(strcmp(buf, "Linux\n") == 0, "ostype");
	slurp("/proc/sys/kernel/osrelease", buf, sizeof buf);
	snprintf(v, sizeof v, "%s\n", u.release);
	check(strcmp(buf, v) == 0, "osrelease");
	slurp("/proc/sys/kernel/hostname", buf, sizeof buf);
	snprintf(v, sizeof v, "%s\n", u.nodename);
	check(strcmp(buf, v) == 0, "hostname");
	slurp("/proc/sys/kernel/pid_max", buf, sizeof buf);
	check(strtol(buf, NULL, 10) > pid, "pid_max");
	printf("machine files: ok\n");

	// threads: task/ lists them, each task/TID/ describes its thread.
	pthread_t th[2];
	pthread_barrier_init(&bar, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	pthread_barrier_wait(&bar);
	int ntask = 0;
	snprintf(v, sizeof v, "%d", pid);
	check(dir_has("/proc/self/task", v, &ntask) == 1 && ntask == 3, "task/ lists 3 threads");
	slurp("/proc/self/status", buf, sizeof buf);
	check(fieldnum(buf, "Threads") == 3, "status Threads: 3");
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int others = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, v) == 0)
			continue;
		snprintf(p, sizeof p, "/proc/self/task/%s/status", e->d_name);
		slurp(p, buf, sizeof buf);
		others += fieldnum(buf, "Pid") == atoi(e->d_name) && fieldnum(buf, "Tgid") == pid;
		snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
		fd = open(p, O_WRONLY);
		check(fd >= 0 && write(fd, "worker", 6) == 6, "write task comm");
		close(fd);
		slurp(p, buf, sizeof buf);
		check(strcmp(buf, "worker\n") == 0, "task comm renamed");
		snprintf(p, sizeof p, "/proc/%s/status", e->d_name); // /proc/TID of a thread
		slurp(p, buf, sizeof buf);
		check(fieldnum(buf, "Tgid") == pid, "/proc/TID of a thread");
	}
	closedir(d);
	check(others == 2, "task/TID/status of each thread");
	slurp("/proc/self/comm", buf, sizeof buf);
	check(strcmp(buf, "procfs-renamed\n") == 0, "leader comm unchanged");
	pthread_barrier_wait(&done);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	snprintf(p, sizeof p, "/proc/self/task/%d", pid);
	// pthread_join returns when the kernel clears the thread's tid word
	// (CLONE_CHILD_CLEARTID), a moment before the exited task is released
	// from /proc: Linux may still list it briefly.
	int left = 0;
	for (int i = 0; i < 2000; i++) {
		left = dir_has("/proc/self/task", v, &ntask) == 1 && ntask == 1;
		if (left)
			break;
		usleep(1000);
	}
	check(left, "joined threads leave task/");
	printf("threads: ok\n");
}

static void child_checks(void) {
	char p[256], v[256];
	int pfd[2];
	pipe(pfd);
	pid_t c = fork();
	if (c == 0) {
		char x;
		close(pfd[1]);
		prctl(PR_SET_NAME, "procfs-child");
		read(pfd[0], &x, 1); // sleeps until the parent writes
		_exit(3);
	}
	close(pfd[0]);
	snprintf(p, sizeof p, "/proc/%d/status", c);
	// wait until the child sleeps in read (it has renamed itself first)
	int sleeping = 0;
	for (int i = 0; i < 2000 && !sleeping; i++) {
		slurp(p, buf, sizeof buf);
		field(buf, "State", v, sizeof v);
		sleeping = strcmp(v, "S (sleeping)") == 0 && strstr(buf, "Name:\tprocfs-child\n");
		if (!sleeping)
			usleep(1000);
	}
	check(sleeping, "child State: S (sleeping), Name");
	check(fieldnum(buf, "PPid") == getpid() && fieldnum(buf, "Pid") == c, "child PPid, Pid");
	snprintf(v, sizeof v, "%d", c);
	check(dir_has("/proc", v, NULL) == 1, "/proc lists the child");
	snprintf(p, sizeof p, "/proc/%d/environ", c);
	check(slurp(p, buf, sizeof buf) >= 0, "child environ readable (same uid)");
	snprintf(p, sizeof p, "/proc/%d/cmdline", c);
	check(slurp(p, buf, sizeof buf) > 0, "child cmdline");
	snprintf(p, sizeof p, "/proc/%d/comm", c);
	int fd = open(p, O_WRONLY);
	check(fd >= 0 && write(fd, "x", 1) < 0 && errno == EINVAL, "another process's comm: EINVAL");
	close(fd);
	write(pfd[1], "x", 1);
	close(pfd[1]);
	// a zombie until reaped
	snprintf(p, sizeof p, "/proc/%d/status", c);
	int zombie = 0;
	for (int i = 0; i < 2000 && !zombie; i++) {
		slurp(p, buf, sizeof buf);
		field(buf, "State", v, sizeof v);
		zombie = strcmp(v, "Z (zombie)") == 0;
		if (!zombie)
			usleep(1000);
	}
	check(zombie, "child State: Z (zombie)");
	int held = open(p, O_RDONLY);
	snprintf(v, sizeof v, "/proc/%d", c);
	DIR *hd = opendir(v);
	int status;
	check(waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 3, "wait child");
	check(slurp(p, buf, sizeof buf) == -ENOENT, "reaped child: ENOENT");
	errno = 0;
	check(held >= 0 && read(held, buf, 64) < 0 && errno == ESRCH, "reaped child: read of an open status ESRCH");
	close(held);
	errno = 0;
	check(hd && readdir(hd) == NULL && errno == 0, "reaped child: an open directory lists nothing");
	closedir(hd);
	snprintf(v, sizeof v, "%d", c);
	check(dir_has("/proc", v, NULL) == 0, "/proc no longer lists the child");
	printf("child: ok\n");
}

static void dump_file(const char *p) {
	ssize_t n = slurp(p, buf, sizeof buf);
	printf("== %s (%zd)\n", p, n);
	if (n > 0)
		fputs(buf, stdout);
}

static void dump(void) {
	DIR *d = opendir("/proc");
	struct dirent *e;
	printf("== /proc:");
	while ((e = readdir(d)))
		printf(" %s", e->d_name);
	printf("\n");
	closedir(d);
	const char *files[] = {"/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/uptime", "/proc/loadavg",
			       "/proc/version", "/proc/sys/kernel/ostype", "/proc/sys/kernel/osrelease",
			       "/proc/sys/kernel/hostname", "/proc/sys/kernel/pid_max", "/proc/sys/kernel/random/boot_id",
			       "/proc/self/status", "/proc/self/stat", "/proc/self/statm", "/proc/self/limits",
			       "/proc/self/maps", "/proc/self/smaps_rollup", "/proc/self/oom_score",
			       "/proc/self/fdinfo/0", NULL};
	for (int i = 0; files[i]; i++)
		dump_file(files[i]);
}

// perm: as root, a child that becomes another user may not read its
// parent's private files; the parent (CAP_SYS_PTRACE) may read the child's.
static void perm(void) {
	char p[256];
	pid_t parent = getpid();
	int pfd[2], back[2];
	pipe(pfd);
	pipe(back);
	pid_t c = fork();
	if (c == 0) {
		char x;
		close(pfd[1]);
		if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
			_exit(99);
		const char *priv[] = {"environ", "auxv", "mem", "maps", NULL};
		int denied = 0, n = 0;
		for (int i = 0; priv[i]; i++, n++) {
			snprintf(p, sizeof p, "/proc/%d/%s", parent, priv[i]);
			int fd = open(p, O_RDONLY);
			denied += fd < 0 && errno == EACCES;
			if (fd >= 0)
				close(fd);
		}
		char l[256];
		snprintf(p, sizeof p, "/proc/%d/cwd", parent);
		denied += readlink(p, l, sizeof l) < 0 && errno == EACCES;
		snprintf(p, sizeof p, "/proc/%d/fd", parent);
		denied += opendir(p) == NULL && errno == EACCES;
		n += 2;
		snprintf(p, sizeof p, "/proc/%d/status", parent);
		int open_ok = slurp(p, buf, sizeof buf) > 0;
		char r = denied == n && open_ok ? 'y' : 'n';
		write(back[1], &r, 1);
		read(pfd[0], &x, 1);
		_exit(0);
	}
	char r = 0;
	read(back[0], &r, 1);
	check(r == 'y', "unprivileged child: parent's environ/auxv/mem/maps/cwd/fd EACCES, status readable");
	snprintf(p, sizeof p, "/proc/%d/environ", c);
	check(slurp(p, buf, sizeof buf) >= 0, "root reads the child's environ");
	snprintf(p, sizeof p, "/proc/%d/status", c);
	slurp(p, buf, sizeof buf);
	char v[256];
	field(buf, "Uid", v, sizeof v);
	check(strcmp(v, "65534\t65534\t65534\t65534") == 0, "child status Uid");
	write(pfd[1], "x", 1);
	waitpid(c, NULL, 0);
	printf("perm: ok\n");
}

int main(int argc, char **argv, char **envp) {
	if (argc > 1 && strcmp(argv[1], "dump") == 0) {
		dump();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "perm") == 0) {
		if (geteuid() != 0) {
			printf("perm: needs root\n");
			return 2;
		}
		perm();
		return fails != 0;
	}
	self_checks(argc, argv, envp);
	child_checks();
	printf("%s\n", fails ? "procfs: FAILED" : "procfs: all ok");
	return fails != 0;
}
