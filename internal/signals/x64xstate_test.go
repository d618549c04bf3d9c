package signals

import (
	"encoding/binary"
	"errors"
	"testing"
)

// TestAMD64XStateFrame: with XFeatures the fpstate is the 832-byte XSAVE
// image plus FP_XSTATE_MAGIC2, 64-byte aligned below the red zone, with the
// software bytes Linux writes and UC_FP_XSTATE; rt_sigreturn restores the
// AVX component, initialises it for an FXSAVE-only (bad magic2) frame or a
// clear XSTATE_BV bit, and rejects a bad header.
func TestAMD64XStateFrame(t *testing.T) {
	ctx := &AMD64Context{XFeatures: 7, FXSave: AMD64InitFXSave()}
	ctx.GPR[RSP] = 0x7fff_0000
	for i := range ctx.AVX {
		ctx.AVX[i] = byte(i*7 + 1)
	}
	f, err := BuildAMD64Frame(ctx, nil, 0, SigAction{Handler: 1, Flags: SA_RESTORER, Restorer: 2}, DisabledStack)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if want := (0x7fff_0000 - 128 - (AMD64XSaveSize + 4)) &^ 63; f.FPState != uint64(want) {
		t.Fatalf("fpstate %#x, want %#x", f.FPState, want)
	}
	fx := f.Bytes[f.FPState-f.Addr:]
	if len(fx) != AMD64XSaveSize+4 {
		t.Fatalf("fpstate has %d bytes", len(fx))
	}
	if le.Uint64(f.Bytes[x64UCFlags:])&UC_FP_XSTATE == 0 {
		t.Error("no UC_FP_XSTATE")
	}
	if le.Uint32(fx[464:]) != FP_XSTATE_MAGIC1 || le.Uint32(fx[468:]) != 836 || le.Uint64(fx[472:]) != 7 ||
		le.Uint32(fx[480:]) != 832 || le.Uint32(fx[832:]) != FP_XSTATE_MAGIC2 || le.Uint64(fx[512:]) != 7 {
		t.Errorf("software bytes / magic2 / XSTATE_BV wrong: % x", fx[464:488])
	}
	if fx[576] != ctx.AVX[0] || fx[576+255] != ctx.AVX[255] {
		t.Error("AVX component not at 576")
	}
	restore := func(img []byte) (AMD64Context, error) {
		c := AMD64Context{XFeatures: 7}
		n := AMD64XStateExtra(&c, img)
		return c, RestoreAMD64FPState(&c, f.FPState, img[:512+n])
	}
	c, err := restore(fx)
	if err != nil || c.AVX != ctx.AVX {
		t.Errorf("restore: %v, AVX %x", err, c.AVX[:4])
	}
	bad := append([]byte(nil), fx...)
	le.PutUint32(bad[832:], 0)
	if c, err := restore(bad); err != nil || c.AVX != [256]byte{} {
		t.Errorf("bad magic2: %v, AVX not initialised", err)
	}
	bad = append([]byte(nil), fx...)
	bad[512] &^= XStateAVX
	if c, err := restore(bad); err != nil || c.AVX != [256]byte{} {
		t.Errorf("XSTATE_BV without AVX: %v, AVX not initialised", err)
	}
	bad = append([]byte(nil), fx...)
	bad[512+8] = 1 // XCOMP_BV in a standard-format image
	if _, err := restore(bad); !errors.Is(err, ErrBadFrame) {
		t.Errorf("bad header: %v, want ErrBadFrame", err)
	}
	ctx.EnterHandler(SIGUSR1, SigAction{Handler: 1}, f)
	if ctx.AVX != [256]byte{} {
		t.Error("handler entry keeps the AVX state")
	}
}
