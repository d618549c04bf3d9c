// simdoracle: executes one A64 instruction per test case under a real
// (or qemu-emulated) CPU and reports the resulting state. It is the oracle
// for simd_oracle_test.go. Build with build-simdoracle.sh.
//
// stdin: a stream of cases, CASE_IN bytes each:
//     0  v0..v31        512 bytes
//   512  x0..x15        128 bytes
//   640  FPCR, FPSR, NZCV (8 bytes each)
//   664  instruction word, 4 bytes pad
//   672  256 bytes copied to `scratch` before the instruction
// stdout: per case, CASE_OUT bytes:
//     0  v0..v31, 512  x0..x15, 640 FPSR, 648 NZCV, 656 scratch (256 bytes)
// The instruction may only use general registers x0..x15.

	.set CASE_IN, 928
	.set CASE_OUT, 912

	.text
	.global _start
_start:
	// code slot: mmap(0, 4096, RWX, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)
	mov	x0, #0
	mov	x1, #4096
	mov	x2, #7
	mov	x3, #0x22
	mov	x4, #-1
	mov	x5, #0
	mov	x8, #222
	svc	#0
	mov	x19, x0
	adrp	x20, inbuf
	add	x20, x20, :lo12:inbuf
	adrp	x23, outbuf
	add	x23, x23, :lo12:outbuf
	add	x25, x20, #512
	add	x26, x23, #512
	adrp	x24, scratch
	add	x24, x24, :lo12:scratch

next:
	// read one case
	mov	x21, #CASE_IN
	mov	x22, x20
1:	mov	x0, #0
	mov	x1, x22
	mov	x2, x21
	mov	x8, #63
	svc	#0
	cmp	x0, #0
	b.le	done
	add	x22, x22, x0
	sub	x21, x21, x0
	cbnz	x21, 1b

	// scratch <- case memory
	mov	x9, #0
2:	add	x10, x20, #672
	ldr	x11, [x10, x9]
	str	x11, [x24, x9]
	add	x9, x9, #8
	cmp	x9, #256
	b.lt	2b

	// code slot: insn; br x17
	ldr	w9, [x20, #664]
	str	w9, [x19]
	movz	w9, #0x0220
	movk	w9, #0xd61f, lsl #16
	str	w9, [x19, #4]
	dc	cvau, x19
	dsb	ish
	ic	ivau, x19
	dsb	ish
	isb

	ldr	x9, [x20, #640]
	msr	fpcr, x9
	ldr	x9, [x20, #648]
	msr	fpsr, x9
	ldr	x9, [x20, #656]
	msr	nzcv, x9
	ldp	q0, q1, [x20, #0]
	ldp	q2, q3, [x20, #32]
	ldp	q4, q5, [x20, #64]
	ldp	q6, q7, [x20, #96]
	ldp	q8, q9, [x20, #128]
	ldp	q10, q11, [x20, #160]
	ldp	q12, q13, [x20, #192]
	ldp	q14, q15, [x20, #224]
	ldp	q16, q17, [x20, #256]
	ldp	q18, q19, [x20, #288]
	ldp	q20, q21, [x20, #320]
	ldp	q22, q23, [x20, #352]
	ldp	q24, q25, [x20, #384]
	ldp	q26, q27, [x20, #416]
	ldp	q28, q29, [x20, #448]
	ldp	q30, q31, [x20, #480]
	ldp	x0, x1, [x25, #0]
	ldp	x2, x3, [x25, #16]
	ldp	x4, x5, [x25, #32]
	ldp	x6, x7, [x25, #48]
	ldp	x8, x9, [x25, #64]
	ldp	x10, x11, [x25, #80]
	ldp	x12, x13, [x25, #96]
	ldp	x14, x15, [x25, #112]
	adr	x17, back
	br	x19
back:
	stp	q0, q1, [x23, #0]
	stp	q2, q3, [x23, #32]
	stp	q4, q5, [x23, #64]
	stp	q6, q7, [x23, #96]
	stp	q8, q9, [x23, #128]
	stp	q10, q11, [x23, #160]
	stp	q12, q13, [x23, #192]
	stp	q14, q15, [x23, #224]
	stp	q16, q17, [x23, #256]
	stp	q18, q19, [x23, #288]
	stp	q20, q21, [x23, #320]
	stp	q22, q23, [x23, #352]
	stp	q24, q25, [x23, #384]
	stp	q26, q27, [x23, #416]
	stp	q28, q29, [x23, #448]
	stp	q30, q31, [x23, #480]
	stp	x0, x1, [x26, #0]
	stp	x2, x3, [x26, #16]
	stp	x4, x5, [x26, #32]
	stp	x6, x7, [x26, #48]
	stp	x8, x9, [x26, #64]
	stp	x10, x11, [x26, #80]
	stp	x12, x13, [x26, #96]
	stp	x14, x15, [x26, #112]
	mrs	x9, fpsr
	str	x9, [x23, #640]
	mrs	x9, nzcv
	str	x9, [x23, #648]
	mov	x9, #0
3:	add	x10, x23, #656
	ldr	x11, [x24, x9]
	str	x11, [x10, x9]
	add	x9, x9, #8
	cmp	x9, #256
	b.lt	3b

	// write the result
	mov	x21, #CASE_OUT
	mov	x22, x23
4:	mov	x0, #1
	mov	x1, x22
	mov	x2, x21
	mov	x8, #64
	svc	#0
	cmp	x0, #0
	b.le	done
	add	x22, x22, x0
	sub	x21, x21, x0
	cbnz	x21, 4b
	b	next

done:
	mov	x0, #0
	mov	x8, #93
	svc	#0

	.bss
	.balign	4096
	.global scratch
scratch:
	.skip	4096
	.balign	16
inbuf:	.skip	928
	.balign	16
outbuf:	.skip	912
