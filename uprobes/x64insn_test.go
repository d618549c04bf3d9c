package uprobes

import (
	"debug/elf"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvm-emu/uvm/internal/decode"
)

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// TestX86Fate_Table: bytes → emulate / xol (with fixups) / reject, with
// the kernel's reason (spec §3.3).
func TestX86Fate_Table(t *testing.T) {
	tests := []struct {
		name, bytes, fate, detail string
		ixol                      string // the rewritten XOL copy, when it differs
	}{
		{"nop", "90", "emulate", "branch", ""},
		{"66 nop", "66 90", "emulate", "branch", ""},
		{"pause is a nop (opcode 0x90, any prefix)", "f3 90", "emulate", "branch", ""},
		{"41 90 xchg r8d,eax is a nop", "41 90", "emulate", "branch", ""},
		{"odd nopl is stepped", "0f 1f 44 00 01", "xol", "FIX_IP", ""},
		{"nopl 5", "0f 1f 44 00 00", "emulate", "branch", ""},
		{"push rbp", "55", "emulate", "push", ""},
		{"push r15", "41 57", "emulate", "push", ""},
		{"push ax (66) is stepped", "66 50", "xol", "FIX_IP", ""},
		{"ret", "c3", "xol", "", ""},
		{"ret imm16", "c2 08 00", "xol", "", ""},
		{"call rel32", "e8 00 01 00 00", "emulate", "call", "e8 00 00 00 00"},
		{"jmp rel32", "e9 00 01 00 00", "emulate", "branch", ""},
		{"jmp rel8", "eb 05", "emulate", "branch", ""},
		{"je rel8", "74 05", "emulate", "branch", ""},
		{"je rel32", "0f 84 00 01 00 00", "emulate", "branch", ""},
		{"callw", "66 e8 00 01 00 00", "reject", "66 operand-size", ""},
		{"int3", "cc", "reject", "good_insns_64", ""},
		{"int 0x80", "cd 80", "reject", "good_insns_64", ""},
		{"hlt", "f4", "reject", "good_insns_64", ""},
		{"in al, dx", "ec", "reject", "good_insns_64", ""},
		{"lock add", "f0 48 01 07", "reject", "LOCK", ""},
		{"cs je (branch hint)", "2e 74 05", "reject", "segment-override", ""},
		{"notrack jmp", "3e ff e0", "reject", "segment-override", ""},
		{"mov ss", "8e d0", "reject", "MOV/POP to SS", ""},
		// Every 0F xx passes good_insns_64's 0x0F entry (v6.18.44).
		{"syscall", "0f 05", "xol", "FIX_IP", ""},
		{"ud2", "0f 0b", "xol", "FIX_IP", ""},
		{"vmread", "0f 78 c0", "xol", "FIX_IP", ""},
		{"fxsave (group 15)", "0f ae 07", "xol", "FIX_IP", ""},
		{"lfence", "0f ae e8", "xol", "FIX_IP", ""},
		{"pshufb", "66 0f 38 00 c1", "xol", "FIX_IP", ""},
		{"crc32", "f2 0f 38 f1 c1", "xol", "FIX_IP", ""},
		// OPCODE1 of a VEX instruction is the byte after the prefix.
		{"vpcmpeqb (VEX 74) is a jz", "c5 f9 74 c1", "emulate", "branch", ""},
		{"vpsubsb (VEX E8) is a call", "c5 f9 e8 c1", "emulate", "call", ""},
		{"kmovw (VEX 90) is a nop", "c5 f8 90 c1", "emulate", "branch", ""},
		{"vmovdqu (VEX 6F) hits outs", "c5 fa 6f 05 10 00 00 00", "reject", "good_insns_64", ""},
		{"REX2 prefix (d5)", "d5 0a 48", "xol", "FIX_IP", ""},
		{"cpuid", "0f a2", "xol", "FIX_IP", ""},
		{"popf", "9d", "xol", "FIX_IP|FIX_SETF", ""},
		{"mov rax,[rip]", "48 8b 05 10 00 00 00", "xol", "FIX_IP|FIX_RIP_SI", "48 8b 86 10 00 00 00"},
		{"mov rsi,[rip] uses rdi", "48 8b 35 10 00 00 00", "xol", "FIX_IP|FIX_RIP_DI", "48 8b b7 10 00 00 00"},
		{"REX.B cleared", "49 8b 05 10 00 00 00", "xol", "FIX_IP|FIX_RIP_SI", "48 8b 86 10 00 00 00"},
		{"cmp [rip],imm8", "83 3d 10 00 00 00 05", "xol", "FIX_IP|FIX_RIP_SI", "83 be 10 00 00 00 05"},
		{"call [rip]", "ff 15 10 00 00 00", "xol", "FIX_CALL|FIX_RIP_SI", "ff 96 10 00 00 00"},
		{"jmp [rip]", "ff 25 10 00 00 00", "xol", "FIX_RIP_SI", "ff a6 10 00 00 00"},
		{"call rax", "ff d0", "xol", "FIX_CALL", ""},
		{"jmp rax", "ff e0", "xol", "", ""},
		{"vaddps xmm0,xmm1,[rip]", "c5 f0 58 05 10 00 00 00", "xol", "FIX_IP|FIX_RIP_SI", "c5 f0 58 86 10 00 00 00"},
		{"vaddps xmm0,xmm6,[rip] uses rdi", "c5 c8 58 05 10 00 00 00", "xol", "FIX_IP|FIX_RIP_DI", "c5 c8 58 87 10 00 00 00"},
		{"vaddps xmm7,xmm6,[rip] uses rbx", "c5 c8 58 3d 10 00 00 00", "xol", "FIX_IP|FIX_RIP_BX", "c5 c8 58 bb 10 00 00 00"},
		{"VEX3 sets inverted X,B", "c4 81 78 58 05 10 00 00 00", "xol", "FIX_IP|FIX_RIP_SI", "c4 e1 78 58 86 10 00 00 00"},
		{"mov eax,imm32", "b8 01 00 00 00", "xol", "FIX_IP", ""},
		{"movabs", "48 b8 01 02 03 04 05 06 07 08", "xol", "FIX_IP", ""},
		{"truncated", "48 8b 05 10", "reject", "could not be decoded", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := unhex(t, tc.bytes)
			fate, detail := X86Fate(b)
			assert.Equal(t, tc.fate, fate)
			if tc.detail == "" {
				assert.Equal(t, "", detail)
			} else {
				assert.Contains(t, detail, tc.detail)
			}
			if tc.ixol != "" {
				var au archUprobe
				n := copy(au.insn[:], b)
				e, _ := analyzeX86(&au, n, true)
				require.Zero(t, e)
				want := unhex(t, tc.ixol)
				assert.Equal(t, want, au.insn[:len(want)])
			}
		})
	}
}

// TestDecodeX86_LengthsMatchDecoder sweeps the text of the amd64 test
// guests and compares the uprobe layout decoder's lengths with
// uvm/decode's (x86asm) wherever the latter decodes the instruction.
func TestDecodeX86_LengthsMatchDecoder(t *testing.T) {
	bins, _ := filepath.Glob("../testdata/bin/amd64/*")
	if len(bins) == 0 {
		t.Skip("no amd64 test binaries")
	}
	checked := 0
	for _, path := range bins[:min(len(bins), 6)] {
		f, err := elf.Open(path)
		if err != nil {
			continue
		}
		sec := f.Section(".text")
		if sec == nil {
			f.Close()
			continue
		}
		text, err := sec.Data()
		f.Close()
		require.NoError(t, err)
		if len(text) > 200000 {
			text = text[:200000]
		}
		for pc := 0; pc < len(text); {
			in, err := decode.DecodeX86(text[pc:], uint64(pc))
			x, ok := decodeX86(text[pc:])
			if err == nil {
				require.True(t, ok, "%s+%#x: % x (%s)", path, pc, text[pc:pc+int(in.Len)], decode.DisasmX86(text[pc:], 0))
				require.Equal(t, int(in.Len), x.length, "%s+%#x: % x (%s)", path, pc, text[pc:pc+int(in.Len)], decode.DisasmX86(text[pc:], 0))
				checked++
				pc += int(in.Len)
				continue
			}
			if ok {
				pc += x.length
			} else {
				pc++
			}
		}
	}
	assert.Greater(t, checked, 10000)
}

// TestX86Emulate: the emulated instructions' effects (branch_emulate_op,
// push_emulate_op).
func TestX86Emulate(t *testing.T) {
	const addr = textBase + 0x10
	run := func(t *testing.T, code string, setup func(r *fakeRegs)) (*world, *fakeRegs, bool) {
		text := make([]byte, 0x20)
		copy(text[0x10:], unhex(t, code))
		w := newWorld(t, ArchAMD64, DefaultOptions(), text)
		th := &fakeThread{}
		tk, r := w.task(th, 1)
		tk.getUtask()
		var au archUprobe
		n := copy(au.insn[:], unhex(t, code))
		e, why := analyzeX86(&au, n, true)
		require.Zero(t, e, why)
		r.pc = addr
		if setup != nil {
			setup(r)
		}
		ok := tk.x86Emulate(&au, r)
		return w, r, ok
	}
	t.Run("je taken", func(t *testing.T) {
		_, r, ok := run(t, "74 05", func(r *fakeRegs) { r.flags = 0x40 })
		assert.True(t, ok)
		assert.Equal(t, uint64(addr+7), r.pc)
	})
	t.Run("je not taken", func(t *testing.T) {
		_, r, ok := run(t, "74 05", nil)
		assert.True(t, ok)
		assert.Equal(t, uint64(addr+2), r.pc)
	})
	t.Run("jl backwards", func(t *testing.T) {
		_, r, _ := run(t, "0f 8c f0 ff ff ff", func(r *fakeRegs) { r.flags = 0x80 }) // SF != OF
		assert.Equal(t, uint64(addr+6-16), r.pc)
	})
	t.Run("jle via ZF", func(t *testing.T) {
		_, r, _ := run(t, "7e 10", func(r *fakeRegs) { r.flags = 0x40 })
		assert.Equal(t, uint64(addr+2+16), r.pc)
	})
	t.Run("nop5", func(t *testing.T) {
		_, r, _ := run(t, "0f 1f 44 00 00", nil)
		assert.Equal(t, uint64(addr+5), r.pc)
	})
	t.Run("call pushes the return address", func(t *testing.T) {
		w, r, ok := run(t, "e8 00 01 00 00", nil)
		require.True(t, ok)
		assert.Equal(t, uint64(addr+5+0x100), r.pc)
		assert.Equal(t, uint64(stackTop-0x108), r.SP())
		assert.Equal(t, uint64(addr+5), w.as.peek64(t, r.SP()))
	})
	t.Run("push rsp stores the old rsp", func(t *testing.T) {
		w, r, ok := run(t, "54", nil)
		require.True(t, ok)
		assert.Equal(t, uint64(addr+1), r.pc)
		assert.Equal(t, uint64(stackTop-0x100), w.as.peek64(t, r.SP()))
	})
	t.Run("push r8", func(t *testing.T) {
		w, r, _ := run(t, "41 50", func(r *fakeRegs) { r.x[8] = 0x1234 })
		assert.Equal(t, uint64(addr+2), r.pc)
		assert.Equal(t, uint64(0x1234), w.as.peek64(t, r.SP()))
	})
	t.Run("push to an unwritable stack is not emulated", func(t *testing.T) {
		_, r, ok := run(t, "55", func(r *fakeRegs) { r.SetSP(0x1000) })
		assert.False(t, ok)
		assert.Equal(t, uint64(addr), r.pc)
		assert.Equal(t, uint64(0x1000), r.SP())
	})
}
