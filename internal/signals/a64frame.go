package signals

import (
	"encoding/binary"
	"fmt"
)

// ARM64Context is the arm64 user state a signal frame saves: Linux's
// pt_regs user part (x0..x30, sp, pc, pstate), the FP/SIMD registers, and
// the fault information of the thread (thread.fault_address and
// thread.fault_code, the ESR_EL1 value for a fault; 0 when the signal is
// not a fault, in which case no esr_context record is written).
type ARM64Context struct {
	X            [31]uint64
	SP, PC       uint64
	PState       uint64
	V            [32][2]uint64 // V[n][0] = low 64 bits, V[n][1] = high 64 bits
	FPSR, FPCR   uint32
	FaultAddress uint64
	ESR          uint64
}

// The arm64 rt_sigframe (arch/arm64/kernel/signal.c):
//
//	struct rt_sigframe { struct siginfo info; struct ucontext uc; };
//
// with arm64's struct ucontext (arch/arm64/include/uapi/asm/ucontext.h):
//
//	unsigned long uc_flags;             uc+0
//	struct ucontext *uc_link;           uc+8
//	stack_t uc_stack;                   uc+16 (ss_sp, ss_flags, ss_size)
//	sigset_t uc_sigmask;                uc+40 (8 bytes)
//	__u8 __unused[128 - 8];             uc+48 (pads the mask to glibc's 1024 bits)
//	struct sigcontext uc_mcontext;      uc+176 (aligned 16)
//
// and struct sigcontext (arch/arm64/include/uapi/asm/sigcontext.h):
//
//	__u64 fault_address;                mc+0
//	__u64 regs[31];                     mc+8
//	__u64 sp, pc, pstate;               mc+256, mc+264, mc+272
//	__u8 __reserved[4096];              mc+288 (aligned 16)
//
// Offsets below are from the start of the frame (info at 0, uc at 128).
const (
	a64UC          = 128
	a64UCFlags     = a64UC + 0
	a64UCLink      = a64UC + 8
	a64UCStack     = a64UC + 16
	a64UCSigmask   = a64UC + 40
	a64MC          = a64UC + 176 // 304
	a64FaultAddr   = a64MC + 0
	a64Regs        = a64MC + 8   // 312
	a64SP          = a64MC + 256 // 560
	a64PC          = a64MC + 264 // 568
	a64PState      = a64MC + 272 // 576
	a64Reserved    = a64MC + 288 // 592
	a64ReservedLen = 4096

	// ARM64FrameSize is sizeof(struct rt_sigframe): 128 + 4560.
	ARM64FrameSize = a64Reserved + a64ReservedLen // 4688

	// ARM64FrameRecordSize is sizeof(struct frame_record) {fp, lr}.
	ARM64FrameRecordSize = 16

	// __reserved[] records (_aarch64_ctx {magic, size} headers).
	FPSIMD_MAGIC = 0x46508001
	ESR_MAGIC    = 0x45535201
	EXTRA_MAGIC  = 0x45585401
	SVE_MAGIC    = 0x53564501

	fpsimdContextSize = 8 + 4 + 4 + 32*16 // 528 = 0x210
	esrContextSize    = 16
	terminatorSize    = 16 // TERMINATOR_SIZE: round_up(sizeof(_aarch64_ctx), 16)

	// PSTATE bits.
	pstateNZCV   = 0xF0000000
	pstateTCO    = 1 << 25
	pstateMode   = 0xF  // PSR_MODE_MASK; EL0t is 0
	pstateMode32 = 0x10 // PSR_MODE32_BIT
	pstateDAIF   = 0x3C0
	// SPSR_EL1_AARCH64_RES0_BITS (arch/arm64/kernel/ptrace.c): bits
	// 63:32, 27:26, 23:22, 20:13 and 5, cleared by valid_native_regs.
	pstateRES0 = 0xFFFFFFFF_00000000 | 3<<26 | 3<<22 | 0xFF<<13 | 1<<5
)

// BuildARM64Frame builds the rt_sigframe Linux's setup_rt_frame stacks for
// a handler, from the interrupted state ctx (ctx.SP is the interrupted
// stack pointer), the siginfo (written only when act has SA_SIGINFO, as
// Linux copies it only then; the area stays zero otherwise), the mask to
// restore on return (sigmask_to_save(): the blocked mask, or the saved one
// during rt_sigsuspend/ppoll/pselect6), the action and the thread's
// altstack.
//
// Layout, following get_sigframe and setup_sigframe_layout:
//
//	sp_top = sigsp(sp)                       (ChooseStack)
//	record = round_down(sp_top - 16, 16)     frame_record {x29, x30}: the handler's x29
//	frame  = record - sizeof(rt_sigframe)    the handler's sp (16-aligned)
//
// sigframe_size is max(used, sizeof(struct rt_sigframe)) rounded to 16 and
// the records always fit in __reserved, so the rt_sigframe is exactly
// ARM64FrameSize bytes and the frame record sits right above it. The
// __reserved records are allocated in order, each padded to 16 bytes:
// fpsimd_context (magic FPSIMD_MAGIC, size 528: fpsr, fpcr, vregs[32]);
// esr_context (ESR_MAGIC, size 16, esr) only when ctx.ESR != 0 (Linux:
// thread.fault_code); then the terminating null record (magic 0, size 0).
// uc_flags and uc_link are 0; uc_stack is the altstack as stored
// (__save_altstack writes sas_ss_sp, sas_ss_flags, sas_ss_size).
//
// Bytes covers [frame, record+16): the rt_sigframe and the frame record.
func BuildARM64Frame(ctx *ARM64Context, info *SigInfo, blocked SigSet, act SigAction, alt StackT) (Frame, error) {
	return BuildARM64FrameInto(nil, ctx, info, blocked, act, alt)
}

// BuildARM64FrameInto is BuildARM64Frame with the frame's bytes in
// scratch when it is large enough (cleared first; the caller's buffer,
// reused per delivery), else in a new slice. Frame.Bytes aliases it.
func BuildARM64FrameInto(scratch []byte, ctx *ARM64Context, info *SigInfo, blocked SigSet, act SigAction, alt StackT) (Frame, error) {
	top, onAlt := ChooseStack(ctx.SP, act, alt)
	record := (top - ARM64FrameRecordSize) &^ 15
	addr := record - ARM64FrameSize
	if record > top || addr > record {
		return Frame{}, ErrFrameAddress
	}
	b := frameBuf(scratch, ARM64FrameSize+ARM64FrameRecordSize)
	le := binary.LittleEndian

	if info != nil && act.Flags&SA_SIGINFO != 0 {
		info.MarshalTo(b[0:])
	}
	le.PutUint64(b[a64UCFlags:], 0)
	le.PutUint64(b[a64UCLink:], 0)
	alt.marshalTo(b[a64UCStack:])
	le.PutUint64(b[a64UCSigmask:], uint64(blocked))

	le.PutUint64(b[a64FaultAddr:], ctx.FaultAddress)
	// The loops walk exactly-sized sub-slices (no per-element bounds
	// checks, no copy of the register arrays).
	xs := b[a64Regs : a64Regs+8*len(ctx.X)]
	for i := range ctx.X {
		le.PutUint64(xs[:8], ctx.X[i])
		xs = xs[8:]
	}
	le.PutUint64(b[a64SP:], ctx.SP)
	le.PutUint64(b[a64PC:], ctx.PC)
	le.PutUint64(b[a64PState:], ctx.PState)

	off := a64Reserved
	le.PutUint32(b[off:], FPSIMD_MAGIC)
	le.PutUint32(b[off+4:], fpsimdContextSize)
	le.PutUint32(b[off+8:], ctx.FPSR)
	le.PutUint32(b[off+12:], ctx.FPCR)
	vs := b[off+16 : off+16+16*len(ctx.V)]
	for i := range ctx.V {
		le.PutUint64(vs[:8], ctx.V[i][0])
		le.PutUint64(vs[8:16], ctx.V[i][1])
		vs = vs[16:]
	}
	off += fpsimdContextSize
	if ctx.ESR != 0 {
		le.PutUint32(b[off:], ESR_MAGIC)
		le.PutUint32(b[off+4:], esrContextSize)
		le.PutUint64(b[off+8:], ctx.ESR)
	}
	// Terminator: magic 0, size 0 (already zero).

	le.PutUint64(b[ARM64FrameSize:], ctx.X[29])
	le.PutUint64(b[ARM64FrameSize+8:], ctx.X[30])

	return Frame{
		Addr:        addr,
		Bytes:       b,
		InfoAddr:    addr,
		UCAddr:      addr + a64UC,
		FrameRecord: record,
		OnAltStack:  onAlt,
	}, nil
}

// EnterHandler sets the registers for running the handler of sig from
// frame f, as Linux's setup_return: x0 = sig, sp = the frame, x29 = the
// frame record, pc = the handler, x30 = the return address: act.Restorer
// with SA_RESTORER, else the vDSO's sigreturn trampoline (vdsoSigtramp:
// Linux's __kernel_rt_sigreturn, "mov x8, #139; svc #0"); for SA_SIGINFO
// x1 = &info and x2 = &uc (otherwise x1 and x2 keep their values).
// PSTATE.TCO is cleared (BTYPE is left alone: uvm does not model BTI).
// FP/SIMD registers are left as they are, as on Linux.
func (ctx *ARM64Context) EnterHandler(sig Signal, act SigAction, f Frame, vdsoSigtramp uint64) {
	ctx.X[0] = uint64(sig)
	ctx.SP = f.Addr
	ctx.X[29] = f.FrameRecord
	ctx.PC = act.Handler
	ctx.PState &^= pstateTCO
	if act.Flags&SA_RESTORER != 0 {
		ctx.X[30] = act.Restorer
	} else {
		ctx.X[30] = vdsoSigtramp
	}
	if act.Flags&SA_SIGINFO != 0 {
		ctx.X[1] = f.InfoAddr
		ctx.X[2] = f.UCAddr
	}
}

// ARM64SigreturnFrame returns where rt_sigreturn finds the frame on arm64:
// at sp, which must be 16-byte aligned (else the frame is bad), and the
// number of bytes to read there (ARM64FrameSize; a failed read is a bad
// frame too).
func ARM64SigreturnFrame(sp uint64) (addr uint64, size int, err error) {
	if sp&15 != 0 {
		return sp, ARM64FrameSize, fmt.Errorf("%w: sp %#x not 16-byte aligned", ErrBadFrame, sp)
	}
	return sp, ARM64FrameSize, nil
}

// ParseARM64Frame is rt_sigreturn's restore (restore_sigframe) on arm64.
// frame holds the ARM64FrameSize bytes at the rt_sigreturn-time sp; cur is
// the thread's current state (nil: zero), whose FP state, FaultAddress and
// ESR are kept where the frame does not replace them.
//
// It returns the restored context, the blocked mask from uc_sigmask
// (SIGKILL and SIGSTOP removed, as set_current_blocked does) and the
// frame's uc_stack, which the caller installs with StackT.Set(alt,
// ctx.SP, MINSIGSTKSZ_ARM64) ignoring errors (restore_altstack).
//
// Linux installs the mask first and the general registers next, then
// validates: PSTATE must describe EL0 AArch64 with D, A, I, F clear
// after its RES0 bits are cleared (valid_native_regs, which on failure
// leaves only NZCV); the __reserved records must parse as
// parse_user_sigframe does (16-aligned records inside the 4096 bytes,
// each size >= 8, one fpsimd_context of size 528, esr_context ignored, no
// other magic, a null terminator). On error the returned ctx and blocked
// are what Linux has already installed when it raises SIGSEGV, so the
// caller applies both and then forces SIGSEGV (see ErrBadFrame).
//
// Divergences: uvm has no SVE/SME/etc., so those records are invalid as on
// a kernel without the feature; an extra_context record (which only a
// kernel with SVE generates) is rejected instead of being followed.
func ParseARM64Frame(frame []byte, cur *ARM64Context) (ctx ARM64Context, blocked SigSet, alt StackT, err error) {
	if cur != nil {
		ctx = *cur
	}
	blocked, alt, err = ParseARM64FrameInto(frame, &ctx)
	return ctx, blocked, alt, err
}

// ParseARM64FrameInto is ParseARM64Frame restoring into ctx, which holds
// the current state on entry (no copy of the context in or out).
func ParseARM64FrameInto(frame []byte, ctx *ARM64Context) (blocked SigSet, alt StackT, err error) {
	if len(frame) < ARM64FrameSize {
		return 0, alt, fmt.Errorf("%w: %d bytes, need %d", ErrBadFrame, len(frame), ARM64FrameSize)
	}
	le := binary.LittleEndian
	blocked = SigSet(le.Uint64(frame[a64UCSigmask:])) &^ UnblockableMask
	xs := frame[a64Regs : a64Regs+8*len(ctx.X)]
	for i := range ctx.X {
		ctx.X[i] = le.Uint64(xs[:8])
		xs = xs[8:]
	}
	ctx.SP = le.Uint64(frame[a64SP:])
	ctx.PC = le.Uint64(frame[a64PC:])
	ps := le.Uint64(frame[a64PState:]) &^ pstateRES0
	if ps&pstateMode != 0 || ps&pstateMode32 != 0 || ps&pstateDAIF != 0 {
		ctx.PState = ps & pstateNZCV
		return blocked, alt, fmt.Errorf("%w: pstate %#x is not EL0 AArch64 with DAIF clear", ErrBadFrame, le.Uint64(frame[a64PState:]))
	}
	ctx.PState = ps

	fp, err := findFPSIMD(frame[a64Reserved:ARM64FrameSize])
	if err != nil {
		return blocked, alt, err
	}
	ctx.FPSR = le.Uint32(fp[8:])
	ctx.FPCR = le.Uint32(fp[12:])
	vs := fp[16 : 16+16*len(ctx.V)]
	for i := range ctx.V {
		ctx.V[i][0] = le.Uint64(vs[:8])
		ctx.V[i][1] = le.Uint64(vs[8:16])
		vs = vs[16:]
	}
	alt, _ = UnmarshalStackT(frame[a64UCStack:])
	return blocked, alt, nil
}

// findFPSIMD walks the __reserved records as parse_user_sigframe does and
// returns the fpsimd_context record.
func findFPSIMD(res []byte) ([]byte, error) {
	le := binary.LittleEndian
	limit := uint64(len(res))
	var off uint64
	var fpsimd []byte
	for {
		if limit-off < 8 {
			return nil, fmt.Errorf("%w: __reserved records run past the area at offset %d", ErrBadFrame, off)
		}
		if off%16 != 0 {
			return nil, fmt.Errorf("%w: record at offset %d not 16-byte aligned", ErrBadFrame, off)
		}
		magic := le.Uint32(res[off:])
		size := uint64(le.Uint32(res[off+4:]))
		if limit-off < size {
			return nil, fmt.Errorf("%w: record %#x at offset %d size %d overruns __reserved", ErrBadFrame, magic, off, size)
		}
		switch magic {
		case 0:
			if size != 0 {
				return nil, fmt.Errorf("%w: terminator with size %d", ErrBadFrame, size)
			}
			if fpsimd == nil {
				return nil, fmt.Errorf("%w: no fpsimd_context", ErrBadFrame)
			}
			return fpsimd, nil
		case FPSIMD_MAGIC:
			if fpsimd != nil {
				return nil, fmt.Errorf("%w: two fpsimd_context records", ErrBadFrame)
			}
			if size != fpsimdContextSize {
				return nil, fmt.Errorf("%w: fpsimd_context size %d, want %d", ErrBadFrame, size, fpsimdContextSize)
			}
			fpsimd = res[off : off+size]
		case ESR_MAGIC:
			// Ignored on return, as in Linux.
		default:
			return nil, fmt.Errorf("%w: unsupported record magic %#x at offset %d", ErrBadFrame, magic, off)
		}
		if size < 8 {
			return nil, fmt.Errorf("%w: record %#x size %d", ErrBadFrame, magic, size)
		}
		off += size
	}
}
