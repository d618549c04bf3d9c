//go:build !linux || !amd64 || race

package hostfence

import "sync/atomic"

// Asymmetric reports whether Store is a plain store that Heavy fences.
func Asymmetric() bool { return false }

// Store stores v at p for a handshake whose other side calls Heavy
// before it loads p: here a sequentially consistent store.
func Store(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

// Heavy does nothing here: Store is sequentially consistent.
func Heavy() {}
