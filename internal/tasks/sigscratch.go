package tasks

import "github.com/uvm-emu/uvm/internal/signals"

// sigScratchBufs is a thread's reusable signal-delivery state: the
// context of the interrupted (or returning) thread, the frame being
// built, and rt_sigreturn's fpstate image, so that a delivery and its
// rt_sigreturn allocate nothing after the thread's first signal and
// convert each context in place instead of copying it in and out. Owned
// by the task's goroutine; every use fills what it reads.
type sigScratchBufs struct {
	x86   signals.AMD64Context
	a64   signals.ARM64Context
	frame []byte // the last frame built (BuildAMD64FrameInto's scratch)
	fx    []byte // rt_sigreturn's fpstate bytes
}

// sigScratch returns the thread's buffers (made on its first signal).
func (t *Task) sigScratch() *sigScratchBufs {
	if t.sigBufs == nil {
		t.sigBufs = new(sigScratchBufs)
	}
	return t.sigBufs
}

// keepFrame keeps the frame bytes just written for the next delivery.
func (s *sigScratchBufs) keepFrame(b []byte) {
	if cap(b) > cap(s.frame) {
		s.frame = b[:0]
	}
}

// fpstate returns n bytes for the fpstate image; the first 512 are kept
// when it grows (the FXSAVE part read before the XSAVE extension). n is
// 512 or the arch's XSAVE size, never guest-chosen.
func (s *sigScratchBufs) fpstate(n int) []byte {
	if cap(s.fx) < n {
		b := make([]byte, n, max(n, signals.AMD64XSaveSize+4))
		copy(b, s.fx)
		s.fx = b
	}
	s.fx = s.fx[:n]
	return s.fx
}
