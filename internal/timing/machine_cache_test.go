package timing

import (
	"strings"
	"testing"
)

// TestMachineOuterCaches: cache.l2/llc geometry and sharing parse, and
// Domain groups CPUs by the topology (kunpeng916: L2 per 4-core cluster,
// LLC per 16-core node; xeon-80: siblings numbered smt-last share their
// core's L2, a socket's 40 threads its LLC).
func TestMachineOuterCaches(t *testing.T) {
	k, err := Lookup("kunpeng916")
	if err != nil {
		t.Fatal(err)
	}
	if k.L2 != (CacheGeom{1 << 20, 64, 16}) || k.L2Shared != ScopeCluster || k.LLCShared != ScopeNode || k.L2Miss == 0 || k.LLCMiss == 0 {
		t.Fatalf("kunpeng916: L2 %+v %v LLC %+v %v, misses %d %d", k.L2, k.L2Shared, k.LLC, k.LLCShared, k.L2Miss, k.LLCMiss)
	}
	for _, c := range []struct {
		a, b   int
		s      Scope
		shared bool
	}{{0, 3, ScopeCluster, true}, {3, 4, ScopeCluster, false}, {0, 15, ScopeNode, true}, {15, 16, ScopeNode, false},
		{16, 31, ScopeSocket, true}, {31, 32, ScopeSocket, false}, {5, 5, ScopeCPU, true}, {5, 6, ScopeCPU, false}} {
		if got := k.Domain(c.a, c.s) == k.Domain(c.b, c.s); got != c.shared {
			t.Errorf("kunpeng916 CPUs %d and %d share a %v copy: %v, want %v", c.a, c.b, c.s, got, c.shared)
		}
	}
	x, err := Lookup("xeon-80")
	if err != nil {
		t.Fatal(err)
	}
	if x.Domain(3, ScopeCore) != x.Domain(43, ScopeCore) || x.Domain(3, ScopeCore) == x.Domain(4, ScopeCore) ||
		x.Domain(0, ScopeSocket) != x.Domain(59, ScopeSocket) || x.Domain(19, ScopeSocket) == x.Domain(20, ScopeSocket) {
		t.Errorf("xeon-80 core/socket domains wrong")
	}
	for _, n := range Builtin() {
		m, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		if m.L2.Size == 0 || m.LLC.Size == 0 || m.LLC.Size <= m.L2.Size {
			t.Errorf("%s: L2 %+v, LLC %+v: want both, the LLC larger", n, m.L2, m.LLC)
		}
	}
	base := "name x\nfreq_mhz 1000\nsockets 1\nnodes_per_socket 1\nclusters_per_node 1\ncores_per_cluster 2\nthreads_per_core 1\n"
	for _, bad := range []string{"cache.l2 1m,64\n", "cache.llc 1x,64,8\n", "cache.l2_shared die\n", "cache.l2 0,64,8\n"} {
		if _, err := Parse(strings.NewReader(base + bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	m, err := Parse(strings.NewReader(base + "cache.llc 8m,64,16\ncache.llc_shared socket\n"))
	if err != nil || m.LLC != (CacheGeom{8 << 20, 64, 16}) || m.LLCShared != ScopeSocket || m.L2.Size != 0 {
		t.Errorf("parse: %v %+v", err, m)
	}
}
