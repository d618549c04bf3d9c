// Command sha hashes some data with crypto/sha256 (plus sha1, md5 and
// sha512) and prints hex digests. On both arches the Go runtime may use
// the CPU's SHA instructions when the auxiliary vector advertises them.
package main

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash/crc32"
)

func main() {
	inputs := [][]byte{
		[]byte(""),
		[]byte("abc"),
		[]byte("The quick brown fox jumps over the lazy dog"),
	}
	big := make([]byte, 1<<18)
	for i := range big {
		big[i] = byte(i*31 + i>>8)
	}
	inputs = append(inputs, big)
	for i, in := range inputs {
		s := sha256.Sum256(in)
		fmt.Printf("sha256[%d] len=%d %s\n", i, len(in), hex.EncodeToString(s[:]))
	}
	h := sha256.New()
	for i := 0; i < 300; i++ {
		h.Write(big[i*13 : i*13+777])
	}
	fmt.Printf("sha256 streamed %x\n", h.Sum(nil))
	fmt.Printf("sha1   %x\n", sha1.Sum(big))
	fmt.Printf("md5    %x\n", md5.Sum(big))
	fmt.Printf("sha512 %x\n", sha512.Sum512(inputs[2]))
	fmt.Printf("crc32  %08x %08x\n", crc32.ChecksumIEEE(big), crc32.Checksum(big, crc32.MakeTable(crc32.Castagnoli)))
}
