package uprobes

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Every error returned by this package wraps one of them
// (or an Errno) with %w; test with errors.Is.
var (
	// ErrNotSupported: the request cannot be served by this model or
	// this binary (wrong architecture, dynamic symbol, 32-bit task).
	ErrNotSupported = errors.New("not supported")
	// ErrNoSymbol: the symbol is not in the executable's symbol table.
	ErrNoSymbol = errors.New("symbol not found")
	// ErrNotInstructionBoundary: the probe address falls inside an
	// instruction of its function (found by decoding from the symbol's
	// start), or is misaligned for the architecture.
	ErrNotInstructionBoundary = errors.New("not an instruction boundary")
	// ErrRejected: the kernel refuses to probe the instruction. The
	// wrapping *RejectError carries the errno and the kernel's reason.
	ErrRejected = errors.New("instruction rejected")
	// ErrInvalid: an invalid argument (the kernel's EINVAL outside
	// instruction analysis: no handler, misaligned offsets, offset past
	// the end of the file, a ref_ctr_offset mismatch…).
	ErrInvalid = errors.New("invalid argument")
	// ErrClosed: the probe was already closed.
	ErrClosed = errors.New("probe closed")
)

// Errno is a Linux error number as the uprobe code returns it.
type Errno int

// The errnos the uprobe paths return. ENOTSUPP (524) is kernel-internal
// (user space sees "Unknown error 524").
const (
	EPERM      Errno = 1
	ENOENT     Errno = 2
	EIO        Errno = 5
	ENOEXEC    Errno = 8
	ENOMEM     Errno = 12
	EFAULT     Errno = 14
	EBUSY      Errno = 16
	EINVAL     Errno = 22
	EOPNOTSUPP Errno = 95
	ENOTSUPP   Errno = 524
)

var errnoNames = map[Errno]string{
	EPERM: "EPERM", ENOENT: "ENOENT", EIO: "EIO", ENOEXEC: "ENOEXEC", ENOMEM: "ENOMEM",
	EFAULT: "EFAULT", EBUSY: "EBUSY", EINVAL: "EINVAL", EOPNOTSUPP: "EOPNOTSUPP", ENOTSUPP: "ENOTSUPP",
}

func (e Errno) Error() string {
	if n, ok := errnoNames[e]; ok {
		return n
	}
	return "errno " + strconv.Itoa(int(e))
}

// Is makes errors.Is(err, ErrInvalid) true for EINVAL.
func (e Errno) Is(target error) bool { return e == EINVAL && target == ErrInvalid }

// RejectError is the kernel refusing to probe an instruction
// (arch_uprobe_analyze_insn / prepare_uprobe).
type RejectError struct {
	Arch   Arch
	Offset uint64 // file offset of the probe
	Insn   []byte // the original instruction bytes (as read from the file)
	Disasm string // disassembly, when the decoder knows the instruction
	Errno  Errno  // what the kernel returns (EINVAL, ENOTSUPP, ENOEXEC, EOPNOTSUPP)
	Reason string // why, in the kernel's terms
}

func (e *RejectError) Error() string {
	d := e.Disasm
	if d == "" {
		d = fmt.Sprintf("% x", e.Insn)
	}
	return fmt.Sprintf("%s uprobe at file offset %#x: cannot probe %q: %s (%s)", e.Arch, e.Offset, d, e.Reason, e.Errno)
}

// Unwrap reports both ErrRejected and the errno.
func (e *RejectError) Unwrap() []error { return []error{ErrRejected, e.Errno} }
