package signals

import (
	"encoding/binary"
	"errors"
)

// sigaltstack flags.
const (
	SS_ONSTACK    = 1
	SS_DISABLE    = 2
	SS_AUTODISARM = int32(-1 << 31) // 1U << 31
	ssFlagBits    = SS_AUTODISARM   // SS_FLAG_BITS

	// MINSIGSTKSZ per arch: the smallest altstack sigaltstack accepts.
	MINSIGSTKSZ_ARM64 = 5120
	MINSIGSTKSZ_AMD64 = 2048
)

// StackT is a thread's alternate signal stack as Linux keeps it in
// task_struct (sas_ss_sp, sas_ss_size, sas_ss_flags) and as stack_t in
// guest memory: {ss_sp @0, ss_flags (int) @8, ss_size @16}, 24 bytes.
//
// Flags is what the thread last passed to sigaltstack (Linux stores it
// as given; SS_ONSTACK there is only a request, never a state). A thread
// that never called sigaltstack has DisabledStack (Linux: sas_ss_reset
// on clone with CLONE_VM, and SS_DISABLE is what the frames show).
type StackT struct {
	SP    uint64
	Flags int32
	Size  uint64
}

// DisabledStack is the state after sas_ss_reset: no altstack.
var DisabledStack = StackT{Flags: SS_DISABLE}

// StackTSize is sizeof(stack_t) in guest memory.
const StackTSize = 24

// Marshal returns the guest stack_t.
func (s StackT) Marshal() [StackTSize]byte {
	var b [StackTSize]byte
	s.marshalTo(b[:])
	return b
}

func (s StackT) marshalTo(b []byte) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], s.SP)
	le.PutUint32(b[8:], uint32(s.Flags))
	le.PutUint32(b[12:], 0)
	le.PutUint64(b[16:], s.Size)
}

// UnmarshalStackT decodes a guest stack_t (ok false if b is short).
func UnmarshalStackT(b []byte) (s StackT, ok bool) {
	if len(b) < StackTSize {
		return s, false
	}
	le := binary.LittleEndian
	return StackT{SP: le.Uint64(b[0:]), Flags: int32(le.Uint32(b[8:])), Size: le.Uint64(b[16:])}, true
}

// within is Linux's __on_sig_stack: sp lies in (SP, SP+Size] (the stack
// grows down, so its top address counts and its base does not).
func (s StackT) within(sp uint64) bool {
	return sp > s.SP && sp-s.SP <= s.Size
}

// OnStack is Linux's on_sig_stack: whether sp is on the altstack. With
// SS_AUTODISARM it is always false: the stack was disarmed on entry to the
// handler, so by construction the thread cannot be nested on it.
func (s StackT) OnStack(sp uint64) bool {
	if s.Flags&SS_AUTODISARM != 0 {
		return false
	}
	return s.within(sp)
}

// SSFlags is Linux's sas_ss_flags: SS_DISABLE when there is no altstack,
// SS_ONSTACK when sp is on it, else 0.
func (s StackT) SSFlags(sp uint64) int32 {
	if s.Size == 0 {
		return SS_DISABLE
	}
	if s.OnStack(sp) {
		return SS_ONSTACK
	}
	return 0
}

// Get returns what sigaltstack(NULL, &oss) reports at stack pointer sp:
// the altstack with ss_flags = sas_ss_flags(sp) | (Flags & SS_AUTODISARM).
func (s StackT) Get(sp uint64) StackT {
	return StackT{SP: s.SP, Size: s.Size, Flags: s.SSFlags(sp) | (s.Flags & ssFlagBits)}
}

// Errors of Set (the lead maps them to EPERM, EINVAL, ENOMEM).
var (
	ErrOnAltStack = errors.New("signals: on the alternate signal stack (EPERM)")
	ErrStackFlags = errors.New("signals: bad sigaltstack flags (EINVAL)")
	ErrStackSize  = errors.New("signals: alternate signal stack too small (ENOMEM)")
)

// Set installs ss as the altstack at stack pointer sp, as Linux's
// do_sigaltstack: EPERM while the thread runs on the current altstack;
// EINVAL unless the mode (flags without SS_AUTODISARM) is 0, SS_ONSTACK or
// SS_DISABLE; SS_DISABLE clears SP and Size; otherwise ENOMEM when Size <
// minSize (MINSIGSTKSZ_ARM64 or MINSIGSTKSZ_AMD64). The flags are stored
// as given. rt_sigreturn uses it too (with the restored sp) and ignores
// every error, as Linux's restore_altstack does.
func (s *StackT) Set(ss StackT, sp uint64, minSize uint64) error {
	if s.OnStack(sp) {
		return ErrOnAltStack
	}
	mode := ss.Flags &^ ssFlagBits
	if mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0 {
		return ErrStackFlags
	}
	if *s == ss {
		return nil
	}
	if mode == SS_DISABLE {
		ss.SP, ss.Size = 0, 0
	} else if ss.Size < minSize {
		return ErrStackSize
	}
	*s = ss
	return nil
}

// Disarm applies SS_AUTODISARM after a handler's frame was set up (Linux's
// signal_delivered: if sas_ss_flags has SS_AUTODISARM, sas_ss_reset).
func (s *StackT) Disarm() {
	if s.Flags&SS_AUTODISARM != 0 {
		*s = DisabledStack
	}
}

// ChooseStack is Linux's sigsp: the stack pointer a signal frame is built
// below. With SA_ONSTACK and an altstack the thread is not already on
// (sas_ss_flags(sp) == 0), it is the altstack's top (SP+Size); otherwise
// sp itself, so a signal arriving while a handler runs on the altstack
// nests on it. onAltStack reports whether the frame goes on the altstack
// (switched to, or already there).
func ChooseStack(sp uint64, act SigAction, alt StackT) (uint64, bool) {
	if act.Flags&SA_ONSTACK != 0 && alt.SSFlags(sp) == 0 {
		return alt.SP + alt.Size, true
	}
	return sp, alt.OnStack(sp)
}
