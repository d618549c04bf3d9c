package arm64

import (
	"crypto/aes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// cryptoPatterns are the encodings of the crypto instructions with the
// register fields (and XAR's imm6) left zero: mask selects the fixed bits.
var cryptoPatterns = []struct{ val, free uint32 }{
	{0x4e284800, 0x3ff},    // aese
	{0x4e285800, 0x3ff},    // aesd
	{0x4e286800, 0x3ff},    // aesmc
	{0x4e287800, 0x3ff},    // aesimc
	{0x0ee0e000, 0x1f03ff}, // pmull v.1q, v.1d, v.1d
	{0x4ee0e000, 0x1f03ff}, // pmull2
	{0x5e000000, 0x1f03ff}, // sha1c
	{0x5e001000, 0x1f03ff}, // sha1p
	{0x5e002000, 0x1f03ff}, // sha1m
	{0x5e003000, 0x1f03ff}, // sha1su0
	{0x5e004000, 0x1f03ff}, // sha256h
	{0x5e005000, 0x1f03ff}, // sha256h2
	{0x5e006000, 0x1f03ff}, // sha256su1
	{0x5e280800, 0x3ff},    // sha1h
	{0x5e281800, 0x3ff},    // sha1su1
	{0x5e282800, 0x3ff},    // sha256su0
	{0xce608000, 0x1f03ff}, // sha512h
	{0xce608400, 0x1f03ff}, // sha512h2
	{0xce608800, 0x1f03ff}, // sha512su1
	{0xce608c00, 0x1f03ff}, // rax1
	{0xcec08000, 0x3ff},    // sha512su0
	{0xce000000, 0x1f7fff}, // eor3
	{0xce200000, 0x1f7fff}, // bcax
	{0xce800000, 0x1fffff}, // xar
	// RDM and DotProd (simdext.go)
	{0x2e408400, 0x401f03ff}, // sqrdmlah .4h/.8h
	{0x2e808400, 0x401f03ff}, // sqrdmlah .2s/.4s
	{0x2e408c00, 0x401f03ff}, // sqrdmlsh .h
	{0x2e808c00, 0x401f03ff}, // sqrdmlsh .s
	{0x7e408400, 0x1f03ff},   // sqrdmlah h
	{0x7e808c00, 0x1f03ff},   // sqrdmlsh s
	{0x2f40d000, 0x403f0bff}, // sqrdmlah by element .h
	{0x2f80f000, 0x403f0bff}, // sqrdmlsh by element .s
	{0x7f40f000, 0x3f0bff},   // sqrdmlsh h, by element
	{0x7f80d000, 0x3f0bff},   // sqrdmlah s, by element
	{0x0e809400, 0x401f03ff}, // sdot
	{0x2e809400, 0x401f03ff}, // udot
	{0x0f80e000, 0x403f0bff}, // sdot by element
	{0x2f80e000, 0x403f0bff}, // udot by element
	// FRINTTS and JSCVT
	{0x1e284000, 0x4183ff},   // frint32z/32x/64z/64x s, d
	{0x0e21e800, 0x604013ff}, // frint32z/32x/64z/64x vector (Q=0 with .2d is reserved: skipped)
	{0x1e7e0000, 0x3ef},      // fjcvtzs w0..w15, d
	// FCMA
	{0x2e80c400, 0x405f1bff}, // fcmla .2s/.4s/.2d, every rotation
	{0x2e80e400, 0x405f13ff}, // fcadd .2s/.4s/.2d, #90/#270
	{0x6f801000, 0x003f6bff}, // fcmla .4s by element, every rotation
}

var intEdges = []float64{
	2147483648, -2147483648, 2147483647, -2147483647, 2147483647.5, -2147483648.5, -2147483649,
	2147483646.5, 4294967296, -4294967296, 4294967295.75, 9223372036854775808, -9223372036854775808,
	9223372036854774784, -9223372036854774784, 18446744073709551616, 0.5, -0.5, math.Copysign(0, -1), 1.5, -2.5, 1e300,
}

// TestCryptoAgainstQEMU runs random crypto, RDM and DotProd instructions
// on random states under qemu-aarch64 -cpu max (the oracle) and uvm, like
// TestSIMDAgainstQEMU.
func TestCryptoAgainstQEMU(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not installed")
	}
	if _, err := os.Stat("testdata/simdoracle"); err != nil {
		t.Skip("testdata/simdoracle missing (run testdata/build-simdoracle.sh)")
	}
	per := 60
	if testing.Short() {
		per = 15
	}
	rng := rand.New(rand.NewSource(7))
	var cases []simdCase
	for _, p := range cryptoPatterns {
		for i, tries := 0, 0; i < per; i, tries = i+1, tries+1 {
			w := p.val | rng.Uint32()&p.free
			in := decode.DecodeA64(w)
			if in.Op < decode.A64CryptoBase {
				if tries > 10*per {
					t.Fatalf("%08x decodes as %v", w, in.Op)
				}
				i--
				continue
			}
			c := makeSIMDCase(w, rng.Int63())
			if i%3 == 0 { // aliasing: the destination is also a source
				c.V[in.Rn] = c.V[in.Rd]
			}
			if in.Op == decode.A64FRINTTS || in.Op == decode.A64VFRINTTS || in.Op == decode.A64FJCVTZS {
				// the edges of the 32- and 64-bit integer ranges
				for l := 0; l < 2; l++ {
					if rng.Intn(2) == 0 {
						continue
					}
					e := intEdges[rng.Intn(len(intEdges))]
					if in.Size == 2 {
						f := math.Float32bits(float32(e))
						c.V[in.Rn][l] = uint64(f) | uint64(math.Float32bits(float32(-e)))<<32
					} else {
						c.V[in.Rn][l] = math.Float64bits(e)
					}
				}
			}
			cases = append(cases, c)
		}
	}
	want, ok := simdRunOracleCPU(t, qemu, "max", cases)
	bad := 0
	for i := range cases {
		c := &cases[i]
		if !ok[i] {
			t.Errorf("%08x %s: the oracle rejected it", c.Insn, decode.DisasmA64(c.Insn, simdOracleCode))
			continue
		}
		got, e := simdRunUVM(t, c)
		if e.Reason != vm.ExitBreakpoint {
			t.Errorf("%08x %s: uvm exit %v (%s)", c.Insn, decode.DisasmA64(c.Insn, simdOracleCode), e.Reason, e.Why)
			bad++
		} else if d := simdDiffState(c, &want[i], &got); d != "" {
			t.Errorf("%08x %s: %s\n%s", c.Insn, decode.DisasmA64(c.Insn, simdOracleCode), simdInputsOf(c), d)
			bad++
		}
		if bad >= 20 {
			t.Fatal("too many mismatches")
		}
	}
}

// TestAESRounds encrypts a block with AESE/AESMC (AES-128) and compares
// with crypto/aes; this needs no oracle.
func TestAESRounds(t *testing.T) {
	key := []byte("0123456789abcdef")
	pt := []byte("uvm aes test blk")
	b, _ := aes.NewCipher(key)
	want := make([]byte, 16)
	b.Encrypt(want, pt)
	// Key expansion in Go; the rounds on the emulated CPU.
	var rk [11][16]byte
	copy(rk[0][:], key)
	rcon := byte(1)
	for i := 1; i <= 10; i++ {
		p := rk[i-1]
		t := [4]byte{aesSbox[p[13]] ^ rcon, aesSbox[p[14]], aesSbox[p[15]], aesSbox[p[12]]}
		rcon = xtime(rcon)
		for j := 0; j < 16; j++ {
			if j < 4 {
				rk[i][j] = p[j] ^ t[j]
			} else {
				rk[i][j] = p[j] ^ rk[i][j-4]
			}
		}
	}
	// v0 = state; v1 = round key: aese v0, v1; aesmc v0, v0 for rounds 1..9.
	var code []uint32
	for i := 0; i < 10; i++ {
		code = append(code, 0x3dc00001|uint32(i)<<10) // ldr q1, [x0, #16*i]
		code = append(code, 0x4e284820)               // aese v0.16b, v1.16b
		if i < 9 {
			code = append(code, 0x4e286800) // aesmc v0.16b, v0.16b
		}
	}
	code = append(code, 0x3dc00001|10<<10, 0x6e211c00) // ldr q1, [x0, #160]; eor v0.16b, v0.16b, v1.16b
	c := newTestCPU(t, append(code, brk0))
	var buf []byte
	for i := range rk {
		buf = append(buf, rk[i][:]...)
	}
	if err := c.MM().Poke(buf, tData); err != nil {
		t.Fatal(err)
	}
	c.SetReg(0, tData)
	c.Regs().V[0] = [2]uint64{binary.LittleEndian.Uint64(pt), binary.LittleEndian.Uint64(pt[8:])}
	runToBrk(t, c)
	got := make([]byte, 16)
	binary.LittleEndian.PutUint64(got, c.Regs().V[0][0])
	binary.LittleEndian.PutUint64(got[8:], c.Regs().V[0][1])
	if fmt.Sprintf("%x", got) != fmt.Sprintf("%x", want) {
		t.Errorf("AES-128 via AESE/AESMC = %x, want %x", got, want)
	}
}
