package tasks

import (
	"sync"

	"github.com/uvm-emu/uvm/internal/signals"
)

// pipe is an in-kernel pipe (fs/pipe.c): a bounded byte buffer with reader
// and writer counts. Blocking goes through Task.wait, so pipes between
// guest threads and processes work under both schedulers (a host pipe
// would block the deterministic scheduler's only runnable goroutine).
type pipe struct {
	// mu protects everything below.
	mu      sync.Mutex
	buf     []byte
	readers int
	writers int
	changed chan struct{} // closed and replaced on every state change
}

// pipeBufSize is the pipe capacity (Linux's default 16 pages) and
// pipeBuf the atomic write size (PIPE_BUF).
const (
	pipeBufSize = 65536
	pipeBuf     = 4096
)

func newPipe() *pipe { return &pipe{readers: 1, writers: 1, changed: make(chan struct{})} }

func (p *pipe) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *pipe) wakeup() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// readable: data buffered or no writer left (read returns EOF).
func (p *pipe) readable() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.buf) > 0 || p.writers == 0
}

// writable: room for PIPE_BUF bytes or no reader left (write fails).
func (p *pipe) writable() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return pipeBufSize-len(p.buf) >= pipeBuf || p.readers == 0
}

func (p *pipe) closeEnd(write bool) {
	p.mu.Lock()
	if write {
		p.writers--
	} else {
		p.readers--
	}
	p.notifyLocked()
	p.mu.Unlock()
}

// read copies up to n bytes. It blocks while the pipe is empty and has
// writers, unless nonblock.
func (p *pipe) read(t *Task, n uint64, nonblock bool) ([]byte, Errno) {
	return p.take(t, n, nonblock, true)
}

// peek is read without consuming: splice copies a pipe's bytes out and
// then consumes what the output took (consume).
func (p *pipe) peek(t *Task, n uint64, nonblock bool) ([]byte, Errno) {
	return p.take(t, n, nonblock, false)
}

// consume drops the first k buffered bytes (after peek).
func (p *pipe) consume(k int) {
	p.mu.Lock()
	k = min(k, len(p.buf))
	p.buf = p.buf[k:]
	if len(p.buf) == 0 {
		p.buf = nil
	}
	p.notifyLocked()
	p.mu.Unlock()
}

func (p *pipe) take(t *Task, n uint64, nonblock, consume bool) ([]byte, Errno) {
	for {
		p.mu.Lock()
		if len(p.buf) > 0 {
			k := min(uint64(len(p.buf)), n)
			out := append([]byte(nil), p.buf[:k]...)
			if consume {
				p.buf = p.buf[k:]
				if len(p.buf) == 0 {
					p.buf = nil
				}
				p.notifyLocked()
			}
			p.mu.Unlock()
			return out, 0
		}
		if p.writers == 0 {
			p.mu.Unlock()
			return nil, 0
		}
		p.mu.Unlock()
		if nonblock {
			return nil, EAGAIN
		}
		t.wait(p.readable, p.wakeup, -1)
		if t.killed.Load() || (t.sigPending() && !p.readable()) {
			return nil, Errno(erestartsys)
		}
	}
}

// write appends b, blocking while the pipe is full. Writes of at most
// PIPE_BUF bytes are atomic. A pipe without readers gives EPIPE and
// SIGPIPE.
func (p *pipe) write(t *Task, b []byte, nonblock bool) (int, Errno) {
	done := 0
	for done < len(b) {
		p.mu.Lock()
		if p.readers == 0 {
			p.mu.Unlock()
			t.tg.sendSignal(signals.KillInfo(signals.SIGPIPE, signals.SI_USER, t.tg.pid, t.tg.k.uid()), t)
			if done > 0 {
				return done, 0
			}
			return 0, EPIPE
		}
		room := pipeBufSize - len(p.buf)
		rest := len(b) - done
		if room > 0 && (rest > pipeBuf || room >= rest) {
			k := min(room, rest)
			p.buf = append(p.buf, b[done:done+k]...)
			done += k
			p.notifyLocked()
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		if nonblock {
			if done > 0 {
				return done, 0
			}
			return 0, EAGAIN
		}
		t.wait(p.writable, p.wakeup, -1)
		if t.killed.Load() || (t.sigPending() && !p.writable()) {
			if done > 0 {
				return done, 0
			}
			return 0, Errno(erestartsys)
		}
	}
	return done, 0
}

// wakeup: a pipe end's readiness changes with its pipe's state
// (pollWaker, for epoll).
func (e *pipeEnd) wakeup() <-chan struct{} { return e.p.wakeup() }

// ioctl: FIONREAD is the count of buffered bytes (ioctler).
func (e *pipeEnd) ioctl(t *Task, f *openFile, req, arg uint64) (uint64, bool) {
	if req&0xffffffff != ioFIONREAD {
		return 0, false
	}
	e.p.mu.Lock()
	n := len(e.p.buf)
	e.p.mu.Unlock()
	return errOr0(t.putU32(arg, uint32(n))), true
}
