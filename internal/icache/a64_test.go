package icache

import (
	"encoding/binary"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

func testMM(t *testing.T) *vm.MM {
	mm := vm.NewMM()
	if err := mm.Map(vm.VMA{Start: 0x10000, End: 0x12000, Prot: vm.ProtRead | vm.ProtWrite | vm.ProtExec}); err != nil {
		t.Fatal(err)
	}
	if err := mm.Map(vm.VMA{Start: 0x20000, End: 0x21000, Prot: vm.ProtRead | vm.ProtWrite}); err != nil {
		t.Fatal(err)
	}
	return mm
}

func putWord(t *testing.T, mm *vm.MM, addr uint64, w uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], w)
	if err := mm.WriteAt(b[:], addr); err != nil {
		t.Fatal(err)
	}
}

func TestA64Cache(t *testing.T) {
	mm := testMM(t)
	putWord(t, mm, 0x10008, 0x91000420) // add x0, x1, #1
	c := A64CacheOf(mm)
	if A64CacheOf(mm) != c || mm.Code != c {
		t.Fatal("A64CacheOf must install one cache per MM")
	}
	p, f := c.Lookup(mm, 0x10008)
	if f != nil || p.VA != 0x10000 || p.Insn[2].Op != decode.A64ADDI || !p.Valid() {
		t.Fatalf("lookup: %v %+v", f, p.Insn[2])
	}
	if q, _ := c.Lookup(mm, 0x10ffc); q != p || c.Fills.Load() != 1 {
		t.Fatal("second lookup in the page must hit")
	}
	// A store to the page invalidates it; the next lookup decodes again.
	putWord(t, mm, 0x10008, 0xd65f03c0) // ret
	if p.Valid() {
		t.Fatal("page still valid after a store")
	}
	q, _ := c.Lookup(mm, 0x10008)
	if q == p || q.Insn[2].Op != decode.A64RET || p.Insn[2].Op != decode.A64ADDI {
		t.Fatal("stale page served, or the old page was modified in place")
	}
	// mprotect and munmap invalidate too.
	if err := mm.Protect(0x10000, 0x11000, vm.ProtRead|vm.ProtExec); err != nil {
		t.Fatal(err)
	}
	if q.Valid() {
		t.Fatal("valid after mprotect")
	}
	r, _ := c.Lookup(mm, 0x10000)
	mm.Unmap(0x10000, 0x11000)
	if r.Valid() {
		t.Fatal("valid after munmap")
	}
	if _, f := c.Lookup(mm, 0x10000); f == nil || f.Access != vm.AccessExec {
		t.Fatalf("unmapped: fault %v", f)
	}
	// No execute permission.
	if _, f := c.Lookup(mm, 0x20000); f == nil || !f.Mapped {
		t.Fatalf("rw page: fault %v", f)
	}
	// IC IVAU drops a page without touching its version.
	s, _ := c.Lookup(mm, 0x11000)
	g := c.Gen()
	c.Invalidate(0x11abc)
	if c.Gen() == g || !s.Valid() || c.Len() != 0 {
		t.Fatalf("invalidate: gen %d→%d valid %v len %d", g, c.Gen(), s.Valid(), c.Len())
	}
	if s2, _ := c.Lookup(mm, 0x11000); s2 == s {
		t.Fatal("invalidated page served again")
	}
}
