package tasks

import "github.com/uvm-emu/uvm/internal/vm/amd64"

// setupArchCPU sets the per-thread CPU state the kernel keeps for a new
// thread or a new program image: on x86-64 the IA32_TSC_AUX value that
// RDTSCP and RDPID read (Linux: node << 12 | the CPU number).
func (t *Task) setupArchCPU() {
	if c, ok := t.cpu.(*amd64.CPU); ok {
		c.TSCAux = t.vnode()<<12 | t.vcpu()
	}
}

// vcpu is the virtual CPU a thread runs on, 0 … guestCPUs()-1: with
// --model the modelled CPU it was placed on, otherwise a fixed function
// of the thread id, so it is deterministic in --det. (Threads are not
// migrated between virtual CPUs.) getcpu, RDTSCP and RDPID report it.
func (t *Task) vcpu() uint32 {
	if t.vc != nil {
		return uint32(t.vc.ID)
	}
	n := t.tg.k.guestCPUs()
	if n <= 0 {
		return 0
	}
	return uint32(t.tid) % uint32(n)
}

// vnode is the NUMA node of the thread's virtual CPU: the described
// machine's with --model, otherwise node 0.
func (t *Task) vnode() uint32 {
	if t.vc != nil {
		return uint32(t.tg.k.tm.model.M.Node(t.vc.ID))
	}
	return 0
}
