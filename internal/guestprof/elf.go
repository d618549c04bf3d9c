package guestprof

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/uvm-emu/uvm/internal/vm"
)

// image is what guestprof knows about one guest ELF file: its loadable
// segments, build ID, function symbols and (lazily) its DWARF line table.
// Addresses in an image are link-time virtual addresses; a region adds
// the load bias.
type image struct {
	path    string
	arch    vm.Arch
	buildID string
	data    []byte // the file, for code bytes and lazy DWARF
	loads   []segment
	syms    []symbol // sorted by addr

	mu sync.Mutex
	// setup caches, per symbol, where the function sets up its frame
	// pointer (see frameSetup); unknownSetup until computed.
	setup []int32
	// dwarf is the debug information, read on first use (see dwarfInfo).
	dwarfOnce sync.Once
	dwarf     *dwarfInfo
}

type segment struct {
	vaddr, memsz, off, filesz uint64
	exec                      bool
}

type symbol struct {
	addr, size uint64
	name       string // as in .symtab
}

const unknownSetup = -2

// loadImage parses the ELF file data (read from path).
func loadImage(path string, data []byte) (img *image, err error) {
	// debug/elf is defensive but not guaranteed panic-free on hostile
	// input; a guest can name any file, so contain it.
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("%s: malformed ELF file: %v", path, r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	img = &image{path: path, data: data}
	switch f.Machine {
	case elf.EM_AARCH64:
		img.arch = vm.ArchARM64
	case elf.EM_X86_64:
		img.arch = vm.ArchAMD64
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		img.loads = append(img.loads, segment{vaddr: p.Vaddr, memsz: p.Memsz, off: p.Off, filesz: p.Filesz, exec: p.Flags&elf.PF_X != 0})
	}
	img.buildID = buildID(f)

	syms, _ := f.Symbols() // a stripped file has none: mappings only
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
			continue
		}
		img.syms = append(img.syms, symbol{addr: s.Value, size: s.Size, name: s.Name})
	}
	img.syms = dedupSymbols(img.syms, syms)
	img.setup = make([]int32, len(img.syms))
	for i := range img.setup {
		img.setup[i] = unknownSetup
	}
	return img, nil
}

// dedupSymbols sorts function symbols by address and keeps one name per
// address: a sized symbol before a size-0 one, then GLOBAL before WEAK
// before LOCAL, then fewer leading underscores, then the name (so glibc's
// __strtol/strtol aliases resolve the same way every time).
func dedupSymbols(fs []symbol, all []elf.Symbol) []symbol {
	bind := map[string]elf.SymBind{}
	for _, s := range all {
		t := elf.ST_TYPE(s.Info)
		if t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC {
			b := elf.ST_BIND(s.Info)
			if old, ok := bind[s.Name]; !ok || rankBind(b) < rankBind(old) {
				bind[s.Name] = b
			}
		}
	}
	less := func(a, b symbol) bool {
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		if (a.size == 0) != (b.size == 0) {
			return a.size != 0
		}
		if ra, rb := rankBind(bind[a.name]), rankBind(bind[b.name]); ra != rb {
			return ra < rb
		}
		ua := len(a.name) - len(strings.TrimLeft(a.name, "_"))
		ub := len(b.name) - len(strings.TrimLeft(b.name, "_"))
		if ua != ub {
			return ua < ub
		}
		return a.name < b.name
	}
	sort.Slice(fs, func(i, j int) bool { return less(fs[i], fs[j]) })
	out := fs[:0]
	for i, s := range fs {
		if i > 0 && s.addr == fs[i-1].addr {
			continue
		}
		out = append(out, s)
	}
	return out
}

func rankBind(b elf.SymBind) int {
	switch b {
	case elf.STB_GLOBAL:
		return 0
	case elf.STB_WEAK:
		return 1
	}
	return 2
}

// buildID returns the GNU build ID (hex) of f, else the Go build ID
// string, else "".
func buildID(f *elf.File) string {
	var notes [][]byte
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE {
			if b, err := s.Data(); err == nil {
				notes = append(notes, b)
			}
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_NOTE && p.Filesz < 1<<20 {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				notes = append(notes, b)
			}
		}
	}
	goID := ""
	for _, n := range notes {
		for len(n) >= 12 {
			namesz := uint64(binary.LittleEndian.Uint32(n[0:]))
			descsz := uint64(binary.LittleEndian.Uint32(n[4:]))
			typ := binary.LittleEndian.Uint32(n[8:])
			nameEnd := 12 + namesz
			descOff := 12 + (namesz+3)&^3
			descEnd := descOff + descsz
			if nameEnd > uint64(len(n)) || descEnd > uint64(len(n)) {
				break
			}
			name := string(bytes.TrimRight(n[12:nameEnd], "\x00"))
			desc := n[descOff:descEnd]
			switch {
			case name == "GNU" && typ == 3: // NT_GNU_BUILD_ID
				return hex.EncodeToString(desc)
			case name == "Go" && typ == 4: // Go's ELF_NOTE_GOBUILDID_TAG
				goID = string(desc)
			}
			next := (descEnd + 3) &^ 3
			if next > uint64(len(n)) {
				break
			}
			n = n[next:]
		}
	}
	return goID
}

// segmentForOffset returns the PT_LOAD holding file offset off.
func (img *image) segmentForOffset(off uint64) (int, bool) {
	for i, s := range img.loads {
		// A VMA covers whole pages: the page-aligned start of the
		// segment's file range belongs to it too.
		lo := s.off &^ vm.PageMask
		if off >= lo && off < s.off+s.filesz {
			return i, true
		}
	}
	return 0, false
}

// segmentForAddr returns the executable PT_LOAD holding vaddr.
func (img *image) segmentForAddr(vaddr uint64) (int, bool) {
	for i, s := range img.loads {
		if s.exec && vaddr >= s.vaddr && vaddr-s.vaddr < s.memsz {
			return i, true
		}
	}
	return 0, false
}

// code returns up to n file bytes at vaddr (fewer at a segment's end; nil
// outside the file). Reading code from the file, not guest memory, keeps
// breakpoints planted by uprobes out of the analysis.
func (img *image) code(vaddr uint64, n int) []byte {
	for _, s := range img.loads {
		if vaddr < s.vaddr || vaddr-s.vaddr >= s.filesz {
			continue
		}
		off := s.off + (vaddr - s.vaddr)
		end := min(off+uint64(n), s.off+s.filesz, uint64(len(img.data)))
		if off >= end {
			return nil
		}
		return img.data[off:end]
	}
	return nil
}

// insn32 reads a 4-byte arm64 instruction at vaddr.
func (img *image) insn32(vaddr uint64) (uint32, bool) {
	b := img.code(vaddr, 4)
	if len(b) < 4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

// lookup returns the index of the function symbol containing vaddr: the
// last symbol at or below it, if its size covers vaddr (size 0: up to the
// next symbol, within the same executable segment).
func (img *image) lookup(vaddr uint64) (int, bool) {
	i := sort.Search(len(img.syms), func(i int) bool { return img.syms[i].addr > vaddr }) - 1
	if i < 0 {
		return 0, false
	}
	s := img.syms[i]
	if s.size > 0 {
		return i, vaddr-s.addr < s.size
	}
	if i+1 < len(img.syms) && vaddr >= img.syms[i+1].addr {
		return 0, false
	}
	si, ok1 := img.segmentForAddr(s.addr)
	sj, ok2 := img.segmentForAddr(vaddr)
	return i, ok1 && ok2 && si == sj
}

// symEnd is the end of symbol i (its size, else the next symbol).
func (img *image) symEnd(i int) uint64 {
	s := img.syms[i]
	if s.size > 0 {
		return s.addr + s.size
	}
	if i+1 < len(img.syms) {
		return img.syms[i+1].addr
	}
	return s.addr + 1
}

// displayName is the function name pprof shows: Go's ABI wrapper suffix
// ".abi0" (on assembly functions in the ELF symbol table, absent from
// Go's own tracebacks) is dropped.
func displayName(name string) string {
	return strings.TrimSuffix(name, ".abi0")
}

// imageCache holds parsed images by host path. Files that cannot be read
// or parsed are remembered as nil.
type imageCache struct {
	mu     sync.Mutex
	byPath map[string]*image
}

func newImageCache() *imageCache { return &imageCache{byPath: map[string]*image{}} }

// get returns the image for a VMA name (a host path), reading the file on
// first use; nil for anonymous and special ("[vdso]") areas.
func (c *imageCache) get(path string) *image {
	if path == "" || path[0] == '[' {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if img, ok := c.byPath[path]; ok {
		return img
	}
	var img *image
	if data, err := os.ReadFile(path); err == nil {
		img, _ = loadImage(path, data)
	}
	c.byPath[path] = img
	return img
}

// add registers file data for path (used when the caller already holds
// the bytes, and by tests with synthetic address spaces).
func (c *imageCache) add(path string, data []byte) error {
	img, err := loadImage(path, data)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.byPath[path] = img
	c.mu.Unlock()
	return nil
}
