// cpufeat exercises the code paths Go takes on CPUs with optional
// extensions: sync/atomic from many goroutines (LSE atomics on arm64 when
// built with GOARM64=v8.1 or when HWCAP_ATOMICS is advertised), and
// known-answer checks of crypto/sha1, sha256, sha512, sha3, aes (block, CTR,
// GCM) and hash/crc32, which use the AES, PMULL, SHA1, SHA2, SHA512, SHA3 and CRC32
// instructions when the CPU advertises them. The output is the same on
// every CPU.
package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"sync"
	"sync/atomic"
)

func atomics() {
	const workers, iters = 8, 1000
	var (
		i32  atomic.Int32
		u32  atomic.Uint32
		i64  atomic.Int64
		u64  atomic.Uint64
		bits atomic.Uint64
		and  atomic.Uint32
		sw   atomic.Uint64
		cas  atomic.Int64
		ptr  atomic.Pointer[int]
		wg   sync.WaitGroup
		mu   sync.Mutex
		n    int
	)
	and.Store(^uint32(0))
	vals := make([]int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				i32.Add(-1)
				u32.Add(3)
				i64.Add(int64(w) << 20)
				u64.Add(1)
				bits.Or(1 << uint((w*7+i)%64))
				if i == iters-1 {
					and.And(^(uint32(1) << uint(w)))
				}
				sw.Swap(uint64(w + 1))
				for {
					old := cas.Load()
					if cas.CompareAndSwap(old, old+2) {
						break
					}
				}
				ptr.Store(&vals[w])
				mu.Lock()
				n++
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	p := ptr.Load()
	inVals := p != nil && p == &vals[0] || p == &vals[1] || p == &vals[2] || p == &vals[3] ||
		p == &vals[4] || p == &vals[5] || p == &vals[6] || p == &vals[7]
	fmt.Printf("atomics: i32 %d u32 %d i64 %d u64 %d bits %#x and %#x swap-ok %v cas %d ptr-ok %v mutex %d\n",
		i32.Load(), u32.Load(), i64.Load(), u64.Load(), bits.Load(), and.Load(),
		sw.Load() >= 1 && sw.Load() <= workers, cas.Load(), inVals, n)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func crypto() {
	// Messages of many lengths, so the block loops and the tails both run.
	msg := make([]byte, 1000)
	for i := range msg {
		msg[i] = byte(i*7 + i>>3)
	}
	h1, h256, h224, h512, h384 := sha1.New(), sha256.New(), sha256.New224(), sha512.New(), sha512.New384()
	for _, n := range []int{0, 1, 3, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 500, 1000} {
		for _, h := range []interface {
			Write([]byte) (int, error)
		}{h1, h256, h224, h512, h384} {
			h.Write(msg[:n])
		}
	}
	fmt.Printf("sha1   %x\n", h1.Sum(nil))
	fmt.Printf("sha224 %x\n", h224.Sum(nil))
	fmt.Printf("sha256 %x\n", h256.Sum(nil))
	fmt.Printf("sha384 %x\n", h384.Sum(nil))
	fmt.Printf("sha512 %x\n", h512.Sum(nil))
	fmt.Printf("sha256(abc) %x\n", sha256.Sum256([]byte("abc")))
	fmt.Printf("sha3-256(abc) %x\n", sha3.Sum256([]byte("abc")))
	fmt.Printf("sha3-512 %x\n", sha3.Sum512(msg))
	shake := make([]byte, 64)
	sh := sha3.NewSHAKE128()
	sh.Write(msg[:777])
	sh.Read(shake)
	fmt.Printf("shake128 %x\n", shake)

	// FIPS-197 appendix C known answers for AES-128/192/256.
	pt := must(hex.DecodeString("00112233445566778899aabbccddeeff"))
	for _, k := range []string{
		"000102030405060708090a0b0c0d0e0f",
		"000102030405060708090a0b0c0d0e0f1011121314151617",
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	} {
		b, err := aes.NewCipher(must(hex.DecodeString(k)))
		if err != nil {
			panic(err)
		}
		ct := make([]byte, 16)
		b.Encrypt(ct, pt)
		back := make([]byte, 16)
		b.Decrypt(back, ct)
		fmt.Printf("aes-%d %x roundtrip %v\n", 8*len(k)/2, ct, string(back) == string(pt))
	}
	key := must(hex.DecodeString("feffe9928665731c6d6a8f9467308308"))
	b, _ := aes.NewCipher(key)
	ctr := cipher.NewCTR(b, make([]byte, 16))
	out := make([]byte, len(msg))
	ctr.XORKeyStream(out, msg)
	fmt.Printf("aes-ctr sha256 %x\n", sha256.Sum256(out))
	g, err := cipher.NewGCM(b)
	if err != nil {
		panic(err)
	}
	nonce := must(hex.DecodeString("cafebabefacedbaddecaf888"))
	sealed := g.Seal(nil, nonce, msg[:333], msg[500:520])
	fmt.Printf("aes-gcm tag %x body sha256 %x\n", sealed[len(sealed)-16:], sha256.Sum256(sealed[:len(sealed)-16]))
	opened, err := g.Open(nil, nonce, sealed, msg[500:520])
	fmt.Printf("aes-gcm open ok %v\n", err == nil && string(opened) == string(msg[:333]))
	sealed[7] ^= 1
	_, err = g.Open(nil, nonce, sealed, msg[500:520])
	fmt.Printf("aes-gcm tamper rejected %v\n", err != nil)

	fmt.Printf("crc32 ieee %08x castagnoli %08x\n", crc32.ChecksumIEEE(msg), crc32.Checksum(msg, crc32.MakeTable(crc32.Castagnoli)))
}

func main() {
	atomics()
	crypto()
}
