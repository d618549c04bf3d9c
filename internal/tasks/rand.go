package tasks

import (
	"io"
	"math/rand/v2"
)

// newSeededReader returns the deterministic source of AT_RANDOM and
// getrandom bytes: ChaCha8 seeded from seed.
func newSeededReader(seed uint64) io.Reader {
	var key [32]byte
	for i := 0; i < 8; i++ {
		key[i] = byte(seed >> (8 * i))
	}
	copy(key[8:], "uvm deterministic randomness")
	return rand.NewChaCha8(key)
}
