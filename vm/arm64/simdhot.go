package arm64

import "github.com/uvm-emu/uvm/decode"

// The hot Advanced SIMD forms. Compiled C's vectorised loops (CoreMark's
// matrix code: SMLAL/SMLAL2 with 16-bit lanes, ADD/SUB .4s, the logic
// ops) are register-only: they read no memory, PC or NZCV and cannot
// fault. The loop sends them to execSIMDHot after one table load,
// without storing PC and NZCV for execSIMD and without execSIMD's and
// execVec's switches and vecThreeDiff's frame; the work is done by the
// same helpers (mulLong16, vecAddSubEq, vecLogic), so results are
// execSIMD's. Forms the helpers do not cover (by element, scalar, other
// element sizes) make execSIMDHot report false and take the usual path.

// simdHot marks the ops execSIMDHot handles (indexed by op - A64SIMDBase).
var simdHot [256]bool

func init() {
	for _, op := range []decode.A64Op{
		decode.A64VSMULL, decode.A64VUMULL, decode.A64VSMLAL, decode.A64VUMLAL, decode.A64VSMLSL, decode.A64VUMLSL,
		decode.A64VADD, decode.A64VSUB, decode.A64VCMEQ,
		decode.A64VAND, decode.A64VBIC, decode.A64VORR, decode.A64VORN,
		decode.A64VEOR, decode.A64VBSL, decode.A64VBIT, decode.A64VBIF,
	} {
		simdHot[op-decode.A64SIMDBase] = true
	}
}

// isSIMDHot reports whether op (>= A64SIMDBase) is one execSIMDHot may
// handle.
func isSIMDHot(op decode.A64Op) bool {
	i := uint(op - decode.A64SIMDBase)
	return i < uint(len(simdHot)) && simdHot[i]
}

// execSIMDHot executes in as execSIMD would and reports true, or reports
// false, changing nothing, when in is not one of its forms.
func (r *Regs) execSIMDHot(in *decode.A64) bool {
	switch in.Op {
	case decode.A64VSMULL, decode.A64VUMULL, decode.A64VSMLAL, decode.A64VUMLAL, decode.A64VSMLSL, decode.A64VUMLSL:
		return in.Size == 1 && in.Flags&(decode.SIMDScalar|decode.SIMDByElem) == 0 && r.mulLong16(in)
	case decode.A64VADD, decode.A64VSUB, decode.A64VCMEQ:
		if in.Flags&(decode.SIMDScalar|decode.SIMDByElem) != 0 {
			return false
		}
		r.vecAddSubEq(in)
	default: // the logic ops
		r.vecLogic(in)
	}
	return true
}
