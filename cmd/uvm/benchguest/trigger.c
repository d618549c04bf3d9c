/* trigger: the producer side of uvm bench, after the kernel's
 * tools/testing/selftests/bpf/benchs/bench_trigger.c. Producer threads call
 * a target function in a loop; probes attached by uvm count the hits.
 *
 *   trigger MODE NPROD [ITERS]
 *   MODE: usermode (call uprobe_target_nop and count in user space),
 *         syscall (getpgid and count in user space), nop, push, ret (call
 *         the target; the probe counts).
 *   ITERS: 0 (default) = loop forever; N = each producer makes N calls and
 *         the program exits (exact-count runs).
 * Counters: producer i increments counters[i * 16] (one 128-byte line each,
 * like the BPF program's hits array); uvm reads them from guest memory by
 * the symbol "counters".
 *
 * The targets are hand-assembled so their first instruction is exactly the
 * one the kernel bench intends (uprobes-spec.md §7.1). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXPROD 256
volatile unsigned long counters[MAXPROD * 16] __attribute__((aligned(128)));

void uprobe_target_nop(void);
void uprobe_target_push(void);
void uprobe_target_ret(void);

#if defined(__x86_64__)
__asm__(".text\n"
	".globl uprobe_target_nop\n.type uprobe_target_nop,@function\n"
	"uprobe_target_nop:\n\tnop\n\tret\n.size uprobe_target_nop,.-uprobe_target_nop\n"
	".globl uprobe_target_push\n.type uprobe_target_push,@function\n"
	"uprobe_target_push:\n\tpush %rbp\n\tmov %rsp,%rbp\n\tcall opaque_noop_func\n\tmov $1,%eax\n\tpop %rbp\n\tret\n"
	".size uprobe_target_push,.-uprobe_target_push\n"
	".globl uprobe_target_ret\n.type uprobe_target_ret,@function\n"
	"uprobe_target_ret:\n\tret\n.size uprobe_target_ret,.-uprobe_target_ret\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl uprobe_target_nop\n.type uprobe_target_nop,%function\n"
	"uprobe_target_nop:\n\tnop\n\tret\n.size uprobe_target_nop,.-uprobe_target_nop\n"
	".globl uprobe_target_push\n.type uprobe_target_push,%function\n"
	"uprobe_target_push:\n\tstp x29, x30, [sp, #-16]!\n\tmov x29, sp\n\tbl opaque_noop_func\n\tmov w0, #1\n\tldp x29, x30, [sp], #16\n\tret\n"
	".size uprobe_target_push,.-uprobe_target_push\n"
	".globl uprobe_target_ret\n.type uprobe_target_ret,%function\n"
	"uprobe_target_ret:\n\tret\n.size uprobe_target_ret,.-uprobe_target_ret\n");
#else
#error "unsupported architecture"
#endif

__attribute__((noinline, weak)) void opaque_noop_func(void) { __asm__ volatile(""); }

static int mode;
static unsigned long iters;

enum { M_USERMODE, M_SYSCALL, M_NOP, M_PUSH, M_RET };

static void *producer(void *arg)
{
	long id = (long)arg;
	volatile unsigned long *c = &counters[id * 16];
	void (*target)(void) = uprobe_target_nop;
	if (mode == M_PUSH)
		target = uprobe_target_push;
	else if (mode == M_RET)
		target = uprobe_target_ret;
	for (unsigned long n = 0; iters == 0 || n < iters; n++) {
		switch (mode) {
		case M_USERMODE:
			uprobe_target_nop();
			(*c)++;
			break;
		case M_SYSCALL:
			syscall(SYS_getpgid, 0);
			(*c)++;
			break;
		default:
			target();
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: trigger usermode|syscall|nop|push|ret NPROD [ITERS]\n");
		return 2;
	}
	const char *modes[] = {"usermode", "syscall", "nop", "push", "ret"};
	mode = -1;
	for (int i = 0; i < 5; i++)
		if (strcmp(argv[1], modes[i]) == 0)
			mode = i;
	int nprod = atoi(argv[2]);
	if (mode < 0 || nprod < 1 || nprod > MAXPROD) {
		fprintf(stderr, "trigger: bad mode or producer count\n");
		return 2;
	}
	if (argc > 3)
		iters = strtoul(argv[3], NULL, 0);
	pthread_t th[MAXPROD];
	for (long i = 0; i < nprod; i++)
		if (pthread_create(&th[i], NULL, producer, (void *)i) != 0)
			return 1;
	for (int i = 0; i < nprod; i++)
		pthread_join(th[i], NULL);
	return 0;
}
