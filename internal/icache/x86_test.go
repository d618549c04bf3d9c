package icache

import (
	"sync"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

func x86TestMM(t *testing.T, code []byte, at uint64, pages int, prot vm.Prot) *vm.MM {
	t.Helper()
	mm := vm.NewMM()
	if err := mm.Map(vm.VMA{Start: 0x400000, End: 0x400000 + uint64(pages)*vm.PageSize, Prot: prot}); err != nil {
		t.Fatal(err)
	}
	if err := mm.Poke(code, at); err != nil {
		t.Fatal(err)
	}
	return mm
}

func mustDecode(t *testing.T, c *X86Cache, mm *vm.MM, pc uint64) (*X86Page, *decode.X86) {
	t.Helper()
	p, f := c.Lookup(pc)
	if f != nil {
		t.Fatalf("lookup %#x: %v", pc, f)
	}
	in := p.At(pc)
	if in == nil {
		var res DecodeResult
		in, f, res = p.Decode(mm, pc)
		if res != DecodeOK {
			t.Fatalf("decode %#x: %v %v", pc, res, f)
		}
	}
	return p, in
}

func TestX86CacheDecodeAndStale(t *testing.T) {
	// mov eax, 1; ret
	mm := x86TestMM(t, []byte{0xb8, 1, 0, 0, 0, 0xc3}, 0x400000, 1, vm.ProtRead|vm.ProtExec)
	c := NewX86Cache(mm)
	p, in := mustDecode(t, c, mm, 0x400000)
	if in.Op.Base() != decode.X86Mov || in.Len != 5 || in.Imm != 1 {
		t.Fatalf("decoded %v len %d imm %d", in.Op, in.Len, in.Imm)
	}
	if p.At(0x400000) != in {
		t.Fatal("At does not return the cached record")
	}
	if p.At(0x400001) != nil {
		t.Fatal("an undecoded offset has a record")
	}
	// Decoding the middle of an instruction is allowed (x86 code may
	// jump there) and cached separately.
	if _, in2 := mustDecode(t, c, mm, 0x400001); in2 == in {
		t.Fatal("same record for two offsets")
	}
	// A store to the page makes it stale; the next lookup rebuilds it.
	if err := mm.Poke([]byte{7}, 0x400001); err != nil {
		t.Fatal(err)
	}
	if p.Valid() {
		t.Fatal("page still valid after a store")
	}
	if _, _, res := p.Decode(mm, 0x400005); res != DecodeStale {
		t.Fatalf("decode on a stale page: %v", res)
	}
	p2, in3 := mustDecode(t, c, mm, 0x400000)
	if p2 == p || in3.Imm != 7 {
		t.Fatalf("rebuilt page %v imm %d", p2 == p, in3.Imm)
	}
	// mprotect without exec: the lookup faults.
	if err := mm.Protect(0x400000, 0x401000, vm.ProtRead); err != nil {
		t.Fatal(err)
	}
	if _, f := c.Lookup(0x400000); f == nil || f.Access != vm.AccessExec {
		t.Fatalf("lookup of a non-executable page: %v", f)
	}
}

func TestX86CacheCrossPage(t *testing.T) {
	// mov eax, 0x11223344 starting 2 bytes before the page end.
	const pc = 0x400000 + vm.PageSize - 2
	mm := x86TestMM(t, []byte{0xb8, 0x44, 0x33, 0x22, 0x11}, pc, 2, vm.ProtRead|vm.ProtExec)
	c := NewX86Cache(mm)
	p, in := mustDecode(t, c, mm, pc)
	if in.Len != 5 || in.Imm != 0x11223344 {
		t.Fatalf("len %d imm %#x", in.Len, in.Imm)
	}
	// A store to the second page invalidates the first page's records.
	if err := mm.Poke([]byte{0x55}, 0x400000+vm.PageSize+8); err != nil {
		t.Fatal(err)
	}
	if p.Valid() {
		t.Fatal("page valid after its continuation page changed")
	}
	// The continuation page must be executable: else a fetch fault at
	// the start of that page.
	mm2 := x86TestMM(t, []byte{0xb8, 0x44, 0x33, 0x22, 0x11}, pc, 2, vm.ProtRead|vm.ProtExec)
	if err := mm2.Protect(0x401000, 0x402000, vm.ProtRead); err != nil {
		t.Fatal(err)
	}
	c2 := NewX86Cache(mm2)
	p2, f := c2.Lookup(pc)
	if f != nil {
		t.Fatal(f)
	}
	_, f, res := p2.Decode(mm2, pc)
	if res != DecodeFault || f.Addr != 0x401000 || f.Access != vm.AccessExec {
		t.Fatalf("decode: %v %+v", res, f)
	}
}

func TestX86CacheConcurrent(t *testing.T) {
	code := make([]byte, 4096)
	for i := range code {
		code[i] = 0x90
	}
	mm := x86TestMM(t, code, 0x400000, 1, vm.ProtRead|vm.ProtExec)
	c := NewX86Cache(mm)
	var wg sync.WaitGroup
	recs := make([][]*decode.X86, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := 0; off < 4096; off += 7 {
				p, f := c.Lookup(0x400000 + uint64(off))
				if f != nil {
					t.Error(f)
					return
				}
				in := p.At(0x400000 + uint64(off))
				if in == nil {
					in, _, _ = p.Decode(mm, 0x400000+uint64(off))
				}
				recs[g] = append(recs[g], in)
			}
		}()
	}
	wg.Wait()
	for g := 1; g < 4; g++ {
		for i := range recs[0] {
			if recs[g][i] != recs[0][i] || recs[0][i].Op != decode.X86Nop {
				t.Fatalf("goroutine %d record %d differs", g, i)
			}
		}
	}
}
