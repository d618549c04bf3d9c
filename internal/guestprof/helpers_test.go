package guestprof

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

var arches = []struct {
	name string
	arch vm.Arch
}{{"arm64", vm.ArchARM64}, {"amd64", vm.ArchAMD64}}

// guest is an ELF file loaded into a fresh address space, with a parsed
// image to find symbols and code in.
type guest struct {
	path string
	mm   *vm.MM
	img  *image
	elf  *vm.Image
}

// loadGuest loads the ELF at path (relative paths stay relative: they are
// what VMAs, and so profiles, name).
func loadGuest(t testing.TB, path string) *guest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mm := vm.NewMM()
	ei, err := vm.LoadELF(mm, path, data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := loadImage(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return &guest{path: path, mm: mm, img: img, elf: ei}
}

// sym returns the runtime address of the function name.
func (g *guest) sym(t testing.TB, name string) uint64 {
	t.Helper()
	for _, s := range g.img.syms {
		if s.name == name {
			return s.addr + g.elf.Base
		}
	}
	t.Fatalf("%s: no symbol %s", g.path, name)
	return 0
}

// symEnd returns the runtime end address of the function name.
func (g *guest) symEnd(t testing.TB, name string) uint64 {
	t.Helper()
	for i, s := range g.img.syms {
		if s.name == name {
			return g.img.symEnd(i) + g.elf.Base
		}
	}
	t.Fatalf("%s: no symbol %s", g.path, name)
	return 0
}

// callRet returns the return address of the first direct call from
// function from to function to.
func (g *guest) callRet(t testing.TB, from, to string) uint64 {
	t.Helper()
	start, end, target := g.sym(t, from), g.symEnd(t, from), g.sym(t, to)
	code := g.img.code(start-g.elf.Base, int(end-start))
	switch g.img.arch {
	case vm.ArchARM64:
		for off := 0; off+4 <= len(code); off += 4 {
			insn := binary.LittleEndian.Uint32(code[off:])
			if insn&0xfc000000 == 0x94000000 {
				rel := int64(int32(insn<<6)>>6) * 4
				if start+uint64(off)+uint64(rel) == target {
					return start + uint64(off) + 4
				}
			}
		}
	case vm.ArchAMD64:
		for off := 0; off+5 <= len(code); off++ {
			if code[off] == 0xe8 {
				rel := int64(int32(binary.LittleEndian.Uint32(code[off+1:])))
				ret := start + uint64(off) + 5
				if ret+uint64(rel) == target {
					return ret
				}
			}
		}
	}
	t.Fatalf("%s: no call from %s to %s", g.path, from, to)
	return 0
}

// findInsn returns the address of the first arm64 instruction in
// function fn for which match is true.
func (g *guest) findInsn(t testing.TB, fn string, match func(insn, prev uint32) bool) uint64 {
	t.Helper()
	start, end := g.sym(t, fn), g.symEnd(t, fn)
	code := g.img.code(start-g.elf.Base, int(end-start))
	var prev uint32
	for off := 0; off+4 <= len(code); off += 4 {
		insn := binary.LittleEndian.Uint32(code[off:])
		if match(insn, prev) {
			return start + uint64(off)
		}
		prev = insn
	}
	t.Fatalf("%s: no matching instruction in %s", g.path, fn)
	return 0
}

// Synthetic stacks live in one VMA.
const (
	stackBase = 0x7ff000000000
	stackSize = 0x10000
	stackTop  = stackBase + stackSize
)

func (g *guest) mapStack(t testing.TB) {
	t.Helper()
	if err := g.mm.Map(vm.VMA{Start: stackBase, End: stackTop, Prot: vm.ProtRead | vm.ProtWrite, Name: "[stack]"}); err != nil {
		t.Fatal(err)
	}
}

func (g *guest) put(t testing.TB, addr uint64, words ...uint64) {
	t.Helper()
	for i, w := range words {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w)
		if err := g.mm.WriteAt(b[:], addr+uint64(8*i)); err != nil {
			t.Fatal(err)
		}
	}
}

// goGuests builds testdata/go/{hello,fib} once per arch, the way
// cmd/uvm's harness builds Go guests.
var goGuests struct {
	sync.Mutex
	dir map[string]string
	err map[string]error
}

func goGuest(t testing.TB, arch, name string) string {
	t.Helper()
	goGuests.Lock()
	defer goGuests.Unlock()
	if goGuests.dir == nil {
		goGuests.dir, goGuests.err = map[string]string{}, map[string]error{}
	}
	if _, ok := goGuests.dir[arch]; !ok {
		dir, err := os.MkdirTemp("", "guestprof-go-"+arch)
		if err == nil {
			cmd := exec.Command(goTool(), "build", "-o", dir+string(filepath.Separator), "./hello", "./fib")
			cmd.Dir = "../../testdata/go"
			cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
			if out, e := cmd.CombinedOutput(); e != nil {
				err = fmt.Errorf("%v\n%s", e, out)
			}
		}
		goGuests.dir[arch], goGuests.err[arch] = dir, err
	}
	if err := goGuests.err[arch]; err != nil {
		t.Fatalf("building Go guests for %s: %v", arch, err)
	}
	return filepath.Join(goGuests.dir[arch], name)
}

// goTool is the go command that runs the tests: `go test` puts its own
// GOROOT/bin first in the test's PATH.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range goGuests.dir {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
