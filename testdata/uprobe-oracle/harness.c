/* The uprobe oracle's driver (see README.md): freestanding (no libc), so that
 * the program is small and behaves the same natively and under uvm.
 * Usage: oracle CASE. Prints the state that the case's function leaves. */
typedef unsigned long u64;
typedef unsigned int u32;

struct ocase {
	const char *name;
	void *fn;
	u64 flags;
	u64 regs[16];
	u64 stk[4];
	u64 entry_jmp;
};
extern struct ocase oracle_cases[];
extern u64 oracle_ncases;
extern u64 st_in[25], st_out[25], exit_kind, marker, use_jmp;
extern char mem[], tls[], stack_area[];
extern void run_case(void *fn), fault_exit(void), sig_restorer(void);

static long sys(long n, long a, long b, long c, long d) {
	long r;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return r;
}

static char obuf[8192];
static int olen;
static void puts_(const char *s) { while (*s && olen < (int)sizeof obuf) obuf[olen++] = *s++; }
static void hex(u64 v) {
	char b[19];
	int i;
	b[0] = '0', b[1] = 'x';
	for (i = 0; i < 16; i++) b[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
	b[18] = 0;
	puts_(b);
}
static int streq(const char *a, const char *b) {
	while (*a && *a == *b) a++, b++;
	return *a == *b;
}

static u64 sig_no, sig_code, sig_addr, sig_rip;

/* ucontext: uc_flags, uc_link, uc_stack (24 bytes), then gregs[23]:
 * r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags, ...; then
 * the fpregs pointer (xmm0 at offset 160 of the fxsave area). */
static const int greg_of[16] = {13, 14, 12, 11, 15, 10, 9, 8, 0, 1, 2, 3, 4, 5, 6, 7};
static void handler(int sig, void *info, void *ucv) {
	u64 *uc = ucv, *g = uc + 5, *fp = (u64 *)g[23];
	int i;
	sig_no = sig;
	sig_code = ((int *)info)[2];
	sig_addr = ((u64 *)info)[2];
	sig_rip = g[16];
	for (i = 0; i < 16; i++) st_out[i] = g[greg_of[i]];
	st_out[16] = g[17];
	if (fp)
		for (i = 0; i < 8; i++) st_out[17 + i] = fp[20 + i];
	exit_kind = 2;
	g[16] = (u64)fault_exit;
	g[17] &= ~0x500UL; /* TF, DF */
}

struct ksigaction { void *h; u64 flags; void *restorer; u64 mask; };

int cmain(u64 *sp) {
	char **argv = (char **)(sp + 1);
	struct ocase *c = 0;
	u64 i;
	static const int sigs[] = {4, 5, 7, 8, 11};
	if (sp[0] < 2) return 2;
	for (i = 0; i < oracle_ncases; i++)
		if (streq(oracle_cases[i].name, argv[1])) c = &oracle_cases[i];
	if (!c) return 3;
	{
		/* The case's stack is 256 bytes: signal frames go on an
		 * alternate stack (SA_ONSTACK). */
		static char altstack[65536] __attribute__((aligned(64)));
		struct { void *sp; int flags; u64 size; } ss = {altstack, 0, sizeof altstack};
		sys(131, (long)&ss, 0, 0, 0); /* sigaltstack */
	}
	for (i = 0; i < 5; i++) {
		struct ksigaction sa = {handler, 0x4 | 0x08000000 | 0x04000000 | 0x40000000, sig_restorer, 0};
		sys(13, sigs[i], (long)&sa, 0, 8); /* rt_sigaction, SA_SIGINFO|SA_ONSTACK|SA_RESTORER|SA_NODEFER */
	}
	sys(158, 0x1002, (long)tls, 0, 0); /* arch_prctl(ARCH_SET_FS) */
	for (i = 0; i < 64; i++) mem[i] = (char)(0x10 + i);
	for (i = 0; i < 64; i++) tls[i] = (char)(0xa0 + i);
	for (i = 0; i < 256; i++) stack_area[i] = (char)(0x40 + i);
	for (i = 0; i < 16; i++) st_in[i] = c->regs[i];
	st_in[4] = (u64)(stack_area + 128);
	for (i = 0; i < 4; i++) ((u64 *)(stack_area + 128))[i] = c->stk[i];
	st_in[16] = c->flags;
	for (i = 0; i < 8; i++) st_in[17 + i] = 0x0706050403020100UL + 0x0808080808080808UL * i;
	use_jmp = c->entry_jmp;
	run_case(c->fn);
	puts_("exit ");
	hex(exit_kind);
	puts_(" marker ");
	hex(marker);
	puts_("\n");
	for (i = 0; i < 25; i++) {
		static const char *const nm[25] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9",
			"r10", "r11", "r12", "r13", "r14", "r15", "rflags", "xmm0.lo", "xmm0.hi", "xmm1.lo",
			"xmm1.hi", "xmm2.lo", "xmm2.hi", "xmm3.lo", "xmm3.hi"};
		puts_(nm[i]);
		puts_(" ");
		hex(st_out[i]);
		puts_("\n");
	}
	if (exit_kind == 2) {
		puts_("signal ");
		hex(sig_no);
		puts_(" code ");
		hex(sig_code);
		puts_(" addr ");
		hex(sig_addr);
		puts_(" rip ");
		hex(sig_rip);
		puts_("\n");
	}
	for (i = 0; i < 32; i++) {
		puts_(i < 16 ? "stack " : "mem ");
		hex(i < 16 ? ((u64 *)(stack_area + 64))[i] : ((u64 *)mem)[i - 16]);
		puts_("\n");
	}
	{
		/* The XOL area, for the comparison to normalise addresses in it. */
		static char maps[16384];
		long fd = sys(2, (long)"/proc/self/maps", 0, 0, 0), n = 0, r;
		if (fd >= 0) {
			while (n < (long)sizeof maps - 1 && (r = sys(0, fd, (long)maps + n, sizeof maps - 1 - n, 0)) > 0) n += r;
			sys(3, fd, 0, 0, 0);
		}
		maps[n] = 0;
		for (r = 0; r < n;) {
			long e = r, k;
			while (e < n && maps[e] != '\n') e++;
			for (k = r; k + 9 <= e; k++)
				if (maps[k] == '[' && maps[k + 1] == 'u' && maps[k + 2] == 'p' && maps[k + 8] == ']') {
					maps[e] = 0;
					puts_("xol ");
					puts_(maps + r);
					puts_("\n");
					break;
				}
			r = e + 1;
		}
	}
	sys(1, 1, (long)obuf, olen, 0);
	return 0;
}
