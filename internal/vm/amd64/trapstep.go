package amd64

import (
	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Single-stepping under the trap flag.
//
// With RFLAGS.TF set the CPU takes the single-step trap after each
// iteration of a REP string instruction, not once per instruction (SDM
// vol. 3, 18.3.1.4): the trap's RIP is the instruction itself until the
// iteration that ends it (RCX reaches zero, or the REPE/REPNE condition
// fails). The kernel's uprobes single-step the probed instruction out of
// line that way, so a probe on a REP string instruction hits once per
// iteration: arch_uprobe_post_xol's FIX_IP maps the XOL slot's address
// back to the probe's, which is the breakpoint again (RCX=0 on entry: one
// hit, the instruction does nothing).

// StepTrap executes what one trap-flag single step executes: one
// instruction, except that a REP string instruction runs one iteration
// and, when that iteration does not end it, returns ExitStep at the
// instruction without retiring it.
func (c *CPU) StepTrap() vm.Exit {
	c.trapStep = true
	e := c.Step()
	c.trapStep = false
	return e
}

// stringIteration is one iteration of a REP string instruction under
// StepTrap: xOK when the instruction is complete (it retires), xIteration
// when more iterations remain.
func (c *CPU) stringIteration(in *decode.X86, op decode.X86Op, w uint8, step, amask, srcBase uint64) xres {
	g := &c.regs.GPR
	if g[1]&amask == 0 {
		return xOK
	}
	if r := c.stringOnce(in, op, w, step, amask, srcBase); r != xOK {
		return r
	}
	setAddrReg(g, 1, amask, g[1]-1)
	if op == decode.X86Scas || op == decode.X86Cmps {
		zf := c.cond(decode.CondE)
		if (in.Rep == decode.RepF3 && !zf) || (in.Rep == decode.RepF2 && zf) {
			return xOK
		}
	}
	if g[1]&amask == 0 {
		return xOK
	}
	return xIteration
}
