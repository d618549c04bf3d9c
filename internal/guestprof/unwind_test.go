package guestprof

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// Frame records of the synthetic stacks, from the outermost down.
const (
	f4 = stackTop - 0x100
	f3 = stackTop - 0x200
	f2 = stackTop - 0x300
	f1 = stackTop - 0x400
	sp = stackTop - 0x500
)

// cfix is the C test program fibfp (frame pointers) loaded with a stack.
type cfix struct {
	*guest
	arch                          vm.Arch
	fib, retFF, retRF, retMR, ret uint64 // ret: fib's RET instruction
}

func loadFibfp(t testing.TB, arch string, a vm.Arch) *cfix {
	g := loadGuest(t, filepath.Join("../../testdata/bin", arch, "fibfp"))
	g.mapStack(t)
	c := &cfix{guest: g, arch: a, fib: g.sym(t, "fib"),
		retFF: g.callRet(t, "fib", "fib"), retRF: g.callRet(t, "run", "fib"), retMR: g.callRet(t, "main", "run")}
	switch a {
	case vm.ArchARM64:
		c.ret = g.findInsn(t, "fib", func(insn, _ uint32) bool { return isArm64Ret(insn) })
	case vm.ArchAMD64:
		code := g.img.code(c.fib-g.elf.Base, int(g.symEnd(t, "fib")-c.fib))
		for i := 0; i+1 < len(code); i++ {
			if code[i] == 0x5d && code[i+1] == 0xc3 { // pop %rbp; ret
				c.ret = c.fib + uint64(i) + 1
				break
			}
		}
		if c.ret == 0 {
			t.Fatal("no pop %rbp; ret in fib")
		}
	}
	return c
}

// chain writes the frame records fib ← fib ← run ← main.
func (c *cfix) chain(t testing.TB) {
	c.put(t, f1, f2, c.retFF)
	c.put(t, f2, f3, c.retRF)
	c.put(t, f3, f4, c.retMR)
	c.put(t, f4, 0, 0)
}

func checkStack(t *testing.T, s *Symbolizer, arch vm.Arch, pc, spv, fp, lr uint64, want ...uint64) {
	t.Helper()
	got := s.Unwind(arch, pc, spv, fp, lr, nil)
	if !slices.Equal(got, want) {
		t.Errorf("Unwind(pc %#x sp %#x fp %#x lr %#x):\n got %s\nwant %s", pc, spv, fp, lr, hexes(got), hexes(want))
	}
}

func hexes(a []uint64) string {
	s := ""
	for _, x := range a {
		s += fmt.Sprintf(" %#x", x)
	}
	return s
}

// TestUnwindC walks frame-pointer chains of the C program on both arches,
// with the leaf in every state of its frame.
func TestUnwindC(t *testing.T) {
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			c := loadFibfp(t, a.name, a.arch)
			c.chain(t)
			s := NewSymbolizer(c.mm)

			// Leaf with its frame: LR is stale (points into fib itself).
			checkStack(t, s, c.arch, c.retFF, sp, f1, c.retFF, c.retFF, c.retFF, c.retRF, c.retMR)
			bt := s.Backtrace(c.arch, c.retFF, sp, f1, c.retFF)
			if !regexp.MustCompile(`^fib\+0x[0-9a-f]+ ← fib\+0x[0-9a-f]+ ← run\+0x[0-9a-f]+ ← main\+0x[0-9a-f]+$`).MatchString(bt) {
				t.Errorf("Backtrace = %q", bt)
			}
			fr := s.Frames(c.arch, c.retFF, sp, f1, c.retFF)
			if len(fr) != 4 || fr[2].Func != "run" || fr[2].Line != 14 || fr[3].Func != "main" {
				t.Errorf("Frames = %+v", fr)
			}

			// Leaf at its entry: fp is still run's record; the return
			// address is in LR (arm64) or at sp (x86-64).
			c.put(t, sp, c.retRF)
			checkStack(t, s, c.arch, c.fib, sp, f3, c.retRF, c.fib, c.retRF, c.retMR)

			// Half-built frame: arm64 after stp x29, x30 (LR still
			// valid); x86-64 after push %rbp (return address at sp+8).
			c.put(t, sp, f3, c.retRF)
			checkStack(t, s, c.arch, c.fib+uint64(map[vm.Arch]int{vm.ArchARM64: 4, vm.ArchAMD64: 1}[c.arch]), sp, f3, c.retRF,
				c.fib+uint64(map[vm.Arch]int{vm.ArchARM64: 4, vm.ArchAMD64: 1}[c.arch]), c.retRF, c.retMR)

			// At RET the frame is gone again.
			c.put(t, sp, c.retRF)
			checkStack(t, s, c.arch, c.ret, sp, f3, c.retRF, c.ret, c.retRF, c.retMR)

			// A leaf return address that is not after a call is dropped.
			c.put(t, sp, c.fib+8)
			checkStack(t, s, c.arch, c.fib, sp, f3, c.fib+8, c.fib, c.retMR)
		})
	}
}

// TestUnwindGo walks Go frames (Go keeps frame pointers on both arches;
// arm64's record sits below sp, and its epilogue reloads x29 before x30).
func TestUnwindGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go guests")
	}
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			g := loadGuest(t, goGuest(t, a.name, "fib"))
			g.mapStack(t)
			s := NewSymbolizer(g.mm)
			fib := g.sym(t, "main.fib")
			retFF, retRF, retMR := g.callRet(t, "main.fib", "main.fib"), g.callRet(t, "main.run", "main.fib"), g.callRet(t, "main.main", "main.run")
			g.put(t, f1, f2, retFF)
			g.put(t, f2, f3, retRF)
			g.put(t, f3, f4, retMR)
			g.put(t, f4, 0, 0)
			checkStack(t, s, a.arch, retFF, f1+8, f1, retFF, retFF, retFF, retRF, retMR)
			if bt := s.Backtrace(a.arch, retFF, f1+8, f1, retFF); !regexp.MustCompile(`^main\.fib\+0x[0-9a-f]+ ← main\.fib\+0x[0-9a-f]+ ← main\.run\+0x[0-9a-f]+ ← main\.main\+0x[0-9a-f]+$`).MatchString(bt) {
				t.Errorf("Backtrace = %q", bt)
			}
			// At entry (the stack check runs before the frame is built).
			g.put(t, sp, retRF)
			checkStack(t, s, a.arch, fib, sp, f3, retRF, fib, retRF, retMR)
			if a.arch == vm.ArchARM64 {
				// Between "ldur x29, [sp, #-8]" and "ldr x30, [sp], #n"
				// the return address is only on the stack.
				pc := g.findInsn(t, "main.fib", func(insn, prev uint32) bool { return insn&0xffe00fff == 0xf84007fe && loadsX29(prev) })
				checkStack(t, s, a.arch, pc, sp, f3, retFF, pc, retRF, retMR)
			}
		})
	}
}

// TestUnwindCorrupt: bad stacks end the walk early, never loop or fail.
func TestUnwindCorrupt(t *testing.T) {
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			c := loadFibfp(t, a.name, a.arch)
			s := NewSymbolizer(c.mm)
			pc := c.retFF // leaf with a live frame: only the chain counts
			reset := func() {
				for a := uint64(stackBase); a < stackTop; a += 8 {
					c.put(t, a, 0)
				}
			}
			reset()
			c.put(t, f1, f1, c.retFF) // points at itself
			checkStack(t, s, c.arch, pc, sp, f1, 0, pc, c.retFF)
			c.put(t, f1, f2, c.retFF) // two-record cycle
			c.put(t, f2, f1, c.retRF)
			checkStack(t, s, c.arch, pc, sp, f1, 0, pc, c.retFF, c.retRF)
			c.put(t, f1, f1-0x40, c.retFF) // going down the stack
			checkStack(t, s, c.arch, pc, sp, f1, 0, pc, c.retFF)
			checkStack(t, s, c.arch, pc, sp, f1+4, 0, pc)       // misaligned
			checkStack(t, s, c.arch, pc, sp, 0x1000, 0, pc)     // unmapped
			checkStack(t, s, c.arch, pc, sp, stackTop-8, 0, pc) // record past the stack's end
			checkStack(t, s, c.arch, pc, sp, sp-0x100, 0, pc)   // below sp
			checkStack(t, s, c.arch, pc, 0x1000, f1, 0, pc)     // sp unmapped
			checkStack(t, s, c.arch, pc, sp, c.fib&^7, 0, pc)   // fp in code
			c.put(t, f1, f2, c.fib+8)                           // return address not after a call
			checkStack(t, s, c.arch, pc, sp, f1, 0, pc)
			c.put(t, f1, f2, stackBase+8) // return address in data
			checkStack(t, s, c.arch, pc, sp, f1, 0, pc)

			// A valid chain longer than MaxDepth is cut.
			for a := uint64(stackBase); a+16 <= stackTop; a += 16 {
				c.put(t, a, a+16, c.retFF)
			}
			got := s.Unwind(c.arch, pc, stackBase, stackBase, 0, nil)
			if len(got) != MaxDepth {
				t.Errorf("deep stack: %d frames, want %d", len(got), MaxDepth)
			}

			// Random stacks of plausible words.
			rng := rand.New(rand.NewPCG(1, uint64(c.arch)))
			words := []uint64{0, c.retFF, c.retRF, c.retMR, c.fib, c.ret, stackBase, stackTop - 16, f1, f2, f3, f4}
			pick := func() uint64 {
				if rng.IntN(4) == 0 {
					return rng.Uint64()
				}
				w := words[rng.IntN(len(words))]
				if rng.IntN(3) == 0 {
					w += uint64(rng.IntN(64)) - 32
				}
				return w
			}
			for range 300 {
				reset()
				for a := uint64(stackTop - 0x800); a < stackTop; a += 8 {
					c.put(t, a, pick())
				}
				pc, spv, fp, lr := pick(), pick(), pick(), pick()
				got := s.Unwind(c.arch, pc, spv, fp, lr, nil)
				if len(got) == 0 || len(got) > MaxDepth || got[0] != pc {
					t.Fatalf("random stack: %s", hexes(got))
				}
				s.Backtrace(c.arch, pc, spv, fp, lr)
			}
		})
	}
}
