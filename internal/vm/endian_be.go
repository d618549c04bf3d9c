//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package vm

import (
	"encoding/binary"
	"unsafe"
)

// Big-endian hosts read and write guest (little-endian) words byte-wise.

func le16(p unsafe.Pointer) uint16 { return binary.LittleEndian.Uint16((*[2]byte)(p)[:]) }
func le32(p unsafe.Pointer) uint32 { return binary.LittleEndian.Uint32((*[4]byte)(p)[:]) }
func le64(p unsafe.Pointer) uint64 { return binary.LittleEndian.Uint64((*[8]byte)(p)[:]) }

func put16(p unsafe.Pointer, v uint16) { binary.LittleEndian.PutUint16((*[2]byte)(p)[:], v) }
func put32(p unsafe.Pointer, v uint32) { binary.LittleEndian.PutUint32((*[4]byte)(p)[:], v) }
func put64(p unsafe.Pointer, v uint64) { binary.LittleEndian.PutUint64((*[8]byte)(p)[:], v) }
