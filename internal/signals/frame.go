package signals

import "errors"

// Frame is a signal frame built for a handler: Bytes are to be written to
// guest memory at Addr (one contiguous write; if it faults, the frame
// cannot be set up and the caller does ForceSigsegv). Addr is the
// handler's stack pointer.
type Frame struct {
	Addr     uint64 // lowest address of the frame = the handler's SP/RSP
	Bytes    []byte // the frame, to be written at Addr
	InfoAddr uint64 // &frame->info (x1 / rsi for SA_SIGINFO handlers)
	UCAddr   uint64 // &frame->uc (x2 / rdx)

	// FrameRecord (arm64 only) is the address of the {fp, lr} frame
	// record Linux stacks above the rt_sigframe; the handler's x29.
	FrameRecord uint64
	// FPState (x86-64 only) is the address of the 512-byte FXSAVE image
	// (sigcontext.fpstate), 64-byte aligned, above the rt_sigframe.
	FPState uint64

	// OnAltStack reports whether the frame is on the alternate stack.
	OnAltStack bool
}

// Frame-setup failures. Linux answers each with force_sigsegv (see
// Sighand.ForceSigsegv).
var (
	// ErrNoRestorer: x86-64 requires SA_RESTORER (Linux: -EFAULT).
	ErrNoRestorer = errors.New("signals: x86-64 handler without SA_RESTORER")
	// ErrAltStackOverflow: the frame would leave the altstack it is on
	// (x86-64's get_sigframe check; Linux logs "overflowed sigaltstack").
	ErrAltStackOverflow = errors.New("signals: signal frame overflows the alternate stack")
	// ErrFrameAddress: the frame would wrap below address 0.
	ErrFrameAddress = errors.New("signals: signal frame address wraps")
)

// ErrBadFrame is wrapped by every rt_sigreturn parse error; Linux answers
// a bad frame with SIGSEGV (x86: force_sig(SIGSEGV), si_code SI_KERNEL;
// arm64: arm64_notify_segfault(sp), SEGV_MAPERR or SEGV_ACCERR at sp).
var ErrBadFrame = errors.New("signals: bad rt_sigreturn frame")

// frameBuf returns n zero bytes: scratch[:n] cleared when it has room,
// else a new slice. n is a frame size (a few KiB at most), never a
// guest-chosen length.
func frameBuf(scratch []byte, n int) []byte {
	if cap(scratch) < n {
		return make([]byte, n)
	}
	b := scratch[:n]
	clear(b)
	return b
}
