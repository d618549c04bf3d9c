package uprobes

import (
	"encoding/binary"

	"github.com/uvm-emu/uvm/internal/decode"
)

// x86-64 instruction analysis, emulation and XOL fixups, after
// arch/x86/kernel/uprobes.c (spec §3.3).

// goodInsns64 is good_insns_64: one bit per first opcode byte (OPCODE1:
// for VEX/EVEX/REX2 encodings the opcode byte after the prefix). 0x0F is
// set, as in the kernel (arch/x86/kernel/uprobes.c, checked against
// v6.18.44): uprobe_init_insn tests OPCODE1 first, so every non-VEX
// two-byte opcode passes here and good_2byte_insns is never consulted
// for a 64-bit task — 0F 05 syscall, 0F 0B ud2, 0F AE fences, 0F 38/3A
// (pshufb, crc32…) and the CPL0 two-byte instructions are all accepted.
var goodInsns64 = buildTable([16]uint16{
	//                  0123456789abcdef
	0x00: bits16("1111110011111101"),
	0x01: bits16("1111110011111100"),
	0x02: bits16("1111111011111110"),
	0x03: bits16("1111111011111110"),
	0x04: bits16("1111111111111111"),
	0x05: bits16("1111111111111111"),
	0x06: bits16("0001111111110000"),
	0x07: bits16("1111111111111111"),
	0x08: bits16("1101111111111111"),
	0x09: bits16("1111111111011111"),
	0x0a: bits16("1111111111111111"),
	0x0b: bits16("1111111111111111"),
	0x0c: bits16("1111111111110000"),
	0x0d: bits16("1111000111111111"),
	0x0e: bits16("1111000011010000"),
	0x0f: bits16("1011011111001111"),
})

// goodInsns2 is good_2byte_insns (second byte of 0F xx). The kernel only
// reaches it when OPCODE1 fails good_insns_64, which never happens for
// 0F in 64-bit mode (see goodInsns64); kept for fidelity.
var goodInsns2 = buildTable([16]uint16{
	//                  0123456789abcdef
	0x00: bits16("0011100000101111"),
	0x01: bits16("1111111111111111"),
	0x02: bits16("1111111111111111"),
	0x03: bits16("0111001011111111"),
	0x04: bits16("1111111111111111"),
	0x05: bits16("1111111111111111"),
	0x06: bits16("1111111111111111"),
	0x07: bits16("1111111100111111"),
	0x08: bits16("1111111111111111"),
	0x09: bits16("1111111111111111"),
	0x0a: bits16("1111111111111101"),
	0x0b: bits16("1111111111111111"),
	0x0c: bits16("1111111111111111"),
	0x0d: bits16("1111111111111111"),
	0x0e: bits16("1111111111111111"),
	0x0f: bits16("1111111111111111"),
})

func bits16(s string) uint16 {
	var v uint16
	for i := 0; i < 16; i++ {
		if s[i] == '1' {
			v |= 1 << i
		}
	}
	return v
}

func buildTable(rows [16]uint16) (t [256]bool) {
	for r, v := range rows {
		for c := 0; c < 16; c++ {
			t[r*16+c] = v&(1<<c) != 0
		}
	}
	return t
}

// UPROBE_FIX_* (defparam.fixups).
const (
	fixIP    = 0x01
	fixCall  = 0x02
	fixSetF  = 0x04
	fixRipSI = 0x08
	fixRipDI = 0x10
	fixRipBX = 0x20
	fixRip   = fixRipSI | fixRipDI | fixRipBX
)

// x86Ops is auprobe->ops.
type x86Ops uint8

const (
	x86OpsDefault x86Ops = iota // default_xol_ops
	x86OpsBranch                // branch_xol_ops (emulate; post_xol for call)
	x86OpsPush                  // push_xol_ops (emulate only)
)

const x86EFLAGS_TF = 0x100

// errENOSYS is the internal "not this op set" result of the *_setup_xol_ops.
const errENOSYS Errno = 38

// analyzeX86 is arch_uprobe_analyze_insn for a 64-bit mm. n is the number
// of valid bytes in au.insn; nopForms is Options.X86NopForms.
func analyzeX86(au *archUprobe, n int, nopForms bool) (Errno, string) {
	x, ok := decodeX86(au.insn[:n])
	if !ok {
		return ENOEXEC, "instruction could not be decoded"
	}
	au.ilen = x.length
	// uprobe_init_insn
	for i := 0; i < x.nprefixes; i++ {
		switch x.prefixes[i] {
		case 0x26, 0x2E, 0x36, 0x3E:
			return ENOTSUPP, "ES/CS/SS/DS segment-override prefix"
		case 0xF0:
			return ENOTSUPP, "LOCK prefix"
		}
	}
	if x.opcode1() == 0x17 || (x.opcode1() == 0x8E && x.modrmReg() == 2) {
		return ENOTSUPP, "MOV/POP to SS masks exceptions for the next instruction"
	}
	good := goodInsns64[x.opcode1()]
	if !good && x.opN == 2 && x.vexN == 0 {
		good = goodInsns2[x.opcode2()]
	}
	if !good {
		if x.opN >= 2 {
			return ENOTSUPP, "opcode not in good_2byte_insns"
		}
		return ENOTSUPP, "opcode not in good_insns_64"
	}
	if e, why := x86BranchSetup(au, &x, au.insn[:n], nopForms); e != errENOSYS {
		return e, why
	}
	if x86PushSetup(au, &x) {
		return 0, ""
	}
	fix := uint8(fixIP)
	riprel := true
	switch x.opcode1() {
	case 0x9D: // popf
		au.fixups |= fixSetF
		riprel = false
	case 0xC3, 0xCB, 0xC2, 0xCA, 0xEA: // ret, lret, jmp absolute: ip is correct
		fix = 0
		riprel = false
	case 0x9A: // call absolute: fix the return address, not ip
		fix = fixCall
		riprel = false
	case 0xFF:
		switch x.modrmReg() {
		case 2, 3: // indirect call
			fix = fixCall
		case 4, 5: // indirect jmp
			fix = 0
		}
	}
	if riprel {
		x86RiprelAnalyze(au, &x)
	}
	au.fixups |= fix
	au.xops = x86OpsDefault
	return 0, ""
}

// x86Nops is the kernel's x86_nops[] for 64-bit (asm/nops.h): the
// recommended NOP of each length, 1..ASM_NOP_MAX (11). 9..11 carry a CS
// prefix, which is_prefix_bad rejects before they get here.
var x86Nops = [...][]byte{
	nil,
	{0x90},
	{0x66, 0x90},
	{0x0F, 0x1F, 0x00},
	{0x0F, 0x1F, 0x40, 0x00},
	{0x0F, 0x1F, 0x44, 0x00, 0x00},
	{0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00},
	{0x0F, 0x1F, 0x80, 0x00, 0x00, 0x00, 0x00},
	{0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	{0x2E, 0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	{0x66, 0x2E, 0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	{0x66, 0x66, 0x2E, 0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
}

// x86InsnIsNop is branch_setup_xol_ops' NOP test in v6.18 (checked
// against the live v6.18.44 kernel): the bytes are exactly x86_nops[len],
// or OPCODE1 is 0x90 whatever the prefixes — so PAUSE (F3 90), 41 90
// (xchg r8d,eax: the probed program loses the exchange), 49 90 and even a
// VEX-encoded opcode 0x90 (kmovw) are emulated as NOPs. Other NOPL forms
// (0F 1F with another ModRM/displacement) are single-stepped. Without
// nopForms (before 6.18) it is false: opcode 0x90 is then a case of the
// branch switch, subject to the 66-prefix rule.
func x86InsnIsNop(x *x86Insn, b []byte, nopForms bool) bool {
	if !nopForms {
		return false
	}
	if x.length < len(x86Nops) && string(b[:x.length]) == string(x86Nops[x.length]) {
		return true
	}
	return x.opcode[0] == 0x90
}

func isCondJmpOpcode(op byte) bool { return op >= 0x70 && op <= 0x7F }

// x86BranchSetup is branch_setup_xol_ops. It returns errENOSYS when the
// instruction is not a branch. Like the kernel it looks at OPCODE1 only,
// so a VEX/EVEX instruction whose opcode byte is 7x (vpcmpeqb, vpshufd…),
// E8, E9, EB or 90 is emulated as a Jcc (offset: its immediate, if any),
// call, jmp or NOP and never executed (verified on v6.18.44).
func x86BranchSetup(au *archUprobe, x *x86Insn, b []byte, nopForms bool) (Errno, string) {
	opc1 := x.opcode1()
	nop := x86InsnIsNop(x, b, nopForms)
	if !nop {
		switch opc1 {
		case 0x90: // before 6.18: "prefix* + nop; same as jmp with .offs = 0"
		case 0xEB, 0xE9:
		case 0xE8:
			// branch_clear_offset: "call 1f; 1:" if emulation fails.
			for i := 0; i < x.immN; i++ {
				au.insn[x.immOff+i] = 0
			}
		case 0x0F:
			if x.opN != 2 {
				return errENOSYS, ""
			}
			opc1 = x.opcode2() - 0x10
			if !isCondJmpOpcode(opc1) {
				return errENOSYS, ""
			}
		default:
			if !isCondJmpOpcode(opc1) {
				return errENOSYS, ""
			}
		}
		if x.hasPrefix(0x66) {
			return ENOTSUPP, "branch with a 66 operand-size prefix (Intel and AMD differ)"
		}
	}
	au.branchOpc1 = opc1
	au.branchOffs = int32(x.imm)
	au.xops = x86OpsBranch
	return 0, ""
}

// x86PushSetup is push_setup_xol_ops: push rax..rdi (1 byte) or
// 41 50..57 (push r8..r15).
func x86PushSetup(au *archUprobe, x *x86Insn) bool {
	opc1 := x.opcode1()
	if x.vexN != 0 || opc1 < 0x50 || opc1 > 0x57 || x.length > 2 {
		return false
	}
	reg := int(opc1 - 0x50)
	if x.length == 2 {
		if x.rex != 0x41 || x.nprefixes != 0 {
			return false
		}
		reg += 8
	}
	au.pushReg = reg
	au.xops = x86OpsPush
	return true
}

// x86RiprelAnalyze is riprel_analyze: rewrite a RIP-relative ModRM
// operand into [scratch + disp32], scratch = RSI, else RDI, else RBX,
// avoiding ModRM.reg and VEX.vvvv (low three bits).
func x86RiprelAnalyze(au *archUprobe, x *x86Insn) {
	if !x.ripRelative() {
		return
	}
	if x.rex != 0 {
		au.insn[x.rexOff] &= 0xFE // clear REX.B
	}
	if x.vexN >= 3 {
		au.insn[x.vexOff+1] |= 0x60 // set (inverted) VEX3.B / EVEX.X,B
	}
	reg := x.modrmReg()
	reg2 := byte(0xFF)
	if x.vexN != 0 {
		reg2 = x.vex[2]
	}
	reg2 = ((reg2 >> 3) & 7) ^ 7
	switch {
	case reg != 6 && reg2 != 6:
		reg2 = 6
		au.fixups |= fixRipSI
	case reg != 7 && reg2 != 7:
		reg2 = 7
		au.fixups |= fixRipDI
	default:
		reg2 = 3
		au.fixups |= fixRipBX
	}
	au.insn[x.modrmOff] = 0x80 | reg<<3 | reg2
}

// x86ScratchReg is scratch_reg().
func x86ScratchReg(au *archUprobe) int {
	switch {
	case au.fixups&fixRipSI != 0:
		return 6
	case au.fixups&fixRipDI != 0:
		return 7
	}
	return 3
}

// X86Fate classifies x86-64 instruction bytes as the kernel would at
// probe time: "emulate" (branch, nop or push op set), "xol" (with the
// fixups listed) or "reject", with a detail string.
func X86Fate(b []byte) (fate, detail string) {
	var au archUprobe
	n := copy(au.insn[:], b)
	if e, why := analyzeX86(&au, n, true); e != 0 {
		return "reject", why + " (" + e.Error() + ")"
	}
	switch au.xops {
	case x86OpsBranch:
		if au.branchOpc1 == 0xE8 {
			return "emulate", "call"
		}
		return "emulate", "branch"
	case x86OpsPush:
		return "emulate", "push"
	}
	return "xol", fixupNames(au.fixups)
}

func fixupNames(f uint8) string {
	s := ""
	add := func(bit uint8, n string) {
		if f&bit != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	add(fixIP, "FIX_IP")
	add(fixCall, "FIX_CALL")
	add(fixSetF, "FIX_SETF")
	add(fixRipSI, "FIX_RIP_SI")
	add(fixRipDI, "FIX_RIP_DI")
	add(fixRipBX, "FIX_RIP_BX")
	return s
}

func x86Disasm(b []byte, pc uint64) string { return decode.DisasmX86(b, pc) }

// x86CheckJmpCond is check_jmp_cond.
func x86CheckJmpCond(opc1 byte, flags uint64) bool {
	if !isCondJmpOpcode(opc1) {
		return true
	}
	of := flags&0x800 != 0
	cf := flags&0x001 != 0
	zf := flags&0x040 != 0
	sf := flags&0x080 != 0
	pf := flags&0x004 != 0
	var r bool
	switch opc1 &^ 1 {
	case 0x70:
		r = of
	case 0x72:
		r = cf
	case 0x74:
		r = zf
	case 0x78:
		r = sf
	case 0x7A:
		r = pf
	case 0x76:
		r = cf || zf
	case 0x7C:
		r = sf != of
	case 0x7E:
		r = zf || sf != of
	}
	if opc1&1 != 0 {
		r = !r
	}
	return r
}

// x86EmulatePush is emulate_push_stack: store val at sp-8 (user access);
// on success sp -= 8.
func (t *Task) x86EmulatePush(r Regs, val uint64) bool {
	ut := t.utask
	sp := t.sp(r) - 8
	w := ut.words[:1]
	w[0] = val
	if t.writeUserWords(r, w, sp) != nil {
		return false
	}
	t.setSP(r, sp)
	return true
}

// x86Emulate is arch_uprobe_skip_sstep (->emulate, then SIGTRAP if the
// user had TF set).
func (t *Task) x86Emulate(au *archUprobe, r Regs) bool {
	var ok bool
	switch au.xops {
	case x86OpsBranch:
		newIP := t.pc(r) + uint64(au.ilen)
		offs := int64(au.branchOffs)
		if au.branchOpc1 == 0xE8 {
			if !t.x86EmulatePush(r, newIP) {
				return false
			}
		} else if isCondJmpOpcode(au.branchOpc1) && !x86CheckJmpCond(au.branchOpc1, r.Flags()) {
			// Only a Jcc reads the flags: a NOP or JMP hit does not
			// materialise an interpreter's lazy flags.
			offs = 0
		}
		t.setPC(r, newIP+uint64(offs))
		ok = true
	case x86OpsPush:
		if !t.x86EmulatePush(r, t.reg(r, au.pushReg)) {
			return false
		}
		t.setPC(r, t.pc(r)+uint64(au.ilen))
		ok = true
	}
	if ok && t.x86TrapFlag(r) {
		t.th.SendSignal(SIGTRAP, false)
	}
	return ok
}

// trapFlagReader is implemented by Regs that read x86's TF without
// computing the whole flags register (an interpreter with lazy flags),
// or by a Thread that reads it so from its own registers (the Regs
// passed with it).
type trapFlagReader interface{ TrapFlag() bool }

// x86TrapFlag is r.Flags()&TF != 0, through TrapFlag when the thread or
// r has it.
func (t *Task) x86TrapFlag(r Regs) bool {
	if tf := t.tf; tf != nil {
		return tf.TrapFlag()
	}
	if tf, ok := r.(trapFlagReader); ok {
		return tf.TrapFlag()
	}
	return r.Flags()&x86EFLAGS_TF != 0
}

// x86PreXOL is arch_uprobe_pre_xol.
func (t *Task) x86PreXOL(au *archUprobe, r Regs) {
	ut := t.utask
	if au.xops == x86OpsDefault && au.fixups&fixRip != 0 {
		sr := x86ScratchReg(au)
		ut.savedScratch = r.Reg(sr)
		r.SetReg(sr, ut.vaddr+uint64(au.ilen))
	}
	r.SetPC(ut.xolVaddr)
	ut.savedTrapNr = ut.trapNr
	ut.trapNr = trapSentinel
	f := r.Flags()
	ut.savedTF = f&x86EFLAGS_TF != 0
	r.SetFlags(f | x86EFLAGS_TF)
}

// x86PostXOL is arch_uprobe_post_xol. It returns an error when the op's
// post_xol failed (the caller sends SIGILL).
func (t *Task) x86PostXOL(au *archUprobe, r Regs) error {
	ut := t.utask
	sendSigtrap := ut.savedTF
	if ut.trapNr != trapSentinel {
		t.mm.sys.warn("uprobe: trap_nr changed during the step")
	}
	ut.trapNr = ut.savedTrapNr
	var err error
	switch au.xops {
	case x86OpsBranch: // branch_post_xol_op: only a call can get here
		r.SetSP(r.SP() + 8)
		err = errRestart
	case x86OpsDefault:
		err = t.x86DefaultPostXOL(au, r)
	}
	if err != nil {
		r.SetPC(ut.vaddr)
		if err == errRestart {
			err = nil
		}
		sendSigtrap = false
	}
	if sendSigtrap {
		t.th.SendSignal(SIGTRAP, false)
	}
	if !ut.savedTF {
		r.SetFlags(r.Flags() &^ x86EFLAGS_TF)
	}
	return err
}

// errRestart is -ERESTART from a post_xol op: restart at the probe.
var errRestart = Errno(513)

// x86DefaultPostXOL is default_post_xol_op.
func (t *Task) x86DefaultPostXOL(au *archUprobe, r Regs) error {
	ut := t.utask
	if au.fixups&fixRip != 0 {
		r.SetReg(x86ScratchReg(au), ut.savedScratch)
	}
	if au.fixups&fixIP != 0 {
		r.SetPC(r.PC() + ut.vaddr - ut.xolVaddr)
	} else if au.fixups&fixCall != 0 {
		r.SetSP(r.SP() + 8) // pop the wrong return address
		if !t.x86EmulatePush(r, ut.vaddr+uint64(au.ilen)) {
			return errRestart
		}
	}
	if au.fixups&fixSetF != 0 {
		ut.savedTF = true // popf: leave TF as the instruction set it
	}
	return nil
}

// x86AbortXOL is arch_uprobe_abort_xol.
func (t *Task) x86AbortXOL(au *archUprobe, r Regs) {
	ut := t.utask
	if au.xops == x86OpsDefault && au.fixups&fixRip != 0 {
		r.SetReg(x86ScratchReg(au), ut.savedScratch)
	}
	ut.trapNr = ut.savedTrapNr
	r.SetPC(ut.vaddr)
	if !ut.savedTF {
		r.SetFlags(r.Flags() &^ x86EFLAGS_TF)
	}
}

// userAccessor is implemented by Regs whose thread can reach its own
// user memory through its CPU's translation cache (vm.TLB.ReadUser and
// WriteUser): a hit copies the bytes, false means "take the address
// space's path", which decides the access (and its fault) itself.
type userAccessor interface {
	ReadUser(b []byte, addr uint64) bool
	WriteUser(b []byte, addr uint64) bool
}

// copyFromUser is copy_from_user for the thread r belongs to: the
// thread's own translation cache when it holds the page, otherwise
// AddrSpace.ReadAt.
func (t *Task) copyFromUser(r Regs, b []byte, addr uint64) error {
	if u, ok := r.(userAccessor); ok && u.ReadUser(b, addr) {
		return nil
	}
	return t.mm.as.ReadAt(b, addr)
}

// copyToUser is copy_to_user for the thread r belongs to (see
// copyFromUser).
func (t *Task) copyToUser(r Regs, b []byte, addr uint64) error {
	if u, ok := r.(userAccessor); ok && u.WriteUser(b, addr) {
		return nil
	}
	return t.mm.as.WriteAt(b, addr)
}

// userWordAccessor is implemented by a Thread (or Regs) that reads and
// writes whole little-endian 64-bit words of its own user memory with
// one translation (vm.TLB.ReadUserWords): the x86 return address and
// the uretprobe trampoline's saved registers. It hits and misses where
// the Regs' userAccessor would for the same bytes; false means "take
// copyFromUser's path".
type userWordAccessor interface {
	ReadUserWords(w []uint64, addr uint64) bool
	WriteUserWords(w []uint64, addr uint64) bool
}

// userWordSwapper is an optional interface of the Thread (with
// userWordAccessor): SwapUserWord is ReadUserWords of the word at addr
// and then, unless it is v already, WriteUserWords of v there, in one
// translation. read: the read hit and old is the word; written: v is
// there now. A write that would miss writes nothing.
type userWordSwapper interface {
	SwapUserWord(addr, v uint64) (old uint64, read, written bool)
}

// readUserWords is copy_from_user of len(w) (at most 3) little-endian
// words at addr into w: the word accessor when r has one and it hits,
// else copyFromUser of the bytes, decoded.
func (t *Task) readUserWords(r Regs, w []uint64, addr uint64) error {
	if u := t.uw; u != nil {
		if u.ReadUserWords(w, addr) {
			return nil
		}
	} else if u, ok := r.(userWordAccessor); ok && u.ReadUserWords(w, addr) {
		return nil
	}
	return t.readUserWordsSlow(r, w, addr)
}

//go:noinline
func (t *Task) readUserWordsSlow(r Regs, w []uint64, addr uint64) error {
	b := t.userScratch(len(w))
	if err := t.copyFromUser(r, b, addr); err != nil {
		return err
	}
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return nil
}

// writeUserWords is copy_to_user of the words w (at most 3),
// little-endian, at addr (see readUserWords).
func (t *Task) writeUserWords(r Regs, w []uint64, addr uint64) error {
	if u := t.uw; u != nil {
		if u.WriteUserWords(w, addr) {
			return nil
		}
	} else if u, ok := r.(userWordAccessor); ok && u.WriteUserWords(w, addr) {
		return nil
	}
	return t.writeUserWordsSlow(r, w, addr)
}

//go:noinline
func (t *Task) writeUserWordsSlow(r Regs, w []uint64, addr uint64) error {
	b := t.userScratch(len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return t.copyToUser(r, b, addr)
}

// userScratch is n words' worth of byte scratch for a user access: the
// utask's, or a new buffer for a thread without one.
func (t *Task) userScratch(n int) []byte {
	if ut := t.utask; ut != nil {
		return ut.scratch[:8*n]
	}
	return make([]byte, 8*n)
}
