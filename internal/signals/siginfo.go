package signals

import "encoding/binary"

// si_code values (include/uapi/asm-generic/siginfo.h).
const (
	SI_USER     = 0
	SI_KERNEL   = 0x80
	SI_QUEUE    = -1
	SI_TIMER    = -2
	SI_MESGQ    = -3
	SI_ASYNCIO  = -4
	SI_SIGIO    = -5
	SI_TKILL    = -6
	SI_DETHREAD = -7
	SI_ASYNCNL  = -60

	ILL_ILLOPC    = 1
	ILL_ILLOPN    = 2
	ILL_ILLADR    = 3
	ILL_ILLTRP    = 4
	ILL_PRVOPC    = 5
	ILL_PRVREG    = 6
	ILL_COPROC    = 7
	ILL_BADSTK    = 8
	ILL_BADIADDR  = 9
	FPE_INTDIV    = 1
	FPE_INTOVF    = 2
	FPE_FLTDIV    = 3
	FPE_FLTOVF    = 4
	FPE_FLTUND    = 5
	FPE_FLTRES    = 6
	FPE_FLTINV    = 7
	FPE_FLTSUB    = 8
	FPE_FLTUNK    = 14
	FPE_CONDTRAP  = 15
	SEGV_MAPERR   = 1
	SEGV_ACCERR   = 2
	SEGV_BNDERR   = 3
	SEGV_PKUERR   = 4
	SEGV_MTEAERR  = 8
	SEGV_MTESERR  = 9
	SEGV_CPERR    = 10
	BUS_ADRALN    = 1
	BUS_ADRERR    = 2
	BUS_OBJERR    = 3
	BUS_MCEERR_AR = 4
	BUS_MCEERR_AO = 5
	TRAP_BRKPT    = 1
	TRAP_TRACE    = 2
	TRAP_BRANCH   = 3
	TRAP_HWBKPT   = 4
	TRAP_UNK      = 5
	TRAP_PERF     = 6
	CLD_EXITED    = 1
	CLD_KILLED    = 2
	CLD_DUMPED    = 3
	CLD_TRAPPED   = 4
	CLD_STOPPED   = 5
	CLD_CONTINUED = 6
	POLL_IN       = 1
	POLL_OUT      = 2
	POLL_MSG      = 3
	POLL_ERR      = 4
	POLL_PRI      = 5
	POLL_HUP      = 6
	SYS_SECCOMP   = 1

	// Number of defined codes per signal (NSIG* in siginfo.h), used to pick
	// the union layout.
	nsigILL  = 11
	nsigFPE  = 15
	nsigSEGV = 10
	nsigBUS  = 5
	nsigTRAP = 6
	nsigCHLD = 6
	nsigPOLL = 6
	nsigSYS  = 2
)

// SigInfoSize is sizeof(siginfo_t) on both 64-bit arches.
const SigInfoSize = 128

// Layout names which member of siginfo's union a siginfo uses (Linux's
// enum siginfo_layout, chosen by siginfo_layout(sig, si_code)).
type Layout int

// Union layouts.
const (
	LayoutKill        Layout = iota // _kill: pid @16, uid @20
	LayoutTimer                     // _timer: tid @16, overrun @20, value @24
	LayoutPoll                      // _sigpoll: band @16, fd @24
	LayoutFault                     // _sigfault: addr @16
	LayoutFaultMCEErr               // addr @16, addr_lsb @24
	LayoutFaultBndErr               // addr @16, lower @32, upper @40
	LayoutFaultPkuErr               // addr @16, pkey @32
	LayoutFaultPerf                 // addr @16 (perf data not modelled)
	LayoutChld                      // _sigchld: pid, uid, status @24, utime @32, stime @40
	LayoutRT                        // _rt: pid @16, uid @20, value @24
	LayoutSys                       // _sigsys: call_addr @16, syscall @24, arch @28
)

// SigInfo is siginfo_t. The first three fields are at offsets 0, 4 and 8;
// the union starts at 16. The union members share storage in guest memory;
// here they are separate fields and Marshal/Unmarshal use the ones of
// Layout(). Fields a layout does not name are written as zero, as Linux's
// copy_siginfo_to_user (which clears the part of siginfo_t past the
// kernel's 48-byte kernel_siginfo) leaves them for kernel-made siginfos.
type SigInfo struct {
	Signo int32 // si_signo @0
	Errno int32 // si_errno @4
	Code  int32 // si_code @8

	Pid    int32  // kill, rt, chld: si_pid @16
	UID    uint32 // kill, rt, chld: si_uid @20
	Value  uint64 // rt, timer: si_value (sigval) @24
	Status int32  // chld: si_status @24
	Utime  int64  // chld: si_utime @32
	Stime  int64  // chld: si_stime @40

	TimerID int32 // timer: si_tid @16
	Overrun int32 // timer: si_overrun @20

	Addr    uint64 // fault: si_addr @16; sys: si_call_addr @16
	AddrLSB int16  // fault (mceerr, bnderr, pkuerr share the slot): si_addr_lsb @24
	Lower   uint64 // fault bnderr: si_lower @32
	Upper   uint64 // fault bnderr: si_upper @40
	Pkey    uint32 // fault pkuerr: si_pkey @32

	Band int64 // poll: si_band @16
	FD   int32 // poll: si_fd @24

	Syscall int32  // sys: si_syscall @24
	Arch    uint32 // sys: si_arch @28
}

// Sig returns Signo as a Signal.
func (si *SigInfo) Sig() Signal { return Signal(si.Signo) }

// Layout returns the union member the siginfo uses, as Linux's
// siginfo_layout does from si_signo and si_code.
func (si *SigInfo) Layout() Layout {
	sig, code := Signal(si.Signo), si.Code
	if code > SI_USER && code < SI_KERNEL {
		limit, layout := int32(0), LayoutKill
		switch sig {
		case SIGILL:
			limit, layout = nsigILL, LayoutFault
		case SIGFPE:
			limit, layout = nsigFPE, LayoutFault
		case SIGSEGV:
			limit, layout = nsigSEGV, LayoutFault
		case SIGBUS:
			limit, layout = nsigBUS, LayoutFault
		case SIGTRAP:
			limit, layout = nsigTRAP, LayoutFault
		case SIGCHLD:
			limit, layout = nsigCHLD, LayoutChld
		case SIGPOLL:
			limit, layout = nsigPOLL, LayoutPoll
		case SIGSYS:
			limit, layout = nsigSYS, LayoutSys
		}
		if limit != 0 && code <= limit {
			switch {
			case sig == SIGBUS && (code == BUS_MCEERR_AR || code == BUS_MCEERR_AO):
				return LayoutFaultMCEErr
			case sig == SIGSEGV && code == SEGV_BNDERR:
				return LayoutFaultBndErr
			case sig == SIGSEGV && code == SEGV_PKUERR:
				return LayoutFaultPkuErr
			case sig == SIGTRAP && code == TRAP_PERF:
				return LayoutFaultPerf
			}
			return layout
		}
		if code <= nsigPOLL {
			return LayoutPoll
		}
		return LayoutKill
	}
	switch {
	case code == SI_TIMER:
		return LayoutTimer
	case code == SI_SIGIO:
		return LayoutPoll
	case code < 0:
		return LayoutRT
	}
	return LayoutKill
}

// MarshalTo writes the 128-byte guest siginfo_t into b (len(b) >= 128).
func (si *SigInfo) MarshalTo(b []byte) {
	b = b[:SigInfoSize]
	clear(b)
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(si.Signo))
	le.PutUint32(b[4:], uint32(si.Errno))
	le.PutUint32(b[8:], uint32(si.Code))
	switch si.Layout() {
	case LayoutKill:
		le.PutUint32(b[16:], uint32(si.Pid))
		le.PutUint32(b[20:], si.UID)
	case LayoutRT:
		le.PutUint32(b[16:], uint32(si.Pid))
		le.PutUint32(b[20:], si.UID)
		le.PutUint64(b[24:], si.Value)
	case LayoutTimer:
		le.PutUint32(b[16:], uint32(si.TimerID))
		le.PutUint32(b[20:], uint32(si.Overrun))
		le.PutUint64(b[24:], si.Value)
	case LayoutChld:
		le.PutUint32(b[16:], uint32(si.Pid))
		le.PutUint32(b[20:], si.UID)
		le.PutUint32(b[24:], uint32(si.Status))
		le.PutUint64(b[32:], uint64(si.Utime))
		le.PutUint64(b[40:], uint64(si.Stime))
	case LayoutFault, LayoutFaultPerf:
		le.PutUint64(b[16:], si.Addr)
	case LayoutFaultMCEErr:
		le.PutUint64(b[16:], si.Addr)
		le.PutUint16(b[24:], uint16(si.AddrLSB))
	case LayoutFaultBndErr:
		le.PutUint64(b[16:], si.Addr)
		le.PutUint16(b[24:], uint16(si.AddrLSB))
		le.PutUint64(b[32:], si.Lower)
		le.PutUint64(b[40:], si.Upper)
	case LayoutFaultPkuErr:
		le.PutUint64(b[16:], si.Addr)
		le.PutUint16(b[24:], uint16(si.AddrLSB))
		le.PutUint32(b[32:], si.Pkey)
	case LayoutPoll:
		le.PutUint64(b[16:], uint64(si.Band))
		le.PutUint32(b[24:], uint32(si.FD))
	case LayoutSys:
		le.PutUint64(b[16:], si.Addr)
		le.PutUint32(b[24:], uint32(si.Syscall))
		le.PutUint32(b[28:], si.Arch)
	}
}

// Marshal returns the 128-byte guest siginfo_t.
func (si *SigInfo) Marshal() [SigInfoSize]byte {
	var b [SigInfoSize]byte
	si.MarshalTo(b[:])
	return b
}

// UnmarshalSigInfo decodes a guest siginfo_t (for rt_sigqueueinfo,
// rt_tgsigqueueinfo, pidfd_send_signal). It reads the fields of the layout
// chosen by si_signo/si_code; ok is false when b is shorter than 128 bytes.
func UnmarshalSigInfo(b []byte) (si SigInfo, ok bool) {
	if len(b) < SigInfoSize {
		return si, false
	}
	le := binary.LittleEndian
	si.Signo = int32(le.Uint32(b[0:]))
	si.Errno = int32(le.Uint32(b[4:]))
	si.Code = int32(le.Uint32(b[8:]))
	switch si.Layout() {
	case LayoutKill:
		si.Pid = int32(le.Uint32(b[16:]))
		si.UID = le.Uint32(b[20:])
	case LayoutRT:
		si.Pid = int32(le.Uint32(b[16:]))
		si.UID = le.Uint32(b[20:])
		si.Value = le.Uint64(b[24:])
	case LayoutTimer:
		si.TimerID = int32(le.Uint32(b[16:]))
		si.Overrun = int32(le.Uint32(b[20:]))
		si.Value = le.Uint64(b[24:])
	case LayoutChld:
		si.Pid = int32(le.Uint32(b[16:]))
		si.UID = le.Uint32(b[20:])
		si.Status = int32(le.Uint32(b[24:]))
		si.Utime = int64(le.Uint64(b[32:]))
		si.Stime = int64(le.Uint64(b[40:]))
	case LayoutFault, LayoutFaultPerf:
		si.Addr = le.Uint64(b[16:])
	case LayoutFaultMCEErr:
		si.Addr = le.Uint64(b[16:])
		si.AddrLSB = int16(le.Uint16(b[24:]))
	case LayoutFaultBndErr:
		si.Addr = le.Uint64(b[16:])
		si.AddrLSB = int16(le.Uint16(b[24:]))
		si.Lower = le.Uint64(b[32:])
		si.Upper = le.Uint64(b[40:])
	case LayoutFaultPkuErr:
		si.Addr = le.Uint64(b[16:])
		si.AddrLSB = int16(le.Uint16(b[24:]))
		si.Pkey = le.Uint32(b[32:])
	case LayoutPoll:
		si.Band = int64(le.Uint64(b[16:]))
		si.FD = int32(le.Uint32(b[24:]))
	case LayoutSys:
		si.Addr = le.Uint64(b[16:])
		si.Syscall = int32(le.Uint32(b[24:]))
		si.Arch = le.Uint32(b[28:])
	}
	return si, true
}

// KillInfo is the siginfo of kill(2)/tgkill(2)-style sends: SI_USER (kill)
// or SI_TKILL (tkill/tgkill) with the sender's pid and uid.
func KillInfo(sig Signal, code int32, pid int32, uid uint32) SigInfo {
	return SigInfo{Signo: int32(sig), Code: code, Pid: pid, UID: uid}
}

// FaultInfo is the siginfo of a synchronous fault (SIGSEGV/SIGBUS/SIGILL/
// SIGFPE/SIGTRAP) at addr with the given si_code.
func FaultInfo(sig Signal, code int32, addr uint64) SigInfo {
	return SigInfo{Signo: int32(sig), Code: code, Addr: addr}
}

// KernelInfo is Linux's SEND_SIG_PRIV: si_code SI_KERNEL, no sender.
func KernelInfo(sig Signal) SigInfo {
	return SigInfo{Signo: int32(sig), Code: SI_KERNEL}
}
