package icache

import (
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

const (
	wMov1 = 0x52800020 // mov w0, #1
	wMov2 = 0x52800040 // mov w0, #2
	wMov3 = 0x52800060 // mov w0, #3
)

func insnImm(t *testing.T, c *A64Cache, mm *vm.MM, pc uint64) uint64 {
	t.Helper()
	p, f := c.Lookup(mm, pc)
	if f != nil {
		t.Fatalf("lookup %#x: %v", pc, f)
	}
	in := p.Insn[pc&vm.PageMask/4]
	if in.Op != decode.A64MOVI {
		t.Fatalf("%#x: op %v", pc, in.Op)
	}
	return in.Imm
}

// TestStrictView: in strict mode fetch sees a line's new bytes only after
// CleanLine (DC CVAU) and then InvalidateLine (IC IVAU).
func TestStrictView(t *testing.T) {
	mm := testMM(t)
	c := A64CacheOf(mm)
	c.SetStrict(true)
	const pc = 0x10040
	putWord(t, mm, pc, wMov1)
	if insnImm(t, c, mm, pc) != 1 {
		t.Fatal("first fetch must read memory")
	}
	fills := c.Fills.Load()
	putWord(t, mm, pc, wMov2) // a store alone
	if insnImm(t, c, mm, pc) != 1 || c.Fills.Load() != fills {
		t.Fatal("a store changed the I-side view (or forced a re-decode)")
	}
	c.InvalidateLine(mm, pc, 64) // IC IVAU without DC CVAU
	if insnImm(t, c, mm, pc) != 1 {
		t.Fatal("IC IVAU without DC CVAU published the store")
	}
	c.CleanLine(mm, pc, 64) // DC CVAU without IC IVAU
	if insnImm(t, c, mm, pc) != 1 {
		t.Fatal("DC CVAU without IC IVAU published the store")
	}
	putWord(t, mm, pc, wMov3) // after the clean: not at the PoU
	c.InvalidateLine(mm, pc, 64)
	if insnImm(t, c, mm, pc) != 2 {
		t.Fatal("IC IVAU after DC CVAU must publish the bytes as of the clean")
	}
	// Line granularity: cleaning and invalidating another line of the
	// page leaves this one alone.
	c.CleanLine(mm, pc+64, 64)
	c.InvalidateLine(mm, pc+64, 64)
	if insnImm(t, c, mm, pc) != 2 {
		t.Fatal("maintenance of the next line changed this one")
	}
	// A 32-byte line boundary inside a 64-byte line.
	c.CleanLine(mm, pc, 32)
	c.InvalidateLine(mm, pc+16, 32)
	if insnImm(t, c, mm, pc) != 3 {
		t.Fatal("32-byte line maintenance")
	}
	// FlushICache does both (what the kernel does for uprobes).
	putWord(t, mm, pc, wMov1)
	FlushICache(mm, nil, pc, 4)
	if insnImm(t, c, mm, pc) != 1 {
		t.Fatal("FlushICache")
	}
	// mprotect without exec: fetch faults, the view survives.
	putWord(t, mm, pc, wMov2)
	if err := mm.Protect(0x10000, 0x11000, vm.ProtRead|vm.ProtWrite); err != nil {
		t.Fatal(err)
	}
	if _, f := c.Lookup(mm, pc); f == nil || !f.Mapped {
		t.Fatalf("after mprotect: %v", f)
	}
	if err := mm.Protect(0x10000, 0x11000, vm.ProtRead|vm.ProtWrite|vm.ProtExec); err != nil {
		t.Fatal(err)
	}
	if insnImm(t, c, mm, pc) != 1 {
		t.Fatal("mprotect round trip published the store")
	}
	// munmap drops the view; a new mapping is read afresh.
	mm.Unmap(0x10000, 0x11000)
	if _, f := c.Lookup(mm, pc); f == nil || f.Mapped {
		t.Fatalf("after munmap: %v", f)
	}
	if err := mm.Map(vm.VMA{Start: 0x10000, End: 0x11000, Prot: vm.ProtRead | vm.ProtWrite | vm.ProtExec}); err != nil {
		t.Fatal(err)
	}
	putWord(t, mm, pc, wMov3)
	if insnImm(t, c, mm, pc) != 3 {
		t.Fatal("new mapping")
	}
	// DecodeOne reads the view too.
	putWord(t, mm, pc, wMov2)
	if in, _, f := c.DecodeOne(mm, pc); f != nil || in.Imm != 3 {
		t.Fatalf("DecodeOne strict: %+v %v", in, f)
	}
	// Back to coherent: the live bytes.
	c.SetStrict(false)
	if insnImm(t, c, mm, pc) != 2 || c.Strict() {
		t.Fatal("coherent after SetStrict(false)")
	}
	if in, _, f := c.DecodeOne(mm, pc); f != nil || in.Imm != 2 {
		t.Fatalf("DecodeOne coherent: %+v %v", in, f)
	}
}

// TestCoherentMaintenance: with the strict view off, CleanLine does
// nothing and InvalidateLine drops the decoded page (IC IVAU as before).
func TestCoherentMaintenance(t *testing.T) {
	mm := testMM(t)
	c := A64CacheOf(mm)
	putWord(t, mm, 0x10000, wMov1)
	p, _ := c.Lookup(mm, 0x10000)
	c.CleanLine(mm, 0x10000, 64)
	if q, _ := c.Lookup(mm, 0x10000); q != p {
		t.Fatal("CleanLine dropped the page")
	}
	g := c.Gen()
	c.InvalidateLine(mm, 0x10000, 64)
	if q, _ := c.Lookup(mm, 0x10000); q == p || c.Gen() == g {
		t.Fatal("InvalidateLine kept the page")
	}
	// x86 address spaces: FlushICache is a no-op.
	mm2 := testMM(t)
	mm2.Code = NewX86Cache(mm2)
	FlushICache(mm2, NewModel(DefaultModelConfig()), 0x10000, 64)
}

// TestFlushICacheNoModel: without a model FlushICache covers lines of any
// modelled size.
func TestFlushICacheNoModel(t *testing.T) {
	mm := testMM(t)
	c := A64CacheOf(mm)
	c.SetStrict(true)
	for a := uint64(0x10000); a < 0x10080; a += 4 {
		putWord(t, mm, a, wMov1)
	}
	insnImm(t, c, mm, 0x10000)
	for a := uint64(0x10000); a < 0x10080; a += 4 {
		putWord(t, mm, a, wMov2)
	}
	FlushICache(mm, nil, 0x10004, 0x70)
	for a := uint64(0x10000); a < 0x10080; a += 4 {
		if got := insnImm(t, c, mm, a); got != 2 {
			t.Fatalf("%#x: %d after FlushICache", a, got)
		}
	}
}
