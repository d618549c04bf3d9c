package tasks

import (
	"encoding/binary"

	"github.com/uvm-emu/uvm/internal/signals"
)

// poll, ppoll, select and pselect6 (fs/select.c). Readiness is each
// file's fileOps.poll (pollReady); a wait sleeps on the wake-up channels
// of the files that have one (a wakeup() method: pipes, eventfds,
// timerfds, signalfds …) and on the deadline, never polling, except for a
// file kind without a channel, which the wait re-checks every 50 ms.
// Timeouts are on the kernel's clock. A signal ends the wait: poll then
// returns ERESTART_RESTARTBLOCK (restarted with the time left when no
// handler runs), ppoll, select and pselect6 ERESTARTNOHAND, having written
// the time left back as Linux does. ppoll and pselect6 install their
// signal mask for the wait; after a handler interrupts them the old mask
// comes back when the handler returns, as with rt_sigsuspend.

// erestartnohand is Linux's ERESTARTNOHAND: restart unless a handler ran.
const erestartnohand = 514

// pollPRI and pollERR are in socket.go.
const (
	pollRDNORM = 0x40
	pollRDBAND = 0x80
	pollWRNORM = 0x100
	pollWRBAND = 0x200

	pollInSet  = pollRDNORM | pollRDBAND | pollIN | pollHUP | pollERR
	pollOutSet = pollWRBAND | pollWRNORM | pollOUT | pollERR
	pollExSet  = pollPRI
)

// fileWakeup is the channel closed at f's next readiness change, or nil
// when its kind has none.
func fileWakeup(f *openFile) <-chan struct{} {
	switch o := f.ops.(type) {
	case interface{ wakeup() <-chan struct{} }:
		return o.wakeup()
	}
	return nil
}

// pollWake appends the wake-up channels of fds to buf; it adds one nil
// channel for a descriptor whose kind has none.
func (t *Task) pollWake(fds []int32, buf []<-chan struct{}) []<-chan struct{} {
	sawNil := false
	for _, fd := range fds {
		if fd < 0 {
			continue
		}
		f, ok := t.tg.fds.get(fd)
		if !ok {
			continue
		}
		if c := fileWakeup(f); c != nil {
			buf = append(buf, c)
		} else if !sawNil {
			buf, sawNil = append(buf, nil), true
		}
	}
	return buf
}

// pollWait blocks until scan() reports something ready, a signal, or the
// uptime deadline (< 0: none). It reports whether the deadline passed.
func (t *Task) pollWait(fds []int32, scan func() int, deadline int64) bool {
	timeout := int64(-1)
	if deadline >= 0 {
		timeout = deadline - t.tg.k.uptimeNs()
		if timeout <= 0 {
			return true
		}
	}
	return t.waitChans(func() bool { return scan() > 0 }, func(buf []<-chan struct{}) []<-chan struct{} {
		return t.pollWake(fds, buf)
	}, timeout)
}

// doPoll is poll until the uptime deadline (-1: none; 0 in the past or
// now: do not wait). interrupted is set when a signal ended the wait.
func (t *Task) doPoll(fdsAddr, nfds uint64, deadline int64, wait bool) (ret uint64, interrupted bool) {
	if nfds > maxFDs {
		return errRet(EINVAL), false
	}
	raw, e := t.readBuf(fdsAddr, nfds*8)
	if e != 0 {
		return errRet(e), false
	}
	fds := make([]int32, nfds)
	for i := range fds {
		fds[i] = int32(binary.LittleEndian.Uint32(raw[i*8:]))
	}
	scan := func() int {
		ready := 0
		for i := uint64(0); i < nfds; i++ {
			rec := raw[i*8:]
			fd := fds[i]
			events := binary.LittleEndian.Uint16(rec[4:]) | pollERR | pollHUP
			var rev uint16
			if fd >= 0 {
				if f, ok := t.tg.fds.get(fd); !ok {
					rev = pollNVAL
				} else {
					rev = pollReady(f, events) & events
				}
			}
			binary.LittleEndian.PutUint16(rec[6:], rev)
			if rev != 0 {
				ready++
			}
		}
		return ready
	}
	ready := scan()
	if ready == 0 && wait {
		timedOut := t.pollWait(fds, scan, deadline)
		ready = scan()
		if ready == 0 && !timedOut && !t.killed.Load() {
			return 0, true
		}
	}
	if nfds > 0 {
		if e := t.writeBytes(fdsAddr, raw); e != 0 {
			return errRet(e), false
		}
	}
	return uint64(ready), false
}

func (t *Task) sysPoll(fdsAddr, nfds uint64, timeoutMs int64) uint64 {
	deadline := int64(-1)
	if timeoutMs >= 0 {
		deadline = t.tg.k.uptimeNs() + timeoutMs*1e6
	}
	return t.pollUntil(fdsAddr, nfds, deadline, timeoutMs != 0)
}

func (t *Task) pollUntil(fdsAddr, nfds uint64, deadline int64, wait bool) uint64 {
	ret, intr := t.doPoll(fdsAddr, nfds, deadline, wait)
	if !intr {
		return ret
	}
	t.restartBlock = func(t *Task) uint64 { return t.pollUntil(fdsAddr, nfds, deadline, true) }
	return errRet(erestartRestartblock)
}

// setSigmask installs a ppoll/pselect6 mask (sigsetsize must be 8) and
// returns the function that ends it for the syscall's result: the old
// mask comes back now, or after the handler when a signal interrupted
// the call (set_user_sigmask / restore_saved_sigmask_unless).
func (t *Task) setSigmask(maskAddr, size uint64) (func(ret uint64) uint64, Errno) {
	if maskAddr == 0 {
		return func(ret uint64) uint64 { return ret }, 0
	}
	if size != 8 {
		return nil, EINVAL
	}
	v, e := t.getU64(maskAddr)
	if e != 0 {
		return nil, e
	}
	old := t.blocked
	t.setBlocked(signals.SigSet(v))
	return func(ret uint64) uint64 {
		if (ret == errRet(Errno(erestartnohand)) || ret == errRet(EINTR)) && t.sigPending() {
			t.savedBlocked = &old
		} else {
			t.setBlocked(old)
		}
		return ret
	}, 0
}

// deadlineOf turns a relative timespec into an uptime deadline (-1 for a
// null pointer).
func (t *Task) deadlineOf(tsAddr uint64) (int64, Errno) {
	if tsAddr == 0 {
		return -1, 0
	}
	ns, e := t.readTimespec(tsAddr)
	if e != 0 {
		return 0, e
	}
	return t.tg.k.uptimeNs() + ns, 0
}

// putLeft writes the time left before deadline back to a timespec (or a
// timeval when usec), as poll_select_finish does.
func (t *Task) putLeft(addr uint64, deadline int64, usec bool) {
	if addr == 0 || deadline < 0 {
		return
	}
	left := max(deadline-t.tg.k.uptimeNs(), 0)
	if usec {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[0:], uint64(left/1e9))
		binary.LittleEndian.PutUint64(b[8:], uint64(left%1e9/1e3))
		t.writeBytes(addr, b[:])
		return
	}
	t.putTimespec(addr, left)
}

func (t *Task) sysPpoll(fdsAddr, nfds, tsAddr, maskAddr, size uint64) uint64 {
	deadline, e := t.deadlineOf(tsAddr)
	if e != 0 {
		return errRet(e)
	}
	end, e := t.setSigmask(maskAddr, size)
	if e != 0 {
		return errRet(e)
	}
	ret, intr := t.doPoll(fdsAddr, nfds, deadline, true)
	if intr {
		ret = errRet(Errno(erestartnohand))
	}
	t.putLeft(tsAddr, deadline, false)
	return end(ret)
}

// doSelect is select's core over the three fd_set bitmaps.
func (t *Task) doSelect(nfds int64, rAddr, wAddr, eAddr uint64, deadline int64, wait bool) (ret uint64, interrupted bool) {
	if nfds < 0 || nfds > int64(maxFDs) {
		return errRet(EINVAL), false
	}
	words := (uint64(nfds) + 63) / 64
	addrs := [3]uint64{rAddr, wAddr, eAddr}
	var in [3][]uint64
	for i, a := range addrs {
		if a == 0 || words == 0 {
			continue
		}
		b, e := t.readBuf(a, words*8)
		if e != 0 {
			return errRet(e), false
		}
		in[i] = make([]uint64, words)
		for w := range in[i] {
			in[i][w] = binary.LittleEndian.Uint64(b[w*8:])
		}
	}
	var fds []int32
	for fd := int64(0); fd < nfds; fd++ {
		for i := range in {
			if in[i] != nil && in[i][fd/64]&(1<<(fd%64)) != 0 {
				fds = append(fds, int32(fd))
				if _, ok := t.tg.fds.get(int32(fd)); !ok {
					return errRet(EBADF), false
				}
				break
			}
		}
	}
	var out [3][]uint64
	for i := range in {
		if in[i] != nil {
			out[i] = make([]uint64, words)
		}
	}
	sets := [3]uint16{pollInSet, pollOutSet, pollExSet}
	scan := func() int {
		n := 0
		for i := range out {
			clear(out[i])
		}
		for _, fd := range fds {
			f, ok := t.tg.fds.get(fd)
			if !ok {
				continue
			}
			var want uint16
			for i := range in {
				if in[i] != nil && in[i][fd/64]&(1<<(fd%64)) != 0 {
					want |= sets[i]
				}
			}
			rev := pollReady(f, want|pollERR|pollHUP)
			for i := range in {
				if in[i] != nil && in[i][fd/64]&(1<<(fd%64)) != 0 && rev&sets[i] != 0 {
					out[i][fd/64] |= 1 << (fd % 64)
					n++
				}
			}
		}
		return n
	}
	ready := scan()
	if ready == 0 && wait {
		timedOut := t.pollWait(fds, scan, deadline)
		ready = scan()
		if ready == 0 && !timedOut && !t.killed.Load() {
			return 0, true
		}
	}
	for i, a := range addrs {
		if out[i] == nil {
			continue
		}
		b := make([]byte, words*8)
		for w, v := range out[i] {
			binary.LittleEndian.PutUint64(b[w*8:], v)
		}
		if e := t.writeBytes(a, b); e != 0 {
			return errRet(e), false
		}
	}
	return uint64(ready), false
}

func (t *Task) sysSelect(nfds int64, rAddr, wAddr, eAddr, tvAddr uint64) uint64 {
	deadline := int64(-1)
	if tvAddr != 0 {
		b, e := t.readBuf(tvAddr, 16)
		if e != 0 {
			return errRet(e)
		}
		sec, usec := int64(binary.LittleEndian.Uint64(b[0:])), int64(binary.LittleEndian.Uint64(b[8:]))
		if sec < 0 || usec < 0 {
			return errRet(EINVAL)
		}
		sec += usec / 1e6
		usec %= 1e6
		sec = min(sec, 1<<33)
		deadline = t.tg.k.uptimeNs() + sec*1e9 + usec*1e3
	}
	ret, intr := t.doSelect(nfds, rAddr, wAddr, eAddr, deadline, true)
	if intr {
		ret = errRet(Errno(erestartnohand))
	}
	t.putLeft(tvAddr, deadline, true)
	return ret
}

func (t *Task) sysPselect6(nfds int64, rAddr, wAddr, eAddr, tsAddr, sigAddr uint64) uint64 {
	deadline, e := t.deadlineOf(tsAddr)
	if e != 0 {
		return errRet(e)
	}
	maskAddr, size := uint64(0), uint64(0)
	if sigAddr != 0 {
		b, e := t.readBuf(sigAddr, 16)
		if e != 0 {
			return errRet(e)
		}
		maskAddr, size = binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])
	}
	end, e := t.setSigmask(maskAddr, size)
	if e != 0 {
		return errRet(e)
	}
	ret, intr := t.doSelect(nfds, rAddr, wAddr, eAddr, deadline, true)
	if intr {
		ret = errRet(Errno(erestartnohand))
	}
	t.putLeft(tsAddr, deadline, false)
	return end(ret)
}

func init() {
	registerSyscall("select", func(t *Task, a [6]uint64) uint64 {
		return t.sysSelect(int64(int32(a[0])), a[1], a[2], a[3], a[4])
	})
	registerSyscall("pselect6", func(t *Task, a [6]uint64) uint64 {
		return t.sysPselect6(int64(int32(a[0])), a[1], a[2], a[3], a[4], a[5])
	})
}
