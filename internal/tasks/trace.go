package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// The event trace: one line per syscall (arguments and result), thread
// start and exit, fatal signal and process exit. In deterministic mode
// the stream is identical on every run; its SHA-256 (TraceHash) lets
// tests compare runs cheaply.

// tracer writes events to Options.Trace and/or a running hash. Its state
// is protected by Kernel.mu.
type tracer struct {
	w io.Writer
	h hash.Hash
}

func (k *Kernel) tracing() bool { return k.trace.w != nil || k.trace.h != nil }

// event records one line (without newline).
func (k *Kernel) event(format string, args ...any) {
	if !k.tracing() {
		return
	}
	line := fmt.Sprintf(format, args...) + "\n"
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.trace.w != nil {
		io.WriteString(k.trace.w, line)
	}
	if k.trace.h != nil {
		io.WriteString(k.trace.h, line)
	}
}

// TraceHash returns the hex SHA-256 of the event stream so far (empty
// unless Options.TraceHash).
func (k *Kernel) TraceHash() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.trace.h == nil {
		return ""
	}
	return hex.EncodeToString(k.trace.h.Sum(nil))
}

func newTracer(w io.Writer, hashed bool) tracer {
	t := tracer{w: w}
	if hashed {
		t.h = sha256.New()
	}
	return t
}
