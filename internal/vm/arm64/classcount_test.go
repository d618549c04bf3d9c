package arm64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// TestCountClasses runs a loop with class counting on (the timing
// model's per-class costs), alone, with the cache model, in re-decode
// mode and by single steps, and checks the tally: every retired
// instruction once in its class, and the taken branches.
func TestCountClasses(t *testing.T) {
	code := []uint32{
		0xd2800140, // movz x0, #10
		0xd1000400, // loop: sub x0, x0, #1
		0x9b017c21, // mul x1, x1, x1
		0xb5ffffc0, // cbnz x0, loop
		0xf94003e2, // ldr x2, [sp]
	}
	want := decode.ClassCounts{Taken: 9}
	want.N[decode.ClassALU] = 11
	want.N[decode.ClassMul] = 10
	want.N[decode.ClassBranch] = 10
	want.N[decode.ClassLoad] = 1
	for _, mode := range []string{"plain", "cache-model", "redecode", "step"} {
		c := newTestCPU(t, append(append([]uint32(nil), code...), brk0))
		c.SetSP(tStack - 16)
		switch mode {
		case "cache-model":
			c.SetCacheModel(icache.NewModel(icache.DefaultModelConfig()))
		case "redecode":
			c.SetRedecode(true)
		}
		c.CountClasses(true)
		if mode == "step" {
			for {
				if e := c.Step(); e.Reason != vm.ExitStep {
					if e.Reason != vm.ExitBreakpoint {
						t.Fatalf("%s: exit %v", mode, e.Reason)
					}
					break
				}
			}
		} else {
			runToBrk(t, c)
		}
		got := *c.ClassCounts()
		var n uint64
		for _, v := range got.N {
			n += v
		}
		if n != c.Retired() {
			t.Errorf("%s: %d instructions counted, %d retired", mode, n, c.Retired())
		}
		if got != want {
			t.Errorf("%s: counts %+v, want %+v", mode, got, want)
		}
	}
	// Counting off leaves the plain loop (no hooks) and no tally.
	c := newTestCPU(t, append(append([]uint32(nil), code...), brk0))
	c.CountClasses(true)
	c.CountClasses(false)
	if c.cm != nil || c.ClassCounts() != nil {
		t.Error("CountClasses(false) left the hooks on")
	}
}
