// Package icache holds two separate things: the predecoded-instruction
// caches the interpreters execute from, and the model of each emulated
// CPU's L1 instruction and data caches. The text below is written to be
// merged into ARCHITECTURE.md as the section "Instruction caches and the
// cache model".
//
// # 1. The predecoded-instruction cache
//
// One per address space (vm.MM.Code: *A64Cache or *X86Cache), shared by
// the threads of the process; each CPU keeps a small direct-mapped
// first level of decoded pages in front of it. Pages are decoded from the
// bytes instruction fetch sees and must never execute bytes the
// architecture says fetch cannot see, nor miss a change it says fetch
// must see. With the cache model off, and on x86 always, fetch sees
// memory: a decoded page records the vm.Page.CodeVersion it was built
// from (read before decoding) and is stale once that changes. A page that
// has been decoded is marked (vm.MM.CodePage), after which stores to it
// bypass the write TLB and bump its CodeVersion.
//
// Invalidation paths (see the tests named in brackets):
//
//	event                        model off / coherent (both arches)      arm64 strict model
//	store to a decoded page      CodeVersion bump; seen at the next      memory only: fetch keeps the I-side
//	                             taken branch, page crossing or Run      view until DC CVAU + IC IVAU + a
//	                             entry                                   context synchronisation
//	DC CVAU / CVAC / CIVAC       address check only                      line: memory → point of unification
//	IC IVAU                      drops the decoded page (all CPUs        line: PoU → I-side view, for every CPU
//	                             re-check it at their next lookup)       of the process (broadcast)
//	ISB                          ends the block (re-check)               context sync: the CPU drops the
//	                                                                     pages it fetched
//	exit from / entry to Run     re-check                                context sync (exception entry/return)
//	(syscall, signal, budget,
//	interrupt, single step)
//	mprotect                     CodeVersion bump; permission re-checked permission re-checked at the next
//	                                                                     lookup; the view survives (mprotect
//	                                                                     is no cache maintenance)
//	munmap, mremap, MADV_DONTNEED CodeVersion bump; the page is gone     the view is dropped with its page; a
//	execve, fork                 new MM, new cache                       new page gets a fresh view
//	breakpoint install/remove    MM.Poke: a store                        MM.Poke is a store; the kernel side
//	(uprobes, ptrace)                                                    calls FlushICache, as Linux does
//	FlushICache (kernel)         IC IVAU of the range                    DC CVAU + IC IVAU of the range,
//	                                                                     broadcast, cost charged
//
// [icache: TestA64Cache, TestStrictView, TestCoherentMaintenance;
// vm/arm64: TestJITStrict, TestJITCrossCPU, TestStrictInvalidationPaths;
// cmd/uvm: TestCacheModelJIT.]
//
// x86 (always coherent). The rule uvm implements is Intel SDM vol. 3
// §8.1.3: a store to code is visible to instruction fetch after the next
// taken branch; for cross-modifying code, after the executing CPU's next
// taken branch, page crossing or entry to Run (x86 requires a serialising
// instruction there, so this is stronger). Exactly: the x86 loop
// re-validates the decoded page (X86Page.Valid) at every taken branch and
// fetches the page again at every page crossing and on entry to Run, and
// instructions of the current straight-line run after a modified
// instruction may execute their old decoded form until then (real
// processors since the P6 snoop the prefetch queue and see the store at
// once; code that follows the SDM's recommendation sees no difference).
// An instruction that runs into the next page records that page and its
// version, so a store to either page invalidates it.
//
// arm64 with the model off (or --icache coherent): the same rule as x86,
// which is what a core with CTR_EL0.IDC = DIC = 1 guarantees, and more
// than the architecture requires; IC IVAU additionally drops the decoded
// page. CTR_EL0 then reads 0x8444c004 (IDC = DIC = 0, as before the
// model existed) with the model off, and reports IDC = DIC = 1 in the
// coherent model mode, so libgcc's __clear_cache issues no maintenance.
//
// Differential mode (--redecode; CPU.SetRedecode): each instruction is
// decoded afresh from the bytes fetch sees (A64Cache.DecodeOne; on x86
// X86Page.Forget before a single step) immediately before it executes.
// Every program must give identical results with and without it
// [vm/arm64: TestRedecodeDifferential; cmd/uvm: TestRedecodeDifferential
// runs C programs on both arches, model off and strict].
//
// # 2. The arm64 strict I-side view
//
// In strict mode (the default when the model is on, --icache strict),
// fetch does not read memory. Each process (A64Cache) holds, per code
// page, an I-side view (type iview):
//
//   - view: the bytes instruction fetch sees;
//   - pou: the bytes at the point of unification, i.e. what DC CVAU has
//     made visible to the instruction side;
//   - live: the vm.Page they belong to; gen: bumped when view changes.
//
// The view of a page is created by the first fetch from it, as a copy of
// memory (view = pou = memory): the kernel makes a page's contents
// visible to fetch when it first maps it executable (Linux's
// __sync_icache_dcache on the first exec mapping of a page), and a
// never-fetched line cannot be stale. From then on, for a line of the
// modelled size (D line for DC, I line for IC; CTR_EL0 reports both):
//
//   - a store changes memory only;
//   - DC CVAU/CVAC/CIVAC of the line copies memory → pou;
//   - IC IVAU of the line copies pou → view (so IC IVAU without a prior
//     DC CVAU publishes nothing new, and a store made after the DC CVAU
//     is not published);
//   - decoded pages are decoded from view (their Src is the view, a
//     vm.Page whose CodeVersion never changes, so stores do not
//     invalidate them) and rebuilt when gen changed.
//
// The view is per process, so IC IVAU is in effect broadcast to every
// CPU of the process (the inner-shareable domain), as Linux relies on;
// the model charges Cost.Broadcast per other CPU and invalidates the line
// in their modelled L1I. But each CPU keeps executing the decoded pages
// it fetched since its last context synchronisation (its pipeline: the
// first-level cache plus a per-CPU map, cmState.pipe in vm/arm64) until
// it executes ISB or leaves Run (exception entry: syscall, signal,
// budget or interrupt, single step). So new code is executed only after
// DC CVAU (or CIVAC), then IC IVAU, then — for the fetching CPU — a
// context synchronisation, exactly the sequence __builtin___clear_cache
// (libgcc's __aarch64_sync_cache_range: DC CVAU loop, DSB ISH, IC IVAU
// loop, DSB ISH, ISB) performs. Code that skips any step deterministically
// executes the old bytes: testdata/src/jit.c and jit_mt.c print the old
// result without __clear_cache.
//
// Deliberate simplifications: the first-fetch snapshot is per page, not
// per line (a line first written after another line of its page was
// fetched needs maintenance, which the architecture requires anyway); a
// line evicted from the modelled L1I is not re-fetched from pou (the
// view changes only through IC IVAU: stale stays stale, deterministically);
// another thread's munmap/mprotect of a page a CPU is executing is seen
// at that CPU's next exit from Run (as for data, see vm.TLB); a page
// moved by mremap gets a fresh view; DSB is not modelled (maintenance
// completes at once).
//
// # 3. The cache model
//
// Off by default (and then free: see below). --cache-model, or
// --cache-config STRING, or --icache MODE turns it on; tasks.Options
// .CacheModel (an *icache.Models, one per tasks.Kernel) gives every CPU
// an icache.Model through SetCacheModel; clones inherit a model of the
// same configuration (same process for threads, a new one for fork).
//
//   - Geometry per cache: size, line (a power of two, 16..2048 bytes),
//     associativity, replacement LRU, FIFO or random (xorshift, seeded by
//     seed= and the CPU index). Config string (ParseModelConfig): items
//     KEY=VALUE separated by blanks or ';', applied to the default
//     "l1i=32k,64,4 l1d=32k,64,8": l1i=/l1d=SIZE,LINE,WAYS[,POLICY],
//     repl=POLICY, seed=N, icache=strict|coherent, l2=/llc=SIZE,LINE,
//     WAYS[,POLICY] (unified outer levels, absent by default: an L1 miss
//     looks the line up in L2 and an L2 miss in the LLC, filling every
//     level that missed; Model.Place shares a level between the CPUs of
//     a domain, under the timing model's serialised scheduler), and the maintenance
//     costs in cycles dc= (per DC CVAU line, default 20), ic= (per IC
//     IVAU line, 10), bcast= (per IC IVAU line and other CPU of the
//     process, 40), isb= (15), zva= (per DC ZVA block, 4).
//   - Counting: the I-cache counts one access per instruction executed
//     and looks up each line a straight-line run of instructions enters
//     (the same hits, misses and evictions as a lookup per instruction,
//     for every policy); the D-cache counts one access per line a load or
//     store touches (split into reads and writes); a fill into a full set
//     is an eviction; IC IVAU (local or broadcast) counts invalidations.
//     DC CVAU is a read access, DC ZVA a write of one line. Tags only:
//     memory is always the truth, the model decides hit or miss.
//   - CTR_EL0 reports IminLine/DminLine/CWG from the line sizes (ERG
//     stays 64 bytes), DCZID_EL0 the D line, and DC ZVA zeroes one D line.
//   - --stats prints, per CPU (index in creation order, process index):
//     L1I and L1D accesses, misses, evictions, invalidations, the DC
//     CVAU / IC IVAU / broadcast / ISB / DC ZVA counts and their modelled
//     cycles (Models.WriteStats). [icache: TestCacheStreaming,
//     TestReplacementPolicies, TestFetchRangeExact, TestBroadcast;
//     vm/arm64: TestCacheModelStreaming; cmd/uvm:
//     TestCacheModelStreamStats checks that each pass of cachestream over
//     its 1 MiB array adds exactly 1 MiB / line L1D read misses.]
//   - FlushICache(mm, model, addr, n) is what the kernel does on arm64
//     after writing code (uprobes' breakpoints and XOL slots, ptrace):
//     DC CVAU and IC IVAU of each line, broadcast, cost charged to the
//     CPU doing it; a no-op for x86 address spaces.
//
// Cost when off, and speed. arm64: Run and Step test c.cm once; the
// hooks live in runCM, a copy of the interpreter loop generated from
// vm/arm64/exec.go (exec_hooked.go, by cmgen_test.go, which also fails
// when the copy is stale), so the model-off loop is unchanged. x86: a nil
// check per taken branch and per memory access path (load/store helpers,
// the specialised MOV/PUSH/POP/CALL/RET forms, SSE memory operands, REP
// MOVS/STOS chunks, locked operations; x87 80-bit and BCD operands,
// FXSAVE/FNSAVE images, MASKMOVDQU and IRET are not counted). With the
// model on, the interpreters run 1.4-1.8 times slower.
package icache
