package vm

import "testing"

func TestSharedObjectIO(t *testing.T) {
	o := NewSharedObject(nil)
	m := NewMM()
	if err := m.Map(VMA{Start: 0x10000, End: 0x12000, Prot: ProtRead | ProtWrite, Shared: true, Obj: o}); err != nil {
		t.Fatal(err)
	}
	o.WriteAt([]byte("hello"), PageSize-2) // crosses a page
	b := make([]byte, 5)
	if err := m.ReadAt(b, 0x10000+PageSize-2); err != nil || string(b) != "hello" {
		t.Fatalf("mapping reads %q, %v", b, err)
	}
	if err := m.WriteAt([]byte("XY"), 0x10000+PageSize); err != nil {
		t.Fatal(err)
	}
	o.ReadAt(b, PageSize-2)
	if string(b) != "heXYo" {
		t.Fatalf("object reads %q", b)
	}
	o.Punch(PageSize-1, 2)
	o.ReadAt(b, PageSize-2)
	if string(b) != "h\x00\x00Yo" {
		t.Fatalf("after punch %q", b)
	}
	o.Truncate(PageSize + 1)
	o.ReadAt(b, PageSize-2)
	if string(b) != "h\x00\x00\x00\x00" {
		t.Fatalf("after truncate %q", b)
	}
	o.ReadAt(b, 10*PageSize) // untouched pages read as zeroes
	if string(b) != "\x00\x00\x00\x00\x00" {
		t.Fatalf("hole %q", b)
	}
}
