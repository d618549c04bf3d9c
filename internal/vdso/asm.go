package vdso

import "fmt"

// asm collects the code of one function: bytes, labels, branch fixups and
// the intended assembly of every instruction.
type asm struct {
	code    []byte
	labels  map[string]int
	fixups  []fixup
	listing []Insn
	vvar    []vvarRef
	counter []uint64
}

// fixup patches a branch at insn (the instruction's start) to label.
type fixup struct {
	insn  int
	label string
	patch func(code []byte, insn, target int) error
}

func newAsm() *asm { return &asm{labels: map[string]int{}} }

// emit appends one instruction.
func (a *asm) emit(text string, b ...byte) int {
	at := len(a.code)
	a.code = append(a.code, b...)
	a.listing = append(a.listing, Insn{Offset: uint64(at), Bytes: append([]byte(nil), b...), Asm: text})
	return at
}

func (a *asm) label(name string) {
	if _, dup := a.labels[name]; dup {
		panic("vdso: label " + name + " defined twice")
	}
	a.labels[name] = len(a.code)
}

// finish resolves the branches and returns the function.
func (a *asm) finish(name string, aliases ...string) funcCode {
	for _, f := range a.fixups {
		target, ok := a.labels[f.label]
		if !ok {
			panic(fmt.Sprintf("vdso: %s: undefined label %s", name, f.label))
		}
		if err := f.patch(a.code, f.insn, target); err != nil {
			panic(fmt.Sprintf("vdso: %s: branch to %s: %v", name, f.label, err))
		}
	}
	// The listing holds copies of the bytes: refresh them after patching.
	for i := range a.listing {
		in := &a.listing[i]
		copy(in.Bytes, a.code[in.Offset:])
	}
	return funcCode{name: name, aliases: aliases, code: a.code, vvarRefs: a.vvar, counterReads: a.counter, listing: a.listing, labels: a.labels}
}
