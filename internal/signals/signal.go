package signals

import (
	"encoding/binary"
	"strconv"
)

// Signal is a Linux signal number, 1..NSIG. The numbering is the kernel's
// (the same on arm64 and x86-64): SIGRTMIN is 32, not glibc's 34.
type Signal int

// Signal numbers (signal(7), asm-generic/signal.h and x86's signal.h agree).
const (
	SIGHUP    Signal = 1
	SIGINT    Signal = 2
	SIGQUIT   Signal = 3
	SIGILL    Signal = 4
	SIGTRAP   Signal = 5
	SIGABRT   Signal = 6
	SIGIOT    Signal = 6
	SIGBUS    Signal = 7
	SIGFPE    Signal = 8
	SIGKILL   Signal = 9
	SIGUSR1   Signal = 10
	SIGSEGV   Signal = 11
	SIGUSR2   Signal = 12
	SIGPIPE   Signal = 13
	SIGALRM   Signal = 14
	SIGTERM   Signal = 15
	SIGSTKFLT Signal = 16
	SIGCHLD   Signal = 17
	SIGCONT   Signal = 18
	SIGSTOP   Signal = 19
	SIGTSTP   Signal = 20
	SIGTTIN   Signal = 21
	SIGTTOU   Signal = 22
	SIGURG    Signal = 23
	SIGXCPU   Signal = 24
	SIGXFSZ   Signal = 25
	SIGVTALRM Signal = 26
	SIGPROF   Signal = 27
	SIGWINCH  Signal = 28
	SIGIO     Signal = 29
	SIGPOLL   Signal = 29
	SIGPWR    Signal = 30
	SIGSYS    Signal = 31
	SIGRTMIN  Signal = 32
	SIGRTMAX  Signal = 64

	// NSIG is the number of signals (the kernel's _NSIG).
	NSIG = 64
)

var sigNames = [...]string{
	1: "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
	"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM",
	"SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP",
	"SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM",
	"SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS",
}

// String returns the signal's name: "SIGSEGV", "SIGRTMIN", "SIGRTMIN+5",
// "SIGRTMAX"; out-of-range numbers print as "signal N".
func (s Signal) String() string {
	switch {
	case s >= 1 && s < SIGRTMIN:
		return sigNames[s]
	case s == SIGRTMIN:
		return "SIGRTMIN"
	case s == SIGRTMAX:
		return "SIGRTMAX"
	case s > SIGRTMIN && s < SIGRTMAX:
		return "SIGRTMIN+" + strconv.Itoa(int(s-SIGRTMIN))
	}
	return "signal " + strconv.Itoa(int(s))
}

// Valid reports whether s is a signal number (1..NSIG).
func (s Signal) Valid() bool { return s >= 1 && s <= NSIG }

// IsRealtime reports whether s is a real-time (queued) signal.
func (s Signal) IsRealtime() bool { return s >= SIGRTMIN && s <= SIGRTMAX }

// Mask returns the SigSet holding only s (Linux's sigmask(sig)).
func (s Signal) Mask() SigSet {
	if !s.Valid() {
		return 0
	}
	return 1 << uint(s-1)
}

// SigSet is a signal set as the kernel stores it for 64 signals: bit sig-1.
// The guest-memory form (sigset_t, 8 bytes) is the little-endian uint64.
type SigSet uint64

// Has reports whether sig is in the set.
func (m SigSet) Has(sig Signal) bool { return m&sig.Mask() != 0 }

// Add returns the set with sig added.
func (m SigSet) Add(sig Signal) SigSet { return m | sig.Mask() }

// Del returns the set with sig removed.
func (m SigSet) Del(sig Signal) SigSet { return m &^ sig.Mask() }

// Lowest returns the lowest-numbered signal in the set, or 0 if empty.
func (m SigSet) Lowest() Signal {
	if m == 0 {
		return 0
	}
	for i := Signal(1); i <= NSIG; i++ {
		if m&i.Mask() != 0 {
			return i
		}
	}
	return 0
}

// Masks of signal groups (include/linux/signal.h).
const (
	// UnblockableMask: SIGKILL and SIGSTOP can be neither blocked, caught
	// nor ignored (sig_kernel_only).
	UnblockableMask SigSet = 1<<(SIGKILL-1) | 1<<(SIGSTOP-1)
	// SynchronousMask: the signals Linux dequeues before any other
	// (SYNCHRONOUS_MASK in kernel/signal.c).
	SynchronousMask SigSet = 1<<(SIGSEGV-1) | 1<<(SIGBUS-1) | 1<<(SIGILL-1) |
		1<<(SIGTRAP-1) | 1<<(SIGFPE-1) | 1<<(SIGSYS-1)
	// CoredumpMask: default action "core" (SIG_KERNEL_COREDUMP_MASK).
	CoredumpMask SigSet = 1<<(SIGQUIT-1) | 1<<(SIGILL-1) | 1<<(SIGTRAP-1) |
		1<<(SIGABRT-1) | 1<<(SIGFPE-1) | 1<<(SIGSEGV-1) | 1<<(SIGBUS-1) |
		1<<(SIGSYS-1) | 1<<(SIGXCPU-1) | 1<<(SIGXFSZ-1)
	// IgnoreMask: default action "ignore" (SIG_KERNEL_IGNORE_MASK; SIGCONT
	// is here because its "continue" effect happens when it is sent).
	IgnoreMask SigSet = 1<<(SIGCONT-1) | 1<<(SIGCHLD-1) | 1<<(SIGWINCH-1) | 1<<(SIGURG-1)
	// StopMask: default action "stop" (SIG_KERNEL_STOP_MASK).
	StopMask SigSet = 1<<(SIGSTOP-1) | 1<<(SIGTSTP-1) | 1<<(SIGTTIN-1) | 1<<(SIGTTOU-1)
)

// DefaultAction is what SIG_DFL does for a signal (signal(7)).
type DefaultAction int

// Default actions.
const (
	ActTerminate DefaultAction = iota // Term: end the process
	ActCore                           // Core: end the process and dump core
	ActIgnore                         // Ign
	ActStop                           // Stop the process
	ActContinue                       // Cont: continue a stopped process
)

func (a DefaultAction) String() string {
	switch a {
	case ActTerminate:
		return "terminate"
	case ActCore:
		return "core"
	case ActIgnore:
		return "ignore"
	case ActStop:
		return "stop"
	case ActContinue:
		return "continue"
	}
	return "action " + strconv.Itoa(int(a))
}

// Default returns the signal's default action. Real-time signals and any
// signal not listed otherwise terminate.
func (s Signal) Default() DefaultAction {
	m := s.Mask()
	switch {
	case s == SIGCONT:
		return ActContinue
	case m&CoredumpMask != 0:
		return ActCore
	case m&IgnoreMask != 0:
		return ActIgnore
	case m&StopMask != 0:
		return ActStop
	}
	return ActTerminate
}

// Catchable reports whether a handler may be installed and the signal
// blocked (false for SIGKILL and SIGSTOP).
func (s Signal) Catchable() bool { return s.Valid() && s.Mask()&UnblockableMask == 0 }

// sigaction flags (asm-generic/signal.h, x86's uapi signal.h: same values).
const (
	SA_NOCLDSTOP      = 0x00000001
	SA_NOCLDWAIT      = 0x00000002
	SA_SIGINFO        = 0x00000004
	SA_UNSUPPORTED    = 0x00000400
	SA_EXPOSE_TAGBITS = 0x00000800
	SA_RESTORER       = 0x04000000
	SA_ONSTACK        = 0x08000000
	SA_RESTART        = 0x10000000
	SA_NODEFER        = 0x40000000
	SA_RESETHAND      = 0x80000000

	// UAPI_SA_FLAGS is what do_sigaction keeps of sa_flags: unknown bits
	// are cleared so that user space can probe for support (Linux ≥ 5.11).
	UAPI_SA_FLAGS = SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK |
		SA_RESTART | SA_NODEFER | SA_RESETHAND | SA_EXPOSE_TAGBITS | SA_RESTORER
)

// Handler values with special meaning.
const (
	SIG_DFL = 0
	SIG_IGN = 1
)

// SigAction is the kernel's struct sigaction (k_sigaction.sa), the same on
// arm64 and x86-64: {sa_handler, sa_flags, sa_restorer, sa_mask}, 32 bytes.
type SigAction struct {
	Handler  uint64 // SIG_DFL, SIG_IGN or the handler's address
	Flags    uint64 // SA_*
	Restorer uint64 // used when Flags has SA_RESTORER
	Mask     SigSet // added to the blocked set while the handler runs
}

// SigActionSize is sizeof(struct sigaction) in guest memory.
const SigActionSize = 32

// Marshal returns the guest-memory form.
func (a SigAction) Marshal() [SigActionSize]byte {
	var b [SigActionSize]byte
	le := binary.LittleEndian
	le.PutUint64(b[0:], a.Handler)
	le.PutUint64(b[8:], a.Flags)
	le.PutUint64(b[16:], a.Restorer)
	le.PutUint64(b[24:], uint64(a.Mask))
	return b
}

// UnmarshalSigAction decodes a guest struct sigaction; b must hold at least
// SigActionSize bytes (ok is false otherwise).
func UnmarshalSigAction(b []byte) (a SigAction, ok bool) {
	if len(b) < SigActionSize {
		return a, false
	}
	le := binary.LittleEndian
	a.Handler = le.Uint64(b[0:])
	a.Flags = le.Uint64(b[8:])
	a.Restorer = le.Uint64(b[16:])
	a.Mask = SigSet(le.Uint64(b[24:]))
	return a, true
}

// Ignores reports whether the action discards sig (Linux's
// sig_handler_ignored): SIG_IGN, or SIG_DFL whose default is to ignore.
func (a SigAction) Ignores(sig Signal) bool {
	return a.Handler == SIG_IGN || (a.Handler == SIG_DFL && sig.Mask()&IgnoreMask != 0)
}
