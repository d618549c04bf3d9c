package amd64

// TrapFlag reports RFLAGS.TF without materialising the lazily kept
// arithmetic flags (the uprobes model checks it on every emulated hit).
func (c *CPU) TrapFlag() bool { return c.flags&rfTF != 0 }
