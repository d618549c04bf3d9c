package arm64

import (
	"encoding/binary"
	"testing"

	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Encodings used by the cache model tests.
const (
	insBLRx21     = 0xd63f02a0 // blr x21
	insMovX20X0   = 0xaa0003f4 // mov x20, x0
	insMovX22X0   = 0xaa0003f6 // mov x22, x0
	insStrW1X21   = 0xb90002a1 // str w1, [x21]
	insDCCVAUx21  = 0xd50b7b35 // dc cvau, x21
	insDCCIVACx21 = 0xd50b7e35 // dc civac, x21
	insDSBISH     = 0xd5033b9f // dsb ish
	insICIVAUx21  = 0xd50b7535 // ic ivau, x21
	insISB        = 0xd5033fdf // isb
	insMovW0_1    = 0x52800020 // mov w0, #1
	insMovW0_2    = 0x52800040 // mov w0, #2
	insRet        = 0xd65f03c0 // ret
	insSVC0       = 0xd4000001 // svc #0
	insMrsCTR     = 0xd53b0020 // mrs x0, ctr_el0
	insMrsDCZID   = 0xd53b00e1 // mrs x1, dczid_el0
	insDCZVAx2    = 0xd50b7422 // dc zva, x2
)

// tJit is an RWX page holding generated code.
const tJit = 0x500000

func testModelConfig(t testing.TB, s string) icache.ModelConfig {
	t.Helper()
	cfg, err := icache.ParseModelConfig(s)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// jitCPU returns a CPU running prog at tCode with an RWX page at tJit
// holding "mov w0, #1; ret", x21 = tJit and w1 = "mov w0, #2". mode is
// "off", or an icache.ICacheMode name for the model.
func jitCPU(t testing.TB, mode string, prog []uint32) *CPU {
	t.Helper()
	c := newTestCPU(t, prog)
	if err := c.mm.Map(vm.VMA{Start: tJit, End: tJit + vm.PageSize, Prot: vm.ProtRead | vm.ProtWrite | vm.ProtExec}); err != nil {
		t.Fatal(err)
	}
	pokeCode(t, c.mm, tJit, []uint32{insMovW0_1, insRet})
	if mode != "off" {
		c.SetCacheModel(icache.NewModel(testModelConfig(t, "icache="+mode)))
	}
	c.SetReg(21, tJit)
	c.SetReg(1, insMovW0_2)
	return c
}

// TestJITStrict is the acceptance matrix of self-modifying code on one
// CPU: call generated code, rewrite it, maintain (or not), call again.
func TestJITStrict(t *testing.T) {
	full := []uint32{insDCCVAUx21, insDSBISH, insICIVAUx21, insDSBISH, insISB}
	for _, tc := range []struct {
		name  string
		maint []uint32
		// result of the second call: model off, strict, coherent
		off, strict, coherent uint64
	}{
		{"none", nil, 2, 1, 2},
		{"full", full, 2, 2, 2},
		{"civac", []uint32{insDCCIVACx21, insDSBISH, insICIVAUx21, insDSBISH, insISB}, 2, 2, 2},
		{"no-isb", []uint32{insDCCVAUx21, insDSBISH, insICIVAUx21, insDSBISH}, 2, 1, 2},
		{"no-dc", []uint32{insICIVAUx21, insDSBISH, insISB}, 2, 1, 2},
		{"no-ic", []uint32{insDCCVAUx21, insDSBISH, insISB}, 2, 1, 2},
		{"isb-only", []uint32{insISB}, 2, 1, 2},
		// An exception return (here: after SVC) is a context
		// synchronisation too.
		{"dc-ic-svc", []uint32{insDCCVAUx21, insDSBISH, insICIVAUx21, insDSBISH, insSVC0}, 2, 2, 2},
		{"svc-only", []uint32{insSVC0}, 2, 1, 2},
	} {
		prog := []uint32{insBLRx21, insMovX20X0, insStrW1X21}
		prog = append(prog, tc.maint...)
		prog = append(prog, insBLRx21, insMovX22X0, brk0)
		for _, mode := range []string{"off", "strict", "coherent"} {
			want := map[string]uint64{"off": tc.off, "strict": tc.strict, "coherent": tc.coherent}[mode]
			c := jitCPU(t, mode, prog)
			for {
				e := c.Run(1 << 30)
				if e.Reason == vm.ExitSyscall {
					continue
				}
				if e.Reason != vm.ExitBreakpoint {
					t.Fatalf("%s/%s: exit %+v", tc.name, mode, e)
				}
				break
			}
			if c.Reg(20) != 1 || c.Reg(22) != want {
				t.Errorf("%s/%s: calls returned %d, %d; want 1, %d", tc.name, mode, c.Reg(20), c.Reg(22), want)
			}
		}
	}
}

// TestJITCrossCPU: another CPU of the process publishes the new code
// (DC CVAU + IC IVAU, broadcast); this CPU sees it at its next context
// synchronisation (entry to Run), and only if the writer cleaned the
// line to the point of unification.
func TestJITCrossCPU(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writer []uint32
		want   uint64
	}{
		{"dc-ic", []uint32{insStrW1X21, insDCCVAUx21, insDSBISH, insICIVAUx21, insDSBISH, brk0}, 2},
		{"ic-only", []uint32{insStrW1X21, insICIVAUx21, insDSBISH, brk0}, 1},
		{"none", []uint32{insStrW1X21, brk0}, 1},
	} {
		const writerAt = tCode + 0x100
		a := jitCPU(t, "strict", []uint32{insBLRx21, insMovX20X0, brk0})
		pokeCode(t, a.mm, writerAt, tc.writer)
		b := a.Clone(a.mm).(*CPU)
		runToBrk(t, a)
		b.SetPC(writerAt)
		runToBrk(t, b)
		a.SetPC(tCode)
		runToBrk(t, a)
		if a.Reg(20) != tc.want {
			t.Errorf("%s: reader got %d, want %d", tc.name, a.Reg(20), tc.want)
		}
		sb, sa := b.CacheModel().Stats(), a.CacheModel().Stats()
		ics := uint64(0)
		if tc.name != "none" {
			ics = 1
		}
		if sb.ICOps != ics || sb.Broadcasts != ics {
			t.Errorf("%s: writer IC ops %d, broadcasts %d; want %d", tc.name, sb.ICOps, sb.Broadcasts, ics)
		}
		if sa.I.Invalidations != ics {
			t.Errorf("%s: reader's I-cache invalidations %d, want %d", tc.name, sa.I.Invalidations, ics)
		}
		cost := icache.DefaultModelConfig().Cost
		want := ics * (cost.ICLine + cost.Broadcast)
		if tc.name == "dc-ic" {
			want += cost.DCLine
		}
		if sb.Cycles != want {
			t.Errorf("%s: writer maintenance cycles %d, want %d", tc.name, sb.Cycles, want)
		}
	}
}

// TestStrictInvalidationPaths: what makes a strict CPU's decoded code
// change, and what does not.
func TestStrictInvalidationPaths(t *testing.T) {
	call := []uint32{insBLRx21, insMovX20X0, brk0}
	run := func(c *CPU) vm.Exit {
		c.SetPC(tCode)
		c.SetReg(20, 0)
		return c.Run(1 << 30)
	}
	for _, mode := range []string{"off", "strict"} {
		strict := mode == "strict"
		// A store alone.
		c := jitCPU(t, mode, call)
		runToBrk(t, c)
		pokeWord := func(w uint32) {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], w)
			if err := c.mm.WriteAt(b[:], tJit); err != nil {
				t.Fatal(err)
			}
		}
		pokeWord(insMovW0_2)
		runToBrk(t, run2(c))
		if got, want := c.Reg(20), map[bool]uint64{false: 2, true: 1}[strict]; got != want {
			t.Errorf("%s: after a store: %d, want %d", mode, got, want)
		}
		// mprotect without exec: the next fetch faults, in both modes.
		if err := c.mm.Protect(tJit, tJit+vm.PageSize, vm.ProtRead|vm.ProtWrite); err != nil {
			t.Fatal(err)
		}
		if e := run(c); e.Reason != vm.ExitFault || e.Fault.Access != vm.AccessExec || e.PC != tJit {
			t.Errorf("%s: after mprotect(RW): %+v", mode, e)
		}
		// Back to RX: mprotect is no cache maintenance, the I-side
		// still holds the old bytes.
		if err := c.mm.Protect(tJit, tJit+vm.PageSize, vm.ProtRead|vm.ProtExec); err != nil {
			t.Fatal(err)
		}
		runToBrk(t, run2(c))
		if got, want := c.Reg(20), map[bool]uint64{false: 2, true: 1}[strict]; got != want {
			t.Errorf("%s: after mprotect(RX): %d, want %d", mode, got, want)
		}
		// Breakpoint install (uprobes): Poke, then FlushICache as the
		// kernel does. In strict mode Poke alone is just a store.
		var brk [4]byte
		binary.LittleEndian.PutUint32(brk[:], brk0|7<<5) // brk #7
		if err := c.mm.Poke(brk[:], tJit); err != nil {
			t.Fatal(err)
		}
		e := run(c)
		if strict {
			if e.Reason != vm.ExitBreakpoint || e.Code != 0 || c.Reg(20) != 1 {
				t.Errorf("strict: Poke without flush: %+v x20=%d", e, c.Reg(20))
			}
			c.FlushICache(tJit, 4)
			e = run(c)
		}
		if e.Reason != vm.ExitBreakpoint || e.Code != 7 || e.PC != tJit {
			t.Errorf("%s: after Poke+FlushICache: %+v", mode, e)
		}
		// Breakpoint removal.
		binary.LittleEndian.PutUint32(brk[:], insMovW0_1)
		if err := c.mm.Poke(brk[:], tJit); err != nil {
			t.Fatal(err)
		}
		c.FlushICache(tJit, 4)
		runToBrk(t, run2(c))
		if c.Reg(20) != 1 {
			t.Errorf("%s: after removing the breakpoint: %d", mode, c.Reg(20))
		}
		// munmap: the fetch faults; a new mapping is new memory.
		c.mm.Unmap(tJit, tJit+vm.PageSize)
		if e := run(c); e.Reason != vm.ExitFault || e.Fault.Mapped || e.PC != tJit {
			t.Errorf("%s: after munmap: %+v", mode, e)
		}
		if err := c.mm.Map(vm.VMA{Start: tJit, End: tJit + vm.PageSize, Prot: vm.ProtRead | vm.ProtWrite | vm.ProtExec}); err != nil {
			t.Fatal(err)
		}
		pokeCode(t, c.mm, tJit, []uint32{insMovW0_2, insRet})
		runToBrk(t, run2(c))
		if c.Reg(20) != 2 {
			t.Errorf("%s: after munmap+mmap: %d", mode, c.Reg(20))
		}
	}
}

// run2 restarts c at tCode (for runToBrk).
func run2(c *CPU) *CPU {
	c.SetPC(tCode)
	c.SetReg(20, 0)
	return c
}

// TestCacheModelStreaming: a load loop streaming over an array gives
// exactly the misses the geometry predicts.
func TestCacheModelStreaming(t *testing.T) {
	for _, tc := range []struct {
		cfg            string
		bytes, passes  uint64
		wantDMiss      uint64
		wantEvictions  uint64
		wantIMiss      uint64
		wantIAccesses  uint64
		wantDAccesses  uint64
		wantReadMisses uint64
	}{
		// 16 KiB through a 4 KiB LRU cache twice: every line misses
		// on both passes.
		{cfg: "l1d=4k,64,4 l1i=4k,64,2", bytes: 16 << 10, passes: 2, wantDMiss: 512, wantEvictions: 512 - 64, wantIMiss: 1},
		// 2 KiB fits: only the first pass misses.
		{cfg: "l1d=4k,64,4", bytes: 2 << 10, passes: 2, wantDMiss: 32, wantIMiss: 1},
		// 32-byte lines: twice the misses.
		{cfg: "l1d=4k,32,4", bytes: 2 << 10, passes: 1, wantDMiss: 64, wantIMiss: 1},
		// FIFO and random replacement stream the same way through an
		// array four times the cache.
		{cfg: "l1d=4k,64,4,fifo", bytes: 16 << 10, passes: 3, wantDMiss: 768, wantEvictions: 768 - 64, wantIMiss: 1},
		{cfg: "l1d=4k,64,1", bytes: 16 << 10, passes: 2, wantDMiss: 512, wantEvictions: 512 - 64, wantIMiss: 1},
	} {
		c := newTestCPU(t, sumCode)
		c.SetCacheModel(icache.NewModel(testModelConfig(t, tc.cfg)))
		for p := uint64(0); p < tc.passes; p++ {
			c.SetPC(tCode)
			c.SetReg(0, tData)
			c.SetReg(3, tc.bytes/8)
			runToBrk(t, c)
		}
		st := c.CacheModel().Stats()
		words := tc.bytes / 8 * tc.passes
		if st.D.Misses != tc.wantDMiss || st.DReadMisses != tc.wantDMiss || st.D.Accesses != words || st.DReads != words || st.DWrites != 0 {
			t.Errorf("%s: D %+v reads %d/%d writes %d; want %d accesses, %d misses", tc.cfg, st.D, st.DReads, st.DReadMisses, st.DWrites, words, tc.wantDMiss)
		}
		if st.D.Evictions != tc.wantEvictions {
			t.Errorf("%s: %d evictions, want %d", tc.cfg, st.D.Evictions, tc.wantEvictions)
		}
		if st.I.Accesses != c.Retired() || st.I.Misses != tc.wantIMiss {
			t.Errorf("%s: I %+v, retired %d; want %d misses", tc.cfg, st.I, c.Retired(), tc.wantIMiss)
		}
	}
}

// TestCacheModelSystemRegisters: CTR_EL0, DCZID_EL0 and DC ZVA follow
// the modelled line sizes.
func TestCacheModelSystemRegisters(t *testing.T) {
	prog := []uint32{insMrsCTR, insMrsDCZID, insDCZVAx2, brk0}
	fill := func(c *CPU) {
		b := make([]byte, 512)
		for i := range b {
			b[i] = 0xff
		}
		if err := c.mm.WriteAt(b, tData); err != nil {
			t.Fatal(err)
		}
		c.SetReg(2, tData+0x100+8) // inside the block at tData+0x100
	}
	zeroed := func(c *CPU) (lo, hi uint64) {
		b := make([]byte, 512)
		if err := c.mm.ReadAt(b, tData); err != nil {
			t.Fatal(err)
		}
		lo, hi = 512, 0
		for i, v := range b {
			if v == 0 {
				lo, hi = min(lo, uint64(i)), max(hi, uint64(i)+1)
			}
		}
		return lo, hi
	}
	c := newTestCPU(t, prog)
	fill(c)
	runToBrk(t, c)
	if c.Reg(0) != CTR || c.Reg(1) != DCZID {
		t.Errorf("model off: CTR %#x DCZID %#x", c.Reg(0), c.Reg(1))
	}
	if lo, hi := zeroed(c); lo != 0x100 || hi != 0x140 {
		t.Errorf("model off: DC ZVA zeroed [%#x, %#x)", lo, hi)
	}
	for _, tc := range []struct {
		cfg       string
		ctr       uint64
		dczid     uint64
		zlo, zhi  uint64
		coherentB bool
	}{
		{"l1i=32k,64,4 l1d=32k,64,8", 0x8444c004, 4, 0x100, 0x140, false},
		{"l1i=16k,32,2 l1d=32k,128,8", 0x8545c003, 5, 0x100, 0x180, false},
		{"l1i=32k,64,4 l1d=32k,32,8 icache=coherent", 0xb343c004, 3, 0x100, 0x120, true},
	} {
		c := newTestCPU(t, prog)
		c.SetCacheModel(icache.NewModel(testModelConfig(t, tc.cfg)))
		fill(c)
		runToBrk(t, c)
		if c.Reg(0) != tc.ctr || c.Reg(1) != tc.dczid {
			t.Errorf("%s: CTR %#x DCZID %#x, want %#x %#x", tc.cfg, c.Reg(0), c.Reg(1), tc.ctr, tc.dczid)
		}
		if lo, hi := zeroed(c); lo != tc.zlo || hi != tc.zhi {
			t.Errorf("%s: DC ZVA zeroed [%#x, %#x), want [%#x, %#x)", tc.cfg, lo, hi, tc.zlo, tc.zhi)
		}
		if st := c.CacheModel().Stats(); st.ZVAs != 1 || st.DWrites != 1 {
			t.Errorf("%s: stats %+v", tc.cfg, st)
		}
	}
}

// TestRedecodeDifferential: forcing a fresh decode of every instruction
// gives the same results as executing from decoded pages.
func TestRedecodeDifferential(t *testing.T) {
	full := []uint32{insBLRx21, insMovX20X0, insStrW1X21, insDCCVAUx21, insDSBISH, insICIVAUx21, insDSBISH, insISB,
		insBLRx21, insMovX22X0, brk0}
	progs := []struct {
		name  string
		code  []uint32
		setup func(c *CPU)
	}{
		{"fib", fibCode, func(c *CPU) { c.SetReg(0, 12) }},
		{"sum", sumCode, func(c *CPU) { c.SetReg(0, tData); c.SetReg(3, 300) }},
		{"jit", full, nil},
	}
	for _, p := range progs {
		for _, mode := range []string{"off", "strict", "coherent"} {
			var regs [2]Regs
			var retired [2]uint64
			for i, redecode := range []bool{false, true} {
				c := jitCPU(t, mode, p.code)
				if p.setup != nil {
					p.setup(c)
				}
				c.SetRedecode(redecode)
				runToBrk(t, c)
				regs[i], retired[i] = c.regs, c.Retired()
			}
			if regs[0] != regs[1] || retired[0] != retired[1] {
				t.Errorf("%s/%s: cached and re-decoded runs differ:\n%+v\n%+v", p.name, mode, regs[0], regs[1])
			}
		}
	}
}

// TestCacheModelNoAllocs: the hooked loop allocates nothing per run.
func TestCacheModelNoAllocs(t *testing.T) {
	c := newTestCPU(t, fibCode)
	c.SetCacheModel(icache.NewModel(icache.DefaultModelConfig()))
	c.SetReg(0, 10)
	runToBrk(t, c)
	allocs := testing.AllocsPerRun(10, func() {
		c.SetPC(tCode)
		c.SetSP(tStack)
		c.SetReg(0, 10)
		if e := c.Run(1 << 40); e.Reason != vm.ExitBreakpoint {
			t.Fatalf("%+v", e)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run with the cache model on", allocs)
	}
}

// BenchmarkFibCacheModel is BenchmarkFib with the default (strict) cache
// model on.
func BenchmarkFibCacheModel(b *testing.B) {
	benchProgram(b, fibCode, func(c *CPU) {
		if c.CacheModel() == nil {
			c.SetCacheModel(icache.NewModel(icache.DefaultModelConfig()))
		}
		c.SetReg(0, 25)
	})
}
