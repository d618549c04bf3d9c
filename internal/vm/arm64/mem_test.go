package arm64

import (
	"encoding/binary"
	"hash/crc32"
	"sync"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

func poke64(t *testing.T, c *CPU, addr, v uint64) {
	t.Helper()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if err := c.MM().Poke(b[:], addr); err != nil {
		t.Fatal(err)
	}
}

func peek64(t *testing.T, c *CPU, addr uint64) uint64 {
	t.Helper()
	var b [8]byte
	if err := c.MM().Peek(b[:], addr); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

func TestLoadStoreForms(t *testing.T) {
	c := newTestCPU(t, []uint32{
		0xf8408402, // ldr x2, [x0], #8     (post-index)
		0x38646804, // ldrb w4, [x0, x4]    (register offset)
		0xb8a3d805, // ldrsw x5, [x0, w3, sxtw #2]
		0xf85fd006, // ldur x6, [x0, #-3]
		0x39c00007, // ldrsb w7, [x0]
		0x79800008, // ldrsh x8, [x0]
		0x69402c09, // ldpsw x9, x11, [x0]
		0x29bf3009, // stp w9, w12, [x0, #-8]!
		brk0,
	})
	poke64(t, c, tData, 0x1122_3344_5566_7788)
	poke64(t, c, tData+8, 0x8899_aabb_ccdd_eeff)
	poke64(t, c, tData+16, 0xfedc_ba98_7654_3210)
	c.SetReg(0, tData)
	c.SetReg(3, 0xffff_ffff_0000_0002) // w3 = 2 (sxtw ignores the top)
	c.SetReg(4, 2)
	c.SetReg(12, 0xdead_beef_cafe_f00d)
	runToBrk(t, c)
	checks := []struct {
		r    int
		want uint64
	}{
		{2, 0x1122_3344_5566_7788},
		{4, 0xdd},                   // byte at tData+8+2
		{5, 0x7654_3210},            // word at tData+8+8
		{6, 0xbbcc_ddee_ff11_2233},  // tData+5
		{7, 0xffff_ffff},            // ldrsb w: 0xff sign-extended to 32 bits, zero-extended
		{8, 0xffff_ffff_ffff_eeff},  // ldrsh x
		{9, 0xffff_ffff_ccdd_eeff},  // ldpsw first
		{11, 0xffff_ffff_8899_aabb}, // ldpsw second
		{0, tData},                  // post-index +8, then pre-index -8
	}
	for _, ck := range checks {
		if got := c.Reg(ck.r); got != ck.want {
			t.Errorf("x%d = %#x, want %#x", ck.r, got, ck.want)
		}
	}
	if got := peek64(t, c, tData); got != 0xcafe_f00d_ccdd_eeff {
		t.Errorf("stp w: memory %#x", got)
	}
}

func TestFPLoadStore(t *testing.T) {
	c := newTestCPU(t, []uint32{
		0x3dc00400, // ldr q0, [x0, #16]
		0x3d800c00, // str q0, [x0, #48]
		0xfd400404, // ldr d4, [x0, #8]
		0xbd000404, // str s4, [x0, #4]
		0x7d400405, // ldr h5, [x0, #2]
		0x3d000405, // str b5, [x0, #1]
		0xadbf07e0, // stp q0, q1, [sp, #-32]!
		0xacc10fe2, // ldp q2, q3, [sp], #32
		0x58000062, // ldr x2, .+12 (the literal after brk)
		0x9c000061, // ldr q1, .+12
		brk0,
		0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff00,
	})
	for i := uint64(0); i < 8; i++ {
		poke64(t, c, tData+8*i, 0x0101_0101_0101_0101*(i+1))
	}
	c.regs.V[4] = [2]uint64{0xdead, 0xbeef}
	c.regs.V[1] = [2]uint64{7, 8}
	c.SetReg(0, tData)
	runToBrk(t, c)
	if c.regs.V[0] != [2]uint64{0x0303_0303_0303_0303, 0x0404_0404_0404_0404} {
		t.Errorf("q0 = %x", c.regs.V[0])
	}
	if peek64(t, c, tData+48) != 0x0303_0303_0303_0303 || peek64(t, c, tData+56) != 0x0404_0404_0404_0404 {
		t.Error("str q0")
	}
	if c.regs.V[4] != [2]uint64{0x0202_0202_0202_0202, 0} {
		t.Errorf("ldr d4 must zero the top: %x", c.regs.V[4])
	}
	if got := peek64(t, c, tData); got != 0x0202_0202_0101_0101&^0xff00|0x0100 {
		// str s4 wrote bytes 4..7 = 02; str b5 wrote byte 1 = h5's low byte (01)
		t.Errorf("memory at tData = %#x", got)
	}
	if c.regs.V[5] != [2]uint64{0x0101, 0} {
		t.Errorf("ldr h5 = %x", c.regs.V[5])
	}
	if c.regs.V[2] != c.regs.V[0] || c.regs.V[3] != [2]uint64{7, 8} || c.SP() != tStack {
		t.Errorf("stp/ldp q: q2 %x q3 %x sp %#x", c.regs.V[2], c.regs.V[3], c.SP())
	}
	if c.Reg(2) != 0x5566_7788_1122_3344 || c.regs.V[1] != [2]uint64{0x99aa_bbcc_5566_7788, 0xddee_ff00} {
		t.Errorf("literal loads: x2 %#x q1 %x", c.Reg(2), c.regs.V[1])
	}
}

// TestPreciseFault: a faulting load, store or pair leaves every register
// (including a writeback base) and memory unchanged and reports the PC.
func TestPreciseFault(t *testing.T) {
	for _, tc := range []struct {
		name string
		word uint32
		addr uint64
	}{
		{"ldr post-index", 0xf8408402, tData + tSize},
		{"str pre-index", 0xf8010c02, tData + tSize - 16}, // str x2, [x0, #16]!
		{"ldp crossing into unmapped", 0xa9400c02, tData + tSize - 8},
		{"stp crossing into unmapped", 0xa9000c02, tData + tSize - 8},
		{"str q crossing", 0x3d800000, tData + tSize - 8},
		{"stp q crossing", 0xad000400, tData + tSize - 16},
	} {
		c := newTestCPU(t, []uint32{0xd2800021, tc.word, brk0}) // mov x1, #1
		c.SetReg(0, tc.addr)
		c.SetReg(2, 0x42)
		c.SetReg(3, 0x43)
		poke64(t, c, tData+tSize-8, 0x77)
		e := c.Run(100)
		if e.Reason != vm.ExitFault || e.PC != tCode+4 {
			t.Errorf("%s: exit %v at %#x", tc.name, e.Reason, e.PC)
			continue
		}
		if e.Fault.Addr < tData+tSize || e.Fault.Addr >= tData+tSize+64 {
			t.Errorf("%s: fault address %#x", tc.name, e.Fault.Addr)
		}
		if c.Reg(0) != tc.addr || c.Reg(2) != 0x42 || c.Reg(1) != 1 || c.PC() != tCode+4 {
			t.Errorf("%s: state changed: x0 %#x x2 %#x pc %#x", tc.name, c.Reg(0), c.Reg(2), c.PC())
		}
		if peek64(t, c, tData+tSize-8) != 0x77 {
			t.Errorf("%s: memory written before the fault", tc.name)
		}
		if c.Retired() != 1 {
			t.Errorf("%s: retired %d, want 1", tc.name, c.Retired())
		}
	}
	// Stores to a read-only page fault with Mapped set.
	c := newTestCPU(t, []uint32{0xf9000002, brk0}) // str x2, [x0]
	c.SetReg(0, tCode)
	if e := c.Run(10); e.Reason != vm.ExitFault || !e.Fault.Mapped || e.Fault.Access != vm.AccessWrite {
		t.Errorf("store to code: %+v", e)
	}
	// Executing unmapped memory.
	c = newTestCPU(t, []uint32{0xd61f0000}) // br x0
	c.SetReg(0, 0x1000)
	if e := c.Run(10); e.Reason != vm.ExitFault || e.PC != 0x1000 || e.Fault.Access != vm.AccessExec {
		t.Errorf("exec unmapped: %+v", e)
	}
	// Executing a data page (no PROT_EXEC).
	c = newTestCPU(t, []uint32{0xd61f0000})
	c.SetReg(0, tData)
	if e := c.Run(10); e.Reason != vm.ExitFault || e.PC != tData || !e.Fault.Mapped {
		t.Errorf("exec rw page: %+v", e)
	}
	// Misaligned branch target.
	c = newTestCPU(t, []uint32{0xd61f0000})
	c.SetReg(0, tCode+2)
	if e := c.Run(10); e.Reason != vm.ExitAlignment || e.PC != tCode+2 {
		t.Errorf("misaligned pc: %+v", e)
	}
}

func TestExclusives(t *testing.T) {
	c := newTestCPU(t, []uint32{
		0xc85f7c02, // ldxr x2, [x0]
		0x91000442, // add x2, x2, #1
		0xc8037c02, // stxr w3, x2, [x0]
		0xc8037c02, // stxr w3', again: monitor cleared → fails (w3 ← 1)? use x5 below
		brk0,
	})
	pokeCode(t, c.MM(), tCode+12, []uint32{0xc8057c02}) // stxr w5, x2, [x0]
	c.SetReg(0, tData)
	poke64(t, c, tData, 41)
	runToBrk(t, c)
	if c.Reg(3) != 0 || c.Reg(5) != 1 || peek64(t, c, tData) != 42 {
		t.Errorf("ldxr/stxr: status %d then %d, memory %d", c.Reg(3), c.Reg(5), peek64(t, c, tData))
	}
	// Byte exclusives next to a concurrently changing byte still succeed.
	c = newTestCPU(t, []uint32{0x085ffc02, 0x11000442, 0x0803fc02, brk0}) // ldaxrb; add w2,w2,#1; stlxrb w3
	c.SetReg(0, tData+1)
	poke64(t, c, tData, 0x0505)
	runToBrk(t, c)
	if c.Reg(3) != 0 || peek64(t, c, tData) != 0x0605 {
		t.Errorf("byte exclusive: status %d memory %#x", c.Reg(3), peek64(t, c, tData))
	}
	// Value changed between LDXR and STXR → fails.
	c = newTestCPU(t, []uint32{0xc85f7c02, 0xf9000024, 0xc8037c02, brk0}) // ldxr; str x4, [x1]; stxr
	c.SetReg(0, tData)
	c.SetReg(1, tData)
	c.SetReg(4, 99)
	runToBrk(t, c)
	if c.Reg(3) != 1 || peek64(t, c, tData) != 99 {
		t.Errorf("stxr after intervening store: status %d", c.Reg(3))
	}
	// 128-bit pair.
	c = newTestCPU(t, []uint32{0xc87f0c02, 0xc8240c02, brk0}) // ldxp x2, x3; stxp w4, x2, x3
	c.SetReg(0, tData+16)
	poke64(t, c, tData+16, 1)
	poke64(t, c, tData+24, 2)
	runToBrk(t, c)
	if c.Reg(4) != 0 || c.Reg(2) != 1 || c.Reg(3) != 2 {
		t.Errorf("ldxp/stxp: %d %d %d", c.Reg(4), c.Reg(2), c.Reg(3))
	}
	// Misaligned exclusive → alignment exit, state unchanged.
	c = newTestCPU(t, []uint32{0xc85f7c02, brk0})
	c.SetReg(0, tData+4)
	if e := c.Run(10); e.Reason != vm.ExitAlignment || e.Fault.Addr != tData+4 || e.PC != tCode || c.Reg(2) != 0 {
		t.Errorf("misaligned ldxr: %+v", e)
	}
	c = newTestCPU(t, []uint32{0xc89ffc22, brk0}) // stlr x2, [x1]
	c.SetReg(1, tData+1)
	if e := c.Run(10); e.Reason != vm.ExitAlignment {
		t.Errorf("misaligned stlr: %+v", e)
	}
}

// TestExclusiveContention increments one counter from several guest
// threads with LDAXR/STLXR loops and checks no increment is lost.
func TestExclusiveContention(t *testing.T) {
	if raceEnabled {
		t.Skip("parallel guest threads race on guest memory by design")
	}
	const threads, iters = 4, 20000
	code := []uint32{
		0xc85ffc02, // 1: ldaxr x2, [x0]
		0x91000442, // add x2, x2, #1
		0xc803fc02, // stlxr w3, x2, [x0]
		0x35ffffa3, // cbnz w3, 1b
		0xf1000421, // subs x1, x1, #1
		0x54ffff61, // b.ne 1b
		brk0,
	}
	c0 := newTestCPU(t, code)
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		c := c0.Clone(c0.MM()).(*CPU)
		c.SetReg(0, tData)
		c.SetReg(1, iters)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e := c.Run(1000)
				if e.Reason == vm.ExitBreakpoint {
					return
				}
				if e.Reason != vm.ExitBudget {
					t.Errorf("exit %+v", e)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := peek64(t, c0, tData); got != threads*iters {
		t.Errorf("counter = %d, want %d", got, threads*iters)
	}
}

func TestSystem(t *testing.T) {
	c := newTestCPU(t, []uint32{
		0xd53b00e2, // mrs x2, dczid_el0
		0xd53b0023, // mrs x3, ctr_el0
		0xd53be004, // mrs x4, cntfrq_el0
		0xd53be045, // mrs x5, cntvct_el0
		0xd51bd040, // msr tpidr_el0, x0
		0xd53bd046, // mrs x6, tpidr_el0
		0xd50b7421, // dc zva, x1
		0xd50b7b21, // dc cvau, x1
		0xd5033bbf, // dmb ish
		0xd503201f, // nop
		0xd503233f, // paciasp (hint #25)
		0xd503245f, // bti c
		0xd5033fdf, // isb
		0x1ac14007, // crc32b w7, w0, w1
		0x9ac15c08, // crc32cx w8, w0, x1
		brk0,
	})
	c.SetReg(0, 0x1234_5678_9abc)
	c.SetReg(1, tData+0x45)
	for i := uint64(0); i < 16; i++ {
		poke64(t, c, tData+8*i, ^uint64(0))
	}
	c.Counter = func(_, _ uint64) uint64 { return 777 }
	runToBrk(t, c)
	if c.Reg(2) != DCZID || c.Reg(3) != CTR || c.Reg(4) != CounterFreq || c.Reg(5) != 777 || c.Reg(6) != 0x1234_5678_9abc || c.TLS() != 0x1234_5678_9abc {
		t.Errorf("mrs: %#x %#x %#x %#x %#x", c.Reg(2), c.Reg(3), c.Reg(4), c.Reg(5), c.Reg(6))
	}
	for i := uint64(0); i < 16; i++ {
		want := ^uint64(0)
		if i >= 8 {
			want = 0 // the 64-byte block containing tData+0x45
		}
		if got := peek64(t, c, tData+8*i); got != want {
			t.Errorf("dc zva: word %d = %#x", i, got)
		}
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], tData+0x45)
	wantB := ^crc32.Update(^uint32(0x5678_9abc), crc32.IEEETable, b[:1])
	wantCX := ^crc32.Update(^uint32(0x5678_9abc), crc32.MakeTable(crc32.Castagnoli), b[:])
	if c.Reg(7) != uint64(wantB) || c.Reg(8) != uint64(wantCX) {
		t.Errorf("crc32: %#x %#x, want %#x %#x", c.Reg(7), c.Reg(8), wantB, wantCX)
	}
}

func TestExits(t *testing.T) {
	c := newTestCPU(t, []uint32{0xd2800021, 0xd4000001, 0xd42000a0, 0x00000001, 0xd5380102, 0x04000041})
	e := c.Run(100)
	if e.Reason != vm.ExitSyscall || e.PC != tCode+8 || c.PC() != tCode+8 || c.Retired() != 2 {
		t.Fatalf("svc: %+v retired %d", e, c.Retired())
	}
	e = c.Run(100)
	if e.Reason != vm.ExitBreakpoint || e.Code != 5 || e.PC != tCode+8 || c.Retired() != 2 {
		t.Fatalf("brk: %+v", e)
	}
	for _, want := range []string{"unallocated", "system register", "SVE"} {
		c.SetPC(c.PC() + 4)
		e = c.Run(100)
		if e.Reason != vm.ExitUndefined || e.PC != c.PC() || e.RawLen != 4 || !contains(e.Why, want) {
			t.Fatalf("undefined: %+v", e)
		}
	}
	if e.Raw[0] != 0x41 || e.Raw[3] != 0x04 {
		t.Errorf("raw bytes %x", e.Raw[:4])
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestStepBudgetInterrupt covers Step, the budget and Interrupt.
func TestStepBudgetInterrupt(t *testing.T) {
	loop := []uint32{0x91000400, 0x17ffffff} // 1: add x0, x0, #1; b 1b
	c := newTestCPU(t, loop)
	for i := 0; i < 5; i++ {
		if e := c.Step(); e.Reason != vm.ExitStep {
			t.Fatalf("step: %+v", e)
		}
	}
	if c.Reg(0) != 3 || c.PC() != tCode+4 || c.Retired() != 5 {
		t.Errorf("after 5 steps: x0 %d pc %#x retired %d", c.Reg(0), c.PC(), c.Retired())
	}
	e := c.Run(1000)
	if e.Reason != vm.ExitBudget || c.Retired() < 1005 || c.Retired() > 1007 {
		t.Errorf("budget: %+v retired %d", e, c.Retired())
	}
	if c.Reg(0) != c.Retired()/2 {
		t.Errorf("x0 %d vs retired %d", c.Reg(0), c.Retired())
	}
	done := make(chan vm.Exit)
	go func() { done <- c.Run(1 << 62) }()
	c.Interrupt()
	if e := <-done; e.Reason != vm.ExitBudget {
		t.Errorf("interrupt: %+v", e)
	}
}

// TestSelfModifyingCode: a store into already-decoded code is seen after
// the next branch (and after IC IVAU + ISB).
func TestSelfModifyingCode(t *testing.T) {
	c := newTestCPU(t, []uint32{
		0xd2800540, // mov x0, #42
		0xb9000022, // str w2, [x1]   — overwrite the instruction at tCode+16
		0xd50b7521, // ic ivau, x1
		0xd5033fdf, // isb
		0xd2800020, // mov x0, #1      (replaced by mov x0, #7)
		brk0,
	})
	if err := c.MM().Protect(tCode, tCode+tSize, vm.ProtRead|vm.ProtWrite|vm.ProtExec); err != nil {
		t.Fatal(err)
	}
	c.SetReg(1, tCode+16)
	c.SetReg(2, 0xd28000e0) // mov x0, #7
	runToBrk(t, c)
	if c.Reg(0) != 7 {
		t.Errorf("x0 = %d: stale code executed", c.Reg(0))
	}
	// Modification without maintenance is still seen after a branch.
	c.SetPC(tCode)
	c.SetReg(2, 0xd2800100)                                        // mov x0, #8
	pokeCode(t, c.MM(), tCode+8, []uint32{0x14000001, 0x14000001}) // b .+4 twice instead of ic/isb
	runToBrk(t, c)
	if c.Reg(0) != 8 {
		t.Errorf("x0 = %d after store + branch", c.Reg(0))
	}
}

func TestTraceLine(t *testing.T) {
	c := newTestCPU(t, nil)
	c.SetReg(0, 0xabc)
	c.SetReg(30, 1)
	c.regs.NZCV = 0x6000_0000
	got := c.TraceLine()
	want := "pc=400000 x0=abc x1=0 x2=0 x3=0 x4=0 x5=0 x6=0 x7=0 x8=0 x9=0 x10=0 x11=0 x12=0 x13=0 x14=0 x15=0 x16=0 x17=0 x18=0 x19=0 x20=0 x21=0 x22=0 x23=0 x24=0 x25=0 x26=0 x27=0 x28=0 x29=0 x30=1 sp=800000 nzcv=6"
	if got != want {
		t.Errorf("TraceLine:\n got %s\nwant %s", got, want)
	}
}
