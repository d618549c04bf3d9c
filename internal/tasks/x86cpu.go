package tasks

import "github.com/uvm-emu/uvm/internal/vm/amd64"

// setupArchCPU sets the per-thread CPU state the kernel keeps for a new
// thread or a new program image: on x86-64 the IA32_TSC_AUX value that
// RDTSCP and RDPID read (Linux: the CPU number, node 0).
func (t *Task) setupArchCPU() {
	if c, ok := t.cpu.(*amd64.CPU); ok {
		c.TSCAux = t.vcpu()
	}
}

// vcpu is the virtual CPU a thread runs on, 0 … guestCPUs()-1: a fixed
// function of the thread id, so it is deterministic in --det. (Threads
// are not migrated between virtual CPUs.)
func (t *Task) vcpu() uint32 {
	n := t.tg.k.guestCPUs()
	if n <= 0 {
		return 0
	}
	return uint32(t.tid) % uint32(n)
}
