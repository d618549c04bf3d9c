// x86_traps: the x86-64 traps and exceptions Linux reports to user space,
// compared line for line with a native run (cmd/uvm's TestX86Traps).
//   - the trap flag: SIGTRAP TRAP_TRACE after each instruction while
//     RFLAGS.TF is set (popf, syscall, rep movsb, int3, a fault, a signal
//     delivered while stepping, TF cleared for the handler);
//   - x87 exceptions unmasked in the control word: SIGFPE at the next
//     waiting x87 instruction with the si_code from the status word, the
//     saved FPU state, the FPU reset for the handler;
//   - SSE exceptions unmasked in MXCSR;
//   - the saved RFLAGS (RF on faults), trapno and error code of #UD, #GP,
//     #PF, #DE, far returns, push/pop of FS and GS;
//   - alignment checking (RFLAGS.AC): SIGBUS BUS_ADRALN.
// Addresses are printed relative to labels, so the output does not depend
// on the link layout.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

struct ev {
	int signo, code;
	uint64_t addr, rip, efl, trapno, err;
	int handler_tf, handler_ac;
	uint16_t cwd, swd, fop;
	uint8_t ftw;
	uint64_t fip, fdp;
	uint32_t mxcsr;
	uint16_t st0e;
	uint64_t st0m;
	int pid_ok;
	uint16_t h_fcw;
	uint32_t h_mxcsr;
};

static struct ev evs[64];
static volatile int nev;
static int clear_tf_after = -1; // clear TF in the saved context at this event
static sigjmp_buf jb;
static volatile int do_jump;
static uint64_t skip_to; // resume here instead (0: the saved rip)

static void handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uint64_t fl;
	__asm__ volatile("pushfq; popq %0" : "=r"(fl));
	uint16_t fcw;
	uint32_t mx;
	__asm__ volatile("fnstcw %0; stmxcsr %1" : "=m"(fcw), "=m"(mx));
	if (nev < 64) {
		struct ev *e = &evs[nev];
		memset(e, 0, sizeof *e);
		e->signo = sig;
		e->code = si->si_code;
		e->addr = (uint64_t)si->si_addr;
		e->rip = uc->uc_mcontext.gregs[REG_RIP];
		e->efl = uc->uc_mcontext.gregs[REG_EFL];
		e->trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
		e->err = uc->uc_mcontext.gregs[REG_ERR];
		e->handler_tf = !!(fl & 0x100);
		e->handler_ac = !!(fl & 0x40000);
		e->h_fcw = fcw;
		e->h_mxcsr = mx;
		if (si->si_code == SI_USER)
			e->pid_ok = si->si_pid == getpid();
		struct _libc_fpstate *fp = uc->uc_mcontext.fpregs;
		if (fp) {
			e->cwd = fp->cwd;
			e->swd = fp->swd;
			e->ftw = fp->ftw;
			e->fop = fp->fop;
			e->fip = fp->rip;
			e->fdp = fp->rdp;
			e->mxcsr = fp->mxcsr;
			memcpy(&e->st0m, fp->_st[0].significand, 8);
			e->st0e = fp->_st[0].exponent;
		}
	}
	nev++;
	if (nev - 1 == clear_tf_after)
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x100ULL;
	if (skip_to) {
		uc->uc_mcontext.gregs[REG_RIP] = skip_to;
		skip_to = 0;
	}
	if (do_jump) {
		do_jump = 0;
		siglongjmp(jb, 1);
	}
}

static const char *signame(int s)
{
	switch (s) {
	case SIGTRAP: return "SIGTRAP";
	case SIGFPE: return "SIGFPE";
	case SIGSEGV: return "SIGSEGV";
	case SIGILL: return "SIGILL";
	case SIGBUS: return "SIGBUS";
	case SIGUSR1: return "SIGUSR1";
	}
	return "?";
}

// rel prints an address relative to base ("+N") or absolutely when far.
static void rel(char *buf, uint64_t a, uint64_t base)
{
	if (a == 0)
		strcpy(buf, "0");
	else if (a - base < 4096)
		sprintf(buf, "+%lu", (unsigned long)(a - base));
	else
		strcpy(buf, "far");
}

static void dump(const char *name, uint64_t base, int fpu)
{
	printf("%s: %d events\n", name, nev);
	for (int i = 0; i < nev && i < 64; i++) {
		struct ev *e = &evs[i];
		char r[32], a[32];
		rel(r, e->rip, base);
		rel(a, e->addr, base);
		printf("  %s code %d addr %s rip %s efl %#lx trapno %lu err %lu htf %d hac %d",
		       signame(e->signo), e->code, e->addr == e->rip ? "=rip" : a, r,
		       (unsigned long)e->efl, (unsigned long)e->trapno, (unsigned long)e->err,
		       e->handler_tf, e->handler_ac);
		if (e->code == SI_USER)
			printf(" pid_ok %d", e->pid_ok);
		if (fpu) {
			char fi[32];
			rel(fi, e->fip, base);
			printf("\n    cwd %#x swd %#x ftw %#x fop %#x fip %s st0 %#x:%#lx mxcsr %#x; handler fcw %#x mxcsr %#x",
			       e->cwd, e->swd, e->ftw, e->fop, fi, e->st0e, (unsigned long)e->st0m, e->mxcsr,
			       e->h_fcw, e->h_mxcsr);
		}
		printf("\n");
	}
	nev = 0;
	clear_tf_after = -1;
}

#define LABEL(n) ".globl " #n "\n" #n ":\n"
// SETTF sets TF and clears the status flags (their values before it
// depend on the stack addresses, which ASLR varies).
#define SETTF "pushq $0x302; popfq\n"
#define CLRTF "pushfq; andq $~0x100, (%%rsp); popfq\n"
extern char tf_basic[], tf_sys[], tf_rep[], tf_int3[], tf_fault[], tf_fault_r[], tf_kill[],
	tf_hclear[], tf_movss[];

static void test_tf(void)
{
	// Traps after each instruction from the one after popf through the
	// popf that clears TF.
	__asm__ volatile(LABEL(tf_basic) SETTF
			 "nop\n"
			 "movl $1, %%eax\n"
			 "addl %%eax, %%eax\n"
			 "jmp 1f\n"
			 "1: " CLRTF
			 "nop\n" ::: "rax", "cc", "memory");
	dump("tf popf", (uint64_t)tf_basic, 0);

	// A syscall while stepping (getpid).
	__asm__ volatile(LABEL(tf_sys) "movl $39, %%eax\n" SETTF
			 "syscall\n"
			 "nop\n" CLRTF ::: "rax", "rcx", "r11", "cc", "memory");
	dump("tf syscall", (uint64_t)tf_sys, 0);

	// REP MOVSB: one trap per iteration.
	static char src[8] = "abcdefg", dst[8];
	char *sp = src, *dp = dst;
	__asm__ volatile(LABEL(tf_rep) "movl $3, %%ecx\n" SETTF
			 "rep movsb\n"
			 "nop\n" CLRTF
			 : "+S"(sp), "+D"(dp)
			 :
			 : "rcx", "cc", "memory");
	dump("tf rep movsb", (uint64_t)tf_rep, 0);

	// INT3 while stepping: SIGTRAP SI_KERNEL after it.
	__asm__ volatile(LABEL(tf_int3) SETTF
			 "int3\n"
			 "nop\n" CLRTF ::: "cc", "memory");
	dump("tf int3", (uint64_t)tf_int3, 0);

	// A fault while stepping: the SIGSEGV handler resumes at tf_fault_r
	// with TF still set in the context, so stepping goes on there.
	skip_to = (uint64_t)tf_fault_r;
	__asm__ volatile(LABEL(tf_fault) "xorl %%eax, %%eax\n" SETTF
			 "movq (%%rax), %%rax\n"
			 "nop\n"
			 LABEL(tf_fault_r) "nop\n" CLRTF ::: "rax", "cc", "memory");
	dump("tf fault", (uint64_t)tf_fault, 0);

	// A signal sent by a syscall while stepping: SIGUSR1's handler runs
	// with TF clear, stepping resumes after its sigreturn.
	__asm__ volatile("movl $39, %%eax\n syscall\n movl %%eax, %%edi\n"
			 "movl $10, %%esi\n"
			 LABEL(tf_kill) "movl $62, %%eax\n" SETTF
			 "syscall\n"
			 "nop\n" CLRTF ::: "rax", "rdi", "rsi", "rcx", "r11", "cc", "memory");
	dump("tf kill", (uint64_t)tf_kill, 0);

	// MOV SS delays the trap past the next instruction (POP SS does
	// not exist in 64-bit mode).
	__asm__ volatile(LABEL(tf_movss) "movl $0x2b, %%eax\n" SETTF
			 "movw %%ax, %%ss\n"
			 "nop\n"
			 "movw %%ax, %%ss\n"
			 "nop\n nop\n" CLRTF ::: "rax", "cc", "memory");
	dump("tf mov ss", (uint64_t)tf_movss, 0);

	// The handler clears TF in the saved context at the second trap.
	clear_tf_after = 1;
	__asm__ volatile(LABEL(tf_hclear) SETTF "nop\n nop\n nop\n nop\n" ::: "cc", "memory");
	dump("tf handler clears", (uint64_t)tf_hclear, 0);
}

extern char x87_div[], x87_inv[], x87_ovf[], x87_ovf_reg[], x87_und[], x87_res[], x87_denorm[], x87_wait[],
	x87_fldcw[], x87_stsw[], x87_stack[], x87_fist[], x87_fcomp[], x87_push[], x87_sqrt[], x87_masked[],
	x87_fninit[], x87_fnclex[], sse_div[], sse_inv[], sse_ovf[], sse_res[];

// Each x87 case unmasks one exception in the control word, raises it, and
// executes a waiting instruction that takes the SIGFPE; the handler jumps
// back here.
#define X87CASE(label, cw, body)                                                                   \
	do {                                                                                       \
		static const uint16_t cwv = cw;                                                    \
		if (!sigsetjmp(jb, 1)) {                                                           \
			do_jump = 1;                                                               \
			__asm__ volatile("fninit\n" LABEL(label) "fldcw %0\n" body ::"m"(cwv)      \
					 : "memory", "st", "st(1)", "st(2)", "st(3)", "st(4)",     \
					   "st(5)", "st(6)", "st(7)");                             \
		}                                                                                  \
		do_jump = 0;                                                                       \
		uint16_t fcw, fsw;                                                                 \
		__asm__ volatile("fnstcw %0; fnstsw %1" : "=m"(fcw), "=m"(fsw));                   \
		dump(#label, (uint64_t)label, 1);                                                  \
		printf("  after: fcw %#x fsw %#x\n", fcw, fsw);                                    \
		__asm__ volatile("fninit");                                                        \
	} while (0)

#define USED __attribute__((used))
USED const double d_one = 1.0, d_zero = 0.0, d_big = 1e308, d_small = 1e-200, d_three = 3.0;
USED const long double ld_big = 1e4900L;
USED const float f_denorm = 1e-40f;
USED const uint16_t unmask = 0x37b;
USED char ac_buf[32] __attribute__((aligned(16)));
extern char f_ljmp_t[];
// Far pointers (m16:32) for ljmp: the user CS and the user data selector.
__asm__(".section .rodata\n"
	"far_ptr: .long f_ljmp_t\n .word 0x33\n"
	"far_bad: .long 0\n .word 0x2b\n"
	".text\n");

static void test_x87(void)
{
	X87CASE(x87_div, 0x37b, "fld1\n fldz\n fdivrp\n nop\n fld1\n");
	X87CASE(x87_inv, 0x37e, "fldz\n fldz\n fdivp\n fwait\n");
	X87CASE(x87_ovf, 0x377, "fldl d_big(%%rip)\n fmul %%st(0), %%st(0)\n fstpl -8(%%rsp)\n fwait\n");
	X87CASE(x87_und, 0x36f, "fldl d_small(%%rip)\n fmul %%st(0), %%st(0)\n fstpl -8(%%rsp)\n fwait\n");
	X87CASE(x87_ovf_reg, 0x377, "fldt ld_big(%%rip)\n fmul %%st(0), %%st(0)\n fwait\n");
	X87CASE(x87_res, 0x35f, "fld1\n fldl d_three(%%rip)\n fdivrp\n fwait\n");
	X87CASE(x87_denorm, 0x37d, "flds f_denorm(%%rip)\n fwait\n");
	// A non-waiting instruction does not take the exception; FNSTSW sees
	// ES and B set.
	X87CASE(x87_stsw, 0x37b, "fld1\n fldz\n fdivrp\n fnstsw %%ax\n fnstcw -8(%%rsp)\n fld1\n");
	// The exception flag set while masked, then unmasked by FLDCW: the
	// next waiting instruction after it takes it.
	X87CASE(x87_fldcw, 0x37f, "fld1\n fldz\n fdivrp\n fldcw unmask(%%rip)\n nop\n fld1\n");
	// Stack underflow with IM unmasked: FLTINV, SF and C1 clear in swd.
	X87CASE(x87_stack, 0x37e, "fadd %%st(0), %%st(0)\n fwait\n");
	// FIST of a value out of the integer range with IM unmasked.
	X87CASE(x87_fist, 0x37e, "fldl d_big(%%rip)\n fistpl -8(%%rsp)\n fwait\n");
	// FCOMP with an empty ST(1) and IM unmasked: no pop.
	X87CASE(x87_fcomp, 0x37e, "fld1\n fcomp %%st(1)\n fwait\n");
	// A ninth push with IM unmasked: stack overflow, nothing pushed.
	X87CASE(x87_push, 0x37e, "fld1\n fld1\n fld1\n fld1\n fld1\n fld1\n fld1\n fldz\n fldpi\n fwait\n");
	// FSQRT of -1 with IM unmasked: ST(0) keeps -1.
	X87CASE(x87_sqrt, 0x37e, "fld1\n fchs\n fsqrt\n fwait\n");
	// All masked: no signal, the masked results.
	X87CASE(x87_masked, 0x37f, "fld1\n fldz\n fdivrp\n fwait\n fldz\n fldz\n fdivp\n fwait\n");
	// FNINIT clears a pending exception: no signal.
	X87CASE(x87_fninit, 0x37b, "fld1\n fldz\n fdivrp\n fninit\n fld1\n fwait\n");
	// FNCLEX clears it too.
	X87CASE(x87_fnclex, 0x37b, "fld1\n fldz\n fdivrp\n fnclex\n fld1\n fwait\n");
}

#define SSECASE(label, mx, body)                                                                   \
	do {                                                                                       \
		static const uint32_t mxv = mx;                                                    \
		if (!sigsetjmp(jb, 1)) {                                                           \
			do_jump = 1;                                                               \
			__asm__ volatile(LABEL(label) "ldmxcsr %0\n" body ::"m"(mxv)               \
					 : "memory", "xmm0", "xmm1");                              \
		}                                                                                  \
		do_jump = 0;                                                                       \
		uint32_t m;                                                                        \
		__asm__ volatile("stmxcsr %0" : "=m"(m));                                          \
		dump(#label, (uint64_t)label, 1);                                                  \
		printf("  after: mxcsr %#x\n", m);                                                 \
		m = 0x1f80;                                                                        \
		__asm__ volatile("ldmxcsr %0" ::"m"(m));                                           \
	} while (0)

static void test_sse(void)
{
	SSECASE(sse_div, 0x1d80, "movsd d_one(%%rip), %%xmm0\n divsd d_zero(%%rip), %%xmm0\n");
	SSECASE(sse_inv, 0x1f00, "movsd d_zero(%%rip), %%xmm0\n divsd d_zero(%%rip), %%xmm0\n");
	SSECASE(sse_ovf, 0x1b80, "movsd d_big(%%rip), %%xmm0\n mulsd %%xmm0, %%xmm0\n");
	SSECASE(sse_res, 0x0f80, "movsd d_one(%%rip), %%xmm0\n divsd d_three(%%rip), %%xmm0\n");
}


extern char f_ud2[], f_gp[], f_pf[], f_de[], f_lret[], f_lretq[], f_lretq_r[], f_segs[], f_lret_cs[],
	f_ljmp[], f_ljmp_bad[];

#define FCASE(name, label, body)                                                                   \
	do {                                                                                       \
		if (!sigsetjmp(jb, 1)) {                                                           \
			do_jump = 1;                                                               \
			__asm__ volatile(LABEL(label) body ::: "rax", "rcx", "rdx", "cc", "memory"); \
		}                                                                                  \
		do_jump = 0;                                                                       \
		dump(name, (uint64_t)label, 0);                                                    \
	} while (0)

static void test_faults(void)
{
	FCASE("ud2", f_ud2, "ud2\n");
	FCASE("gp (hlt)", f_gp, "hlt\n");
	FCASE("pf write", f_pf, "movl $4096, %%eax\n movl $1, (%%rax)\n");
	FCASE("de", f_de, "xorl %%ecx, %%ecx\n movl $1, %%eax\n cltd\n idivl %%ecx\n");
}

// far_call: lcall through m16:32 to f_lcall_t, which returns with lretl.
__asm__(".section .rodata\n"
	"far_call: .long f_lcall_t\n .word 0x33\n"
	"far_ldt: .long 0\n .word 0x4\n"
	".text\n");
extern char f_lret_k[], f_lret_r0[], f_lret_cpu[], f_lret_nc[], f_lret_null[], f_lcall[], f_lcall_t[],
	f_ljmp_ldt[], f_lret16[];

// FARRET pushes cs and the return offset 1f and executes lretq.
#define FARRET(cs, off) "movq %%rsp, %%rdx\n pushq $" #cs "\n " off "\n pushq %%rax\n lretq\n 1: movq %%rdx, %%rsp\n"

static void test_far(void)
{
	// lret (32-bit operand size) pops EIP and a null CS from the 8-byte
	// return address: #GP.
	FCASE("lret32", f_lret, "pushq $0x33\n leaq 1f(%%rip), %%rax\n pushq %%rax\n lretl\n 1:\n");
	// lretq to the user CS works.
	FCASE("lretq", f_lretq, "pushq $0x33\n leaq " "f_lretq_r" "(%%rip), %%rax\n pushq %%rax\n lretq\n ud2\n"
		LABEL(f_lretq_r) "nop\n");
	// lretq to the user data selector: #GP with the selector as error code.
	FCASE("lretq ds", f_lret_cs, FARRET(0x2b, "leaq 1f(%%rip), %%rax"));
	// The kernel CS (DPL 0), the user CS with RPL 0, the CPUNODE data
	// segment, a null selector, a non-canonical offset.
	FCASE("lretq kernel cs", f_lret_k, FARRET(0x10, "leaq 1f(%%rip), %%rax"));
	FCASE("lretq rpl0", f_lret_r0, FARRET(0x30, "leaq 1f(%%rip), %%rax"));
	FCASE("lretq cpunode", f_lret_cpu, FARRET(0x7b, "leaq 1f(%%rip), %%rax"));
	FCASE("lretq null", f_lret_null, FARRET(0x3, "leaq 1f(%%rip), %%rax"));
	FCASE("lretq noncanonical", f_lret_nc, FARRET(0x33, "movabsq $0x8000000000001000, %%rax"));
	// lretw: 16-bit offset and selector.
	FCASE("lretw", f_lret16, "movq %%rsp, %%rdx\n pushw $0x33\n pushw $0\n lretw\n movq %%rdx, %%rsp\n");
	// ljmp through memory (m16:32) to the user CS, and to the data selector.
	FCASE("ljmp", f_ljmp, "ljmp *far_ptr(%%rip)\n ud2\n" LABEL(f_ljmp_t) "nop\n");
	FCASE("ljmp ds", f_ljmp_bad, "ljmp *far_bad(%%rip)\n");
	FCASE("ljmp ldt", f_ljmp_ldt, "ljmp *far_ldt(%%rip)\n");
	// lcall m16:32 pushes CS and EIP (4 bytes each); the target checks
	// the pushed CS and returns with lretl.
	uint64_t pushed = 0;
	__asm__ volatile(LABEL(f_lcall) "lcall *far_call(%%rip)\n jmp 2f\n"
			 LABEL(f_lcall_t) "movl 4(%%rsp), %%eax\n lretl\n 2:\n"
			 : "=a"(pushed)
			 :
			 : "memory");
	printf("lcall: pushed cs %#lx\n", (unsigned long)pushed);
	dump("lcall", (uint64_t)f_lcall, 0);
}

extern char f_ds_k[], f_ds_tls[], f_ds_lim[], f_ds_tss[], f_ss_cs[], f_ss_null[], f_ss_rpl[], f_ss_ro[],
	f_gs_bad[], f_popgs_bad[];

// SEGLOAD loads a selector into a segment register and reads it back.
#define SEGLOAD(reg, sel)                                                                          \
	({                                                                                         \
		uint64_t v_ = 0;                                                                   \
		__asm__ volatile("movl $" #sel ", %%eax\n movw %%ax, %%" #reg "\n movq $-1, %0\n movw %%" #reg \
				 ", %w0\n movzwl %w0, %k0\n"                                       \
				 : "=r"(v_)                                                        \
				 :                                                                 \
				 : "rax", "memory");                                               \
		v_;                                                                                \
	})

static void test_segs(void)
{
	// push/pop fs, gs and mov from segment registers.
	uint64_t v[4];
	__asm__ volatile(LABEL(f_segs) "pushq %%fs\n popq %0\n pushq %%gs\n popq %1\n movw %%fs, %w2\n movq %%ss, %3\n"
			 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]));
	printf("segs: fs %#lx gs %#lx fs16 %#lx ss %#lx\n", (unsigned long)v[0], (unsigned long)v[1],
	       (unsigned long)(v[2] & 0xffff), (unsigned long)v[3]);
	uint64_t cs, ds, es, ss16, pw;
	__asm__ volatile("movq %%cs, %0\n movq %%ds, %1\n movl %%es, %k2\n movq $-1, %3\n movw %%ss, %w3\n"
			 "movq $-1, %%rax\n pushw %%gs\n popw %%ax\n movq %%rax, %4\n"
			 : "=r"(cs), "=r"(ds), "=r"(es), "=r"(ss16), "=r"(pw)
			 :
			 : "rax", "memory");
	printf("segs: cs %#lx ds %#lx es %#lx ss16 %#lx pushw gs %#lx\n", (unsigned long)cs,
	       (unsigned long)ds, (unsigned long)es, (unsigned long)ss16, (unsigned long)pw);
	// Loads Linux allows: null and data selectors, readable code, RPL
	// below 3 into a data segment register, the CPUNODE entry.
	printf("segs: ds 0x2b -> %#lx\n", (unsigned long)SEGLOAD(ds, 0x2b));
	printf("segs: ds 0x2a -> %#lx\n", (unsigned long)SEGLOAD(ds, 0x2a));
	printf("segs: es 0x33 -> %#lx\n", (unsigned long)SEGLOAD(es, 0x33));
	printf("segs: es 0x23 -> %#lx\n", (unsigned long)SEGLOAD(es, 0x23));
	printf("segs: ds 0x7b -> %#lx\n", (unsigned long)SEGLOAD(ds, 0x7b));
	printf("segs: ss 0x2b -> %#lx\n", (unsigned long)SEGLOAD(ss, 0x2b));
	printf("segs: gs 0x2b -> %#lx\n", (unsigned long)SEGLOAD(gs, 0x2b));
	printf("segs: gs 0 -> %#lx\n", (unsigned long)SEGLOAD(gs, 0));
	printf("segs: ds 3 -> %#lx\n", (unsigned long)SEGLOAD(ds, 3));
	printf("segs: es 0 -> %#lx\n", (unsigned long)SEGLOAD(es, 0));
	uint64_t pg = 0;
	__asm__ volatile("pushq $0x2b\n popq %%gs\n movw %%gs, %w0\n pushq $0\n popq %%gs\n" : "+r"(pg)::"memory");
	printf("segs: pop gs 0x2b -> %#lx\n", (unsigned long)pg);
	// Loads that fault: #GP(selector).
	FCASE("ds kernel", f_ds_k, "movl $0x18, %%eax\n movw %%ax, %%ds\n");
	FCASE("ds tls", f_ds_tls, "movl $0x63, %%eax\n movw %%ax, %%ds\n");
	FCASE("ds limit", f_ds_lim, "movl $0x83, %%eax\n movw %%ax, %%ds\n");
	FCASE("ds tss", f_ds_tss, "movl $0x40, %%eax\n movw %%ax, %%ds\n");
	FCASE("ss cs", f_ss_cs, "movl $0x33, %%eax\n movw %%ax, %%ss\n");
	FCASE("ss null", f_ss_null, "xorl %%eax, %%eax\n movw %%ax, %%ss\n");
	FCASE("ss rpl0", f_ss_rpl, "movl $0x28, %%eax\n movw %%ax, %%ss\n");
	FCASE("ss cpunode", f_ss_ro, "movl $0x7b, %%eax\n movw %%ax, %%ss\n");
	FCASE("gs ldt", f_gs_bad, "movl $0x7, %%eax\n movw %%ax, %%gs\n");
	FCASE("pop gs kernel", f_popgs_bad, "movq %%rsp, %%rdx\n pushq $0x10\n popq %%gs\n movq %%rdx, %%rsp\n");
}

// Alignment checking: with RFLAGS.AC set the handler runs with AC still
// set (Linux clears only DF, RF and TF), so it is a small one that only
// stores aligned words, clears AC in the context and resumes at ac_resume.
extern char ac_load[], ac_aligned[], ac_push[], ac_sse[], ac_st16[], ac_byte[], ac_alu[], ac_movsd[], ac_mmx[],
	ac_fldl[], ac_fldt[], ac_fldt8[], ac_call[], ac_ret[], ac_lods[], ac_stos[], ac_stos0[], ac_bt[], ac_cx8[], ac_env[],
	ac_lea[], ac_pushw[], ac_xchg[];
static volatile uint64_t ac_rip, ac_efl, ac_trapno, ac_err, ac_addr, ac_hfl;
static volatile int ac_code, ac_n;
USED uint64_t ac_resume;

__attribute__((optimize("no-tree-slp-vectorize"))) static void ac_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uint64_t fl;
	__asm__ volatile("pushfq; popq %0" : "=r"(fl));
	ac_hfl = fl;
	ac_code = si->si_code;
	ac_addr = (uint64_t)si->si_addr;
	ac_rip = uc->uc_mcontext.gregs[REG_RIP];
	ac_efl = uc->uc_mcontext.gregs[REG_EFL];
	ac_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	ac_err = uc->uc_mcontext.gregs[REG_ERR];
	ac_n++;
	uc->uc_mcontext.gregs[REG_EFL] &= ~0x40000ULL;
	uc->uc_mcontext.gregs[REG_RIP] = ac_resume;
}

#define SETAC "pushq $0x40202; popfq\n"
#define CLRAC "pushfq; andl $~0x40000, (%%rsp); popfq\n"
#define ACCASE(name, label, body)                                                                  \
	do {                                                                                       \
		ac_n = 0;                                                                          \
		__asm__ volatile("movq %%rsp, %%rdx\n leaq " #label "_r(%%rip), %%rax\n"              \
				 "movq %%rax, ac_resume(%%rip)\n" LABEL(label) SETAC body CLRAC   \
				 #label "_r: movq %%rdx, %%rsp\n" ::                                \
				 : "rax", "rdx", "cc", "memory");                                  \
		printf("%s: %d events", name, ac_n);                                               \
		if (ac_n) {                                                                        \
			char r[32];                                                                \
			rel(r, ac_rip, (uint64_t)label);                                           \
			printf(" code %d addr %#lx rip %s efl %#lx trapno %lu err %lu hac %d",   \
			       ac_code, (unsigned long)ac_addr, r, (unsigned long)ac_efl,          \
			       (unsigned long)ac_trapno, (unsigned long)ac_err,                    \
			       !!(ac_hfl & 0x40000));                                              \
		}                                                                                  \
		printf("\n");                                                                      \
	} while (0)

static void test_ac(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = ac_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, 0);
	ACCASE("ac aligned", ac_aligned, "movl 4+ac_buf(%%rip), %%eax\n movq 8+ac_buf(%%rip), %%rax\n");
	ACCASE("ac load", ac_load, "movl 1+ac_buf(%%rip), %%eax\n");
	ACCASE("ac push", ac_push, "leaq -4(%%rsp), %%rsp\n pushq %%rax\n");
	ACCASE("ac movups", ac_sse, "movups 1+ac_buf(%%rip), %%xmm0\n");
	ACCASE("ac store16", ac_st16, "movw %%ax, 3+ac_buf(%%rip)\n");
	ACCASE("ac byte", ac_byte, "movb 3+ac_buf(%%rip), %%al\n incb 5+ac_buf(%%rip)\n");
	ACCASE("ac add mem", ac_alu, "addq %%rax, 12+ac_buf(%%rip)\n");
	ACCASE("ac movsd", ac_movsd, "movsd 4+ac_buf(%%rip), %%xmm0\n");
	ACCASE("ac movq mmx", ac_mmx, "movq 4+ac_buf(%%rip), %%mm0\n emms\n");
	ACCASE("ac fldl", ac_fldl, "fldl 4+ac_buf(%%rip)\n fstp %%st(0)\n");
	ACCASE("ac fldt", ac_fldt, "fldt 4+ac_buf(%%rip)\n fstp %%st(0)\n");
	ACCASE("ac fldt 8", ac_fldt8, "fldt 8+ac_buf(%%rip)\n fstp %%st(0)\n");
	ACCASE("ac call", ac_call, "leaq -4(%%rsp), %%rsp\n call 1f\n 1:\n");
	ACCASE("ac ret", ac_ret, "leaq 1f(%%rip), %%rax\n leaq -12(%%rsp), %%rsp\n movq %%rax, (%%rsp)\n ret\n 1:\n");
	ACCASE("ac lodsl", ac_lods, "leaq 2+ac_buf(%%rip), %%rsi\n lodsl\n");
	ACCASE("ac rep stosw", ac_stos, "pushq %%rdi\n pushq %%rcx\n leaq 1+ac_buf(%%rip), %%rdi\n movl $2, %%ecx\n rep stosw\n");
	ACCASE("ac rep stosw rcx0", ac_stos0, "pushq %%rdi\n pushq %%rcx\n leaq 1+ac_buf(%%rip), %%rdi\n xorl %%ecx, %%ecx\n rep stosw\n popq %%rcx\n popq %%rdi\n");
	ACCASE("ac bt", ac_bt, "movl $40, %%eax\n btl %%eax, 2+ac_buf(%%rip)\n");
	ACCASE("ac cmpxchg8b", ac_cx8, "pushq %%rbx\n pushq %%rcx\n cmpxchg8b 4+ac_buf(%%rip)\n");
	ACCASE("ac fnstenv", ac_env, "fnstenv 2+ac_buf(%%rip)\n");
	ACCASE("ac lea", ac_lea, "leaq 1+ac_buf(%%rip), %%rax\n");
	ACCASE("ac pushw", ac_pushw, "pushw %%ax\n pushq %%rax\n");
	ACCASE("ac xchg", ac_xchg, "xchgl %%eax, 6+ac_buf(%%rip)\n");
}

// Each argument names a section to run (tf x87 sse faults far segs ac);
// no argument runs them all.
static int want(int argc, char **argv, const char *s)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], s))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (int s = 1; s < 32; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, 0);
	setvbuf(stdout, 0, _IONBF, 0);
	if (want(argc, argv, "tf"))
		test_tf();
	if (want(argc, argv, "x87"))
		test_x87();
	if (want(argc, argv, "sse"))
		test_sse();
	if (want(argc, argv, "faults"))
		test_faults();
	if (want(argc, argv, "far"))
		test_far();
	if (want(argc, argv, "segs"))
		test_segs();
	if (want(argc, argv, "ac"))
		test_ac();
	return 0;
}
