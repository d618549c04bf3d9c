package tasks

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/timing"
)

// TestMachineCacheConfig: every built-in machine's L2 and LLC are
// geometries the cache model accepts; a level the configuration sets
// itself is kept.
func TestMachineCacheConfig(t *testing.T) {
	for _, n := range timing.Builtin() {
		m, err := timing.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := MachineCacheConfig(icache.DefaultModelConfig(), m)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if cfg.L2.Size != m.L2.Size || cfg.L2.Line != m.L2.Line || cfg.L2.Assoc != m.L2.Ways || cfg.LLC.Size != m.LLC.Size {
			t.Errorf("%s: config %s, machine L2 %+v LLC %+v", n, cfg, m.L2, m.LLC)
		}
		own, _ := icache.ParseModelConfig("l2=64k,64,4")
		if cfg, err = MachineCacheConfig(own, m); err != nil || cfg.L2.Size != 64<<10 || cfg.LLC.Size != m.LLC.Size {
			t.Errorf("%s: --cache-config l2= not kept: %v %s", n, err, cfg)
		}
	}
	m, _ := timing.Lookup("kunpeng916")
	m.L2 = timing.CacheGeom{Size: 1000, Line: 64, Ways: 4}
	if _, err := MachineCacheConfig(icache.DefaultModelConfig(), m); err == nil {
		t.Errorf("a 1000-byte L2 accepted")
	}
}
