package vm

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
)

// Arch is a guest instruction set.
type Arch uint8

const (
	ArchUnknown Arch = iota
	ArchARM64
	ArchAMD64
)

func (a Arch) String() string {
	switch a {
	case ArchARM64:
		return "arm64"
	case ArchAMD64:
		return "amd64"
	}
	return "unknown"
}

// ErrNotELF and ErrBadELF classify loader failures (exit status 126 from
// uvm run, like a shell's "cannot execute").
var (
	ErrNotELF      = errors.New("not an ELF file")
	ErrBadELF      = errors.New("malformed ELF file")
	ErrUnsupported = errors.New("unsupported ELF file")
)

// Image describes a loaded executable: what the initial stack's auxv and
// the loader's caller need.
type Image struct {
	Arch     Arch
	Entry    uint64 // entry point, relocated
	Base     uint64 // load bias (0 for ET_EXEC)
	Phdr     uint64 // address of the program headers in memory (AT_PHDR)
	Phent    uint64
	Phnum    uint64
	BrkStart uint64 // first page after the highest segment
	// ExecStack is true when PT_GNU_STACK asks for an executable stack.
	ExecStack bool
	Path      string
	// Interp is the program interpreter a dynamically linked program
	// names (PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2); the caller
	// loads it with LoadInterp.
	Interp string
}

// maxInterpPath bounds PT_INTERP (the kernel's PATH_MAX).
const maxInterpPath = 4096

// StaticPIEBase is where uvm places an ET_DYN executable (no ASLR: this is
// Linux's ELF_ET_DYN_BASE for x86-64 without randomisation, used on both
// guests so that addresses are reproducible).
const StaticPIEBase = 0x555555554000

// LoadELF maps the executable in data (read from path) into mm. Errors
// wrap ErrNotELF, ErrBadELF or ErrUnsupported and never panic, whatever
// the bytes.
func LoadELF(mm *MM, path string, data []byte) (img *Image, err error) {
	return loadELF(mm, path, data, false)
}

// LoadInterp maps a program interpreter (ld.so, an ET_DYN object) at a
// free range found top-down from the mmap base, as binfmt_elf does, and
// returns its image: Base is AT_BASE, Entry where the program starts. It
// leaves the program break alone (brk follows the main program).
func LoadInterp(mm *MM, path string, data []byte) (img *Image, err error) {
	return loadELF(mm, path, data, true)
}

func loadELF(mm *MM, path string, data []byte, interp bool) (img *Image, err error) {
	if len(data) < 4 || !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotELF)
	}
	// debug/elf is defensive but not guaranteed panic-free on hostile
	// input; contain it (this is input validation, not control flow).
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("%s: %w: %v", path, ErrBadELF, r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrBadELF, err)
	}
	if f.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("%s: %w: %v (uvm runs 64-bit programs only)", path, ErrUnsupported, f.Class)
	}
	if f.Data != elf.ELFDATA2LSB {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrUnsupported, f.Data)
	}
	img = &Image{Path: path, Phent: 56, Phnum: uint64(len(f.Progs))}
	switch f.Machine {
	case elf.EM_AARCH64:
		img.Arch = ArchARM64
	case elf.EM_X86_64:
		img.Arch = ArchAMD64
	default:
		return nil, fmt.Errorf("%s: %w: machine %v", path, ErrUnsupported, f.Machine)
	}
	switch f.Type {
	case elf.ET_EXEC:
		if interp {
			return nil, fmt.Errorf("%s: %w: the program interpreter must be ET_DYN", path, ErrUnsupported)
		}
	case elf.ET_DYN:
		img.Base = StaticPIEBase
	default:
		return nil, fmt.Errorf("%s: %w: type %v is not executable", path, ErrUnsupported, f.Type)
	}
	var phoff uint64
	if len(data) >= 64 {
		phoff = leUint64(data[32:40])
	}
	var lo, hi uint64 = ^uint64(0), 0
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			if interp {
				return nil, fmt.Errorf("%s: %w: the program interpreter has an interpreter itself", path, ErrBadELF)
			}
			if p.Off > uint64(len(data)) || p.Filesz > uint64(len(data))-p.Off || p.Filesz < 2 || p.Filesz > maxInterpPath {
				return nil, fmt.Errorf("%s: %w: bad PT_INTERP", path, ErrBadELF)
			}
			name := data[p.Off : p.Off+p.Filesz]
			if name[len(name)-1] != 0 || bytes.IndexByte(name[:len(name)-1], 0) >= 0 {
				return nil, fmt.Errorf("%s: %w: PT_INTERP is not one NUL-terminated path", path, ErrBadELF)
			}
			img.Interp = string(name[:len(name)-1])
		case elf.PT_GNU_STACK:
			img.ExecStack = p.Flags&elf.PF_X != 0
		case elf.PT_LOAD:
			if p.Memsz < p.Filesz {
				return nil, fmt.Errorf("%s: %w: PT_LOAD memsz < filesz", path, ErrBadELF)
			}
			if p.Off > uint64(len(data)) || p.Filesz > uint64(len(data))-p.Off {
				return nil, fmt.Errorf("%s: %w: PT_LOAD beyond end of file", path, ErrBadELF)
			}
			if p.Vaddr&PageMask != p.Off&PageMask {
				return nil, fmt.Errorf("%s: %w: PT_LOAD vaddr and offset not congruent", path, ErrBadELF)
			}
			start := img.Base + p.Vaddr
			end := start + p.Memsz
			if end < start || end > TaskSize || start < 0x1000 {
				return nil, fmt.Errorf("%s: %w: segment [0x%x,0x%x) outside the address space", path, ErrBadELF, start, end)
			}
			lo = min(lo, start&^PageMask)
			hi = max(hi, PageAlign(end))
		}
	}
	if hi == 0 {
		return nil, fmt.Errorf("%s: %w: no PT_LOAD segment", path, ErrBadELF)
	}
	if interp {
		// Place the whole image (lo..hi relative to vaddr 0) top-down.
		span := hi - lo
		b, err := mm.FindFree(0, span)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		img.Base = b - (lo - img.Base)
		lo, hi = b, b+span
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		var prot Prot
		if p.Flags&elf.PF_R != 0 {
			prot |= ProtRead
		}
		if p.Flags&elf.PF_W != 0 {
			prot |= ProtWrite
		}
		if p.Flags&elf.PF_X != 0 {
			prot |= ProtExec
		}
		start := img.Base + p.Vaddr
		vstart := start &^ PageMask
		fileEnd := PageAlign(start + p.Filesz)
		memEnd := PageAlign(start + p.Memsz)
		if fileEnd > vstart {
			if err := mm.Map(VMA{Start: vstart, End: fileEnd, Prot: prot, Name: path, Offset: p.Off &^ PageMask}); err != nil {
				return nil, err
			}
		}
		if memEnd > fileEnd {
			if err := mm.Map(VMA{Start: fileEnd, End: memEnd, Prot: prot}); err != nil {
				return nil, err
			}
		}
		// The file bytes, then zeroes up to the end of the page (bss start).
		if err := mm.Poke(data[p.Off:p.Off+p.Filesz], start); err != nil {
			return nil, err
		}
		if p.Off <= phoff && phoff+uint64(img.Phnum)*56 <= p.Off+p.Filesz {
			img.Phdr = start + (phoff - p.Off)
		}
	}
	if img.Phdr == 0 {
		return nil, fmt.Errorf("%s: %w: program headers are not inside a PT_LOAD segment", path, ErrUnsupported)
	}
	img.Entry = img.Base + f.Entry
	if v, ok := mm.FindVMA(img.Entry); !ok || v.Prot&ProtExec == 0 {
		return nil, fmt.Errorf("%s: %w: entry point 0x%x is not in an executable segment", path, ErrBadELF, img.Entry)
	}
	img.BrkStart = hi
	if !interp {
		mm.mu.Lock()
		mm.BrkStart, mm.Brk = hi, hi
		mm.mu.Unlock()
	}
	return img, nil
}

func leUint64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
