package arm64

import (
	"math/rand"
	"testing"

	"github.com/uvm-emu/uvm/decode"
)

// TestSIMDHotMatchesExecSIMD decodes random instructions of the encoding
// classes execSIMDHot's ops come from (three same, three different, by
// element, scalar three same), and for every one whose op is hot runs it
// from a random state through execSIMDHot and execSIMD: where the hot
// path takes the instruction the registers must match, and where it
// declines it must have changed nothing.
func TestSIMDHotMatchesExecSIMD(t *testing.T) {
	classes := []struct{ mask, val uint32 }{
		{0x9F200400, 0x0E200400}, // vector three same
		{0x9F200C00, 0x0E200000}, // vector three different
		{0x9F000400, 0x0F000000}, // vector by element
		{0xDF200400, 0x5E200400}, // scalar three same
	}
	rng := rand.New(rand.NewSource(19))
	c := newTestCPU(t, []uint32{0})
	taken, declined := map[decode.A64Op]int{}, 0
	for i := 0; i < 200000; i++ {
		cl := classes[i%len(classes)]
		raw := rng.Uint32()&^cl.mask | cl.val
		in := decode.DecodeA64(raw)
		if !isSIMDHot(in.Op) {
			continue
		}
		var st Regs
		for j := range st.V {
			st.V[j] = [2]uint64{rng.Uint64(), rng.Uint64()}
		}
		for j := range st.X {
			st.X[j] = rng.Uint64()
		}
		st.NZCV = uint64(rng.Intn(16)) << 28
		hot := st
		if !hot.execSIMDHot(&in) {
			if hot != st {
				t.Fatalf("%08x (%s): declined but changed the registers", raw, decode.DisasmA64(raw, 0))
			}
			declined++
			continue
		}
		taken[in.Op]++
		c.regs = st
		if res := c.execSIMD(&in); res != simdOK {
			t.Fatalf("%08x (%s): hot path took an instruction execSIMD reports %v for", raw, decode.DisasmA64(raw, 0), res)
		}
		if c.regs != hot {
			t.Fatalf("%08x (%s): v%d hot %x, execSIMD %x", raw, decode.DisasmA64(raw, 0), in.Rd, hot.V[in.Rd&31], c.regs.V[in.Rd&31])
		}
	}
	for i, on := range simdHot {
		if op := decode.A64Op(i) + decode.A64SIMDBase; on && taken[op] == 0 {
			t.Errorf("hot op %v never taken by the hot path", op)
		}
	}
	if declined == 0 {
		t.Errorf("no declined forms: the by-element and scalar classes were not exercised")
	}
}
