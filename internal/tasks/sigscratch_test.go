package tasks

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
)

// TestAMD64InitFPU: the signal-delivery FPU reset leaves the same
// registers as loading the initial FXSAVE image (what EnterHandler puts
// in the context) with setAMD64Context, from a dirty FPU state.
func TestAMD64InitFPU(t *testing.T) {
	dirty := func() *amd64.CPU {
		c := amd64.NewCPU(vm.NewMM())
		r := c.Regs()
		r.FCW, r.FSW, r.FTW, r.FOP, r.FIP, r.FDP, r.MXCSR = 0x27f, 0x3800, 0xff, 0x1d9, 0x401000, 0x7000, 0x9fc0
		for i := range r.ST {
			r.ST[i] = amd64.F80{Mant: uint64(i+1) << 60, SignExp: uint16(0x3fff + i)}
		}
		for i := range r.XMM {
			r.XMM[i] = [2]uint64{uint64(i) * 3, ^uint64(i)}
			r.YMMH[i] = [2]uint64{uint64(i) * 5, ^uint64(i) << 1}
		}
		return c
	}
	a, b := dirty(), dirty()
	var ctx signals.AMD64Context
	amd64ContextInto(a, &ctx)
	ctx.FXSave = signals.AMD64InitFXSave()
	ctx.AVX = [256]byte{}
	setAMD64Context(a, &ctx)
	amd64InitFPU(b)
	if ra, rb := *a.Regs(), *b.Regs(); ra != rb {
		t.Fatalf("amd64InitFPU:\n%+v\nsetAMD64Context(AMD64InitFXSave):\n%+v", rb, ra)
	}
}
