package icache

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// This file is the cache *model* (see doc.go): per emulated CPU, an L1
// instruction cache and an L1 data cache with a configurable geometry and
// replacement policy, their counters, and the cost of cache maintenance.
// It is independent of the predecoded-instruction cache above it, which
// only uses the model's configuration (line sizes, I-side mode).

// Policy is a cache replacement policy.
type Policy uint8

const (
	// LRU evicts the least recently used line of the set.
	LRU Policy = iota
	// FIFO evicts the line that was filled first.
	FIFO
	// Random evicts a way chosen by a seeded generator (deterministic
	// for a given seed and access sequence).
	Random
)

var policyNames = [...]string{LRU: "lru", FIFO: "fifo", Random: "random"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// CacheConfig is the geometry of one cache.
type CacheConfig struct {
	Size   int // total bytes: Line × Assoc × sets, sets a power of two
	Line   int // bytes per line: a power of two in [MinLine, MaxLine]
	Assoc  int // ways per set (1 = direct mapped)
	Policy Policy
}

// Line size limits. The upper bound is the largest DC ZVA block that
// DCZID_EL0 can describe (2 KiB) and keeps every line inside one page.
const (
	MinLine = 16
	MaxLine = 2048
)

// Sets is the number of sets.
func (c CacheConfig) Sets() int {
	if c.Line <= 0 || c.Assoc <= 0 {
		return 0
	}
	return c.Size / (c.Line * c.Assoc)
}

// Validate checks the geometry.
func (c CacheConfig) Validate() error {
	switch {
	case c.Line < MinLine || c.Line > MaxLine || c.Line&(c.Line-1) != 0:
		return fmt.Errorf("line size %d: must be a power of two in [%d, %d]", c.Line, MinLine, MaxLine)
	case c.Assoc < 1 || c.Assoc > 64:
		return fmt.Errorf("associativity %d: must be in [1, 64]", c.Assoc)
	case c.Size <= 0 || c.Size%(c.Line*c.Assoc) != 0:
		return fmt.Errorf("size %d: must be a multiple of line × ways (%d)", c.Size, c.Line*c.Assoc)
	case c.Sets()&(c.Sets()-1) != 0:
		return fmt.Errorf("size %d: %d sets is not a power of two", c.Size, c.Sets())
	case c.Size > 1<<30:
		return fmt.Errorf("size %d: too large", c.Size)
	case c.Policy > Random:
		return fmt.Errorf("unknown replacement policy %d", c.Policy)
	}
	return nil
}

func (c CacheConfig) String() string {
	return fmt.Sprintf("%s,%d,%d,%s", sizeString(c.Size), c.Line, c.Assoc, c.Policy)
}

func sizeString(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "m"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "k"
	}
	return strconv.Itoa(n)
}

// ICacheMode is how arm64 instruction fetch relates to data stores while
// the model is on. x86 is always coherent.
type ICacheMode uint8

const (
	// ICacheStrict is arm64's architectural minimum (the default): a
	// store reaches instruction fetch only through DC CVAU of the line,
	// IC IVAU of the line and, for the fetching CPU, a context
	// synchronisation. CTR_EL0 reports IDC = DIC = 0.
	ICacheStrict ICacheMode = iota
	// ICacheCoherent makes stores visible to fetch as with the model
	// off (after the next branch). CTR_EL0 reports IDC = DIC = 1, so
	// libgcc's __clear_cache does no maintenance.
	ICacheCoherent
)

func (m ICacheMode) String() string {
	if m == ICacheCoherent {
		return "coherent"
	}
	return "strict"
}

// MaintCost is the modelled cost of cache maintenance, in cycles.
type MaintCost struct {
	DCLine    uint64 // per line of DC CVAU / CVAC / CIVAC
	ICLine    uint64 // per line of IC IVAU on the issuing CPU
	Broadcast uint64 // per IC IVAU line, per other CPU of the process
	ISB       uint64 // per context synchronisation by ISB
	ZVA       uint64 // per DC ZVA block
}

// ModelConfig configures the cache model of every CPU of an emulated
// system.
type ModelConfig struct {
	L1I, L1D CacheConfig
	// L2 and LLC are the unified outer levels; a zero Size means the
	// level is absent. An L1 miss looks the line up in L2, an L2 miss
	// in the LLC: every level that misses is filled (inclusive fills;
	// an outer eviction does not back-invalidate the inner levels).
	// Each CPU has its own unless Model.Place gives it its domain's.
	L2, LLC CacheConfig
	ICache  ICacheMode
	// Seed seeds Random replacement (each CPU's generator is derived
	// from Seed and the CPU's index).
	Seed uint64
	Cost MaintCost
}

// DefaultModelConfig is a Cortex-A72/Neoverse-like L1: 32 KiB 4-way
// instruction and 32 KiB 8-way data caches with 64-byte lines, LRU,
// strict arm64 I-side. The maintenance costs are round numbers of the
// order measured on such cores (a clean to the point of unification that
// hits L1, an I-cache invalidate, and a DVM broadcast message per remote
// core).
func DefaultModelConfig() ModelConfig {
	return ModelConfig{
		L1I:  CacheConfig{Size: 32 << 10, Line: 64, Assoc: 4, Policy: LRU},
		L1D:  CacheConfig{Size: 32 << 10, Line: 64, Assoc: 8, Policy: LRU},
		Cost: MaintCost{DCLine: 20, ICLine: 10, Broadcast: 40, ISB: 15, ZVA: 4},
	}
}

// Validate checks both geometries.
func (c ModelConfig) Validate() error {
	if err := c.L1I.Validate(); err != nil {
		return fmt.Errorf("l1i: %w", err)
	}
	if err := c.L1D.Validate(); err != nil {
		return fmt.Errorf("l1d: %w", err)
	}
	for _, l := range []struct {
		name string
		c    CacheConfig
	}{{"l2", c.L2}, {"llc", c.LLC}} {
		if l.c.Size == 0 {
			continue
		}
		if err := l.c.Validate(); err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
	}
	if c.ICache > ICacheCoherent {
		return fmt.Errorf("unknown icache mode %d", c.ICache)
	}
	return nil
}

// String returns the configuration in ParseModelConfig's syntax.
func (c ModelConfig) String() string {
	outer := ""
	if c.L2.Size != 0 {
		outer += " l2=" + c.L2.String()
	}
	if c.LLC.Size != 0 {
		outer += " llc=" + c.LLC.String()
	}
	return fmt.Sprintf("l1i=%s l1d=%s%s icache=%s seed=%d dc=%d ic=%d bcast=%d isb=%d zva=%d",
		c.L1I, c.L1D, outer, c.ICache, c.Seed, c.Cost.DCLine, c.Cost.ICLine, c.Cost.Broadcast, c.Cost.ISB, c.Cost.ZVA)
}

// ParseModelConfig parses a configuration string: blank- or
// semicolon-separated KEY=VALUE items applied, in order, to
// DefaultModelConfig:
//
//	l1i=SIZE,LINE,WAYS[,POLICY]   L1 instruction cache (SIZE: bytes, with
//	l1d=SIZE,LINE,WAYS[,POLICY]   an optional k or m suffix)
//	l2=SIZE,LINE,WAYS[,POLICY]    unified L2 and last-level cache (absent
//	llc=SIZE,LINE,WAYS[,POLICY]   by default; "none" removes one)
//	repl=POLICY                   every cache: lru, fifo or random
//	seed=N                        seed of random replacement
//	icache=strict|coherent        arm64 I-side mode
//	dc=N ic=N bcast=N isb=N zva=N maintenance costs in cycles (MaintCost)
//
// Example: "l1i=32k,64,4 l1d=32k,64,8".
func ParseModelConfig(s string) (ModelConfig, error) {
	c := DefaultModelConfig()
	items := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == ';' })
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok {
			return c, fmt.Errorf("cache config %q: want KEY=VALUE", it)
		}
		k = strings.ToLower(k)
		var err error
		switch k {
		case "l1i":
			c.L1I, err = parseCache(v, c.L1I.Policy)
		case "l1d":
			c.L1D, err = parseCache(v, c.L1D.Policy)
		case "l2", "llc":
			var cc CacheConfig
			if v != "none" {
				cc, err = parseCache(v, c.L1D.Policy)
			}
			if k == "l2" {
				c.L2 = cc
			} else {
				c.LLC = cc
			}
		case "repl", "policy":
			var p Policy
			if p, err = ParsePolicy(v); err == nil {
				c.L1I.Policy, c.L1D.Policy = p, p
				for _, o := range []*CacheConfig{&c.L2, &c.LLC} {
					if o.Size != 0 {
						o.Policy = p
					}
				}
			}
		case "seed":
			c.Seed, err = strconv.ParseUint(v, 0, 64)
		case "icache":
			c.ICache, err = ParseICacheMode(v)
		case "dc", "ic", "bcast", "isb", "zva":
			var n uint64
			if n, err = strconv.ParseUint(v, 0, 32); err == nil {
				switch k {
				case "dc":
					c.Cost.DCLine = n
				case "ic":
					c.Cost.ICLine = n
				case "bcast":
					c.Cost.Broadcast = n
				case "isb":
					c.Cost.ISB = n
				case "zva":
					c.Cost.ZVA = n
				}
			}
		default:
			return c, fmt.Errorf("cache config: unknown key %q", k)
		}
		if err != nil {
			return c, fmt.Errorf("cache config %q: %w", it, err)
		}
	}
	return c, c.Validate()
}

// ParsePolicy parses lru, fifo or random.
func ParsePolicy(s string) (Policy, error) {
	for p, n := range policyNames {
		if strings.EqualFold(s, n) {
			return Policy(p), nil
		}
	}
	return 0, fmt.Errorf("unknown replacement policy %q (lru, fifo, random)", s)
}

// ParseICacheMode parses strict or coherent.
func ParseICacheMode(s string) (ICacheMode, error) {
	switch strings.ToLower(s) {
	case "strict":
		return ICacheStrict, nil
	case "coherent":
		return ICacheCoherent, nil
	}
	return 0, fmt.Errorf("unknown icache mode %q (strict, coherent)", s)
}

func parseCache(s string, pol Policy) (CacheConfig, error) {
	f := strings.Split(s, ",")
	if len(f) != 3 && len(f) != 4 {
		return CacheConfig{}, errors.New("want SIZE,LINE,WAYS[,POLICY]")
	}
	size, err := parseSize(f[0])
	if err != nil {
		return CacheConfig{}, err
	}
	line, err := parseSize(f[1])
	if err != nil {
		return CacheConfig{}, err
	}
	ways, err := strconv.Atoi(f[2])
	if err != nil {
		return CacheConfig{}, fmt.Errorf("ways %q: %w", f[2], err)
	}
	if len(f) == 4 {
		if pol, err = ParsePolicy(f[3]); err != nil {
			return CacheConfig{}, err
		}
	}
	c := CacheConfig{Size: size, Line: line, Assoc: ways, Policy: pol}
	return c, c.Validate()
}

func parseSize(s string) (int, error) {
	mul := 1
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		mul, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 1<<30/mul {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mul, nil
}

// CacheStats are the counters of one cache.
type CacheStats struct {
	// Accesses: for the I-cache, instructions fetched; for the D-cache,
	// cache lines touched by loads and stores (an access that straddles
	// two lines counts twice).
	Accesses  uint64
	Misses    uint64
	Evictions uint64 // fills that replaced a valid line
	// Invalidations: lines dropped by maintenance (IC IVAU, local or
	// broadcast by another CPU).
	Invalidations uint64
}

// Hits is Accesses - Misses.
func (s CacheStats) Hits() uint64 { return s.Accesses - s.Misses }

// Cache is one set-associative cache: tags only, no data (uvm's memory
// is always the truth; the model only decides hit or miss).
type Cache struct {
	cfg       CacheConfig
	lineShift uint
	setMask   uint64
	ways      int
	// tags[set*ways+way] holds line number + 1 (0 = invalid); stamp is
	// the last use (LRU) or the fill time (FIFO).
	tags  []uint64
	stamp []uint64
	clock uint64
	rng   uint64
	// last is the line number of the latest lookup + 1 (0: none). It is
	// the most recently used line of its set, so looking it up again
	// hits and changes no replacement state, under every policy.
	last  uint64
	Stats CacheStats
}

// NewCache returns an empty cache; cfg must be valid. seed feeds Random
// replacement.
func NewCache(cfg CacheConfig, seed uint64) *Cache {
	n := cfg.Sets() * cfg.Assoc
	return &Cache{
		cfg:       cfg,
		lineShift: uint(bits.TrailingZeros(uint(cfg.Line))),
		setMask:   uint64(cfg.Sets() - 1),
		ways:      cfg.Assoc,
		tags:      make([]uint64, n),
		stamp:     make([]uint64, n),
		rng:       seed*0x9e3779b97f4a7c15 + 0x2545f4914f6cdd1d,
	}
}

// Config returns the geometry.
func (c *Cache) Config() CacheConfig { return c.cfg }

// LineShift is log2 of the line size.
func (c *Cache) LineShift() uint { return c.lineShift }

// Access looks up the line holding addr, fills it on a miss, and counts
// one access. It reports whether it hit.
func (c *Cache) Access(addr uint64) bool {
	c.Stats.Accesses++
	return c.lookup(addr >> c.lineShift)
}

// lookup is Access by line number without counting the access.
func (c *Cache) lookup(line uint64) bool {
	tag := line + 1
	if tag == c.last {
		return true
	}
	c.last = tag
	base := int(line&c.setMask) * c.ways
	set := c.tags[base : base+c.ways]
	c.clock++
	for w, t := range set {
		if t == tag {
			if c.cfg.Policy == LRU {
				c.stamp[base+w] = c.clock
			}
			return true
		}
	}
	c.Stats.Misses++
	victim := -1
	for w, t := range set {
		if t == 0 {
			victim = w
			break
		}
	}
	if victim < 0 {
		c.Stats.Evictions++
		if c.cfg.Policy == Random {
			// xorshift64*: deterministic for a given seed.
			c.rng ^= c.rng >> 12
			c.rng ^= c.rng << 25
			c.rng ^= c.rng >> 27
			victim = int((c.rng * 0x2545f4914f6cdd1d >> 32) % uint64(c.ways))
		} else { // LRU: oldest use; FIFO: oldest fill
			st := c.stamp[base : base+c.ways]
			victim = 0
			for w := 1; w < len(st); w++ {
				if st[w] < st[victim] {
					victim = w
				}
			}
		}
	}
	set[victim] = tag
	c.stamp[base+victim] = c.clock
	return false
}

// Invalidate drops the line holding addr if present and reports whether
// it was.
func (c *Cache) Invalidate(addr uint64) bool {
	line := addr >> c.lineShift
	base := int(line&c.setMask) * c.ways
	for w := 0; w < c.ways; w++ {
		if c.tags[base+w] == line+1 {
			c.tags[base+w] = 0
			c.Stats.Invalidations++
			if c.last == line+1 {
				c.last = 0
			}
			return true
		}
	}
	return false
}

// Contains reports whether the line holding addr is cached (no side
// effects; for tests).
func (c *Cache) Contains(addr uint64) bool {
	line := addr >> c.lineShift
	base := int(line&c.setMask) * c.ways
	for w := 0; w < c.ways; w++ {
		if c.tags[base+w] == line+1 {
			return true
		}
	}
	return false
}

// Stats is everything the model counted for one CPU.
type Stats struct {
	// CPU is the model's index in its Models set (creation order);
	// Proc numbers the process (address space) it belongs to, in
	// order of creation as well.
	CPU, Proc int
	I, D      CacheStats
	// L2 and LLC count this CPU's lookups in the outer levels (one per
	// line an inner level missed), its misses there and the evictions
	// its fills caused; a shared level's own Cache.Stats sums its CPUs.
	L2, LLC CacheStats
	// DReads/DWrites split D.Accesses; DReadMisses/DWriteMisses split
	// D.Misses.
	DReads, DWrites, DReadMisses, DWriteMisses uint64
	// Maintenance operations issued by this CPU: DC CVAU/CVAC/CIVAC
	// lines, IC IVAU lines, IC IVAU line invalidations sent to other
	// CPUs, ISB context synchronisations, DC ZVA blocks.
	DCOps, ICOps, Broadcasts, ISBs, ZVAs uint64
	// Cycles is the modelled cost of that maintenance (MaintCost).
	Cycles uint64
}

// Model is the cache model of one emulated CPU. It is owned by the CPU's
// goroutine, except for the broadcast queue through which other CPUs of
// the process invalidate its I-cache lines.
type Model struct {
	cfg   ModelConfig
	set   *Models
	group *procGroup
	index int

	I, D *Cache
	// L2 and LLC are the outer levels (nil when absent): the CPU's own,
	// or its domain's after Place.
	L2, LLC *Cache
	st      Stats

	// pending holds I-cache lines (addresses) invalidated by other CPUs'
	// IC IVAU, applied by the owner at its next fetch accounting.
	pendingMu sync.Mutex
	pending   []uint64
	hasPend   atomic.Bool
}

// procGroup is the set of CPUs of one process: IC IVAU is broadcast to
// them (inner shareable domain).
type procGroup struct {
	mu      sync.Mutex
	members []*Model
	id      int
}

// Models is the set of every CPU model of one emulated system (a
// tasks.Kernel): it hands out per-CPU models with one configuration and
// collects their statistics.
type Models struct {
	cfg    ModelConfig
	mu     sync.Mutex
	all    []*Model
	nprocs int
	// shared holds the outer caches Place hands out, by level (0 L2,
	// 1 LLC) and domain.
	shared [2]map[int]*Cache
}

// NewModels returns an empty set; cfg must be valid (ParseModelConfig
// validates).
func NewModels(cfg ModelConfig) *Models {
	return &Models{cfg: cfg}
}

// Config returns the configuration.
func (s *Models) Config() ModelConfig { return s.cfg }

// NewCPU returns the model of the first CPU of a new process.
func (s *Models) NewCPU() *Model {
	s.mu.Lock()
	g := &procGroup{id: s.nprocs}
	s.nprocs++
	s.mu.Unlock()
	return s.newModel(g)
}

func (s *Models) newModel(g *procGroup) *Model {
	s.mu.Lock()
	m := &Model{cfg: s.cfg, set: s, group: g, index: len(s.all)}
	s.all = append(s.all, m)
	s.mu.Unlock()
	m.I = NewCache(s.cfg.L1I, s.cfg.Seed^uint64(m.index)<<1)
	m.D = NewCache(s.cfg.L1D, s.cfg.Seed^(uint64(m.index)<<1|1))
	if s.cfg.L2.Size != 0 {
		m.L2 = NewCache(s.cfg.L2, s.cfg.Seed^(uint64(m.index)<<2|2))
	}
	if s.cfg.LLC.Size != 0 {
		m.LLC = NewCache(s.cfg.LLC, s.cfg.Seed^(uint64(m.index)<<2|3))
	}
	m.st.CPU, m.st.Proc = m.index, g.id
	g.mu.Lock()
	g.members = append(g.members, m)
	g.mu.Unlock()
	return m
}

// NewModel returns a stand-alone model (a set of one), for tests and
// single-CPU use.
func NewModel(cfg ModelConfig) *Model { return NewModels(cfg).NewCPU() }

// Stats returns the statistics of every CPU, in creation order. Call it
// when the CPUs are not running (e.g. after the guest exited).
func (s *Models) Stats() []Stats {
	s.mu.Lock()
	all := append([]*Model(nil), s.all...)
	s.mu.Unlock()
	out := make([]Stats, len(all))
	for i, m := range all {
		out[i] = m.Stats()
	}
	return out
}

// WriteStats prints the --stats lines of every CPU.
func (s *Models) WriteStats(w io.Writer) {
	fmt.Fprintf(w, "  cache model: %s\n", s.cfg)
	for _, st := range s.Stats() {
		WriteStats(w, st)
	}
}

// WriteStats prints one CPU's statistics (two-space indented lines).
func WriteStats(w io.Writer, st Stats) {
	pct := func(m, a uint64) float64 {
		if a == 0 {
			return 0
		}
		return 100 * float64(m) / float64(a)
	}
	fmt.Fprintf(w, "  cpu %d (process %d):\n", st.CPU, st.Proc)
	fmt.Fprintf(w, "    L1I: %d accesses, %d misses (%.2f%%), %d evictions, %d invalidations\n",
		st.I.Accesses, st.I.Misses, pct(st.I.Misses, st.I.Accesses), st.I.Evictions, st.I.Invalidations)
	fmt.Fprintf(w, "    L1D: %d accesses (%d reads, %d writes), %d misses (%.2f%%; %d read, %d write), %d evictions\n",
		st.D.Accesses, st.DReads, st.DWrites, st.D.Misses, pct(st.D.Misses, st.D.Accesses), st.DReadMisses, st.DWriteMisses, st.D.Evictions)
	for _, l := range []struct {
		name string
		s    CacheStats
	}{{"L2", st.L2}, {"LLC", st.LLC}} {
		if l.s.Accesses != 0 {
			fmt.Fprintf(w, "    %s: %d accesses, %d misses (%.2f%%), %d evictions\n",
				l.name, l.s.Accesses, l.s.Misses, pct(l.s.Misses, l.s.Accesses), l.s.Evictions)
		}
	}
	fmt.Fprintf(w, "    maintenance: %d DC CVAU, %d IC IVAU, %d broadcast invalidations, %d ISB, %d DC ZVA; %d cycles\n",
		st.DCOps, st.ICOps, st.Broadcasts, st.ISBs, st.ZVAs, st.Cycles)
}

// Clone returns a model for a new CPU with the same configuration: a
// thread of the same process when sameProcess is set (it receives this
// process's IC IVAU broadcasts), else the first CPU of a new process
// (fork).
func (m *Model) Clone(sameProcess bool) *Model {
	if sameProcess {
		return m.set.newModel(m.group)
	}
	return m.set.NewCPU()
}

// Release removes the CPU from its process's broadcast domain (thread
// exit); its statistics stay in the set.
func (m *Model) Release() {
	g := m.group
	g.mu.Lock()
	for i, x := range g.members {
		if x == m {
			g.members = append(g.members[:i], g.members[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
}

// Config returns the configuration.
func (m *Model) Config() ModelConfig { return m.cfg }

// Strict reports whether the arm64 I-side is non-coherent (ICacheStrict).
func (m *Model) Strict() bool { return m.cfg.ICache == ICacheStrict }

// Stats returns the CPU's counters.
func (m *Model) Stats() Stats {
	st := m.st
	st.I, st.D = m.I.Stats, m.D.Stats
	return st
}

// Place makes the CPU use the L2 and LLC of the given sharing domains
// (a cluster, NUMA node, …: every CPU placed in the same domain of a
// level shares that level's one cache, so their fills evict each
// other's lines); a negative domain keeps the CPU's own cache. Call it
// before the CPU runs, and only when the CPUs sharing a cache never run
// at the same time (the deterministic scheduler: tasks.Options.Machine).
// Tags are addresses, so CPUs of different processes sharing a cache
// see each other's lines as distinct only where their addresses differ.
func (m *Model) Place(l2Domain, llcDomain int) {
	s := m.set
	s.mu.Lock()
	defer s.mu.Unlock()
	for lvl, p := range [2]struct {
		c   **Cache
		cfg CacheConfig
		dom int
	}{{&m.L2, s.cfg.L2, l2Domain}, {&m.LLC, s.cfg.LLC, llcDomain}} {
		if *p.c == nil || p.dom < 0 {
			continue
		}
		if s.shared[lvl] == nil {
			s.shared[lvl] = map[int]*Cache{}
		}
		c := s.shared[lvl][p.dom]
		if c == nil {
			c = NewCache(p.cfg, s.cfg.Seed^uint64(p.dom)<<8^uint64(lvl+2))
			s.shared[lvl][p.dom] = c
		}
		*p.c = c
	}
}

// outer looks the line holding addr up in L2 and then the LLC after an
// L1 miss, stopping at the first level that holds it; every level that
// misses is filled (inclusive fills).
func (m *Model) outer(addr uint64) {
	if c := m.L2; c != nil && m.outerHit(c, &m.st.L2, addr) {
		return
	}
	if c := m.LLC; c != nil {
		m.outerHit(c, &m.st.LLC, addr)
	}
}

func (m *Model) outerHit(c *Cache, st *CacheStats, addr uint64) bool {
	st.Accesses++
	c.Stats.Accesses++
	ev := c.Stats.Evictions
	if c.lookup(addr >> c.lineShift) {
		return true
	}
	st.Misses++
	st.Evictions += c.Stats.Evictions - ev
	return false
}

// Fetch accounts n sequential 4-byte instruction fetches starting at pc
// (one straight-line run of a block).
func (m *Model) Fetch(pc, n uint64) {
	m.FetchRange(pc, pc+4*n, n)
}

// FetchRange accounts n instruction fetches covering the bytes
// [start, end) in order (x86: variable-length instructions). The I-cache
// is looked up once per line entered; instructions in the line just
// looked up are hits by construction (the same result as looking up every
// instruction, for every policy: re-touching the most recent line changes
// no replacement state).
func (m *Model) FetchRange(start, end, n uint64) {
	if m.hasPend.Load() {
		m.applyPending()
	}
	if end <= start {
		return
	}
	c := m.I
	c.Stats.Accesses += n
	l, last := start>>c.lineShift, (end-1)>>c.lineShift
	// n instructions of at most 15 bytes (x86; arm64's are 4) touch at
	// most this many lines. An end beyond it is not the run's: the run
	// left through a control transfer whose target is the exit's pc (a
	// jump to a wild address that faults), and without the bound the
	// loop below walks the address space (a hang FuzzRunX86 found).
	if maxLines := (15*n)>>c.lineShift + 2; n < 1<<40 && last-l > maxLines {
		last = l + maxLines
	}
	if l+1 == c.last { // the block starts in the line the last one ended in
		l++
	}
	for ; l <= last; l++ {
		if !c.lookup(l) && (m.L2 != nil || m.LLC != nil) {
			m.outer(l << c.lineShift)
		}
	}
}

// Data accounts a load (write false) or store of n bytes at addr: one
// access per line touched.
func (m *Model) Data(addr, n uint64, write bool) {
	c := m.D
	if l := addr >> c.lineShift; l+1 == c.last && (addr+n-1)>>c.lineShift == l && n != 0 {
		// The line of the previous access: a hit.
		c.Stats.Accesses++
		if write {
			m.st.DWrites++
		} else {
			m.st.DReads++
		}
		return
	}
	m.data(addr, n, write)
}

func (m *Model) data(addr, n uint64, write bool) {
	if n == 0 {
		return
	}
	c := m.D
	first, last := addr>>c.lineShift, (addr+n-1)>>c.lineShift
	for l := first; l <= last; l++ {
		c.Stats.Accesses++
		hit := c.lookup(l)
		if !hit && (m.L2 != nil || m.LLC != nil) {
			m.outer(l << c.lineShift)
		}
		if write {
			m.st.DWrites++
			if !hit {
				m.st.DWriteMisses++
			}
		} else {
			m.st.DReads++
			if !hit {
				m.st.DReadMisses++
			}
		}
	}
}

// DCClean accounts DC CVAU/CVAC/CIVAC of the line holding addr: a clean
// touches the line (a read access) and costs Cost.DCLine.
func (m *Model) DCClean(addr uint64) {
	m.st.DCOps++
	m.st.Cycles += m.cfg.Cost.DCLine
	m.Data(addr&^uint64(m.cfg.L1D.Line-1), 1, false)
}

// ICInvalidate accounts IC IVAU of the line holding addr: it drops the
// line from this CPU's I-cache and, broadcast, from every other CPU's of
// the process; the cost is Cost.ICLine plus Cost.Broadcast per other CPU.
func (m *Model) ICInvalidate(addr uint64) {
	line := addr &^ uint64(m.cfg.L1I.Line-1)
	m.st.ICOps++
	m.st.Cycles += m.cfg.Cost.ICLine
	m.I.Invalidate(line)
	g := m.group
	g.mu.Lock()
	for _, o := range g.members {
		if o == m {
			continue
		}
		m.st.Broadcasts++
		m.st.Cycles += m.cfg.Cost.Broadcast
		o.pendingMu.Lock()
		o.pending = append(o.pending, line)
		o.pendingMu.Unlock()
		o.hasPend.Store(true)
	}
	g.mu.Unlock()
}

// ISB accounts a context synchronisation by ISB.
func (m *Model) ISB() {
	m.st.ISBs++
	m.st.Cycles += m.cfg.Cost.ISB
}

// ZVA accounts DC ZVA of the block at addr (a write of one line).
func (m *Model) ZVA(addr uint64) {
	m.st.ZVAs++
	m.st.Cycles += m.cfg.Cost.ZVA
	m.Data(addr, uint64(m.cfg.L1D.Line), true)
}

func (m *Model) applyPending() {
	m.pendingMu.Lock()
	p := m.pending
	m.pending = nil
	m.hasPend.Store(false)
	m.pendingMu.Unlock()
	for _, a := range p {
		m.I.Invalidate(a)
	}
}

// CTR is the CTR_EL0 value describing the model: IminLine and DminLine
// from the line sizes, PIPT instruction cache, CWG = DminLine, ERG = 64
// bytes (the exclusive monitor's granule), and IDC = DIC = 1 only in
// coherent mode.
func (m *Model) CTR() uint64 {
	il := uint64(bits.TrailingZeros(uint(m.cfg.L1I.Line)) - 2)
	dl := uint64(bits.TrailingZeros(uint(m.cfg.L1D.Line)) - 2)
	v := uint64(1)<<31 | dl<<24 | 4<<20 | dl<<16 | 3<<14 | il
	if m.cfg.ICache == ICacheCoherent {
		v |= 1<<29 | 1<<28
	}
	return v
}

// DCZID is the DCZID_EL0 value: DC ZVA permitted, block = one D line.
func (m *Model) DCZID() uint64 {
	return uint64(bits.TrailingZeros(uint(m.cfg.L1D.Line)) - 2)
}

// ZVABlock is the number of bytes DC ZVA zeroes (the D line size).
func (m *Model) ZVABlock() uint64 { return uint64(m.cfg.L1D.Line) }

// ILine and DLine are the line sizes.
func (m *Model) ILine() uint64 { return uint64(m.cfg.L1I.Line) }

// DLine is the data cache line size.
func (m *Model) DLine() uint64 { return uint64(m.cfg.L1D.Line) }
