package arm64

import "github.com/uvm-emu/uvm/internal/vm"

// CloneExact is Clone that also carries what a thread keeps across its
// own slices: the retired-instruction count and the exclusive monitor
// (a checkpoint of reverse execution restores the thread as it was, not
// as a new one).
func (c *CPU) CloneExact(mm *vm.MM) vm.CPU {
	n := c.Clone(mm).(*CPU)
	n.retired = c.retired
	n.excl = c.excl
	return n
}
