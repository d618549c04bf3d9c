package arm64

import (
	"math"
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// execVec executes the Advanced SIMD ops other than copies, immediates,
// three-same FP and structure loads/stores.
func (r *Regs) execVec(in *decode.A64) simdResult {
	switch in.Op {
	case decode.A64VAND, decode.A64VBIC, decode.A64VORR, decode.A64VORN,
		decode.A64VEOR, decode.A64VBSL, decode.A64VBIT, decode.A64VBIF:
		r.vecLogic(in)
	case decode.A64VADD, decode.A64VSUB, decode.A64VCMEQ:
		if in.Flags&(decode.SIMDScalar|decode.SIMDByElem) == 0 {
			r.vecAddSubEq(in)
			break
		}
		r.vecInt3(in)
	case decode.A64VADDP, decode.A64VSMAXP, decode.A64VUMAXP, decode.A64VSMINP, decode.A64VUMINP:
		r.vecPairwise(in)
	case decode.A64VSADDL, decode.A64VUADDL, decode.A64VSADDW, decode.A64VUADDW,
		decode.A64VSSUBL, decode.A64VUSUBL, decode.A64VSSUBW, decode.A64VUSUBW,
		decode.A64VADDHN, decode.A64VRADDHN, decode.A64VSUBHN, decode.A64VRSUBHN,
		decode.A64VSABAL, decode.A64VUABAL, decode.A64VSABDL, decode.A64VUABDL,
		decode.A64VSMLAL, decode.A64VUMLAL, decode.A64VSMLSL, decode.A64VUMLSL,
		decode.A64VSMULL, decode.A64VUMULL, decode.A64VPMULL,
		decode.A64VSQDMULL, decode.A64VSQDMLAL, decode.A64VSQDMLSL:
		r.vecThreeDiff(in)
	case decode.A64VREV64, decode.A64VREV32, decode.A64VREV16:
		r.vecRev(in)
	case decode.A64VSADDLP, decode.A64VUADDLP, decode.A64VSADALP, decode.A64VUADALP:
		r.vecAddLongPairwise(in)
	case decode.A64VXTN, decode.A64VSQXTN, decode.A64VUQXTN, decode.A64VSQXTUN:
		r.vecNarrow(in)
	case decode.A64VSHLL, decode.A64VSSHLL, decode.A64VUSHLL:
		r.vecWidenShift(in)
	case decode.A64VSHRN, decode.A64VRSHRN, decode.A64VSQSHRUN, decode.A64VSQRSHRUN,
		decode.A64VSQSHRN, decode.A64VUQSHRN, decode.A64VSQRSHRN, decode.A64VUQRSHRN:
		r.vecShiftNarrow(in)
	case decode.A64VSADDLV, decode.A64VUADDLV, decode.A64VSMAXV, decode.A64VUMAXV,
		decode.A64VSMINV, decode.A64VUMINV, decode.A64VADDV:
		r.vecAcross(in)
	case decode.A64VFMAXNMV, decode.A64VFMINNMV, decode.A64VFMAXV, decode.A64VFMINV:
		r.vecFPAcross(in)
	case decode.A64VFCVTN, decode.A64VFCVTXN, decode.A64VFCVTL:
		r.vecFPConvert(in)
	case decode.A64VFRINT, decode.A64VFCVTI, decode.A64VICVTF, decode.A64VFCMGT0, decode.A64VFCMGE0,
		decode.A64VFCMEQ0, decode.A64VFCMLE0, decode.A64VFCMLT0, decode.A64VFABS, decode.A64VFNEG,
		decode.A64VFSQRT, decode.A64VURECPE, decode.A64VURSQRTE, decode.A64VFRECPE, decode.A64VFRSQRTE,
		decode.A64VFRECPX:
		r.vecFP2(in)
	case decode.A64VUZP1, decode.A64VUZP2, decode.A64VTRN1, decode.A64VTRN2, decode.A64VZIP1, decode.A64VZIP2:
		r.vecPermute(in)
	case decode.A64VEXT:
		r.vecExt(in)
	case decode.A64VTBL, decode.A64VTBX:
		r.vecTable(in)
	case decode.A64VCNT, decode.A64VNOT, decode.A64VRBIT, decode.A64VCLS, decode.A64VCLZ,
		decode.A64VSQABS, decode.A64VSQNEG, decode.A64VABS, decode.A64VNEG,
		decode.A64VCMGT0, decode.A64VCMGE0, decode.A64VCMEQ0, decode.A64VCMLE0, decode.A64VCMLT0,
		decode.A64VSUQADD, decode.A64VUSQADD:
		r.vecInt2(in)
	case decode.A64VSSHR, decode.A64VUSHR, decode.A64VSSRA, decode.A64VUSRA, decode.A64VSRSHR,
		decode.A64VURSHR, decode.A64VSRSRA, decode.A64VURSRA, decode.A64VSRI, decode.A64VSHL,
		decode.A64VSLI, decode.A64VSQSHLU, decode.A64VSQSHLI, decode.A64VUQSHLI:
		r.vecShiftImm(in)
	default:
		if in.Op >= decode.A64VSHADD && in.Op <= decode.A64VADDP {
			r.vecInt3(in)
			break
		}
		return simdUndefined
	}
	return simdOK
}

// ---- bitwise and simple lane arithmetic on whole words ----

func (r *Regs) vecLogic(in *decode.A64) {
	a, b, d := r.V[in.Rn], r.V[in.Rm], r.V[in.Rd]
	var res [2]uint64
	for i := 0; i < 2; i++ {
		x, y, z := a[i], b[i], d[i]
		switch in.Op {
		case decode.A64VAND:
			res[i] = x & y
		case decode.A64VBIC:
			res[i] = x &^ y
		case decode.A64VORR:
			res[i] = x | y
		case decode.A64VORN:
			res[i] = x | ^y
		case decode.A64VEOR:
			res[i] = x ^ y
		case decode.A64VBSL:
			res[i] = y ^ (y^x)&z
		case decode.A64VBIT:
			res[i] = z ^ (z^x)&y
		case decode.A64VBIF:
			res[i] = z ^ (z^x)&^y
		}
	}
	r.setVec(in.Rd, res, in.Q)
}

// highBits is the mask of the top bit of every element.
var highBits = [4]uint64{0x8080808080808080, 0x8000800080008000, 0x8000000080000000, 0x8000000000000000}

// vecAddSubEq does ADD, SUB and CMEQ (register) lane-parallel (SWAR).
func (r *Regs) vecAddSubEq(in *decode.A64) {
	a, b := r.V[in.Rn], r.V[in.Rm]
	h := highBits[in.Size]
	var res [2]uint64
	for i := 0; i < 2; i++ {
		x, y := a[i], b[i]
		switch in.Op {
		case decode.A64VADD:
			res[i] = (x&^h + y&^h) ^ (x^y)&h
		case decode.A64VSUB:
			res[i] = (x | h - y&^h) ^ (x^^y)&h
		default: // CMEQ
			res[i] = eqZeroLanes(x^y, in.Size)
		}
	}
	r.setVec(in.Rd, res, in.Q)
}

// eqZeroLanes returns all-ones in every element of t that is zero.
func eqZeroLanes(t uint64, sz uint8) uint64 {
	h := highBits[sz]
	// an element is non-zero iff its high bit or the carry out of its low
	// bits (adding all-ones below the high bit) is set
	nz := ((t&^h + ^h) | t) & h
	eq := ^nz & h
	return eq >> (8<<sz - 1) * esizeMask(sz)
}

// popcountBytes counts the set bits of every byte.
func popcountBytes(x uint64) uint64 {
	x -= x >> 1 & 0x5555555555555555
	x = x&0x3333333333333333 + x>>2&0x3333333333333333
	return (x + x>>4) & 0x0f0f0f0f0f0f0f0f
}

// ---- three registers, same type ----

func (r *Regs) vecInt3(in *decode.A64) {
	sz := in.Size
	a, b, d := r.V[in.Rn], r.V[in.Rm], r.V[in.Rd]
	if in.Flags&decode.SIMDByElem != 0 {
		b = dupElem(elem(&r.V[in.Rm], int(in.Imm), sz), sz)
	}
	n := nElems(in, sz)
	var res [2]uint64
	for i := 0; i < n; i++ {
		setElem(&res, i, sz, r.int3(in.Op, elem(&a, i, sz), elem(&b, i, sz), elem(&d, i, sz), sz))
	}
	r.setVec(in.Rd, res, in.Q)
}

// int3 computes one element of a three-same integer op; d is the old
// destination element (accumulating ops).
func (r *Regs) int3(op decode.A64Op, x, y, d uint64, sz uint8) uint64 {
	sx, sy := sext(x, sz), sext(y, sz)
	switch op {
	case decode.A64VSHADD:
		return uint64((sx + sy) >> 1)
	case decode.A64VUHADD:
		return (x + y) >> 1
	case decode.A64VSRHADD:
		return uint64((sx + sy + 1) >> 1)
	case decode.A64VURHADD:
		return (x + y + 1) >> 1
	case decode.A64VSHSUB:
		return uint64((sx - sy) >> 1)
	case decode.A64VUHSUB:
		return uint64((int64(x) - int64(y)) >> 1)
	case decode.A64VSQADD:
		return r.sqadd(sx, sy, sz)
	case decode.A64VUQADD:
		s, c := bits.Add64(x, y, 0)
		if c != 0 || s > esizeMask(sz) {
			r.FPSR |= fpsrQC
			return esizeMask(sz)
		}
		return s
	case decode.A64VSQSUB:
		return r.sqsub(sx, sy, sz)
	case decode.A64VUQSUB:
		if y > x {
			r.FPSR |= fpsrQC
			return 0
		}
		return x - y
	case decode.A64VCMGT:
		return boolMask(sx > sy, sz)
	case decode.A64VCMHI:
		return boolMask(x > y, sz)
	case decode.A64VCMGE:
		return boolMask(sx >= sy, sz)
	case decode.A64VCMHS:
		return boolMask(x >= y, sz)
	case decode.A64VCMEQ:
		return boolMask(x == y, sz)
	case decode.A64VCMTST:
		return boolMask(x&y != 0, sz)
	case decode.A64VSSHL:
		return r.shiftReg(x, y, sz, false, false, false)
	case decode.A64VUSHL:
		return r.shiftReg(x, y, sz, true, false, false)
	case decode.A64VSRSHL:
		return r.shiftReg(x, y, sz, false, true, false)
	case decode.A64VURSHL:
		return r.shiftReg(x, y, sz, true, true, false)
	case decode.A64VSQSHL:
		return r.shiftReg(x, y, sz, false, false, true)
	case decode.A64VUQSHL:
		return r.shiftReg(x, y, sz, true, false, true)
	case decode.A64VSQRSHL:
		return r.shiftReg(x, y, sz, false, true, true)
	case decode.A64VUQRSHL:
		return r.shiftReg(x, y, sz, true, true, true)
	case decode.A64VSMAX:
		if sx > sy {
			return x
		}
		return y
	case decode.A64VUMAX:
		if x > y {
			return x
		}
		return y
	case decode.A64VSMIN:
		if sx < sy {
			return x
		}
		return y
	case decode.A64VUMIN:
		if x < y {
			return x
		}
		return y
	case decode.A64VSABD:
		return absDiffS(sx, sy)
	case decode.A64VUABD:
		return absDiffU(x, y)
	case decode.A64VSABA:
		return d + absDiffS(sx, sy)
	case decode.A64VUABA:
		return d + absDiffU(x, y)
	case decode.A64VADD:
		return x + y
	case decode.A64VSUB:
		return x - y
	case decode.A64VMLA:
		return d + x*y
	case decode.A64VMLS:
		return d - x*y
	case decode.A64VMUL:
		return x * y
	case decode.A64VPMUL:
		return clmul(x, y) & 0xff
	case decode.A64VSQDMULH, decode.A64VSQRDMULH:
		esize := uint(8) << sz
		if sx == -1<<(esize-1) && sy == sx {
			r.FPSR |= fpsrQC
			return esizeMask(sz) >> 1
		}
		p := 2 * sx * sy
		if op == decode.A64VSQRDMULH {
			p += 1 << (esize - 1)
		}
		return uint64(p >> esize)
	}
	return 0
}

func absDiffS(x, y int64) uint64 {
	if x > y {
		return uint64(x - y)
	}
	return uint64(y - x)
}

func absDiffU(x, y uint64) uint64 {
	if x > y {
		return x - y
	}
	return y - x
}

// clmul is a carry-less multiplication of two values below 2^32.
func clmul(x, y uint64) uint64 {
	var p uint64
	for i := 0; i < 32; i++ {
		if y>>i&1 != 0 {
			p ^= x << i
		}
	}
	return p
}

// satS saturates a signed value to an element of size sz (setting QC).
func (r *Regs) satS(v int64, sz uint8) uint64 {
	if sz == 3 {
		return uint64(v)
	}
	w := uint(8) << sz
	lo, hi := int64(-1)<<(w-1), int64(1)<<(w-1)-1
	switch {
	case v < lo:
		r.FPSR |= fpsrQC
		return uint64(lo) & esizeMask(sz)
	case v > hi:
		r.FPSR |= fpsrQC
		return uint64(hi)
	}
	return uint64(v) & esizeMask(sz)
}

// satU saturates a signed value to an unsigned element of size sz.
func (r *Regs) satU(v int64, sz uint8) uint64 {
	switch {
	case v < 0:
		r.FPSR |= fpsrQC
		return 0
	case sz < 3 && uint64(v) > esizeMask(sz):
		r.FPSR |= fpsrQC
		return esizeMask(sz)
	}
	return uint64(v)
}

func (r *Regs) sqadd(x, y int64, sz uint8) uint64 {
	s := x + y
	if sz == 3 && (x >= 0) == (y >= 0) && (s >= 0) != (x >= 0) {
		r.FPSR |= fpsrQC
		if x >= 0 {
			return math.MaxInt64
		}
		return 1 << 63
	}
	return r.satS(s, sz)
}

func (r *Regs) sqsub(x, y int64, sz uint8) uint64 {
	s := x - y
	if sz == 3 && (x >= 0) != (y >= 0) && (s >= 0) != (x >= 0) {
		r.FPSR |= fpsrQC
		if x >= 0 {
			return math.MaxInt64
		}
		return 1 << 63
	}
	return r.satS(s, sz)
}

// shiftReg is the SSHL/USHL/SRSHL/URSHL/SQSHL/UQSHL/SQRSHL/UQRSHL element
// operation: shift x by the signed low byte of y.
func (r *Regs) shiftReg(x, y uint64, sz uint8, unsigned, round, sat bool) uint64 {
	sh := int(int8(y))
	if sh >= 0 {
		if sat {
			return r.satShl(x, sh, sz, unsigned, unsigned)
		}
		if sh >= 64 {
			return 0
		}
		return x << uint(sh) & esizeMask(sz)
	}
	s := uint(-sh)
	var v uint64
	if unsigned {
		v = x >> s
		if round {
			v += x >> (s - 1) & 1
		}
	} else {
		sx := sext(x, sz)
		w := sx >> s
		if round {
			w += sx >> (s - 1) & 1
		}
		v = uint64(w)
	}
	return v & esizeMask(sz)
}

// satShl is a saturating left shift (SQSHL, UQSHL, SQSHLU): the source is
// unsigned when srcUnsigned, the result saturates to an unsigned range
// when dstUnsigned.
func (r *Regs) satShl(x uint64, sh int, sz uint8, srcUnsigned, dstUnsigned bool) uint64 {
	esize := 8 << sz
	if srcUnsigned {
		if x == 0 {
			return 0
		}
		if sh >= esize || x>>uint(esize-sh) != 0 {
			r.FPSR |= fpsrQC
			return esizeMask(sz)
		}
		return x << uint(sh)
	}
	v := sext(x, sz)
	if v == 0 {
		return 0
	}
	if dstUnsigned {
		if v < 0 {
			r.FPSR |= fpsrQC
			return 0
		}
		return r.satShl(x, sh, sz, true, true)
	}
	if sh >= esize {
		return r.satSign(v, sz)
	}
	w := v << uint(sh)
	if w>>uint(sh) != v || sext(uint64(w)&esizeMask(sz), sz) != w {
		return r.satSign(v, sz)
	}
	return uint64(w) & esizeMask(sz)
}

// satSign returns the saturated value with the sign of v (setting QC).
func (r *Regs) satSign(v int64, sz uint8) uint64 {
	r.FPSR |= fpsrQC
	if v < 0 {
		return (esizeMask(sz) >> 1) + 1
	}
	return esizeMask(sz) >> 1
}

// ---- pairwise and across lanes ----

func (r *Regs) vecPairwise(in *decode.A64) {
	sz := in.Size
	a, b := r.V[in.Rn], r.V[in.Rm]
	if in.Flags&decode.SIMDScalar != 0 { // ADDP Dd, Vn.2D
		r.V[in.Rd] = [2]uint64{a[0] + a[1], 0}
		return
	}
	var res [2]uint64
	switch {
	case sz == 3:
		res[0] = pair64(in.Op, a[0], a[1])
		res[1] = pair64(in.Op, b[0], b[1])
	case in.Q == 1:
		res[0] = pairWord(in.Op, a[0], sz) | pairWord(in.Op, a[1], sz)<<32
		res[1] = pairWord(in.Op, b[0], sz) | pairWord(in.Op, b[1], sz)<<32
	default:
		res[0] = pairWord(in.Op, a[0], sz) | pairWord(in.Op, b[0], sz)<<32
	}
	r.V[in.Rd] = res
}

func pair64(op decode.A64Op, x, y uint64) uint64 {
	switch op {
	case decode.A64VADDP:
		return x + y
	case decode.A64VUMAXP:
		return max(x, y)
	case decode.A64VUMINP:
		return min(x, y)
	case decode.A64VSMAXP:
		return uint64(max(int64(x), int64(y)))
	}
	return uint64(min(int64(x), int64(y)))
}

// evenMask[sz] selects the even elements of size sz of a word, widened to
// lanes of twice the size.
var evenMask = [3]uint64{0x00ff00ff00ff00ff, 0x0000ffff0000ffff, 0x00000000ffffffff}

// pairWord applies a pairwise op to the adjacent element pairs of one
// 64-bit word (elements of size sz < 3), returning the packed 32-bit
// result. It works on all pairs at once in lanes of twice the element
// size.
func pairWord(op decode.A64Op, w uint64, sz uint8) uint64 {
	esize := uint(8) << sz
	m := evenMask[sz]
	ev, od := w&m, w>>esize&m
	var z uint64
	switch op {
	case decode.A64VADDP:
		z = ev + od
	default:
		signed := op == decode.A64VSMAXP || op == decode.A64VSMINP
		sign := (m >> 1) ^ m // the top bit of each element
		if signed {
			// biasing turns signed order into unsigned order
			ev ^= sign
			od ^= sign
		}
		hb := m << 1 &^ m // bit esize of every lane
		ge := ((ev | hb) - od) & hb
		mask := ge >> esize * (uint64(1)<<esize - 1)
		if op == decode.A64VUMAXP || op == decode.A64VSMAXP {
			z = ev&mask | od&^mask
		} else {
			z = od&mask | ev&^mask
		}
		if signed {
			z ^= sign
		}
	}
	return packLow(z, sz)
}

// packLow packs the low halves of the lanes of twice size sz into 32 bits.
func packLow(w uint64, sz uint8) uint64 {
	switch sz {
	case 0:
		w &= 0x00ff00ff00ff00ff
		w = (w | w>>8) & 0x0000ffff0000ffff
		w = (w | w>>16) & 0xffffffff
	case 1:
		w &= 0x0000ffff0000ffff
		w = (w | w>>16) & 0xffffffff
	default:
		w &= 0xffffffff
	}
	return w
}

func (r *Regs) vecAcross(in *decode.A64) {
	sz := in.Size
	a := r.V[in.Rn]
	n := (8 << in.Q) >> sz
	var acc uint64
	switch in.Op {
	case decode.A64VADDV, decode.A64VUADDLV:
		if sz == 0 {
			acc = sumBytes(a[0])
			if in.Q == 1 {
				acc += sumBytes(a[1])
			}
			break
		}
		for i := 0; i < n; i++ {
			acc += elem(&a, i, sz)
		}
	case decode.A64VSADDLV:
		var s int64
		for i := 0; i < n; i++ {
			s += sext(elem(&a, i, sz), sz)
		}
		acc = uint64(s)
	case decode.A64VUMAXV, decode.A64VUMINV:
		acc = elem(&a, 0, sz)
		for i := 1; i < n; i++ {
			if e := elem(&a, i, sz); (e > acc) == (in.Op == decode.A64VUMAXV) && e != acc {
				acc = e
			}
		}
	case decode.A64VSMAXV, decode.A64VSMINV:
		s := sext(elem(&a, 0, sz), sz)
		for i := 1; i < n; i++ {
			if e := sext(elem(&a, i, sz), sz); (e > s) == (in.Op == decode.A64VSMAXV) && e != s {
				s = e
			}
		}
		acc = uint64(s)
	}
	switch in.Op {
	case decode.A64VSADDLV, decode.A64VUADDLV:
		acc &= esizeMask(sz + 1)
	default:
		acc &= esizeMask(sz)
	}
	r.V[in.Rd] = [2]uint64{acc, 0}
}

// sumBytes adds the eight bytes of x.
func sumBytes(x uint64) uint64 {
	s := x&0x00ff00ff00ff00ff + x>>8&0x00ff00ff00ff00ff
	return s * 0x0001000100010001 >> 48
}

// ---- three registers, different types ----

func (r *Regs) vecThreeDiff(in *decode.A64) {
	if in.Size == 1 && in.Flags&(decode.SIMDScalar|decode.SIMDByElem) == 0 && r.mulLong16(in) {
		return
	}
	sz := in.Size // narrow size
	wz := sz + 1
	a, b, d := r.V[in.Rn], r.V[in.Rm], r.V[in.Rd]
	byElem := in.Flags&decode.SIMDByElem != 0
	var bel uint64
	if byElem {
		bel = elem(&r.V[in.Rm], int(in.Imm), sz)
	}
	n := 8 >> sz // narrow elements in 64 bits
	if in.Flags&decode.SIMDScalar != 0 {
		n = 1
	}
	half := n * int(in.Q) // element offset of the upper half ("2" forms)
	var res [2]uint64
	switch in.Op {
	case decode.A64VADDHN, decode.A64VRADDHN, decode.A64VSUBHN, decode.A64VRSUBHN:
		var part [2]uint64
		esize := uint(8) << sz
		for i := 0; i < n; i++ {
			x, y := elem(&a, i, wz), elem(&b, i, wz)
			var s uint64
			if in.Op == decode.A64VADDHN || in.Op == decode.A64VRADDHN {
				s = x + y
			} else {
				s = x - y
			}
			if in.Op == decode.A64VRADDHN || in.Op == decode.A64VRSUBHN {
				s += 1 << (esize - 1)
			}
			setElem(&part, i, sz, s>>esize)
		}
		r.writeNarrow(in.Rd, part[0], in.Q)
		return
	}
	for i := 0; i < n; i++ {
		var x, y uint64
		switch in.Op {
		case decode.A64VSADDW, decode.A64VUADDW, decode.A64VSSUBW, decode.A64VUSUBW:
			x = elem(&a, i, wz)
		default:
			x = elem(&a, i+half, sz)
		}
		if byElem {
			y = bel
		} else {
			y = elem(&b, i+half, sz)
		}
		sx, sy := sext(x, sz), sext(y, sz)
		dw := elem(&d, i, wz)
		var z uint64
		switch in.Op {
		case decode.A64VSADDL:
			z = uint64(sx + sy)
		case decode.A64VUADDL:
			z = x + y
		case decode.A64VSADDW:
			z = x + uint64(sy)
		case decode.A64VUADDW:
			z = x + y
		case decode.A64VSSUBL:
			z = uint64(sx - sy)
		case decode.A64VUSUBL:
			z = x - y
		case decode.A64VSSUBW:
			z = x - uint64(sy)
		case decode.A64VUSUBW:
			z = x - y
		case decode.A64VSABAL:
			z = dw + absDiffS(sx, sy)
		case decode.A64VUABAL:
			z = dw + absDiffU(x, y)
		case decode.A64VSABDL:
			z = absDiffS(sx, sy)
		case decode.A64VUABDL:
			z = absDiffU(x, y)
		case decode.A64VSMLAL:
			z = dw + uint64(sx*sy)
		case decode.A64VUMLAL:
			z = dw + x*y
		case decode.A64VSMLSL:
			z = dw - uint64(sx*sy)
		case decode.A64VUMLSL:
			z = dw - x*y
		case decode.A64VSMULL:
			z = uint64(sx * sy)
		case decode.A64VUMULL:
			z = x * y
		case decode.A64VPMULL:
			z = clmul(x, y)
		case decode.A64VSQDMULL, decode.A64VSQDMLAL, decode.A64VSQDMLSL:
			var p int64
			if sx == -1<<(8<<sz-1) && sy == sx {
				r.FPSR |= fpsrQC
				p = int64(esizeMask(wz) >> 1)
			} else {
				p = 2 * sx * sy
			}
			switch in.Op {
			case decode.A64VSQDMULL:
				z = uint64(p) & esizeMask(wz)
			case decode.A64VSQDMLAL:
				z = r.sqadd(sext(dw, wz), p, wz)
			default:
				z = r.sqsub(sext(dw, wz), p, wz)
			}
		}
		setElem(&res, i, wz, z)
	}
	if in.Flags&decode.SIMDScalar != 0 {
		r.V[in.Rd] = [2]uint64{res[0], 0}
		return
	}
	r.V[in.Rd] = res
}

// ---- two-register miscellaneous ----

func (r *Regs) vecInt2(in *decode.A64) {
	sz := in.Size
	a, d := r.V[in.Rn], r.V[in.Rd]
	switch in.Op {
	case decode.A64VNOT:
		r.setVec(in.Rd, [2]uint64{^a[0], ^a[1]}, in.Q)
		return
	case decode.A64VCNT:
		r.setVec(in.Rd, [2]uint64{popcountBytes(a[0]), popcountBytes(a[1])}, in.Q)
		return
	case decode.A64VCMEQ0:
		if in.Flags&decode.SIMDScalar == 0 {
			r.setVec(in.Rd, [2]uint64{eqZeroLanes(a[0], sz), eqZeroLanes(a[1], sz)}, in.Q)
			return
		}
	}
	n := nElems(in, sz)
	var res [2]uint64
	for i := 0; i < n; i++ {
		x := elem(&a, i, sz)
		sx := sext(x, sz)
		var z uint64
		switch in.Op {
		case decode.A64VCNT:
			z = uint64(bits.OnesCount8(uint8(x)))
		case decode.A64VRBIT:
			z = uint64(bits.Reverse8(uint8(x)))
		case decode.A64VCLZ:
			z = uint64(bits.LeadingZeros64(x) - (64 - 8<<sz))
		case decode.A64VCLS:
			t := uint64(sx^sx>>63) & esizeMask(sz)
			z = uint64(bits.LeadingZeros64(t) - (64 - 8<<sz) - 1)
		case decode.A64VABS:
			if sx < 0 {
				z = uint64(-sx)
			} else {
				z = x
			}
		case decode.A64VNEG:
			z = uint64(-sx)
		case decode.A64VSQABS:
			if sx < 0 {
				z = r.sqsub(0, sx, sz)
			} else {
				z = x
			}
		case decode.A64VSQNEG:
			z = r.sqsub(0, sx, sz)
		case decode.A64VCMGT0:
			z = boolMask(sx > 0, sz)
		case decode.A64VCMGE0:
			z = boolMask(sx >= 0, sz)
		case decode.A64VCMEQ0:
			z = boolMask(x == 0, sz)
		case decode.A64VCMLE0:
			z = boolMask(sx <= 0, sz)
		case decode.A64VCMLT0:
			z = boolMask(sx < 0, sz)
		case decode.A64VSUQADD: // signed d + unsigned x, signed saturation
			z = r.satAddMixed(sext(elem(&d, i, sz), sz), x, sz)
		case decode.A64VUSQADD: // unsigned d + signed x, unsigned saturation
			z = r.satAddUS(elem(&d, i, sz), sx, sz)
		}
		setElem(&res, i, sz, z)
	}
	r.setVec(in.Rd, res, in.Q)
}

// satAddMixed is SUQADD: signed s plus unsigned u, saturated signed.
func (r *Regs) satAddMixed(s int64, u uint64, sz uint8) uint64 {
	if sz < 3 {
		return r.satS(s+int64(u), sz)
	}
	var v uint64
	if s >= 0 {
		var c uint64
		v, c = bits.Add64(uint64(s), u, 0)
		if c != 0 {
			v = math.MaxUint64
		}
	} else {
		m := uint64(-s) // |s|, 1<<63 for MinInt64
		if u < m {
			return uint64(s) + u // negative or zero result, in range
		}
		v = u - m
	}
	if v > math.MaxInt64 {
		r.FPSR |= fpsrQC
		return math.MaxInt64
	}
	return v
}

// satAddUS is USQADD: unsigned u plus signed s, saturated unsigned.
func (r *Regs) satAddUS(u uint64, s int64, sz uint8) uint64 {
	if s >= 0 {
		v, c := bits.Add64(u, uint64(s), 0)
		if c != 0 || v > esizeMask(sz) {
			r.FPSR |= fpsrQC
			return esizeMask(sz)
		}
		return v
	}
	m := uint64(-s)
	if s == math.MinInt64 {
		m = 1 << 63
	}
	if m > u {
		r.FPSR |= fpsrQC
		return 0
	}
	return u - m
}

func (r *Regs) vecRev(in *decode.A64) {
	sz := in.Size
	var csz uint8 // container size
	switch in.Op {
	case decode.A64VREV64:
		csz = 3
	case decode.A64VREV32:
		csz = 2
	default:
		csz = 1
	}
	a := r.V[in.Rn]
	n := nElems(in, sz)
	per := 1 << (csz - sz) // elements per container
	var res [2]uint64
	for i := 0; i < n; i++ {
		j := i ^ (per - 1)
		setElem(&res, i, sz, elem(&a, j, sz))
	}
	r.setVec(in.Rd, res, in.Q)
}

func (r *Regs) vecAddLongPairwise(in *decode.A64) {
	sz := in.Size
	a, d := r.V[in.Rn], r.V[in.Rd]
	n := (8 << in.Q) >> (sz + 1) // result elements
	signed := in.Op == decode.A64VSADDLP || in.Op == decode.A64VSADALP
	acc := in.Op == decode.A64VSADALP || in.Op == decode.A64VUADALP
	var res [2]uint64
	for i := 0; i < n; i++ {
		x, y := elem(&a, 2*i, sz), elem(&a, 2*i+1, sz)
		var z uint64
		if signed {
			z = uint64(sext(x, sz) + sext(y, sz))
		} else {
			z = x + y
		}
		if acc {
			z += elem(&d, i, sz+1)
		}
		setElem(&res, i, sz+1, z)
	}
	r.setVec(in.Rd, res, in.Q)
}

// vecNarrow executes XTN, SQXTN, UQXTN and SQXTUN (Size: narrow size).
func (r *Regs) vecNarrow(in *decode.A64) {
	sz := in.Size
	a := r.V[in.Rn]
	n := 8 >> sz
	scalar := in.Flags&decode.SIMDScalar != 0
	if scalar {
		n = 1
	}
	var part [2]uint64
	for i := 0; i < n; i++ {
		x := elem(&a, i, sz+1)
		var z uint64
		switch in.Op {
		case decode.A64VXTN:
			z = x
		case decode.A64VSQXTN:
			z = r.satS(sext(x, sz+1), sz)
		case decode.A64VUQXTN:
			if x > esizeMask(sz) {
				r.FPSR |= fpsrQC
				z = esizeMask(sz)
			} else {
				z = x
			}
		case decode.A64VSQXTUN:
			z = r.satU(sext(x, sz+1), sz)
		}
		setElem(&part, i, sz, z)
	}
	if scalar {
		r.V[in.Rd] = [2]uint64{part[0], 0}
		return
	}
	r.writeNarrow(in.Rd, part[0], in.Q)
}

// vecWidenShift executes SSHLL, USHLL (shift Imm) and SHLL (shift esize).
func (r *Regs) vecWidenShift(in *decode.A64) {
	sz := in.Size
	a := r.V[in.Rn]
	n := 8 >> sz
	sh := uint(in.Imm)
	if in.Op == decode.A64VSHLL {
		sh = 8 << sz
	}
	var res [2]uint64
	for i := 0; i < n; i++ {
		x := elem(&a, i+n*int(in.Q), sz)
		if in.Op == decode.A64VSSHLL {
			x = uint64(sext(x, sz))
		}
		setElem(&res, i, sz+1, x<<sh)
	}
	r.V[in.Rd] = res
}

// vecShiftNarrow executes the narrowing right shifts (Size: narrow size).
func (r *Regs) vecShiftNarrow(in *decode.A64) {
	sz := in.Size
	wz := sz + 1
	a := r.V[in.Rn]
	n := 8 >> sz
	scalar := in.Flags&decode.SIMDScalar != 0
	if scalar {
		n = 1
	}
	sh := uint(in.Imm)
	round := false
	switch in.Op {
	case decode.A64VRSHRN, decode.A64VSQRSHRUN, decode.A64VSQRSHRN, decode.A64VUQRSHRN:
		round = true
	}
	var part [2]uint64
	for i := 0; i < n; i++ {
		x := elem(&a, i, wz)
		var z uint64
		switch in.Op {
		case decode.A64VSHRN, decode.A64VRSHRN:
			z = x >> sh
			if round {
				z += x >> (sh - 1) & 1
			}
		case decode.A64VUQSHRN, decode.A64VUQRSHRN:
			v := x >> sh
			if round {
				v += x >> (sh - 1) & 1
			}
			if v > esizeMask(sz) {
				r.FPSR |= fpsrQC
				v = esizeMask(sz)
			}
			z = v
		default: // signed source
			v := sext(x, wz) >> sh
			if round {
				v += sext(x, wz) >> (sh - 1) & 1
			}
			if in.Op == decode.A64VSQSHRUN || in.Op == decode.A64VSQRSHRUN {
				z = r.satU(v, sz)
			} else {
				z = r.satS(v, sz)
			}
		}
		setElem(&part, i, sz, z)
	}
	if scalar {
		r.V[in.Rd] = [2]uint64{part[0], 0}
		return
	}
	r.writeNarrow(in.Rd, part[0], in.Q)
}

// vecShiftImm executes the same-size shifts by immediate.
func (r *Regs) vecShiftImm(in *decode.A64) {
	sz := in.Size
	a, d := r.V[in.Rn], r.V[in.Rd]
	n := nElems(in, sz)
	sh := uint(in.Imm)
	m := esizeMask(sz)
	var res [2]uint64
	for i := 0; i < n; i++ {
		x := elem(&a, i, sz)
		old := elem(&d, i, sz)
		sx := sext(x, sz)
		var z uint64
		switch in.Op {
		case decode.A64VSSHR:
			z = uint64(sx >> sh)
		case decode.A64VUSHR:
			z = x >> sh
		case decode.A64VSSRA:
			z = old + uint64(sx>>sh)
		case decode.A64VUSRA:
			z = old + x>>sh
		case decode.A64VSRSHR:
			z = uint64(sx>>sh + sx>>(sh-1)&1)
		case decode.A64VURSHR:
			z = x>>sh + x>>(sh-1)&1
		case decode.A64VSRSRA:
			z = old + uint64(sx>>sh+sx>>(sh-1)&1)
		case decode.A64VURSRA:
			z = old + x>>sh + x>>(sh-1)&1
		case decode.A64VSRI:
			mask := m >> sh
			z = old&^mask | x>>sh
		case decode.A64VSHL:
			z = x << sh
		case decode.A64VSLI:
			mask := m << sh
			z = old&^mask | x<<sh
		case decode.A64VSQSHLU:
			z = r.satShl(x, int(sh), sz, false, true)
		case decode.A64VSQSHLI:
			z = r.satShl(x, int(sh), sz, false, false)
		case decode.A64VUQSHLI:
			z = r.satShl(x, int(sh), sz, true, true)
		}
		setElem(&res, i, sz, z&m)
	}
	r.setVec(in.Rd, res, in.Q)
}

// ---- permutes and tables ----

func (r *Regs) vecPermute(in *decode.A64) {
	sz := in.Size
	a, b := r.V[in.Rn], r.V[in.Rm]
	n := (8 << in.Q) >> sz
	var res [2]uint64
	for i := 0; i < n; i++ {
		var z uint64
		switch in.Op {
		case decode.A64VUZP1, decode.A64VUZP2:
			j := 2 * i
			if in.Op == decode.A64VUZP2 {
				j++
			}
			if j < n {
				z = elem(&a, j, sz)
			} else {
				z = elem(&b, j-n, sz)
			}
		case decode.A64VTRN1, decode.A64VTRN2:
			p := i &^ 1
			if in.Op == decode.A64VTRN2 {
				p++
			}
			if i&1 == 0 {
				z = elem(&a, p, sz)
			} else {
				z = elem(&b, p, sz)
			}
		default: // ZIP1, ZIP2
			p := i >> 1
			if in.Op == decode.A64VZIP2 {
				p += n / 2
			}
			if i&1 == 0 {
				z = elem(&a, p, sz)
			} else {
				z = elem(&b, p, sz)
			}
		}
		setElem(&res, i, sz, z)
	}
	r.setVec(in.Rd, res, in.Q)
}

func (r *Regs) vecExt(in *decode.A64) {
	a, b := r.V[in.Rn], r.V[in.Rm]
	n := 8 << in.Q
	pos := int(in.Imm)
	var res [2]uint64
	for i := 0; i < n; i++ {
		j := i + pos
		var z uint64
		if j < n {
			z = elem(&a, j, 0)
		} else {
			z = elem(&b, j-n, 0)
		}
		setElem(&res, i, 0, z)
	}
	r.setVec(in.Rd, res, in.Q)
}

func (r *Regs) vecTable(in *decode.A64) {
	idx, d := r.V[in.Rm], r.V[in.Rd]
	nt := int(in.Imm)
	n := 8 << in.Q
	var res [2]uint64
	for i := 0; i < n; i++ {
		k := int(elem(&idx, i, 0))
		var z uint64
		if k < 16*nt {
			t := &r.V[(int(in.Rn)+k/16)%32]
			z = elem(t, k%16, 0)
		} else if in.Op == decode.A64VTBX {
			z = elem(&d, i, 0)
		}
		setElem(&res, i, 0, z)
	}
	r.setVec(in.Rd, res, in.Q)
}

// mulLong16 is the fast path of the 16→32-bit widening multiplies
// (SMULL/UMULL/SMLAL/UMLAL/SMLSL/UMLSL and their "2" forms, vector, not by
// element); it reports false for any other op.
func (r *Regs) mulLong16(in *decode.A64) bool {
	var signed bool
	var acc int // 0: product, 1: accumulate, -1: subtract
	switch in.Op {
	case decode.A64VSMULL:
		signed = true
	case decode.A64VUMULL:
	case decode.A64VSMLAL:
		signed, acc = true, 1
	case decode.A64VUMLAL:
		acc = 1
	case decode.A64VSMLSL:
		signed, acc = true, -1
	case decode.A64VUMLSL:
		acc = -1
	default:
		return false
	}
	// Unrolled, without a lane array: this is CoreMark's hottest SIMD op.
	x, y := r.V[in.Rn&31][in.Q&1], r.V[in.Rm&31][in.Q&1]
	var p0, p1, p2, p3 uint32
	if signed {
		p0 = uint32(int32(int16(x)) * int32(int16(y)))
		p1 = uint32(int32(int16(x>>16)) * int32(int16(y>>16)))
		p2 = uint32(int32(int16(x>>32)) * int32(int16(y>>32)))
		p3 = uint32(int32(int16(x>>48)) * int32(int16(y>>48)))
	} else {
		p0 = uint32(uint16(x)) * uint32(uint16(y))
		p1 = uint32(uint16(x>>16)) * uint32(uint16(y>>16))
		p2 = uint32(uint16(x>>32)) * uint32(uint16(y>>32))
		p3 = uint32(uint16(x>>48)) * uint32(uint16(y>>48))
	}
	d := &r.V[in.Rd&31]
	switch acc {
	case 1:
		p0 += uint32(d[0])
		p1 += uint32(d[0] >> 32)
		p2 += uint32(d[1])
		p3 += uint32(d[1] >> 32)
	case -1:
		p0 = uint32(d[0]) - p0
		p1 = uint32(d[0]>>32) - p1
		p2 = uint32(d[1]) - p2
		p3 = uint32(d[1]>>32) - p3
	}
	d[0] = uint64(p0) | uint64(p1)<<32
	d[1] = uint64(p2) | uint64(p3)<<32
	return true
}
