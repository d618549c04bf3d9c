package tasks

// nanosleep and clock_nanosleep on the kernel's clock, with Linux's
// restart rules: an interrupted relative sleep writes the time left to
// rem and returns ERESTART_RESTARTBLOCK, so that after a stop or a signal
// without handler it resumes (restart_syscall) until the original
// deadline, and a handler makes it EINTR; an absolute one returns
// ERESTARTNOHAND and restarts as issued.

// sleepFor sleeps ns nanoseconds of the kernel's clock unless a signal or
// a kill ends it.
func sleepFor(t *Task, ns int64) {
	if ns <= 0 {
		if t.tg.k.det != nil {
			t.tg.k.det.yield(t)
		}
		return
	}
	t.wait(func() bool { return false }, nil, ns)
}

func (t *Task) sysNanosleep(req, rem uint64) uint64 {
	ns, e := t.readTimespec(req)
	if e != 0 {
		return errRet(e)
	}
	return t.sleepUntil(t.tg.k.uptimeNs()+ns, rem, false)
}

// sleepUntil sleeps until uptime deadline (see the file comment).
func (t *Task) sleepUntil(deadline int64, rem uint64, abs bool) uint64 {
	k := t.tg.k
	sleepFor(t, deadline-k.uptimeNs())
	left := deadline - k.uptimeNs()
	if t.killed.Load() || left <= 0 || !t.sigPending() {
		return 0
	}
	if abs {
		return errRet(Errno(erestartnohand))
	}
	if rem != 0 {
		if e := t.putTimespec(rem, left); e != 0 {
			return errRet(e)
		}
	}
	t.restartBlock = func(t *Task) uint64 { return t.sleepUntil(deadline, rem, false) }
	return errRet(erestartRestartblock)
}

func (t *Task) sysClockNanosleep(id int32, flags, req, rem uint64) uint64 {
	ns, e := t.readTimespec(req)
	if e != 0 {
		return errRet(e)
	}
	now, e := t.clockNow(id)
	if e != 0 {
		return errRet(e)
	}
	if id == clockThreadCPUTime {
		return errRet(EINVAL) // as Linux: a thread cannot sleep on its own CPU clock
	}
	up := t.tg.k.uptimeNs()
	if flags&timerAbstime != 0 {
		return t.sleepUntil(up+ns-now, 0, true)
	}
	return t.sleepUntil(up+ns, rem, false)
}
