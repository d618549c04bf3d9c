// Package signals is uvm's model of Linux signals: numbers and sets,
// actions, siginfo, pending queues with Linux's dequeue order, the
// alternate stack, the thread-flag word, and the exact rt_sigframe layouts
// of arm64 and x86-64 with their rt_sigreturn parsers. It is a leaf: it
// imports only the standard library, knows nothing of guest memory or
// CPUs, and works on values and byte slices. Facts are from the Linux
// sources (kernel/signal.c, arch/arm64/kernel/signal.c,
// arch/x86/kernel/signal*.c, arch/x86/kernel/fpu/signal.c and the uapi
// headers), current kernels.
//
// # API
//
// Numbers, sets, actions (signal.go):
//
//	type Signal int                  SIGHUP..SIGSYS, SIGRTMIN (32)..SIGRTMAX (64); String, Valid,
//	                                 IsRealtime, Mask, Default() DefaultAction, Catchable
//	type SigSet uint64               bit sig-1; Has, Add, Del, Lowest
//	UnblockableMask, SynchronousMask, CoredumpMask, IgnoreMask, StopMask
//	SA_* flags, UAPI_SA_FLAGS, SIG_DFL, SIG_IGN
//	type SigAction struct{ Handler, Flags, Restorer uint64; Mask SigSet }
//	(SigAction) Marshal() [32]byte; UnmarshalSigAction(b) (SigAction, bool); Ignores(sig)
//
// siginfo (siginfo.go):
//
//	type SigInfo struct{ Signo, Errno, Code int32; Pid; UID; Value; Status; Utime; Stime;
//	                     TimerID; Overrun; Addr; AddrLSB; Lower; Upper; Pkey; Band; FD; Syscall; Arch }
//	(*SigInfo) Layout() Layout; Marshal() [128]byte; MarshalTo(b); UnmarshalSigInfo(b) (SigInfo, bool)
//	KillInfo(sig, code, pid, uid), FaultInfo(sig, code, addr), KernelInfo(sig)
//	SI_*, ILL_*, FPE_*, SEGV_*, BUS_*, TRAP_*, CLD_*, POLL_*, SYS_SECCOMP
//
// Pending queues and thread flags (pending.go, flags.go):
//
//	type Pending struct{ Limit int; ... }   per thread and per thread group (shared)
//	(*Pending) Add(SigInfo) AddResult; Dequeue(blocked) (SigInfo, bool); Remove(mask) bool;
//	           Flush(); Set() SigSet; Has(sig); Len(); Queued() []SigInfo
//	Dequeue(own, shared *Pending, blocked) (SigInfo, bool)     get_signal's order
//	Deliverable(own, shared, blocked) bool                      recalc_sigpending's test
//	RecalcSigpending(*ThreadFlags, own, shared, blocked) bool   sets/clears TIF_SIGPENDING
//	type ThreadFlags; Set, Clear, Load, Test, TestAndClear; TIF_SIGPENDING,
//	TIF_NOTIFY_RESUME, TIF_UPROBE, TIF_NEED_RESCHED (masks)
//
// The action table (sighand.go), methods called with Siglock held:
//
//	type Sighand struct{ Siglock sync.Mutex; Actions [65]SigAction }
//	(*Sighand) Clone() *Sighand; ResetForExec(); Action(sig)
//	(*Sighand) SetAction(sig, act *SigAction, queues ...*Pending) (old SigAction, error)
//	(*Sighand) Send(info, target *Pending, targetBlocked SigSet, all []*Pending) SendResult
//	(*Sighand) Force(info, own *Pending, blocked *SigSet, resetHandler bool)
//	(*Sighand) ForceSigsegv(failed Signal, own *Pending, blocked *SigSet)
//	(*Sighand) GetSignal(own, shared *Pending, blocked) (SigInfo, SigAction, Disposition)
//	(*Sighand) Fatal(sig) bool
//	BlockedForHandler(blocked, sig, act) SigSet
//	SyscallRestart(ret int64, handler bool, act SigAction) Restart
//
// Alternate stack (stack.go):
//
//	type StackT struct{ SP uint64; Flags int32; Size uint64 }; DisabledStack
//	(StackT) OnStack(sp), SSFlags(sp), Get(sp), Marshal(); UnmarshalStackT(b)
//	(*StackT) Set(ss StackT, sp, minSize uint64) error; Disarm()
//	ChooseStack(sp, act, alt) (uint64, onAltStack bool)
//	SS_ONSTACK, SS_DISABLE, SS_AUTODISARM, MINSIGSTKSZ_ARM64, MINSIGSTKSZ_AMD64
//
// Frames (frame.go, a64frame.go, x64frame.go):
//
//	type Frame struct{ Addr uint64; Bytes []byte; InfoAddr, UCAddr, FrameRecord, FPState uint64; OnAltStack bool }
//	BuildARM64Frame(ctx *ARM64Context, info *SigInfo, blocked SigSet, act SigAction, alt StackT) (Frame, error)
//	(*ARM64Context) EnterHandler(sig, act, f Frame, vdsoSigtramp uint64)
//	ARM64SigreturnFrame(sp) (addr uint64, size int, err error)
//	ParseARM64Frame(frame []byte, cur *ARM64Context) (ARM64Context, SigSet, StackT, error)
//	BuildAMD64Frame(ctx *AMD64Context, info *SigInfo, blocked SigSet, act SigAction, alt StackT) (Frame, error)
//	(*AMD64Context) EnterHandler(sig, act, f Frame)
//	AMD64SigreturnFrame(rsp) (addr uint64, size int)
//	ParseAMD64Frame(frame []byte, cur *AMD64Context) (AMD64Context, SigSet, StackT, fpstate uint64, error)
//	RestoreAMD64FPState(ctx *AMD64Context, fpstate uint64, fx []byte) error
//	AMD64InitFXSave() [512]byte
//	ErrBadFrame (rt_sigreturn), ErrNoRestorer, ErrAltStackOverflow, ErrFrameAddress (setup)
//
// # Locking
//
// A thread group's Sighand.Siglock protects its Actions, the group's
// shared Pending, every thread's own Pending, and a thread's blocked mask
// when read by others (Linux: sighand->siglock). ThreadFlags is atomic and
// needs no lock. Nothing here blocks or allocates per guest instruction.
//
// # Integration (the run loop)
//
// Sending: under Siglock, Send to the thread's or the group's queue; on
// SendQueued pick a thread whose blocked mask lacks the signal (Linux
// prefers the target, then any thread), set its TIF_SIGPENDING and wake it
// (interrupt its CPU, wake futex/poll waits). Faults and other synchronous
// signals use Force on the faulting thread (FaultInfo with the
// SEGV_MAPERR/ACCERR code and the address; for x86 also fill ctx.Trapno,
// Err, CR2; for arm64 ctx.FaultAddress and ctx.ESR).
//
// Delivering, when the thread-flag word has TIF_SIGPENDING at an exit from
// the interpreter (after a syscall's result is in place):
//
//  1. Lock Siglock; GetSignal(own, shared, blocked); RecalcSigpending.
//  2. If the exit was a syscall, apply SyscallRestart to its return value
//     (arm64: restart means x0 = orig_x0, pc -= 4; x86: rax = orig_rax,
//     rip -= 2).
//  3. DispTerminate/DispCore: end the thread group with the signal.
//     DispHandler: build the frame from the thread's context with
//     blocked = the mask to save (the pre-sigsuspend mask when a
//     sigsuspend-like syscall replaced it), write Frame.Bytes at
//     Frame.Addr (a write fault, or a build error, → ForceSigsegv and
//     loop), then EnterHandler, blocked = BlockedForHandler(blocked, sig,
//     act) and alt.Disarm().
//
// rt_sigreturn: read the frame at ARM64SigreturnFrame(sp) /
// AMD64SigreturnFrame(rsp), parse it with the current context, install
// the returned blocked mask and context (also on error: Linux has already
// done so), then on x86 read 512 bytes at fpstate and RestoreAMD64FPState;
// then alt.Set(frame's stack, restored sp, MINSIGSTKSZ) ignoring its
// error. Any error, including a failed read, is a bad frame: SIGSEGV via
// Force (x86: SI_KERNEL; arm64: SEGV_MAPERR/ACCERR at sp). The syscall's
// result is the restored x0/rax: do not overwrite it, and on x86 keep the
// restored rcx and r11.
//
// arm64 handlers return through x30. With SA_RESTORER it is sa_restorer;
// otherwise Linux uses the vDSO's __kernel_rt_sigreturn (glibc and Go do
// not set SA_RESTORER on arm64), so uvm must map a page holding that
// trampoline ("mov x8, #139; svc #0", with the vDSO's leading nop for
// unwinders) and pass its address to EnterHandler. x86-64 handlers return
// through pretcode (sa_restorer, which libcs always set); without
// SA_RESTORER Linux refuses the frame.
//
// A thread starts with DisabledStack and an empty blocked mask and
// Pending; fork copies the Sighand (Clone), CLONE_SIGHAND shares it,
// execve calls ResetForExec and keeps blocked and pending signals.
package signals
