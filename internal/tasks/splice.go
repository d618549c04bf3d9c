package tasks

import (
	"io"

	"github.com/uvm-emu/uvm/internal/signals"
)

// splice(2), tee(2) and vmsplice(2) (fs/splice.c) over uvm's in-kernel
// pipes. Linux moves page references; uvm copies, at most one pipe buffer
// (64 KiB) per call, which is within what Linux may return.

// SPLICE_F_* flags.
const (
	spliceFMove     = 1
	spliceFNonblock = 2
	spliceFMore     = 4
	spliceFGift     = 8
	spliceFAll      = spliceFMove | spliceFNonblock | spliceFMore | spliceFGift
)

func init() {
	registerSyscall("splice", func(t *Task, a [6]uint64) uint64 {
		return t.sysSplice(int32(a[0]), a[1], int32(a[2]), a[3], a[4], a[5])
	})
	registerSyscall("tee", func(t *Task, a [6]uint64) uint64 { return t.sysTee(int32(a[0]), int32(a[1]), a[2], a[3]) })
	registerSyscall("vmsplice", func(t *Task, a [6]uint64) uint64 { return t.sysVmsplice(int32(a[0]), a[1], a[2], a[3]) })
}

// pipeOf is the pipe behind f, or nil.
func pipeOf(f *openFile) *pipe {
	if e, ok := f.ops.(*pipeEnd); ok {
		return e.p
	}
	return nil
}

// room waits until p has free space (or no reader) and returns how much:
// splice reserves the output pipe's space before it consumes its input,
// so nothing read is lost. No reader is EPIPE with SIGPIPE, as a write.
func (p *pipe) room(t *Task, nonblock bool) (int, Errno) {
	hasRoom := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.buf) < pipeBufSize || p.readers == 0
	}
	for {
		p.mu.Lock()
		readers, free := p.readers, pipeBufSize-len(p.buf)
		p.mu.Unlock()
		switch {
		case readers == 0:
			t.tg.sendSignal(signals.KillInfo(signals.SIGPIPE, signals.SI_USER, t.tg.pid, t.tg.k.uid()), t)
			return 0, EPIPE
		case free > 0:
			return free, 0
		case nonblock:
			return 0, EAGAIN
		}
		t.wait(hasRoom, p.wakeup, -1)
		if t.killed.Load() || (t.sigPending() && !hasRoom()) {
			return 0, Errno(erestartsys)
		}
	}
}

// spliceOffset reads a splice offset argument (nil: the file position).
func (t *Task) spliceOffset(addr uint64) (int64, Errno) {
	if addr == 0 {
		return -1, 0
	}
	v, e := t.getU64(addr)
	if e != 0 {
		return 0, e
	}
	if int64(v) < 0 {
		return 0, EINVAL
	}
	return int64(v), 0
}

func (t *Task) sysSplice(inFD int32, inOffAddr uint64, outFD int32, outOffAddr, n, flags uint64) uint64 {
	if flags&^spliceFAll != 0 {
		return errRet(EINVAL)
	}
	in, ok1 := t.tg.fds.get(inFD)
	out, ok2 := t.tg.fds.get(outFD)
	if !ok1 || !ok2 || in.flags&oPATH != 0 || out.flags&oPATH != 0 ||
		in.flags&oACCMODE == oWRONLY || out.flags&oACCMODE == oRDONLY {
		return errRet(EBADF)
	}
	ip, op := pipeOf(in), pipeOf(out)
	switch {
	case ip == nil && op == nil:
		return errRet(EINVAL)
	case ip != nil && inOffAddr != 0, op != nil && outOffAddr != 0:
		return errRet(ESPIPE)
	case ip != nil && ip == op:
		return errRet(EINVAL)
	case op == nil && out.flags&oAPPEND != 0:
		return errRet(EINVAL)
	}
	inOff, e := t.spliceOffset(inOffAddr)
	if e != 0 {
		return errRet(e)
	}
	outOff, e := t.spliceOffset(outOffAddr)
	if e != 0 {
		return errRet(e)
	}
	n = min(n, maxRW)
	if n == 0 {
		return 0
	}
	nonblock := flags&spliceFNonblock != 0
	chunk := min(n, pipeBufSize)
	if op != nil {
		free, e := op.room(t, nonblock || out.flags&oNONBLOCK != 0)
		if e != 0 {
			return errRet(e)
		}
		chunk = min(chunk, uint64(free))
	}
	var b []byte
	switch {
	case ip != nil && op == nil:
		// Pipe to a file or socket: the output may take less than it
		// is given (a full socket buffer), and what it does not take
		// must stay in the pipe, as Linux's splice_to_socket leaves
		// unsent pipe buffers in place. (A second reader of the same
		// pipe between the copy and consume is the one race left; the
		// kernel holds the pipe's lock across the send.)
		b, e = ip.peek(t, chunk, nonblock || in.flags&oNONBLOCK != 0)
	case ip != nil:
		b, e = ip.read(t, chunk, nonblock || in.flags&oNONBLOCK != 0)
	default:
		b, e = in.ops.read(t, in, chunk, inOff)
	}
	if e != 0 {
		return errRet(e)
	}
	if len(b) == 0 {
		return 0 // end of input
	}
	var w uint64
	if op != nil {
		// The space was reserved above; only a concurrent writer to the
		// same pipe can make this wait.
		k, e := op.write(t, b, false)
		if e != 0 && k == 0 {
			return errRet(e)
		}
		w = uint64(k)
	} else {
		w, e = out.ops.write(t, out, b, outOff)
		if ip != nil {
			ip.consume(int(w))
		}
		if e != 0 && w == 0 {
			return errRet(e)
		}
	}
	if ip == nil && w < uint64(len(b)) {
		// The output took less than was read: the input moves by what
		// was moved (a pipe's consumed bytes cannot be given back).
		if h, isHost := in.hostOS(); isHost && inOffAddr == 0 {
			h.Seek(int64(w)-int64(len(b)), io.SeekCurrent)
		}
	}
	if inOffAddr != 0 {
		if e := t.putU64(inOffAddr, uint64(inOff)+w); e != 0 {
			return errRet(e)
		}
	}
	if outOffAddr != 0 {
		if e := t.putU64(outOffAddr, uint64(outOff)+w); e != 0 {
			return errRet(e)
		}
	}
	return w
}

// sysTee duplicates up to n bytes of the pipe inFD into the pipe outFD
// without consuming them.
func (t *Task) sysTee(inFD, outFD int32, n, flags uint64) uint64 {
	if flags&^spliceFAll != 0 {
		return errRet(EINVAL)
	}
	in, ok1 := t.tg.fds.get(inFD)
	out, ok2 := t.tg.fds.get(outFD)
	if !ok1 || !ok2 || in.flags&oACCMODE == oWRONLY || out.flags&oACCMODE == oRDONLY {
		return errRet(EBADF)
	}
	ip, op := pipeOf(in), pipeOf(out)
	if ip == nil || op == nil || ip == op {
		return errRet(EINVAL)
	}
	if n == 0 {
		return 0
	}
	nonblock := flags&spliceFNonblock != 0
	// Wait for input (EOF: no writer and nothing buffered), then room.
	for {
		ip.mu.Lock()
		have, writers := len(ip.buf), ip.writers
		ip.mu.Unlock()
		if have > 0 {
			break
		}
		if writers == 0 {
			return 0
		}
		if nonblock || in.flags&oNONBLOCK != 0 {
			return errRet(EAGAIN)
		}
		t.wait(ip.readable, ip.wakeup, -1)
		if t.killed.Load() || (t.sigPending() && !ip.readable()) {
			return errRet(Errno(erestartsys))
		}
	}
	free, e := op.room(t, nonblock || out.flags&oNONBLOCK != 0)
	if e != 0 {
		return errRet(e)
	}
	ip.mu.Lock()
	k := min(uint64(len(ip.buf)), n, uint64(free))
	b := append([]byte(nil), ip.buf[:k]...)
	ip.mu.Unlock()
	w, e := op.write(t, b, false)
	if e != 0 && w == 0 {
		return errRet(e)
	}
	return uint64(w)
}

// sysVmsplice: for a pipe's write end it is writev into the pipe, for its
// read end readv out of it (Linux maps the pages; uvm copies). The iovec
// is checked as readv's (readIovec).
func (t *Task) sysVmsplice(fd int32, iov, cnt, flags uint64) uint64 {
	if flags&^spliceFAll != 0 {
		return errRet(EINVAL)
	}
	f, ok := t.tg.fds.get(fd)
	if !ok {
		return errRet(EBADF)
	}
	pe, isPipe := f.ops.(*pipeEnd)
	if !isPipe {
		return errRet(EBADF)
	}
	segs, _, e := t.readIovec(iov, cnt)
	if e != 0 {
		return errRet(e)
	}
	nonblock := flags&spliceFNonblock != 0 || f.flags&oNONBLOCK != 0
	var done uint64
	for _, s := range segs {
		base, n := s.base, s.len
		for n > 0 {
			k := min(n, pipeBufSize)
			var moved uint64
			if pe.isWrite {
				b, e := t.readBuf(base, k)
				if e != 0 {
					return doneOr(done, e)
				}
				w, e := pe.p.write(t, b, nonblock)
				if e != 0 && w == 0 {
					return doneOr(done, e)
				}
				moved = uint64(w)
			} else {
				b, e := pe.p.read(t, k, nonblock)
				if e != 0 {
					return doneOr(done, e)
				}
				if e := t.writeBytes(base, b); e != 0 {
					return doneOr(done, e)
				}
				moved = uint64(len(b))
			}
			done += moved
			if moved < k {
				return done
			}
			base, n = base+k, n-k
		}
	}
	return done
}

// doneOr is a partial count, or the error when nothing moved.
func doneOr(done uint64, e Errno) uint64 {
	if done > 0 {
		return done
	}
	return errRet(e)
}
