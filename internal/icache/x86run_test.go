package icache

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

func TestX86DecodeRun(t *testing.T) {
	// mov eax, 1; add eax, ebx; jne +0; nop; ret; then bytes that are
	// not decoded ahead (after the ret).
	code := []byte{0xb8, 1, 0, 0, 0, 0x01, 0xd8, 0x75, 0x00, 0x90, 0xc3, 0x0f, 0x0b}
	mm := x86TestMM(t, code, 0x400000, 1, vm.ProtRead|vm.ProtExec)
	c := NewX86Cache(mm)
	p, f := c.Lookup(0x400000)
	if f != nil {
		t.Fatal(f)
	}
	r, _, res := p.DecodeRun(mm, 0x400000)
	if res != DecodeOK || r.Run != 4 || r.PC != 0x400000 {
		t.Fatalf("run %v: Run %d PC %#x", res, r.Run, r.PC)
	}
	pcs := []uint64{0x400000, 0x400005, 0x400007, 0x400009, 0x40000a}
	for i, in := 0, r; ; i++ {
		if in.PC != pcs[i] || p.At(pcs[i]) != in || int(in.Run) != len(pcs)-1-i || RunIndex(r, in) != uint64(i) {
			t.Fatalf("record %d: PC %#x Run %d index %d", i, in.PC, in.Run, RunIndex(r, in))
		}
		if in.Run == 0 {
			if in.Op != decode.X86Ret {
				t.Fatalf("run ends at %v", in.Op)
			}
			break
		}
		in = RunNext(in)
	}
	// A run entered in the middle (a branch to its third instruction)
	// counts from there: RunIndex is the distance between the records.
	mid := p.At(0x400007)
	for i, in := 0, mid; ; i++ {
		if RunIndex(mid, in) != uint64(i) {
			t.Fatalf("from %#x: record %#x index %d, want %d", mid.PC, in.PC, RunIndex(mid, in), i)
		}
		if in.Run == 0 {
			break
		}
		in = RunNext(in)
	}
	if p.At(0x40000b) != nil {
		t.Fatal("decoded past the ret")
	}
	if RunLast(r, 2) != p.At(0x400005) || RunLast(r, 100) != p.At(0x40000a) {
		t.Fatal("RunLast")
	}
	// Entering in the middle of a run uses the rest of it.
	if r2, _, _ := p.DecodeRun(mm, 0x400007); r2 != p.At(0x400007) || r2.Run != 2 {
		t.Fatalf("mid-run entry: Run %d", r2.Run)
	}
}

func TestX86DecodeRunStopsBeforePageEnd(t *testing.T) {
	// NOPs up to the page end: the run stops where an instruction might
	// run into the next page, which stays unmarked as code.
	code := make([]byte, 40)
	for i := range code {
		code[i] = 0x90
	}
	const pc = 0x400000 + vm.PageSize - 40
	mm := x86TestMM(t, code, pc, 2, vm.ProtRead|vm.ProtExec)
	c := NewX86Cache(mm)
	p, f := c.Lookup(pc)
	if f != nil {
		t.Fatal(f)
	}
	r, _, res := p.DecodeRun(mm, pc)
	if res != DecodeOK {
		t.Fatal(res)
	}
	if last := RunLast(r, 1000); last.PC > 0x400000+vm.PageSize-15 || p.next.Load() != nil {
		t.Fatalf("run reaches %#x, next page %v", last.PC, p.next.Load() != nil)
	}
}
