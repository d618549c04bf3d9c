package signals

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func u32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func u64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
func u16(b []byte, off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }

func TestSigInfoLayout(t *testing.T) {
	cases := []struct {
		sig  Signal
		code int32
		want Layout
	}{
		{SIGTERM, SI_USER, LayoutKill},
		{SIGTERM, SI_TKILL, LayoutRT},
		{SIGUSR1, SI_QUEUE, LayoutRT},
		{SIGALRM, SI_TIMER, LayoutTimer},
		{SIGIO, SI_SIGIO, LayoutPoll},
		{SIGSEGV, SI_KERNEL, LayoutKill},
		{SIGSEGV, SEGV_MAPERR, LayoutFault},
		{SIGSEGV, SEGV_ACCERR, LayoutFault},
		{SIGSEGV, SEGV_BNDERR, LayoutFaultBndErr},
		{SIGSEGV, SEGV_PKUERR, LayoutFaultPkuErr},
		{SIGBUS, BUS_ADRALN, LayoutFault},
		{SIGBUS, BUS_MCEERR_AR, LayoutFaultMCEErr},
		{SIGILL, ILL_ILLOPC, LayoutFault},
		{SIGFPE, FPE_INTDIV, LayoutFault},
		{SIGTRAP, TRAP_BRKPT, LayoutFault},
		{SIGTRAP, TRAP_PERF, LayoutFaultPerf},
		{SIGCHLD, CLD_EXITED, LayoutChld},
		{SIGCHLD, CLD_DUMPED, LayoutChld},
		{SIGPOLL, POLL_IN, LayoutPoll},
		{SIGSYS, SYS_SECCOMP, LayoutSys},
		{SIGUSR1, 3, LayoutPoll},  // positive code of a signal without codes: SIL_POLL
		{SIGSEGV, 40, LayoutKill}, // beyond every NSIG* limit
		{SIGCHLD, 7, LayoutKill},  // beyond NSIGCHLD and NSIGPOLL
		{SIGRTMIN + 2, SI_QUEUE, LayoutRT},
	}
	for _, c := range cases {
		si := SigInfo{Signo: int32(c.sig), Code: c.code}
		assert.Equal(t, c.want, si.Layout(), "%v code %d", c.sig, c.code)
	}
}

func TestSigInfoMarshal(t *testing.T) {
	// kill: pid @16, uid @20.
	si := KillInfo(SIGTERM, SI_USER, 1234, 1000)
	si.Errno = 7
	si.Addr = 0xdead // not part of the kill layout: not written
	b := si.Marshal()
	assert.Equal(t, uint32(15), u32(b[:], 0))
	assert.Equal(t, uint32(7), u32(b[:], 4))
	assert.Equal(t, uint32(0), u32(b[:], 8))
	assert.Equal(t, uint32(0), u32(b[:], 12))
	assert.Equal(t, uint32(1234), u32(b[:], 16))
	assert.Equal(t, uint32(1000), u32(b[:], 20))
	for i := 24; i < 128; i++ {
		assert.Zero(t, b[i], "byte %d", i)
	}

	// rt: pid, uid, sigval @24.
	si = SigInfo{Signo: int32(SIGRTMIN + 1), Code: SI_QUEUE, Pid: 5, UID: 6, Value: 0x1122334455667788}
	b = si.Marshal()
	assert.Equal(t, uint32(33), u32(b[:], 0))
	assert.Equal(t, uint32(0xffffffff), u32(b[:], 8)) // -1
	assert.Equal(t, uint32(5), u32(b[:], 16))
	assert.Equal(t, uint32(6), u32(b[:], 20))
	assert.Equal(t, uint64(0x1122334455667788), u64(b[:], 24))

	// fault: addr @16.
	si = FaultInfo(SIGSEGV, SEGV_ACCERR, 0x7fff0000dead)
	b = si.Marshal()
	assert.Equal(t, uint32(11), u32(b[:], 0))
	assert.Equal(t, uint32(2), u32(b[:], 8))
	assert.Equal(t, uint64(0x7fff0000dead), u64(b[:], 16))
	assert.Equal(t, uint64(0), u64(b[:], 24))

	// chld: pid, uid, status @24, utime @32, stime @40.
	si = SigInfo{Signo: int32(SIGCHLD), Code: CLD_EXITED, Pid: 42, UID: 7, Status: 3, Utime: 11, Stime: -2}
	b = si.Marshal()
	assert.Equal(t, uint32(42), u32(b[:], 16))
	assert.Equal(t, uint32(7), u32(b[:], 20))
	assert.Equal(t, uint32(3), u32(b[:], 24))
	assert.Equal(t, uint32(0), u32(b[:], 28))
	assert.Equal(t, uint64(11), u64(b[:], 32))
	assert.Equal(t, ^uint64(1), u64(b[:], 40))

	// timer: tid @16, overrun @20, sigval @24.
	si = SigInfo{Signo: int32(SIGALRM), Code: SI_TIMER, TimerID: 3, Overrun: 9, Value: 77}
	b = si.Marshal()
	assert.Equal(t, uint32(0xfffffffe), u32(b[:], 8))
	assert.Equal(t, uint32(3), u32(b[:], 16))
	assert.Equal(t, uint32(9), u32(b[:], 20))
	assert.Equal(t, uint64(77), u64(b[:], 24))

	// sys: call_addr @16, syscall @24, arch @28.
	si = SigInfo{Signo: int32(SIGSYS), Code: SYS_SECCOMP, Addr: 0x401234, Syscall: 59, Arch: 0xc000003e}
	b = si.Marshal()
	assert.Equal(t, uint64(0x401234), u64(b[:], 16))
	assert.Equal(t, uint32(59), u32(b[:], 24))
	assert.Equal(t, uint32(0xc000003e), u32(b[:], 28))

	// poll: band @16 (long), fd @24.
	si = SigInfo{Signo: int32(SIGIO), Code: POLL_IN, Band: 0x41, FD: 5}
	b = si.Marshal()
	assert.Equal(t, uint64(0x41), u64(b[:], 16))
	assert.Equal(t, uint32(5), u32(b[:], 24))

	// mceerr: addr_lsb @24 (short).
	si = SigInfo{Signo: int32(SIGBUS), Code: BUS_MCEERR_AR, Addr: 0x1000, AddrLSB: 12}
	b = si.Marshal()
	assert.Equal(t, uint16(12), u16(b[:], 24))
}

func TestSigInfoRoundTrip(t *testing.T) {
	infos := []SigInfo{
		KillInfo(SIGINT, SI_TKILL, 10, 20),
		KillInfo(SIGHUP, SI_USER, 1, 2),
		KernelInfo(SIGSEGV),
		FaultInfo(SIGBUS, BUS_ADRALN, 0x1001),
		FaultInfo(SIGILL, ILL_ILLOPC, 0x400000),
		FaultInfo(SIGFPE, FPE_INTDIV, 0x400004),
		FaultInfo(SIGTRAP, TRAP_BRKPT, 0x400008),
		{Signo: int32(SIGRTMAX), Code: SI_QUEUE, Pid: -1, UID: 3, Value: 1 << 60},
		{Signo: int32(SIGCHLD), Code: CLD_KILLED, Pid: 9, Status: 9, Utime: 1, Stime: 2},
		{Signo: int32(SIGALRM), Code: SI_TIMER, TimerID: 1, Overrun: 2, Value: 3},
		{Signo: int32(SIGSEGV), Code: SEGV_BNDERR, Addr: 8, AddrLSB: 1, Lower: 2, Upper: 3},
		{Signo: int32(SIGSEGV), Code: SEGV_PKUERR, Addr: 8, Pkey: 4},
		{Signo: int32(SIGPOLL), Code: POLL_HUP, Band: -1, FD: 3},
		{Signo: int32(SIGSYS), Code: SYS_SECCOMP, Addr: 1, Syscall: 2, Arch: 3},
	}
	for _, si := range infos {
		b := si.Marshal()
		got, ok := UnmarshalSigInfo(b[:])
		require.True(t, ok)
		assert.Equal(t, si, got)
	}
	_, ok := UnmarshalSigInfo(make([]byte, 127))
	assert.False(t, ok)
}
