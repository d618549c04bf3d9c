package arm64

import (
	"debug/elf"
	"io"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// loadStatic maps a static, non-PIE ELF into a fresh address space with a
// 1 MiB stack and returns a CPU at its entry point. It is a minimal loader
// for tests that must not depend on the project's ELF loader.
func loadStatic(t testing.TB, path string) *CPU {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mm := vm.NewMM()
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		var prot vm.Prot
		if p.Flags&elf.PF_R != 0 {
			prot |= vm.ProtRead
		}
		if p.Flags&elf.PF_W != 0 {
			prot |= vm.ProtWrite
		}
		if p.Flags&elf.PF_X != 0 {
			prot |= vm.ProtExec
		}
		start := p.Vaddr &^ vm.PageMask
		end := vm.PageAlign(p.Vaddr + p.Memsz)
		if err := mm.Map(vm.VMA{Start: start, End: end, Prot: prot}); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, p.Filesz)
		if _, err := io.ReadFull(p.Open(), b); err != nil {
			t.Fatal(err)
		}
		if err := mm.Poke(b, p.Vaddr); err != nil {
			t.Fatal(err)
		}
	}
	const stackTop = 0x7fff_0000_0000
	if err := mm.Map(vm.VMA{Start: stackTop - 1<<20, End: stackTop, Prot: vm.ProtRead | vm.ProtWrite}); err != nil {
		t.Fatal(err)
	}
	c := NewCPU(mm)
	c.SetPC(f.Entry)
	c.SetSP(stackTop - 64)
	return c
}

// runSyscalls runs c, servicing write(2) into the returned buffer and
// exit/exit_group; any other exit fails the test.
func runSyscalls(t testing.TB, c *CPU) (out []byte, status int) {
	t.Helper()
	for {
		e := c.Run(1 << 30)
		switch e.Reason {
		case vm.ExitBudget:
			continue
		case vm.ExitSyscall:
		default:
			t.Fatalf("exit %v at %#x (%s): %+v", e.Reason, e.PC, c.Disasm(e.PC), e)
		}
		switch c.Reg(8) {
		case 64: // write
			b := make([]byte, c.Reg(2))
			if err := c.MM().ReadAt(b, c.Reg(1)); err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
			c.SetReg(0, uint64(len(b)))
		case 93, 94: // exit, exit_group
			return out, int(c.Reg(0))
		default:
			t.Fatalf("unexpected syscall %d", c.Reg(8))
		}
	}
}
