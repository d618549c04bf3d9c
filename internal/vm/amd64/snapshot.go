package amd64

import "github.com/uvm-emu/uvm/internal/vm"

// CloneExact is Clone that also carries the retired-instruction count
// (a checkpoint of reverse execution restores the thread as it was, not
// as a new one).
func (c *CPU) CloneExact(mm *vm.MM) vm.CPU {
	n := c.Clone(mm).(*CPU)
	n.retired = c.retired
	n.TSCAux = c.TSCAux
	return n
}
