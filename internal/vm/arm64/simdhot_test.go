package arm64

import (
	"math/rand"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// TestSIMDHotMatchesExecSIMD decodes random instructions of the encoding
// classes execSIMDHot's ops come from (three same, three different, by
// element, scalar three same, shift by immediate, scalar shift by
// immediate, permute), and for every one whose op is hot runs it
// from a random state through execSIMDHot and execSIMD: where the hot
// path takes the instruction the registers must match, and where it
// declines it must have changed nothing.
func TestSIMDHotMatchesExecSIMD(t *testing.T) {
	classes := []struct{ mask, val uint32 }{
		{0x9F200400, 0x0E200400}, // vector three same
		{0x9F200C00, 0x0E200000}, // vector three different
		{0x9F000400, 0x0F000000}, // vector by element
		{0xDF200400, 0x5E200400}, // scalar three same
		{0x9F800400, 0x0F000400}, // vector shift by immediate (immh 0 is the modified-immediate class)
		{0xDF800400, 0x5F000400}, // scalar shift by immediate
		{0xBF208C00, 0x0E000800}, // permute
	}
	rng := rand.New(rand.NewSource(19))
	c := newTestCPU(t, []uint32{0})
	taken, declined := map[decode.A64Op]int{}, 0
	for i := 0; i < 400000; i++ {
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

// TestMulLong16 checks mulLong16's unrolled lanes against the widening
// multiply written out element by element (Arm ARM: SMULL/UMULL,
// SMLAL/UMLAL, SMLSL/UMLSL, 16-bit elements, "2" forms from the upper
// half) on random registers.
func TestMulLong16(t *testing.T) {
	rng := rand.New(rand.NewSource(1916))
	ops := []decode.A64Op{decode.A64VSMULL, decode.A64VUMULL, decode.A64VSMLAL, decode.A64VUMLAL, decode.A64VSMLSL, decode.A64VUMLSL}
	for i := 0; i < 20000; i++ {
		in := decode.A64{Op: ops[i%len(ops)], Size: 1, Q: uint8(rng.Intn(2)), Rd: uint8(rng.Intn(32)), Rn: uint8(rng.Intn(32)), Rm: uint8(rng.Intn(32))}
		var st Regs
		for j := range st.V {
			st.V[j] = [2]uint64{rng.Uint64(), rng.Uint64()}
		}
		x, y, d := st.V[in.Rn][in.Q], st.V[in.Rm][in.Q], st.V[in.Rd]
		signed := in.Op == decode.A64VSMULL || in.Op == decode.A64VSMLAL || in.Op == decode.A64VSMLSL
		var want [2]uint64
		for e := 0; e < 4; e++ {
			xe, ye := int64(uint16(x>>(16*e))), int64(uint16(y>>(16*e)))
			if signed {
				xe, ye = int64(int16(xe)), int64(int16(ye))
			}
			p := uint32(xe * ye)
			old := uint32(d[e/2] >> (32 * (e % 2)))
			switch in.Op {
			case decode.A64VSMLAL, decode.A64VUMLAL:
				p = old + p
			case decode.A64VSMLSL, decode.A64VUMLSL:
				p = old - p
			}
			want[e/2] |= uint64(p) << (32 * (e % 2))
		}
		if !st.mulLong16(&in) {
			t.Fatalf("%v declined", in.Op)
		}
		if st.V[in.Rd] != want {
			t.Fatalf("%v q%d v%d,v%d,v%d: got %x, want %x", in.Op, in.Q, in.Rd, in.Rn, in.Rm, st.V[in.Rd], want)
		}
	}
}

// TestLD1RLoop runs LD1R through the loop's direct call (ld1r): the
// replicated element, immediate and register post-indexing, and a fault
// that reports the LD1R's PC and changes neither the vector nor the base.
func TestLD1RLoop(t *testing.T) {
	c := newTestCPU(t, []uint32{
		0x4ddfc568, // ld1r {v8.8h}, [x11], #2
		0x4dc3c569, // ld1r {v9.8h}, [x11], x3
		0x4d40c96a, // ld1r {v10.4s}, [x11]
		brk0,
	})
	if err := c.mm.Poke([]byte{0x34, 0x12, 0x78, 0x56, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xef, 0xbe, 0xad, 0xde}, tData); err != nil {
		t.Fatal(err)
	}
	c.SetReg(11, tData)
	c.SetReg(3, 16)
	runToBrk(t, c)
	if v := c.regs.V[8]; v != [2]uint64{0x1234123412341234, 0x1234123412341234} {
		t.Errorf("v8 = %x", v)
	}
	if v := c.regs.V[9]; v != [2]uint64{0x5678567856785678, 0x5678567856785678} {
		t.Errorf("v9 = %x", v)
	}
	if v := c.regs.V[10]; v != [2]uint64{0xdeadbeefdeadbeef, 0xdeadbeefdeadbeef} {
		t.Errorf("v10 = %x", v)
	}
	if got := c.Reg(11); got != tData+18 {
		t.Errorf("x11 = %#x, want %#x", got, tData+18)
	}

	c = newTestCPU(t, []uint32{0x4ddfc568, brk0})
	c.SetReg(11, 0x10000000)
	c.regs.V[8] = [2]uint64{1, 2}
	e := c.Run(100)
	if e.Reason != vm.ExitFault || e.PC != tCode || e.Fault.Addr != 0x10000000 {
		t.Errorf("unmapped LD1R: exit %v pc %#x fault %+v", e.Reason, e.PC, e.Fault)
	}
	if c.Reg(11) != 0x10000000 || c.regs.V[8] != [2]uint64{1, 2} {
		t.Errorf("faulting LD1R changed x11 %#x or v8 %x", c.Reg(11), c.regs.V[8])
	}
}
