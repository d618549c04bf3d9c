package arm64

// The cryptographic extensions (HWCAP_AES, PMULL, SHA1, SHA2, SHA512,
// SHA3): the Arm ARM pseudocode of AESE/AESD/AESMC/AESIMC, PMULL 1Q, the
// SHA1/SHA256/SHA512 hash and schedule helpers and EOR3/RAX1/XAR/BCAX,
// on the 128-bit register value (lane 0 in the low bits). Tables are
// computed once at start-up; nothing allocates per instruction.

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
)

// AES tables: the S-box, its inverse, and GF(2^8) multiplication by 2.
var aesSbox, aesInvSbox [256]byte

func init() {
	// S(x) = affine(x^-1) over GF(2^8) mod x^8+x^4+x^3+x+1 (FIPS-197 5.1.1).
	var p, q byte = 1, 1
	for {
		// p runs through the multiplicative group (times 3), q through
		// the inverses (divided by 3).
		p = p ^ p<<1 ^ byte(int8(p)>>7)&0x1b
		q ^= q << 1
		q ^= q << 2
		q ^= q << 4
		q ^= byte(int8(q)>>7) & 0x09
		s := q ^ bits.RotateLeft8(q, 1) ^ bits.RotateLeft8(q, 2) ^ bits.RotateLeft8(q, 3) ^ bits.RotateLeft8(q, 4) ^ 0x63
		aesSbox[p] = s
		if p == 1 {
			break
		}
	}
	aesSbox[0] = 0x63
	for i := range aesSbox {
		aesInvSbox[aesSbox[i]] = byte(i)
	}
}

func xtime(b byte) byte { return b<<1 ^ byte(int8(b)>>7)&0x1b }

// gmul multiplies in GF(2^8).
func gmul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		a = xtime(a)
		b >>= 1
	}
	return p
}

func toBytes(v [2]uint64) (b [16]byte) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v[0] >> (8 * i))
		b[8+i] = byte(v[1] >> (8 * i))
	}
	return b
}

func fromBytes(b *[16]byte) (v [2]uint64) {
	for i := 7; i >= 0; i-- {
		v[0] = v[0]<<8 | uint64(b[i])
		v[1] = v[1]<<8 | uint64(b[8+i])
	}
	return v
}

// The AES state is column-major: byte 4c+r of the register is row r of
// column c.

func aesSubShift(v [2]uint64, inv bool) [2]uint64 {
	in := toBytes(v)
	var out [16]byte
	for c := 0; c < 4; c++ {
		for r := 0; r < 4; r++ {
			if inv { // InvShiftRows then InvSubBytes
				out[4*((c+r)%4)+r] = aesInvSbox[in[4*c+r]]
			} else { // ShiftRows then SubBytes
				out[4*c+r] = aesSbox[in[4*((c+r)%4)+r]]
			}
		}
	}
	return fromBytes(&out)
}

func aesMix(v [2]uint64, inv bool) [2]uint64 {
	in := toBytes(v)
	var out [16]byte
	for c := 0; c < 4; c++ {
		a0, a1, a2, a3 := in[4*c], in[4*c+1], in[4*c+2], in[4*c+3]
		if inv {
			out[4*c] = gmul(a0, 14) ^ gmul(a1, 11) ^ gmul(a2, 13) ^ gmul(a3, 9)
			out[4*c+1] = gmul(a0, 9) ^ gmul(a1, 14) ^ gmul(a2, 11) ^ gmul(a3, 13)
			out[4*c+2] = gmul(a0, 13) ^ gmul(a1, 9) ^ gmul(a2, 14) ^ gmul(a3, 11)
			out[4*c+3] = gmul(a0, 11) ^ gmul(a1, 13) ^ gmul(a2, 9) ^ gmul(a3, 14)
		} else {
			out[4*c] = xtime(a0) ^ xtime(a1) ^ a1 ^ a2 ^ a3
			out[4*c+1] = a0 ^ xtime(a1) ^ xtime(a2) ^ a2 ^ a3
			out[4*c+2] = a0 ^ a1 ^ xtime(a2) ^ xtime(a3) ^ a3
			out[4*c+3] = xtime(a0) ^ a0 ^ a1 ^ a2 ^ xtime(a3)
		}
	}
	return fromBytes(&out)
}

// clmul64 is the carry-less product of two 64-bit polynomials.
func clmul64(a, b uint64) (lo, hi uint64) {
	for i := uint(0); i < 64; i++ {
		if b>>i&1 != 0 {
			lo ^= a << i
			if i != 0 {
				hi ^= a >> (64 - i)
			}
		}
	}
	return lo, hi
}

func w32(v [2]uint64, e int) uint32 { return uint32(v[e>>1] >> (32 * (e & 1))) }
func mk32(a, b, c, d uint32) [2]uint64 {
	return [2]uint64{uint64(a) | uint64(b)<<32, uint64(c) | uint64(d)<<32}
}

func shaChoose(x, y, z uint32) uint32   { return (y^z)&x ^ z }
func shaParity(x, y, z uint32) uint32   { return x ^ y ^ z }
func shaMajority(x, y, z uint32) uint32 { return x&y | (x|y)&z }

// sha1Hash is SHA1C/SHA1P/SHA1M: four rounds on X = Qd, Y = Sn, W = Vm.
func sha1Hash(op decode.A64Op, x [2]uint64, y uint32, w [2]uint64) [2]uint64 {
	a, b, c, d := w32(x, 0), w32(x, 1), w32(x, 2), w32(x, 3)
	for e := 0; e < 4; e++ {
		var t uint32
		switch op {
		case decode.A64SHA1C:
			t = shaChoose(b, c, d)
		case decode.A64SHA1P:
			t = shaParity(b, c, d)
		default:
			t = shaMajority(b, c, d)
		}
		y += bits.RotateLeft32(a, 5) + t + w32(w, e)
		b = bits.RotateLeft32(b, 30)
		// <Y, X> = ROL(Y:X, 32)
		a, b, c, d, y = y, a, b, c, d
	}
	return mk32(a, b, c, d)
}

// sha256Hash is SHA256H (part1: returns X) and SHA256H2 (returns Y).
func sha256Hash(x, y, w [2]uint64, part1 bool) [2]uint64 {
	xs := [4]uint32{w32(x, 0), w32(x, 1), w32(x, 2), w32(x, 3)}
	ys := [4]uint32{w32(y, 0), w32(y, 1), w32(y, 2), w32(y, 3)}
	for e := 0; e < 4; e++ {
		chs := shaChoose(ys[0], ys[1], ys[2])
		maj := shaMajority(xs[0], xs[1], xs[2])
		s1 := bits.RotateLeft32(ys[0], -6) ^ bits.RotateLeft32(ys[0], -11) ^ bits.RotateLeft32(ys[0], -25)
		t1 := ys[3] + s1 + chs + w32(w, e)
		xs[3] += t1
		s0 := bits.RotateLeft32(xs[0], -2) ^ bits.RotateLeft32(xs[0], -13) ^ bits.RotateLeft32(xs[0], -22)
		ys[3] = t1 + s0 + maj
		// <Y, X> = ROL(Y:X, 32)
		x3 := xs[3]
		xs[3], xs[2], xs[1], xs[0] = xs[2], xs[1], xs[0], ys[3]
		ys[3], ys[2], ys[1], ys[0] = ys[2], ys[1], ys[0], x3
	}
	if part1 {
		return mk32(xs[0], xs[1], xs[2], xs[3])
	}
	return mk32(ys[0], ys[1], ys[2], ys[3])
}

func ror64(x uint64, n int) uint64 { return bits.RotateLeft64(x, -n) }

// execCrypto executes a crypto op (decode.A64CryptoBase and up).
func (r *Regs) execCrypto(in *decode.A64) simdResult {
	d, n, m := r.V[in.Rd], r.V[in.Rn], r.V[in.Rm]
	var res [2]uint64
	switch in.Op {
	case decode.A64AESE:
		res = aesSubShift([2]uint64{d[0] ^ n[0], d[1] ^ n[1]}, false)
	case decode.A64AESD:
		res = aesSubShift([2]uint64{d[0] ^ n[0], d[1] ^ n[1]}, true)
	case decode.A64AESMC:
		res = aesMix(n, false)
	case decode.A64AESIMC:
		res = aesMix(n, true)
	case decode.A64PMULL64:
		res[0], res[1] = clmul64(n[in.Q], m[in.Q])
	case decode.A64SHA1C, decode.A64SHA1P, decode.A64SHA1M:
		res = sha1Hash(in.Op, d, uint32(n[0]), m)
	case decode.A64SHA1SU0:
		res = [2]uint64{d[1] ^ d[0] ^ m[0], n[0] ^ d[1] ^ m[1]}
	case decode.A64SHA1H:
		res = [2]uint64{uint64(bits.RotateLeft32(uint32(n[0]), 30)), 0}
	case decode.A64SHA1SU1:
		t := [2]uint64{d[0] ^ (n[0]>>32 | n[1]<<32), d[1] ^ n[1]>>32}
		t0, t1, t2, t3 := w32(t, 0), w32(t, 1), w32(t, 2), w32(t, 3)
		res = mk32(bits.RotateLeft32(t0, 1), bits.RotateLeft32(t1, 1), bits.RotateLeft32(t2, 1),
			bits.RotateLeft32(t3, 1)^bits.RotateLeft32(t0, 2))
	case decode.A64SHA256H:
		res = sha256Hash(d, n, m, true)
	case decode.A64SHA256H2:
		res = sha256Hash(n, d, m, false)
	case decode.A64SHA256SU0:
		// T = operand2<31:0> : operand1<127:32>
		t := [2]uint64{d[0]>>32 | d[1]<<32, d[1]>>32 | n[0]<<32}
		var e [4]uint32
		for i := 0; i < 4; i++ {
			x := w32(t, i)
			e[i] = (bits.RotateLeft32(x, -7) ^ bits.RotateLeft32(x, -18) ^ x>>3) + w32(d, i)
		}
		res = mk32(e[0], e[1], e[2], e[3])
	case decode.A64SHA256SU1:
		// T0 = operand3<31:0> : operand2<127:32>; T1 = operand3<127:64>
		t0 := [2]uint64{n[0]>>32 | n[1]<<32, n[1]>>32 | m[0]<<32}
		sig := func(x uint32) uint32 { return bits.RotateLeft32(x, -17) ^ bits.RotateLeft32(x, -19) ^ x>>10 }
		e0 := sig(uint32(m[1])) + w32(d, 0) + w32(t0, 0)
		e1 := sig(uint32(m[1]>>32)) + w32(d, 1) + w32(t0, 1)
		e2 := sig(e0) + w32(d, 2) + w32(t0, 2)
		e3 := sig(e1) + w32(d, 3) + w32(t0, 3)
		res = mk32(e0, e1, e2, e3)
	case decode.A64SHA512H:
		x, y, w := n, m, d
		s1 := ror64(y[1], 14) ^ ror64(y[1], 18) ^ ror64(y[1], 41)
		hi := (y[1]&x[0] ^ ^y[1]&x[1]) + s1 + w[1]
		tmp := hi + y[0]
		s1 = ror64(tmp, 14) ^ ror64(tmp, 18) ^ ror64(tmp, 41)
		lo := (tmp&y[1] ^ ^tmp&x[0]) + s1 + w[0]
		res = [2]uint64{lo, hi}
	case decode.A64SHA512H2:
		x, y, w := n, m, d
		s0 := ror64(y[0], 28) ^ ror64(y[0], 34) ^ ror64(y[0], 39)
		hi := (x[0]&y[1] ^ x[0]&y[0] ^ y[1]&y[0]) + s0 + w[1]
		s0 = ror64(hi, 28) ^ ror64(hi, 34) ^ ror64(hi, 39)
		lo := (hi&y[0] ^ hi&y[1] ^ y[1]&y[0]) + s0 + w[0]
		res = [2]uint64{lo, hi}
	case decode.A64SHA512SU0:
		x, w := d, n
		lo := x[0] + (ror64(x[1], 1) ^ ror64(x[1], 8) ^ x[1]>>7)
		hi := x[1] + (ror64(w[0], 1) ^ ror64(w[0], 8) ^ w[0]>>7)
		res = [2]uint64{lo, hi}
	case decode.A64SHA512SU1:
		x, y, w := n, m, d
		hi := w[1] + (ror64(x[1], 19) ^ ror64(x[1], 61) ^ x[1]>>6) + y[1]
		lo := w[0] + (ror64(x[0], 19) ^ ror64(x[0], 61) ^ x[0]>>6) + y[0]
		res = [2]uint64{lo, hi}
	case decode.A64RAX1:
		res = [2]uint64{n[0] ^ bits.RotateLeft64(m[0], 1), n[1] ^ bits.RotateLeft64(m[1], 1)}
	case decode.A64EOR3:
		a := r.V[in.Ra]
		res = [2]uint64{n[0] ^ m[0] ^ a[0], n[1] ^ m[1] ^ a[1]}
	case decode.A64BCAX:
		a := r.V[in.Ra]
		res = [2]uint64{n[0] ^ m[0]&^a[0], n[1] ^ m[1]&^a[1]}
	case decode.A64XAR:
		res = [2]uint64{ror64(n[0]^m[0], int(in.Imm)), ror64(n[1]^m[1], int(in.Imm))}
	default:
		return r.execSIMDExt(in) // simdext.go
	}
	r.V[in.Rd] = res
	return simdOK
}
