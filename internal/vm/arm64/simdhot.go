package arm64

import "github.com/uvm-emu/uvm/internal/decode"

// The hot Advanced SIMD forms. Compiled C's vectorised loops (CoreMark's
// matrix code: SMLAL/SMLAL2 with 16-bit lanes, ADD/SUB .4s, the logic
// ops) are register-only: they read no memory, PC or NZCV and cannot
// fault. The loop sends them to execSIMDHot after one table load,
// without storing PC and NZCV for execSIMD and without execSIMD's and
// execVec's switches and vecThreeDiff's frame; the work is done by the
// same helpers (mulLong16, vecAddSubEq, vecLogic), so results are
// execSIMD's. The integer multiplies, min/max, the shifts by immediate
// and UZP1/UZP2 (vector, elements of 8 to 32 bits) have their own
// word-at-a-time code here (laneInt3, laneShiftImm, laneUnzip) instead of
// vecInt3's, vecShiftImm's and vecPermute's element loops; the tests
// compare them with execSIMD. Forms the helpers do not cover (by element, scalar, other
// element sizes) make execSIMDHot report false and take the usual path.

// simdHot marks the ops execSIMDHot handles (indexed by op - A64SIMDBase).
var simdHot [256]bool

func init() {
	for _, op := range []decode.A64Op{
		decode.A64VSMULL, decode.A64VUMULL, decode.A64VSMLAL, decode.A64VUMLAL, decode.A64VSMLSL, decode.A64VUMLSL,
		decode.A64VADD, decode.A64VSUB, decode.A64VCMEQ,
		decode.A64VAND, decode.A64VBIC, decode.A64VORR, decode.A64VORN,
		decode.A64VEOR, decode.A64VBSL, decode.A64VBIT, decode.A64VBIF,
		decode.A64VMUL, decode.A64VMLA, decode.A64VMLS,
		decode.A64VSMAX, decode.A64VSMIN, decode.A64VUMAX, decode.A64VUMIN,
		decode.A64VSSHR, decode.A64VUSHR, decode.A64VSSRA, decode.A64VUSRA, decode.A64VSHL,
		decode.A64VUZP1, decode.A64VUZP2,
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
	case decode.A64VMUL, decode.A64VMLA, decode.A64VMLS,
		decode.A64VSMAX, decode.A64VSMIN, decode.A64VUMAX, decode.A64VUMIN:
		return r.laneInt3(in)
	case decode.A64VSSHR, decode.A64VUSHR, decode.A64VSSRA, decode.A64VUSRA, decode.A64VSHL:
		return r.laneShiftImm(in)
	case decode.A64VUZP1, decode.A64VUZP2:
		return r.laneUnzip(in)
	default: // the logic ops
		r.vecLogic(in)
	}
	return true
}

// laneOnes is 1 in the lowest bit of every element of 8, 16, 32 or 64 bits
// (indexed by the log2 size in bytes): a lane mask times laneOnes
// replicates it into every lane.
var laneOnes = [4]uint64{0x0101010101010101, 0x0001000100010001, 0x0000000100000001, 1}

// swarAdd and swarSub add and subtract the lanes of x and y whose top bits
// are h, without carries between lanes.
func swarAdd(x, y, h uint64) uint64 { return (x&^h + y&^h) ^ (x^y)&h }
func swarSub(x, y, h uint64) uint64 { return ((x | h) - y&^h) ^ (x^^y)&h }

// laneInt3 does MUL, MLA, MLS, SMAX, SMIN, UMAX and UMIN (vector, not by
// element) on 8-, 16- and 32-bit lanes.
func (r *Regs) laneInt3(in *decode.A64) bool {
	if in.Flags&(decode.SIMDScalar|decode.SIMDByElem) != 0 || in.Size > 2 {
		return false
	}
	w := uint(8) << in.Size
	m := ^uint64(0) >> (64 - w)
	top := 64 - w // sign extension of a lane moved to the top
	h := highBits[in.Size]
	a, b, d := r.V[in.Rn&31], r.V[in.Rm&31], r.V[in.Rd&31]
	var res [2]uint64
	for k := 0; k <= int(in.Q&1); k++ {
		x, y := a[k], b[k]
		var o uint64
		switch in.Op {
		case decode.A64VMUL, decode.A64VMLA, decode.A64VMLS:
			for s := uint(0); s < 64; s += w {
				o |= (x >> s * (y >> s)) & m << s
			}
			switch in.Op {
			case decode.A64VMLA:
				o = swarAdd(d[k], o, h)
			case decode.A64VMLS:
				o = swarSub(d[k], o, h)
			}
		case decode.A64VSMAX, decode.A64VSMIN:
			for s := uint(0); s < 64; s += w {
				xs, ys := int64(x>>s<<top)>>top, int64(y>>s<<top)>>top
				if (xs < ys) == (in.Op == decode.A64VSMAX) {
					xs = ys
				}
				o |= uint64(xs) & m << s
			}
		default: // UMAX, UMIN
			for s := uint(0); s < 64; s += w {
				xe, ye := x>>s&m, y>>s&m
				if (xe < ye) == (in.Op == decode.A64VUMAX) {
					xe = ye
				}
				o |= xe << s
			}
		}
		res[k] = o
	}
	r.V[in.Rd&31] = res
	return true
}

// laneShiftImm does SSHR, USHR, SSRA, USRA and SHL (vector, by immediate)
// on lanes of any size.
func (r *Regs) laneShiftImm(in *decode.A64) bool {
	if in.Flags&decode.SIMDScalar != 0 {
		return false
	}
	w := uint(8) << in.Size
	m := ^uint64(0) >> (64 - w)
	top := 64 - w
	sh := uint(in.Imm) // right shifts: 1..w; SHL: 0..w-1
	h := highBits[in.Size]
	a, d := r.V[in.Rn&31], r.V[in.Rd&31]
	var res [2]uint64
	for k := 0; k <= int(in.Q&1); k++ {
		x := a[k]
		var o uint64
		switch in.Op {
		case decode.A64VSHL:
			o = x << sh & (m << sh & m * laneOnes[in.Size])
		case decode.A64VUSHR, decode.A64VUSRA:
			o = x >> sh & (m >> sh * laneOnes[in.Size])
		default: // SSHR, SSRA
			for s := uint(0); s < 64; s += w {
				o |= uint64(int64(x>>s<<top)>>(top+sh)) & m << s
			}
		}
		if in.Op == decode.A64VUSRA || in.Op == decode.A64VSSRA {
			o = swarAdd(d[k], o, h)
		}
		res[k] = o
	}
	r.V[in.Rd&31] = res
	return true
}

// laneUnzip does UZP1 and UZP2 on 8-, 16- and 32-bit elements: the even
// (UZP1) or odd (UZP2) elements of the concatenation Vn:Vm (Vn lowest).
func (r *Regs) laneUnzip(in *decode.A64) bool {
	if in.Size > 2 {
		return false
	}
	w := uint(8) << in.Size
	m := ^uint64(0) >> (64 - w)
	first := uint(0)
	if in.Op == decode.A64VUZP2 {
		first = w
	}
	a, b := r.V[in.Rn&31], r.V[in.Rm&31]
	if in.Q&1 == 0 { // 64-bit registers: the concatenation is Vn[0]:Vm[0]
		r.V[in.Rd&31] = [2]uint64{unzipWords(a[0], b[0], w, m, first), 0}
		return true
	}
	r.V[in.Rd&31] = [2]uint64{unzipWords(a[0], a[1], w, m, first), unzipWords(b[0], b[1], w, m, first)}
	return true
}

// unzipWords packs every other w-bit element of the 128 bits hi:lo,
// starting at bit first, into one word.
func unzipWords(lo, hi uint64, w uint, m uint64, first uint) uint64 {
	var o uint64
	pos := uint(0)
	for s := first; s < 64; s += 2 * w {
		o |= (lo >> s & m) << pos
		pos += w
	}
	for s := first; s < 64; s += 2 * w {
		o |= (hi >> s & m) << pos
		pos += w
	}
	return o
}
