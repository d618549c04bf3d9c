package timing

import (
	"strings"
	"sync"
	"testing"
)

// testSched is a minimal conservative scheduler: one goroutine per CPU,
// one runs at a time, and Sync/Park hand over to the runnable CPU with
// the lowest clock (ties: lowest ID).
type testSched struct {
	mu    sync.Mutex
	cpus  []*CPU
	baton map[*CPU]chan struct{}
	done  map[*CPU]bool
	wg    sync.WaitGroup
}

func newTestSched() *testSched {
	return &testSched{baton: map[*CPU]chan struct{}{}, done: map[*CPU]bool{}}
}

func (s *testSched) next() *CPU {
	var best *CPU
	for _, c := range s.cpus {
		if s.done[c] || c.Parked() {
			continue
		}
		if best == nil || c.Clock < best.Clock || c.Clock == best.Clock && c.ID < best.ID {
			best = c
		}
	}
	return best
}

func (s *testSched) hand(me *CPU) {
	s.mu.Lock()
	n := s.next()
	s.mu.Unlock()
	if n == me {
		return
	}
	if n != nil {
		s.baton[n] <- struct{}{}
	}
	if me != nil {
		<-s.baton[me]
	}
}

func (s *testSched) Sync(c *CPU) { s.hand(c) }
func (s *testSched) Park(c *CPU) {
	for c.Parked() {
		s.hand(c)
	}
}

// run starts one goroutine per script on the model's CPUs and waits.
func (s *testSched) run(md *Model, starts []int64, scripts []func(c *CPU)) {
	for i, st := range starts {
		c := md.NewCPU(int32(i), st)
		s.cpus = append(s.cpus, c)
		s.baton[c] = make(chan struct{}, 1)
	}
	for i, c := range s.cpus {
		s.wg.Add(1)
		go func(c *CPU, f func(*CPU)) {
			defer s.wg.Done()
			<-s.baton[c]
			f(c)
			s.mu.Lock()
			s.done[c] = true
			s.mu.Unlock()
			s.hand(nil)
		}(c, scripts[i])
	}
	s.baton[s.next()] <- struct{}{}
	s.wg.Wait()
}

const testMachine = `
name test-16
freq_mhz 1000
sockets 2
nodes_per_socket 1
clusters_per_node 2
cores_per_cluster 4
threads_per_core 1
xfer.cluster 20
xfer.node 50
xfer.remote 200
xfer.memory 100
line.hit 2
line.inval_per_sharer 5
line.reread_per_spinner 10
`

func testModel(t *testing.T, s Sched) *Model {
	m, err := Parse(strings.NewReader(testMachine))
	if err != nil {
		t.Fatal(err)
	}
	return New(m, s)
}

func TestSpinlockFIFO(t *testing.T) {
	s := newTestSched()
	md := testModel(t, s)
	l := md.NewSpinlock("l")
	const n = 8
	var order []int32
	var acquiredAt, releasedAt []int64
	starts := make([]int64, n)
	scripts := make([]func(*CPU), n)
	for i := range starts {
		starts[i] = int64(i) * 10 // arrive in tid order, while the first holds it
		scripts[i] = func(c *CPU) {
			l.Lock(c)
			order = append(order, c.TID)
			acquiredAt = append(acquiredAt, c.Clock)
			c.Charge(1000)
			releasedAt = append(releasedAt, c.Clock)
			l.Unlock(c)
		}
	}
	s.run(md, starts, scripts)
	for i, tid := range order {
		if tid != int32(i) {
			t.Fatalf("acquisition order %v, want FIFO 0..%d", order, n-1)
		}
		if i > 0 && acquiredAt[i] <= releasedAt[i-1] {
			t.Errorf("waiter %d acquired at %d, before the release at %d", i, acquiredAt[i], releasedAt[i-1])
		}
	}
	st := md.Locks()[0]
	if st.Acquisitions != n || st.Contended != n-1 || st.Waited <= 0 {
		t.Errorf("stats %+v: want %d acquisitions, %d contended, cycles waited", st, n, n-1)
	}
	// The hand-over grows with the number of spinners: the first waiter
	// (7 spinners) waits longer after the release than the last (none).
	first := acquiredAt[1] - releasedAt[0]
	last := acquiredAt[n-1] - releasedAt[n-2]
	if first <= last {
		t.Errorf("hand-over with 7 spinners %d cycles, with none %d: spinners should slow it", first, last)
	}
}

func TestRWLockReaderCountBounces(t *testing.T) {
	s := newTestSched()
	md := testModel(t, s)
	l := md.NewRWLock("rw")
	const n, iters = 8, 50
	starts := make([]int64, n)
	scripts := make([]func(*CPU), n)
	for i := range scripts {
		scripts[i] = func(c *CPU) {
			for k := 0; k < iters; k++ {
				l.RLock(c)
				c.Charge(20)
				l.RUnlock(c)
				c.Charge(100)
			}
		}
	}
	s.run(md, starts, scripts)
	st := md.Locks()[0]
	if st.Contended != 0 {
		t.Errorf("readers without a writer waited: %+v", st)
	}
	// Interleaved readers on different CPUs pull the count line back
	// and forth: most of the 2*n*iters RMWs are transfers.
	if st.Transfers < n*iters {
		t.Errorf("reader count line moved %d times in %d RMWs: it should bounce", st.Transfers, 2*n*iters)
	}
	// One reader alone keeps the line.
	s1 := newTestSched()
	md1 := testModel(t, s1)
	l1 := md1.NewRWLock("rw")
	s1.run(md1, []int64{0}, []func(*CPU){func(c *CPU) {
		for k := 0; k < iters; k++ {
			l1.RLock(c)
			l1.RUnlock(c)
		}
	}})
	if st := md1.Locks()[0]; st.Transfers != 0 {
		t.Errorf("a single reader's line moved %d times", st.Transfers)
	}
}

func TestPercpuRWSemReadersNeverWait(t *testing.T) {
	s := newTestSched()
	md := testModel(t, s)
	l := md.NewPercpuRWSem("pcpu")
	const n, iters = 16, 50
	starts := make([]int64, n)
	scripts := make([]func(*CPU), n)
	for i := range scripts {
		scripts[i] = func(c *CPU) {
			for k := 0; k < iters; k++ {
				l.RLock(c)
				c.Charge(20)
				l.RUnlock(c)
			}
		}
	}
	s.run(md, starts, scripts)
	st := md.Locks()[0]
	if st.Contended != 0 || st.Waited != 0 || st.Transfers != 0 {
		t.Errorf("per-CPU readers without a writer: %+v; want no waits and no line transfers", st)
	}
	for _, c := range md.CPUs() {
		if c.Waited != 0 {
			t.Errorf("cpu %d waited %d cycles", c.ID, c.Waited)
		}
	}
}

func TestPercpuRWSemWriterBlocksReaders(t *testing.T) {
	s := newTestSched()
	md := testModel(t, s)
	l := md.NewPercpuRWSem("pcpu")
	l.GracePeriod = 500
	var readAt int64
	s.run(md, []int64{0, 10}, []func(*CPU){
		func(c *CPU) { l.Lock(c); c.Charge(2000); l.Unlock(c) },
		func(c *CPU) { l.RLock(c); readAt = c.Clock; l.RUnlock(c) },
	})
	if st := md.Locks()[0]; st.Contended != 1 || readAt < 2500 {
		t.Errorf("reader under a writer: got the lock at %d, stats %+v", readAt, st)
	}
}

func TestAtomicLineTransfersByDistance(t *testing.T) {
	md := testModel(t, nil)
	m := md.M
	if m.NumCPU() != 16 {
		t.Fatalf("CPUs %d", m.NumCPU())
	}
	for _, c := range []struct {
		a, b int
		want int64
	}{{0, 0, 2}, {0, 3, 20}, {0, 4, 50}, {0, 8, 200}, {-1, 3, 100}} {
		if got := m.Xfer(c.a, c.b); got != c.want {
			t.Errorf("Xfer(%d,%d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestBuiltinMachinesParse(t *testing.T) {
	names := Builtin()
	if len(names) < 4 {
		t.Fatalf("built-in machines %v", names)
	}
	for _, n := range names {
		m, err := Lookup(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if m.Name != n {
			t.Errorf("%s: name %q", n, m.Name)
		}
	}
	want := map[string]int{"kunpeng916": 64, "xeon-80": 80, "kvm-32": 32, "laptop-8": 8}
	for n, cpus := range want {
		m, _ := Lookup(n)
		if m.NumCPU() != cpus {
			t.Errorf("%s: %d CPUs, want %d", n, m.NumCPU(), cpus)
		}
	}
	x, _ := Lookup("xeon-80")
	if s := x.Siblings(3); len(s) != 1 || s[0] != 43 {
		t.Errorf("xeon-80 siblings of 3: %v, want [43]", s)
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{
		"name x\nfreq_mhz 1000\nsockets 1\nnodes_per_socket 1\nclusters_per_node 1\ncores_per_cluster 1\nbogus 3\n",
		"name x\nfreq_mhz -1\n",
		"name x\nfreq_mhz 1000\nsockets 300\n",
		"name x\nfreq_mhz 1000\nsockets 16\nnodes_per_socket 16\nclusters_per_node 1\ncores_per_cluster 2\n",
		"freq_mhz 1000\n",
	} {
		if _, err := Parse(strings.NewReader(src)); err == nil {
			t.Errorf("Parse(%q) accepted", src)
		}
	}
}

// TestParseCPI: cpi.CLASS entries (hundredths of a cycle) and the cache
// latencies parse; a bad value fails with its line.
func TestParseCPI(t *testing.T) {
	m, err := Parse(strings.NewReader(testMachine + "cpi.alu 50\ncpi.taken 100\ncache.l1d_miss 21\ncache.l1i_miss 15\ncache.ic_broadcast 40\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.CPI["alu"] != 50 || m.CPI["taken"] != 100 || m.L1DMiss != 21 || m.L1IMiss != 15 || m.ICBroadcast != 40 {
		t.Errorf("parsed %v %d %d %d", m.CPI, m.L1DMiss, m.L1IMiss, m.ICBroadcast)
	}
	if _, err := Parse(strings.NewReader(testMachine + "cpi.alu -1\n")); err == nil || !strings.Contains(err.Error(), "cpi.alu") {
		t.Errorf("negative cpi: %v", err)
	}
}

// TestRetireCentis: fractions of a cycle carry over between calls.
func TestRetireCentis(t *testing.T) {
	md := testModel(t, newTestSched())
	c := md.NewCPU(1, 0)
	for range 3 {
		c.RetireCentis(1, 50) // half a cycle each
	}
	if c.Clock != 1 || c.Insns != 3 {
		t.Errorf("clock %d, insns %d after 3 × 0.5 cycles", c.Clock, c.Insns)
	}
	c.RetireCentis(1, 50)
	if c.Clock != 2 {
		t.Errorf("clock %d after 4 × 0.5 cycles", c.Clock)
	}
}
