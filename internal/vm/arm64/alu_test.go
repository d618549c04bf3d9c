package arm64

import (
	"fmt"
	"math/big"
	"math/rand"
	"testing"
)

// refAdd computes AddWithCarry(a, b, cin) over width bits with math/big,
// independently of the interpreter's bit tricks.
func refAdd(a, b, cin uint64, width uint) (uint64, uint64) {
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), width), big.NewInt(1))
	ua := new(big.Int).And(new(big.Int).SetUint64(a), mask)
	ub := new(big.Int).And(new(big.Int).SetUint64(b), mask)
	signed := func(u *big.Int) *big.Int {
		if u.Bit(int(width)-1) == 1 {
			return new(big.Int).Sub(u, new(big.Int).Lsh(big.NewInt(1), width))
		}
		return new(big.Int).Set(u)
	}
	usum := new(big.Int).Add(new(big.Int).Add(ua, ub), new(big.Int).SetUint64(cin))
	ssum := new(big.Int).Add(new(big.Int).Add(signed(ua), signed(ub)), new(big.Int).SetUint64(cin))
	res := new(big.Int).And(usum, mask)
	var nzcv uint64
	if res.Bit(int(width)-1) == 1 {
		nzcv |= 8
	}
	if res.Sign() == 0 {
		nzcv |= 4
	}
	if usum.Cmp(res) != 0 {
		nzcv |= 2
	}
	if signed(res).Cmp(ssum) != 0 {
		nzcv |= 1
	}
	return res.Uint64(), nzcv
}

var edgeValues = []uint64{
	0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff_ffff, 0x8000_0000, 0x8000_0001, 0xffff_ffff,
	0x1_0000_0000, 0x1_ffff_ffff, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000,
	0x8000_0000_0000_0001, 0xffff_ffff_ffff_fffe, 0xffff_ffff_ffff_ffff, 0xdead_beef_0000_0001,
}

// TestAddSubFlags checks ADDS/SUBS/ADCS/SBCS (64- and 32-bit) results and
// NZCV against a math/big model on edge values, with C in both states.
func TestAddSubFlags(t *testing.T) {
	type form struct {
		name  string
		word  uint32
		width uint
		sub   bool
		carry int // -1: fixed carry-in (1 for SUBS, 0 for ADDS); 0/1: ADC/SBC with this C
	}
	forms := []form{
		{"adds x", 0xab010002, 64, false, -1},
		{"subs x", 0xeb010002, 64, true, -1},
		{"adds w", 0x2b010002, 32, false, -1},
		{"subs w", 0x6b010002, 32, true, -1},
	}
	for _, cin := range []int{0, 1} {
		forms = append(forms,
			form{"adcs x", 0xba010002, 64, false, cin},
			form{"adcs w", 0x3a010002, 32, false, cin},
			form{"sbcs x", 0xfa010002, 64, true, cin},
			form{"sbcs w", 0x7a010002, 32, true, cin})
	}
	c := newTestCPU(t, []uint32{
		0xd51b4209, // msr nzcv, x9
		0,          // the instruction under test
		0xd53b4203, // mrs x3, nzcv
		brk0,
	})
	for _, f := range forms {
		pokeCode(t, c.MM(), tCode+4, []uint32{f.word})
		for _, a := range edgeValues {
			for _, b := range edgeValues {
				cin := uint64(0)
				nzcvIn := uint64(0)
				switch {
				case f.carry >= 0:
					cin = uint64(f.carry)
					nzcvIn = cin << 29
				case f.sub:
					cin = 1
				}
				bb := b
				if f.sub {
					bb = ^b
				}
				want, wantF := refAdd(a, bb, cin, f.width)
				c.SetPC(tCode)
				c.SetReg(0, a)
				c.SetReg(1, b)
				c.SetReg(9, nzcvIn|0x9000_0000) // N and V set: must be overwritten
				c.SetReg(2, 0x5555_5555_5555_5555)
				runToBrk(t, c)
				if got, gotF := c.Reg(2), c.Reg(3)>>28; got != want || gotF != wantF {
					t.Errorf("%s (C=%d) %#x, %#x: got %#x nzcv %04b, want %#x nzcv %04b",
						f.name, cin, a, b, got, gotF, want, wantF)
				}
			}
		}
	}
}

// TestCondTable checks every condition against the Arm ARM's definition
// through B.cond, CSEL and CCMP.
func TestCondTable(t *testing.T) {
	for cond := uint8(0); cond < 16; cond++ {
		for f := uint64(0); f < 16; f++ {
			n, z, cf, v := f>>3&1 == 1, f>>2&1 == 1, f>>1&1 == 1, f&1 == 1
			var want bool
			switch cond >> 1 {
			case 0:
				want = z
			case 1:
				want = cf
			case 2:
				want = n
			case 3:
				want = v
			case 4:
				want = cf && !z
			case 5:
				want = n == v
			case 6:
				want = !z && n == v
			case 7:
				want = true
			}
			if cond&1 == 1 && cond != 15 {
				want = !want
			}
			if condHolds(cond, f) != want {
				t.Errorf("cond %d flags %04b: got %v", cond, f, !want)
			}
			// csel x0, x1, x2, cond
			c := runCode(t, []uint32{0xd51b4209, 0x9a820020 | uint32(cond)<<12}, 0, 111, 222, 0, 0, 0, 0, 0, 0, f<<28)
			wantX := uint64(222)
			if want {
				wantX = 111
			}
			if c.Reg(0) != wantX {
				t.Errorf("csel cond %d flags %04b: x0 = %d", cond, f, c.Reg(0))
			}
			// b.cond +8; mov x0, #1; brk
			c = runCode(t, []uint32{0xd51b4209, 0x54000040 | uint32(cond), 0xd2800020}, 0, 0, 0, 0, 0, 0, 0, 0, 0, f<<28)
			if (c.Reg(0) == 0) != want {
				t.Errorf("b.cond %d flags %04b: taken=%v", cond, f, c.Reg(0) == 0)
			}
		}
	}
}

func TestCondCompare(t *testing.T) {
	// ccmp x0, x1, #5, eq with Z set: flags of x0-x1; with Z clear: 0101.
	c := runCode(t, []uint32{0xd51b4209, 0xfa410005, 0xd53b4203}, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0x4000_0000)
	if got := c.Reg(3) >> 28; got != 0b0110 {
		t.Errorf("ccmp taken: nzcv %04b, want 0110", got)
	}
	c = runCode(t, []uint32{0xd51b4209, 0xfa410005, 0xd53b4203}, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0)
	if got := c.Reg(3) >> 28; got != 0b0101 {
		t.Errorf("ccmp not taken: nzcv %04b, want 0101", got)
	}
	// ccmn w0, #3, #2, lt with N!=V (lt holds): flags of w0+3.
	c = runCode(t, []uint32{0xd51b4209, 0x3a43b802, 0xd53b4203}, 0xffff_fffd, 0, 0, 0, 0, 0, 0, 0, 0, 0x8000_0000)
	if got := c.Reg(3) >> 28; got != 0b0110 {
		t.Errorf("ccmn taken: nzcv %04b, want 0110", got)
	}
}

// TestLogicFlags: ANDS/BICS set N and Z, clear C and V.
func TestLogicFlags(t *testing.T) {
	for _, tc := range []struct {
		word     uint32
		a, b     uint64
		res, nzc uint64
	}{
		{0xea010002, 0x8000_0000_0000_0001, 0x8000_0000_0000_0003, 0x8000_0000_0000_0001, 0b1000}, // ands x2, x0, x1
		{0xea010002, 0xf0, 0x0f, 0, 0b0100},
		{0x72001c02, 0xffff_ff80, 0, 0x80, 0b0000},                  // ands w2, w0, #0xff
		{0x6a610c02, 0xffff_ffff_8000_0000, 0, 0x8000_0000, 0b1000}, // bics w2, w0, w1, lsr #3
		{0x6a610c02, 0xffff_ffff, 0xffff_ffff, 0xe000_0000, 0b1000},
	} {
		c := runCode(t, []uint32{0xd51b4209, tc.word, 0xd53b4203}, tc.a, tc.b, 0, 0, 0, 0, 0, 0, 0, 0xf000_0000)
		if c.Reg(2) != tc.res || c.Reg(3)>>28 != tc.nzc {
			t.Errorf("%#08x(%#x, %#x) = %#x nzcv %04b, want %#x %04b", tc.word, tc.a, tc.b, c.Reg(2), c.Reg(3)>>28, tc.res, tc.nzc)
		}
	}
}

// TestRandomAddSub compares random 64/32-bit ADDS/SUBS with the model.
func TestRandomAddSub(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	c := newTestCPU(t, []uint32{0xab010002, 0xd53b4203, 0xeb010004, 0xd53b4205, 0x2b010006, 0xd53b4207, 0x6b010008, 0xd53b420a, brk0})
	for i := 0; i < 2000; i++ {
		a, b := rng.Uint64(), rng.Uint64()
		if i%3 == 0 {
			b = a ^ uint64(rng.Intn(4))
		}
		c.SetPC(tCode)
		c.SetReg(0, a)
		c.SetReg(1, b)
		runToBrk(t, c)
		check := func(name string, got, gotF uint64, b2, cin uint64, w uint) {
			want, wantF := refAdd(a, b2, cin, w)
			if got != want || gotF>>28 != wantF {
				t.Fatalf("%s %#x %#x: %#x %04b want %#x %04b", name, a, b, got, gotF>>28, want, wantF)
			}
		}
		check("adds x", c.Reg(2), c.Reg(3), b, 0, 64)
		check("subs x", c.Reg(4), c.Reg(5), ^b, 1, 64)
		check("adds w", c.Reg(6), c.Reg(7), b, 0, 32)
		check("subs w", c.Reg(8), c.Reg(10), ^b, 1, 32)
	}
	_ = fmt.Sprint()
}
