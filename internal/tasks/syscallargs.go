package tasks

import (
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// syscallArgs reads the six syscall argument registers of arch a, what
// t.arg(0..5) returns, with one type switch instead of an interface call
// per register (the syscall round trip's entry).
func (t *Task) syscallArgs(a *arch) (args [6]uint64) {
	r := &a.args
	switch c := t.cpu.(type) {
	case *amd64.CPU: // unrolled: no loop, no copy of a.args
		return [6]uint64{c.Reg(r[0]), c.Reg(r[1]), c.Reg(r[2]), c.Reg(r[3]), c.Reg(r[4]), c.Reg(r[5])}
	case *arm64.CPU:
		return [6]uint64{c.Reg(r[0]), c.Reg(r[1]), c.Reg(r[2]), c.Reg(r[3]), c.Reg(r[4]), c.Reg(r[5])}
	default:
		for i := range args {
			args[i] = t.arg(i)
		}
	}
	return args
}
