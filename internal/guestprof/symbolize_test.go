package guestprof

import (
	"debug/elf"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// gnuBuildID reads the build ID note the simple way, as a cross-check.
func gnuBuildID(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16+20 {
		t.Fatalf("%s: bad build-id note", path)
	}
	return hex.EncodeToString(b[16:])
}

// TestSymbolizeC symbolizes the committed C fib (-O2 -g0: .symtab, no
// DWARF) on both arches.
func TestSymbolizeC(t *testing.T) {
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			path := filepath.Join("../../testdata/bin", a.name, "fib")
			g := loadGuest(t, path)
			s := NewSymbolizer(g.mm)
			fib, main := g.sym(t, "fib"), g.sym(t, "main")
			for _, c := range []struct {
				pc   uint64
				want string
			}{
				{fib, "fib+0x0"},
				{fib + 0x14, "fib+0x14"},
				{main + 4, "main+0x4"},
				{g.symEnd(t, "main") - 1, fmt.Sprintf("main+%#x", g.symEnd(t, "main")-1-main)},
				{0x10, "0x10"},                // unmapped
				{stackBase, "0x7ff000000000"}, // not executable
			} {
				if got := s.Describe(c.pc); got != c.want {
					t.Errorf("Describe(%#x) = %q, want %q", c.pc, got, c.want)
				}
			}
			// A return address at the very end of a function belongs to
			// the call, not to the next function.
			next := g.symEnd(t, "fib")
			if f := s.Frame(next, true); f.Func == "" || !strings.HasPrefix(f.String(), "fib+") && f.String() != s.Describe(next) {
				t.Errorf("Frame(%#x, caller) = %v", next, f)
			}
			if f := s.Frame(fib+8, false); f.Path != path || f.File != "" || f.Line != 0 {
				t.Errorf("Frame = %+v, want path %s and no line (no DWARF)", f, path)
			}
			if want := gnuBuildID(t, path); g.img.buildID != want || want == "" {
				t.Errorf("build ID %q, want %q", g.img.buildID, want)
			}
			if len(g.img.loads) == 0 || len(g.img.syms) < 100 {
				t.Errorf("%d segments, %d symbols", len(g.img.loads), len(g.img.syms))
			}
		})
	}
}

// TestSymbolizeSizes: a size-aware lookup does not attribute padding
// after a function to it, and sorted aliases resolve to one name.
func TestSymbolizeSizes(t *testing.T) {
	g := loadGuest(t, "../../testdata/bin/amd64/fib")
	end := g.symEnd(t, "main")
	next := ^uint64(0)
	for _, s := range g.img.syms {
		if s.addr > end-g.elf.Base && s.addr < next {
			next = s.addr
		}
	}
	if next == end-g.elf.Base {
		t.Skip("no padding after main")
	}
	if got := NewSymbolizer(g.mm).Describe(end); got != fmt.Sprintf("%#x", end) {
		t.Errorf("padding after main: Describe = %q, want a bare address", got)
	}
	for i := 1; i < len(g.img.syms); i++ {
		if g.img.syms[i].addr <= g.img.syms[i-1].addr {
			t.Fatalf("symbols not sorted/deduplicated at %d", i)
		}
	}
}

// TestSymbolizeGo symbolizes a Go guest built at test time: .symtab
// names, DWARF file and line, Go's notes.
func TestSymbolizeGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go guests")
	}
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			path := goGuest(t, a.name, "hello")
			g := loadGuest(t, path)
			s := NewSymbolizer(g.mm)
			mainMain := g.sym(t, "main.main")
			if got := s.Describe(mainMain + 8); got != "main.main+0x8" {
				t.Errorf("Describe = %q", got)
			}
			f := s.Frame(mainMain, false)
			if !strings.HasSuffix(f.File, "hello/main.go") || f.Line != 6 {
				t.Errorf("main.main entry at %s:%d, want hello/main.go:6", f.File, f.Line)
			}
			ret := g.callRet(t, "main.main", "fmt.Fprintln")
			if f := s.Frame(ret, true); f.Func != "main.main" || f.Line != 7 || f.Off != ret-mainMain {
				t.Errorf("call site %s %s:%d, want main.main at line 7", f, f.File, f.Line)
			}
			// fmt.Println is inlined into main.main around that call.
			if f := s.Frame(ret, true); len(f.Inlined) != 1 || f.Inlined[0].Func != "fmt.Println" || !strings.HasSuffix(f.Inlined[0].File, "fmt/print.go") {
				t.Errorf("inlined at the call site: %+v, want fmt.Println in fmt/print.go", f.Inlined)
			}
			if id := g.img.buildID; id == "" {
				t.Error("no build ID")
			} else if want := gnuBuildID(t, path); want != "" && id != want {
				t.Errorf("build ID %q, want the GNU one %q", id, want)
			}
			// An ABI0 assembly function is named as Go's tracebacks name it.
			found := false
			for _, sym := range g.img.syms {
				if strings.HasSuffix(sym.name, ".abi0") {
					if got := s.Describe(sym.addr + g.elf.Base); got != strings.TrimSuffix(sym.name, ".abi0")+"+0x0" {
						t.Errorf("Describe(%s) = %q", sym.name, got)
					}
					found = true
					break
				}
			}
			if !found {
				t.Error("no .abi0 symbol in a Go binary?")
			}
		})
	}
}

// TestSymbolizePIE: a static-PIE is symbolized at its load address.
func TestSymbolizePIE(t *testing.T) {
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			g := loadGuest(t, filepath.Join("../../testdata/bin", a.name, "hello-pie"))
			if g.elf.Base != vm.StaticPIEBase {
				t.Fatalf("base %#x", g.elf.Base)
			}
			main := g.sym(t, "main")
			if got := NewSymbolizer(g.mm).Describe(main + 4); got != "main+0x4" {
				t.Errorf("Describe = %q", got)
			}
		})
	}
}

// TestSymbolizeDWARFC: fibfp carries DWARF line tables.
func TestSymbolizeDWARFC(t *testing.T) {
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			g := loadGuest(t, filepath.Join("../../testdata/bin", a.name, "fibfp"))
			s := NewSymbolizer(g.mm)
			f := s.Frame(g.callRet(t, "run", "fib"), true)
			if f.Func != "run" || !strings.HasSuffix(f.File, "fibfp.c") || f.Line != 14 {
				t.Errorf("run's call to fib: %s %s:%d, want run at fibfp.c:14", f, f.File, f.Line)
			}
		})
	}
}
