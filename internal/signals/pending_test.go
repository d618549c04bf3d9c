package signals

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rt(n int, value uint64) SigInfo {
	return SigInfo{Signo: int32(SIGRTMIN) + int32(n), Code: SI_QUEUE, Pid: 1, Value: value}
}

func TestPendingCoalesce(t *testing.T) {
	var p Pending
	assert.Equal(t, Queued, p.Add(KillInfo(SIGUSR1, SI_USER, 10, 0)))
	assert.Equal(t, Coalesced, p.Add(KillInfo(SIGUSR1, SI_USER, 11, 0)))
	assert.Equal(t, 1, p.Len())
	assert.True(t, p.Has(SIGUSR1))
	si, ok := p.Dequeue(0)
	require.True(t, ok)
	assert.Equal(t, int32(10), si.Pid) // the first one's siginfo survives
	_, ok = p.Dequeue(0)
	assert.False(t, ok)
	assert.Equal(t, SigSet(0), p.Set())
	// Once dequeued it can be pending again.
	assert.Equal(t, Queued, p.Add(KillInfo(SIGUSR1, SI_USER, 12, 0)))
	assert.Equal(t, Coalesced, p.Add(SigInfo{Signo: 0}))
}

func TestPendingRealtimeOrder(t *testing.T) {
	var p Pending
	p.Add(rt(1, 1))
	p.Add(rt(1, 2))
	p.Add(rt(1, 3))
	p.Add(rt(0, 9))
	assert.Equal(t, 4, p.Len())
	var got []uint64
	var sigs []Signal
	for {
		si, ok := p.Dequeue(0)
		if !ok {
			break
		}
		got = append(got, si.Value)
		sigs = append(sigs, si.Sig())
		if si.Sig() == SIGRTMIN+1 && si.Value < 3 {
			assert.True(t, p.Has(SIGRTMIN+1), "still pending while instances remain")
		}
	}
	// Lowest number first; each signal's instances in arrival order.
	assert.Equal(t, []uint64{9, 1, 2, 3}, got)
	assert.Equal(t, []Signal{SIGRTMIN, SIGRTMIN + 1, SIGRTMIN + 1, SIGRTMIN + 1}, sigs)
	assert.Equal(t, 0, p.Len())
	assert.Equal(t, SigSet(0), p.Set())
}

func TestPendingSynchronousFirst(t *testing.T) {
	var p Pending
	p.Add(KillInfo(SIGHUP, SI_USER, 1, 0))
	p.Add(KillInfo(SIGINT, SI_USER, 1, 0))
	p.Add(KillInfo(SIGSEGV, SI_USER, 1, 0)) // sent by kill: synchronous by number
	p.Add(KillInfo(SIGTRAP, SI_USER, 1, 0))
	p.Add(rt(0, 0))
	var order []Signal
	for {
		si, ok := p.Dequeue(0)
		if !ok {
			break
		}
		order = append(order, si.Sig())
	}
	assert.Equal(t, []Signal{SIGTRAP, SIGSEGV, SIGHUP, SIGINT, SIGRTMIN}, order)
}

func TestPendingBlockedStay(t *testing.T) {
	var own, shared Pending
	own.Add(KillInfo(SIGUSR1, SI_TKILL, 1, 0))
	shared.Add(KillInfo(SIGUSR2, SI_USER, 1, 0))
	blocked := SIGUSR1.Mask() | SIGUSR2.Mask()
	_, ok := Dequeue(&own, &shared, blocked)
	assert.False(t, ok)
	assert.False(t, Deliverable(&own, &shared, blocked))
	assert.True(t, own.Has(SIGUSR1))
	assert.True(t, shared.Has(SIGUSR2))

	var f ThreadFlags
	f.Set(TIF_SIGPENDING)
	assert.False(t, RecalcSigpending(&f, &own, &shared, blocked))
	assert.False(t, f.Test(TIF_SIGPENDING))

	blocked = blocked.Del(SIGUSR2)
	assert.True(t, Deliverable(&own, &shared, blocked))
	assert.True(t, RecalcSigpending(&f, &own, &shared, blocked))
	assert.True(t, f.Test(TIF_SIGPENDING))
	si, ok := Dequeue(&own, &shared, blocked)
	require.True(t, ok)
	assert.Equal(t, SIGUSR2, si.Sig())
	assert.True(t, own.Has(SIGUSR1), "blocked signal is still pending")
	assert.True(t, Deliverable(&own, nil, 0))
}

func TestDequeueOwnBeforeShared(t *testing.T) {
	var own, shared Pending
	shared.Add(KillInfo(SIGHUP, SI_USER, 1, 0))
	own.Add(KillInfo(SIGTERM, SI_TKILL, 2, 0))
	si, ok := Dequeue(&own, &shared, 0)
	require.True(t, ok)
	assert.Equal(t, SIGTERM, si.Sig())
	si, ok = Dequeue(&own, &shared, 0)
	require.True(t, ok)
	assert.Equal(t, SIGHUP, si.Sig())
	_, ok = Dequeue(&own, nil, 0)
	assert.False(t, ok)
}

func TestDequeueSynchronousQueueOrder(t *testing.T) {
	// dequeue_synchronous_signal takes the first kernel-generated
	// synchronous siginfo in arrival order, even when a lower-numbered
	// synchronous signal is pending too.
	var own Pending
	own.Add(KillInfo(SIGUSR1, SI_USER, 1, 0))
	own.Add(FaultInfo(SIGSEGV, SEGV_MAPERR, 0x10))
	own.Add(FaultInfo(SIGBUS, BUS_ADRALN, 0x11))
	si, ok := Dequeue(&own, nil, 0)
	require.True(t, ok)
	assert.Equal(t, SIGSEGV, si.Sig())
	assert.Equal(t, uint64(0x10), si.Addr)
	si, _ = Dequeue(&own, nil, 0)
	assert.Equal(t, SIGBUS, si.Sig())
	si, _ = Dequeue(&own, nil, 0)
	assert.Equal(t, SIGUSR1, si.Sig())

	// A synchronous signal sent by kill (si_code <= 0) is not "kernel
	// generated": next_signal's order applies.
	own.Add(KillInfo(SIGSEGV, SI_USER, 1, 0))
	own.Add(FaultInfo(SIGFPE, FPE_INTDIV, 0x20))
	si, _ = Dequeue(&own, nil, 0)
	assert.Equal(t, SIGFPE, si.Sig())

	// All synchronous signals blocked: nothing from the fast path.
	own.Flush()
	own.Add(FaultInfo(SIGSEGV, SEGV_MAPERR, 0x10))
	_, ok = Dequeue(&own, nil, SIGSEGV.Mask())
	assert.False(t, ok)
}

func TestPendingKillAndLimit(t *testing.T) {
	var p Pending
	p.Add(KillInfo(SIGKILL, SI_USER, 77, 0))
	assert.Equal(t, 0, p.Len(), "SIGKILL's siginfo is never queued")
	si, ok := p.Dequeue(0)
	require.True(t, ok)
	assert.Equal(t, SigInfo{Signo: int32(SIGKILL), Code: SI_USER}, si)

	p = Pending{Limit: 2}
	assert.Equal(t, Queued, p.Add(rt(0, 1)))
	assert.Equal(t, Queued, p.Add(rt(0, 2)))
	assert.Equal(t, QueueFull, p.Add(rt(0, 3)))
	assert.Equal(t, Queued, p.Add(SigInfo{Signo: int32(SIGRTMIN), Code: SI_USER, Pid: 4}), "kill() overrides the limit")
	assert.Equal(t, Queued, p.Add(SigInfo{Signo: int32(SIGUSR1), Code: SI_QUEUE, Pid: 5}), "standard signal loses its info")
	assert.Equal(t, 3, p.Len())
	si, _ = p.Dequeue(SIGRTMIN.Mask())
	assert.Equal(t, SigInfo{Signo: int32(SIGUSR1), Code: SI_USER}, si)
	var vals []uint64
	for {
		si, ok := p.Dequeue(0)
		if !ok {
			break
		}
		vals = append(vals, si.Value)
	}
	assert.Equal(t, []uint64{1, 2, 0}, vals)
}

func TestPendingRemove(t *testing.T) {
	var p Pending
	p.Add(rt(3, 1))
	p.Add(KillInfo(SIGCONT, SI_USER, 1, 0))
	p.Add(rt(3, 2))
	p.Add(KillInfo(SIGTSTP, SI_USER, 1, 0))
	assert.True(t, p.Remove((SIGRTMIN + 3).Mask()))
	assert.False(t, p.Remove((SIGRTMIN + 3).Mask()))
	assert.Equal(t, SIGCONT.Mask()|SIGTSTP.Mask(), p.Set())
	q := p.Queued()
	require.Len(t, q, 2)
	assert.Equal(t, SIGCONT, q[0].Sig())
	assert.Equal(t, SIGTSTP, q[1].Sig())
	p.Flush()
	assert.Equal(t, 0, p.Len())
	assert.Equal(t, SigSet(0), p.Set())
}

func TestSetAction(t *testing.T) {
	var sh Sighand
	_, err := sh.SetAction(SIGKILL, &SigAction{Handler: 0x1000})
	assert.ErrorIs(t, err, ErrInvalidSignal)
	_, err = sh.SetAction(0, nil)
	assert.ErrorIs(t, err, ErrInvalidSignal)
	old, err := sh.SetAction(SIGSTOP, nil) // query is allowed
	require.NoError(t, err)
	assert.Equal(t, SigAction{}, old)

	act := SigAction{Handler: 0x1000, Flags: SA_SIGINFO | SA_UNSUPPORTED | 1<<40, Mask: ^SigSet(0)}
	_, err = sh.SetAction(SIGUSR1, &act)
	require.NoError(t, err)
	got := sh.Action(SIGUSR1)
	assert.Equal(t, uint64(SA_SIGINFO), got.Flags, "unknown flag bits cleared")
	assert.Equal(t, ^UnblockableMask, got.Mask)

	// Installing SIG_IGN discards pending instances everywhere.
	var own, shared Pending
	own.Add(KillInfo(SIGUSR1, SI_TKILL, 1, 0))
	shared.Add(KillInfo(SIGUSR1, SI_USER, 1, 0))
	shared.Add(KillInfo(SIGUSR2, SI_USER, 1, 0))
	old, err = sh.SetAction(SIGUSR1, &SigAction{Handler: SIG_IGN}, &own, &shared, nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x1000), old.Handler)
	assert.False(t, own.Has(SIGUSR1))
	assert.False(t, shared.Has(SIGUSR1))
	assert.True(t, shared.Has(SIGUSR2))

	// SIG_DFL for a default-ignored signal discards too.
	shared.Add(KillInfo(SIGCHLD, SI_USER, 1, 0))
	_, _ = sh.SetAction(SIGCHLD, &SigAction{Handler: SIG_DFL}, &shared)
	assert.False(t, shared.Has(SIGCHLD))

	c := sh.Clone()
	assert.Equal(t, sh.Actions, c.Actions)
	sh.Actions[SIGUSR2] = SigAction{Handler: 0x2000, Flags: SA_RESTART, Restorer: 5, Mask: 3}
	sh.ResetForExec()
	assert.Equal(t, SigAction{Handler: SIG_IGN}, sh.Action(SIGUSR1))
	assert.Equal(t, SigAction{}, sh.Action(SIGUSR2))
}

func TestSend(t *testing.T) {
	var sh Sighand
	var own, shared Pending
	all := []*Pending{&own, &shared}
	sh.Actions[SIGUSR1].Handler = SIG_IGN
	assert.Equal(t, SendIgnored, sh.Send(KillInfo(SIGUSR1, SI_USER, 1, 0), &shared, 0, all))
	assert.Equal(t, SendQueued, sh.Send(KillInfo(SIGUSR1, SI_USER, 1, 0), &shared, SIGUSR1.Mask(), all),
		"blocked signals are never ignored")
	assert.Equal(t, SendIgnored, sh.Send(KillInfo(SIGWINCH, SI_USER, 1, 0), &shared, 0, all))

	// Stop signals discard SIGCONT and vice versa.
	own.Add(KillInfo(SIGCONT, SI_USER, 1, 0))
	assert.Equal(t, SendQueued, sh.Send(KillInfo(SIGTSTP, SI_USER, 1, 0), &shared, 0, all))
	assert.False(t, own.Has(SIGCONT))
	own.Add(KillInfo(SIGTTIN, SI_USER, 1, 0))
	sh.Send(KillInfo(SIGCONT, SI_USER, 1, 0), &shared, 0, all)
	assert.False(t, own.Has(SIGTTIN))
	assert.False(t, shared.Has(SIGTSTP))
	// SIGCONT itself is default-ignored: dropped unless blocked.
	assert.False(t, shared.Has(SIGCONT))

	q := Pending{Limit: 1}
	sh.Send(rt(0, 1), &q, 0, nil)
	assert.Equal(t, SendQueueFull, sh.Send(rt(0, 2), &q, 0, nil))

	assert.True(t, sh.Fatal(SIGTERM))
	assert.False(t, sh.Fatal(SIGCHLD))
	assert.False(t, sh.Fatal(SIGTSTP))
	assert.False(t, sh.Fatal(SIGUSR1)) // ignored
	sh.Actions[SIGTERM].Handler = 0x1234
	assert.False(t, sh.Fatal(SIGTERM))
}

func TestForce(t *testing.T) {
	var sh Sighand
	var own Pending
	sh.Actions[SIGSEGV] = SigAction{Handler: 0x5000, Flags: SA_SIGINFO}
	blocked := SIGSEGV.Mask() | SIGUSR1.Mask()
	sh.Force(FaultInfo(SIGSEGV, SEGV_MAPERR, 8), &own, &blocked, false)
	assert.Equal(t, SIGUSR1.Mask(), blocked, "forced signal unblocked")
	assert.Equal(t, uint64(SIG_DFL), sh.Action(SIGSEGV).Handler, "blocked → handler reset")
	assert.True(t, own.Has(SIGSEGV))

	// Unblocked and caught: the handler stays.
	own.Flush()
	sh.Actions[SIGFPE] = SigAction{Handler: 0x6000}
	sh.Force(FaultInfo(SIGFPE, FPE_INTDIV, 8), &own, &blocked, false)
	assert.Equal(t, uint64(0x6000), sh.Action(SIGFPE).Handler)
	// Ignored: reset.
	sh.Actions[SIGILL] = SigAction{Handler: SIG_IGN}
	sh.Force(FaultInfo(SIGILL, ILL_ILLOPC, 8), &own, &blocked, false)
	assert.Equal(t, uint64(SIG_DFL), sh.Action(SIGILL).Handler)

	// force_sigsegv: SIGSEGV handler reset only when the failed one was SIGSEGV.
	sh.Actions[SIGSEGV] = SigAction{Handler: 0x5000}
	sh.ForceSigsegv(SIGUSR1, &own, &blocked)
	assert.Equal(t, uint64(0x5000), sh.Action(SIGSEGV).Handler)
	sh.ForceSigsegv(SIGSEGV, &own, &blocked)
	assert.Equal(t, uint64(SIG_DFL), sh.Action(SIGSEGV).Handler)
}

func TestGetSignal(t *testing.T) {
	var sh Sighand
	var own, shared Pending
	sh.Actions[SIGUSR1] = SigAction{Handler: SIG_IGN}
	sh.Actions[SIGUSR2] = SigAction{Handler: 0x7000, Flags: SA_RESETHAND | SA_SIGINFO}
	own.Add(KillInfo(SIGUSR1, SI_USER, 1, 0)) // blocked when sent, ignored now
	own.Add(KillInfo(SIGCHLD, SI_USER, 1, 0))
	shared.Add(KillInfo(SIGUSR2, SI_USER, 3, 0))

	info, act, d := sh.GetSignal(&own, &shared, 0)
	assert.Equal(t, DispHandler, d)
	assert.Equal(t, SIGUSR2, info.Sig())
	assert.Equal(t, uint64(0x7000), act.Handler, "the action as it was")
	assert.Equal(t, uint64(SIG_DFL), sh.Action(SIGUSR2).Handler, "SA_RESETHAND")
	assert.False(t, own.Has(SIGUSR1))
	assert.False(t, own.Has(SIGCHLD))

	_, _, d = sh.GetSignal(&own, &shared, 0)
	assert.Equal(t, DispNone, d)

	own.Add(FaultInfo(SIGSEGV, SEGV_MAPERR, 0))
	_, _, d = sh.GetSignal(&own, &shared, 0)
	assert.Equal(t, DispCore, d)
	shared.Add(KillInfo(SIGTERM, SI_USER, 1, 0))
	_, _, d = sh.GetSignal(&own, &shared, 0)
	assert.Equal(t, DispTerminate, d)
	own.Add(KillInfo(SIGTSTP, SI_USER, 1, 0))
	_, _, d = sh.GetSignal(&own, &shared, 0)
	assert.Equal(t, DispStop, d)
	assert.Equal(t, "stop", d.String())
}

func TestBlockedForHandler(t *testing.T) {
	act := SigAction{Handler: 1000, Mask: SIGUSR2.Mask() | SIGKILL.Mask()}
	assert.Equal(t, SIGHUP.Mask()|SIGUSR2.Mask()|SIGUSR1.Mask(), BlockedForHandler(SIGHUP.Mask(), SIGUSR1, act))
	act.Flags = SA_NODEFER
	assert.Equal(t, SIGHUP.Mask()|SIGUSR2.Mask(), BlockedForHandler(SIGHUP.Mask(), SIGUSR1, act))
}

func TestSyscallRestart(t *testing.T) {
	restart := SigAction{Handler: 1, Flags: SA_RESTART}
	plain := SigAction{Handler: 1}
	cases := []struct {
		ret     int64
		handler bool
		act     SigAction
		want    Restart
	}{
		{-EINTR, true, plain, RestartNone},
		{5, false, plain, RestartNone},
		{-ERESTARTSYS, false, plain, RestartSyscall},
		{-ERESTARTNOHAND, false, plain, RestartSyscall},
		{-ERESTARTNOINTR, false, plain, RestartSyscall},
		{-ERESTART_RESTARTBLOCK, false, plain, RestartRestartBlock},
		{-ERESTARTSYS, true, plain, RestartEINTR},
		{-ERESTARTSYS, true, restart, RestartSyscall},
		{-ERESTARTNOHAND, true, restart, RestartEINTR},
		{-ERESTART_RESTARTBLOCK, true, restart, RestartEINTR},
		{-ERESTARTNOINTR, true, plain, RestartSyscall},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, SyscallRestart(c.ret, c.handler, c.act), "ret %d handler %v", c.ret, c.handler)
	}
}
