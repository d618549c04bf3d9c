package signals

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSignalNames(t *testing.T) {
	cases := map[Signal]string{
		1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV",
		16: "SIGSTKFLT", 17: "SIGCHLD", 19: "SIGSTOP", 29: "SIGIO", 30: "SIGPWR",
		31: "SIGSYS", 32: "SIGRTMIN", 33: "SIGRTMIN+1", 63: "SIGRTMIN+31",
		64: "SIGRTMAX", 0: "signal 0", 65: "signal 65",
	}
	for s, want := range cases {
		assert.Equal(t, want, s.String(), "signal %d", int(s))
	}
	assert.False(t, Signal(0).Valid())
	assert.True(t, Signal(64).Valid())
	assert.False(t, Signal(65).Valid())
	assert.Equal(t, SigSet(0), Signal(0).Mask())
	assert.Equal(t, SigSet(1), SIGHUP.Mask())
	assert.Equal(t, SigSet(1)<<63, SIGRTMAX.Mask())
	assert.True(t, SIGRTMIN.IsRealtime())
	assert.False(t, SIGSYS.IsRealtime())
}

func TestDefaultActions(t *testing.T) {
	// signal(7), "Standard signals" table.
	want := map[Signal]DefaultAction{
		SIGHUP: ActTerminate, SIGINT: ActTerminate, SIGQUIT: ActCore, SIGILL: ActCore,
		SIGTRAP: ActCore, SIGABRT: ActCore, SIGBUS: ActCore, SIGFPE: ActCore,
		SIGKILL: ActTerminate, SIGUSR1: ActTerminate, SIGSEGV: ActCore, SIGUSR2: ActTerminate,
		SIGPIPE: ActTerminate, SIGALRM: ActTerminate, SIGTERM: ActTerminate,
		SIGSTKFLT: ActTerminate, SIGCHLD: ActIgnore, SIGCONT: ActContinue, SIGSTOP: ActStop,
		SIGTSTP: ActStop, SIGTTIN: ActStop, SIGTTOU: ActStop, SIGURG: ActIgnore,
		SIGXCPU: ActCore, SIGXFSZ: ActCore, SIGVTALRM: ActTerminate, SIGPROF: ActTerminate,
		SIGWINCH: ActIgnore, SIGIO: ActTerminate, SIGPWR: ActTerminate, SIGSYS: ActCore,
	}
	for s := Signal(1); s <= NSIG; s++ {
		w, ok := want[s]
		if !ok {
			w = ActTerminate // real-time signals
		}
		assert.Equal(t, w, s.Default(), "%v", s)
	}
	assert.False(t, SIGKILL.Catchable())
	assert.False(t, SIGSTOP.Catchable())
	assert.True(t, SIGSEGV.Catchable())
	assert.False(t, Signal(0).Catchable())
}

func TestSigSet(t *testing.T) {
	var m SigSet
	m = m.Add(SIGINT).Add(SIGRTMAX).Add(SIGSEGV)
	assert.True(t, m.Has(SIGINT))
	assert.True(t, m.Has(SIGRTMAX))
	assert.False(t, m.Has(SIGHUP))
	assert.Equal(t, SIGINT, m.Lowest())
	m = m.Del(SIGINT)
	assert.Equal(t, SIGSEGV, m.Lowest())
	assert.Equal(t, Signal(0), SigSet(0).Lowest())
	assert.Equal(t, SigSet(0x100|0x40000), UnblockableMask) // bits 8 (SIGKILL) and 18 (SIGSTOP)
}

func TestSigActionMarshal(t *testing.T) {
	a := SigAction{Handler: 0x401000, Flags: SA_SIGINFO | SA_RESTORER | SA_ONSTACK, Restorer: 0x402000, Mask: SIGUSR1.Mask() | SIGRTMAX.Mask()}
	b := a.Marshal()
	assert.Equal(t, []byte{0x00, 0x10, 0x40, 0, 0, 0, 0, 0}, b[0:8])
	assert.Equal(t, []byte{0x04, 0, 0, 0x0c, 0, 0, 0, 0}, b[8:16])
	assert.Equal(t, []byte{0x00, 0x20, 0x40, 0, 0, 0, 0, 0}, b[16:24])
	assert.Equal(t, []byte{0x00, 0x02, 0, 0, 0, 0, 0, 0x80}, b[24:32])
	got, ok := UnmarshalSigAction(b[:])
	require.True(t, ok)
	assert.Equal(t, a, got)
	_, ok = UnmarshalSigAction(b[:31])
	assert.False(t, ok)

	assert.True(t, SigAction{Handler: SIG_IGN}.Ignores(SIGTERM))
	assert.True(t, SigAction{Handler: SIG_DFL}.Ignores(SIGCHLD))
	assert.True(t, SigAction{Handler: SIG_DFL}.Ignores(SIGCONT))
	assert.False(t, SigAction{Handler: SIG_DFL}.Ignores(SIGTERM))
	assert.False(t, SigAction{Handler: 0x1234}.Ignores(SIGCHLD))
}

func TestThreadFlags(t *testing.T) {
	var f ThreadFlags
	assert.Equal(t, uint32(0), f.Load())
	f.Set(TIF_SIGPENDING | TIF_UPROBE)
	assert.True(t, f.Test(TIF_UPROBE))
	assert.False(t, f.Test(TIF_NEED_RESCHED))
	assert.True(t, f.TestAndClear(TIF_UPROBE))
	assert.False(t, f.TestAndClear(TIF_UPROBE))
	assert.Equal(t, TIF_SIGPENDING, f.Load())
	f.Clear(TIF_SIGPENDING)
	assert.Equal(t, uint32(0), f.Load())

	// Concurrent setters and one clearer never lose bits.
	var wg sync.WaitGroup
	const n = 200
	counts := make(chan int, 1)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			f.Set(TIF_NOTIFY_RESUME)
			f.Set(TIF_NEED_RESCHED)
		}
	}()
	go func() {
		defer wg.Done()
		c := 0
		for i := 0; i < n; i++ {
			if f.TestAndClear(TIF_NOTIFY_RESUME) {
				c++
			}
		}
		counts <- c
	}()
	wg.Wait()
	<-counts
	assert.True(t, f.Test(TIF_NEED_RESCHED))
	assert.Zero(t, f.Load()&TIF_SIGPENDING)
}
