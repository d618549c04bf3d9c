package uprobes

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvm-emu/uvm/internal/decode"
)

// TestA64Fate_Table: encodings → simulate / xol / reject, with the
// kernel's reason (spec §3.2). The disassembly column guards the
// hand-written encodings.
func TestA64Fate_Table(t *testing.T) {
	tests := []struct {
		word   uint32
		disasm string // mnemonic (checked against objdump; against decode.DisasmA64 where it knows the instruction)
		fate   string
		detail string // simulation handler, or substring of the reason
	}{
		{0xD503201F, "nop", "simulate", "nop"},
		{0x14000002, "b ", "simulate", "b/bl"},
		{0x94000002, "bl ", "simulate", "b/bl"},
		{0x54000040, "b.eq", "simulate", "b.cond"},
		{0xB4000040, "cbz", "simulate", "cbz/cbnz"},
		{0x35000041, "cbnz", "simulate", "cbz/cbnz"},
		{0xB6080040, "tbz", "simulate", "tbz/tbnz"},
		{0x37180042, "tbnz", "simulate", "tbz/tbnz"},
		{0x10000080, "adr ", "simulate", "adr/adrp"},
		{0xB0000001, "adrp", "simulate", "adr/adrp"},
		{0xD61F0020, "br ", "simulate", "br/blr/ret"},
		{0xD63F0040, "blr", "simulate", "br/blr/ret"},
		{0xD65F03C0, "ret", "simulate", "br/blr/ret"},
		{0xD65F0BFF, "retaa", "reject", "pointer-authenticating"},
		{0xD71F0822, "braa", "reject", "pointer-authenticating"},
		{0xD73F0822, "blraa", "reject", "pointer-authenticating"},
		{0x58000040, "ldr x0", "reject", "literal"},
		{0x18000040, "ldr w0", "reject", "literal"},
		{0x98000040, "ldrsw", "reject", "literal"},
		{0xD8000040, "prfm", "reject", "literal"},
		// FP/SIMD LDR (literal) escapes the GPR literal mask: stepped (spec §3.2 note).
		{0x5C000040, "ldr d0", "xol", ""},
		{0xC85F7C20, "ldxr", "reject", "exclusive"},
		{0xC8027C20, "stxr", "reject", "exclusive"},
		{0xC85FFC20, "ldaxr", "reject", "exclusive"},
		{0xC8DFFC20, "ldar", "xol", ""},
		{0xC8A07C41, "cas", "xol", ""},
		{0xD51B4200, "msr", "reject", "MSR"},
		{0xD50342DF, "msr", "reject", "MSR"},
		{0xD53B4200, "mrs", "xol", ""},
		{0xD53B4220, "mrs", "reject", "DAIF"},
		{0xD4000001, "svc", "reject", "exception-generating"},
		{0xD4200000, "brk", "reject", "exception-generating"},
		{0xD4000002, "hvc", "reject", "exception-generating"},
		{0xD69F03E0, "eret", "reject", "exception return"},
		{0xD503233F, "paciasp", "xol", ""},
		{0xD50323BF, "autiasp", "reject", "whitelist"},
		{0xD503245F, "bti", "xol", ""},
		{0xD503205F, "wfe", "reject", "whitelist"},
		{0xD503203F, "yield", "reject", "whitelist"},
		{0xD5033BBF, "dmb", "xol", ""},
		{0xD5033FDF, "isb", "xol", ""},
		{0xA9BF7BFD, "stp", "xol", ""},
		{0x91000420, "add", "xol", ""},
		{0xF9400020, "ldr x0", "xol", ""},
	}
	for _, tc := range tests {
		d := strings.ToLower(decode.DisasmA64(tc.word, 0))
		t.Run(fmt.Sprintf("%08x_%s", tc.word, strings.TrimSpace(tc.disasm)), func(t *testing.T) {
			if !strings.HasPrefix(d, ".inst") && !strings.HasPrefix(d, "hint") {
				assert.True(t, strings.HasPrefix(d, tc.disasm), "encoding %#08x disassembles as %q", tc.word, d)
			}
			fate, detail := A64Fate(tc.word, true)
			assert.Equal(t, tc.fate, fate)
			assert.Contains(t, detail, tc.detail)
		})
	}
}

func TestA64Fate_NOPBeforeSimulation(t *testing.T) {
	fate, _ := A64Fate(A64NOP, false)
	assert.Equal(t, "xol", fate, "before v6.13 NOP is stepped (it is in the steppable hint list)")
	fate, _ = A64Fate(A64NOP, true)
	assert.Equal(t, "simulate", fate)
}

func TestAnalyzeARM64_Misaligned(t *testing.T) {
	var au archUprobe
	binary.LittleEndian.PutUint32(au.insn[:], A64NOP)
	e, _ := analyzeARM64(&au, 0x1002, true)
	assert.Equal(t, EINVAL, e)
}

// TestSimulateARM64: the simulation handlers' register effects.
func TestSimulateARM64(t *testing.T) {
	const addr = 0x401000
	const (
		nzcvZ = 1 << 30
		nzcvN = 1 << 31
	)
	tests := []struct {
		name  string
		word  uint32
		setup func(r *fakeRegs)
		pc    uint64
		check func(t *testing.T, r *fakeRegs)
	}{
		{"b.eq taken", 0x54000040, func(r *fakeRegs) { r.flags = nzcvZ }, addr + 8, nil},
		{"b.eq not taken", 0x54000040, nil, addr + 4, nil},
		{"b.lt taken (N!=V)", 0x5400004B, func(r *fakeRegs) { r.flags = nzcvN }, addr + 8, nil},
		{"b.al", 0x5400004E, nil, addr + 8, nil},
		{"b back", 0x17FFFFFF, nil, addr - 4, nil},
		{"bl", 0x94000002, nil, addr + 8, func(t *testing.T, r *fakeRegs) { assert.Equal(t, uint64(addr+4), r.x[30]) }},
		{"cbz x taken", 0xB4000040, nil, addr + 8, nil},
		{"cbz x not taken", 0xB4000040, func(r *fakeRegs) { r.x[0] = 1 << 40 }, addr + 4, nil},
		{"cbz w sees low 32 bits", 0x34000040, func(r *fakeRegs) { r.x[0] = 1 << 40 }, addr + 8, nil},
		{"cbnz w1 not taken", 0x35000041, nil, addr + 4, nil},
		{"tbz #33 taken", 0xB6080040, func(r *fakeRegs) { r.x[0] = 1 << 32 }, addr + 8, nil},
		{"tbz #33 not taken", 0xB6080040, func(r *fakeRegs) { r.x[0] = 1 << 33 }, addr + 4, nil},
		{"tbnz #3 taken", 0x37180042, func(r *fakeRegs) { r.x[2] = 8 }, addr + 8, nil},
		{"adr", 0x10000080, nil, addr + 4, func(t *testing.T, r *fakeRegs) { assert.Equal(t, uint64(addr+16), r.x[0]) }},
		{"adrp", 0xB0000001, nil, addr + 4, func(t *testing.T, r *fakeRegs) { assert.Equal(t, uint64(addr&^0xFFF+0x1000), r.x[1]) }},
		{"adr to xzr is dropped", 0x1000009F, nil, addr + 4, func(t *testing.T, r *fakeRegs) { assert.Zero(t, r.x[31]) }},
		{"br x1", 0xD61F0020, func(r *fakeRegs) { r.x[1] = 0x5000 }, 0x5000, nil},
		{"blr x30 uses the old x30", 0xD63F03C0, func(r *fakeRegs) { r.x[30] = 0x6000 }, 0x6000,
			func(t *testing.T, r *fakeRegs) { assert.Equal(t, uint64(addr+4), r.x[30]) }},
		{"ret", 0xD65F03C0, func(r *fakeRegs) { r.x[30] = 0x7000 }, 0x7000, nil},
		{"br xzr reads zero", 0xD61F03E0, func(r *fakeRegs) { r.x[31] = 0x9999 }, 0, nil},
		{"nop clears BTYPE", A64NOP, func(r *fakeRegs) { r.flags = nzcvZ | 0xC00 }, addr + 4,
			func(t *testing.T, r *fakeRegs) { assert.Equal(t, uint64(nzcvZ), r.flags) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var au archUprobe
			binary.LittleEndian.PutUint32(au.insn[:], tc.word)
			e, why := analyzeARM64(&au, addr, true)
			require.Zero(t, e, why)
			require.True(t, au.simulate)
			r := &fakeRegs{arch: ArchARM64, pc: addr}
			if tc.setup != nil {
				tc.setup(r)
			}
			simulateARM64(&au, r)
			assert.Equal(t, tc.pc, r.pc)
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}
