package tasks

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
)

// parallelTestTask is testTask under the parallel scheduler (host time).
func parallelTestTask(t *testing.T) *Task {
	k := NewKernel(Options{Cwd: t.TempDir()})
	mm := vm.NewMM()
	tg := &ThreadGroup{k: k, arch: &amd64ABI, mm: mm, done: make(chan struct{}), rlim: k.defaultRlimits(), sighand: &signals.Sighand{}}
	tg.fds = newFDTable(k)
	return &Task{tg: tg, cpu: amd64.NewCPU(mm)}
}

// TestWaitSleepsOnChannels: a parallel wait ends when its wake channel
// closes, when a signal interrupts it and at its deadline, without a
// polling period in between: the condition is evaluated a fixed number of
// times however long the wait lasts (no timing assertion: the host may be
// loaded).
func TestWaitSleepsOnChannels(t *testing.T) {
	task := parallelTestTask(t)
	ch := make(chan struct{})
	var flag atomic.Bool
	var checks atomic.Int32
	go func() { time.Sleep(300 * time.Millisecond); flag.Store(true); close(ch) }()
	timedOut := task.wait(func() bool { checks.Add(1); return flag.Load() }, func() <-chan struct{} { return ch }, -1)
	require.False(t, timedOut)
	require.LessOrEqual(t, checks.Load(), int32(3), "the condition was polled, not woken by the channel")

	go func() { time.Sleep(5 * time.Millisecond); task.flags.Set(signals.TIF_SIGPENDING); task.interruptWait() }()
	timedOut = task.waitChans(func() bool { return false }, nil, int64(time.Minute))
	require.False(t, timedOut, "a signal ends the wait")
	task.flags.Clear(signals.TIF_SIGPENDING)

	start := time.Now()
	require.True(t, task.wait(func() bool { return false }, nil, int64(10*time.Millisecond)))
	require.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond)

	// A killable wait ignores a pending signal (no spinning) but not a kill.
	task.flags.Set(signals.TIF_SIGPENDING)
	require.True(t, task.waitKillable(func() bool { return false }, nil, int64(10*time.Millisecond)), "pending signal ignored")
	go func() { time.Sleep(5 * time.Millisecond); task.killed.Store(true); task.interruptWait() }()
	require.False(t, task.waitKillable(func() bool { return false }, nil, -1))
}

// TestTimerFDParallel: a timerfd's interval timer counts expirations on
// the host clock and its wake-up channel closes at the first one.
func TestTimerFDParallel(t *testing.T) {
	task := parallelTestTask(t)
	tf := &timerFD{k: task.tg.k, clock: clockMonotonic}
	tf.kt = tf.k.newKTimer(tf.fire)
	f := &openFile{ops: tf, flags: oRDONLY | oNONBLOCK}
	_, e := tf.read(task, f, 8, -1)
	require.Equal(t, EAGAIN, e)
	w := tf.wakeup()
	tf.mu.Lock()
	tf.expires, tf.interval = tf.k.uptimeNs()+int64(2*time.Millisecond), int64(2*time.Millisecond)
	tf.mu.Unlock()
	tf.kt.arm(tf.expires)
	select {
	case <-w:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up")
	}
	require.Equal(t, uint16(pollIN), tf.poll(pollIN|pollOUT))
	time.Sleep(10 * time.Millisecond)
	b, e := tf.read(task, f, 8, -1)
	require.Zero(t, e)
	require.GreaterOrEqual(t, binary.LittleEndian.Uint64(b), uint64(2))
	tf.release()
}

// TestSignalfdSiginfo checks struct signalfd_siginfo's layout for a
// timer and a kill siginfo.
func TestSignalfdSiginfo(t *testing.T) {
	b := signalfdSiginfo(&signals.SigInfo{Signo: 34, Code: signals.SI_TIMER, TimerID: 3, Overrun: 5, Value: 77})
	le := binary.LittleEndian
	require.Len(t, b, 128)
	require.Equal(t, uint32(34), le.Uint32(b[0:]))
	require.Equal(t, int32(signals.SI_TIMER), int32(le.Uint32(b[8:])))
	require.Equal(t, uint32(3), le.Uint32(b[24:]), "ssi_tid")
	require.Equal(t, uint32(5), le.Uint32(b[32:]), "ssi_overrun")
	require.Equal(t, uint32(77), le.Uint32(b[44:]), "ssi_int")
	require.Equal(t, uint64(77), le.Uint64(b[48:]), "ssi_ptr")
	b = signalfdSiginfo(&signals.SigInfo{Signo: 10, Code: signals.SI_USER, Pid: 1001, UID: 5})
	require.Equal(t, uint32(1001), le.Uint32(b[12:]))
	require.Equal(t, uint32(5), le.Uint32(b[16:]))
}

// TestPosixTimerOverrun: expiries while the signal is queued become the
// overrun the dequeued siginfo carries.
func TestPosixTimerOverrun(t *testing.T) {
	task := testTask(t)
	tg := task.tg
	p := &ptimer{tg: tg, id: 0, clock: clockMonotonic, signo: 34, interval: 10, expires: 10}
	tg.timers.posix = map[int32]*ptimer{0: p}
	tg.timers.mu.Lock()
	require.True(t, p.expireLocked(10), "first expiry sends")
	p.sigQueued = true
	require.False(t, p.expireLocked(45), "queued: counted")
	tg.timers.mu.Unlock()
	require.Equal(t, int64(50), p.expires)
	info := signals.SigInfo{Signo: 34, Code: signals.SI_TIMER, TimerID: 0}
	tg.timerSignalDequeued(&info)
	require.Equal(t, int32(3), info.Overrun, "the expiries at 20, 30 and 40")
	require.False(t, p.sigQueued)
}
