/* probetargets: the guest program of uvm's uprobe/uretprobe end-to-end
 * tests. The t_* targets are written in assembly so that their first
 * instruction is exactly the kind the test wants (the BPF trigger
 * benchmark does the same):
 *
 *   target      arm64 first insn          x86-64 first insn       fate
 *   t_nop       nop                       nop                     simulated / emulated
 *   t_push      stp x29, x30, [sp,#-16]!  push %rbp               stepped / emulated
 *   t_ret       ret                       ret                     simulated / stepped
 *   t_branch    b 1f                      jmp 1f                  simulated / emulated
 *   t_riprel    adrp x1, g_val            mov g_val(%rip), %rax   simulated / stepped (RIP rewrite)
 *   t_literal   ldr x1, =5 (literal)      movabs $5, %rax         REJECTED (EINVAL) / stepped
 *   t_store     str x1, [x0]              mov %rsi, (%rdi)        stepped (faults on NULL)
 *
 * and C functions for uretprobes: t_recurse (recursion), t_deep (left by
 * longjmp), t_forkret (returns in parent and child).
 *
 * Usage: probetargets MODE [ARGS]; the output depends only on the
 * arguments (never on timing), so probed and unprobed runs must print the
 * same. Modes:
 *   loop N         call every target N times, print the sum
 *   recurse N      t_recurse(N)
 *   longjmp N      N times: t_deep(6) longjmps out of 6 probed frames
 *   threads T N    T threads, each calls t_push N times
 *   alarm N        SIGALRM every 1 ms while looping on t_push, until N alarms
 *   tgkill N       a thread sends N SIGUSR1 to the main thread looping on t_push
 *   segv           t_store(NULL) with a SIGSEGV handler: reports si_addr and
 *                  whether the signal pc is t_store's address
 *   sighandler N   SIGALRM handler calls t_push and t_recurse(3) while main
 *                  loops in them, until N alarms
 *   fork N         fork; parent and child each call the targets N times
 *   forkret        t_forkret forks and returns in both processes
 *   exec           execve(argv[0], "loop 3")
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

long g_val = 7;

long t_nop(long);
long t_push(long);
void t_ret(void);
long t_branch(long);
long t_riprel(long);
long t_literal(long);
void t_store(long *p, long v);

#if defined(__aarch64__)
__asm__(
	".text\n"
	".globl t_nop\n.type t_nop, %function\n"
	"t_nop:\n\tnop\n\tadd x0, x0, #1\n\tret\n.size t_nop, .-t_nop\n"
	".globl t_push\n.type t_push, %function\n"
	"t_push:\n\tstp x29, x30, [sp, #-16]!\n\tmov x29, sp\n\tadd x0, x0, #2\n\tldp x29, x30, [sp], #16\n\tret\n"
	".size t_push, .-t_push\n"
	".globl t_ret\n.type t_ret, %function\n"
	"t_ret:\n\tret\n.size t_ret, .-t_ret\n"
	".globl t_branch\n.type t_branch, %function\n"
	"t_branch:\n\tb 1f\n1:\tadd x0, x0, #3\n\tret\n.size t_branch, .-t_branch\n"
	".globl t_riprel\n.type t_riprel, %function\n"
	"t_riprel:\n\tadrp x1, g_val\n\tldr x1, [x1, :lo12:g_val]\n\tadd x0, x0, x1\n\tret\n"
	".size t_riprel, .-t_riprel\n"
	".globl t_literal\n.type t_literal, %function\n"
	"t_literal:\n\tldr x1, 2f\n\tadd x0, x0, x1\n\tret\n\t.p2align 3\n2:\t.quad 5\n"
	".size t_literal, .-t_literal\n"
	".globl t_store\n.type t_store, %function\n"
	"t_store:\n\tstr x1, [x0]\n\tret\n.size t_store, .-t_store\n");
#define UC_PC(uc) ((uc)->uc_mcontext.pc)
#elif defined(__x86_64__)
__asm__(
	".text\n"
	".globl t_nop\n.type t_nop, @function\n"
	"t_nop:\n\tnop\n\tlea 1(%rdi), %rax\n\tret\n.size t_nop, .-t_nop\n"
	".globl t_push\n.type t_push, @function\n"
	"t_push:\n\tpush %rbp\n\tmov %rsp, %rbp\n\tlea 2(%rdi), %rax\n\tpop %rbp\n\tret\n"
	".size t_push, .-t_push\n"
	".globl t_ret\n.type t_ret, @function\n"
	"t_ret:\n\tret\n.size t_ret, .-t_ret\n"
	".globl t_branch\n.type t_branch, @function\n"
	"t_branch:\n\tjmp 1f\n1:\tlea 3(%rdi), %rax\n\tret\n.size t_branch, .-t_branch\n"
	".globl t_riprel\n.type t_riprel, @function\n"
	"t_riprel:\n\tmov g_val(%rip), %rax\n\tadd %rdi, %rax\n\tret\n.size t_riprel, .-t_riprel\n"
	".globl t_literal\n.type t_literal, @function\n"
	"t_literal:\n\tmovabs $5, %rax\n\tadd %rdi, %rax\n\tret\n.size t_literal, .-t_literal\n"
	".globl t_store\n.type t_store, @function\n"
	"t_store:\n\tmov %rsi, (%rdi)\n\tret\n.size t_store, .-t_store\n");
#define UC_PC(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
#else
#error "arm64 or x86-64 only"
#endif

/* Keep the compiler from turning the recursions into loops. */
#define OPAQUE(x) __asm__ volatile("" : "+r"(x))

__attribute__((noinline)) long t_recurse(long n)
{
	if (n <= 0)
		return 0;
	long r = t_recurse(n - 1);
	OPAQUE(r);
	return r + 1;
}

static jmp_buf jb;
static volatile int jb_armed;

__attribute__((noinline)) long t_deep(long n)
{
	if (n <= 0) {
		if (jb_armed)
			longjmp(jb, 1);
		return 0;
	}
	long r = t_deep(n - 1);
	OPAQUE(r);
	return r + 1;
}

__attribute__((noinline)) long t_forkret(void)
{
	long pid = fork();
	OPAQUE(pid);
	return pid;
}

static long all_targets(long i)
{
	t_ret();
	return t_nop(i) + t_push(i) + t_branch(i) + t_riprel(i) + t_literal(i);
}

static void *thread_push(void *arg)
{
	long n = (long)arg, s = 0;
	for (long i = 0; i < n; i++)
		s += t_push(i);
	return (void *)s;
}

static volatile sig_atomic_t nsig;
static volatile long handler_sum;

static void on_signal(int sig)
{
	(void)sig;
	nsig++;
}

static void on_alarm_calls(int sig)
{
	(void)sig;
	handler_sum += t_push(1) + t_recurse(3);
	nsig++;
}

static sigjmp_buf segv_jb;
static void *segv_addr;
static int segv_at_probe;

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)sig;
	segv_addr = si->si_addr;
	segv_at_probe = UC_PC(uc) == (unsigned long)t_store;
	siglongjmp(segv_jb, 1);
}

static void start_alarm(void (*h)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_alarm(void)
{
	struct itimerval it = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
}

static pid_t main_tid;
static long tgkill_n;

static void *sender(void *arg)
{
	(void)arg;
	for (long i = 0; i < tgkill_n; i++) {
		long before = nsig;
		syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
		while (nsig == before)
			sched_yield();
	}
	return NULL;
}

static long arg(int argc, char **argv, int i, long def)
{
	return argc > i ? atol(argv[i]) : def;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "loop")) {
		long n = arg(argc, argv, 2, 10), s = 0;
		for (long i = 0; i < n; i++)
			s += all_targets(i);
		printf("loop %ld sum %ld\n", n, s);
	} else if (!strcmp(mode, "recurse")) {
		long n = arg(argc, argv, 2, 200);
		printf("recurse %ld = %ld\n", n, t_recurse(n));
	} else if (!strcmp(mode, "longjmp")) {
		long n = arg(argc, argv, 2, 10), jumps = 0;
		jb_armed = 1;
		for (long i = 0; i < n; i++) {
			if (setjmp(jb) == 0)
				t_deep(6);
			else
				jumps++;
		}
		printf("longjmp %ld jumps, then recurse 5 = %ld\n", jumps, t_recurse(5));
	} else if (!strcmp(mode, "threads")) {
		long nt = arg(argc, argv, 2, 8), n = arg(argc, argv, 3, 1000), total = 0;
		pthread_t th[64];
		if (nt > 64)
			nt = 64;
		for (long i = 0; i < nt; i++)
			pthread_create(&th[i], NULL, thread_push, (void *)n);
		for (long i = 0; i < nt; i++) {
			void *r;
			pthread_join(th[i], &r);
			total += (long)r;
		}
		printf("threads %ld x %ld total %ld\n", nt, n, total);
	} else if (!strcmp(mode, "alarm")) {
		long n = arg(argc, argv, 2, 5), s = 0;
		start_alarm(on_signal);
		for (long i = 0; nsig < n && i < 2000000000L; i++)
			s += t_push(i) - i;
		stop_alarm();
		printf("alarm: %d alarms, sum ok %d\n", (int)n, s % 2 == 0);
	} else if (!strcmp(mode, "tgkill")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigaction(SIGUSR1, &sa, NULL);
		tgkill_n = arg(argc, argv, 2, 5);
		main_tid = gettid();
		pthread_t th;
		pthread_create(&th, NULL, sender, NULL);
		long s = 0;
		while (nsig < tgkill_n)
			s += t_push(1) - 3;
		pthread_join(th, NULL);
		printf("tgkill: %d signals, sum ok %d\n", (int)nsig, s == 0);
	} else if (!strcmp(mode, "segv")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_segv;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, NULL);
		long ok = 0;
		t_store(&ok, 1);
		if (sigsetjmp(segv_jb, 1) == 0)
			t_store(NULL, 1);
		printf("segv: stored %ld, si_addr %p, pc at t_store %d\n", ok, segv_addr, segv_at_probe);
	} else if (!strcmp(mode, "sighandler")) {
		long n = arg(argc, argv, 2, 5), s = 0;
		start_alarm(on_alarm_calls);
		for (long i = 0; nsig < n && i < 2000000000L; i++)
			s += t_push(0) + t_recurse(2) - 4;
		stop_alarm();
		printf("sighandler: %d alarms, handler sum %ld, main ok %d\n", (int)n, handler_sum / nsig * n, s == 0);
	} else if (!strcmp(mode, "fork")) {
		long n = arg(argc, argv, 2, 3), s = 0;
		pid_t pid = fork();
		for (long i = 0; i < n; i++)
			s += all_targets(i);
		if (pid == 0) {
			printf("child sum %ld\n", s);
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		printf("parent sum %ld, child status %d\n", s, WEXITSTATUS(st));
	} else if (!strcmp(mode, "forkret")) {
		long pid = t_forkret();
		if (pid == 0) {
			printf("forkret child %ld\n", t_recurse(3));
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		printf("forkret parent %ld, child status %d\n", t_recurse(4), WEXITSTATUS(st));
	} else if (!strcmp(mode, "exec")) {
		char *args[] = {argv[0], "loop", "3", NULL};
		printf("exec\n");
		execv(argv[0], args);
		perror("execv");
		return 1;
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
