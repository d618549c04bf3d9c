package tasks

import (
	"fmt"

	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/timing"
)

// The cache model's outer levels under the timing model: the machine
// file describes the L2 and the last-level cache (cache.l2, cache.llc)
// and which CPUs share each (cache.l2_shared, cache.llc_shared, by the
// machine's topology); every thread's cache model uses the copies of
// its virtual CPU's domains (icache.Model.Place), and each L2 or LLC
// miss adds the machine's cache.l2_miss or cache.llc_miss to the L1
// miss latency (timingRetire).

// MachineCacheConfig returns cfg with m's L2 and LLC geometry for each
// level cfg does not configure itself (a --cache-config l2= or llc=
// item wins).
func MachineCacheConfig(cfg icache.ModelConfig, m *timing.Machine) (icache.ModelConfig, error) {
	for _, l := range []struct {
		name string
		dst  *icache.CacheConfig
		g    timing.CacheGeom
	}{{"l2", &cfg.L2, m.L2}, {"llc", &cfg.LLC, m.LLC}} {
		if l.dst.Size != 0 || l.g.Size == 0 {
			continue
		}
		c := icache.CacheConfig{Size: l.g.Size, Line: l.g.Line, Assoc: l.g.Ways, Policy: cfg.L1D.Policy}
		if err := c.Validate(); err != nil {
			return cfg, fmt.Errorf("machine %s: cache.%s: %w", m.Name, l.name, err)
		}
		*l.dst = c
	}
	return cfg, nil
}

// placeCache gives t's cache model the outer caches of its virtual
// CPU's sharing domains (a new thread; a new CPU after execve).
func (t *Task) placeCache() {
	ts := t.tg.k.tm
	c, ok := t.cpu.(cacheModelCPU)
	if ts == nil || !ok || t.vc == nil {
		return
	}
	if cm := c.CacheModel(); cm != nil {
		m := ts.model.M
		cm.Place(m.Domain(t.vc.ID, m.L2Shared), m.Domain(t.vc.ID, m.LLCShared))
	}
}
