package amd64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// TestStepTrap: under StepTrap a REP string instruction runs one
// iteration per step and retires with the iteration that ends it (RCX
// reaching zero, or the REPE/REPNE condition), as single-stepping with
// TF does; other instructions step as Step does. Step itself still runs
// the whole instruction.
func TestStepTrap(t *testing.T) {
	cases := []struct {
		name  string
		code  string
		rcx   uint64
		setup func(c *CPU)
		steps int // StepTrap calls until RIP leaves the instruction
		rcxAt uint64
	}{
		{"rep movsb", "f3a4", 3, nil, 3, 0},
		{"rep movsb rcx=0", "f3a4", 0, nil, 1, 0},
		{"rep stosq", "f348ab", 5, nil, 5, 0},
		{"repe cmpsb mismatch at 2", "f3a6", 6, func(c *CPU) {
			_ = c.MM().Poke([]byte("abXd"), tData)
			_ = c.MM().Poke([]byte("abcd"), tData+0x100)
		}, 3, 3},
		{"repne scasb found at 2", "f2ae", 9, func(c *CPU) {
			_ = c.MM().Poke([]byte("abc"), tData+0x100)
			c.SetReg(0, 'c')
		}, 3, 6},
		{"addr32 rep movsb", "67f3a4", 0xffffffff00000002, nil, 2, 0},
		{"plain movsb", "a4", 7, nil, 1, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code := h(tc.code)
			c := newTestCPU(t, code, false)
			c.SetReg(1, tc.rcx)
			c.SetReg(6, tData)
			c.SetReg(7, tData+0x100)
			if tc.setup != nil {
				tc.setup(c)
			}
			next := tCode + uint64(len(code))
			for i := 1; ; i++ {
				e := c.StepTrap()
				if e.Reason != vm.ExitStep {
					t.Fatalf("step %d: exit %v at %#x", i, e.Reason, e.PC)
				}
				if e.PC == next {
					if i != tc.steps {
						t.Fatalf("left the instruction after %d steps, want %d", i, tc.steps)
					}
					break
				}
				if e.PC != tCode || i >= tc.steps {
					t.Fatalf("step %d: at %#x (want the instruction, %d steps)", i, e.PC, tc.steps)
				}
				if c.Retired() != 0 {
					t.Fatalf("step %d: an iteration retired the instruction", i)
				}
			}
			if c.Retired() != 1 {
				t.Errorf("retired %d, want 1", c.Retired())
			}
			checkReg(t, c, "rcx", 1, tc.rcxAt)
			// Step and Run are unchanged: the whole instruction at once.
			c2 := newTestCPU(t, code, false)
			c2.SetReg(1, tc.rcx)
			c2.SetReg(6, tData)
			c2.SetReg(7, tData+0x100)
			if tc.setup != nil {
				tc.setup(c2)
			}
			if e := c2.Step(); e.Reason != vm.ExitStep || e.PC != next {
				t.Fatalf("Step: exit %v at %#x", e.Reason, e.PC)
			}
			if c2.Regs().GPR != c.Regs().GPR || c2.RFLAGS() != c.RFLAGS() {
				t.Errorf("StepTrap's state differs from Step's:\n%+v\n%+v", c.Regs().GPR, c2.Regs().GPR)
			}
		})
	}
}

// TestStepTrapFault: an iteration that faults leaves the completed
// iterations' progress and RIP at the instruction.
func TestStepTrapFault(t *testing.T) {
	c := newTestCPU(t, h("f3aa"), false)
	c.SetReg(1, 4)
	c.SetReg(7, tData+tDataSize-2)
	for i := 0; i < 2; i++ {
		if e := c.StepTrap(); e.Reason != vm.ExitStep || e.PC != tCode {
			t.Fatalf("step %d: exit %v at %#x", i, e.Reason, e.PC)
		}
	}
	if e := c.StepTrap(); e.Reason != vm.ExitFault || e.PC != tCode || e.Fault.Addr != tData+tDataSize {
		t.Fatalf("exit %v at %#x %+v", e.Reason, e.PC, e.Fault)
	}
	checkReg(t, c, "rcx", 1, 2)
	checkReg(t, c, "rdi", 7, tData+tDataSize)
}
