package amd64

// CPUID returns what the CPUID instruction gives for leaf eax, subleaf
// ecx on this CPU's model (x86-64-v2 or -v3), for the kernel's
// /proc/cpuinfo.
func (c *CPU) CPUID(eax, ecx uint32) (a, b, cc, d uint32) { return c.cpuidModel(eax, ecx) }
