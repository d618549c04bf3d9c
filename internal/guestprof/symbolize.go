package guestprof

import (
	"fmt"
	"strings"
	"sync"

	"github.com/uvm-emu/uvm/internal/vm"
)

// Symbolizer resolves addresses of one guest address space to functions
// of the ELF files mapped there, and unwinds its stacks. It finds the file
// behind an address through the VMA (its Name is the host path, its
// Offset the file offset), so it needs no help from the loader and
// follows exec and static-PIE load addresses by itself. Safe for
// concurrent use.
type Symbolizer struct {
	mm    *vm.MM
	cache *imageCache
	id    uint64 // the profiler's number for mm

	mu      sync.Mutex
	gen     uint64   // mm.Gen() when regions was last valid
	regions []region // recently used executable areas
}

// region is an executable VMA and the image mapped there.
type region struct {
	start, end uint64
	img        *image // nil: anonymous or unreadable
	bias       uint64 // runtime address - link-time address
}

// maxRegions bounds the per-symbolizer cache of executable areas.
const maxRegions = 16

// NewSymbolizer returns a symbolizer for mm. It reads ELF files named by
// mm's executable VMAs on first use.
func NewSymbolizer(mm *vm.MM) *Symbolizer {
	return &Symbolizer{mm: mm, cache: newImageCache()}
}

// AddFile gives the symbolizer the contents of the file at path (the name
// its VMAs carry) instead of reading it from the host file system.
func (s *Symbolizer) AddFile(path string, data []byte) error {
	return s.cache.add(path, data)
}

// regionLocked returns the executable area holding addr.
func (s *Symbolizer) regionLocked(addr uint64) (region, bool) {
	if g := s.mm.Gen(); g != s.gen {
		// munmap, mprotect, MAP_FIXED or new code: areas may have moved.
		s.regions, s.gen = s.regions[:0], g
	}
	for i := range s.regions {
		if r := s.regions[i]; addr >= r.start && addr < r.end {
			return r, true
		}
	}
	v, ok := s.mm.FindVMA(addr)
	if !ok || v.Prot&vm.ProtExec == 0 {
		return region{}, false
	}
	r := region{start: v.Start, end: v.End}
	if img := s.cache.get(v.Name); img != nil {
		off := addr - v.Start + v.Offset
		if i, ok := img.segmentForOffset(off); ok {
			seg := img.loads[i]
			r.img = img
			r.bias = addr - (off - seg.off + seg.vaddr)
		}
	}
	if len(s.regions) == maxRegions {
		copy(s.regions, s.regions[1:])
		s.regions = s.regions[:maxRegions-1]
	}
	s.regions = append(s.regions, r)
	return r, true
}

// symLocked returns the region and function symbol index for addr.
func (s *Symbolizer) symLocked(addr uint64) (region, int, bool) {
	r, ok := s.regionLocked(addr)
	if !ok || r.img == nil {
		return r, 0, false
	}
	i, ok := r.img.lookup(addr - r.bias)
	return r, i, ok
}

// Frame is one symbolized stack frame.
type Frame struct {
	// PC is the address as given: the leaf's pc or a return address.
	PC uint64
	// Func is the function's name ("" when unknown) and Off the offset of
	// PC from its start.
	Func string
	Off  uint64
	// File and Line come from DWARF when the binary has it: the position
	// in Func (for code inlined into Func, that of the outermost inlined
	// call).
	File string
	Line int
	// Inlined lists the calls inlined at PC, innermost first (DWARF).
	Inlined []InlinedCall
	// Path is the ELF file mapped at PC ("" when unknown).
	Path string
}

// InlinedCall is a function inlined into a frame's function at its PC,
// with the position inside it.
type InlinedCall struct {
	Func string
	File string
	Line int
}

// String formats the frame as "main.foo+0x14", or "0x401234" when the
// function is unknown.
func (f Frame) String() string {
	if f.Func == "" {
		return fmt.Sprintf("%#x", f.PC)
	}
	return fmt.Sprintf("%s+%#x", f.Func, f.Off)
}

// Frame symbolizes pc. For a return address (caller true) the function
// and line are those of the call instruction, pc-1, so that a call at the
// very end of a function (to a function that does not return) is still
// attributed to it; Off stays relative to pc.
func (s *Symbolizer) Frame(pc uint64, caller bool) Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frameLocked(pc, caller)
}

func (s *Symbolizer) frameLocked(pc uint64, caller bool) Frame {
	f := Frame{PC: pc}
	at := pc
	if caller && at > 0 {
		at--
	}
	r, i, ok := s.symLocked(at)
	if r.img != nil {
		f.Path = r.img.path
		var inl []inlCall
		f.File, f.Line, inl = r.img.source(at - r.bias)
		for _, c := range inl {
			f.Inlined = append(f.Inlined, InlinedCall{displayName(c.fn), c.file, c.line})
		}
	}
	if ok {
		sym := r.img.syms[i]
		f.Func = displayName(sym.name)
		f.Off = pc - (sym.addr + r.bias)
	}
	return f
}

// Describe formats pc as "main.foo+0x14" (or "0x401234").
func (s *Symbolizer) Describe(pc uint64) string {
	return s.Frame(pc, false).String()
}

// Frames unwinds the stack (see Unwind) and symbolizes every frame.
func (s *Symbolizer) Frames(arch vm.Arch, pc, sp, fp, lr uint64) []Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	stack := s.unwindLocked(arch, pc, sp, fp, lr, nil)
	out := make([]Frame, len(stack))
	for i, a := range stack {
		out[i] = s.frameLocked(a, i > 0)
	}
	return out
}

// Backtrace formats the unwound stack leaf first, as
// "main.foo+0x14 ← main.bar+0x30 ← main.main+0x1c", for crash reports and
// probe lines.
func (s *Symbolizer) Backtrace(arch vm.Arch, pc, sp, fp, lr uint64) string {
	fr := s.Frames(arch, pc, sp, fp, lr)
	parts := make([]string, len(fr))
	for i, f := range fr {
		parts[i] = f.String()
	}
	return strings.Join(parts, " ← ")
}

// Unwind appends the stack to buf and returns it: pc first, then return
// addresses, innermost first (see the package documentation for the
// method). It never fails: it stops at the first frame it cannot trust.
func (s *Symbolizer) Unwind(arch vm.Arch, pc, sp, fp, lr uint64, buf []uint64) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unwindLocked(arch, pc, sp, fp, lr, buf)
}
