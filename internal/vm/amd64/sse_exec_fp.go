package amd64

import (
	"math"

	"github.com/uvm-emu/uvm/internal/decode"
)

// execSSEFP executes the SSE floating-point arithmetic, compare and
// conversion ops. MXCSR collects the exception flags of every lane; when
// the instruction raised an exception that MXCSR leaves unmasked, the
// destination is not written and sseFPE is returned (#XM).
func (c *CPU) execSSEFP(in *decode.X86) sseResult {
	r := &c.regs
	op := in.Op
	a0, a1 := &in.Args[0], &in.Args[1]
	old := r.MXCSR

	switch op {
	case decode.SSECvtsi2ss, decode.SSECvtsi2sd:
		v, res := c.readGPM(in, a1)
		if res != sseOK {
			return res
		}
		iv := int64(v)
		if a1.Size == 4 {
			iv = int64(int32(v))
		}
		d := r.XMM[a0.Reg&15]
		if op == decode.SSECvtsi2ss {
			setLane(&d, 4, 0, uint64(r.cvtIntToF32(iv)))
		} else {
			d[0] = r.cvtIntToF64(iv)
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		r.XMM[a0.Reg&15] = d
		return sseOK
	case decode.SSECvtss2si, decode.SSECvtsd2si, decode.SSECvttss2si, decode.SSECvttsd2si:
		s, res := c.readVM(in, a1)
		if res != sseOK {
			return res
		}
		size := 8 * int(a0.Size)
		trunc := op == decode.SSECvttss2si || op == decode.SSECvttsd2si
		var v int64
		if op == decode.SSECvtss2si || op == decode.SSECvttss2si {
			v = r.cvtF32ToInt(uint32(s[0]), size, trunc)
		} else {
			v = r.cvtF64ToInt(s[0], size, trunc)
		}
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.writeGPR(a0, uint64(v))
		return sseOK
	}

	s, res := c.readVM(in, a1)
	if res != sseOK {
		return res
	}
	a := r.XMM[a0.Reg&15]
	imm := in.Imm

	switch op {
	case decode.SSEComiss, decode.SSEUcomiss:
		o := r.cmp32(uint32(a[0]), uint32(s[0]), op == decode.SSEComiss)
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.sseSetFlags(comisFlags(o))
		return sseOK
	case decode.SSEComisd, decode.SSEUcomisd:
		o := r.cmp64(a[0], s[0], op == decode.SSEComisd)
		if unmaskedFPE(old, r.MXCSR) {
			return sseFPE
		}
		c.sseSetFlags(comisFlags(o))
		return sseOK
	}

	d, ok := r.sseFPOp(op, a, s, imm)
	if !ok {
		return sseUndefined
	}
	if unmaskedFPE(old, r.MXCSR) {
		return sseFPE
	}
	r.XMM[a0.Reg&15] = d
	return sseOK
}

// unmaskedFPE reports whether the flags newly raised between old and now
// include one that MXCSR leaves unmasked.
func unmaskedFPE(old, now uint32) bool {
	raised := now &^ old & fpAll
	return raised != 0 && raised&^(now>>mxMaskSh) != 0
}

// fopOf maps an arithmetic op to its fop number.
func fopOf(op decode.X86Op) int {
	switch op {
	case decode.SSEAddps, decode.SSEAddpd, decode.SSEAddss, decode.SSEAddsd:
		return fopAdd
	case decode.SSESubps, decode.SSESubpd, decode.SSESubss, decode.SSESubsd:
		return fopSub
	case decode.SSEMulps, decode.SSEMulpd, decode.SSEMulss, decode.SSEMulsd:
		return fopMul
	case decode.SSEDivps, decode.SSEDivpd, decode.SSEDivss, decode.SSEDivsd:
		return fopDiv
	case decode.SSEMinps, decode.SSEMinpd, decode.SSEMinss, decode.SSEMinsd:
		return fopMin
	case decode.SSEMaxps, decode.SSEMaxpd, decode.SSEMaxss, decode.SSEMaxsd:
		return fopMax
	}
	return fopSqrt
}

// rcp32 computes RCPPS/RSQRTPS for one single. The hardware result is an
// implementation-specific approximation with relative error at most
// 1.5×2^-12; uvm returns the correctly rounded reciprocal (square root),
// which is within that bound but not bit-identical to any particular CPU.
// Like the hardware it raises no exceptions, reads denormals as zero and
// flushes results that would be denormal.
func rcp32(x uint32, rsqrt bool) uint32 {
	sign := x & (1 << 31)
	e := (x >> 23) & 0xFF
	switch {
	case e == 0xFF && x&(1<<23-1) != 0: // NaN
		return x | 1<<22
	case e == 0: // ±0 or denormal read as zero
		return sign | 0x7F800000
	case e == 0xFF: // ±inf
		if rsqrt && sign != 0 {
			return 0xFFC00000
		}
		return sign
	case rsqrt && sign != 0:
		return 0xFFC00000
	}
	f := float64(math.Float32frombits(x))
	var z float32
	if rsqrt {
		z = float32(1 / math.Sqrt(f))
	} else {
		z = float32(1 / f)
	}
	b := math.Float32bits(z)
	if (b>>23)&0xFF == 0 {
		return b & (1 << 31)
	}
	return b
}

// sseFPOp computes the packed and scalar floating-point arithmetic,
// compare, conversion, rounding and dot-product ops on one 128-bit lane:
// the result of op(a, s, imm) where a is the first (destination) operand;
// elements the op does not write keep a's value. Exception flags go to
// MXCSR; the caller checks for unmasked ones. ok is false for other ops.
// The AVX lanes (avx.go) use it too.
func (r *Regs) sseFPOp(op decode.X86Op, a, s vec, imm int64) (d vec, ok bool) {
	d = a
	switch op {
	case decode.SSEAddps, decode.SSESubps, decode.SSEMulps, decode.SSEDivps, decode.SSEMinps, decode.SSEMaxps, decode.SSESqrtps:
		k := fopOf(op)
		for i := range 4 {
			setLane(&d, 4, i, uint64(r.arith32(k, uint32(lane(a, 4, i)), uint32(lane(s, 4, i)))))
		}
	case decode.SSEAddss, decode.SSESubss, decode.SSEMulss, decode.SSEDivss, decode.SSEMinss, decode.SSEMaxss, decode.SSESqrtss:
		setLane(&d, 4, 0, uint64(r.arith32(fopOf(op), uint32(a[0]), uint32(s[0]))))
	case decode.SSEAddpd, decode.SSESubpd, decode.SSEMulpd, decode.SSEDivpd, decode.SSEMinpd, decode.SSEMaxpd, decode.SSESqrtpd:
		k := fopOf(op)
		d[0] = r.arith64(k, a[0], s[0])
		d[1] = r.arith64(k, a[1], s[1])
	case decode.SSEAddsd, decode.SSESubsd, decode.SSEMulsd, decode.SSEDivsd, decode.SSEMinsd, decode.SSEMaxsd, decode.SSESqrtsd:
		d[0] = r.arith64(fopOf(op), a[0], s[0])
	case decode.SSERcpps, decode.SSERsqrtps:
		for i := range 4 {
			setLane(&d, 4, i, uint64(rcp32(uint32(lane(s, 4, i)), op == decode.SSERsqrtps)))
		}
	case decode.SSERcpss, decode.SSERsqrtss:
		setLane(&d, 4, 0, uint64(rcp32(uint32(s[0]), op == decode.SSERsqrtss)))
	case decode.SSECmpps:
		sig := cmpSignals(imm)
		for i := range 4 {
			setLane(&d, 4, i, boolMask(cmpPred(imm, r.cmp32(uint32(lane(a, 4, i)), uint32(lane(s, 4, i)), sig))))
		}
	case decode.SSECmpss:
		setLane(&d, 4, 0, boolMask(cmpPred(imm, r.cmp32(uint32(a[0]), uint32(s[0]), cmpSignals(imm)))))
	case decode.SSECmppd:
		sig := cmpSignals(imm)
		d[0] = boolMask(cmpPred(imm, r.cmp64(a[0], s[0], sig)))
		d[1] = boolMask(cmpPred(imm, r.cmp64(a[1], s[1], sig)))
	case decode.SSECmpsd:
		d[0] = boolMask(cmpPred(imm, r.cmp64(a[0], s[0], cmpSignals(imm))))
	case decode.SSECvtss2sd:
		d[0] = r.cvtF32ToF64(uint32(s[0]))
	case decode.SSECvtsd2ss:
		setLane(&d, 4, 0, uint64(r.cvtF64ToF32(s[0])))
	case decode.SSECvtdq2ps:
		for i := range 4 {
			setLane(&d, 4, i, uint64(r.cvtIntToF32(signExt(lane(s, 4, i), 4))))
		}
	case decode.SSECvtps2dq, decode.SSECvttps2dq:
		for i := range 4 {
			setLane(&d, 4, i, uint64(r.cvtF32ToInt(uint32(lane(s, 4, i)), 32, op == decode.SSECvttps2dq)))
		}
	case decode.SSECvtdq2pd:
		d = vec{r.cvtIntToF64(signExt(s[0], 4)), r.cvtIntToF64(signExt(s[0]>>32, 4))}
	case decode.SSECvtpd2dq, decode.SSECvttpd2dq:
		t := op == decode.SSECvttpd2dq
		lo := uint64(uint32(r.cvtF64ToInt(s[0], 32, t)))
		hi := uint64(uint32(r.cvtF64ToInt(s[1], 32, t)))
		d = vec{lo | hi<<32, 0}
	case decode.SSECvtps2pd:
		d = vec{r.cvtF32ToF64(uint32(s[0])), r.cvtF32ToF64(uint32(s[0] >> 32))}
	case decode.SSECvtpd2ps:
		d = vec{uint64(r.cvtF64ToF32(s[0])) | uint64(r.cvtF64ToF32(s[1]))<<32, 0}
	case decode.SSEAddsubps:
		for i := range 4 {
			k := fopSub
			if i&1 != 0 {
				k = fopAdd
			}
			setLane(&d, 4, i, uint64(r.arith32(k, uint32(lane(a, 4, i)), uint32(lane(s, 4, i)))))
		}
	case decode.SSEAddsubpd:
		d[0] = r.arith64(fopSub, a[0], s[0])
		d[1] = r.arith64(fopAdd, a[1], s[1])
	case decode.SSEHaddps, decode.SSEHsubps:
		k := fopAdd
		if op == decode.SSEHsubps {
			k = fopSub
		}
		for i := range 4 {
			src := a
			if i >= 2 {
				src = s
			}
			j := 2 * (i & 1)
			setLane(&d, 4, i, uint64(r.arith32(k, uint32(lane(src, 4, j)), uint32(lane(src, 4, j+1)))))
		}
	case decode.SSEHaddpd, decode.SSEHsubpd:
		k := fopAdd
		if op == decode.SSEHsubpd {
			k = fopSub
		}
		d = vec{r.arith64(k, a[0], a[1]), r.arith64(k, s[0], s[1])}
	case decode.SSERoundps:
		for i := range 4 {
			setLane(&d, 4, i, uint64(r.round32(uint32(lane(s, 4, i)), imm)))
		}
	case decode.SSERoundpd:
		d = vec{r.round64(s[0], imm), r.round64(s[1], imm)}
	case decode.SSERoundss:
		setLane(&d, 4, 0, uint64(r.round32(uint32(s[0]), imm)))
	case decode.SSERoundsd:
		d[0] = r.round64(s[0], imm)
	case decode.SSEDpps:
		var t [4]uint32
		for i := range 4 {
			if imm>>(4+i)&1 != 0 {
				t[i] = r.arith32(fopMul, uint32(lane(a, 4, i)), uint32(lane(s, 4, i)))
			}
		}
		// Intel CPUs (uvm's CPUID says GenuineIntel) add the products
		// in a per-lane order: output lane i is
		// (t[i^1]+t[i]) + (t[i^3]+t[i^2]). The value and the MXCSR flags
		// are those of the SDM's (t0+t1)+(t2+t3), as IEEE addition
		// commutes; only which NaN payload wins when both addends are
		// NaNs (SSE returns the first one) differs between lanes.
		// Measured on an Intel Xeon against random NaN-heavy inputs.
		var p [4]uint32
		for i := range 4 {
			p[i] = r.arith32(fopAdd, t[i^1], t[i])
		}
		for i := range 4 {
			v := r.arith32(fopAdd, p[i], p[i^2])
			if imm>>i&1 == 0 {
				v = 0
			}
			setLane(&d, 4, i, uint64(v))
		}
	case decode.SSEDppd:
		var t [2]uint64
		for i := range 2 {
			if imm>>(4+i)&1 != 0 {
				t[i] = r.arith64(fopMul, a[i], s[i])
			}
		}
		sum := r.arith64(fopAdd, t[0], t[1])
		for i := range 2 {
			d[i] = 0
			if imm>>i&1 != 0 {
				d[i] = sum
			}
		}
	default:
		return d, false
	}
	return d, true
}
