//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package vm

import "unsafe"

// Guest memory is little-endian on both guest architectures. On a
// little-endian host a guest word is a host word; these compile to single
// (unaligned) loads and stores.

func le16(p unsafe.Pointer) uint16 { return *(*uint16)(p) }
func le32(p unsafe.Pointer) uint32 { return *(*uint32)(p) }
func le64(p unsafe.Pointer) uint64 { return *(*uint64)(p) }

func put16(p unsafe.Pointer, v uint16) { *(*uint16)(p) = v }
func put32(p unsafe.Pointer, v uint32) { *(*uint32)(p) = v }
func put64(p unsafe.Pointer, v uint64) { *(*uint64)(p) = v }
