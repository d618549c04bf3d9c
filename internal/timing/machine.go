package timing

import (
	"bufio"
	"embed"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Machine is a plain-text machine description: topology, clock,
// cache-line transfer latencies by distance and per-path kernel costs in
// cycles. It holds hardware parameters only: nothing in it depends on how
// many CPUs a run uses, so every multi-CPU effect comes out of the
// contention model.
//
// The format is one "key value" pair per line; '#' starts a comment.
// Keys (all integers unless noted):
//
//	name NAME                   (string)
//	freq_mhz                    core clock
//	sockets, nodes_per_socket, clusters_per_node, cores_per_cluster,
//	threads_per_core            topology; CPUs = their product (≤ 256)
//	cpu_order linear|smt-last   (string) how CPU numbers map to hardware
//	                            threads: linear numbers siblings next to
//	                            each other, smt-last numbers every core's
//	                            first thread before any second one (Intel)
//	smt_penalty_pct             a thread whose sibling is busy pays its
//	                            cycles × pct/100 (core resources shared)
//	xfer.smt, xfer.cluster, xfer.node, xfer.socket, xfer.remote
//	                            cycles to move a line from a CPU at that
//	                            distance (same core, same cluster, same
//	                            NUMA node, same socket, other socket)
//	xfer.memory                 a line nobody caches
//	line.hit                    access to a line the CPU holds
//	line.inval_per_sharer       extra cycles a write pays per other sharer
//	line.reread_per_spinner     home-agent service time per spinner
//	                            re-reading a released lock line
//	insn.cycles                 cycles per retired guest instruction of
//	                            a CPU that does not count classes, and
//	                            of a class without a cpi entry
//	cpi.CLASS                   cycles per retired instruction of the
//	                            class (alu, mul, div, branch, load, store,
//	                            atomic, fp, fpdiv, simd, barrier, dc, ic,
//	                            system: package decode's InsnClass names),
//	                            in hundredths of a cycle, so that a
//	                            superscalar core's fractional CPI is
//	                            expressible: 50 is two per cycle
//	cpi.taken                   extra hundredths of a cycle per taken
//	                            branch (a not-taken one costs cpi.branch)
//	cache.l1i_miss, cache.l1d_miss
//	                            cycles an L1 miss of the cache model
//	                            (--cache-model) adds: the next level's
//	                            hit latency the core does not hide
//	cache.l2, cache.llc         (strings SIZE,LINE,WAYS, e.g. 1m,64,16)
//	                            geometry of the unified L2 and last-level
//	                            cache the cache model adds under the L1s
//	cache.l2_shared, cache.llc_shared
//	                            (strings cpu, core, cluster, node or
//	                            socket; default cpu) which CPUs share one
//	                            copy of the level
//	cache.l2_miss, cache.llc_miss
//	                            cycles an L2 miss (the LLC's hit latency
//	                            beyond L2's) and an LLC miss (memory's
//	                            beyond the LLC's) add on top of the L1
//	                            miss
//	cache.ic_broadcast          cycles a guest IC IVAU adds per other
//	                            thread of its process (the broadcast
//	                            invalidation each of their CPUs must
//	                            acknowledge before the DSB completes)
//	jitter_pct                  each kernel path cost varies by up to
//	                            ±pct % (a seeded per-CPU generator: the
//	                            run stays deterministic), so that CPUs
//	                            with identical loops do not stay in
//	                            lock-step phases real hardware never keeps
//	cost.NAME                   named kernel path cost (trap_entry,
//	                            find_active_uprobe, …; see package tasks)
type Machine struct {
	Name            string
	FreqMHz         int64
	Sockets         int
	NodesPerSocket  int
	ClustersPerNode int
	CoresPerCluster int
	ThreadsPerCore  int
	SMTLast         bool
	SMTPenaltyPct   int64

	XferSMT, XferCluster, XferNode, XferSocket, XferRemote, XferMemory int64
	LineHit, InvalPerSharer, RereadPerSpinner                          int64
	InsnCycles                                                         int64
	JitterPct                                                          int64

	// CPI holds the cpi.CLASS entries (hundredths of a cycle), by
	// class name, cpi.taken included; L1IMiss, L1DMiss and ICBroadcast
	// are cache.l1i_miss, cache.l1d_miss and cache.ic_broadcast.
	CPI                           map[string]int64
	L1IMiss, L1DMiss, ICBroadcast int64

	// L2 and LLC are cache.l2 and cache.llc (zero: absent), shared as
	// L2Shared and LLCShared say; L2Miss and LLCMiss are cache.l2_miss
	// and cache.llc_miss.
	L2, LLC             CacheGeom
	L2Shared, LLCShared Scope
	L2Miss, LLCMiss     int64

	// Costs are the cost.NAME entries, by NAME.
	Costs map[string]int64

	// Source is the text the machine was parsed from.
	Source string
}

// CacheGeom is the geometry of one outer cache level.
type CacheGeom struct{ Size, Line, Ways int }

// Scope is the set of CPUs that share one copy of a cache level.
type Scope uint8

// Sharing scopes, from private to per socket.
const (
	ScopeCPU Scope = iota
	ScopeCore
	ScopeCluster
	ScopeNode
	ScopeSocket
)

var scopeNames = [...]string{ScopeCPU: "cpu", ScopeCore: "core", ScopeCluster: "cluster", ScopeNode: "node", ScopeSocket: "socket"}

func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return "Scope(" + strconv.Itoa(int(s)) + ")"
}

// Domain numbers the copy of a cache level shared at scope s that CPU
// cpu uses: CPUs with the same Domain share it.
func (m *Machine) Domain(cpu int, s Scope) int {
	core, _ := m.place(cpu)
	switch s {
	case ScopeCore:
		return core
	case ScopeCluster:
		return core / m.CoresPerCluster
	case ScopeNode:
		return core / (m.CoresPerCluster * m.ClustersPerNode)
	case ScopeSocket:
		return core / (m.CoresPerCluster * m.ClustersPerNode * m.NodesPerSocket)
	}
	return cpu
}

// parseGeom reads SIZE,LINE,WAYS (SIZE and LINE with an optional k or
// m suffix); package icache checks that the geometry is one it models.
func parseGeom(v string) (CacheGeom, error) {
	f := strings.Split(v, ",")
	if len(f) != 3 {
		return CacheGeom{}, fmt.Errorf("want SIZE,LINE,WAYS, got %q", v)
	}
	var n [3]int
	for i, x := range f {
		mul := 1
		switch {
		case strings.HasSuffix(x, "k"):
			mul, x = 1<<10, x[:len(x)-1]
		case strings.HasSuffix(x, "m"):
			mul, x = 1<<20, x[:len(x)-1]
		}
		k, err := strconv.Atoi(x)
		if err != nil || k <= 0 || k > 1<<30/mul {
			return CacheGeom{}, fmt.Errorf("bad number %q in %q", f[i], v)
		}
		n[i] = k * mul
	}
	return CacheGeom{Size: n[0], Line: n[1], Ways: n[2]}, nil
}

// MaxCPUs bounds a machine's CPU count.
const MaxCPUs = 256

//go:embed machines/*.txt
var builtin embed.FS

// Builtin lists the embedded machine names.
func Builtin() []string {
	ents, _ := builtin.ReadDir("machines")
	var n []string
	for _, e := range ents {
		n = append(n, strings.TrimSuffix(e.Name(), ".txt"))
	}
	sort.Strings(n)
	return n
}

// Lookup returns the embedded machine name, or parses the file at name
// when it is not one (a user's own description).
func Lookup(name string) (*Machine, error) {
	if b, err := builtin.ReadFile("machines/" + name + ".txt"); err == nil {
		return Parse(strings.NewReader(string(b)))
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("machine %q: not built in (have %s) and not a file: %w", name, strings.Join(Builtin(), ", "), err)
	}
	defer f.Close()
	return Parse(f)
}

// Parse reads a machine description.
func Parse(r io.Reader) (*Machine, error) {
	m := &Machine{Costs: map[string]int64{}, CPI: map[string]int64{}, ThreadsPerCore: 1, SMTPenaltyPct: 100, InsnCycles: 1}
	ints := map[string]*int64{
		"freq_mhz": &m.FreqMHz, "smt_penalty_pct": &m.SMTPenaltyPct,
		"xfer.smt": &m.XferSMT, "xfer.cluster": &m.XferCluster, "xfer.node": &m.XferNode,
		"xfer.socket": &m.XferSocket, "xfer.remote": &m.XferRemote, "xfer.memory": &m.XferMemory,
		"line.hit": &m.LineHit, "line.inval_per_sharer": &m.InvalPerSharer,
		"line.reread_per_spinner": &m.RereadPerSpinner, "insn.cycles": &m.InsnCycles, "jitter_pct": &m.JitterPct,
		"cache.l1i_miss": &m.L1IMiss, "cache.l1d_miss": &m.L1DMiss, "cache.ic_broadcast": &m.ICBroadcast,
		"cache.l2_miss": &m.L2Miss, "cache.llc_miss": &m.LLCMiss,
	}
	geoms := map[string]*CacheGeom{"cache.l2": &m.L2, "cache.llc": &m.LLC}
	scopes := map[string]*Scope{"cache.l2_shared": &m.L2Shared, "cache.llc_shared": &m.LLCShared}
	topo := map[string]*int{
		"sockets": &m.Sockets, "nodes_per_socket": &m.NodesPerSocket, "clusters_per_node": &m.ClustersPerNode,
		"cores_per_cluster": &m.CoresPerCluster, "threads_per_core": &m.ThreadsPerCore,
	}
	var src strings.Builder
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		src.WriteString(sc.Text())
		src.WriteByte('\n')
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("machine line %d: want \"key value\", got %q", line, sc.Text())
		}
		k, v := f[0], f[1]
		switch {
		case k == "name":
			m.Name = v
			continue
		case k == "cpu_order":
			switch v {
			case "linear":
				m.SMTLast = false
			case "smt-last":
				m.SMTLast = true
			default:
				return nil, fmt.Errorf("machine line %d: cpu_order %q (want linear or smt-last)", line, v)
			}
			continue
		case geoms[k] != nil:
			g, err := parseGeom(v)
			if err != nil {
				return nil, fmt.Errorf("machine line %d: %s: %w", line, k, err)
			}
			*geoms[k] = g
			continue
		case scopes[k] != nil:
			ok := false
			for sc, name := range scopeNames {
				if v == name {
					*scopes[k], ok = Scope(sc), true
				}
			}
			if !ok {
				return nil, fmt.Errorf("machine line %d: %s %q (want cpu, core, cluster, node or socket)", line, k, v)
			}
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return nil, fmt.Errorf("machine line %d: %s: bad value %q", line, k, v)
		}
		switch {
		case ints[k] != nil:
			*ints[k] = n
		case topo[k] != nil:
			if n < 1 || n > MaxCPUs {
				return nil, fmt.Errorf("machine line %d: %s must be 1..%d", line, k, MaxCPUs)
			}
			*topo[k] = int(n)
		case strings.HasPrefix(k, "cost.") && len(k) > 5:
			m.Costs[k[5:]] = n
		case strings.HasPrefix(k, "cpi.") && len(k) > 4:
			m.CPI[k[4:]] = n
		default:
			return nil, fmt.Errorf("machine line %d: unknown key %q", line, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	m.Source = src.String()
	if m.JitterPct > 50 {
		return nil, fmt.Errorf("machine %s: jitter_pct must be 0..50", m.Name)
	}
	if m.Name == "" || m.FreqMHz <= 0 {
		return nil, fmt.Errorf("machine: name and freq_mhz are required")
	}
	for k, p := range topo {
		if *p == 0 {
			return nil, fmt.Errorf("machine %s: %s is required", m.Name, k)
		}
	}
	if n := m.Sockets * m.NodesPerSocket * m.ClustersPerNode * m.CoresPerCluster * m.ThreadsPerCore; n > MaxCPUs {
		return nil, fmt.Errorf("machine %s: %d CPUs (at most %d)", m.Name, n, MaxCPUs)
	}
	return m, nil
}

// NumCPU is the machine's CPU (hardware thread) count.
func (m *Machine) NumCPU() int {
	return m.Sockets * m.NodesPerSocket * m.ClustersPerNode * m.CoresPerCluster * m.ThreadsPerCore
}

func (m *Machine) cores() int { return m.NumCPU() / m.ThreadsPerCore }

// place maps a CPU number to its core and hardware thread.
func (m *Machine) place(cpu int) (core, thread int) {
	if m.SMTLast {
		return cpu % m.cores(), cpu / m.cores()
	}
	return cpu / m.ThreadsPerCore, cpu % m.ThreadsPerCore
}

// Sibling returns the CPU numbers sharing cpu's core (cpu excluded).
func (m *Machine) Siblings(cpu int) []int {
	core, th := m.place(cpu)
	var s []int
	for t := 0; t < m.ThreadsPerCore; t++ {
		if t == th {
			continue
		}
		if m.SMTLast {
			s = append(s, t*m.cores()+core)
		} else {
			s = append(s, core*m.ThreadsPerCore+t)
		}
	}
	return s
}

// Xfer returns the cycles to move a cache line from CPU a to CPU b.
func (m *Machine) Xfer(a, b int) int64 {
	if a == b {
		return m.LineHit
	}
	if a < 0 || b < 0 {
		return m.XferMemory
	}
	ca, _ := m.place(a)
	cb, _ := m.place(b)
	switch {
	case ca == cb:
		return m.XferSMT
	case ca/m.CoresPerCluster == cb/m.CoresPerCluster:
		return m.XferCluster
	case ca/(m.CoresPerCluster*m.ClustersPerNode) == cb/(m.CoresPerCluster*m.ClustersPerNode):
		return m.XferNode
	case ca/(m.CoresPerCluster*m.ClustersPerNode*m.NodesPerSocket) == cb/(m.CoresPerCluster*m.ClustersPerNode*m.NodesPerSocket):
		return m.XferSocket
	}
	return m.XferRemote
}

// Node returns the NUMA node of cpu.
func (m *Machine) Node(cpu int) int {
	core, _ := m.place(cpu)
	return core / (m.CoresPerCluster * m.ClustersPerNode)
}

// Cost returns the named path cost and whether the machine defines it.
func (m *Machine) Cost(name string) (int64, bool) {
	c, ok := m.Costs[name]
	return c, ok
}
