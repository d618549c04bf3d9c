package tasks

import (
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Cache model plumbing (issue 6): Options.CacheModel gives every CPU an
// icache.Model; Options.Redecode turns on the interpreters' differential
// re-decode mode.

// cacheModelCPU is what a CPU offers for the cache model (both
// interpreters implement it).
type cacheModelCPU interface {
	SetCacheModel(*icache.Model)
	CacheModel() *icache.Model
	SetRedecode(bool)
}

// attachCacheModel gives a new process's first CPU its cache model (and
// the re-decode mode). CPUs made by Clone inherit both from their parent.
func (k *Kernel) attachCacheModel(cpu vm.CPU) {
	c, ok := cpu.(cacheModelCPU)
	if !ok {
		return
	}
	if k.opts.CacheModel != nil {
		c.SetCacheModel(k.opts.CacheModel.NewCPU())
	}
	if k.opts.Redecode {
		c.SetRedecode(true)
	}
}

// releaseCacheModel takes an exiting thread's CPU out of its process's
// IC IVAU broadcast domain (its statistics stay).
func releaseCacheModel(cpu vm.CPU) {
	if c, ok := cpu.(cacheModelCPU); ok {
		if m := c.CacheModel(); m != nil {
			m.Release()
		}
	}
}
