package timing

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/google/pprof/profile"
)

// TestContentionProfile: a spinlock taken by 4 CPUs at once, each
// holding it 1000 cycles, gives 3 contended acquisitions in the
// profile whose delays (ns at 1000 MHz) sum to the lock table's cycles
// waited; a window excluding the arrivals records nothing; the profile
// parses with Go's mutex-profile sample types and its bytes repeat.
func TestContentionProfile(t *testing.T) {
	run := func(from, to int64) (*Model, []byte) {
		s := newTestSched()
		md := testModel(t, s)
		md.SetProfileWindow(from, to)
		l := md.NewSpinlock("test_lock")
		scripts := make([]func(*CPU), 4)
		for i := range scripts {
			scripts[i] = func(c *CPU) {
				c.Site = 0x1000 + uint64(c.ID)
				l.Lock(c)
				c.Charge(1000)
				l.Unlock(c)
			}
		}
		s.run(md, make([]int64, 4), scripts)
		var b bytes.Buffer
		if err := md.WriteContentionProfile(&b); err != nil {
			t.Fatal(err)
		}
		return md, b.Bytes()
	}
	md, b := run(0, 0)
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 2 || p.SampleType[0].Type != "contentions" || p.SampleType[1].Type != "delay" || p.SampleType[1].Unit != "nanoseconds" {
		t.Fatalf("sample types %v", p.SampleType)
	}
	var n, delay int64
	for _, s := range p.Sample {
		if fn := s.Location[0].Line[0].Function.Name; fn != "test_lock" {
			t.Errorf("leaf %q", fn)
		}
		if len(s.Label["cpu"]) != 1 || s.Location[2].Address != 0x1000+uint64(mustAtoi(t, s.Label["cpu"][0])) {
			t.Errorf("site %#x on cpu %v", s.Location[2].Address, s.Label["cpu"])
		}
		n += s.Value[0]
		delay += s.Value[1]
	}
	st := md.Locks()[0]
	if n != 3 || uint64(n) != st.Contended || delay != st.Waited { // 1000 MHz: 1 cycle = 1 ns
		t.Errorf("profile: %d contentions, %d ns; lock table: %d contended, %d cycles waited", n, delay, st.Contended, st.Waited)
	}
	if _, b2 := run(0, 0); !bytes.Equal(b, b2) {
		t.Error("two identical runs give different profile bytes")
	}
	if md, _ := run(1, 1<<40); len(md.ContentionProfile().Sample) != 0 {
		t.Error("waits outside the window recorded")
	}
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
