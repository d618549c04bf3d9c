package decode

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/arch/arm64/arm64asm"
)

// arm64asmMu serialises arm64asm.Decode, which writes a package-level
// coverage slice on every call (a data race under -race otherwise).
var arm64asmMu sync.Mutex

// arm64asmDecode is arm64asm.Decode made safe for concurrent use.
func arm64asmDecode(raw uint32) (arm64asm.Inst, error) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], raw)
	arm64asmMu.Lock()
	defer arm64asmMu.Unlock()
	return arm64asm.Decode(b[:])
}

// DisasmA64 disassembles one A64 instruction at pc in GNU syntax (via
// golang.org/x/arch's arm64asm), with PC-relative operands shown as
// absolute addresses. Instructions arm64asm does not know but uvm
// implements (LDAPR, IC IVAU) get uvm's own rendering; anything else
// undecodable prints as ".inst 0x…". For messages and traces only: it is
// slow and allocates.
func DisasmA64(raw uint32, pc uint64) string {
	inst, err := arm64asmDecode(raw)
	if err != nil {
		in := DecodeA64(raw)
		switch in.Op {
		case A64LDAR:
			return fmt.Sprintf("ldapr%s %s, [%s]", [4]string{"b", "h", "", ""}[in.Size],
				a64RegName(in.Rd, in.Size == 3), a64RegName(in.Rn, true))
		case A64ICIVAU:
			return "ic ivau, " + a64RegName(in.Rd, true)
		case A64LDOP, A64CAS, A64CASP:
			return disasmLSE(&in)
		case A64LDAPUR, A64STLUR, A64FLAGM:
			return disasmFlagM(&in)
		case A64Undefined:
			return fmt.Sprintf(".inst 0x%08x", raw)
		}
		return fmt.Sprintf(".inst 0x%08x (%s)", raw, in.Op)
	}
	s := arm64asm.GNUSyntax(inst)
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		if rel, ok := a.(arm64asm.PCRel); ok {
			target := pc + uint64(rel)
			if inst.Op == arm64asm.ADRP {
				target = pc&^0xfff + uint64(rel)
			}
			s = strings.Replace(s, strings.ToLower(rel.String()), fmt.Sprintf("0x%x", target), 1)
		}
	}
	return s
}

// A64UndefinedMessage is the text of an undefined-instruction exit: why
// uvm does not execute the word at pc, and what it is.
func A64UndefinedMessage(in *A64, pc uint64) string {
	return A64UndefinedWhy(in) + ": " + DisasmA64(in.Raw, pc)
}

// a64RegName names a resolved general register.
func a64RegName(r uint8, x bool) string {
	switch {
	case r == A64RegSP && x:
		return "sp"
	case r == A64RegSP:
		return "wsp"
	case r >= A64RegZR && x:
		return "xzr"
	case r >= A64RegZR:
		return "wzr"
	case x:
		return fmt.Sprintf("x%d", r)
	}
	return fmt.Sprintf("w%d", r)
}
