package amd64

// RegsForSet returns the register file for a caller that replaces it
// field by field (signal delivery and rt_sigreturn) without the copy of
// SetRegs: unlike Regs it does not materialise RFLAGS, and the caller
// must finish with SetRFLAGS, which sets the flags state as SetRegs does.
func (c *CPU) RegsForSet() *Regs { return &c.regs }
