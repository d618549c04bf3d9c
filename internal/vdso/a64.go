package vdso

import (
	"encoding/binary"
	"fmt"
)

// The arm64 functions, AAPCS64: arguments in x0, x1; they use only the
// caller-saved x0–x15 (and x8 for the syscall number of the fallback), no
// stack, and return with x30 untouched. Go's runtime relies on x19–x28
// (R20–R22, g) surviving the call.

// Linux arm64 syscall numbers of the fallbacks and the signal return.
const (
	a64SysClockGettime = 113
	a64SysClockGetres  = 114
	a64SysGettimeofday = 169
	a64SysRtSigreturn  = 139
)

// w emits one A64 instruction word.
func (a *asm) w(text string, word uint32) int {
	return a.emit(text, binary.LittleEndian.AppendUint32(nil, word)...)
}

func xr(r int) string {
	if r == 31 {
		return "xzr"
	}
	return fmt.Sprintf("x%d", r)
}

func wr(r int) string {
	if r == 31 {
		return "wzr"
	}
	return fmt.Sprintf("w%d", r)
}

// movz emits movz xd/wd, #imm16, lsl #16*hw.
func (a *asm) movz(sf bool, rd int, imm uint16, hw int) {
	op, name := uint32(0x52800000), wr(rd)
	if sf {
		op, name = 0xD2800000, xr(rd)
	}
	text := fmt.Sprintf("mov %s, #%#x", name, uint64(imm)<<(16*hw))
	if imm == 0 {
		text = fmt.Sprintf("mov %s, #0x0", name)
	}
	a.w(text, op|uint32(hw)<<21|uint32(imm)<<5|uint32(rd))
}

func (a *asm) movk(rd int, imm uint16, hw int) {
	a.w(fmt.Sprintf("movk %s, #%#x, lsl #%d", xr(rd), imm, 16*hw), 0xF2800000|uint32(hw)<<21|uint32(imm)<<5|uint32(rd))
}

// bcond emits b.cond label.
func (a *asm) bcond(cond string, cc uint32, label string) {
	at := a.w("b."+cond+" {"+label+"}", 0x54000000|cc)
	a.fixups = append(a.fixups, fixup{insn: at, label: label, patch: func(code []byte, insn, target int) error {
		return patchImm(code, insn, target, 19, 5)
	}})
}

func (a *asm) b(label string) {
	at := a.w("b {"+label+"}", 0x14000000)
	a.fixups = append(a.fixups, fixup{insn: at, label: label, patch: func(code []byte, insn, target int) error {
		return patchImm(code, insn, target, 26, 0)
	}})
}

// tbz emits tbz/tbnz wt, #bit, label.
func (a *asm) tbz(nz bool, rt, bit int, label string) {
	op, mn := uint32(0x36000000), "tbz"
	if nz {
		op, mn = 0x37000000, "tbnz"
	}
	at := a.w(fmt.Sprintf("%s %s, #%d, {%s}", mn, wr(rt), bit, label), op|uint32(bit&31)<<19|uint32(rt))
	a.fixups = append(a.fixups, fixup{insn: at, label: label, patch: func(code []byte, insn, target int) error {
		return patchImm(code, insn, target, 14, 5)
	}})
}

func (a *asm) cbz(rt int, label string) {
	at := a.w(fmt.Sprintf("cbz %s, {%s}", xr(rt), label), 0xB4000000|uint32(rt))
	a.fixups = append(a.fixups, fixup{insn: at, label: label, patch: func(code []byte, insn, target int) error {
		return patchImm(code, insn, target, 19, 5)
	}})
}

// patchImm writes the word offset target-insn into a bits-wide field at
// shift of the instruction word at insn.
func patchImm(code []byte, insn, target, bits, shift int) error {
	d := (target - insn) / 4
	if d < -(1<<(bits-1)) || d >= 1<<(bits-1) {
		return fmt.Errorf("offset %d out of range", d)
	}
	word := binary.LittleEndian.Uint32(code[insn:])
	word |= uint32(d) & (1<<bits - 1) << shift
	binary.LittleEndian.PutUint32(code[insn:], word)
	return nil
}

// adrVvar emits adr xd, <data page>.
func (a *asm) adrVvar(rd int) {
	at := a.w(fmt.Sprintf("adr %s, {vvar}", xr(rd)), 0x10000000|uint32(rd))
	a.vvar = append(a.vvar, vvarRef{at: at, patch: func(code []byte, at int, pc, target int64) error {
		d := target - pc
		if d < -(1<<20) || d >= 1<<20 {
			return fmt.Errorf("adr offset %d out of range", d)
		}
		word := binary.LittleEndian.Uint32(code[at:])
		word |= uint32(d&3)<<29 | uint32(d>>2)&(1<<19-1)<<5
		binary.LittleEndian.PutUint32(code[at:], word)
		return nil
	}})
}

// ldrImm emits ldr wt/xt, [xn, #off] (unsigned scaled offset).
func (a *asm) ldrImm(sf bool, rt, rn, off int) {
	op, scale, name := uint32(0xB9400000), 4, wr(rt)
	if sf {
		op, scale, name = 0xF9400000, 8, xr(rt)
	}
	text := fmt.Sprintf("ldr %s, [%s]", name, xr(rn))
	if off != 0 {
		text = fmt.Sprintf("ldr %s, [%s,#%d]", name, xr(rn), off)
	}
	a.w(text, op|uint32(off/scale)<<10|uint32(rn)<<5|uint32(rt))
}

// rrr emits a three-register data-processing instruction.
func (a *asm) rrr(text string, op uint32, rd, rn, rm int) {
	a.w(text, op|uint32(rm)<<16|uint32(rn)<<5|uint32(rd))
}

// a64ReadNs emits the clock read: x12 = the nanoseconds of the clock whose
// base is at data page offset x10, under the sequence count. Clobbers
// x9, x11–x13.
func (a *asm) a64ReadNs() {
	a.adrVvar(9)
	a.label("retry")
	a.ldrImm(false, 11, 9, VvarSeq)
	a.tbz(true, 11, 0, "spin")
	a.w("dmb ishld", 0xD50339BF)
	// Linux's __arch_get_hw_counter: an ISB so the counter is not read
	// early, then CNTVCT_EL0.
	a.w("isb", 0xD5033FDF)
	at := a.w("mrs x12, cntvct_el0", 0xD53BE040|12)
	a.counter = append(a.counter, uint64(at))
	a.ldrImm(true, 13, 9, VvarCycleLast)
	a.rrr("sub x12, x12, x13", 0xCB000000, 12, 12, 13)
	a.ldrImm(false, 13, 9, VvarMult)
	a.rrr("mul x12, x12, x13", 0x9B007C00, 12, 12, 13)
	a.ldrImm(false, 13, 9, VvarShift)
	a.rrr("lsr x12, x12, x13", 0x9AC02400, 12, 12, 13)
	a.w("ldr x13, [x9,x10]", 0xF8606800|10<<16|9<<5|13)
	a.rrr("add x12, x12, x13", 0x8B000000, 12, 12, 13)
	a.w("dmb ishld", 0xD50339BF)
	a.ldrImm(false, 13, 9, VvarSeq)
	a.w("cmp w11, w13", 0x6B00001F|13<<16|11<<5)
	a.bcond("ne", 1, "retry")
}

// a64SecNsec splits x12 (ns) into x14 = seconds, x15 = nanoseconds.
func (a *asm) a64SecNsec() {
	a.a64Div(14, 15, 12, 1_000_000_000)
}

// a64Div emits q = n / d, r = n % d (x13 holds d).
func (a *asm) a64Div(q, r, n int, d uint32) {
	a.movz(true, 13, uint16(d), 0)
	if d>>16 != 0 {
		a.movk(13, uint16(d>>16), 1)
	}
	a.rrr(fmt.Sprintf("udiv %s, %s, x13", xr(q), xr(n)), 0x9AC00800, q, n, 13)
	a.w(fmt.Sprintf("msub %s, %s, x13, %s", xr(r), xr(q), xr(n)), 0x9B008000|13<<16|uint32(n)<<10|uint32(q)<<5|uint32(r))
}

func (a *asm) a64Spin() {
	a.label("spin")
	a.w("yield", 0xD503203F)
	a.b("retry")
}

func (a *asm) a64Fallback(nr uint16) {
	a.label("fallback")
	a.movz(true, 8, nr, 0)
	a.w("svc #0x0", 0xD4000001)
	a.w("ret", 0xD65F03C0)
}

// a64ClockSet branches on w0: to label when bit w0 of set is (nz) or is
// not (!nz) set. Clobbers w9.
func (a *asm) a64ClockSet(set uint16, nz bool, label string) {
	a.movz(false, 9, set, 0)
	a.rrr("lsr w9, w9, w0", 0x1AC02400, 9, 9, 0)
	a.tbz(nz, 9, 0, label)
}

func a64ClockGettime() funcCode {
	a := newAsm()
	a.w("cmp w0, #0x7", 0x7100001F|maxClock<<10)
	a.bcond("hi", 8, "fallback")
	a.a64ClockSet(monoClocks, true, "mono")
	a.a64ClockSet(realClocks, false, "fallback")
	a.movz(true, 10, VvarRealBase, 0)
	a.b("read")
	a.label("mono")
	a.movz(true, 10, VvarMonoBase, 0)
	a.label("read")
	a.a64ReadNs()
	a.a64SecNsec()
	a.w("stp x14, x15, [x1]", 0xA9000000|15<<10|1<<5|14)
	a.movz(false, 0, 0, 0)
	a.w("ret", 0xD65F03C0)
	a.a64Spin()
	a.a64Fallback(a64SysClockGettime)
	return a.finish("__kernel_clock_gettime")
}

func a64Gettimeofday() funcCode {
	a := newAsm()
	a.cbz(0, "tz")
	a.movz(true, 10, VvarRealBase, 0)
	a.a64ReadNs()
	a.a64SecNsec()
	a.movz(true, 13, 1000, 0)
	a.rrr("udiv x15, x15, x13", 0x9AC00800, 15, 15, 13) // microseconds
	a.w("stp x14, x15, [x0]", 0xA9000000|15<<10|0<<5|14)
	a.label("tz")
	a.cbz(1, "done")
	// struct timezone: uvm's sys_tz is {0, 0}.
	a.w("stp wzr, wzr, [x1]", 0x29000000|31<<10|1<<5|31)
	a.label("done")
	a.movz(false, 0, 0, 0)
	a.w("ret", 0xD65F03C0)
	a.a64Spin()
	return a.finish("__kernel_gettimeofday")
}

func a64ClockGetres() funcCode {
	a := newAsm()
	a.w("cmp w0, #0x7", 0x7100001F|maxClock<<10)
	a.bcond("hi", 8, "fallback")
	a.a64ClockSet(hresClocks, true, "hres")
	a.a64ClockSet(coarseClocks, false, "fallback")
	a.movz(true, 9, uint16(CoarseNs&0xFFFF), 0)
	a.movk(9, uint16(CoarseNs>>16), 1)
	a.b("store")
	a.label("hres")
	a.movz(true, 9, HresNs, 0)
	a.label("store")
	a.cbz(1, "done")
	a.w("stp xzr, x9, [x1]", 0xA9000000|9<<10|1<<5|31)
	a.label("done")
	a.movz(false, 0, 0, 0)
	a.w("ret", 0xD65F03C0)
	a.a64Fallback(a64SysClockGetres)
	return a.finish("__kernel_clock_getres")
}

// a64RtSigreturn is the signal return trampoline. The nop before the
// symbol is Linux's too (arch/arm64/kernel/vdso/sigreturn.S): unwinders
// look one instruction before a return address.
func a64RtSigreturn() (pad, fn funcCode) {
	p := newAsm()
	p.w("nop", 0xD503201F)
	a := newAsm()
	a.movz(true, 8, a64SysRtSigreturn, 0)
	a.w("svc #0x0", 0xD4000001)
	return p.finish(""), a.finish("__kernel_rt_sigreturn")
}

func a64Funcs() []funcCode {
	pad, sig := a64RtSigreturn()
	return []funcCode{pad, sig, a64ClockGettime(), a64Gettimeofday(), a64ClockGetres()}
}
