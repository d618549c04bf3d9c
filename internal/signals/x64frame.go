package signals

import (
	"encoding/binary"
	"fmt"
)

// AMD64Context is the x86-64 user state a signal frame saves. GPR is in
// instruction-encoding order (see RAX..R15). FS and GS are the selectors
// (not the bases; Linux saves them as 0 and never restores them). Err,
// Trapno and CR2 are the thread's fault information (thread.error_code,
// trap_nr, cr2): for a page fault 14, the page-fault error code and the
// address; for other signals whatever the thread last had (often 0).
// FXSave is the FXSAVE image of the x87/SSE state (FCW @0, FSW @2, FTW @4,
// MXCSR @24, MXCSR_MASK @28, ST0-7 @32, XMM0-15 @160); the CPU model fills
// MXCSR_MASK as FXSAVE would (MXCSRMask).
type AMD64Context struct {
	GPR            [16]uint64
	RIP, RFLAGS    uint64
	CS, FS, GS, SS uint16
	Err, Trapno    uint64
	CR2            uint64
	FXSave         [512]byte
	// XFeatures is the CPU model's XCR0 for the signal frame: 0 without
	// XSAVE (the 512-byte FXSAVE fpstate), x87|SSE|AVX (7) for the
	// extended fpstate of x64xstate.go. AVX is then the YMM_Hi128
	// component: bits 255:128 of ymm0..ymm15, 16 bytes each.
	XFeatures uint64
	AVX       [256]byte
}

// GPR indexes (the ModRM/REX encoding order).
const (
	RAX = iota
	RCX
	RDX
	RBX
	RSP
	RBP
	RSI
	RDI
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
)

// x86-64 constants.
const (
	// User segment selectors (arch/x86/include/asm/segment.h).
	USER_CS = 0x33
	USER_DS = 0x2b

	// uc_flags bits (arch/x86/include/uapi/asm/ucontext.h).
	UC_FP_XSTATE         = 0x1
	UC_SIGCONTEXT_SS     = 0x2
	UC_STRICT_RESTORE_SS = 0x4

	// RFLAGS bits.
	flagCF = 1 << 0
	flagPF = 1 << 2
	flagAF = 1 << 4
	flagZF = 1 << 6
	flagSF = 1 << 7
	flagTF = 1 << 8
	flagDF = 1 << 10
	flagOF = 1 << 11
	flagRF = 1 << 16
	flagAC = 1 << 18

	// FIX_EFLAGS (arch/x86/include/asm/sighandling.h): the RFLAGS bits
	// rt_sigreturn takes from the frame; the others keep their values.
	FIX_EFLAGS = flagAC | flagOF | flagDF | flagTF | flagSF | flagZF | flagAF | flagPF | flagCF | flagRF

	// MXCSRMask is the MXCSR_MASK uvm's x86 CPU reports (DAZ supported):
	// MXCSR bits outside it make FXRSTOR, and so rt_sigreturn, fail.
	MXCSRMask = 0x0000FFFF

	// FP_XSTATE_MAGIC1 marks the fpstate's software-reserved bytes.
	FP_XSTATE_MAGIC1 = 0x46505853

	redZone         = 128
	fxsaveSize      = 512
	fxSWReservedOff = 464 // fxregs_state.sw_reserved (struct _fpx_sw_bytes)
)

// The x86-64 rt_sigframe (arch/x86/include/asm/sigframe.h):
//
//	char *pretcode;                     +0   the return address: sa_restorer
//	struct ucontext uc;                 +8
//	struct siginfo info;                +312
//	(fp state follows, 64-byte aligned)
//
// struct ucontext (include/uapi/asm-generic/ucontext.h, used by x86):
//
//	unsigned long uc_flags;             uc+0
//	struct ucontext *uc_link;           uc+8
//	stack_t uc_stack;                   uc+16
//	struct sigcontext uc_mcontext;      uc+40 (256 bytes)
//	sigset_t uc_sigmask;                uc+296
//
// struct sigcontext (arch/x86/include/uapi/asm/sigcontext.h, 64-bit):
// r8..r15 @0..56, rdi 64, rsi 72, rbp 80, rbx 88, rdx 96, rax 104, rcx 112,
// rsp 120, rip 128, eflags 136, cs 144, gs 146, fs 148, ss 150, err 152,
// trapno 160, oldmask 168, cr2 176, fpstate 184, reserved1[8] 192.
// So rip is at uc+0xa8 (mcontext+0x80), as glibc's REG_RIP says.
const (
	x64UC        = 8
	x64UCFlags   = x64UC + 0
	x64UCLink    = x64UC + 8
	x64UCStack   = x64UC + 16
	x64MC        = x64UC + 40 // 48
	x64UCSigmask = x64UC + 296
	x64Info      = x64UC + 304 // 312

	// AMD64FrameSize is sizeof(struct rt_sigframe): 8 + 304 + 128.
	AMD64FrameSize = x64Info + SigInfoSize // 440

	scR8      = 0
	scRDI     = 64
	scRSI     = 72
	scRBP     = 80
	scRBX     = 88
	scRDX     = 96
	scRAX     = 104
	scRCX     = 112
	scRSP     = 120
	scRIP     = 128
	scEFLAGS  = 136
	scCS      = 144
	scGS      = 146
	scFS      = 148
	scSS      = 150
	scErr     = 152
	scTrapno  = 160
	scOldmask = 168
	scCR2     = 176
	scFPState = 184
)

// sigcontext offset of each GPR (by encoding index).
var scGPR = [16]int{
	RAX: scRAX, RCX: scRCX, RDX: scRDX, RBX: scRBX, RSP: scRSP, RBP: scRBP,
	RSI: scRSI, RDI: scRDI, R8: scR8, R9: scR8 + 8, R10: scR8 + 16, R11: scR8 + 24,
	R12: scR8 + 32, R13: scR8 + 40, R14: scR8 + 48, R15: scR8 + 56,
}

// BuildAMD64Frame builds the rt_sigframe Linux's x64_setup_rt_frame
// stacks for a handler. ctx is the interrupted state (GPR[RSP] its stack
// pointer); info is written only with SA_SIGINFO (zero otherwise); blocked
// is the mask to restore on return (sigmask_to_save()); act must have
// SA_RESTORER (ErrNoRestorer otherwise, as Linux); alt is the altstack.
//
// Layout, following get_sigframe and fpu__alloc_mathframe for a CPU
// without XSAVE (uvm does not advertise it):
//
//	sp      = rsp - 128                              skip the red zone
//	sp      = altstack top if SA_ONSTACK and sas_ss_flags(sp) == 0
//	fpstate = round_down(sp - 512, 64)               FXSAVE image
//	frame   = round_down(fpstate - 440, 16) - 8      rt_sigframe
//
// so at handler entry rsp = frame and (rsp + 8) is 16-aligned, as after a
// call. If the thread was on the altstack (on_sig_stack(rsp)) or switches
// to it, the frame must lie inside it (ErrAltStackOverflow otherwise).
// uc_flags is UC_SIGCONTEXT_SS|UC_STRICT_RESTORE_SS (no UC_FP_XSTATE
// without XSAVE). The fpstate is ctx.FXSave with the software-reserved
// bytes 464..511 set as current Linux does even without XSAVE
// (save_xstate_epilog → save_sw_bytes): magic1 FP_XSTATE_MAGIC1,
// extended_size 516, xfeatures 0, xstate_size 512; FP_XSTATE_MAGIC2 is
// not written (only with XSAVE). The sigcontext saves fs and gs as 0 and
// oldmask = blocked.
//
// Bytes covers [frame, fpstate+512).
func BuildAMD64Frame(ctx *AMD64Context, info *SigInfo, blocked SigSet, act SigAction, alt StackT) (Frame, error) {
	return BuildAMD64FrameInto(nil, ctx, info, blocked, act, alt)
}

// BuildAMD64FrameInto is BuildAMD64Frame with the frame's bytes in
// scratch when it is large enough (cleared first; the caller's buffer,
// reused per delivery), else in a new slice. Frame.Bytes aliases it.
func BuildAMD64FrameInto(scratch []byte, ctx *AMD64Context, info *SigInfo, blocked SigSet, act SigAction, alt StackT) (Frame, error) {
	if act.Flags&SA_RESTORER == 0 {
		return Frame{}, ErrNoRestorer
	}
	rsp := ctx.GPR[RSP]
	nested := alt.OnStack(rsp)
	sp := rsp - redZone
	entering := false
	if act.Flags&SA_ONSTACK != 0 && alt.SSFlags(sp) == 0 {
		sp = alt.SP + alt.Size
		entering = true
	}
	xsize := ctx.amd64XSize()
	mathSize := xsize
	if ctx.XFeatures != 0 {
		mathSize += 4 // FP_XSTATE_MAGIC2
	}
	fpstate := (sp - mathSize) &^ 63
	addr := ((fpstate - AMD64FrameSize) &^ 15) - 8
	if (!entering && rsp < redZone) || fpstate > sp || addr > fpstate {
		return Frame{}, ErrFrameAddress
	}
	if (nested || entering) && !alt.within(addr) {
		return Frame{}, ErrAltStackOverflow
	}

	b := frameBuf(scratch, int(fpstate+mathSize-addr))
	le := binary.LittleEndian
	le.PutUint64(b[0:], act.Restorer)
	ucFlags := uint64(UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS)
	if ctx.XFeatures != 0 {
		ucFlags |= UC_FP_XSTATE
	}
	le.PutUint64(b[x64UCFlags:], ucFlags)
	le.PutUint64(b[x64UCLink:], 0)
	alt.marshalTo(b[x64UCStack:])
	mc := b[x64MC : x64MC+256]
	for i, off := range scGPR {
		le.PutUint64(mc[off:], ctx.GPR[i])
	}
	le.PutUint64(mc[scRIP:], ctx.RIP)
	le.PutUint64(mc[scEFLAGS:], ctx.RFLAGS)
	le.PutUint16(mc[scCS:], ctx.CS)
	le.PutUint16(mc[scGS:], 0)
	le.PutUint16(mc[scFS:], 0)
	le.PutUint16(mc[scSS:], ctx.SS)
	le.PutUint64(mc[scErr:], ctx.Err)
	le.PutUint64(mc[scTrapno:], ctx.Trapno)
	le.PutUint64(mc[scOldmask:], uint64(blocked))
	le.PutUint64(mc[scCR2:], ctx.CR2)
	le.PutUint64(mc[scFPState:], fpstate)
	le.PutUint64(b[x64UCSigmask:], uint64(blocked))
	if info != nil && act.Flags&SA_SIGINFO != 0 {
		info.MarshalTo(b[x64Info:])
	}

	fx := b[fpstate-addr:]
	if ctx.XFeatures != 0 {
		ctx.writeXState(fx)
		return Frame{
			Addr:       addr,
			Bytes:      b,
			InfoAddr:   addr + x64Info,
			UCAddr:     addr + x64UC,
			FPState:    fpstate,
			OnAltStack: nested || entering,
		}, nil
	}
	copy(fx, ctx.FXSave[:])
	sw := fx[fxSWReservedOff:fxsaveSize]
	clear(sw)
	le.PutUint32(sw[0:], FP_XSTATE_MAGIC1)
	le.PutUint32(sw[4:], fxsaveSize+4) // extended_size: user_size + FP_XSTATE_MAGIC2_SIZE
	le.PutUint64(sw[8:], 0)            // xfeatures: no XSAVE features
	le.PutUint32(sw[16:], fxsaveSize)  // xstate_size

	return Frame{
		Addr:       addr,
		Bytes:      b,
		InfoAddr:   addr + x64Info,
		UCAddr:     addr + x64UC,
		FPState:    fpstate,
		OnAltStack: nested || entering,
	}, nil
}

// AMD64InitFXSave returns the FXSAVE image of the initial FPU state
// (init_fpstate: FCW 0x37f, MXCSR 0x1f80, all registers zero; MXCSR_MASK
// as the CPU reports it).
func AMD64InitFXSave() [512]byte {
	var fx [512]byte
	binary.LittleEndian.PutUint16(fx[0:], 0x37f)
	binary.LittleEndian.PutUint32(fx[24:], 0x1f80)
	binary.LittleEndian.PutUint32(fx[28:], MXCSRMask)
	return fx
}

// EnterHandler sets the registers for running the handler of sig from
// frame f, as Linux's x64_setup_rt_frame and handle_signal: rdi = sig,
// rax = 0, rsi = &info, rdx = &uc (set even without SA_SIGINFO), rip = the
// handler, rsp = the frame (its first word, pretcode, is the return
// address), cs = __USER_CS, ss = __USER_DS unless it already is (uvm's
// force_valid_ss: 0x2b is the only valid user data selector), RFLAGS
// without DF, RF and TF, and the FPU reset to its initial state
// (fpu__clear_user_states).
func (ctx *AMD64Context) EnterHandler(sig Signal, act SigAction, f Frame) {
	ctx.EnterHandlerRegs(sig, act, f)
	ctx.FXSave = AMD64InitFXSave()
	ctx.AVX = [256]byte{}
}

// EnterHandlerRegs is EnterHandler without the FPU reset, for a caller
// that resets its FPU registers directly (ctx's FXSave and AVX are left
// as they are).
func (ctx *AMD64Context) EnterHandlerRegs(sig Signal, act SigAction, f Frame) {
	ctx.GPR[RDI] = uint64(sig)
	ctx.GPR[RAX] = 0
	ctx.GPR[RSI] = f.InfoAddr
	ctx.GPR[RDX] = f.UCAddr
	ctx.RIP = act.Handler
	ctx.GPR[RSP] = f.Addr
	ctx.CS = USER_CS
	if ctx.SS != USER_DS {
		ctx.SS = USER_DS
	}
	ctx.RFLAGS &^= flagDF | flagRF | flagTF
}

// AMD64SigreturnFrame returns where rt_sigreturn finds the frame on
// x86-64: at rsp - 8, because the handler's ret popped pretcode and the
// restorer ("mov $15, %eax; syscall") runs with rsp = frame + 8; and the
// number of bytes to read there (AMD64FrameSize; a failed read is a bad
// frame). There is no alignment requirement.
func AMD64SigreturnFrame(rsp uint64) (addr uint64, size int) {
	return rsp - 8, AMD64FrameSize
}

// ParseAMD64Frame is rt_sigreturn's restore on x86-64 (the
// rt_sigreturn syscall and restore_sigcontext). frame holds the
// AMD64FrameSize bytes at AMD64SigreturnFrame(rsp); cur is the state at
// the rt_sigreturn syscall (nil: zero).
//
// It returns the restored context, the blocked mask from uc_sigmask
// (SIGKILL and SIGSTOP removed), the frame's uc_stack (install it with
// StackT.Set(alt, ctx.GPR[RSP], MINSIGSTKSZ_AMD64), ignoring errors) and
// the fpstate pointer from the sigcontext. The caller then calls
// RestoreAMD64FPState with the 512 bytes at fpstate (none when it is 0).
//
// Restored: all 16 GPRs (rax too: it is the syscall's return value), rip;
// cs = sc.cs|3 and ss = sc.ss|3, and without UC_STRICT_RESTORE_SS in
// uc_flags a 64-bit context gets ss = __USER_DS unless it is a valid data
// selector (force_valid_ss); RFLAGS = (cur & ^FIX_EFLAGS) | (sc & FIX_EFLAGS).
// Not restored (kept from cur): FS, GS, Err, Trapno, CR2, the FPU state
// (RestoreAMD64FPState does it). The frame itself is not validated beyond
// its length: Linux's checks are the read (access_ok) and the FPU restore.
func ParseAMD64Frame(frame []byte, cur *AMD64Context) (ctx AMD64Context, blocked SigSet, alt StackT, fpstate uint64, err error) {
	if cur != nil {
		ctx = *cur
	}
	blocked, alt, fpstate, err = ParseAMD64FrameInto(frame, &ctx)
	return ctx, blocked, alt, fpstate, err
}

// ParseAMD64FrameInto is ParseAMD64Frame restoring into ctx, which holds
// the current state on entry (no copy of the context in or out).
func ParseAMD64FrameInto(frame []byte, ctx *AMD64Context) (blocked SigSet, alt StackT, fpstate uint64, err error) {
	if len(frame) < AMD64FrameSize {
		return 0, alt, 0, fmt.Errorf("%w: %d bytes, need %d", ErrBadFrame, len(frame), AMD64FrameSize)
	}
	le := binary.LittleEndian
	blocked = SigSet(le.Uint64(frame[x64UCSigmask:])) &^ UnblockableMask
	ucFlags := le.Uint64(frame[x64UCFlags:])
	mc := frame[x64MC : x64MC+256]
	for i, off := range scGPR {
		ctx.GPR[i] = le.Uint64(mc[off:])
	}
	ctx.RIP = le.Uint64(mc[scRIP:])
	ctx.CS = le.Uint16(mc[scCS:]) | 3
	ctx.SS = le.Uint16(mc[scSS:]) | 3
	ctx.RFLAGS = ctx.RFLAGS&^FIX_EFLAGS | le.Uint64(mc[scEFLAGS:])&FIX_EFLAGS
	if ucFlags&UC_STRICT_RESTORE_SS == 0 && ctx.CS == USER_CS && ctx.SS != USER_DS {
		ctx.SS = USER_DS
	}
	fpstate = le.Uint64(mc[scFPState:])
	alt, _ = UnmarshalStackT(frame[x64UCStack:])
	return blocked, alt, fpstate, nil
}

// RestoreAMD64FPState is the FPU half of rt_sigreturn (fpu__restore_sig
// without XSAVE). fpstate is the pointer from ParseAMD64Frame and fx the
// 512 bytes read there (ignored when fpstate is 0: the FPU is reset to its
// initial state, as fpu__clear_user_states). FXRSTOR faults, making the
// frame bad, when fpstate is not 16-byte aligned or MXCSR has bits outside
// MXCSRMask; the FPU is then reset to its initial state, as Linux does on
// failure. FXRSTOR loads bytes 0..415; bytes 416..511 of ctx.FXSave are
// cleared.
func RestoreAMD64FPState(ctx *AMD64Context, fpstate uint64, fx []byte) error {
	if fpstate == 0 {
		ctx.FXSave = AMD64InitFXSave()
		ctx.AVX = [256]byte{}
		return nil
	}
	var err error
	switch {
	case len(fx) < fxsaveSize:
		err = fmt.Errorf("%w: fpstate: %d bytes, need %d", ErrBadFrame, len(fx), fxsaveSize)
	case fpstate&15 != 0:
		err = fmt.Errorf("%w: fpstate %#x not 16-byte aligned", ErrBadFrame, fpstate)
	default:
		if mxcsr := binary.LittleEndian.Uint32(fx[24:]); mxcsr&^MXCSRMask != 0 {
			err = fmt.Errorf("%w: fpstate MXCSR %#x has reserved bits", ErrBadFrame, mxcsr)
		}
	}
	if err == nil {
		err = ctx.restoreXState(fx)
	}
	if err != nil {
		ctx.FXSave = AMD64InitFXSave()
		ctx.AVX = [256]byte{}
		return err
	}
	mask := ctx.FXSave[28:32]
	var keep [4]byte
	copy(keep[:], mask)
	copy(ctx.FXSave[:416], fx[:416])
	copy(ctx.FXSave[28:32], keep[:]) // MXCSR_MASK is not loaded by FXRSTOR
	clear(ctx.FXSave[416:])
	return nil
}
