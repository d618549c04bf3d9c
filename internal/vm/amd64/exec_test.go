package amd64

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"sync"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// Test address-space layout.
const (
	tCode     = 0x400000
	tSentinel = 0x500000 // a page of INT3: returning here ends a test run
	tData     = 0x10000000
	tDataSize = 0x10000
	tStackTop = 0x80000000
)

// h decodes hex with optional spaces.
func h(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// newTestCPU maps code at tCode (writable too when rwx), a data area, a
// stack whose top word returns to the sentinel page, and returns a CPU
// ready to run the code.
func newTestCPU(t testing.TB, code []byte, rwx bool) *CPU {
	t.Helper()
	mm := vm.NewMM()
	prot := vm.ProtRead | vm.ProtExec
	if rwx {
		prot |= vm.ProtWrite
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	end := vm.PageAlign(uint64(len(code)) + 1)
	must(mm.Map(vm.VMA{Start: tCode, End: tCode + end, Prot: prot}))
	must(mm.Poke(code, tCode))
	must(mm.Poke([]byte{0xCC}, tCode+uint64(len(code)))) // fall off the end: breakpoint
	must(mm.Map(vm.VMA{Start: tSentinel, End: tSentinel + vm.PageSize, Prot: vm.ProtRead | vm.ProtExec}))
	int3 := make([]byte, vm.PageSize)
	for i := range int3 {
		int3[i] = 0xCC
	}
	must(mm.Poke(int3, tSentinel))
	must(mm.Map(vm.VMA{Start: tData, End: tData + tDataSize, Prot: vm.ProtRead | vm.ProtWrite}))
	must(mm.Map(vm.VMA{Start: tStackTop - 0x100000, End: tStackTop, Prot: vm.ProtRead | vm.ProtWrite}))
	var ret [8]byte
	binary.LittleEndian.PutUint64(ret[:], tSentinel)
	must(mm.Poke(ret[:], tStackTop-8))
	c := NewCPU(mm)
	c.SetPC(tCode)
	c.SetSP(tStackTop - 8)
	return c
}

// runTest runs until an exit other than budget and returns it.
func runTest(t testing.TB, c *CPU) vm.Exit {
	t.Helper()
	for i := 0; i < 1000; i++ {
		e := c.Run(1 << 20)
		if e.Reason != vm.ExitBudget {
			return e
		}
	}
	t.Fatal("program did not finish")
	return vm.Exit{}
}

// runToEnd runs the code and requires it to end at the breakpoint after
// the code (or the sentinel).
func runToEnd(t testing.TB, c *CPU, codeLen int) {
	t.Helper()
	e := runTest(t, c)
	if e.Reason != vm.ExitBreakpoint || (e.PC != tSentinel && e.PC != tCode+uint64(codeLen)) {
		t.Fatalf("exit %v at %#x (%s) why=%q", e.Reason, e.PC, c.Disasm(e.PC), e.Why)
	}
}

func runCode(t testing.TB, code string) *CPU {
	t.Helper()
	b := h(code)
	c := newTestCPU(t, b, false)
	runToEnd(t, c, len(b))
	return c
}

func checkReg(t *testing.T, c *CPU, name string, i int, want uint64) {
	t.Helper()
	if got := c.Reg(i); got != want {
		t.Errorf("%s = %#x, want %#x", name, got, want)
	}
}

func checkFlags(t *testing.T, c *CPU, mask, want uint64) {
	t.Helper()
	if got := c.RFLAGS() & mask; got != want {
		t.Errorf("flags&%#x = %#x, want %#x (rflags %#x)", mask, got, want, c.RFLAGS())
	}
}

// fibCode is recursive fib(rdi) returning rax:
//
//	fib: cmp rdi,1; jbe 1f; push rbx; push rdi; lea rdi,[rdi-1]; call fib
//	     mov rbx,rax; pop rdi; push rdi; lea rdi,[rdi-2]; call fib
//	     add rax,rbx; pop rdi; pop rbx; ret
//	1:   mov rax,rdi; ret
const fibCode = "4883ff01761f5357488d7fffe8efffffff4889c35f57488d7ffee8e1ffffff4801d85f5bc34889f8c3"

func TestFib(t *testing.T) {
	c := newTestCPU(t, h(fibCode), false)
	c.SetReg(7, 20)
	runToEnd(t, c, len(fibCode)/2)
	checkReg(t, c, "rax", 0, 6765)
	if c.Retired() < 100000 {
		t.Errorf("retired %d", c.Retired())
	}
}

func TestFlagsEdgeCases(t *testing.T) {
	// stc; mov eax,-1; inc eax: CF kept, ZF AF PF set.
	c := runCode(t, "f9b8ffffffffffc0")
	checkReg(t, c, "rax", 0, 0)
	checkFlags(t, c, statusMask, rfCF|rfZF|rfAF|rfPF)
	// mov eax,0x80000000; neg eax: CF=OF=1.
	c = runCode(t, "b800000080f7d8")
	checkReg(t, c, "rax", 0, 0x80000000)
	checkFlags(t, c, rfCF|rfOF|rfSF|rfZF, rfCF|rfOF|rfSF)
	// mov eax,0x10000; imul eax,eax: overflow.
	c = runCode(t, "b8000001000fafc0")
	checkReg(t, c, "rax", 0, 0)
	checkFlags(t, c, rfCF|rfOF, rfCF|rfOF)
	// mov al,0x80; shl al,1: CF=OF=1, ZF=1.
	c = runCode(t, "b080d0e0")
	checkFlags(t, c, rfCF|rfOF|rfZF|rfSF, rfCF|rfOF|rfZF)
	// stc; adc al,0xff with al=0: 0+0xff+1 = 0x100: CF, ZF, AF.
	c = runCode(t, "31c0f914ff")
	checkReg(t, c, "rax", 0, 0)
	checkFlags(t, c, statusMask, rfCF|rfZF|rfAF|rfPF)
	// mov al,3; add al,0: PF (two bits set).
	c = runCode(t, "b0030400")
	checkFlags(t, c, rfPF|rfZF, rfPF)
}

func TestRegisterWidths(t *testing.T) {
	// mov rax,-1; mov eax,1: 32-bit writes zero-extend.
	c := runCode(t, "48c7c0ffffffffb801000000")
	checkReg(t, c, "rax", 0, 1)
	// movabs rax,0x1122334455667788; mov ah,0xab; movzx ecx,ah; mov bh,ah
	c = runCode(t, "48b88877665544332211b4ab0fb6cc88e7")
	checkReg(t, c, "rax", 0, 0x112233445566ab88)
	checkReg(t, c, "rcx", 1, 0xab)
	if c.Reg(3)>>8&0xff != 0xab {
		t.Errorf("bh = %#x", c.Reg(3)>>8&0xff)
	}
}

func TestExits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   string
		reason vm.ExitReason
		off    uint64 // PC offset of the exit
	}{
		{"div0", "b900000000f7f1", vm.ExitDivide, 5},
		{"idiv32 overflow", "48c7c00000000048ba0000008000000000b9fffffffff7f9", vm.ExitDivide, 22},
		{"idiv64 overflow", "48b80000000000000080489948c7c1ffffffff48f7f9", vm.ExitDivide, 19},
		{"int3", "90cc", vm.ExitBreakpoint, 1},
		{"ud2", "900f0b", vm.ExitUndefined, 1},
		{"hlt", "f4", vm.ExitPrivileged, 0},
		{"int80", "cd80", vm.ExitPrivileged, 0},
		{"syscall", "b83c0000000f05", vm.ExitSyscall, 7},
		{"fault", "488b042508000000", vm.ExitFault, 0},
		{"bad lock", "f001c2", vm.ExitUndefined, 0},
		{"no avx", "c5f877", vm.ExitUndefined, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := h(tc.code)
			c := newTestCPU(t, b, false)
			regs := *c.Regs()
			e := runTest(t, c)
			if e.Reason != tc.reason || e.PC != tCode+tc.off {
				t.Fatalf("exit %v at %#x, want %v at %#x (%s)", e.Reason, e.PC, tc.reason, tCode+tc.off, e.Why)
			}
			switch tc.reason {
			case vm.ExitUndefined:
				if e.RawLen == 0 || e.Why == "" {
					t.Errorf("raw %d why %q", e.RawLen, e.Why)
				}
			case vm.ExitSyscall:
				checkReg(t, c, "rcx", 1, tCode+7)
				checkReg(t, c, "rax", 0, 60)
				if c.Reg(11)&0x202 != 0x202 {
					t.Errorf("r11 = %#x", c.Reg(11))
				}
			case vm.ExitFault:
				if e.Fault.Addr != 8 || e.Fault.Access != vm.AccessRead {
					t.Errorf("fault %+v", e.Fault)
				}
				if *c.Regs() != regs {
					t.Errorf("registers changed by a faulting instruction")
				}
			}
		})
	}
}

func TestPreciseFaults(t *testing.T) {
	// push rax with an unmapped stack: RSP unchanged.
	c := newTestCPU(t, h("50"), false)
	c.SetSP(0x1000)
	e := runTest(t, c)
	if e.Reason != vm.ExitFault || c.SP() != 0x1000 || e.PC != tCode {
		t.Fatalf("exit %v pc %#x sp %#x", e.Reason, e.PC, c.SP())
	}
	// add [rdi], eax on a read-only page: no flag or memory change.
	c = newTestCPU(t, h("0107"), false)
	c.SetReg(7, tCode)
	before := c.RFLAGS()
	e = runTest(t, c)
	if e.Reason != vm.ExitFault || e.Fault.Access != vm.AccessWrite || c.RFLAGS() != before {
		t.Fatalf("exit %v %+v", e.Reason, e.Fault)
	}
}

// TestCallIndirectRegister: call *%reg (the loop reads the register
// directly) and call *[mem] (the operand read), and a push fault that
// leaves RSP and RIP at the call.
func TestCallIndirectRegister(t *testing.T) {
	// mov eax, tSentinel; call rax
	c := newTestCPU(t, h("b800005000ffd0"), false)
	e := runTest(t, c)
	if e.Reason != vm.ExitBreakpoint || e.PC != tSentinel || c.SP() != tStackTop-16 {
		t.Fatalf("call rax: exit %v pc %#x sp %#x", e.Reason, e.PC, c.SP())
	}
	var b [8]byte
	if err := c.MM().Peek(b[:], tStackTop-16); err != nil || binary.LittleEndian.Uint64(b[:]) != tCode+7 {
		t.Fatalf("return address %x (%v)", b, err)
	}
	// mov r9, tSentinel; call r9 with an unmapped stack: precise fault.
	c = newTestCPU(t, h("49c7c100005000"+"41ffd1"), false)
	c.SetSP(0x1000)
	e = runTest(t, c)
	if e.Reason != vm.ExitFault || e.PC != tCode+7 || c.SP() != 0x1000 {
		t.Fatalf("call r9, bad stack: exit %v pc %#x sp %#x", e.Reason, e.PC, c.SP())
	}
	// call [rdi] with rdi pointing at tSentinel's address.
	c = newTestCPU(t, h("ff17"), false)
	binary.LittleEndian.PutUint64(b[:], tSentinel)
	if err := c.MM().Poke(b[:], tData); err != nil {
		t.Fatal(err)
	}
	c.SetReg(7, tData)
	e = runTest(t, c)
	if e.Reason != vm.ExitBreakpoint || e.PC != tSentinel || c.SP() != tStackTop-16 {
		t.Fatalf("call [rdi]: exit %v pc %#x sp %#x", e.Reason, e.PC, c.SP())
	}
}

func TestStep(t *testing.T) {
	c := newTestCPU(t, h("b801000000bb02000000b903000000"), false)
	for i, want := range []uint64{tCode + 5, tCode + 10, tCode + 15} {
		e := c.Step()
		if e.Reason != vm.ExitStep || e.PC != want {
			t.Fatalf("step %d: %v %#x", i, e.Reason, e.PC)
		}
	}
	checkReg(t, c, "rcx", 1, 3)
	if c.Retired() != 3 {
		t.Errorf("retired %d", c.Retired())
	}
}

func TestInterrupt(t *testing.T) {
	// An endless loop: jmp $.
	c := newTestCPU(t, h("ebfe"), false)
	done := make(chan vm.Exit)
	go func() { done <- c.Run(1 << 62) }()
	c.Interrupt()
	e := <-done
	if e.Reason != vm.ExitBudget || e.PC != tCode {
		t.Fatalf("exit %v at %#x", e.Reason, e.PC)
	}
}

func TestSelfModifyingCode(t *testing.T) {
	// xor ecx,ecx; 1: mov eax,imm(=1); inc ecx; cmp ecx,2; je 2f
	// mov byte ptr [imm],5; jmp 1b; 2: nop
	b := h("31c9b801000000ffc183f9027409c605eeffffff05ebeb90")
	c := newTestCPU(t, b, true)
	runToEnd(t, c, len(b))
	checkReg(t, c, "rax", 0, 5)
}

func TestPageCrossingInstruction(t *testing.T) {
	// Place "mov eax, 0x11223344" across a page boundary, run it, patch
	// its immediate in the second page with Poke (as a debugger would),
	// and run it again.
	code := make([]byte, 4096+16)
	for i := range code {
		code[i] = 0x90
	}
	at := 4096 - 2
	copy(code[at:], h("b844332211")) // mov eax, 0x11223344
	copy(code[at+5:], h("cc"))
	c := newTestCPU(t, code, false)
	c.SetPC(tCode + uint64(at))
	e := runTest(t, c)
	if e.Reason != vm.ExitBreakpoint {
		t.Fatalf("exit %v %s", e.Reason, e.Why)
	}
	checkReg(t, c, "rax", 0, 0x11223344)
	if err := c.MM().Poke([]byte{0x99}, tCode+4096+2); err != nil {
		t.Fatal(err)
	}
	c.SetPC(tCode + uint64(at))
	runTest(t, c)
	checkReg(t, c, "rax", 0, 0x99223344)
}

func TestStrings(t *testing.T) {
	// strlen with lodsb: mov rsi,rdi; 1: lodsb; test al,al; jnz 1b; sub rsi,rdi; dec rsi
	c := newTestCPU(t, h("4889feac84c075fb4829fe48ffce"), false)
	_ = c.MM().Poke([]byte("hello, world\x00"), tData)
	c.SetReg(7, tData)
	runToEnd(t, c, 14)
	checkReg(t, c, "rsi", 6, 12)
	// strlen with repne scasb: xor eax,eax; mov rcx,-1; repne scasb; not rcx; dec rcx
	c = newTestCPU(t, h("31c048c7c1fffffffff2ae48f7d148ffc9"), false)
	_ = c.MM().Poke([]byte("hello, world\x00"), tData)
	c.SetReg(7, tData)
	runToEnd(t, c, 17)
	checkReg(t, c, "rcx", 1, 12)
	// rep stosq then rep movsb across a page boundary.
	// mov rdi,rdx; mov rcx,1000; mov rax,0x0102030405060708; rep stosq
	// mov rsi,rdx; lea rdi,[rdx+0x4000]; mov ecx,8000; rep movsb
	b := h("4889d748c7c1e803000048b80807060504030201f348ab4889d6488dba00400000b9401f0000f3a4")
	c = newTestCPU(t, b, false)
	c.SetReg(2, tData)
	runToEnd(t, c, len(b))
	buf := make([]byte, 8000)
	_ = c.MM().Peek(buf, tData+0x4000)
	for i := range buf {
		if buf[i] != byte(8-i%8) {
			t.Fatalf("byte %d = %d", i, buf[i])
		}
	}
	checkReg(t, c, "rcx", 1, 0)
	checkReg(t, c, "rsi", 6, tData+8000)
}

func TestLockedConcurrency(t *testing.T) {
	// mov ecx,N; 1: lock inc qword [rdi]; lock xadd dword [rdi+9],eax(=1)
	// (a misaligned split-lock operand); lock bts/btr; dec ecx; jnz 1b
	// Generated with GNU as:
	//   mov ecx, 20000
	//   1: lock inc qword ptr [rdi]; mov eax, 1; lock xadd dword ptr [rdi+9], eax
	//   lock add word ptr [rdi+16], 3; dec ecx; jnz 1b
	b := h("b9204e0000f048ff07b801000000f00fc1470966f083471003ffc975e8")
	const threads, iters = 4, 20000
	mm := newTestCPU(t, b, false).MM()
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		c := NewCPU(mm)
		c.SetPC(tCode)
		c.SetSP(tStackTop - 8)
		c.SetReg(7, tData)
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := runTest(t, c)
			if e.Reason != vm.ExitBreakpoint {
				t.Errorf("exit %v %s", e.Reason, e.Why)
			}
		}()
	}
	wg.Wait()
	buf := make([]byte, 24)
	_ = mm.Peek(buf, tData)
	if got := binary.LittleEndian.Uint64(buf); got != threads*iters {
		t.Errorf("lock inc: %d", got)
	}
	if got := binary.LittleEndian.Uint32(buf[9:]); got != threads*iters {
		t.Errorf("lock xadd (split): %d", got)
	}
	if got := binary.LittleEndian.Uint16(buf[16:]); got != uint16((threads*iters*3)&0xFFFF) {
		t.Errorf("lock add word: %d", got)
	}
}

func TestCPUID(t *testing.T) {
	// xor eax,eax; cpuid
	c := runCode(t, "31c00fa2")
	var v [12]byte
	binary.LittleEndian.PutUint32(v[0:], uint32(c.Reg(3)))
	binary.LittleEndian.PutUint32(v[4:], uint32(c.Reg(2)))
	binary.LittleEndian.PutUint32(v[8:], uint32(c.Reg(1)))
	if string(v[:]) != "GenuineIntel" || c.Reg(0) != cpuidMaxBasic {
		t.Errorf("vendor %q max %d", v, c.Reg(0))
	}
	// mov eax,1; cpuid
	c = runCode(t, "b8010000000fa2")
	if c.Reg(2) != HWCAP() || c.Reg(2)&(cpuidSSE2|cpuidSSE) != cpuidSSE2|cpuidSSE {
		t.Errorf("edx %#x", c.Reg(2))
	}
	if c.Reg(1)&(1<<28) != 0 { // AVX
		t.Errorf("ecx %#x advertises AVX", c.Reg(1))
	}
}

func TestRDTSC(t *testing.T) {
	// rdtsc; mov rbx,rax; rdtsc  → second value larger.
	c := runCode(t, "0f314889c30f31")
	if c.Reg(0) <= c.Reg(3) {
		t.Errorf("tsc %d then %d", c.Reg(3), c.Reg(0))
	}
}

// TestNoAllocs guards the hot loop: running guest code allocates nothing.
func TestNoAllocs(t *testing.T) {
	c := newTestCPU(t, h(fibCode), false)
	run := func() {
		c.SetPC(tCode)
		c.SetSP(tStackTop - 8)
		c.SetReg(7, 15)
		if e := c.Run(1 << 30); e.Reason != vm.ExitBreakpoint {
			t.Fatalf("exit %v", e.Reason)
		}
	}
	run() // decode and warm up
	if a := testing.AllocsPerRun(10, run); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}

func BenchmarkFib(b *testing.B) {
	c := newTestCPU(b, h(fibCode), false)
	var insns uint64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.SetPC(tCode)
		c.SetSP(tStackTop - 8)
		c.SetReg(7, 25)
		start := c.Retired()
		if e := c.Run(1 << 40); e.Reason != vm.ExitBreakpoint {
			b.Fatalf("exit %v", e.Reason)
		}
		insns += c.Retired() - start
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds())
	b.ReportMetric(ns/float64(insns), "ns/insn")
	b.ReportMetric(float64(insns)/ns*1e3, "MIPS")
}

func TestTraceLineAndClone(t *testing.T) {
	c := newTestCPU(t, h("90"), false)
	for i := 0; i < 16; i++ {
		c.SetReg(i, uint64(i)*0x11)
	}
	c.SetRFLAGS(0x202 | rfCF | rfZF | rfDF | rfTF)
	want := "pc=400000 rax=0 rbx=33 rcx=11 rdx=22 rsi=66 rdi=77 rbp=55 rsp=44 r8=88 r9=99 r10=aa r11=bb r12=cc r13=dd r14=ee r15=ff flags=441"
	if got := c.TraceLine(); got != want {
		t.Errorf("TraceLine:\n got %s\nwant %s", got, want)
	}
	c.SetTLS(0x1234)
	n := c.Clone(c.MM()).(*CPU)
	if n.TraceLine() != want || n.TLS() != 0x1234 || n.Retired() != 0 || n.TLB() == c.TLB() || n.code != c.code {
		t.Errorf("clone differs: %s", n.TraceLine())
	}
	if got := c.Disasm(tCode); got != "nop" {
		t.Errorf("Disasm = %q", got)
	}
	r := c.Regs()
	r.RFLAGS = 0x202
	c.SetRFLAGS(r.RFLAGS)
	if c.RFLAGS() != 0x202 {
		t.Errorf("RFLAGS %#x", c.RFLAGS())
	}
}
