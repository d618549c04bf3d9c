package arm64

import (
	"encoding/binary"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// Test address space layout.
const (
	tCode  = 0x400000
	tData  = 0x600000
	tStack = 0x800000 // top of a 64 KiB stack
	tSize  = 0x10000
)

// brk0 is BRK #0, which ends every test program.
const brk0 = 0xd4200000

// newTestCPU maps code (r-x) at tCode, 64 KiB of rw data at tData and a
// stack below tStack, and returns a CPU at the first instruction.
func newTestCPU(t testing.TB, code []uint32) *CPU {
	t.Helper()
	mm := vm.NewMM()
	for _, v := range []vm.VMA{
		{Start: tCode, End: tCode + tSize, Prot: vm.ProtRead | vm.ProtExec},
		{Start: tData, End: tData + tSize, Prot: vm.ProtRead | vm.ProtWrite},
		{Start: tStack - tSize, End: tStack, Prot: vm.ProtRead | vm.ProtWrite},
	} {
		if err := mm.Map(v); err != nil {
			t.Fatal(err)
		}
	}
	pokeCode(t, mm, tCode, code)
	c := NewCPU(mm)
	c.SetPC(tCode)
	c.SetSP(tStack)
	return c
}

func pokeCode(t testing.TB, mm *vm.MM, addr uint64, code []uint32) {
	t.Helper()
	b := make([]byte, 4*len(code))
	for i, w := range code {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	if err := mm.Poke(b, addr); err != nil {
		t.Fatal(err)
	}
}

// runToBrk runs c until an exit and requires it to be BRK #0.
func runToBrk(t testing.TB, c *CPU) {
	t.Helper()
	e := c.Run(1 << 40)
	if e.Reason != vm.ExitBreakpoint || e.Code != 0 {
		t.Fatalf("exit %v at pc %#x (%s), want breakpoint: %+v", e.Reason, e.PC, c.Disasm(e.PC), e)
	}
}

// runCode runs code (BRK #0 appended) with x0..x(len(in)-1) = in and returns the CPU.
func runCode(t testing.TB, code []uint32, in ...uint64) *CPU {
	t.Helper()
	c := newTestCPU(t, append(append([]uint32(nil), code...), brk0))
	for i, v := range in {
		c.SetReg(i, v)
	}
	runToBrk(t, c)
	return c
}
