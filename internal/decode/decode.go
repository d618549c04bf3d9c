// Package decode turns guest instruction bytes into uvm's own compact,
// pointer-free instruction records, once per instruction-cache fill. It is
// the only package that imports golang.org/x/arch, which it uses as the
// x86-64 decoder (behind a fix-up wrapper) and as the disassembler and
// test oracle for arm64.
package decode

import "errors"

// ErrUndefined is returned for bytes that do not decode to an instruction
// uvm implements. Callers raise SIGILL in the guest.
var ErrUndefined = errors.New("undefined instruction")

// ErrTruncated is returned by the x86 decoder when the bytes end before the
// instruction does (the caller must fetch more bytes).
var ErrTruncated = errors.New("truncated instruction")
