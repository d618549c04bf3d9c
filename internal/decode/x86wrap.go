package decode

import (
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// This file is the fix-up wrapper around golang.org/x/arch/x86/x86asm
// (shared/docs/xarch-decoders.md §6.2 and §7.3) and the translation of its
// Inst into uvm's X86 record. It runs once per instruction-cache fill,
// never in the execution loop.
//
// Fix-ups applied:
//   - ENDBR64/ENDBR32, RDSSPD/Q and every other reserved-NOP 0F 19..0F 1E /r
//     (and 0F 18 /4../7) decode as NOP from the raw bytes; INCSSPD/Q
//     (F3 [REX] 0F AE /5, mod=11), which x86asm calls LFENCE or rejects, is
//     a NOP too (the non-CET behaviour).
//   - Op==0 with err==nil (x86asm's "prefix-only instruction") is an error.
//   - Truncated input (fewer bytes than the instruction needs) is reported
//     as ErrTruncated so that the caller can fetch across a page boundary.
//   - VZEROUPPER/VZEROALL get their real length (no ModRM byte).
//   - VEX/EVEX RIP-relative memory operands get their RIP base back.
//   - Operand widths come from register classes and MemBytes, never from
//     DataSize (which is wrong for push/call/ret and byte operations).
//   - Immediates are masked to the operation width; branch displacements
//     (relative to the end of the instruction) and RIP-relative addresses
//     are resolved to absolute addresses using pc.

// maxX86Len is the architectural maximum instruction length.
const maxX86Len = 15

// DecodeX86 decodes the instruction at the start of mem, which holds the
// bytes at guest address pc (at most 15 are used; supply every mapped byte
// up to that). It returns ErrTruncated when mem ends before the
// instruction does, and ErrUndefined for bytes that are not an instruction
// uvm implements (the returned record then still has Len set, 1..15).
func DecodeX86(mem []byte, pc uint64) (X86, error) {
	var out X86
	err := DecodeX86Into(mem, pc, &out)
	return out, err
}

// DecodeX86Into is DecodeX86 writing into *out (used by the instruction
// cache to fill records in place).
func DecodeX86Into(mem []byte, pc uint64, out *X86) error {
	err := decodeX86Into(mem, pc, out)
	out.Class = x86ClassOf(out)
	return err
}

func decodeX86Into(mem []byte, pc uint64, out *X86) error {
	*out = X86{}
	if ok, err := decodeX86VEX(mem, pc, out); ok {
		return err // VEX (AVX/AVX2/FMA/F16C), XGETBV, XSAVE*: x86vex.go
	}
	if handled, err := decodeX86Ext(mem, pc, out); handled { // ADCX/ADOX/RDPID: x86bmi.go
		return err
	}
	inst, special, err := decodeX86Inst(mem)
	if err != nil {
		if err == ErrUndefined {
			out.Len = uint8(inst.Len)
			if out.Len == 0 {
				out.Len = 1
			}
		}
		return err
	}
	if special != "" {
		// A raw-byte NOP (ENDBR64, RDSSP, INCSSP, reserved NOP).
		out.Op = X86Nop
		out.Len = uint8(inst.Len)
		out.Width = 4
		return nil
	}
	if err := translateX86(&inst, pc, out); err != nil {
		out.Op = X86Undefined
		if out.Len == 0 {
			out.Len = uint8(inst.Len)
		}
		return err
	}
	return nil
}

// DisasmX86 disassembles the instruction at the start of mem (guest
// address pc) in Intel syntax, for traces and messages.
func DisasmX86(mem []byte, pc uint64) string {
	if s, ok := disasmX86Ext(mem, pc); ok { // x86bmi.go
		return s
	}
	inst, special, err := decodeX86Inst(mem)
	switch {
	case err == ErrTruncated:
		return "(truncated) " + hexBytes(mem)
	case err != nil:
		n := inst.Len
		if n <= 0 || n > len(mem) {
			n = min(len(mem), 1)
		}
		return "(bad) " + hexBytes(mem[:n])
	case special != "":
		return special
	}
	return x86asm.IntelSyntax(inst, pc, nil)
}

func hexBytes(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

// decodeX86Inst runs x86asm with the fix-ups that work on raw bytes.
// special is the mnemonic of a raw-byte NOP (inst.Len set, Op NOP).
func decodeX86Inst(mem []byte) (inst x86asm.Inst, special string, err error) {
	if len(mem) > maxX86Len {
		mem = mem[:maxX86Len]
	}
	if len(mem) == 0 {
		return inst, "", ErrTruncated
	}
	if n, name, trunc := rawNop(mem); trunc {
		return inst, "", ErrTruncated
	} else if n > 0 {
		return x86asm.Inst{Op: x86asm.NOP, Len: n, Mode: 64, AddrSize: 64, DataSize: 32}, name, nil
	}
	if n, trunc := vzeroLen(mem); trunc {
		return inst, "", ErrTruncated
	} else if n > 0 {
		inst, err = x86asm.Decode(mem[:n], 64)
		if err != nil || inst.Op == 0 {
			return inst, "", ErrUndefined
		}
		inst.Len = n
		inst.Mode, inst.AddrSize = 64, 64
		return inst, "", nil
	}
	inst, err = x86asm.Decode(mem, 64)
	if err != nil || inst.Op == 0 {
		if len(mem) < maxX86Len && x86Truncated(mem) {
			return inst, "", ErrTruncated
		}
		return inst, "", ErrUndefined
	}
	if p := inst.Prefix[0]; p.IsVEX() || p.IsEVEX() {
		inst.Mode, inst.AddrSize = 64, 64
		fixVEXRIP(&inst, mem)
	}
	return inst, "", nil
}

// x86Truncated reports whether mem is a proper prefix of a longer valid
// instruction: decoding it padded with filler bytes gives an instruction
// longer than mem.
//
// The first filler byte is tried with every ModRM.reg value (register
// and memory forms), since in opcode groups (0F 71..73, 0F BA, D8..DF, F6/F7
// …) the reg field decides whether the instruction exists at all.
func x86Truncated(mem []byte) bool {
	for f := 0; f < 18; f++ {
		var buf [maxX86Len]byte
		first := byte(f&7) << 3 // mod=00 (memory), reg = f&7
		if f >= 8 {
			first |= 0xC0 // mod=11 (register)
		}
		if f >= 16 {
			first = [...]byte{0x04, 0x44}[f-16] // SIB and disp8 forms
		}
		for i := range buf {
			buf[i] = 0
		}
		buf[len(mem)] = first
		copy(buf[:], mem)
		if n, _, trunc := rawNop(buf[:]); !trunc && n > len(mem) {
			return true
		}
		inst, err := x86asm.Decode(buf[:], 64)
		if err == nil && inst.Op != 0 && inst.Len > len(mem) {
			return true
		}
	}
	return false
}

// isLegacyPrefix reports the legacy prefixes that may precede the opcode.
func isLegacyPrefix(b byte) bool {
	switch b {
	case 0x66, 0x67, 0xF2, 0xF3, 0x2E, 0x3E, 0x26, 0x36, 0x64, 0x65, 0xF0:
		return true
	}
	return false
}

// rawNop recognises, from the raw bytes, the hint-NOP space x86asm does not
// decode: 0F 19..0F 1E /r (which includes ENDBR64 F3 0F 1E FA, ENDBR32
// F3 0F 1E FB and RDSSPD/Q F3 [REX.W] 0F 1E /1), 0F 18 /4../7, and
// INCSSPD/Q (F3 [REX.W] 0F AE /5 with a register operand). It returns the
// length and a mnemonic, n = 0 when mem is not one of these, or trunc when
// mem ends inside what would be one.
func rawNop(mem []byte) (n int, name string, trunc bool) {
	i := 0
	rep := false
	addr32 := false
	rexW := false
	for i < len(mem) && i < maxX86Len && isLegacyPrefix(mem[i]) {
		if mem[i] == 0xF0 {
			return 0, "", false // LOCK: let x86asm reject it
		}
		rep = rep || mem[i] == 0xF3
		addr32 = addr32 || mem[i] == 0x67
		i++
	}
	if i < len(mem) && mem[i]&0xF0 == 0x40 {
		rexW = mem[i]&8 != 0
		i++
	}
	if i >= len(mem) {
		return 0, "", false
	}
	if mem[i] != 0x0F {
		return 0, "", false
	}
	i++
	if i >= len(mem) {
		return 0, "", false // "0F" alone: let the generic check decide
	}
	op := mem[i]
	i++
	switch {
	case op >= 0x19 && op <= 0x1E, op == 0x18:
	case op == 0xAE && rep:
	default:
		return 0, "", false
	}
	if i >= len(mem) {
		return 0, "", true
	}
	modrm := mem[i]
	reg := (modrm >> 3) & 7
	switch op {
	case 0x18:
		if reg < 4 {
			return 0, "", false // PREFETCH*: x86asm decodes it
		}
	case 0xAE:
		if modrm>>6 != 3 || reg != 5 {
			return 0, "", false
		}
		if rexW {
			return i + 1, "incsspq", false
		}
		return i + 1, "incsspd", false
	}
	m, ok := modrmLen(mem[i:], addr32)
	if !ok {
		return 0, "", true
	}
	n = i + m
	if n > maxX86Len {
		return 0, "", false
	}
	name = "nop"
	if op == 0x1E && rep && modrm>>6 == 3 {
		switch {
		case modrm == 0xFA:
			name = "endbr64"
		case modrm == 0xFB:
			name = "endbr32"
		case reg == 1 && rexW:
			name = "rdsspq"
		case reg == 1:
			name = "rdsspd"
		}
	}
	return n, name, false
}

// modrmLen returns the length of a ModRM byte with its SIB and
// displacement, given the bytes starting at ModRM; ok is false when they
// run out.
func modrmLen(b []byte, addr32 bool) (int, bool) {
	_ = addr32 // 32-bit addressing has the same ModRM/SIB layout in 64-bit mode
	if len(b) < 1 {
		return 0, false
	}
	mod, rm := b[0]>>6, b[0]&7
	n := 1
	if mod == 3 {
		return n, true
	}
	if rm == 4 {
		if len(b) < 2 {
			return 0, false
		}
		if mod == 0 && b[1]&7 == 5 {
			n += 4
		}
		n++
	}
	switch {
	case mod == 0 && rm == 5:
		n += 4
	case mod == 1:
		n++
	case mod == 2:
		n += 4
	}
	if n > len(b) {
		return 0, false
	}
	return n, true
}

// vzeroLen recognises VZEROUPPER/VZEROALL (VEX.0F 77 with pp=00), which
// have no ModRM byte although x86asm reads one.
func vzeroLen(mem []byte) (n int, trunc bool) {
	switch mem[0] {
	case 0xC5:
		if len(mem) < 3 {
			return 0, len(mem) < 2 || mem[1]&3 == 0
		}
		if mem[1]&3 == 0 && mem[2] == 0x77 {
			return 3, false
		}
	case 0xC4:
		if len(mem) < 4 {
			if len(mem) >= 2 && mem[1]&0x1F != 1 {
				return 0, false
			}
			if len(mem) >= 3 && mem[2]&3 != 0 {
				return 0, false
			}
			return 0, true
		}
		if mem[1]&0x1F == 1 && mem[2]&3 == 0 && mem[3] == 0x77 {
			return 4, false
		}
	}
	return 0, false
}

// fixVEXRIP restores the RIP base of a VEX/EVEX memory operand encoded
// with mod=00 rm=101, which x86asm decodes as an absolute [disp32].
func fixVEXRIP(inst *x86asm.Inst, mem []byte) {
	var at int
	switch byte(inst.Prefix[0]) {
	case 0xC5:
		at = 3
	case 0xC4:
		at = 4
	case 0x62:
		at = 5
	default:
		return
	}
	if at >= len(mem) {
		return
	}
	modrm := mem[at]
	if modrm>>6 != 0 || modrm&7 != 5 {
		return
	}
	for i, a := range inst.Args {
		if a == nil {
			break
		}
		if m, ok := a.(x86asm.Mem); ok && m.Base == 0 && m.Index == 0 {
			m.Base = x86asm.RIP
			inst.Args[i] = m
		}
	}
}

// ---- translation into the X86 record ----

// x86GPR maps an x86asm general register to (number, size, high-byte).
func x86GPR(r x86asm.Reg) (num, size uint8, high, ok bool) {
	switch {
	case r >= x86asm.AL && r <= x86asm.BL:
		return uint8(r - x86asm.AL), 1, false, true
	case r >= x86asm.AH && r <= x86asm.BH:
		return uint8(r - x86asm.AH), 1, true, true
	case r >= x86asm.SPB && r <= x86asm.R15B:
		return uint8(r-x86asm.SPB) + 4, 1, false, true
	case r >= x86asm.AX && r <= x86asm.R15W:
		return uint8(r - x86asm.AX), 2, false, true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return uint8(r - x86asm.EAX), 4, false, true
	case r >= x86asm.RAX && r <= x86asm.R15:
		return uint8(r - x86asm.RAX), 8, false, true
	}
	return 0, 0, false, false
}

// convArg converts one x86asm operand. Immediates and branch targets go
// to out.Imm/Imm2 (the returned arg has Kind ArgImm).
func convArg(inst *x86asm.Inst, pc uint64, a x86asm.Arg, out *X86, nimm *int) (X86Arg, bool) {
	switch a := a.(type) {
	case x86asm.Reg:
		if num, size, high, ok := x86GPR(a); ok {
			if high {
				return X86Arg{Kind: ArgRegHigh, Reg: num, Size: 1, Shift: 8, Index: NoReg}, true
			}
			return X86Arg{Kind: ArgReg, Reg: num, Size: size, Index: NoReg}, true
		}
		switch {
		case a >= x86asm.X0 && a <= x86asm.X15:
			return X86Arg{Kind: ArgXMM, Reg: uint8(a - x86asm.X0), Size: 16, Index: NoReg}, true
		case a >= x86asm.F0 && a <= x86asm.F7:
			return X86Arg{Kind: ArgX87, Reg: uint8(a - x86asm.F0), Size: 10, Index: NoReg}, true
		case a >= x86asm.M0 && a <= x86asm.M7:
			return X86Arg{Kind: ArgMMX, Reg: uint8(a - x86asm.M0), Size: 8, Index: NoReg}, true
		case a >= x86asm.ES && a <= x86asm.GS:
			return X86Arg{Kind: ArgSeg, Reg: uint8(a - x86asm.ES), Size: 2, Index: NoReg}, true
		}
		return X86Arg{}, false
	case x86asm.Mem:
		m := X86Arg{Kind: ArgMem, Reg: NoReg, Index: NoReg, Scale: 1, Size: uint8(inst.MemBytes), Disp: a.Disp}
		if inst.MemBytes > 255 {
			m.Size = 0
		}
		if inst.AddrSize == 32 {
			m.Flags |= ArgA32
		}
		switch a.Segment {
		case x86asm.FS:
			m.Flags |= SegFS << ArgSegShift
		case x86asm.GS:
			m.Flags |= SegGS << ArgSegShift
		}
		switch a.Base {
		case 0:
		case x86asm.RIP, x86asm.EIP:
			m.Disp = int64(pc) + int64(inst.Len) + a.Disp
			if a.Base == x86asm.EIP {
				m.Disp = int64(uint32(m.Disp))
			}
		default:
			num, size, high, ok := x86GPR(a.Base)
			if !ok || high || size < 4 {
				return X86Arg{}, false
			}
			m.Reg = num
		}
		if a.Index != 0 {
			num, size, high, ok := x86GPR(a.Index)
			if !ok || high || size < 4 {
				return X86Arg{}, false
			}
			m.Index = num
			if a.Scale != 0 {
				m.Scale = a.Scale
			}
		}
		return m, true
	case x86asm.Imm:
		if *nimm == 0 {
			out.Imm = int64(a)
		} else {
			out.Imm2 = int64(a)
		}
		*nimm++
		return X86Arg{Kind: ArgImm, Reg: NoReg, Index: NoReg}, true
	case x86asm.Rel:
		out.Imm = int64(pc) + int64(inst.Len) + int64(a)
		*nimm++
		return X86Arg{Kind: ArgImm, Reg: NoReg, Index: NoReg}, true
	}
	return X86Arg{}, false
}

// widthMask returns the all-ones value of a width in bytes.
func widthMask(w uint8) uint64 {
	if w >= 8 {
		return ^uint64(0)
	}
	return uint64(1)<<(8*w) - 1
}

// x86Cond maps Jcc/SETcc/CMOVcc ops to their condition code.
var x86Cond = map[x86asm.Op]uint8{
	x86asm.JO: CondO, x86asm.JNO: CondNO, x86asm.JB: CondB, x86asm.JAE: CondAE,
	x86asm.JE: CondE, x86asm.JNE: CondNE, x86asm.JBE: CondBE, x86asm.JA: CondA,
	x86asm.JS: CondS, x86asm.JNS: CondNS, x86asm.JP: CondP, x86asm.JNP: CondNP,
	x86asm.JL: CondL, x86asm.JGE: CondGE, x86asm.JLE: CondLE, x86asm.JG: CondG,
	x86asm.SETO: CondO, x86asm.SETNO: CondNO, x86asm.SETB: CondB, x86asm.SETAE: CondAE,
	x86asm.SETE: CondE, x86asm.SETNE: CondNE, x86asm.SETBE: CondBE, x86asm.SETA: CondA,
	x86asm.SETS: CondS, x86asm.SETNS: CondNS, x86asm.SETP: CondP, x86asm.SETNP: CondNP,
	x86asm.SETL: CondL, x86asm.SETGE: CondGE, x86asm.SETLE: CondLE, x86asm.SETG: CondG,
	x86asm.CMOVO: CondO, x86asm.CMOVNO: CondNO, x86asm.CMOVB: CondB, x86asm.CMOVAE: CondAE,
	x86asm.CMOVE: CondE, x86asm.CMOVNE: CondNE, x86asm.CMOVBE: CondBE, x86asm.CMOVA: CondA,
	x86asm.CMOVS: CondS, x86asm.CMOVNS: CondNS, x86asm.CMOVP: CondP, x86asm.CMOVNP: CondNP,
	x86asm.CMOVL: CondL, x86asm.CMOVGE: CondGE, x86asm.CMOVLE: CondLE, x86asm.CMOVG: CondG,
}

// Simple one-to-one op mappings (operands converted generically, Width
// from the first operand).
var x86Simple = map[x86asm.Op]X86Op{
	x86asm.ADD: X86Add, x86asm.OR: X86Or, x86asm.ADC: X86Adc, x86asm.SBB: X86Sbb,
	x86asm.AND: X86And, x86asm.SUB: X86Sub, x86asm.XOR: X86Xor, x86asm.CMP: X86Cmp,
	x86asm.TEST: X86Test, x86asm.INC: X86Inc, x86asm.DEC: X86Dec, x86asm.NEG: X86Neg, x86asm.NOT: X86Not,
	x86asm.ROL: X86Rol, x86asm.ROR: X86Ror, x86asm.RCL: X86Rcl, x86asm.RCR: X86Rcr,
	x86asm.SHL: X86Shl, x86asm.SHR: X86Shr, x86asm.SAR: X86Sar, x86asm.SHLD: X86Shld, x86asm.SHRD: X86Shrd,
	x86asm.MOVZX: X86Movzx, x86asm.MOVSX: X86Movsx, x86asm.MOVSXD: X86Movsx, x86asm.LEA: X86Lea,
	x86asm.XCHG: X86Xchg, x86asm.BSWAP: X86Bswap,
	x86asm.MUL: X86Mul, x86asm.DIV: X86Div, x86asm.IDIV: X86Idiv,
	x86asm.BT: X86Bt, x86asm.BTS: X86Bts, x86asm.BTR: X86Btr, x86asm.BTC: X86Btc,
	x86asm.BSF: X86Bsf, x86asm.BSR: X86Bsr, x86asm.TZCNT: X86Tzcnt, x86asm.LZCNT: X86Lzcnt, x86asm.POPCNT: X86Popcnt,
	x86asm.CMPXCHG: X86Cmpxchg, x86asm.XADD: X86Xadd, x86asm.MOVBE: X86Movbe,
}

// x86Privileged are the instructions that raise #GP in user mode (Linux:
// SIGSEGV, SI_KERNEL). SGDT/SIDT/SLDT/SMSW/STR are included as with UMIP.
var x86Privileged = map[x86asm.Op]bool{
	x86asm.HLT: true, x86asm.IN: true, x86asm.OUT: true, x86asm.INSB: true, x86asm.INSW: true,
	x86asm.INSD: true, x86asm.OUTSB: true, x86asm.OUTSW: true, x86asm.OUTSD: true,
	x86asm.CLI: true, x86asm.STI: true, x86asm.CLTS: true, x86asm.LGDT: true, x86asm.LIDT: true,
	x86asm.LLDT: true, x86asm.LTR: true, x86asm.LMSW: true, x86asm.INVD: true, x86asm.WBINVD: true,
	x86asm.INVLPG: true, x86asm.INVPCID: true, x86asm.RDMSR: true, x86asm.WRMSR: true, x86asm.RDPMC: true,
	x86asm.SWAPGS: true, x86asm.SYSRET: true, x86asm.SYSEXIT: true, x86asm.SGDT: true, x86asm.SIDT: true,
	x86asm.SLDT: true, x86asm.SMSW: true, x86asm.STR: true, x86asm.MONITOR: true, x86asm.MWAIT: true,
	x86asm.RSM: true,
}

// x86Lockable are the ops that accept a LOCK prefix (with a memory
// destination).
var x86Lockable = map[X86Op]bool{
	X86Add: true, X86Or: true, X86Adc: true, X86Sbb: true, X86And: true, X86Sub: true, X86Xor: true,
	X86Inc: true, X86Dec: true, X86Neg: true, X86Not: true, X86Bts: true, X86Btr: true, X86Btc: true,
	X86Xchg: true, X86Cmpxchg: true, X86Cmpxchg8b: true, X86Cmpxchg16b: true, X86Xadd: true,
}

// translateX86 fills out from a fixed-up x86asm.Inst.
func translateX86(inst *x86asm.Inst, pc uint64, out *X86) error {
	out.Len = uint8(inst.Len)
	vex := inst.Prefix[0].IsVEX() || inst.Prefix[0].IsEVEX()
	var lock bool
	var rep uint8
	if !vex {
		for _, p := range inst.Prefix {
			if p == 0 {
				break
			}
			switch byte(p) {
			case 0xF0:
				if p&x86asm.PrefixInvalid != 0 {
					return ErrUndefined
				}
				lock = true
			case 0xF3:
				if p&x86asm.PrefixImplicit == 0 {
					rep = RepF3
				}
			case 0xF2:
				if p&x86asm.PrefixImplicit == 0 {
					rep = RepF2
				}
			}
		}
	}
	// Generic operand conversion: every op (including those handed to
	// translateX86SSE) sees converted Args.
	nimm := 0
	convOK := true
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		if int(out.NArgs) == len(out.Args) {
			convOK = false
			break
		}
		arg, ok := convArg(inst, pc, a, out, &nimm)
		if !ok {
			convOK = false
		}
		out.Args[out.NArgs] = arg
		out.NArgs++
	}
	for i := 0; i < int(out.NArgs); i++ {
		if out.Args[i].Kind == ArgMem {
			out.Seg = (out.Args[i].Flags & ArgSegMask) >> ArgSegShift
		}
	}
	if out.NArgs > 0 && out.Args[0].Size != 0 {
		out.Width = out.Args[0].Size
	} else {
		out.Width = uint8(inst.DataSize / 8)
	}
	out.Lock = lock

	op, ok := translateX86Int(inst, out, rep, convOK)
	if ok {
		out.Op = op
		if out.Lock && (!x86Lockable[op] || out.NArgs == 0 || out.Args[0].Kind != ArgMem) {
			out.Op = X86Undefined
			return ErrUndefined
		}
		specializeX86(out)
		return nil
	}
	if convOK && !lock && translateX86MMX(inst, out) { // x86mmx.go
		return nil
	}
	if convOK && !lock && translateX86SSE(inst, pc, out) {
		return nil
	}
	return ErrUndefined
}

// translateX86Int handles the integer and system instructions. ok is
// false for anything else (handed to translateX86SSE).
func translateX86Int(inst *x86asm.Inst, out *X86, rep uint8, convOK bool) (X86Op, bool) {
	iop := inst.Op
	if x86Privileged[iop] {
		return X86Priv, true
	}
	if iop == x86asm.MOV {
		for _, a := range inst.Args[:2] {
			if r, isReg := a.(x86asm.Reg); isReg && r >= x86asm.CR0 && r <= x86asm.TR7 {
				return X86Priv, true
			}
		}
	}
	if !convOK {
		return 0, false
	}
	if op, ok := translateX86Ext(inst, out); ok { // x86bmi.go
		return op, true
	}
	w := out.Width
	args := out.Args[:out.NArgs]
	isGPR := func(i int) bool {
		return i < len(args) && (args[i].Kind == ArgReg || args[i].Kind == ArgRegHigh)
	}
	isRM := func(i int) bool { return isGPR(i) || (i < len(args) && args[i].Kind == ArgMem) }
	isImm := func(i int) bool { return i < len(args) && args[i].Kind == ArgImm }
	mask := func() { out.Imm = int64(uint64(out.Imm) & widthMask(out.Width)) }

	if op, ok := x86Simple[iop]; ok {
		switch op {
		case X86Add, X86Or, X86Adc, X86Sbb, X86And, X86Sub, X86Xor, X86Cmp, X86Test:
			if len(args) != 2 || !isRM(0) || !(isRM(1) || isImm(1)) {
				return 0, false
			}
			if w != 1 && w != 2 && w != 4 && w != 8 {
				return 0, false
			}
			mask()
		case X86Inc, X86Dec, X86Neg, X86Not, X86Mul, X86Div, X86Idiv:
			if len(args) != 1 || !isRM(0) {
				return 0, false
			}
		case X86Rol, X86Ror, X86Rcl, X86Rcr, X86Shl, X86Shr, X86Sar:
			if len(args) != 2 || !isRM(0) || !(isImm(1) || isGPR(1)) {
				return 0, false
			}
			out.Imm &= 0xFF
		case X86Shld, X86Shrd:
			if len(args) != 3 || !isRM(0) || !isGPR(1) || !(isImm(2) || isGPR(2)) {
				return 0, false
			}
			out.Imm &= 0xFF
		case X86Movzx, X86Movsx:
			if len(args) != 2 || !isGPR(0) || !isRM(1) {
				return 0, false
			}
			if args[1].Kind == ArgMem && args[1].Size == 0 {
				return 0, false
			}
		case X86Lea:
			if len(args) != 2 || !isGPR(0) || args[1].Kind != ArgMem {
				return 0, false
			}
		case X86Xchg, X86Cmpxchg, X86Xadd:
			if len(args) != 2 || !isRM(0) || !isGPR(1) {
				return 0, false
			}
		case X86Bswap:
			if len(args) != 1 || !isGPR(0) {
				return 0, false
			}
		case X86Bt, X86Bts, X86Btr, X86Btc:
			if len(args) != 2 || !isRM(0) || !(isGPR(1) || isImm(1)) {
				return 0, false
			}
			out.Imm &= 0xFF
		case X86Bsf, X86Bsr, X86Tzcnt, X86Lzcnt, X86Popcnt:
			if len(args) != 2 || !isGPR(0) || !isRM(1) {
				return 0, false
			}
		case X86Movbe:
			if len(args) != 2 || !isRM(0) || !isRM(1) {
				return 0, false
			}
		}
		return op, true
	}
	if c, ok := x86Cond[iop]; ok {
		out.Cond = c
		switch {
		case iop >= x86asm.SETA && iop <= x86asm.SETS:
			if len(args) != 1 || !isRM(0) {
				return 0, false
			}
			return X86Setcc, true
		case iop >= x86asm.CMOVA && iop <= x86asm.CMOVS:
			if len(args) != 2 || !isGPR(0) || !isRM(1) {
				return 0, false
			}
			return X86Cmov, true
		}
		out.Width = 8
		return X86Jcc, true
	}
	switch iop {
	case x86asm.MOV, x86asm.MOVNTI:
		if len(args) != 2 {
			return 0, false
		}
		if args[0].Kind == ArgSeg && isRM(1) && args[0].Reg != 1 {
			out.Width = 2
			return X86MovToSeg, true
		}
		if args[1].Kind == ArgSeg && isRM(0) {
			out.Width = args[0].Size
			if args[0].Kind == ArgMem {
				out.Width = 2
			}
			return X86MovSeg, true
		}
		if !isRM(0) || !(isRM(1) || isImm(1)) || (args[0].Kind == ArgMem && args[1].Kind == ArgMem) {
			return 0, false
		}
		mask()
		return X86Mov, true
	case x86asm.IMUL:
		switch len(args) {
		case 1:
			if !isRM(0) {
				return 0, false
			}
			return X86Imul1, true
		case 2, 3:
			if !isGPR(0) || !isRM(1) || (len(args) == 3 && !isImm(2)) {
				return 0, false
			}
			mask()
			return X86Imul, true
		}
		return 0, false
	case x86asm.PUSH:
		if len(args) != 1 {
			return 0, false
		}
		switch {
		case isImm(0):
			out.Width = 8
			if inst.DataSize == 16 {
				out.Width = 2
			}
			mask()
		case isRM(0):
		case args[0].Kind == ArgSeg:
			out.Width = x86SegStackWidth(inst)
			return X86PushSeg, true
		default:
			return 0, false
		}
		return X86Push, true
	case x86asm.POP:
		if len(args) == 1 && args[0].Kind == ArgSeg {
			out.Width = x86SegStackWidth(inst)
			return X86PopSeg, true
		}
		if len(args) != 1 || !isRM(0) {
			return 0, false
		}
		return X86Pop, true
	case x86asm.LRET:
		out.Width = uint8(inst.DataSize / 8)
		if len(args) == 1 {
			out.Imm &= 0xFFFF
		} else {
			out.Imm = 0
		}
		return X86Lret, true
	case x86asm.LJMP, x86asm.LCALL:
		if len(args) != 1 || args[0].Kind != ArgMem {
			return 0, false
		}
		out.Width = uint8(inst.DataSize / 8)
		args[0].Size = 2 + out.Width
		if iop == x86asm.LJMP {
			return X86FarJmp, true
		}
		return X86FarCall, true
	case x86asm.PUSHFQ, x86asm.PUSHF:
		out.Width = 8
		if iop == x86asm.PUSHF {
			out.Width = 2
		}
		return X86Pushf, true
	case x86asm.POPFQ, x86asm.POPF:
		out.Width = 8
		if iop == x86asm.POPF {
			out.Width = 2
		}
		return X86Popf, true
	case x86asm.LEAVE:
		out.Width = 8
		if inst.DataSize == 16 {
			out.Width = 2
		}
		return X86Leave, true
	case x86asm.ENTER:
		out.Width = 8
		if inst.DataSize == 16 {
			return 0, false
		}
		out.Imm &= 0xFFFF
		out.Imm2 &= 0xFF
		return X86Enter, true
	case x86asm.CBW, x86asm.CWDE, x86asm.CDQE:
		out.Width = map[x86asm.Op]uint8{x86asm.CBW: 2, x86asm.CWDE: 4, x86asm.CDQE: 8}[iop]
		return X86Cbw, true
	case x86asm.CWD, x86asm.CDQ, x86asm.CQO:
		out.Width = map[x86asm.Op]uint8{x86asm.CWD: 2, x86asm.CDQ: 4, x86asm.CQO: 8}[iop]
		return X86Cwd, true
	case x86asm.XLATB:
		out.Width = 1
		if len(args) == 1 {
			out.Args[0].Size = 1
		}
		return X86Xlat, true
	case x86asm.LAHF:
		return X86Lahf, true
	case x86asm.SAHF:
		return X86Sahf, true
	case x86asm.JMP, x86asm.CALL:
		if len(args) != 1 {
			return 0, false
		}
		out.Width = 8
		if isImm(0) {
			if iop == x86asm.JMP {
				return X86Jmp, true
			}
			return X86Call, true
		}
		if !isRM(0) || args[0].Size != 8 {
			return 0, false
		}
		if iop == x86asm.JMP {
			return X86JmpInd, true
		}
		return X86CallInd, true
	case x86asm.JRCXZ, x86asm.JECXZ:
		out.Width = 8
		out.Aux = 8
		if iop == x86asm.JECXZ {
			out.Aux = 4
		}
		return X86Jrcxz, true
	case x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		out.Width = 8
		out.Aux = uint32(inst.AddrSize / 8)
		return map[x86asm.Op]X86Op{x86asm.LOOP: X86Loop, x86asm.LOOPE: X86Loope, x86asm.LOOPNE: X86Loopne}[iop], true
	case x86asm.RET:
		out.Width = 8
		if len(args) == 1 {
			out.Imm &= 0xFFFF
		} else {
			out.Imm = 0
		}
		return X86Ret, true
	case x86asm.IRETQ:
		out.Width = 8
		return X86Iret, true
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ,
		x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ,
		x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ,
		x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ,
		x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ:
		name := iop.String()
		out.Width = map[byte]uint8{'B': 1, 'W': 2, 'D': 4, 'Q': 8}[name[len(name)-1]]
		out.Aux = uint32(inst.AddrSize / 8)
		out.Rep = rep
		out.Seg = 0
		for i := range args {
			if args[i].Kind == ArgMem {
				args[i].Size = out.Width
				if s := (args[i].Flags & ArgSegMask) >> ArgSegShift; s != 0 {
					out.Seg = s
				}
			}
		}
		switch name[:4] {
		case "MOVS":
			return X86Movs, true
		case "STOS":
			return X86Stos, true
		case "LODS":
			return X86Lods, true
		case "SCAS":
			return X86Scas, true
		}
		return X86Cmps, true
	case x86asm.CLC:
		return X86Clc, true
	case x86asm.STC:
		return X86Stc, true
	case x86asm.CMC:
		return X86Cmc, true
	case x86asm.CLD:
		return X86Cld, true
	case x86asm.STD:
		return X86Std, true
	case x86asm.SYSCALL:
		return X86Syscall, true
	case x86asm.CPUID:
		return X86Cpuid, true
	case x86asm.RDTSC:
		return X86Rdtsc, true
	case x86asm.PAUSE:
		return X86Pause, true
	case x86asm.NOP:
		out.NArgs = 0
		out.Args = [3]X86Arg{}
		return X86Nop, true
	case x86asm.MFENCE, x86asm.LFENCE, x86asm.SFENCE:
		return X86Fence, true
	case x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHNTA, x86asm.PREFETCHW:
		return X86Prefetch, true
	case x86asm.CLFLUSH:
		if len(args) != 1 || args[0].Kind != ArgMem {
			return 0, false
		}
		out.Args[0].Size = 1
		return X86Clflush, true
	case x86asm.INT:
		out.Imm &= 0xFF
		if out.Imm == 3 {
			return X86Int3, true
		}
		return X86Int, true
	case x86asm.UD2, x86asm.UD1, x86asm.UD0, x86asm.ICEBP, x86asm.INTO:
		return X86Ud, true
	case x86asm.CMPXCHG8B, x86asm.CMPXCHG16B:
		if len(args) != 1 || args[0].Kind != ArgMem {
			return 0, false
		}
		if iop == x86asm.CMPXCHG8B {
			out.Width = 8
			out.Args[0].Size = 8
			return X86Cmpxchg8b, true
		}
		out.Width = 16
		out.Args[0].Size = 16
		return X86Cmpxchg16b, true
	}
	return 0, false
}

// X86Specialize enables the specialised forms. Tests turn it off to run
// the generic implementations of the same instructions; it must not change
// while instructions are being decoded.
var X86Specialize = true

// specializeX86 replaces a generic op by its specialised form when the
// operands fit (see the X86MovRR … X86Jg constants). Memory operands of
// specialised forms never have Flags (no 0x67, no segment base).
func specializeX86(in *X86) {
	if !X86Specialize {
		return
	}
	if in.Op == X86Jcc {
		in.Op = X86Jo + X86Op(in.Cond)
		return
	}
	if in.Op == X86Setcc && in.NArgs == 1 {
		if a := &in.Args[0]; a.Kind == ArgReg && a.Size == 1 && a.Flags == 0 {
			in.Op = X86SetccR
		}
		return
	}
	if in.Lock || in.NArgs != 2 {
		return
	}
	if in.Width != 4 && in.Width != 8 {
		// Byte and word CMP and TEST write no register, so their
		// specialised forms (operands masked to the width, lazy flags
		// at the width) are exact at any width; the shifts by an
		// immediate merge their result into the register at 1 and 2
		// bytes; the others would have to merge too.
		if in.Width != 1 && in.Width != 2 {
			return
		}
		switch in.Op {
		case X86Cmp, X86Test, X86Shl, X86Shr, X86Sar:
		default:
			return
		}
	}
	d, s := &in.Args[0], &in.Args[1]
	if d.Flags != 0 || s.Flags != 0 {
		return // 0x67 or FS/GS: the generic op computes those addresses
	}
	dReg := d.Kind == ArgReg && d.Size == in.Width
	sReg := s.Kind == ArgReg && s.Size == in.Width
	switch in.Op {
	case X86Lea:
		if dReg {
			in.Op = X86LeaR
		}
	case X86Shl, X86Shr, X86Sar:
		cnt := uint64(in.Imm) & 31
		if in.Width == 8 {
			cnt = uint64(in.Imm) & 63
		}
		// A byte or word shift by its width or more leaves CF and OF
		// undefined on hardware: the generic op decides those.
		if dReg && s.Kind == ArgImm && cnt != 0 && (in.Width >= 4 || cnt < 8*uint64(in.Width)) {
			in.Imm = int64(cnt)
			in.Op = X86ShlRI + in.Op - X86Shl
			if in.Op > X86ShrRI {
				in.Op = X86SarRI
			}
		}
	case X86Movzx, X86Movsx:
		if dReg && s.Size < in.Width && (s.Size == 1 || s.Size == 2 || s.Size == 4) {
			switch s.Kind {
			case ArgMem:
				in.Op = X86MovzxLd + in.Op - X86Movzx
			case ArgReg:
				in.Op = X86MovzxRR + in.Op - X86Movzx
			}
		}
	case X86Cmov:
		if dReg && sReg {
			in.Op = X86CmovRR
		}
	case X86Mov:
		switch {
		case dReg && sReg:
			in.Op = X86MovRR
		case dReg && s.Kind == ArgImm:
			in.Op = X86MovRI
		case dReg && s.Kind == ArgMem && s.Size == in.Width:
			in.Op = X86MovLd
		case d.Kind == ArgMem && d.Size == in.Width && sReg:
			in.Op = X86MovSt
		case d.Kind == ArgMem && d.Size == in.Width && s.Kind == ArgImm:
			in.Op = X86MovStI
		}
	case X86Adc, X86Sbb:
		k := X86Op(7)
		if in.Op == X86Sbb {
			k = 8
		}
		switch {
		case dReg && sReg:
			in.Op = X86AddRR + 2*k
		case dReg && s.Kind == ArgImm:
			in.Op = X86AddRI + 2*k
		}
	case X86Add, X86Sub, X86Cmp, X86And, X86Or, X86Xor, X86Test:
		var k X86Op
		switch in.Op {
		case X86Sub:
			k = 1
		case X86Cmp:
			k = 2
		case X86And:
			k = 3
		case X86Or:
			k = 4
		case X86Xor:
			k = 5
		case X86Test:
			k = 6
		}
		switch {
		case dReg && sReg:
			in.Op = X86AddRR + 2*k
		case dReg && s.Kind == ArgImm:
			in.Op = X86AddRI + 2*k
		case dReg && s.Kind == ArgMem && s.Size == in.Width:
			in.Aux = uint32(in.Op)
			in.Op = X86AluRM
		case (in.Op == X86Cmp || in.Op == X86Test) && d.Kind == ArgMem && d.Size == in.Width && sReg:
			in.Aux = uint32(in.Op)
			in.Op = X86CmpMR
		case (in.Op == X86Cmp || in.Op == X86Test) && d.Kind == ArgMem && d.Size == in.Width && s.Kind == ArgImm:
			in.Aux = uint32(in.Op)
			in.Op = X86CmpMI
		}
	}
}

// x86SegStackWidth is the stack slot of PUSH/POP FS/GS: 8 bytes, or 2
// with an operand-size prefix.
func x86SegStackWidth(inst *x86asm.Inst) uint8 {
	if inst.DataSize == 16 {
		return 2
	}
	return 8
}
