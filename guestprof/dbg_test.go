package guestprof

import "testing"

func TestDbg(t *testing.T) {
	g := loadGuest(t, goGuest(t, "arm64", "hello"))
	rows := g.img.lineTable()
	t.Logf("%d rows dwarf=%v", len(rows), g.img.hasDWARF)
	m := g.sym(t, "main.main") - g.elf.Base
	for _, r := range rows {
		if r.addr >= m-8 && r.addr < m+0x80 {
			t.Logf("%#x %s:%d", r.addr, r.file, r.line)
		}
	}
}
