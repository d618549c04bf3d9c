package uprobes

import (
	"encoding/binary"

	"github.com/uvm-emu/uvm/internal/decode"
)

// arm64 instruction analysis and simulation, after
// arch/arm64/kernel/probes/{uprobes.c,decode-insn.c,simulate-insn.c} and
// arch/arm64/include/asm/insn.h (spec §3.2). The masks are the kernel's
// __AARCH64_INSN_FUNCS(name, mask, value) pairs.

type a64Match struct{ mask, val uint32 }

func (m a64Match) is(w uint32) bool { return w&m.mask == m.val }

var (
	a64B        = a64Match{0xFC000000, 0x14000000}
	a64BL       = a64Match{0xFC000000, 0x94000000}
	a64CBZ      = a64Match{0x7F000000, 0x34000000}
	a64CBNZ     = a64Match{0x7F000000, 0x35000000}
	a64TBZ      = a64Match{0x7F000000, 0x36000000}
	a64TBNZ     = a64Match{0x7F000000, 0x37000000}
	a64BCond    = a64Match{0xFF000010, 0x54000000}
	a64BR       = a64Match{0xFFFFFC1F, 0xD61F0000}
	a64BRAuth   = a64Match{0xFEFFF800, 0xD61F0800}
	a64BLR      = a64Match{0xFFFFFC1F, 0xD63F0000}
	a64BLRAuth  = a64Match{0xFEFFF800, 0xD63F0800}
	a64RET      = a64Match{0xFFFFFC1F, 0xD65F0000}
	a64RETAuth  = a64Match{0xFFFFFBFF, 0xD65F0BFF}
	a64ERET     = a64Match{0xFFFFFFFF, 0xD69F03E0}
	a64ERETAuth = a64Match{0xFFFFFBFF, 0xD69F0BFF}
	a64Except   = a64Match{0xFF000000, 0xD4000000}
	a64Hint     = a64Match{0xFFFFF01F, 0xD503201F}
	a64MRS      = a64Match{0xFFF00000, 0xD5300000}
	a64MSRImm   = a64Match{0xFFF8F01F, 0xD500401F}
	a64MSRReg   = a64Match{0xFFF00000, 0xD5100000}
	a64ADR      = a64Match{0x9F000000, 0x10000000}
	a64ADRP     = a64Match{0x9F000000, 0x90000000}
	a64LDRLit   = a64Match{0xBF000000, 0x18000000}
	a64LDRSWLit = a64Match{0xFF000000, 0x98000000}
	a64PRFMLit  = a64Match{0xFF000000, 0xD8000000}
	a64Excl     = a64Match{0x3F800000, 0x08000000}
)

// A64NOP is the NOP encoding (HINT #0).
const A64NOP uint32 = 0xD503201F

// a64SpclRegDAIF is AARCH64_INSN_SPCLREG_DAIF (op0:op1:CRn:CRm:op2 of DAIF).
const a64SpclRegDAIF = 0xDA11

// a64SteppableHints are the CRm:op2 values (insn & 0xFE0) of the hints
// aarch64_insn_is_steppable_hint accepts: XPACLRI, PACIA1716, PACIB1716,
// PACIAZ, PACIASP, PACIBZ, PACIBSP, BTI, BTI c, BTI j, BTI jc, NOP.
var a64SteppableHints = [...]uint32{0x07 << 5, 0x08 << 5, 0x0A << 5, 0x18 << 5, 0x19 << 5, 0x1A << 5,
	0x1B << 5, 0x20 << 5, 0x22 << 5, 0x24 << 5, 0x26 << 5, 0x00 << 5}

func a64IsBranch(w uint32) bool {
	return a64B.is(w) || a64BL.is(w) || a64CBZ.is(w) || a64CBNZ.is(w) || a64TBZ.is(w) || a64TBNZ.is(w) ||
		a64RET.is(w) || a64RETAuth.is(w) || a64BR.is(w) || a64BRAuth.is(w) || a64BLR.is(w) ||
		a64BLRAuth.is(w) || a64BCond.is(w)
}

func a64UsesLiteral(w uint32) bool {
	return a64LDRLit.is(w) || a64LDRSWLit.is(w) || a64ADR.is(w) || a64ADRP.is(w) || a64PRFMLit.is(w)
}

// a64ClassBrSys is aarch64_get_insn_class(w) == AARCH64_INSN_CLS_BR_SYS
// (bits 28..25 = 101x).
func a64ClassBrSys(w uint32) bool { return (w>>25)&0xE == 0xA }

// a64Steppable is aarch64_insn_is_steppable. When it returns false, why
// says which rule refused the instruction.
func a64Steppable(w uint32) (ok bool, why string) {
	if a64ClassBrSys(w) {
		switch {
		case a64IsBranch(w):
			if a64BRAuth.is(w) || a64BLRAuth.is(w) || a64RETAuth.is(w) {
				return false, "pointer-authenticating branch: neither steppable nor simulated"
			}
			return false, "branch: writes the PC"
		case a64MSRImm.is(w), a64MSRReg.is(w):
			return false, "MSR: may change state single-stepping cannot handle"
		case a64Except.is(w):
			return false, "exception-generating instruction"
		case a64ERET.is(w), a64ERETAuth.is(w):
			return false, "exception return"
		case a64MRS.is(w):
			if (w&0x1FFFE0)>>5 == a64SpclRegDAIF {
				return false, "MRS of DAIF"
			}
			return true, ""
		case a64Hint.is(w):
			h := w & 0xFE0
			for _, s := range a64SteppableHints {
				if h == s {
					return true, ""
				}
			}
			return false, "hint not in the steppable whitelist"
		}
		return true, ""
	}
	if a64UsesLiteral(w) {
		return false, "uses a PC-relative literal"
	}
	if a64Excl.is(w) {
		return false, "load/store exclusive: the monitor would be lost"
	}
	return true, ""
}

// a64Sim names the simulation handler of a simulated instruction.
type a64Sim uint8

const (
	a64SimNone a64Sim = iota
	a64SimNOP
	a64SimBCond
	a64SimCBZ
	a64SimTBZ
	a64SimADR
	a64SimBBL
	a64SimBRBLRRET
)

var a64SimNames = [...]string{"", "nop", "b.cond", "cbz/cbnz", "tbz/tbnz", "adr/adrp", "b/bl", "br/blr/ret"}

// analyzeARM64 is arch_uprobe_analyze_insn + arm_probe_decode_insn.
func analyzeARM64(au *archUprobe, vaddr uint64, simNOP bool) (Errno, string) {
	if vaddr&3 != 0 {
		return EINVAL, "probe address not 4-byte aligned"
	}
	w := binary.LittleEndian.Uint32(au.insn[:4])
	au.ilen = 4
	if simNOP && w == A64NOP {
		au.simulate, au.a64 = true, a64SimNOP
		return 0, ""
	}
	ok, why := a64Steppable(w)
	if ok {
		return 0, ""
	}
	switch {
	case a64BCond.is(w):
		au.a64 = a64SimBCond
	case a64CBZ.is(w) || a64CBNZ.is(w):
		au.a64 = a64SimCBZ
	case a64TBZ.is(w) || a64TBNZ.is(w):
		au.a64 = a64SimTBZ
	case a64ADR.is(w) || a64ADRP.is(w):
		au.a64 = a64SimADR
	case a64B.is(w) || a64BL.is(w):
		au.a64 = a64SimBBL
	case a64BR.is(w) || a64BLR.is(w) || a64RET.is(w):
		au.a64 = a64SimBRBLRRET
	default:
		if a64LDRLit.is(w) || a64LDRSWLit.is(w) {
			why = "LDR/LDRSW (literal) is no longer simulated for uprobes (Oct 2024); " + why
		}
		return EINVAL, why
	}
	au.simulate = true
	return 0, ""
}

// A64Fate classifies an arm64 instruction as the kernel would at probe
// time: "simulate", "xol" or "reject", with the simulation handler or
// the reason.
func A64Fate(w uint32, simulateNOP bool) (fate, detail string) {
	var au archUprobe
	binary.LittleEndian.PutUint32(au.insn[:], w)
	if e, why := analyzeARM64(&au, 0, simulateNOP); e != 0 {
		return "reject", why
	}
	if au.simulate {
		return "simulate", a64SimNames[au.a64]
	}
	return "xol", ""
}

func a64Disasm(w uint32, pc uint64) string { return decode.DisasmA64(w, pc) }

func sext(v uint64, bits uint) int64 { return int64(v<<(64-bits)) >> (64 - bits) }

// Register helpers of simulate-insn.c: reads of 31 are zero, writes to
// 31 are dropped.
func a64GetX(r Regs, n uint32) uint64 {
	if n == 31 {
		return 0
	}
	return r.Reg(int(n))
}

func a64SetX(r Regs, n uint32, v uint64) {
	if n != 31 {
		r.SetReg(int(n), v)
	}
}

// a64CondHolds evaluates an A64 condition on PSTATE.NZCV.
func a64CondHolds(cond uint32, pstate uint64) bool {
	n := pstate>>31&1 == 1
	z := pstate>>30&1 == 1
	c := pstate>>29&1 == 1
	v := pstate>>28&1 == 1
	var r bool
	switch cond >> 1 {
	case 0:
		r = z
	case 1:
		r = c
	case 2:
		r = n
	case 3:
		r = v
	case 4:
		r = c && !z
	case 5:
		r = n == v
	case 6:
		r = n == v && !z
	case 7:
		return true // AL, NV
	}
	if cond&1 == 1 {
		r = !r
	}
	return r
}

// pstateBTYPE is PSR_BTYPE_MASK.
const pstateBTYPE = 0xC00

// simulateARM64 is simulateARM64 for t's thread: the NOP (the common
// probe site) through the bound register words, the rest as below.
func (t *Task) simulateARM64(au *archUprobe, r Regs) {
	if au.a64 != a64SimNOP {
		simulateARM64(au, r)
		return
	}
	// As simulateARM64's a64SimNOP case.
	t.setPC(r, t.pc(r)+4)
	if f := t.pflags(r); f&pstateBTYPE != 0 {
		t.setPflags(r, f&^pstateBTYPE)
	}
}

// simulateARM64 runs the simulation handler (arch_uprobe_skip_sstep →
// api.handler(insn, addr = pc, regs)). Memory is not touched: no
// simulated instruction accesses memory since LDR (literal) was dropped.
func simulateARM64(au *archUprobe, r Regs) {
	w := binary.LittleEndian.Uint32(au.insn[:4])
	addr := r.PC()
	switch au.a64 {
	case a64SimNOP:
		// arm64_skip_faulting_instruction: pc += 4, fast-forward a
		// pending user single step (uvm has no user single step), clear
		// PSTATE.BTYPE.
		r.SetPC(addr + 4)
		if f := r.Flags(); f&pstateBTYPE != 0 {
			r.SetFlags(f &^ pstateBTYPE)
		}
	case a64SimBCond:
		disp := int64(4)
		if a64CondHolds(w&0xF, r.Flags()) {
			disp = sext(uint64(w>>5&0x7FFFF)<<2, 21)
		}
		r.SetPC(addr + uint64(disp))
	case a64SimCBZ:
		var v uint64
		if w&(1<<31) != 0 {
			v = a64GetX(r, w&0x1F)
		} else {
			v = a64GetX(r, w&0x1F) & 0xFFFFFFFF
		}
		disp := int64(4)
		nz := w&(1<<24) != 0
		if (nz && v != 0) || (!nz && v == 0) {
			disp = sext(uint64(w>>5&0x7FFFF)<<2, 21)
		}
		r.SetPC(addr + uint64(disp))
	case a64SimTBZ:
		bit := (w&(1<<31))>>26 | (w>>19)&0x1F
		set := a64GetX(r, w&0x1F)&(1<<bit) != 0
		disp := int64(4)
		nz := w&(1<<24) != 0
		if set == nz {
			disp = sext(uint64(w>>5&0x3FFF)<<2, 16)
		}
		r.SetPC(addr + uint64(disp))
	case a64SimADR:
		imm := sext(uint64((w>>3)&0x1FFFFC|(w>>29)&0x3), 21)
		var v uint64
		if w&0x80000000 != 0 {
			v = uint64(imm<<12) + addr&^0xFFF
		} else {
			v = uint64(imm) + addr
		}
		a64SetX(r, w&0x1F, v)
		r.SetPC(r.PC() + 4)
	case a64SimBBL:
		disp := sext(uint64(w&0x03FFFFFF)<<2, 28)
		if w&(1<<31) != 0 {
			a64SetX(r, 30, addr+4)
		}
		r.SetPC(addr + uint64(disp))
	case a64SimBRBLRRET:
		// PC first, so that "blr x30" branches to the old x30.
		r.SetPC(a64GetX(r, w>>5&0x1F))
		if (w>>21)&3 == 1 {
			a64SetX(r, 30, addr+4)
		}
	default:
		panic("BUG: uprobes: simulateARM64 on an instruction without a handler")
	}
}
