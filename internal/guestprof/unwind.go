package guestprof

import (
	"encoding/binary"

	"github.com/uvm-emu/uvm/internal/vm"
)

// MaxDepth is the most frames Unwind returns (the leaf included).
const MaxDepth = 128

// maxScan bounds how far into a function frameSetup looks for the
// instruction that establishes its frame pointer.
const maxScan = 4096

// unwindLocked is Unwind. The walk (package documentation, "Unwinding"):
//
//  1. the leaf pc;
//  2. the leaf's return address when the leaf has no frame record of its
//     own at fp (prologue not yet run, a frameless leaf, or the epilogue
//     already run): LR on arm64, the stack slot at sp (or sp+8 between
//     "push %rbp" and "mov %rsp,%rbp") on x86-64 — see leafReturnLocked;
//  3. the frame-record chain from fp: [fp] is the caller's fp and [fp+8]
//     the return address on both arches (arm64 {x29, x30} pairs, Go's
//     arm64 frames included; x86-64 push %rbp / mov %rsp,%rbp frames).
//
// It stops at the first record that fails a check: fp zero, misaligned,
// below sp-16 or below the previous record (the chain must climb the
// stack strictly), outside the stack's VMA, unreadable; a return address
// outside executable memory or, where the file's bytes are known, not just
// after a call instruction; or MaxDepth frames. So it terminates on any
// stack, loops and garbage included.
func (s *Symbolizer) unwindLocked(arch vm.Arch, pc, sp, fp, lr uint64, buf []uint64) []uint64 {
	first := len(buf)
	buf = append(buf, pc)
	if ra, ok := s.leafReturnLocked(arch, pc, sp, lr); ok {
		buf = append(buf, ra)
	}
	stack, ok := s.mm.FindVMA(sp)
	if !ok {
		return buf
	}
	floor := uint64(0)
	if sp >= 16 {
		floor = sp - 16 // Go's arm64 frame record sits 8 bytes below sp
	}
	for len(buf)-first < MaxDepth {
		if fp == 0 || fp&7 != 0 || fp < floor || fp < stack.Start || fp > stack.End-16 {
			break
		}
		var rec [16]byte
		if s.mm.ReadAt(rec[:], fp) != nil {
			break
		}
		next := binary.LittleEndian.Uint64(rec[0:])
		ret := binary.LittleEndian.Uint64(rec[8:])
		if !s.returnAddrLocked(arch, ret) {
			break
		}
		buf = append(buf, ret)
		floor = fp + 16
		fp = next
	}
	return buf
}

// retSource says where a leaf function's return address is.
type retSource int8

const (
	retInFrame retSource = iota // in the frame record at fp: nothing to add
	retInLR                     // arm64 x30
	retAtSP                     // the word at sp
	retAtSP8                    // the word at sp+8
)

// leafReturnLocked returns the leaf's return address when the frame
// chain at fp will not include it, because the leaf function has no frame
// record at fp at this pc. Deciding that needs the leaf's symbol (see
// image.leafReturn); without one, nothing is added: the caller is then
// missing from the stack rather than invented.
func (s *Symbolizer) leafReturnLocked(arch vm.Arch, pc, sp, lr uint64) (uint64, bool) {
	r, i, ok := s.symLocked(pc)
	if !ok || r.img.arch != arch {
		return 0, false
	}
	var ra uint64
	switch src := r.img.leafReturn(i, pc-r.bias); src {
	case retInLR:
		ra = lr
	case retAtSP, retAtSP8:
		slot := sp
		if src == retAtSP8 {
			slot += 8
		}
		var b [8]byte
		if s.mm.ReadAt(b[:], slot) != nil {
			return 0, false
		}
		ra = binary.LittleEndian.Uint64(b[:])
	default:
		return 0, false
	}
	if !s.returnAddrLocked(arch, ra) {
		return 0, false
	}
	return ra, true
}

// returnAddrLocked reports whether ra can be a return address: it lies in
// executable memory and, where the ELF file's bytes are known, just after
// a call instruction.
func (s *Symbolizer) returnAddrLocked(arch vm.Arch, ra uint64) bool {
	r, ok := s.regionLocked(ra)
	if !ok {
		return false
	}
	if r.img == nil || r.img.arch != arch {
		return true
	}
	v := ra - r.bias
	switch arch {
	case vm.ArchARM64:
		insn, ok := r.img.insn32(v - 4)
		return ok && isArm64Call(insn)
	case vm.ArchAMD64:
		if v < 7 {
			return false
		}
		b := r.img.code(v-7, 7)
		return len(b) == 7 && isX86CallBefore(b)
	}
	return false
}

// isArm64Call reports BL, BLR and the pointer-authenticating BLRA*.
func isArm64Call(i uint32) bool {
	return i&0xfc000000 == 0x94000000 || // BL imm26
		i&0xfffffc1f == 0xd63f0000 || // BLR Xn
		i&0xfefff800 == 0xd63f0800 // BLRAA, BLRAAZ, BLRAB, BLRABZ
}

// isX86CallBefore reports whether the 7 bytes before a return address end
// with a call: CALL rel32 (E8), or CALL r/m64 (FF /2) with a 0, 1 or 4
// byte displacement, with or without a REX prefix, as compilers emit.
func isX86CallBefore(b []byte) bool {
	if b[2] == 0xe8 {
		return true
	}
	for _, n := range []int{2, 3, 6, 7} { // FF modrm [sib] [disp]
		op := len(b) - n
		if b[op] == 0xff && b[op+1]&0x38 == 0x10 {
			return true
		}
	}
	return false
}

// leafReturn says where the return address of function i is when it is
// the leaf at vaddr.
//
// arm64: a function's frame record exists from the instruction after the
// one setting x29 from sp ("mov x29, sp" / "add x29, sp, #n" in C, "sub
// x29, sp, #8" in Go) until its epilogue reloads x29. Before that (or in a
// function that never sets x29: a frameless leaf) x29 still points at the
// caller's record, and the return address is in LR. In the epilogue: at
// RET, or right after the instruction that reloaded x29, LR holds the
// return address again, except in Go's epilogue "ldur x29, [sp, #-8]; ldr
// x30, [sp], #n", where between the two it is still on the stack at sp.
//
// x86-64: the frame exists once "push %rbp; mov %rsp,%rbp" has run;
// before the push the return address is at sp, between the two at sp+8,
// and at RET (after "pop %rbp" or "leave") at sp again. A function without
// that sequence is frameless: its return address is taken from sp, which
// is right for frameless leaves and is checked (it must follow a call)
// otherwise.
//
// Shrink-wrapped code (a prologue placed after an early-exit test) and
// functions that move sp before pushing their frame are best effort: the
// leaf's caller may be missing or, if a stale word passes the checks, be
// wrong.
func (img *image) leafReturn(i int, vaddr uint64) retSource {
	start := img.syms[i].addr
	k := img.frameSetup(i)
	switch img.arch {
	case vm.ArchARM64:
		if k < 0 || vaddr <= start+uint64(k) {
			return retInLR
		}
		insn, ok := img.insn32(vaddr)
		if !ok {
			return retInFrame
		}
		if isArm64Ret(insn) {
			return retInLR
		}
		if prev, ok := img.insn32(vaddr - 4); ok && vaddr-4 >= start && loadsX29(prev) {
			if insn&0xffe00fff == 0xf84007fe { // ldr x30, [sp], #imm
				return retAtSP
			}
			return retInLR
		}
		return retInFrame
	case vm.ArchAMD64:
		if k < 0 || vaddr <= start+uint64(k) {
			return retAtSP
		}
		if vaddr == start+uint64(k)+1 {
			return retAtSP8
		}
		b := img.code(vaddr, 2)
		if len(b) >= 1 && (b[0] == 0xc3 || b[0] == 0xc2) || len(b) == 2 && b[0] == 0xf3 && b[1] == 0xc3 {
			return retAtSP
		}
		return retInFrame
	}
	return retInFrame
}

// isArm64Ret reports RET Xn and RETAA/RETAB.
func isArm64Ret(i uint32) bool {
	return i&0xfffffc1f == 0xd65f0000 || i == 0xd65f0bff || i == 0xd65f0fff
}

// loadsX29 reports an instruction that loads x29 from memory: LDP with
// Rt = x29 (any addressing mode) or LDR/LDUR x29.
func loadsX29(i uint32) bool {
	if i&0xfe400000 == 0xa8400000 && i&0x1f == 29 { // LDP (64-bit)
		return true
	}
	if i&0xffc0001f == 0xf940001d { // LDR x29, [Xn, #uimm]
		return true
	}
	return i&0xffe0001f == 0xf840001d // LDUR / LDR pre/post-index x29
}

// frameSetup returns the byte offset in function i of the instruction
// that establishes its frame pointer (arm64: x29 from sp; x86-64: the
// "push %rbp" of "push %rbp; mov %rsp,%rbp"), or -1 when the function has
// none within its first maxScan bytes. Cached per function.
func (img *image) frameSetup(i int) int {
	img.mu.Lock()
	defer img.mu.Unlock()
	if k := img.setup[i]; k != unknownSetup {
		return int(k)
	}
	start := img.syms[i].addr
	n := int(min(img.symEnd(i)-start, maxScan))
	code := img.code(start, n)
	k := -1
	switch img.arch {
	case vm.ArchARM64:
		for off := 0; off+4 <= len(code); off += 4 {
			insn := binary.LittleEndian.Uint32(code[off:])
			// ADD/SUB (immediate, 64-bit) x29, sp, #imm{, lsl #12}
			if insn&0xff8003ff == 0x910003fd || insn&0xff8003ff == 0xd10003fd {
				k = off
				break
			}
		}
	case vm.ArchAMD64:
		for off := 0; off+4 <= len(code); off++ {
			if code[off] == 0x55 && code[off+1] == 0x48 &&
				(code[off+2] == 0x89 && code[off+3] == 0xe5 || code[off+2] == 0x8b && code[off+3] == 0xec) {
				k = off
				break
			}
		}
	}
	img.setup[i] = int32(k)
	return k
}
