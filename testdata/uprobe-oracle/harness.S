# The uprobe oracle's run-time harness (see README.md). run_case loads the
# guest registers and flags from st_in, enters the case function (call, or
# jmp with the prepared stack), and every way out of it (case_exit, the
# return to the harness, the signal handler's fault_exit) records the
# registers and flags in st_out. Stores use absolute addresses (the program
# is linked static and non-PIE) so that recording changes no register and
# no flag; the registers are in x86 numbering (rax rcx rdx rbx rsp rbp rsi
# rdi r8..r15), then rflags, then xmm0..xmm3.
	.data
	.balign 64
	.globl st_in, st_out, exit_kind, marker, use_jmp, target
st_in:	.space 8*17+16*4
	.balign 64
st_out:	.space 8*17+16*4
saved_rsp: .quad 0
exit_kind: .quad 0
marker:	.quad 0
use_jmp: .quad 0
target:	.quad 0
	.bss
	.balign 16
	.space 4096
scratch_top:

	.text
	.globl run_case, case_exit, fault_exit, landing
	.type run_case,@function
run_case:
	push %rbx; push %rbp; push %r12; push %r13; push %r14; push %r15
	mov %rdi, target
	mov %rsp, saved_rsp
	movq $0, marker
	movdqu st_in+136, %xmm0
	movdqu st_in+152, %xmm1
	movdqu st_in+168, %xmm2
	movdqu st_in+184, %xmm3
	cmpq $0, use_jmp
	jne .Ljmp
	pushq st_in+128
	popfq
	mov st_in+0, %rax; mov st_in+8, %rcx; mov st_in+16, %rdx; mov st_in+24, %rbx
	mov st_in+40, %rbp; mov st_in+48, %rsi; mov st_in+56, %rdi
	mov st_in+64, %r8; mov st_in+72, %r9; mov st_in+80, %r10; mov st_in+88, %r11
	mov st_in+96, %r12; mov st_in+104, %r13; mov st_in+112, %r14; mov st_in+120, %r15
	mov st_in+32, %rsp
	call *target
landing:
	movq $1, exit_kind
	jmp record
.Ljmp:
	pushq st_in+128
	popfq
	mov st_in+0, %rax; mov st_in+8, %rcx; mov st_in+16, %rdx; mov st_in+24, %rbx
	mov st_in+40, %rbp; mov st_in+48, %rsi; mov st_in+56, %rdi
	mov st_in+64, %r8; mov st_in+72, %r9; mov st_in+80, %r10; mov st_in+88, %r11
	mov st_in+96, %r12; mov st_in+104, %r13; mov st_in+112, %r14; mov st_in+120, %r15
	mov st_in+32, %rsp
	jmp *target
case_exit:
	movq $0, exit_kind
record:
	mov %rax, st_out+0; mov %rcx, st_out+8; mov %rdx, st_out+16; mov %rbx, st_out+24
	mov %rsp, st_out+32; mov %rbp, st_out+40; mov %rsi, st_out+48; mov %rdi, st_out+56
	mov %r8, st_out+64; mov %r9, st_out+72; mov %r10, st_out+80; mov %r11, st_out+88
	mov %r12, st_out+96; mov %r13, st_out+104; mov %r14, st_out+112; mov %r15, st_out+120
	mov $scratch_top, %rsp
	pushfq
	popq st_out+128
	cld
	movdqu %xmm0, st_out+136
	movdqu %xmm1, st_out+152
	movdqu %xmm2, st_out+168
	movdqu %xmm3, st_out+184
fault_exit:
	mov saved_rsp, %rsp
	pop %r15; pop %r14; pop %r13; pop %r12; pop %rbp; pop %rbx
	ret

	.globl _start, sig_restorer
_start:
	mov %rsp, %rdi
	and $-16, %rsp
	call cmain
	mov %eax, %edi
	mov $231, %eax
	syscall
	hlt
sig_restorer:
	mov $15, %eax
	syscall
	hlt
	.section .note.GNU-stack,"",@progbits
