package arm64

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/icache"
)

// benchSumCache is BenchmarkSum over the whole 64 KiB data area with the
// cache model in configuration cfg (a 4 KiB L1D, so that every 64-byte
// line of each pass misses L1).
func benchSumCache(b *testing.B, cfg string) {
	mc, err := icache.ParseModelConfig(cfg)
	if err != nil {
		b.Skip(err)
	}
	benchProgram(b, sumCode, func(c *CPU) {
		if c.CacheModel() == nil {
			c.SetCacheModel(icache.NewModel(mc))
		}
		c.SetReg(0, tData)
		c.SetReg(3, tSize/8)
	})
}

// BenchmarkSumCacheL1: L1 misses, no outer levels.
func BenchmarkSumCacheL1(b *testing.B) { benchSumCache(b, "l1d=4k,64,4") }

// BenchmarkSumCacheL2LLC: every L1 miss also looks up a 16 KiB L2
// (missing) and a 128 KiB LLC (hitting).
func BenchmarkSumCacheL2LLC(b *testing.B) {
	benchSumCache(b, "l1d=4k,64,4 l2=16k,64,8 llc=128k,64,16")
}
