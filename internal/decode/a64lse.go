package decode

// FEAT_LSE (Armv8.1 Large System Extensions): the atomic memory operations
// LDADD, LDCLR, LDEOR, LDSET, LDSMAX, LDSMIN, LDUMAX, LDUMIN (the ST*
// aliases are these with Rt = XZR), SWP, and compare-and-swap CAS and CASP,
// in every size and every ordering (plain, A, L, AL).

// A64LDOP kinds, in Imm of an A64LDOP record.
const (
	A64AtomicADD  = iota // [Rn] += Rs
	A64AtomicCLR         // [Rn] &^= Rs
	A64AtomicEOR         // [Rn] ^= Rs
	A64AtomicSET         // [Rn] |= Rs
	A64AtomicSMAX        // [Rn] = max(signed)
	A64AtomicSMIN        // [Rn] = min(signed)
	A64AtomicUMAX        // [Rn] = max(unsigned)
	A64AtomicUMIN        // [Rn] = min(unsigned)
	A64AtomicSWP         // [Rn] = Rs
)

// A64FlagRelease (LSE atomics): store-release semantics (the L/R bit).
// A64FlagAcquire marks load-acquire. The interpreter gives every LSE
// atomic sequentially consistent semantics (host locked instructions), so
// the bits are informational.
const A64FlagRelease = 16

// decodeLSEAtomic decodes the atomic memory operations (size 111 0 00 A R 1
// Rs o3 opc 00 Rn Rt) other than LDAPR.
func decodeLSEAtomic(raw uint32, in *A64) {
	*in = A64{Raw: raw}
	o3 := raw >> 15 & 1
	opc := raw >> 12 & 7
	var kind uint64
	switch {
	case o3 == 0:
		kind = uint64(opc) // ADD, CLR, EOR, SET, SMAX, SMIN, UMAX, UMIN in encoding order
	case opc == 0:
		kind = A64AtomicSWP
	case raw>>30 == 3 && (opc == 1 || opc == 2 || opc == 3 || opc == 5): // ST64BV0, ST64BV, ST64B, LD64B
		undef(in, A64WhyFeature)
		return
	default: // RCW* (FEAT_THE), LDAPR forms with other fields
		undef(in, A64WhyUnallocated)
		return
	}
	in.Op = A64LDOP
	in.Imm = kind
	in.Size = uint8(raw >> 30)
	in.Sf = uint8(raw >> 30 >> 1 & raw >> 30 & 1)
	in.Rn = uint8(raw >> 5 & 31)
	in.Rm = rZR(raw >> 16 & 31)
	in.Rd = wZR(raw & 31)
	in.Flags = lseOrder(raw>>23&1, raw>>22&1)
}

func lseOrder(acq, rel uint32) uint8 {
	var f uint8
	if acq != 0 {
		f |= A64FlagAcquire
	}
	if rel != 0 {
		f |= A64FlagRelease
	}
	return f
}

// decodeCAS decodes CAS{,A,L,AL}{B,H,} (size 001000 1 L 1 Rs o0 11111 Rn Rt)
// and CASP{,A,L,AL} (0 sz 001000 0 L 1 Rs o0 11111 Rn Rt), the load/store
// exclusive encodings with o1 = 1 that are not LDXP/STXP.
func decodeCAS(raw uint32, in *A64) {
	*in = A64{Raw: raw}
	if raw>>10&31 != 31 { // Rt2 must be 11111
		undef(in, A64WhyUnallocated)
		return
	}
	rs := raw >> 16 & 31
	rt := raw & 31
	in.Rn = uint8(raw >> 5 & 31)
	in.Flags = lseOrder(raw>>22&1, raw>>15&1)
	if raw>>23&1 == 1 { // CAS
		in.Op = A64CAS
		in.Size = uint8(raw >> 30)
		in.Sf = uint8(raw >> 30 >> 1 & raw >> 30 & 1)
		in.Rm = rZR(rs)
		in.Ra = wZR(rs)
		in.Rd = rZR(rt)
		return
	}
	// CASP: Rs and Rt name even-numbered register pairs.
	if rs&1 != 0 || rt&1 != 0 {
		undef(in, A64WhyUnallocated)
		return
	}
	in.Op = A64CASP
	in.Size = uint8(2 + raw>>30&1)
	in.Sf = uint8(raw >> 30 & 1)
	in.Rm = rZR(rs)
	in.Ra = rZR(rs + 1)
	in.Rd = rZR(rt)
	in.Shift = rZR(rt + 1)
	in.Imm = uint64(wZR(rs))
	in.Imm2 = uint64(wZR(rs + 1))
}

var lseNames = [...]string{"ldadd", "ldclr", "ldeor", "ldset", "ldsmax", "ldsmin", "ldumax", "ldumin", "swp"}

// disasmLSE renders an LSE record in GNU syntax (arm64asm does not know
// FEAT_LSE); the ST* aliases are shown as their LD* form with xzr/wzr.
func disasmLSE(in *A64) string {
	ord := ""
	if in.Flags&A64FlagAcquire != 0 {
		ord = "a"
	}
	if in.Flags&A64FlagRelease != 0 {
		ord += "l"
	}
	suffix := [4]string{"b", "h", "", ""}[in.Size&3]
	x := in.Size == 3
	base := a64RegName(in.Rn, true)
	switch in.Op {
	case A64LDOP:
		return lseNames[in.Imm%9] + ord + suffix + " " + a64RegName(in.Rm, x) + ", " + a64RegName(in.Rd, x) + ", [" + base + "]"
	case A64CAS:
		return "cas" + ord + suffix + " " + a64RegName(in.Rm, x) + ", " + a64RegName(in.Rd, x) + ", [" + base + "]"
	}
	return "casp" + ord + " " + a64RegName(in.Rm, x) + ", " + a64RegName(in.Ra, x) + ", " +
		a64RegName(in.Rd, x) + ", " + a64RegName(in.Shift, x) + ", [" + base + "]"
}
