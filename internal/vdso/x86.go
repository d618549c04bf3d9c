package vdso

import (
	"encoding/binary"
	"fmt"
)

// The x86-64 functions, SysV ABI: arguments in rdi, rsi, rdx; they use
// only the caller-saved rax, rcx, rdx, r8–r11 (the syscall fallback also
// clobbers rcx and r11, as the instruction does) and the 8 bytes of their
// own return address on the stack.

// x86-64 registers by encoding number.
const (
	rax = 0
	rcx = 1
	rdx = 2
	rsi = 6
	rdi = 7
	r8  = 8
	r9  = 9
	r10 = 10
	r11 = 11
)

// Linux x86-64 syscall numbers of the fallbacks.
const (
	x86SysGettimeofday = 96
	x86SysTime         = 201
	x86SysClockGettime = 228
	x86SysClockGetres  = 229
)

var x86Reg64 = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
var x86Reg32 = [16]string{"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"}

// rexFor is the REX prefix for operand width w, ModRM.reg reg and
// ModRM.rm rm (nil when none is needed).
func rexFor(w bool, reg, rm int) []byte {
	b := byte(0x40)
	if w {
		b |= 8
	}
	if reg&8 != 0 {
		b |= 4
	}
	if rm&8 != 0 {
		b |= 1
	}
	if b == 0x40 {
		return nil
	}
	return []byte{b}
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// regReg emits op with ModRM register-direct (mod 11).
func (a *asm) regReg(text string, w bool, op []byte, reg, rm int) {
	a.emit(text, cat(rexFor(w, reg, rm), op, []byte{0xC0 | byte(reg&7)<<3 | byte(rm&7)})...)
}

// regMem emits op with a [base+disp8] memory operand.
func (a *asm) regMem(text string, w bool, op []byte, reg, base int, disp int8) {
	var modrm []byte
	mod := byte(0x40)
	if disp == 0 && base&7 != 5 {
		mod = 0
	}
	modrm = append(modrm, mod|byte(reg&7)<<3|byte(base&7))
	if base&7 == 4 {
		modrm = append(modrm, 0x24) // SIB: base only
	}
	if mod == 0x40 {
		modrm = append(modrm, byte(disp))
	}
	a.emit(text, cat(rexFor(w, reg, base), op, modrm)...)
}

func memText(base int, disp int8) string {
	switch {
	case disp == 0:
		return fmt.Sprintf("[%s]", x86Reg64[base])
	case disp < 0:
		return fmt.Sprintf("[%s-%#x]", x86Reg64[base], -int(disp))
	}
	return fmt.Sprintf("[%s+%#x]", x86Reg64[base], disp)
}

func (a *asm) movImm32(r int, v uint32) {
	a.emit(fmt.Sprintf("mov %s, %#x", x86Reg32[r], v), cat(rexFor(false, 0, r), []byte{0xB8 + byte(r&7)}, le32(v))...)
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// jcc emits a conditional near branch (0F 8x rel32) to label.
func (a *asm) jcc(mn string, cc byte, label string) {
	at := a.emit(mn+" {"+label+"}", 0x0F, 0x80|cc, 0, 0, 0, 0)
	a.fixups = append(a.fixups, fixup{insn: at, label: label, patch: func(code []byte, insn, target int) error {
		binary.LittleEndian.PutUint32(code[insn+2:], uint32(int32(target-(insn+6))))
		return nil
	}})
}

func (a *asm) jmp(label string) {
	at := a.emit("jmp {"+label+"}", 0xE9, 0, 0, 0, 0)
	a.fixups = append(a.fixups, fixup{insn: at, label: label, patch: func(code []byte, insn, target int) error {
		binary.LittleEndian.PutUint32(code[insn+1:], uint32(int32(target-(insn+5))))
		return nil
	}})
}

// Condition codes.
const (
	ccB  = 0x2 // below / carry
	ccAE = 0x3 // above or equal / no carry
	ccE  = 0x4
	ccNE = 0x5
	ccA  = 0x7
)

// leaVvar emits lea r, [rip+disp32] with the displacement to the data page.
func (a *asm) leaVvar(r int) {
	at := a.emit(fmt.Sprintf("lea %s, ptr [rip{vvar}]", x86Reg64[r]), cat(rexFor(true, r, 0), []byte{0x8D, byte(r&7)<<3 | 5}, le32(0))...)
	a.vvar = append(a.vvar, vvarRef{at: at, patch: func(code []byte, at int, pc, target int64) error {
		binary.LittleEndian.PutUint32(code[at+3:], uint32(int32(target-(pc+7))))
		return nil
	}})
}

// x86ReadNs emits the clock read: rax = the nanoseconds of the clock
// whose base is at vvar offset r8, under the sequence count. Clobbers rax,
// rcx, rdx, r9, r10, r11.
func (a *asm) x86ReadNs(fn string) {
	a.leaVvar(r9)
	a.label("retry")
	a.regMem("mov r10d, dword ptr "+memText(r9, VvarSeq), false, []byte{0x8B}, r10, r9, VvarSeq)
	a.emit("test r10d, 0x1", 0x41, 0xF7, 0xC2, 1, 0, 0, 0)
	a.jcc("jnz", ccNE, "spin")
	at := a.emit("rdtsc", 0x0F, 0x31)
	a.counter = append(a.counter, uint64(at))
	a.emit("shl rdx, 0x20", 0x48, 0xC1, 0xE2, 0x20)
	a.regReg("or rax, rdx", true, []byte{0x09}, rdx, rax)
	a.regMem("sub rax, qword ptr "+memText(r9, VvarCycleLast), true, []byte{0x2B}, rax, r9, VvarCycleLast)
	a.regMem("mov ecx, dword ptr "+memText(r9, VvarMult), false, []byte{0x8B}, rcx, r9, VvarMult)
	a.regReg("imul rax, rcx", true, []byte{0x0F, 0xAF}, rax, rcx)
	a.regMem("mov ecx, dword ptr "+memText(r9, VvarShift), false, []byte{0x8B}, rcx, r9, VvarShift)
	a.emit("shr rax, cl", 0x48, 0xD3, 0xE8)
	a.regReg("mov r11, r9", true, []byte{0x89}, r9, r11)
	a.regReg("add r11, r8", true, []byte{0x01}, r8, r11)
	a.regMem("add rax, qword ptr "+memText(r11, 0), true, []byte{0x03}, rax, r11, 0)
	a.regMem("cmp r10d, dword ptr "+memText(r9, VvarSeq), false, []byte{0x3B}, r10, r9, VvarSeq)
	a.jcc("jnz", ccNE, "retry")
}

// x86SecNsec divides rax (ns) into rax = seconds, rdx = nanoseconds.
func (a *asm) x86SecNsec() {
	a.regReg("xor edx, edx", false, []byte{0x31}, rdx, rdx)
	a.movImm32(rcx, 1_000_000_000)
	a.regReg("div rcx", true, []byte{0xF7}, 6, rcx)
}

// x86Spin is the wait while an update is in progress.
func (a *asm) x86Spin() {
	a.label("spin")
	a.emit("pause", 0xF3, 0x90)
	a.jmp("retry")
}

func (a *asm) x86Fallback(nr uint32) {
	a.label("fallback")
	a.movImm32(rax, nr)
	a.emit("syscall", 0x0F, 0x05)
	a.emit("ret", 0xC3)
}

// x86ClassifyClock branches on edi: to hit when in set a, to miss when in
// neither set, falling through when in set b.
func (a *asm) x86ClockSet(set uint32, label string, jumpIf byte) {
	a.movImm32(rax, set)
	a.regReg("bt eax, edi", false, []byte{0x0F, 0xA3}, rdi, rax)
	mn := "jb"
	if jumpIf == ccAE {
		mn = "jnb"
	}
	a.jcc(mn, jumpIf, label)
}

func x86ClockGettime() funcCode {
	a := newAsm()
	a.emit("cmp edi, 0x7", 0x83, 0xFF, maxClock)
	a.jcc("jnbe", ccA, "fallback")
	a.x86ClockSet(monoClocks, "mono", ccB)
	a.x86ClockSet(realClocks, "fallback", ccAE)
	a.movImm32(r8, VvarRealBase)
	a.jmp("read")
	a.label("mono")
	a.movImm32(r8, VvarMonoBase)
	a.label("read")
	a.x86ReadNs("clock_gettime")
	a.x86SecNsec()
	a.regMem("mov qword ptr "+memText(rsi, 0)+", rax", true, []byte{0x89}, rax, rsi, 0)
	a.regMem("mov qword ptr "+memText(rsi, 8)+", rdx", true, []byte{0x89}, rdx, rsi, 8)
	a.regReg("xor eax, eax", false, []byte{0x31}, rax, rax)
	a.emit("ret", 0xC3)
	a.x86Spin()
	a.x86Fallback(x86SysClockGettime)
	return a.finish("__vdso_clock_gettime", "clock_gettime")
}

func x86Gettimeofday() funcCode {
	a := newAsm()
	a.regReg("test rdi, rdi", true, []byte{0x85}, rdi, rdi)
	a.jcc("jz", ccE, "tz")
	a.movImm32(r8, VvarRealBase)
	a.x86ReadNs("gettimeofday")
	a.x86SecNsec()
	a.regMem("mov qword ptr "+memText(rdi, 0)+", rax", true, []byte{0x89}, rax, rdi, 0)
	a.regReg("mov rax, rdx", true, []byte{0x89}, rdx, rax)
	a.regReg("xor edx, edx", false, []byte{0x31}, rdx, rdx)
	a.movImm32(rcx, 1000)
	a.regReg("div rcx", true, []byte{0xF7}, 6, rcx)
	a.regMem("mov qword ptr "+memText(rdi, 8)+", rax", true, []byte{0x89}, rax, rdi, 8)
	a.label("tz")
	a.regReg("test rsi, rsi", true, []byte{0x85}, rsi, rsi)
	a.jcc("jz", ccE, "done")
	// struct timezone: uvm's sys_tz is {0, 0}.
	a.regReg("xor eax, eax", false, []byte{0x31}, rax, rax)
	a.regMem("mov dword ptr "+memText(rsi, 0)+", eax", false, []byte{0x89}, rax, rsi, 0)
	a.regMem("mov dword ptr "+memText(rsi, 4)+", eax", false, []byte{0x89}, rax, rsi, 4)
	a.label("done")
	a.regReg("xor eax, eax", false, []byte{0x31}, rax, rax)
	a.emit("ret", 0xC3)
	a.x86Spin()
	return a.finish("__vdso_gettimeofday", "gettimeofday")
}

func x86Time() funcCode {
	a := newAsm()
	a.movImm32(r8, VvarRealBase)
	a.x86ReadNs("time")
	a.x86SecNsec()
	a.regReg("test rdi, rdi", true, []byte{0x85}, rdi, rdi)
	a.jcc("jz", ccE, "done")
	a.regMem("mov qword ptr "+memText(rdi, 0)+", rax", true, []byte{0x89}, rax, rdi, 0)
	a.label("done")
	a.emit("ret", 0xC3)
	a.x86Spin()
	return a.finish("__vdso_time", "time")
}

func x86ClockGetres() funcCode {
	a := newAsm()
	a.emit("cmp edi, 0x7", 0x83, 0xFF, maxClock)
	a.jcc("jnbe", ccA, "fallback")
	a.x86ClockSet(hresClocks, "hres", ccB)
	a.x86ClockSet(coarseClocks, "fallback", ccAE)
	a.movImm32(rax, CoarseNs)
	a.jmp("store")
	a.label("hres")
	a.movImm32(rax, HresNs)
	a.label("store")
	a.regReg("test rsi, rsi", true, []byte{0x85}, rsi, rsi)
	a.jcc("jz", ccE, "done")
	a.regReg("xor edx, edx", false, []byte{0x31}, rdx, rdx)
	a.regMem("mov qword ptr "+memText(rsi, 0)+", rdx", true, []byte{0x89}, rdx, rsi, 0)
	a.regMem("mov qword ptr "+memText(rsi, 8)+", rax", true, []byte{0x89}, rax, rsi, 8)
	a.label("done")
	a.regReg("xor eax, eax", false, []byte{0x31}, rax, rax)
	a.emit("ret", 0xC3)
	a.x86Fallback(x86SysClockGetres)
	return a.finish("__vdso_clock_getres", "clock_getres")
}

// x86Getcpu is getcpu(cpu *unsigned, node *unsigned, cache): the CPU and
// node of the calling thread from IA32_TSC_AUX, which the kernel loads
// with node << 12 | cpu (Linux's vdso_read_cpunode with RDPID; uvm's CPU
// executes RDPID whatever the --cpu model advertises).
func x86Getcpu() funcCode {
	a := newAsm()
	a.emit("rdpid rax", 0xF3, 0x0F, 0xC7, 0xF8)
	a.regReg("test rdi, rdi", true, []byte{0x85}, rdi, rdi)
	a.jcc("jz", ccE, "node")
	a.regReg("mov edx, eax", false, []byte{0x89}, rax, rdx)
	a.emit("and edx, 0xfff", 0x81, 0xE2, 0xFF, 0x0F, 0x00, 0x00)
	a.regMem("mov dword ptr "+memText(rdi, 0)+", edx", false, []byte{0x89}, rdx, rdi, 0)
	a.label("node")
	a.regReg("test rsi, rsi", true, []byte{0x85}, rsi, rsi)
	a.jcc("jz", ccE, "done")
	a.emit("shr eax, 0xc", 0xC1, 0xE8, 0x0C)
	a.regMem("mov dword ptr "+memText(rsi, 0)+", eax", false, []byte{0x89}, rax, rsi, 0)
	a.label("done")
	a.regReg("xor eax, eax", false, []byte{0x31}, rax, rax)
	a.emit("ret", 0xC3)
	return a.finish("__vdso_getcpu", "getcpu")
}

func x86Funcs() []funcCode {
	return []funcCode{x86ClockGettime(), x86Gettimeofday(), x86Time(), x86Getcpu(), x86ClockGetres()}
}
