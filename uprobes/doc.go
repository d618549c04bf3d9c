// Package uprobes is uvm's model of Linux's uprobe and uretprobe
// subsystem (kernel/events/uprobes.c, arch/arm64/kernel/probes/uprobes.c,
// arch/x86/kernel/uprobes.c), written from ../shared/docs/uprobes-spec.md.
// A probe is a (file, offset) pair. Registering one writes a breakpoint
// (arm64 BRK #5, x86 INT3) into the private copy of the text page of
// every process that maps the file, and into later mappings at mmap
// time. When a thread traps on it, the consumers' handlers run, and the
// original instruction is then simulated/emulated in the "kernel" or
// executed out of line (XOL) in a slot of a per-process "[uprobes]" page
// under single-step, with the kernel's fixups and its signal rules. A
// uretprobe hijacks the return address with the trampoline in XOL slot 0
// and runs return handlers when the function returns through it.
//
// The package is a leaf beside signals: it imports only the standard
// library and uvm/decode. It knows guest memory, registers and threads
// only through the small interfaces in iface.go (AddrSpace, Regs,
// Thread, Waiter, Clock), which package tasks implements. Every kernel
// change the seeds discuss is a switch in Options; DefaultOptions is the
// newest kernel.
//
// # API
//
// Probes, shaped like cilium/ebpf's link package (executable.go, spec.go):
//
//	New(Options) *System; DefaultOptions() Options
//	(*Options).Set(name, value) error; OptionNames(); ParseTreeLock
//	(*System).OpenExecutable(path) (*Executable, error)
//	(*Executable).Uprobe(symbol, Consumer, *UprobeOptions) (Probe, error)
//	(*Executable).Uretprobe(symbol, Consumer, *UprobeOptions) (Probe, error)
//	(*Executable).Symbol(vaddr) (SymbolOffset, error); Address(sym) (vaddr, size, error)
//	(*Executable).FileOffset(vaddr); VAddr(off); Analyze(off) error; Arch(); ID()
//	UprobeOptions{Address, Offset, PID, Cookie, RefCtrOffset}  (nil = defaults)
//	Consumer{Handler func(*Ctx) int; RetHandler func(*Ctx); Filter func(*MM) bool; Name}
//	  Handler returns 0, HandlerRemove or HandlerIgnore; a consumer with both
//	  handlers is a session consumer (Ctx.Session carries its cookie).
//	Ctx{Task, Regs, Addr, RetAddr, Cookie, Session *uint64, Name}; (*Ctx).Arch()
//	Probe: Close() error (unregister + uprobe_unregister_sync), Apply(add), Info() ProbeInfo
//	ParseSpec(text) (Spec, error): sym | sym+off | 0xADDR | PATH:sym[+off] | PATH:0xOFF
//	(*System).AttachSpec(Spec, mainExe, ret, Consumer, *UprobeOptions) (Probe, error)
//	NewRecorder(w) *Recorder; (*Recorder).Consumer(name, ret); Hits(name); WriteSummary(w)
//	ArgRegs(arch) [6]int; RetReg(arch) int
//	Errors: ErrNotSupported, ErrNoSymbol, ErrNotInstructionBoundary, ErrRejected (with
//	  *RejectError{Arch, Offset, Insn, Disasm, Errno, Reason}), ErrInvalid, ErrClosed; Errno
//	A64Fate(word, simulateNOP), X86Fate(bytes): the kernel's verdict on an instruction
//
// Kernel side (uprobe.go, utask.go, uretprobe.go, xol.go):
//
//	(*System).NewMM(AddrSpace, Arch, pid) *MM             one per address space
//	(*MM).Mmap(VMA); MmapAll(); Munmap(VMA, start, end)   uprobe_mmap / uprobe_munmap
//	(*MM).Fork(pid, dup) (*MM, error); Release()            uprobe_dup_mmap / uprobe_clear_state
//	(*MM).XOLArea(); XOLContains(addr); IsTrampoline(addr); XOLBusySlots(); HasUprobes()
//	(*MM).NewTask(Thread, tid, cpu) *Task                 one per thread
//	(*Task).BreakpointTrap(regs, addr, imm) bool          uprobe_pre_sstep_notifier
//	(*Task).NotifyResume(regs)                            uprobe_notify_resume (TIF_UPROBE)
//	(*Task).SingleStepping() bool; StepDone(regs) bool    XOL step; uprobe_post_sstep_notifier
//	(*Task).RecordTrap(code); DenySignal() bool           trap_nr/fault_code; uprobe_deny_signal
//	(*Task).TrapAddr(pc)                                  uprobe_get_trap_addr
//	(*Task).SysUretprobe(regs) uint64                     x86-64 syscall 335
//	(*Task).CopyProcess(child, vfork); TaskWork(); Free(regs); SetMM(mm); Exit()
//	(*Task).BindRegWords(RegWords{GPR, SP, PC, Words})     the regs' own words, the CPU's TLB (hit-path fast path)
//	(*Task).TakesBreakpoint(addr, imm); BreakpointResume(regs, addr)  trap + TIF_UPROBE work at once (fast way back)
//	(*Task).State() UTaskState; PendingReturns() int; TID(); MM()
//	(*System).Stats() Stats; (Stats).WriteTo(w); (*System).UnregisterSync()
//
// # Switches (Options)
//
//	TreeLock             rcu (default: lockless lookup + seqcount retry, v6.12) | spinlock (≤ v6.9)
//	                     | rwlock (v6.10) | percpu-rwsem (seed 003: per-shard reader counters, the
//	                     writer waits for all readers)
//	SingleStepSiglock    false (default, seed 000 / v6.15: signal_denied flag, no siglock) | true
//	                     (siglock in uprobe_deny_signal, recalc_sigpending under siglock in
//	                     handle_singlestep)
//	XOLFlushElision      true (default, seed 002): arm64 skips the slot copy + cache maintenance
//	                     when the slot already holds the bytes; Stats.Flushes/FlushesSaved count it
//	ARM64SimulateNOP     true (default, v6.13) | false (NOP stepped out of line)
//	ReturnInstancePool   true (default, seed 004) | false (allocate/free per hit)
//	X86UretprobeSyscall  true (default, v6.11: the syscall stub in slot 0) | false (INT3)
//	X86NopForms          true (default, v6.18: x86_nops[] forms emulated as NOPs) | false (opcode 0x90 only)
//	XOLMremapDenied      true (default, v6.13: moving [uprobes] is EPERM) | false (the move succeeds)
//	Kernel               SetKernel("6.10"…"6.18") sets all of the above as that release (kernelversion.go)
//	Wrong*               test-only known-wrong variants: WrongSignalDeniedV1 (loses a signal denied
//	                     during a step), WrongFlushElisionNoCompare (stale XOL slot under a strict
//	                     I-cache), WrongReuseBeforeUnlink (ri_timer walks into the pool)
//	Clock, Warnf, FailAlloc   environment: ri_timer's clock (virtual in deterministic runs), kernel
//	                     warnings, injected allocation failures
//
// # Locking
//
// Lock order (outermost first), as in the kernel:
//
//	uprobe.registerRWSem (register_rwsem)
//	  System.dupMmapSem (dup_mmap_sem; fork holds it for reading)
//	    MM.mmapLock (the mmap_lock as the uprobe code uses it)
//	      System.mmapHash[i] (uprobes_mmap_mutex)
//	        uprobe.consumerRWSem (consumer_rwsem)
//	          the tree lock (Options.TreeLock); System.delayedMu; System.mmsMu; MM.xolMu (leaves)
//	AddrSpace methods are called with these held: the host's own address-space lock must be a
//	leaf (vm.MM.mu is), and MM.Mmap/Munmap/Fork must not be called with it held.
//
// The breakpoint hot path takes no lock but the tree lock of the chosen
// variant (none for rcu): the MM's mmap sequence count validates a
// speculative lookup, the consumer list is copy-on-write, and two RCU
// domains, RCU Tasks Trace (handler chains: per-thread section counters,
// rcutrace.go) and the sleepable uretprobes_srcu (leased return
// instances), let UnregisterSync wait for both. A handler must not close
// a probe (it would wait for itself). Task methods are called on the
// thread's own goroutine; ri_timer runs on the Clock's and synchronises
// with the task through the return-instance list's RCU pointers and a
// seqcount, as in the kernel. The hit path's memory orderings are the
// kernel's (relaxed.go): thread-owned counter slots with plain adds,
// rcu_assign_pointer and WRITE_ONCE as plain stores on TSO hosts.
//
// # Integration guide (package tasks, cmd/uvm)
//
// Adapters. AddrSpace over vm.MM: Peek, Poke, ReadAt, WriteAt and Unmap
// are vm.MM's; FindVMA/VMAs convert vm.VMA (Prot bits, Shared, Offset,
// Dev/Inode → File; every file mapping must carry the identity that
// FileIdentity returns for its host path — the ELF loader's mappings
// included); MapXOL(hint) is FindFree(hint, PageSize) + Map(VMA{Prot:
// ProtExec, Name: "[uprobes]"}); FlushICache is icache.FlushICache(mm,
// model, addr, n) on arm64 (nothing on x86). Regs over vm.CPU: PC, SP,
// Reg and their setters, plus Flags = arm64 Regs().NZCV, x86 RFLAGS()/
// SetRFLAGS(); optionally ReadUser/WriteUser(b, addr) bool, the thread's
// own copy_from_user/copy_to_user through its CPU's TLB
// (vm.TLB.ReadUser/WriteUser), which the x86 return-address hijack, the
// uretprobe syscall and emulated pushes try before AddrSpace's
// ReadAt/WriteAt (false: not cached, take AddrSpace's path). Thread over tasks.Task: Flags() = &t.flags (a
// *signals.ThreadFlags; TIF_SIGPENDING and TIF_UPROBE have the same
// values), Siglock() = &tg.sighand.Siglock, RecalcSigpending =
// t.recalcLocked, FatalSignalPending = SIGKILL pending or t.killed,
// SendSignal(sig, true) = force_sig with signals.KernelInfo(sig) (the
// registers are already as the trap left them: do not add 1 to an x86 PC
// again), SendSignal(sig, false) = an ordinary thread-directed signal. In
// deterministic mode the Thread also implements Waiter with Task.wait's
// predicate mechanism and Options.Clock is the virtual clock (its
// timers' Reset is called on every uretprobe entry).
//
// Command line, before the guest starts: sys := uprobes.New(opts) with
// opts from DefaultOptions and Options.Set for each --uprobe-opt
// NAME=VALUE; rec := NewRecorder(probeLog) (nil without --probe-log); for
// each --uprobe/--uretprobe SPEC: sp, err := ParseSpec(SPEC), then
// sys.AttachSpec(sp, hostPathOfMainExe, isRet, rec.Consumer(SPEC, isRet),
// nil) (translate a PATH: of the spec to its host path first). Any error
// (ErrNoSymbol, ErrNotInstructionBoundary, ErrRejected with the kernel's
// reason and errno) is printed and uvm exits before running the guest. At
// exit: rec.WriteSummary(stderr), Close the probes, and with --stats
// sys.Stats().WriteTo.
//
// Processes. After the ELF loader has mapped a new image (execve, first
// process): umm := sys.NewMM(space, arch, pid); umm.MmapAll(). mmap (and
// the new range of mremap): after the mapping exists and holds the file's
// bytes, umm.Mmap(vma). munmap/mremap: before removing a range,
// umm.Munmap(vma, start, end) for each VMA it touches. fork: childUMM,
// err := umm.Fork(childPid, func() (AddrSpace, error) { return
// adapter(mm.Fork()), nil }); threads and vfork share umm. When the last
// user of an address space goes (exit, or execve replacing it):
// umm.Release().
//
// Threads. tk := umm.NewTask(thread, tid, cpuHint) for every thread
// (cpuHint: any stable small number, e.g. the tid). clone: after creating
// the child's Task, parent.CopyProcess(child, isVfork) (a no-op for
// threads); a fork child calls child.TaskWork() before it first enters
// the guest (it maps its XOL area at the parent's address). execve:
// tk.Free(regs), tk.SetMM(newUMM). Thread exit (also when killed):
// tk.Free(regs), then tk.Exit() (gives the thread's counter slot back;
// without it the 64th and later threads share one atomic slot).
//
// The run loop, per iteration:
//
//	if tk.SingleStepping() { ex = cpu.Step() } else { ex = cpu.Run(budget) }
//	switch ex.Reason {
//	case vm.ExitStep:       // only when SingleStepping() was true before the Step
//	    tk.StepDone(regs)   // sets TIF_UPROBE
//	case vm.ExitBreakpoint:
//	    if !tk.BreakpointTrap(regs, ex.PC, ex.Code) { /* ordinary SIGTRAP, as today */ }
//	case vm.ExitSyscall:    // x86-64 number 335, only for amd64 guests:
//	    rax = tk.SysUretprobe(regs)  // keep the PC/SP/RCX/R11 it set; no syscall restart
//	default:                // fault, undefined, alignment, divide, privileged
//	    if tk.SingleStepping() { tk.RecordTrap(uint32(ex.Reason)) }
//	    // then force the signal as today; si_addr of SIGILL/SIGFPE/SIGTRAP = tk.TrapAddr(ex.PC)
//	}
//	// exit_to_user_mode_loop, after every exit (syscall result already in place):
//	for {
//	    if flags.Test(TIF_UPROBE) { tk.NotifyResume(regs); continue } // before signals
//	    if flags.Test(TIF_SIGPENDING) {
//	        if tk.DenySignal() { continue } // get_signal's uprobe_deny_signal: nothing this round
//	        deliver one signal (handleSignals' body); continue
//	    }
//	    break
//	}
//
// With this order an asynchronous signal that arrives while a thread
// executes its XOL slot is denied, the slot executes, StepDone and
// NotifyResume finish the step (PC after the probed instruction), and the
// signal is delivered then, once. A fault in the slot (RecordTrap + the
// forced signal) or a fatal signal makes DenySignal move the step to
// UTASK_SSTEP_TRAPPED; NotifyResume then aborts it (PC back at the probe
// address) and the signal is delivered with that PC; returning from the
// handler re-executes the breakpoint, as on Linux. The --trace-insn mode
// steps every instruction: call StepDone only when SingleStepping() was
// true before that Step.
//
// Go guests: a uretprobe on a Go function writes the trampoline address
// into a goroutine stack that the runtime may copy and unwind
// (golang/go#22008); the model reproduces that faithfully. Use
// umm.XOLContains(pc)/IsTrampoline(addr) to say so in the fatal message
// when a Go guest dies on it.
//
// # Deviations and limits
//
// Only 64-bit tasks (no compat x86, no AArch32: EOPNOTSUPP). No GCS or
// shadow stacks, no user TF/ptrace single-step beyond the kernel's TF
// bookkeeping, no "unique" uprobes changing the IP, no x86 nop5
// optimisation (sys_uprobe 336). As in v6.18 (verified against the live
// kernel by cmd/uvm's uprobe oracle), the x86 analysis judges a VEX/EVEX
// instruction by the opcode byte after its prefix, so one whose opcode
// byte is 7x/E8/E9/EB/90 is emulated as a Jcc/call/jmp/NOP. The per-probe arch analysis runs
// at registration time too (Executable.Uprobe), so that the command line
// fails before the guest starts, in addition to the kernel's analysis at
// the first install. Memory is freed by Go's garbage collector where the
// kernel waits for RCU grace periods.
package uprobes
