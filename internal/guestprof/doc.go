// Package guestprof profiles guest programs: it samples guest call
// stacks every N retired instructions, symbolizes them from the guest's
// own ELF files, and writes pprof profiles that `go tool pprof` reads as
// it reads a native profile. The same unwinder and symbolizer give crash
// reports and probe lines their backtraces ("main.foo+0x14 ←
// main.bar+0x30 ← …").
//
// It imports only uvm/vm, the standard library and
// github.com/google/pprof/profile (the only uvm package that does).
//
// # Sampling
//
// Samples are taken in instruction time, not wall-clock time, so a
// deterministic run gives the same profile every time. Each thread has a
// Clock; the run loop cuts CPU.Run's budget at the thread's next sample
// point and, when the point is reached, records the stack:
//
//	// Task creation (k.prof is the *Profiler, nil when not profiling):
//	t.clock = k.prof.NewClock(cpu.Retired())
//
//	// Run loop, in place of ex = t.cpu.Run(budget):
//	for {
//		start := t.cpu.Retired()
//		b := t.clock.Budget(start, budget)
//		ex = t.cpu.Run(b)
//		done := t.cpu.Retired()
//		if n, ok := t.clock.Due(done); ok {
//			// arm64: fp = Reg(29), lr = Reg(30); x86-64: fp = Reg(5) (rbp), lr = 0
//			k.prof.SampleValues(int(t.tid), arch, t.cpu.PC(), t.cpu.SP(), fp, lr, t.cpu.MM(), n, nil)
//		}
//		budget -= int64(done - start)
//		// Keep going inside the same quantum when Run stopped only for
//		// the sample: the deterministic schedule (and so the guest's
//		// behaviour) is then the same with and without --pprof. A
//		// shorter run than asked (done-start < b) means Interrupt.
//		if ex.Reason != vm.ExitBudget || budget <= 0 || int64(done-start) < b {
//			break
//		}
//	}
//	// at exit: write the profile (deterministic mode: leave Options'
//	// TimeNanos/DurationNanos zero)
//	err := k.prof.Write(f)
//
// A nil *Profiler is valid: its clocks never fire and Sample does
// nothing, so the loop above needs no "if profiling" test. Call
// Profiler.Forget(mm) when an address space is dropped (exit, exec) in
// long runs with many processes.
//
// A sample stands for the instructions the thread retired since its
// previous sample (Clock.Due's count: the period plus the overrun of the
// last block), so the values add up to the instructions retired. Run
// checks its budget at block boundaries, so sampled pcs are block
// starts: per-function totals are exact in the limit, per-instruction
// flat values are not meaningful. With Options.Extra (e.g.
// "icache-misses", "dcache-misses" when a cache model is on) the caller
// passes, per sample, the counts since the thread's previous sample.
//
// With Options.Cycles the clock is a timing model's virtual cycles
// instead: each thread has a CycleClock, a sample is due each time its
// cycles cross a multiple of the period (CycleClock.Due, then
// Profiler.SampleCycles), and the caller cuts Run's budget so that the
// crossing is found at the first block boundary past it (uvm: package
// tasks, timing_pprof.go). The first sample value and the period type
// are then "cycles", the cycles since the thread's previous sample; the
// cycles by which samples came after their crossing (the skid) are
// summarised in a profile comment.
//
// Profile cost (uvm's own time, host with 2 shared cores): under 2 µs
// per sample of a 64-frame stack seen before, a few µs for a new stack;
// writing the profile reads the DWARF of the units sampled (tens of ms
// for a Go binary's runtime) and compresses it. At DefaultPeriod the
// per-sample cost is well under 1%; the fixed cost dominates short runs.
//
// # Profile format
//
// Sample types: instructions/count (the default; cycles/count with
// Options.Cycles), then the Extra names (unit count); PeriodType the
// same as the first, Period the period. Every sample carries a numeric label "tid". Locations are leaf first; a
// caller's address is its return address minus one (inside the call
// instruction, as pprof expects). Mappings are the executable PT_LOAD
// segments of the files mapped (start, limit and file offset page
// aligned as in /proc/PID/maps; file = the host path; build ID = the GNU
// build ID in hex, else Go's build ID). Functions come from .symtab
// (sorted, size-aware; Go's ".abi0" suffix dropped from Name, kept in
// SystemName); file, line, start line and inlined calls (one Line per
// inlined function, innermost first) from DWARF when the file has it.
// Every table is sorted before IDs are assigned, and the profile passes
// CheckValid before it is written, so the same samples give the same
// bytes whatever order they came in.
//
// # Unwinding
//
// Stacks are unwound by frame pointers, which Go keeps on both arches
// and C code keeps with -fno-omit-frame-pointer (arm64 gcc keeps frame
// records even at -O2). A frame record is {caller's fp, return address}
// at fp on both arches: arm64 x29 with saved {x29, x30}; x86-64 rbp with
// [rbp] = saved rbp and [rbp+8] = return address.
//
// The leaf needs care: until its prologue has run (and again in its
// epilogue, or always in a frameless leaf) fp still points at its
// caller's record, whose return address is the caller's caller. The
// unwinder therefore looks at the leaf's code (from the file, so
// breakpoints do not disturb it) to see whether its frame exists at pc:
// on arm64 it finds the instruction setting x29 from sp ("mov x29, sp",
// Go's "sub x29, sp, #8") and the epilogue's reload of x29, and then
// takes the caller from LR (or, inside Go's two-instruction epilogue,
// from the stack); on x86-64 it finds "push %rbp; mov %rsp,%rbp" and
// RET and takes the caller from [sp] (or [sp+8] between the push and the
// mov). Without a symbol for the leaf it adds nothing: the leaf's caller
// is then missing rather than invented. Code compiled without frame
// pointers (plain -O2 x86-64 C) gets its leaf and whatever a plausible
// chain yields; shrink-wrapped prologues are best effort.
//
// The walk never loops or fails: it stops at a zero, misaligned or
// unreadable fp, at a record outside the stack's VMA, below sp-16 or not
// above the previous one (the chain must climb), at a return address
// outside executable memory or (where the file's bytes are known) not
// right after a call instruction, and after MaxDepth frames.
//
// # Crash reports and probes
//
//	s := guestprof.NewSymbolizer(mm) // or prof.Symbolizer(mm), sharing parsed files
//	s.Describe(pc)                   // "main.foo+0x14", "0x401234" when unknown
//	s.Backtrace(arch, pc, sp, fp, lr) // "main.foo+0x14 ← main.bar+0x30 ← main.main+0x1c"
//	s.Frames(arch, pc, sp, fp, lr)   // the same with file, line and inlined calls
//
// A Symbolizer finds files through the VMAs (Name is the host path,
// Offset the file offset), so it follows exec and static-PIE load
// addresses by itself; keep one per address space for probe lines, since
// it caches parsed files and recently used areas.
package guestprof
