package arm64

// Advanced SIMD extensions after Armv8.0 (decode/a64simdext.go): FEAT_RDM
// (HWCAP_ASIMDRDM: SQRDMLAH, SQRDMLSH) and FEAT_DotProd (HWCAP_ASIMDDP:
// SDOT, UDOT), after the Arm ARM pseudocode.

import "github.com/uvm-emu/uvm/decode"

// execSIMDExt executes the ops of decode/a64simdext.go.
func (r *Regs) execSIMDExt(in *decode.A64) simdResult {
	a, b, d := r.V[in.Rn], r.V[in.Rm], r.V[in.Rd]
	sz := in.Size
	if in.Flags&decode.SIMDByElem != 0 {
		b = dupElem(elem(&r.V[in.Rm], int(in.Imm), sz), sz)
	}
	var res [2]uint64
	n := nElems(in, sz)
	switch in.Op {
	case decode.A64VSQRDMLAH, decode.A64VSQRDMLSH:
		esize := uint(8) << sz
		for i := 0; i < n; i++ {
			// (e3 << esize ± 2*e1*e2 + 1<<(esize-1)) >> esize, computed
			// without overflow as e3 + ((±e1*e2 + 1<<(esize-2)) >> (esize-1)).
			p := sext(elem(&a, i, sz), sz) * sext(elem(&b, i, sz), sz)
			if in.Op == decode.A64VSQRDMLSH {
				p = -p
			}
			v := sext(elem(&d, i, sz), sz) + (p+1<<(esize-2))>>(esize-1)
			setElem(&res, i, sz, r.satS(v, sz))
		}
	case decode.A64VSDOT, decode.A64VUDOT:
		for i := 0; i < n; i++ {
			acc := uint32(elem(&d, i, 2))
			for k := 0; k < 4; k++ {
				x, y := elem(&a, 4*i+k, 0), elem(&b, 4*i+k, 0)
				if in.Op == decode.A64VSDOT {
					acc += uint32(int32(int8(x)) * int32(int8(y)))
				} else {
					acc += uint32(x * y)
				}
			}
			setElem(&res, i, 2, uint64(acc))
		}
	default:
		return simdUndefined
	}
	r.setVec(in.Rd, res, in.Q)
	return simdOK
}
