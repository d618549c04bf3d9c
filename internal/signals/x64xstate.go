package signals

import (
	"encoding/binary"
	"fmt"
)

// The extended x86-64 signal fpstate of a CPU with XSAVE
// (arch/x86/kernel/fpu/signal.c: fpu__alloc_mathframe, save_xstate_epilog,
// check_xstate_in_sigframe, __fpu_restore_sig). With AMD64Context.XFeatures
// set (the x86-64-v3 model: x87|SSE|AVX), the fpstate is the task's XSAVE
// image in the standard format — the 512-byte FXSAVE region, the 64-byte
// XSAVE header (XSTATE_BV; Linux clears the header and ORs in x87|SSE) and
// the AVX component (YMM_Hi128) at 576 — followed by FP_XSTATE_MAGIC2; the
// software-reserved bytes of the FXSAVE region describe it (magic1,
// extended_size = xstate_size + 4, xfeatures, xstate_size), and uc_flags
// has UC_FP_XSTATE. rt_sigreturn restores the AVX component when the
// software bytes and magic2 check out and the header is valid (XRSTOR
// with the frame's xfeatures; a feature bit clear there or in XSTATE_BV
// initialises the component); with a bad magic it restores only the
// FXSAVE region and initialises the AVX state (fx_only). A malformed
// header makes the frame bad, as XRSTOR's #GP does.

const (
	// FP_XSTATE_MAGIC2 follows the XSAVE image in the signal frame.
	FP_XSTATE_MAGIC2 = 0x46505845

	// XStateAVX is the AVX feature bit (XCR0 bit 2).
	XStateAVX = 1 << 2
	// AMD64XSaveSize is the XSAVE image size for x87|SSE|AVX.
	AMD64XSaveSize = 832
	xsaveHdrOff    = 512
	xsaveAVXOff    = 576
	xsaveFPSSE     = 3
)

// amd64XSize is the fpstate's size in the frame (without magic2).
func (ctx *AMD64Context) amd64XSize() uint64 {
	if ctx.XFeatures&XStateAVX != 0 {
		return AMD64XSaveSize
	}
	return fxsaveSize
}

// writeXState fills the fpstate image fx (xsize+4 bytes) of an extended
// frame.
func (ctx *AMD64Context) writeXState(fx []byte) {
	le := binary.LittleEndian
	copy(fx, ctx.FXSave[:])
	clear(fx[xsaveHdrOff : xsaveHdrOff+64])
	le.PutUint64(fx[xsaveHdrOff:], ctx.XFeatures|xsaveFPSSE)
	copy(fx[xsaveAVXOff:xsaveAVXOff+256], ctx.AVX[:])
	sw := fx[fxSWReservedOff:fxsaveSize]
	clear(sw)
	le.PutUint32(sw[0:], FP_XSTATE_MAGIC1)
	le.PutUint32(sw[4:], AMD64XSaveSize+4)
	le.PutUint64(sw[8:], ctx.XFeatures)
	le.PutUint32(sw[16:], AMD64XSaveSize)
	le.PutUint32(fx[AMD64XSaveSize:], FP_XSTATE_MAGIC2)
}

// AMD64XStateExtra returns how many bytes past the first 512 of the
// fpstate rt_sigreturn must read to restore the extended state: the rest
// of the XSAVE image and magic2 when the software-reserved bytes of fx
// (the first 512 bytes) describe uvm's XSAVE layout and the context has
// XSAVE features, else 0 (an FXSAVE-only restore).
func AMD64XStateExtra(ctx *AMD64Context, fx []byte) int {
	if ctx.XFeatures == 0 || len(fx) < fxsaveSize {
		return 0
	}
	le := binary.LittleEndian
	sw := fx[fxSWReservedOff:]
	if le.Uint32(sw[0:]) != FP_XSTATE_MAGIC1 || le.Uint32(sw[4:]) != AMD64XSaveSize+4 ||
		le.Uint32(sw[16:]) != AMD64XSaveSize {
		return 0
	}
	return AMD64XSaveSize + 4 - fxsaveSize
}

// restoreXState is the extended half of RestoreAMD64FPState: x holds the
// whole image with magic2 (AMD64XSaveSize+4 bytes), or is shorter for an
// FXSAVE-only restore (the AVX state is then initialised).
func (ctx *AMD64Context) restoreXState(x []byte) error {
	ctx.AVX = [256]byte{}
	if ctx.XFeatures == 0 || len(x) < AMD64XSaveSize+4 {
		return nil
	}
	le := binary.LittleEndian
	if le.Uint32(x[AMD64XSaveSize:]) != FP_XSTATE_MAGIC2 {
		return nil // fx_only
	}
	xfeat := le.Uint64(x[fxSWReservedOff+8:]) & ctx.XFeatures
	bv := le.Uint64(x[xsaveHdrOff:])
	if bv&^ctx.XFeatures != 0 {
		return fmt.Errorf("%w: fpstate XSTATE_BV %#x has unsupported features", ErrBadFrame, bv)
	}
	for i := 8; i < 24; i++ {
		if x[xsaveHdrOff+i] != 0 {
			return fmt.Errorf("%w: fpstate XSAVE header reserved bytes set", ErrBadFrame)
		}
	}
	if xfeat&bv&XStateAVX != 0 {
		copy(ctx.AVX[:], x[xsaveAVXOff:xsaveAVXOff+256])
	}
	return nil
}
