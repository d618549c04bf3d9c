package arm64

// FEAT_FlagM/FlagM2 (CFINV, RMIF, SETF8/16, XAFLAG, AXFLAG) and the
// LRCPC2 load extension, after the Arm ARM pseudocode. nzcv is the
// interpreter's 4-bit N Z C V.

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// flagm executes an A64FLAGM record on nzcv with register value rn.
func flagm(in *decode.A64, rn, nzcv uint64) uint64 {
	z, c, v := nzcv>>2&1, nzcv>>1&1, nzcv&1
	switch in.Imm {
	case decode.A64FlagCFINV:
		return nzcv ^ 2
	case decode.A64FlagXAFLAG:
		return (^c&^z&1)<<3 | (z&c)<<2 | (c|z)<<1 | ^c&z&1
	case decode.A64FlagAXFLAG:
		return (z|v)<<2 | (c&^v&1)<<1
	case decode.A64FlagRMIF:
		t := bits.RotateLeft64(rn, -int(in.Amount)) & 15
		m := uint64(in.Cond)
		return nzcv&^m | t&m
	}
	// SETF8, SETF16
	w := uint(in.Amount)
	n := rn >> (w - 1) & 1
	z = 0
	if rn&(1<<w-1) == 0 {
		z = 1
	}
	v = (rn>>w ^ rn>>(w-1)) & 1
	return n<<3 | z<<2 | c<<1 | v
}

// ldapurExt extends an LDAPUR* result.
func ldapurExt(in *decode.A64, v uint64) uint64 {
	if in.Flags&decode.A64FlagSigned == 0 {
		return v
	}
	return uint64(sext(v, in.Size)) & wmask(in.Sf)
}
