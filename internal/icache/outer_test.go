package icache

import "testing"

// outerCfg is a small hierarchy: a 1-line L1D, a 2-way single-set L2
// and a 4-way single-set LLC, all LRU with 64-byte lines.
func outerCfg(t *testing.T) ModelConfig {
	t.Helper()
	c, err := ParseModelConfig("l1d=64,64,1 l2=128,64,2 llc=256,64,4")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOuterInclusiveFill: a miss at every level fills every level; an
// L1 hit does not reach L2; an L1 miss that hits L2 stops there.
func TestOuterInclusiveFill(t *testing.T) {
	m := NewModel(outerCfg(t))
	const a, b = 0x1000, 0x2000
	m.Data(a, 8, false)
	if !m.D.Contains(a) || !m.L2.Contains(a) || !m.LLC.Contains(a) {
		t.Fatalf("after a cold miss: L1 %v L2 %v LLC %v, want the line in all three", m.D.Contains(a), m.L2.Contains(a), m.LLC.Contains(a))
	}
	st := m.Stats()
	if st.D.Misses != 1 || st.L2.Accesses != 1 || st.L2.Misses != 1 || st.LLC.Accesses != 1 || st.LLC.Misses != 1 {
		t.Fatalf("cold miss stats %+v", st)
	}
	m.Data(a+8, 8, true) // same line: an L1 hit
	if st := m.Stats(); st.L2.Accesses != 1 {
		t.Errorf("an L1 hit looked up L2: %+v", st.L2)
	}
	m.Data(b, 8, false) // evicts a from the 1-line L1
	m.Data(a, 8, false) // L1 miss, L2 hit
	st = m.Stats()
	if st.D.Misses != 3 || st.L2.Accesses != 3 || st.L2.Misses != 2 || st.LLC.Accesses != 2 {
		t.Errorf("L1 miss that hits L2: D %+v L2 %+v LLC %+v, want 3 L1 misses, 3 L2 lookups (2 misses), 2 LLC lookups", st.D, st.L2, st.LLC)
	}
	// Instruction fetch shares the unified outer levels.
	m.Fetch(0x3000, 4)
	if !m.I.Contains(0x3000) || !m.L2.Contains(0x3000) || !m.LLC.Contains(0x3000) {
		t.Errorf("an I miss did not fill L2 and the LLC")
	}
}

// TestOuterLRU: the outer levels evict their least recently used line,
// and an L2 eviction leaves the LLC's copy (no back-invalidation), so the
// evicted line comes back from the LLC.
func TestOuterLRU(t *testing.T) {
	m := NewModel(outerCfg(t))
	const a, b, c = 0x1000, 0x2000, 0x3000
	for _, x := range []uint64{a, b, a, c} { // L2 after a, b: {a, b}; a again: b is LRU; c evicts b
		m.Data(x, 8, false)
	}
	if !m.L2.Contains(a) || m.L2.Contains(b) || !m.L2.Contains(c) {
		t.Fatalf("L2 holds a %v b %v c %v, want a and c (b least recently used)", m.L2.Contains(a), m.L2.Contains(b), m.L2.Contains(c))
	}
	if !m.LLC.Contains(a) || !m.LLC.Contains(b) || !m.LLC.Contains(c) {
		t.Fatalf("the LLC lost a line L2 evicted")
	}
	if ev := m.Stats().L2.Evictions; ev != 1 {
		t.Errorf("L2 evictions %d, want 1", ev)
	}
	before := m.Stats()
	m.Data(b, 8, false)
	st := m.Stats()
	if st.L2.Misses != before.L2.Misses+1 || st.LLC.Misses != before.LLC.Misses || st.LLC.Accesses != before.LLC.Accesses+1 {
		t.Errorf("re-reading b: L2 %+v LLC %+v (before %+v %+v), want an L2 miss served by the LLC", st.L2, st.LLC, before.L2, before.LLC)
	}
	// Filling the 4-way LLC with 4 more lines evicts its LRU line (a
	// was used before b and c were re-used last).
	for _, x := range []uint64{0x4000, 0x5000} {
		m.Data(x, 8, false)
	}
	// LLC use order now: a, c, b, 0x4000, 0x5000 → a was evicted.
	if m.LLC.Contains(a) || !m.LLC.Contains(0x5000) {
		t.Errorf("LLC holds a %v, 0x5000 %v: want a evicted as least recently used", m.LLC.Contains(a), m.LLC.Contains(0x5000))
	}
}

// TestOuterWorkingSet: a working set larger than L1 but smaller than L2
// misses L1 on every pass and hits L2 after the first; one larger than
// L2 but smaller than the LLC hits the LLC.
func TestOuterWorkingSet(t *testing.T) {
	cfg, err := ParseModelConfig("l1d=4k,64,4 l2=16k,64,8 llc=64k,64,16")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bytes            uint64
		l1, l2, llc, mem bool // second pass: misses at that level
		name             string
	}{
		{2 << 10, false, false, false, false, "fits L1"},
		{8 << 10, true, false, false, false, "fits L2"},
		{32 << 10, true, true, false, false, "fits LLC"},
		{128 << 10, true, true, true, true, "memory"},
	} {
		m := NewModel(cfg)
		pass := func() {
			for a := uint64(0x10000); a < 0x10000+tc.bytes; a += 64 {
				m.Data(a, 8, false)
			}
		}
		pass()
		before := m.Stats()
		pass()
		st := m.Stats()
		lines := tc.bytes / 64
		got := [3]uint64{st.D.Misses - before.D.Misses, st.L2.Misses - before.L2.Misses, st.LLC.Misses - before.LLC.Misses}
		want := [3]uint64{}
		for i, miss := range []bool{tc.l1, tc.l2, tc.llc} {
			if miss {
				want[i] = lines
			}
		}
		if got != want {
			t.Errorf("%s (%d KiB): second-pass misses L1/L2/LLC %v, want %v", tc.name, tc.bytes>>10, got, want)
		}
	}
}

// TestOuterShared: CPUs placed in the same LLC domain share its lines;
// another domain's LLC is separate; private L2s stay private.
func TestOuterShared(t *testing.T) {
	s := NewModels(outerCfg(t))
	a, b, c := s.NewCPU(), s.NewCPU(), s.NewCPU()
	a.Place(0, 0)
	b.Place(1, 0)
	c.Place(2, 1)
	if a.LLC != b.LLC || a.LLC == c.LLC || a.L2 == b.L2 {
		t.Fatalf("placement: a.LLC==b.LLC %v, a.LLC==c.LLC %v, a.L2==b.L2 %v", a.LLC == b.LLC, a.LLC == c.LLC, a.L2 == b.L2)
	}
	a.Data(0x1000, 8, false)
	b.Data(0x1000, 8, false)
	c.Data(0x1000, 8, false)
	if st := b.Stats(); st.L2.Misses != 1 || st.LLC.Accesses != 1 || st.LLC.Misses != 0 {
		t.Errorf("b (same LLC as a): L2 %+v LLC %+v, want an LLC hit", st.L2, st.LLC)
	}
	if st := c.Stats(); st.LLC.Misses != 1 {
		t.Errorf("c (other LLC): LLC %+v, want a miss", st.LLC)
	}
	if got := a.LLC.Stats; got.Accesses != 2 || got.Misses != 1 {
		t.Errorf("shared LLC totals %+v, want 2 accesses, 1 miss", got)
	}
}

// TestOuterNoAlloc: accesses through the outer levels allocate nothing.
func TestOuterNoAlloc(t *testing.T) {
	m := NewModel(outerCfg(t))
	var a uint64
	if n := testing.AllocsPerRun(1000, func() {
		a += 0x1040
		m.Data(a, 8, a&0x40 != 0)
		m.Fetch(a+0x100000, 3)
	}); n != 0 {
		t.Errorf("%v allocations per access", n)
	}
}

func TestOuterConfig(t *testing.T) {
	c, err := ParseModelConfig("l2=1m,64,16 llc=32m,64,16,fifo")
	if err != nil {
		t.Fatal(err)
	}
	if want := "l1i=32k,64,4,lru l1d=32k,64,8,lru l2=1m,64,16,lru llc=32m,64,16,fifo icache=strict"; c.String()[:len(want)] != want {
		t.Errorf("String() = %q, want prefix %q", c.String(), want)
	}
	if c2, err := ParseModelConfig(c.String()); err != nil || c2 != c {
		t.Errorf("round trip: %v %+v", err, c2)
	}
	if c, err := ParseModelConfig("l2=1m,64,16 l2=none"); err != nil || c.L2.Size != 0 {
		t.Errorf("l2=none: %v %+v", err, c.L2)
	}
	if _, err := ParseModelConfig("l2=1000,64,16"); err == nil {
		t.Errorf("l2=1000,64,16 accepted")
	}
	if c := DefaultModelConfig(); c.L2.Size != 0 || c.LLC.Size != 0 {
		t.Errorf("the default has outer levels: %+v", c)
	}
}
