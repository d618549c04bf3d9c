package amd64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// TestCountClasses runs a loop with class counting on (the timing
// model's per-class costs), alone, with the cache model, in small
// budgets and by single steps, and checks the tally: every retired
// instruction once in its class, and the taken branches.
func TestCountClasses(t *testing.T) {
	code := h("b90a000000" + // mov ecx, 10
		"480fafc0" + // loop: imul rax, rax
		"ffc9" + // dec ecx
		"75f8" + // jnz loop
		"488b1424" + // mov rdx, [rsp]
		"50") // push rax
	want := decode.ClassCounts{Taken: 9}
	want.N[decode.ClassALU] = 11
	want.N[decode.ClassMul] = 10
	want.N[decode.ClassBranch] = 10
	want.N[decode.ClassLoad] = 1
	want.N[decode.ClassStore] = 1
	for _, mode := range []string{"plain", "cache-model", "budget-3", "step"} {
		c := newTestCPU(t, code, false)
		if mode == "cache-model" {
			c.SetCacheModel(icache.NewModel(icache.DefaultModelConfig()))
		}
		c.CountClasses(true)
		for {
			var e vm.Exit
			switch mode {
			case "step":
				e = c.Step()
			case "budget-3":
				e = c.Run(3)
			default:
				e = c.Run(1 << 20)
			}
			if e.Reason == vm.ExitStep || e.Reason == vm.ExitBudget {
				continue
			}
			if e.Reason != vm.ExitBreakpoint {
				t.Fatalf("%s: exit %v at %#x", mode, e.Reason, e.PC)
			}
			break
		}
		got := *c.ClassCounts()
		var n uint64
		for _, v := range got.N {
			n += v
		}
		if n != c.Retired() {
			t.Errorf("%s: %d instructions counted, %d retired", mode, n, c.Retired())
		}
		if got.N != want.N {
			t.Errorf("%s: counts %v, want %v", mode, got.N, want.N)
		}
		if got.Taken != want.Taken {
			t.Errorf("%s: %d taken, want %d", mode, got.Taken, want.Taken)
		}
	}
	c := newTestCPU(t, code, false)
	c.CountClasses(true)
	c.CountClasses(false)
	if c.cm != nil || c.ClassCounts() != nil {
		t.Error("CountClasses(false) left the hooks on")
	}
}
