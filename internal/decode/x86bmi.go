package decode

import (
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Decoding of the scalar integer extensions: BMI1/BMI2 (VEX-encoded GPR
// instructions, which x86asm decodes), FSGSBASE and RDTSCP (x86asm
// decodes them), and ADCX/ADOX/RDPID, which x86asm does not know: those
// are recognised from the raw bytes here (decodeX86Ext).

// x86ExtOps maps the x86asm ops of the extensions to uvm's ops.
var x86ExtOps = map[x86asm.Op]X86Op{
	x86asm.ANDN: X86Andn, x86asm.BEXTR: X86Bextr, x86asm.BLSI: X86Blsi, x86asm.BLSMSK: X86Blsmsk,
	x86asm.BLSR: X86Blsr, x86asm.BZHI: X86Bzhi, x86asm.MULX: X86Mulx, x86asm.PDEP: X86Pdep,
	x86asm.PEXT: X86Pext, x86asm.RORX: X86Rorx, x86asm.SARX: X86Sarx, x86asm.SHLX: X86Shlx,
	x86asm.SHRX:   X86Shrx,
	x86asm.RDTSCP: X86Rdtscp, x86asm.RDFSBASE: X86Rdfsbase, x86asm.RDGSBASE: X86Rdgsbase,
	x86asm.WRFSBASE: X86Wrfsbase, x86asm.WRGSBASE: X86Wrgsbase,
}

// translateX86Ext translates the extension instructions x86asm decodes
// (called by translateX86Int with the operands converted). ok is false for
// every other instruction.
func translateX86Ext(inst *x86asm.Inst, out *X86) (X86Op, bool) {
	op, ok := x86ExtOps[inst.Op]
	if !ok {
		return 0, false
	}
	args := out.Args[:out.NArgs]
	gpr := func(i int) bool {
		return i < len(args) && args[i].Kind == ArgReg && args[i].Size == out.Width
	}
	rm := func(i int) bool {
		return gpr(i) || (i < len(args) && args[i].Kind == ArgMem && args[i].Size == out.Width)
	}
	if op == X86Rdtscp {
		if len(args) != 0 {
			return 0, false
		}
		out.Width = 4
		return op, true
	}
	if out.Width != 4 && out.Width != 8 {
		return 0, false
	}
	if op >= X86Rdfsbase && op <= X86Wrgsbase {
		if len(args) != 1 || !gpr(0) {
			return 0, false
		}
		return op, true
	}
	// VEX-encoded BMI: VEX.L must be 0 (#UD otherwise).
	p := inst.Prefix[0]
	if byte(p) != 0xC4 || inst.Prefix[2]&4 != 0 {
		return 0, false
	}
	switch op {
	case X86Blsi, X86Blsmsk, X86Blsr:
		if len(args) != 2 || !gpr(0) || !rm(1) {
			return 0, false
		}
	case X86Rorx:
		if len(args) != 3 || !gpr(0) || !rm(1) || args[2].Kind != ArgImm {
			return 0, false
		}
		out.Imm &= 0xFF
	case X86Andn, X86Mulx, X86Pdep, X86Pext:
		if len(args) != 3 || !gpr(0) || !gpr(1) || !rm(2) {
			return 0, false
		}
	default: // BEXTR BZHI SARX SHLX SHRX: dst, r/m, vvvv
		if len(args) != 3 || !gpr(0) || !rm(1) || !gpr(2) {
			return 0, false
		}
	}
	return op, true
}

// x86ExtKind says which raw-decoded instruction rawX86Ext found.
type x86ExtKind uint8

const (
	extNone x86ExtKind = iota
	extAdcx
	extAdox
	extRdpid
)

// rawX86Ext recognises ADCX (66 [REX] 0F 38 F6 /r), ADOX (F3 [REX] 0F 38
// F6 /r) and RDPID (F3 [REX] 0F C7 /7, register form) from the raw bytes.
// For ADCX/ADOX, inst is the instruction decoded as ADC r, r/m (13 /r)
// with the same ModRM, SIB and displacement and the real length; for
// RDPID, reg is the destination. kind is extNone when mem is none of
// these; err is ErrTruncated when mem ends inside one, ErrUndefined for
// an invalid form (n is then its length, at least 1).
func rawX86Ext(mem []byte) (kind x86ExtKind, inst x86asm.Inst, reg uint8, n int, err error) {
	if len(mem) > maxX86Len {
		mem = mem[:maxX86Len]
	}
	i := 0
	var p66, pF3, pF2, lock bool
	for i < len(mem) && isLegacyPrefix(mem[i]) {
		switch mem[i] {
		case 0x66:
			p66 = true
		case 0xF3:
			pF3 = true
		case 0xF2:
			pF2 = true
		case 0xF0:
			lock = true
		}
		i++
	}
	if !(pF3 || p66) {
		return extNone, inst, 0, 0, nil
	}
	pfx := i
	rex := byte(0)
	if i < len(mem) && mem[i]&0xF0 == 0x40 {
		rex = mem[i]
		i++
	}
	// match reports whether the bytes at i start with b; trunc when mem
	// ends inside the pattern.
	match := func(b ...byte) (ok, trunc bool) {
		for k, c := range b {
			if i+k >= len(mem) {
				return true, true
			}
			if mem[i+k] != c {
				return false, false
			}
		}
		return true, false
	}
	if ok, trunc := match(0x0F, 0x38, 0xF6); ok {
		if lock || pF2 || p66 == pF3 {
			return extNone, inst, 0, 0, nil // not ADCX/ADOX: x86asm decides
		}
		if trunc {
			return extAdcx, inst, 0, 0, ErrTruncated
		}
		kind = extAdcx
		if pF3 {
			kind = extAdox
		}
		var syn [maxX86Len]byte
		sn := 0
		for _, b := range mem[:pfx] {
			if b != 0x66 && b != 0xF3 {
				syn[sn] = b
				sn++
			}
		}
		if rex != 0 {
			syn[sn] = rex
			sn++
		}
		syn[sn] = 0x13
		sn++
		rest := mem[i+3:]
		sn += copy(syn[sn:], rest)
		inst, derr := x86asm.Decode(syn[:sn], 64)
		if derr != nil || inst.Op != x86asm.ADC {
			if len(mem) < maxX86Len && x86Truncated(syn[:sn]) {
				return kind, inst, 0, 0, ErrTruncated
			}
			return kind, inst, 0, min(len(mem), i+3), ErrUndefined
		}
		full := inst.Len + (i + 3) - (sn - len(rest))
		if full > maxX86Len {
			return kind, inst, 0, maxX86Len, ErrUndefined
		}
		inst.Len = full
		return kind, inst, 0, full, nil
	}
	if ok, trunc := match(0x0F, 0xC7); ok && pF3 && !p66 && !pF2 {
		if trunc || i+2 >= len(mem) {
			if len(mem) >= maxX86Len {
				return extNone, inst, 0, 0, nil
			}
			return extRdpid, inst, 0, 0, ErrTruncated
		}
		modrm := mem[i+2]
		if modrm>>6 != 3 || (modrm>>3)&7 != 7 {
			return extNone, inst, 0, 0, nil
		}
		if lock {
			return extRdpid, inst, 0, i + 3, ErrUndefined
		}
		return extRdpid, inst, modrm&7 | (rex&1)<<3, i + 3, nil
	}
	return extNone, inst, 0, 0, nil
}

// decodeX86Ext decodes the instructions of rawX86Ext into out. handled is
// false when mem is none of them.
func decodeX86Ext(mem []byte, pc uint64, out *X86) (handled bool, err error) {
	kind, inst, reg, n, err := rawX86Ext(mem)
	switch {
	case kind == extNone:
		return false, nil
	case err == ErrUndefined:
		*out = X86{Len: uint8(max(n, 1))}
		return true, err
	case err != nil:
		return true, err
	case kind == extRdpid:
		*out = X86{Op: X86Rdpid, Len: uint8(n), Width: 8, NArgs: 1}
		out.Args[0] = X86Arg{Kind: ArgReg, Reg: reg, Index: NoReg, Size: 8}
		return true, nil
	}
	if err := translateX86(&inst, pc, out); err != nil {
		return true, err
	}
	out.Op, out.Aux = X86Adcx, 0
	if kind == extAdox {
		out.Op = X86Adox
	}
	return true, nil
}

// disasmX86Ext disassembles the instructions of rawX86Ext.
func disasmX86Ext(mem []byte, pc uint64) (string, bool) {
	kind, inst, reg, _, err := rawX86Ext(mem)
	if kind == extNone || err != nil {
		return "", false
	}
	if kind == extRdpid {
		r := x86asm.RAX + x86asm.Reg(reg)
		return "rdpid " + strings.ToLower(r.String()), true
	}
	s := x86asm.IntelSyntax(inst, pc, nil)
	name := "adcx"
	if kind == extAdox {
		name = "adox"
	}
	if len(s) > 3 && s[:3] == "adc" {
		return name + s[3:], true
	}
	return s, true
}
