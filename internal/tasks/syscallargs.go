package tasks

import (
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// syscallArgs reads the six syscall argument registers of arch a, what
// t.arg(0..5) returns, with one type switch instead of an interface call
// per register (the syscall round trip's entry).
func (t *Task) syscallArgs(a *arch) (args [6]uint64) {
	switch c := t.cpu.(type) {
	case *amd64.CPU:
		for i, r := range a.args {
			args[i] = c.Reg(r)
		}
	case *arm64.CPU:
		for i, r := range a.args {
			args[i] = c.Reg(r)
		}
	default:
		for i := range args {
			args[i] = t.arg(i)
		}
	}
	return args
}
