package icache

import (
	"math/rand"
	"strings"
	"testing"
)

func TestParseModelConfig(t *testing.T) {
	c, err := ParseModelConfig("l1i=32k,64,4 l1d=32k,64,8")
	if err != nil {
		t.Fatal(err)
	}
	if c != DefaultModelConfig() {
		t.Errorf("got %+v, want the default", c)
	}
	c, err = ParseModelConfig("l1i=16k,32,2,fifo;l1d=1m,128,16 repl=random seed=7 icache=coherent dc=1 ic=2 bcast=3 isb=4 zva=5")
	if err != nil {
		t.Fatal(err)
	}
	want := ModelConfig{
		L1I:    CacheConfig{Size: 16 << 10, Line: 32, Assoc: 2, Policy: Random},
		L1D:    CacheConfig{Size: 1 << 20, Line: 128, Assoc: 16, Policy: Random},
		ICache: ICacheCoherent, Seed: 7,
		Cost: MaintCost{DCLine: 1, ICLine: 2, Broadcast: 3, ISB: 4, ZVA: 5},
	}
	if c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if back, err := ParseModelConfig(c.String()); err != nil || back != c {
		t.Errorf("String round trip: %q → %+v, %v", c.String(), back, err)
	}
	if c, _ := ParseModelConfig(""); c != DefaultModelConfig() {
		t.Errorf("empty: %+v", c)
	}
	for _, bad := range []string{
		"l1i=32k,48,4",      // line not a power of two
		"l1i=32k,8,4",       // line too small
		"l1i=32k,4096,4",    // line too large
		"l1d=24k,64,4",      // 96 sets
		"l1d=32k,64,0",      // no ways
		"l1d=32k,64",        // missing ways
		"l1d=32k,64,4,plru", // unknown policy
		"l1d=x,64,4",
		"l3=1m,64,8", // unknown key
		"l2=1m,64",   // missing ways
		"llc=3m,64,16",
		"icache=maybe",
		"seed",
		"dc=-1",
	} {
		if _, err := ParseModelConfig(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// stream accesses [0, n) with the given stride, passes times.
func stream(c *Cache, n, stride, passes int) {
	for p := 0; p < passes; p++ {
		for a := 0; a < n; a += stride {
			c.Access(uint64(0x100000 + a))
		}
	}
}

// TestCacheStreaming: a streaming access pattern misses exactly as the
// geometry predicts, for every policy.
func TestCacheStreaming(t *testing.T) {
	for _, pol := range []Policy{LRU, FIFO, Random} {
		for _, g := range []CacheConfig{{4096, 64, 4, pol}, {8192, 32, 8, pol}, {2048, 16, 1, pol}, {1024, 64, 16, pol}} {
			lines := g.Size / g.Line
			// Fits: only cold misses, however many passes.
			c := NewCache(g, 1)
			stream(c, g.Size, 8, 3)
			if c.Stats.Misses != uint64(lines) || c.Stats.Evictions != 0 || c.Stats.Accesses != uint64(3*g.Size/8) {
				t.Errorf("%v fits: %+v, want %d misses", g, c.Stats, lines)
			}
			// Twice the cache: LRU and FIFO miss on every line of
			// every pass (each line is evicted before its reuse).
			if pol == Random {
				continue
			}
			c = NewCache(g, 1)
			stream(c, 2*g.Size, 8, 3)
			if want := uint64(3 * 2 * lines); c.Stats.Misses != want || c.Stats.Evictions != want-uint64(lines) {
				t.Errorf("%v twice: %+v, want %d misses", g, c.Stats, want)
			}
		}
	}
}

func TestReplacementPolicies(t *testing.T) {
	// One set of two ways (line 64, 2 ways, 128 bytes): lines A, B, C
	// all map to it. A B A C A: LRU evicts B for C and hits A; FIFO
	// evicts A (filled first) and misses A again.
	const a, b, cc = 0, 128, 256
	seq := []uint64{a, b, a, cc, a}
	for _, tc := range []struct {
		pol    Policy
		misses uint64
	}{{LRU, 3}, {FIFO, 4}} {
		c := NewCache(CacheConfig{128, 64, 2, tc.pol}, 0)
		for _, x := range seq {
			c.Access(x)
		}
		if c.Stats.Misses != tc.misses || c.Stats.Evictions != tc.misses-2 {
			t.Errorf("%v: %+v, want %d misses", tc.pol, c.Stats, tc.misses)
		}
	}
	// Random: reproducible for a seed, and every way gets used.
	run := func(seed uint64) []bool {
		c := NewCache(CacheConfig{512, 64, 8, Random}, seed)
		r := rand.New(rand.NewSource(1))
		var out []bool
		for i := 0; i < 2000; i++ {
			out = append(out, c.Access(uint64(r.Intn(32))*64))
		}
		return out
	}
	x, y, z := run(5), run(5), run(6)
	same, diff := true, false
	for i := range x {
		same = same && x[i] == y[i]
		diff = diff || x[i] != z[i]
	}
	if !same || !diff {
		t.Errorf("random replacement: same seed same result %v, other seed differs %v", same, diff)
	}
}

func TestCacheInvalidate(t *testing.T) {
	c := NewCache(CacheConfig{1024, 64, 2, LRU}, 0)
	c.Access(0x1000)
	if !c.Contains(0x1010) || !c.Invalidate(0x1020) || c.Contains(0x1000) || c.Invalidate(0x1000) {
		t.Fatal("invalidate")
	}
	if c.Access(0x1000) || c.Stats.Misses != 2 || c.Stats.Invalidations != 1 {
		t.Errorf("%+v", c.Stats)
	}
}

// TestFetchRangeExact: accounting a block per line entered gives the
// same counters as looking up every instruction.
func TestFetchRangeExact(t *testing.T) {
	for _, pol := range []Policy{LRU, FIFO, Random} {
		cfg := DefaultModelConfig()
		cfg.L1I = CacheConfig{1024, 32, 2, pol}
		m := NewModel(cfg)
		ref := NewCache(cfg.L1I, 0)
		m.I = NewCache(cfg.L1I, 0) // same seed as ref
		r := rand.New(rand.NewSource(2))
		for i := 0; i < 5000; i++ {
			start := uint64(r.Intn(4096)) &^ 3
			n := uint64(1 + r.Intn(12))
			m.Fetch(start, n)
			for k := uint64(0); k < n; k++ {
				ref.Access(start + 4*k)
			}
		}
		if m.I.Stats != ref.Stats {
			t.Errorf("%v: block accounting %+v, per instruction %+v", pol, m.I.Stats, ref.Stats)
		}
	}
}

func TestModelData(t *testing.T) {
	m := NewModel(DefaultModelConfig())
	m.Data(0x1000, 8, false)  // miss
	m.Data(0x1008, 8, true)   // hit
	m.Data(0x103c, 8, false)  // straddles 0x1000 (hit) and 0x1040 (miss)
	m.Data(0x2000, 0, true)   // nothing
	m.Data(0x1040, 16, false) // hit
	st := m.Stats()
	if st.D.Accesses != 5 || st.D.Misses != 2 || st.DReads != 4 || st.DWrites != 1 || st.DReadMisses != 2 || st.DWriteMisses != 0 {
		t.Errorf("%+v", st)
	}
}

func TestBroadcast(t *testing.T) {
	set := NewModels(DefaultModelConfig())
	a := set.NewCPU()
	b, c := a.Clone(true), a.Clone(true)
	other := a.Clone(false) // another process: not in the domain
	for _, m := range []*Model{a, b, c, other} {
		m.Fetch(0x4000, 4)
	}
	a.ICInvalidate(0x4008)
	cost := DefaultModelConfig().Cost
	if st := a.Stats(); st.ICOps != 1 || st.Broadcasts != 2 || st.Cycles != cost.ICLine+2*cost.Broadcast || st.I.Invalidations != 1 {
		t.Errorf("issuer: %+v", st)
	}
	for _, m := range []*Model{b, c, other} {
		m.Fetch(0x4000, 1)
	}
	for i, m := range []*Model{b, c} {
		if st := m.Stats(); st.I.Invalidations != 1 || st.I.Misses != 2 {
			t.Errorf("remote %d: %+v", i, st.I)
		}
	}
	if st := other.Stats(); st.I.Invalidations != 0 || st.I.Misses != 1 {
		t.Errorf("other process: %+v", st.I)
	}
	c.Release()
	a.ICInvalidate(0x4000)
	if st := a.Stats(); st.Broadcasts != 3 {
		t.Errorf("after Release: %d broadcasts, want 3", st.Broadcasts)
	}
	all := set.Stats()
	if len(all) != 4 || all[3].Proc == all[0].Proc || all[1].Proc != all[0].Proc || all[2].CPU != 2 {
		t.Errorf("set stats: %+v", all)
	}
	var sb strings.Builder
	set.WriteStats(&sb)
	for _, s := range []string{"cache model: l1i=32k,64,4,lru", "cpu 3 (process 1)", "L1I: 5 accesses", "3 broadcast invalidations"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("WriteStats lacks %q:\n%s", s, sb.String())
		}
	}
}

func TestSystemRegisterValues(t *testing.T) {
	m := NewModel(DefaultModelConfig())
	if m.CTR() != 0x8444c004 || m.DCZID() != 4 || m.ZVABlock() != 64 {
		t.Errorf("default: CTR %#x DCZID %#x", m.CTR(), m.DCZID())
	}
	cfg, _ := ParseModelConfig("l1i=32k,16,4 l1d=64k,256,4 icache=coherent")
	m = NewModel(cfg)
	// IminLine 2, DminLine 6, CWG 6, ERG 4, L1Ip PIPT, IDC, DIC, RES1.
	if want := uint64(1<<31 | 1<<29 | 1<<28 | 6<<24 | 4<<20 | 6<<16 | 3<<14 | 2); m.CTR() != want || m.DCZID() != 6 || m.ZVABlock() != 256 {
		t.Errorf("CTR %#x want %#x, DCZID %#x", m.CTR(), want, m.DCZID())
	}
}

// TestFetchRangeWildEnd: a run that left through a jump to a wild address
// (the exit's pc, far above the run) touches only the lines its
// instructions can span; before, FetchRange walked every line up to the
// target (FuzzRunX86 hung in the cache model).
func TestFetchRangeWildEnd(t *testing.T) {
	m := NewModel(DefaultModelConfig())
	m.FetchRange(0x400000, 0xffff800000000000, 3)
	if s := m.I.Stats; s.Accesses != 3 || s.Misses > 3 {
		t.Errorf("accesses %d misses %d, want 3 and at most 3 lines", s.Accesses, s.Misses)
	}
	// A contiguous run is accounted as before: 2 lines of 64 bytes.
	m = NewModel(DefaultModelConfig())
	m.FetchRange(0x400030, 0x400050, 8)
	if s := m.I.Stats; s.Misses != 2 {
		t.Errorf("contiguous run: %d misses, want 2", s.Misses)
	}
}
