package arm64

// The FP/SIMD unit: Armv8.0 scalar floating point and Advanced SIMD as
// advertised by HWCAP_FP | HWCAP_ASIMD.
//
// Files: simd.go (dispatch, scalar FP, copies, immediates, FP vectors,
// reciprocal estimates), simdint.go (integer vectors, permutes, tables),
// simdldst.go (LD1-4/ST1-4, single lanes, LDnR), simdfp.go (FP operations
// with an exact host fast path), simdsoftfp.go (exact soft-float after the
// Arm ARM pseudocode: all FPCR rounding modes, FZ, DN, AHP, and the FPSR
// flags IOC DZC OFC UFC IXC IDC and QC).
//
// FEAT_FP16 half-precision arithmetic uses the same ops with Size 1 (the
// decoder's a64fp16.go); half precision always takes the soft-float path.
// Not implemented, rejected by the decoder (SIGILL) and not advertised:
// SM3/SM4 (AES, PMULL 1Q, SHA1/SHA256/SHA512/SHA3 are in crypto.go; dot
// products, SQRDMLAH/SQRDMLSH, FRINT32/64, FJCVTZS, FCMLA/FCADD of halves,
// singles and doubles and FMLAL/FMLSL (FEAT_FHM) in simdext.go), BF16,
// I8MM. Trapping of floating-point exceptions is
// not implemented (FPCR trap enables are RES0).
//
// Testing: simd_oracle_test.go compares random instructions and states
// against qemu-aarch64 (testdata/simdoracle) and replays stored qemu
// results (testdata/simd_golden.txt) when qemu is absent.

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// execSIMD executes one scalar-FP or Advanced SIMD instruction (Op >=
// decode.A64SIMDBase). It must not change architectural state when it
// returns simdFault or simdUndefined.
//
// Register conventions: the main loop stores PC and NZCV (bits 31..28)
// into c.regs before the call and reloads NZCV after it; general registers
// are read and written in c.regs.X (encoded number 31 = XZR, or SP for the
// base of structure loads/stores).
func (c *CPU) execSIMD(in *decode.A64) simdResult {
	r := &c.regs
	switch in.Op {
	// ---- scalar floating point ----
	case decode.A64FADD:
		r.setFP(in.Rd, r.fadd(r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size, false))
	case decode.A64FSUB:
		r.setFP(in.Rd, r.fadd(r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size, true))
	case decode.A64FMUL:
		r.setFP(in.Rd, r.fmul(r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size, false))
	case decode.A64FNMUL:
		r.setFP(in.Rd, fpNegBits(r.fmul(r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size, false), in.Size))
	case decode.A64FDIV:
		r.setFP(in.Rd, r.fdiv(r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size))
	case decode.A64FMADD:
		r.setFP(in.Rd, r.fmuladd(r.fp(in.Ra, in.Size), r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size))
	case decode.A64FMSUB:
		r.setFP(in.Rd, r.fmuladd(r.fp(in.Ra, in.Size), fpNegBits(r.fp(in.Rn, in.Size), in.Size), r.fp(in.Rm, in.Size), in.Size))
	case decode.A64FNMADD:
		r.setFP(in.Rd, r.fmuladd(fpNegBits(r.fp(in.Ra, in.Size), in.Size), fpNegBits(r.fp(in.Rn, in.Size), in.Size), r.fp(in.Rm, in.Size), in.Size))
	case decode.A64FNMSUB:
		r.setFP(in.Rd, r.fmuladd(fpNegBits(r.fp(in.Ra, in.Size), in.Size), r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size))
	case decode.A64FMAX, decode.A64FMIN, decode.A64FMAXNM, decode.A64FMINNM:
		max := in.Op == decode.A64FMAX || in.Op == decode.A64FMAXNM
		num := in.Op == decode.A64FMAXNM || in.Op == decode.A64FMINNM
		r.setFP(in.Rd, r.fmaxmin(r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size, max, num))
	case decode.A64FMOV:
		r.setFP(in.Rd, r.fp(in.Rn, in.Size))
	case decode.A64FABS:
		r.setFP(in.Rd, fpAbsBits(r.fp(in.Rn, in.Size), in.Size))
	case decode.A64FNEG:
		r.setFP(in.Rd, fpNegBits(r.fp(in.Rn, in.Size), in.Size))
	case decode.A64FSQRT:
		r.setFP(in.Rd, r.fsqrt(r.fp(in.Rn, in.Size), in.Size))
	case decode.A64FCVT:
		r.setFP(in.Rd, r.fcvt(r.fp(in.Rn, in.Size), in.Size, uint8(in.Imm)))
	case decode.A64FRINT:
		r.setFP(in.Rd, r.frint(r.fp(in.Rn, in.Size), in.Size, in.Imm2))
	case decode.A64FCMP:
		var b uint64
		if in.Flags&decode.SIMDZero == 0 {
			b = r.fp(in.Rm, in.Size)
		}
		r.NZCV = r.fcmp(r.fp(in.Rn, in.Size), b, in.Size, in.Flags&decode.SIMDSignal != 0) << 28
	case decode.A64FCCMP:
		if condHolds(in.Cond, r.NZCV>>28) {
			r.NZCV = r.fcmp(r.fp(in.Rn, in.Size), r.fp(in.Rm, in.Size), in.Size, in.Flags&decode.SIMDSignal != 0) << 28
		} else {
			r.NZCV = in.Imm << 28
		}
	case decode.A64FCSEL:
		if condHolds(in.Cond, r.NZCV>>28) {
			r.setFP(in.Rd, r.fp(in.Rn, in.Size))
		} else {
			r.setFP(in.Rd, r.fp(in.Rm, in.Size))
		}
	case decode.A64FMOVI:
		r.setFP(in.Rd, in.Imm)
	case decode.A64FCVTI:
		v := r.fcvtToInt(r.fp(in.Rn, in.Size), in.Size, int(in.Imm), in.Flags&decode.SIMDUnsigned != 0, 32<<in.Sf, int(in.Imm2))
		c.setXreg(in.Rd, v)
	case decode.A64ICVTF:
		r.setFP(in.Rd, r.icvtf(c.xreg(in.Rn), in.Sf == 1, in.Flags&decode.SIMDUnsigned != 0, int(in.Imm), in.Size))
	case decode.A64FMOVTOGP:
		switch {
		case in.Imm == 1:
			c.setXreg(in.Rd, r.V[in.Rn][1])
		case in.Size == 1:
			c.setXreg(in.Rd, uint64(uint16(r.V[in.Rn][0])))
		case in.Size == 2:
			c.setXreg(in.Rd, uint64(uint32(r.V[in.Rn][0])))
		default:
			c.setXreg(in.Rd, r.V[in.Rn][0])
		}
	case decode.A64FMOVFROMGP:
		x := c.xreg(in.Rn)
		switch {
		case in.Imm == 1:
			r.V[in.Rd][1] = x
		case in.Size == 1:
			r.setFP(in.Rd, uint64(uint16(x)))
		case in.Size == 2:
			r.setFP(in.Rd, uint64(uint32(x)))
		default:
			r.setFP(in.Rd, x)
		}

	// ---- copy and immediates ----
	case decode.A64VDUPE:
		e := elem(&r.V[in.Rn], int(in.Imm), in.Size)
		if in.Flags&decode.SIMDScalar != 0 {
			r.V[in.Rd] = [2]uint64{e, 0}
		} else {
			r.setVec(in.Rd, dupElem(e, in.Size), in.Q)
		}
	case decode.A64VDUPG:
		r.setVec(in.Rd, dupElem(c.xreg(in.Rn)&esizeMask(in.Size), in.Size), in.Q)
	case decode.A64VINSG:
		setElem(&r.V[in.Rd], int(in.Imm), in.Size, c.xreg(in.Rn))
	case decode.A64VINSE:
		setElem(&r.V[in.Rd], int(in.Imm), in.Size, elem(&r.V[in.Rn], int(in.Imm2), in.Size))
	case decode.A64VUMOV:
		c.setXreg(in.Rd, elem(&r.V[in.Rn], int(in.Imm), in.Size))
	case decode.A64VSMOV:
		v := uint64(sext(elem(&r.V[in.Rn], int(in.Imm), in.Size), in.Size))
		if in.Sf == 0 {
			v = uint64(uint32(v))
		}
		c.setXreg(in.Rd, v)
	case decode.A64VMOVI, decode.A64VFMOVI:
		r.setVec(in.Rd, [2]uint64{in.Imm, in.Imm}, in.Q)
	case decode.A64VMVNI:
		r.setVec(in.Rd, [2]uint64{^in.Imm, ^in.Imm}, in.Q)
	case decode.A64VORRI:
		v := r.V[in.Rd]
		r.setVec(in.Rd, [2]uint64{v[0] | in.Imm, v[1] | in.Imm}, in.Q)
	case decode.A64VBICI:
		v := r.V[in.Rd]
		r.setVec(in.Rd, [2]uint64{v[0] &^ in.Imm, v[1] &^ in.Imm}, in.Q)

	// ---- loads and stores ----
	case decode.A64VLDST, decode.A64VLDSTL, decode.A64VLDR:
		return c.execSIMDLdSt(in)

	default:
		if in.Op >= decode.A64CryptoBase {
			return r.execCrypto(in) // crypto.go
		}
		if in.Op >= decode.A64VFMAXNM && in.Op <= decode.A64VFABD {
			r.vecFP3(in)
			return simdOK
		}
		return r.execVec(in)
	}
	return simdOK
}

// fp reads scalar register n as an FP value of type sz (zero-extended).
func (r *Regs) fp(n uint8, sz uint8) uint64 {
	return r.V[n][0] & esizeMask(sz)
}

// setFP writes a scalar FP/SIMD result, zeroing the rest of the register.
func (r *Regs) setFP(d uint8, v uint64) { r.V[d] = [2]uint64{v, 0} }

// setVec writes a vector result; a 64-bit vector (q == 0) zeroes the
// upper half.
func (r *Regs) setVec(d uint8, v [2]uint64, q uint8) {
	if q == 0 {
		v[1] = 0
	}
	r.V[d] = v
}

// esizeMask is the all-ones value of an element of size log2 bytes.
func esizeMask(size uint8) uint64 { return ^uint64(0) >> (64 - 8<<size) }

// elem reads element i of size 1<<size bytes.
func elem(v *[2]uint64, i int, size uint8) uint64 {
	if size == 3 {
		return v[i&1]
	}
	w := uint(8) << size
	pos := uint(i) * w
	return v[pos>>6&1] >> (pos & 63) & (1<<w - 1)
}

// setElem writes element i of size 1<<size bytes.
func setElem(v *[2]uint64, i int, size uint8, x uint64) {
	if size == 3 {
		v[i&1] = x
		return
	}
	w := uint(8) << size
	pos := uint(i) * w
	m := uint64(1)<<w - 1
	p := &v[pos>>6&1]
	*p = *p&^(m<<(pos&63)) | (x&m)<<(pos&63)
}

// sext sign-extends an element of size 1<<size bytes.
func sext(x uint64, size uint8) int64 {
	s := 64 - 8<<size
	return int64(x<<s) >> s
}

// dupElem replicates an element value across 128 bits.
func dupElem(e uint64, size uint8) [2]uint64 {
	var w uint64
	switch size {
	case 0:
		w = e * 0x0101010101010101
	case 1:
		w = e * 0x0001000100010001
	case 2:
		w = e * 0x0000000100000001
	default:
		w = e
	}
	return [2]uint64{w, w}
}

// nElems is the number of elements an instruction operates on.
func nElems(in *decode.A64, size uint8) int {
	if in.Flags&decode.SIMDScalar != 0 {
		return 1
	}
	return (8 << in.Q) >> size
}

// ---- floating-point vector operations ----

// vecFP3 executes the three-same floating-point ops (also their scalar and
// by-element forms).
func (r *Regs) vecFP3(in *decode.A64) {
	sz := in.Size
	a, b, d := r.V[in.Rn], r.V[in.Rm], r.V[in.Rd]
	if in.Flags&decode.SIMDByElem != 0 {
		b = dupElem(elem(&r.V[in.Rm], int(in.Imm), sz), sz)
	}
	n := nElems(in, sz)
	var res [2]uint64
	switch in.Op {
	case decode.A64VFADDP, decode.A64VFMAXP, decode.A64VFMINP, decode.A64VFMAXNMP, decode.A64VFMINNMP:
		max := in.Op == decode.A64VFMAXP || in.Op == decode.A64VFMAXNMP
		num := in.Op == decode.A64VFMAXNMP || in.Op == decode.A64VFMINNMP
		pair := func(x, y uint64) uint64 {
			if in.Op == decode.A64VFADDP {
				return r.fadd(x, y, sz, false)
			}
			return r.fmaxmin(x, y, sz, max, num)
		}
		if in.Flags&decode.SIMDScalar != 0 {
			res[0] = pair(elem(&a, 0, sz), elem(&a, 1, sz))
			break
		}
		for i := 0; i < n; i++ {
			src, j := &a, 2*i
			if j >= n {
				src, j = &b, j-n
			}
			setElem(&res, i, sz, pair(elem(src, j, sz), elem(src, j+1, sz)))
		}
	default:
		for i := 0; i < n; i++ {
			x, y := elem(&a, i, sz), elem(&b, i, sz)
			var z uint64
			switch in.Op {
			case decode.A64VFADD:
				z = r.fadd(x, y, sz, false)
			case decode.A64VFSUB:
				z = r.fadd(x, y, sz, true)
			case decode.A64VFABD:
				z = fpAbsBits(r.fadd(x, y, sz, true), sz)
			case decode.A64VFMUL:
				z = r.fmul(x, y, sz, false)
			case decode.A64VFMULX:
				z = r.fmul(x, y, sz, true)
			case decode.A64VFDIV:
				z = r.fdiv(x, y, sz)
			case decode.A64VFMLA:
				z = r.fmuladd(elem(&d, i, sz), x, y, sz)
			case decode.A64VFMLS:
				z = r.fmuladd(elem(&d, i, sz), fpNegBits(x, sz), y, sz)
			case decode.A64VFMAX:
				z = r.fmaxmin(x, y, sz, true, false)
			case decode.A64VFMIN:
				z = r.fmaxmin(x, y, sz, false, false)
			case decode.A64VFMAXNM:
				z = r.fmaxmin(x, y, sz, true, true)
			case decode.A64VFMINNM:
				z = r.fmaxmin(x, y, sz, false, true)
			case decode.A64VFCMEQ:
				z = boolMask(r.fcmpCond(x, y, sz, 0), sz)
			case decode.A64VFCMGE:
				z = boolMask(r.fcmpCond(x, y, sz, 1), sz)
			case decode.A64VFCMGT:
				z = boolMask(r.fcmpCond(x, y, sz, 2), sz)
			case decode.A64VFACGE:
				z = boolMask(r.fcmpCond(fpAbsBits(x, sz), fpAbsBits(y, sz), sz, 1), sz)
			case decode.A64VFACGT:
				z = boolMask(r.fcmpCond(fpAbsBits(x, sz), fpAbsBits(y, sz), sz, 2), sz)
			case decode.A64VFRECPS:
				z = r.frecpStep(x, y, sz, false)
			case decode.A64VFRSQRTS:
				z = r.frecpStep(x, y, sz, true)
			}
			setElem(&res, i, sz, z)
		}
	}
	r.setVec(in.Rd, res, in.Q)
}

func boolMask(b bool, size uint8) uint64 {
	if b {
		return esizeMask(size)
	}
	return 0
}

// vecFP2 executes the two-register-misc floating-point ops.
func (r *Regs) vecFP2(in *decode.A64) {
	sz := in.Size
	a := r.V[in.Rn]
	n := nElems(in, sz)
	var res [2]uint64
	unsigned := in.Flags&decode.SIMDUnsigned != 0
	for i := 0; i < n; i++ {
		x := elem(&a, i, sz)
		var z uint64
		switch in.Op {
		case decode.A64VFABS:
			z = fpAbsBits(x, sz)
		case decode.A64VFNEG:
			z = fpNegBits(x, sz)
		case decode.A64VFSQRT:
			z = r.fsqrt(x, sz)
		case decode.A64VFRINT:
			z = r.frint(x, sz, in.Imm2)
		case decode.A64VFCVTI:
			z = r.fcvtToInt(x, sz, int(in.Imm), unsigned, 8<<sz, int(in.Imm2))
		case decode.A64VICVTF:
			if sz == 1 { // 16-bit integers: extend to 64 bits
				if !unsigned {
					x = uint64(int64(int16(x)))
				}
				z = r.icvtf(x, true, unsigned, int(in.Imm), sz)
				break
			}
			z = r.icvtf(x, sz == 3, unsigned, int(in.Imm), sz)
		case decode.A64VFCMGT0:
			z = boolMask(r.fcmpCond(x, 0, sz, 2), sz)
		case decode.A64VFCMGE0:
			z = boolMask(r.fcmpCond(x, 0, sz, 1), sz)
		case decode.A64VFCMEQ0:
			z = boolMask(r.fcmpCond(x, 0, sz, 0), sz)
		case decode.A64VFCMLE0:
			z = boolMask(r.fcmpCond(0, x, sz, 1), sz)
		case decode.A64VFCMLT0:
			z = boolMask(r.fcmpCond(0, x, sz, 2), sz)
		case decode.A64VFRECPE:
			z = r.frecpe(x, sz)
		case decode.A64VFRSQRTE:
			z = r.frsqrte(x, sz)
		case decode.A64VFRECPX:
			z = r.frecpx(x, sz)
		case decode.A64VURECPE:
			z = urecpe(x)
		case decode.A64VURSQRTE:
			z = ursqrte(x)
		}
		setElem(&res, i, sz, z)
	}
	r.setVec(in.Rd, res, in.Q)
}

// vecFPConvert executes FCVTN, FCVTXN and FCVTL (Size: the wider type).
func (r *Regs) vecFPConvert(in *decode.A64) {
	wide := in.Size
	narrow := wide - 1
	scalar := in.Flags&decode.SIMDScalar != 0
	switch in.Op {
	case decode.A64VFCVTL:
		a := r.V[in.Rn]
		var res [2]uint64
		n := 16 >> wide
		for i := 0; i < n; i++ {
			x := elem(&a, i+n*int(in.Q), narrow)
			setElem(&res, i, wide, r.fcvt(x, narrow, wide))
		}
		r.V[in.Rd] = res
	default: // FCVTN, FCVTXN
		a := r.V[in.Rn]
		n := 16 >> wide
		if scalar {
			n = 1
		}
		var part [2]uint64
		var fl uint32
		for i := 0; i < n; i++ {
			x := elem(&a, i, wide)
			var z uint64
			if in.Op == decode.A64VFCVTXN {
				z = fpConvertSoft(x, wide, narrow, r.FPCR, rmOdd, &fl)
			} else {
				z = r.fcvt(x, wide, narrow)
			}
			setElem(&part, i, narrow, z)
		}
		r.FPSR |= fl
		if scalar {
			r.V[in.Rd] = [2]uint64{part[0], 0}
		} else {
			r.writeNarrow(in.Rd, part[0], in.Q)
		}
	}
}

// writeNarrow writes the 64-bit result of a narrowing op: to the lower
// half (upper zeroed) for q == 0, to the upper half (lower kept) for the
// "2" forms.
func (r *Regs) writeNarrow(d uint8, v uint64, q uint8) {
	if q == 0 {
		r.V[d] = [2]uint64{v, 0}
	} else {
		r.V[d][1] = v
	}
}

// vecFPAcross executes FMAXV, FMINV, FMAXNMV and FMINNMV (4S, and 4H/8H
// with FEAT_FP16), reducing as the Arm ARM's Reduce does: op(op(e0,e1),
// op(e2,e3)), and for eight elements op of the two halves' reductions.
func (r *Regs) vecFPAcross(in *decode.A64) {
	a := r.V[in.Rn]
	sz := in.Size
	max := in.Op == decode.A64VFMAXV || in.Op == decode.A64VFMAXNMV
	num := in.Op == decode.A64VFMAXNMV || in.Op == decode.A64VFMINNMV
	red4 := func(base int) uint64 {
		lo := r.fmaxmin(elem(&a, base, sz), elem(&a, base+1, sz), sz, max, num)
		hi := r.fmaxmin(elem(&a, base+2, sz), elem(&a, base+3, sz), sz, max, num)
		return r.fmaxmin(lo, hi, sz, max, num)
	}
	res := red4(0)
	if sz == 1 && in.Q == 1 {
		res = r.fmaxmin(res, red4(4), sz, max, num)
	}
	r.setFP(in.Rd, res)
}

// ---- reciprocal estimates (Arm ARM RecipEstimate / RecipSqrtEstimate) ----

// recipEstimate maps a in [256, 512) to an estimate in [256, 512).
func recipEstimate(a uint64) uint64 {
	a = a*2 + 1
	b := (1 << 19) / a
	return (b + 1) / 2
}

// recipSqrtEstimate maps a in [128, 512) to an estimate in [256, 512).
func recipSqrtEstimate(a uint64) uint64 {
	if a < 256 {
		a = a*2 + 1
	} else {
		a = a >> 1 << 1
		a = (a + 1) * 2
	}
	b := uint64(512)
	for a*(b+1)*(b+1) < 1<<28 {
		b++
	}
	return (b + 1) / 2
}

// frecpe is FPRecipEstimate.
func (r *Regs) frecpe(x uint64, sz uint8) uint64 {
	var fl uint32
	res := frecpeBits(x, sz, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

func frecpeBits(x uint64, sz uint8, fpcr uint32, fl *uint32) uint64 {
	v := fpUnpack(x, sz, fpcr, fl)
	f := &fpFormats[sz]
	switch v.cls {
	case fpQNaN, fpSNaN:
		return fpProcessNaN(v.cls, x, sz, fpcr, fl)
	case fpInf:
		return fpZeroBits(v.sign, sz)
	case fpZero:
		*fl |= fpsrDZC
		return fpInfBits(v.sign, sz)
	}
	// too small: |value| < 2^-(bias+1) (2^-128 for single, 2^-1024 for double)
	if v.exp+bits.Len64(v.mant)-1 < -(f.bias + 1) {
		rm := fpRMode(fpcr)
		*fl |= fpsrOFC | fpsrIXC
		if rm == rmNearest || rm == rmPlusInf && v.sign == 0 || rm == rmMinusInf && v.sign == 1 {
			return fpInfBits(v.sign, sz)
		}
		return fpMaxNormalBits(v.sign, sz)
	}
	if (sz != 1 && fpcr&fpcrFZ != 0 || sz == 1 && fpFlush16(fpcr)) && v.exp+bits.Len64(v.mant)-1 >= f.bias-1 {
		*fl |= fpsrUFC
		return fpZeroBits(v.sign, sz)
	}
	// fraction as 52 bits and biased exponent, as in the pseudocode
	exp := int(x >> f.frac & (1<<f.exp - 1))
	fraction := (x & (1<<f.frac - 1)) << (52 - f.frac)
	if exp == 0 {
		if fraction>>51&1 == 0 {
			exp = -1
			fraction = fraction << 2 & (1<<52 - 1)
		} else {
			fraction = fraction << 1 & (1<<52 - 1)
		}
	}
	scaled := 1<<8 | fraction>>44
	resultExp := 2*f.bias - 1 - exp // 253 - exp (single), 2045 - exp (double)
	estimate := recipEstimate(scaled)
	fraction = (estimate & 0xff) << 44
	if resultExp == 0 {
		fraction = 1<<51 | fraction>>1
	} else if resultExp == -1 {
		fraction = 1<<50 | fraction>>2
		resultExp = 0
	}
	return v.sign<<(f.frac+f.exp) | uint64(resultExp)<<f.frac | fraction>>(52-f.frac)
}

// frsqrte is FPRSqrtEstimate.
func (r *Regs) frsqrte(x uint64, sz uint8) uint64 {
	var fl uint32
	res := frsqrteBits(x, sz, r.FPCR, &fl)
	r.FPSR |= fl
	return res
}

func frsqrteBits(x uint64, sz uint8, fpcr uint32, fl *uint32) uint64 {
	v := fpUnpack(x, sz, fpcr, fl)
	f := &fpFormats[sz]
	switch {
	case v.isNaN():
		return fpProcessNaN(v.cls, x, sz, fpcr, fl)
	case v.cls == fpZero:
		*fl |= fpsrDZC
		return fpInfBits(v.sign, sz)
	case v.sign == 1:
		*fl |= fpsrIOC
		return fpDefaultNaN(sz)
	case v.cls == fpInf:
		return 0
	}
	exp := int(x >> f.frac & (1<<f.exp - 1))
	fraction := (x & (1<<f.frac - 1)) << (52 - f.frac)
	if exp == 0 {
		for fraction>>51&1 == 0 {
			fraction = fraction << 1 & (1<<52 - 1)
			exp--
		}
		fraction = fraction << 1 & (1<<52 - 1)
	}
	var scaled uint64
	if exp&1 == 0 {
		scaled = 1<<8 | fraction>>44
	} else {
		scaled = 1<<7 | fraction>>45
	}
	resultExp := (3*f.bias - 1 - exp) / 2 // (380 - exp) / 2 for singles
	estimate := recipSqrtEstimate(scaled)
	return uint64(resultExp)<<f.frac | (estimate&0xff)<<(f.frac-8)
}

// frecpx is FPRecpX.
func (r *Regs) frecpx(x uint64, sz uint8) uint64 {
	var fl uint32
	v := fpUnpack(x, sz, r.FPCR, &fl)
	f := &fpFormats[sz]
	var res uint64
	if v.isNaN() {
		res = fpProcessNaN(v.cls, x, sz, r.FPCR, &fl)
	} else {
		exp := x >> f.frac & (1<<f.exp - 1)
		if v.cls == fpZero || exp == 0 {
			exp = 1<<f.exp - 2 // max_exp = Ones(E-1):'0'
		} else {
			exp = ^exp & (1<<f.exp - 1)
		}
		res = v.sign<<(f.frac+f.exp) | exp<<f.frac
	}
	r.FPSR |= fl
	return res
}

// urecpe is UnsignedRecipEstimate on a 32-bit element.
func urecpe(x uint64) uint64 {
	if x>>31&1 == 0 {
		return 0xffffffff
	}
	return (recipEstimate(x>>23&0x1ff) & 0x1ff) << 23
}

// ursqrte is UnsignedRSqrtEstimate on a 32-bit element.
func ursqrte(x uint64) uint64 {
	if x>>30&3 == 0 {
		return 0xffffffff
	}
	return (recipSqrtEstimate(x>>23&0x1ff) & 0x1ff) << 23
}
