package tasks

import (
	"encoding/binary"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Resource limits (include/uapi/asm-generic/resource.h), per process as in
// Linux's signal_struct.rlim: inherited by fork, kept across execve.
const (
	rlimitCPU        = 0
	rlimitFsize      = 1
	rlimitData       = 2
	rlimitStack      = 3
	rlimitCore       = 4
	rlimitNproc      = 6
	rlimitNofile     = 7
	rlimitMemlock    = 8
	rlimitAS         = 9
	rlimitSigpending = 11
	rlimitMsgqueue   = 12
	rlimNlimits      = 16

	rlimInfinity = ^uint64(0)
)

// rlimit is one soft/hard pair.
type rlimit struct{ cur, max uint64 }

// rlimits is a process's table (protected by ThreadGroup.mu).
type rlimits [rlimNlimits]rlimit

// fdHardCap is the most descriptors a process can ever have in uvm
// (Linux's fs.nr_open default), whatever the guest asks for.
const fdHardCap = 1 << 20

// defaultRlimits is what the first process gets: Linux's defaults for a
// login session, with the hard limits the uvm user chose (--max-open-files,
// --max-procs, --cpu-limit).
func (k *Kernel) defaultRlimits() rlimits {
	var r rlimits
	for i := range r {
		r[i] = rlimit{rlimInfinity, rlimInfinity}
	}
	r[rlimitStack].cur = vm.StackSize
	r[rlimitCore].cur = 0
	r[rlimitMemlock] = rlimit{8 << 20, 8 << 20}
	r[rlimitMsgqueue] = rlimit{819200, 819200}
	r[rlimitSigpending] = rlimit{63459, 63459}
	nofile := uint64(fdHardCap)
	if n := k.opts.Limits.MaxOpenFiles; n > 0 {
		nofile = uint64(n)
	}
	r[rlimitNofile] = rlimit{min(1024, nofile), nofile}
	if n := k.opts.Limits.MaxProcs; n > 0 {
		r[rlimitNproc] = rlimit{uint64(n), uint64(n)}
	}
	if s := k.opts.Limits.CPUSeconds; s > 0 {
		r[rlimitCPU] = rlimit{uint64(s), uint64(s) + 1}
	}
	return r
}

// rlimit returns the process's current soft limit for res.
func (tg *ThreadGroup) rlimit(res int) uint64 {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.rlim[res].cur
}

func (t *Task) sysPrlimit(pid, res, newAddr, oldAddr uint64) uint64 {
	tg := t.tg
	if pid != 0 && pid != uint64(tg.pid) {
		tg.k.procMu.Lock()
		p := tg.k.procs[int32(pid)]
		tg.k.procMu.Unlock()
		if p == nil || int32(pid) <= 0 {
			return errRet(ESRCH)
		}
		tg = p
	}
	if res >= rlimNlimits {
		return errRet(EINVAL)
	}
	var nl rlimit
	if newAddr != 0 {
		b, e := t.readBuf(newAddr, 16)
		if e != 0 {
			return errRet(e)
		}
		nl = rlimit{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}
		if nl.cur > nl.max {
			return errRet(EINVAL)
		}
	}
	tg.mu.Lock()
	old := tg.rlim[res]
	if newAddr != 0 {
		// Raising a hard limit needs CAP_SYS_RESOURCE; uvm's own caps
		// (--max-open-files …) bind even root.
		if nl.max > old.max && (!t.creds().capable(capSysResource) || res == rlimitNofile && nl.max > t.tg.k.nofileCap()) {
			tg.mu.Unlock()
			return errRet(EPERM)
		}
		if res == rlimitNofile && nl.max > fdHardCap {
			tg.mu.Unlock()
			return errRet(EPERM)
		}
		tg.rlim[res] = nl
	}
	tg.mu.Unlock()
	if newAddr != 0 && res == rlimitNofile {
		tg.fds.setLimit(nl.cur)
	}
	if oldAddr != 0 {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[0:], old.cur)
		binary.LittleEndian.PutUint64(b[8:], old.max)
		if e := t.writeBytes(oldAddr, b[:]); e != 0 {
			return errRet(e)
		}
	}
	return 0
}

// nofileCap is the hard RLIMIT_NOFILE no guest can pass.
func (k *Kernel) nofileCap() uint64 {
	if n := k.opts.Limits.MaxOpenFiles; n > 0 {
		return uint64(n)
	}
	return fdHardCap
}

// checkAS reports whether mapping length more bytes stays within
// RLIMIT_AS (may_expand_vm).
func (t *Task) checkAS(length uint64) bool {
	t.tg.mu.Lock()
	defer t.tg.mu.Unlock()
	return t.checkASLocked(length)
}

// checkASLocked is checkAS with tg.mu held.
func (t *Task) checkASLocked(length uint64) bool {
	lim := t.tg.rlim[rlimitAS].cur
	if lim == rlimInfinity {
		return true
	}
	total := t.tg.mm.TotalVM()
	return total+length >= total && total+length <= lim
}

// checkFsize applies RLIMIT_FSIZE to a write of n bytes at offset off of a
// regular file: the count that may be written, or SIGXFSZ + EFBIG when
// nothing may (as Linux's generic_write_check_limits).
func (t *Task) checkFsize(off int64, n uint64) (uint64, Errno) {
	lim := t.tg.rlimit(rlimitFsize)
	if lim == rlimInfinity || off < 0 {
		return n, 0
	}
	if uint64(off) >= lim {
		t.tg.sendSignal(signals.KernelInfo(signals.SIGXFSZ), t)
		return 0, EFBIG
	}
	return min(n, lim-uint64(off)), 0
}

// checkCPU enforces RLIMIT_CPU on the process's CPU time, which uvm
// measures as retired guest instructions at NsPerInsn each (the virtual
// clock's rate): SIGXCPU at the soft limit and every second after it,
// SIGKILL at the hard limit.
func (t *Task) checkCPU() {
	tg := t.tg
	tg.mu.Lock()
	lim := tg.rlim[rlimitCPU]
	tg.mu.Unlock()
	if lim.cur == rlimInfinity {
		return
	}
	secs := tg.Retired() * uint64(tg.k.opts.NsPerInsn) / 1e9
	switch {
	case lim.max != rlimInfinity && secs >= lim.max:
		tg.k.logf("process %d passed its CPU limit (%d s): SIGKILL", tg.pid, lim.max)
		tg.exitGroup(ExitStatus{Signal: sigKILL})
	case secs >= lim.cur:
		tg.mu.Lock()
		due := secs > tg.xcpuSent || tg.xcpuSent == 0
		tg.xcpuSent = secs
		tg.mu.Unlock()
		if due {
			tg.sendSignal(signals.KernelInfo(signals.SIGXCPU), nil)
		}
	}
}
