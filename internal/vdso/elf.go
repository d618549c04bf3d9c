package vdso

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// The ELF structure of an image, in file (= memory) order:
//
//	ELF header, program headers (PT_LOAD, PT_DYNAMIC, PT_NOTE)
//	.hash .gnu.hash .dynsym .dynstr .gnu.version .gnu.version_d
//	.note (the "Linux" note) .text .dynamic .shstrtab, section headers
//
// linked at 0 like Linux's vdso.so, so every d_ptr and st_value is an
// offset from the mapping's start.

// Soname is the image's DT_SONAME, as Linux's (glibc names the link map
// after it).
const Soname = "linux-vdso.so.1"

// ElfHash is the System V ELF hash (DT_HASH buckets, verdef hashes).
func ElfHash(name string) uint32 {
	var h uint32
	for i := 0; i < len(name); i++ {
		h = h<<4 + uint32(name[i])
		if g := h & 0xf0000000; g != 0 {
			h ^= g >> 24
		}
		h &^= 0xf0000000
	}
	return h
}

// GnuHash is the DT_GNU_HASH function (Bernstein's, h*33 + c).
func GnuHash(name string) uint32 {
	h := uint32(5381)
	for i := 0; i < len(name); i++ {
		h = h*33 + uint32(name[i])
	}
	return h
}

type dynSym struct {
	name  string
	bind  elf.SymBind
	value uint64
	size  uint64
	str   uint32 // offset in .dynstr
}

// strtab is a string table under construction.
type strtab struct{ b []byte }

func (s *strtab) add(str string) uint32 {
	if i := strings.Index(string(s.b), "\x00"+str+"\x00"); i >= 0 {
		return uint32(i + 1)
	}
	off := uint32(len(s.b))
	s.b = append(s.b, str...)
	s.b = append(s.b, 0)
	return off
}

func align(b []byte, n int) []byte {
	for len(b)%n != 0 {
		b = append(b, 0)
	}
	return b
}

const (
	ehdrSize      = 64
	phdrSize      = 56
	shdrSize      = 64
	symSize       = 24
	nPhdrs        = 3
	gnuBloomShift = 6
)

// link lays out the image: code of every function, then the ELF
// structure around it.
func link(machine elf.Machine, version string, funcs []funcCode) (*Image, error) {
	le := binary.LittleEndian
	im := &Image{Machine: machine, Version: version, CounterReads: map[uint64]string{}}

	// Symbols: every exported name, globals then weak aliases.
	var syms []dynSym
	for _, f := range funcs {
		if f.name == "" {
			continue
		}
		syms = append(syms, dynSym{name: f.name, bind: elf.STB_GLOBAL})
		for _, al := range f.aliases {
			syms = append(syms, dynSym{name: al, bind: elf.STB_WEAK})
		}
	}
	// DT_GNU_HASH wants the hashed symbols grouped by bucket.
	nbucket := uint32(len(syms))
	sort.SliceStable(syms, func(i, j int) bool {
		return GnuHash(syms[i].name)%nbucket < GnuHash(syms[j].name)%nbucket
	})
	nsym := len(syms) + 1 // with the null symbol

	var dynstr strtab
	dynstr.b = []byte{0}
	sonameOff := dynstr.add(Soname)
	versionOff := dynstr.add(version)
	for i := range syms {
		syms[i].str = dynstr.add(syms[i].name)
	}

	// The tables before .text have sizes that do not depend on the code.
	b := make([]byte, ehdrSize+nPhdrs*phdrSize)
	b = align(b, 8)
	hashOff := len(b)
	b = le.AppendUint32(b, nbucket)
	b = le.AppendUint32(b, uint32(nsym))
	buckets := make([]uint32, nbucket)
	chain := make([]uint32, nsym)
	for i := nsym - 1; i >= 1; i-- {
		h := ElfHash(syms[i-1].name) % nbucket
		chain[i] = buckets[h]
		buckets[h] = uint32(i)
	}
	for _, v := range buckets {
		b = le.AppendUint32(b, v)
	}
	for _, v := range chain {
		b = le.AppendUint32(b, v)
	}

	b = align(b, 8)
	gnuHashOff := len(b)
	const symOffset = 1
	b = le.AppendUint32(b, nbucket)
	b = le.AppendUint32(b, symOffset)
	b = le.AppendUint32(b, 1) // bloom words (64-bit)
	b = le.AppendUint32(b, gnuBloomShift)
	var bloom uint64
	gb := make([]uint32, nbucket)
	gchain := make([]uint32, len(syms))
	for i, s := range syms {
		h := GnuHash(s.name)
		bloom |= 1<<(h%64) | 1<<((h>>gnuBloomShift)%64)
		bk := h % nbucket
		if gb[bk] == 0 {
			gb[bk] = uint32(i + symOffset)
		}
		gchain[i] = h &^ 1
		if i == len(syms)-1 || GnuHash(syms[i+1].name)%nbucket != bk {
			gchain[i] |= 1
		}
	}
	b = le.AppendUint64(b, bloom)
	for _, v := range gb {
		b = le.AppendUint32(b, v)
	}
	for _, v := range gchain {
		b = le.AppendUint32(b, v)
	}

	b = align(b, 8)
	dynsymOff := len(b)
	b = append(b, make([]byte, nsym*symSize)...) // filled once the code is placed

	dynstrOff := len(b)
	b = append(b, dynstr.b...)

	b = align(b, 2)
	versymOff := len(b)
	b = le.AppendUint16(b, 0) // the null symbol: VER_NDX_LOCAL
	for range syms {
		b = le.AppendUint16(b, 2)
	}

	b = align(b, 8)
	verdefOff := len(b)
	verdef := func(flags, ndx uint16, name string, nameOff uint32, last bool) {
		b = le.AppendUint16(b, 1) // VER_DEF_CURRENT
		b = le.AppendUint16(b, flags)
		b = le.AppendUint16(b, ndx)
		b = le.AppendUint16(b, 1) // one Verdaux
		b = le.AppendUint32(b, ElfHash(name))
		b = le.AppendUint32(b, 20) // vd_aux
		next := uint32(28)
		if last {
			next = 0
		}
		b = le.AppendUint32(b, next)
		b = le.AppendUint32(b, nameOff)
		b = le.AppendUint32(b, 0)
	}
	const verFlgBase = 1
	verdef(verFlgBase, 1, Soname, sonameOff, false)
	verdef(0, 2, version, versionOff, true)

	b = align(b, 4)
	noteOff := len(b)
	b = le.AppendUint32(b, 6) // namesz ("Linux\0")
	b = le.AppendUint32(b, 4) // descsz
	b = le.AppendUint32(b, 0) // type
	b = append(b, "Linux\x00\x00\x00"...)
	b = le.AppendUint32(b, LinuxVersionCode)
	noteEnd := len(b)

	// .text: the functions, 16-byte aligned each.
	b = align(b, 16)
	textOff := len(b)
	im.TextStart = uint64(textOff)
	for _, f := range funcs {
		if f.name != "" {
			b = align(b, 16)
		}
		at := len(b)
		code := append([]byte(nil), f.code...)
		for _, r := range f.vvarRefs {
			if err := r.patch(code, r.at, int64(at+r.at), -PageSize); err != nil {
				return nil, fmt.Errorf("vdso: %s: %v", f.name, err)
			}
		}
		b = append(b, code...)
		for _, c := range f.counterReads {
			im.CounterReads[uint64(at)+c] = strings.TrimPrefix(strings.TrimPrefix(f.name, "__vdso_"), "__kernel_")
		}
		for _, in := range f.listing {
			in.Offset += uint64(at)
			in.Bytes = append([]byte(nil), b[in.Offset:in.Offset+uint64(len(in.Bytes))]...)
			in.Asm, in.Target = resolveTarget(in.Asm, at, f)
			im.Listing = append(im.Listing, in)
		}
		if f.name != "" {
			im.Funcs = append(im.Funcs, Func{Name: f.name, Offset: uint64(at), Size: uint64(len(code)), Aliases: f.aliases})
			for i := range syms {
				if syms[i].name == f.name || contains(f.aliases, syms[i].name) {
					syms[i].value, syms[i].size = uint64(at), uint64(len(code))
				}
			}
		}
	}
	im.TextEnd = uint64(len(b))
	textEnd := len(b)

	b = align(b, 8)
	dynamicOff := len(b)
	dyn := func(tag elf.DynTag, v uint64) {
		b = le.AppendUint64(b, uint64(tag))
		b = le.AppendUint64(b, v)
	}
	dyn(elf.DT_SONAME, uint64(sonameOff))
	dyn(elf.DT_HASH, uint64(hashOff))
	dyn(elf.DT_GNU_HASH, uint64(gnuHashOff))
	dyn(elf.DT_STRTAB, uint64(dynstrOff))
	dyn(elf.DT_SYMTAB, uint64(dynsymOff))
	dyn(elf.DT_STRSZ, uint64(len(dynstr.b)))
	dyn(elf.DT_SYMENT, symSize)
	dyn(elf.DT_VERSYM, uint64(versymOff))
	dyn(elf.DT_VERDEF, uint64(verdefOff))
	dyn(elf.DT_VERDEFNUM, 2)
	dyn(elf.DT_NULL, 0)
	dynamicEnd := len(b)

	var shstr strtab
	shstr.b = []byte{0}
	shstrOff := len(b)
	names := []string{".hash", ".gnu.hash", ".dynsym", ".dynstr", ".gnu.version", ".gnu.version_d", ".note", ".text", ".dynamic", ".shstrtab"}
	nameIdx := map[string]uint32{}
	for _, n := range names {
		nameIdx[n] = shstr.add(n)
	}
	b = append(b, shstr.b...)
	shstrEnd := len(b)

	// Section headers.
	const textShndx = 8
	b = align(b, 8)
	shOff := len(b)
	sh := func(name string, typ elf.SectionType, flags elf.SectionFlag, off, end int, link, info uint32, algn, entsize uint64) {
		b = le.AppendUint32(b, nameIdx[name])
		b = le.AppendUint32(b, uint32(typ))
		b = le.AppendUint64(b, uint64(flags))
		addr := uint64(off)
		if flags&elf.SHF_ALLOC == 0 {
			addr = 0
		}
		b = le.AppendUint64(b, addr)
		b = le.AppendUint64(b, uint64(off))
		b = le.AppendUint64(b, uint64(end-off))
		b = le.AppendUint32(b, link)
		b = le.AppendUint32(b, info)
		b = le.AppendUint64(b, algn)
		b = le.AppendUint64(b, entsize)
	}
	b = append(b, make([]byte, shdrSize)...) // SHN_UNDEF
	const dynsymShndx, dynstrShndx = 3, 4
	sh(".hash", elf.SHT_HASH, elf.SHF_ALLOC, hashOff, gnuHashOff, dynsymShndx, 0, 8, 4)
	sh(".gnu.hash", elf.SHT_GNU_HASH, elf.SHF_ALLOC, gnuHashOff, dynsymOff, dynsymShndx, 0, 8, 0)
	sh(".dynsym", elf.SHT_DYNSYM, elf.SHF_ALLOC, dynsymOff, dynstrOff, dynstrShndx, 1, 8, symSize)
	sh(".dynstr", elf.SHT_STRTAB, elf.SHF_ALLOC, dynstrOff, dynstrOff+len(dynstr.b), 0, 0, 1, 0)
	sh(".gnu.version", elf.SHT_GNU_VERSYM, elf.SHF_ALLOC, versymOff, versymOff+2*nsym, dynsymShndx, 0, 2, 2)
	sh(".gnu.version_d", elf.SHT_GNU_VERDEF, elf.SHF_ALLOC, verdefOff, verdefOff+56, dynstrShndx, 2, 8, 0)
	sh(".note", elf.SHT_NOTE, elf.SHF_ALLOC, noteOff, noteEnd, 0, 0, 4, 0)
	sh(".text", elf.SHT_PROGBITS, elf.SHF_ALLOC|elf.SHF_EXECINSTR, textOff, textEnd, 0, 0, 16, 0)
	sh(".dynamic", elf.SHT_DYNAMIC, elf.SHF_ALLOC, dynamicOff, dynamicEnd, dynstrShndx, 0, 8, 16)
	sh(".shstrtab", elf.SHT_STRTAB, 0, shstrOff, shstrEnd, 0, 0, 1, 0)
	nsect := 11

	size := len(b)
	b = align(b, PageSize)

	// .dynsym, now that the values are known.
	for i, s := range syms {
		o := dynsymOff + (i+1)*symSize
		le.PutUint32(b[o:], s.str)
		b[o+4] = byte(s.bind)<<4 | byte(elf.STT_FUNC)
		b[o+5] = byte(elf.STV_DEFAULT)
		le.PutUint16(b[o+6:], textShndx)
		le.PutUint64(b[o+8:], s.value)
		le.PutUint64(b[o+16:], s.size)
	}

	// ELF header.
	copy(b, "\x7fELF")
	b[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	b[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	b[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	b[elf.EI_OSABI] = byte(elf.ELFOSABI_NONE)
	le.PutUint16(b[16:], uint16(elf.ET_DYN))
	le.PutUint16(b[18:], uint16(machine))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[24:], 0) // e_entry
	le.PutUint64(b[32:], ehdrSize)
	le.PutUint64(b[40:], uint64(shOff))
	le.PutUint32(b[48:], 0) // e_flags
	le.PutUint16(b[52:], ehdrSize)
	le.PutUint16(b[54:], phdrSize)
	le.PutUint16(b[56:], nPhdrs)
	le.PutUint16(b[58:], shdrSize)
	le.PutUint16(b[60:], uint16(nsect))
	le.PutUint16(b[62:], uint16(nsect-1)) // .shstrtab

	ph := func(i int, typ elf.ProgType, flags elf.ProgFlag, off, end int, algn uint64) {
		o := ehdrSize + i*phdrSize
		le.PutUint32(b[o:], uint32(typ))
		le.PutUint32(b[o+4:], uint32(flags))
		le.PutUint64(b[o+8:], uint64(off))
		le.PutUint64(b[o+16:], uint64(off))
		le.PutUint64(b[o+24:], uint64(off))
		le.PutUint64(b[o+32:], uint64(end-off))
		le.PutUint64(b[o+40:], uint64(end-off))
		le.PutUint64(b[o+48:], algn)
	}
	ph(0, elf.PT_LOAD, elf.PF_R|elf.PF_X, 0, size, PageSize)
	ph(1, elf.PT_DYNAMIC, elf.PF_R, dynamicOff, dynamicEnd, 8)
	ph(2, elf.PT_NOTE, elf.PF_R, noteOff, noteEnd, 4)

	im.Bytes = b
	return im, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// resolveTarget turns "{label}" in an instruction's text into "{}" and
// returns the label's image offset ("{vvar}": the data page's).
func resolveTarget(text string, at int, f funcCode) (string, int64) {
	i := strings.Index(text, "{")
	if i < 0 {
		return text, 0
	}
	j := strings.Index(text, "}")
	label := text[i+1 : j]
	target := int64(-PageSize)
	if label != "vvar" {
		target = int64(at + f.labels[label])
	}
	return text[:i] + "{}" + text[j+1:], target
}
