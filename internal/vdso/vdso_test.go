package vdso

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
)

var machines = []struct {
	m       elf.Machine
	version string
	names   []string
	objdump string
}{
	{elf.EM_X86_64, "LINUX_2.6", []string{"__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_getcpu", "__vdso_clock_getres",
		"clock_gettime", "gettimeofday", "time", "getcpu", "clock_getres"}, "objdump"},
	{elf.EM_AARCH64, "LINUX_2.6.39", []string{"__kernel_clock_gettime", "__kernel_gettimeofday", "__kernel_clock_getres", "__kernel_rt_sigreturn"}, "aarch64-linux-gnu-objdump"},
}

// The hashes Go's runtime (vdso_linux_amd64.go, vdso_linux_arm64.go)
// looks the symbols and versions up with: they check ElfHash and GnuHash.
func TestHashes(t *testing.T) {
	for _, c := range []struct {
		name      string
		sym, gnu  uint32
		isVersion bool
	}{
		{"__vdso_gettimeofday", 0x315ca59, 0xb01bca00, false},
		{"__vdso_clock_gettime", 0xd35ec75, 0x6e43a318, false},
		{"__kernel_clock_gettime", 0xb0cd725, 0xdfa941fd, false},
		{"LINUX_2.6", 0x3ae75f6, 0, true},
		{"LINUX_2.6.39", 0x75fcb89, 0, true},
	} {
		if h := ElfHash(c.name); h != c.sym {
			t.Errorf("ElfHash(%s) = %#x, want %#x", c.name, h, c.sym)
		}
		if h := GnuHash(c.name); !c.isVersion && h != c.gnu {
			t.Errorf("GnuHash(%s) = %#x, want %#x", c.name, h, c.gnu)
		}
	}
}

func TestImageParses(t *testing.T) {
	for _, c := range machines {
		im, err := Build(c.m)
		if err != nil {
			t.Fatal(err)
		}
		if len(im.Bytes)%PageSize != 0 {
			t.Errorf("%v: image is %d bytes, not whole pages", c.m, len(im.Bytes))
		}
		f, err := elf.NewFile(bytes.NewReader(im.Bytes))
		if err != nil {
			t.Fatalf("%v: debug/elf: %v", c.m, err)
		}
		if f.Type != elf.ET_DYN || f.Machine != c.m || f.Class != elf.ELFCLASS64 {
			t.Errorf("%v: type %v machine %v class %v", c.m, f.Type, f.Machine, f.Class)
		}
		if len(f.Progs) == 0 || f.Progs[0].Type != elf.PT_LOAD || f.Progs[0].Vaddr != 0 || f.Progs[0].Off != 0 || f.Progs[0].Flags != elf.PF_R|elf.PF_X {
			t.Errorf("%v: first program header %+v", c.m, f.Progs[0].ProgHeader)
		}
		syms, err := f.DynamicSymbols()
		if err != nil {
			t.Fatalf("%v: %v", c.m, err)
		}
		got := map[string]elf.Symbol{}
		for _, s := range syms {
			got[s.Name] = s
		}
		for _, name := range c.names {
			s, ok := got[name]
			if !ok {
				t.Errorf("%v: no dynamic symbol %s", c.m, name)
				continue
			}
			off, _ := im.Symbol(name)
			if s.Value != off || elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section != 8 || s.Version != c.version {
				t.Errorf("%v: %s = %+v, want value %#x STT_FUNC in .text version %s", c.m, name, s, off, c.version)
			}
			if s.Value < im.TextStart || s.Value+s.Size > im.TextEnd {
				t.Errorf("%v: %s [%#x,+%#x) outside .text", c.m, name, s.Value, s.Size)
			}
		}
		if len(got) != len(c.names) {
			t.Errorf("%v: %d dynamic symbols, want %d", c.m, len(got), len(c.names))
		}
		soname, err := f.DynString(elf.DT_SONAME)
		if err != nil || len(soname) != 1 || soname[0] != Soname {
			t.Errorf("%v: DT_SONAME %q %v", c.m, soname, err)
		}
		// Each symbol must resolve by both hash tables, the way glibc's
		// dl-lookup and Go's runtime walk them.
		for _, name := range c.names {
			want, _ := im.Symbol(name)
			for _, gnu := range []bool{false, true} {
				v, ver, ok := runtimeLookup(t, im.Bytes, name, gnu)
				if !ok || v != want || ver != c.version {
					t.Errorf("%v: lookup %s (gnu hash %v) = %#x %q %v, want %#x %q", c.m, name, gnu, v, ver, ok, want, c.version)
				}
			}
			if _, _, ok := runtimeLookup(t, im.Bytes, name+"x", true); ok {
				t.Errorf("%v: %sx found", c.m, name)
			}
		}
	}
}

// runtimeLookup finds name as Go's runtime/vdso_linux.go does: program
// headers to PT_LOAD and PT_DYNAMIC, the dynamic section to the tables,
// then DT_HASH or DT_GNU_HASH buckets and chains, and the symbol's version
// through DT_VERSYM/DT_VERDEF.
func runtimeLookup(t *testing.T, img []byte, name string, gnu bool) (value uint64, version string, ok bool) {
	le := binary.LittleEndian
	phoff, phnum := le.Uint64(img[32:]), int(le.Uint16(img[56:]))
	var loadOff, dynOff uint64
	var foundLoad, foundDyn bool
	for i := 0; i < phnum; i++ {
		p := img[phoff+uint64(i)*56:]
		switch elf.ProgType(le.Uint32(p)) {
		case elf.PT_LOAD:
			if !foundLoad {
				foundLoad = true
				loadOff = le.Uint64(p[8:]) - le.Uint64(p[16:])
			}
		case elf.PT_DYNAMIC:
			dynOff, foundDyn = le.Uint64(p[8:]), true
		}
	}
	if !foundLoad || !foundDyn {
		t.Fatal("no PT_LOAD or PT_DYNAMIC")
	}
	tab := map[elf.DynTag]uint64{}
	for d := img[dynOff:]; elf.DynTag(le.Uint64(d)) != elf.DT_NULL; d = d[16:] {
		tab[elf.DynTag(le.Uint64(d))] = loadOff + le.Uint64(d[8:])
	}
	strs, symtab, versym, verdef := tab[elf.DT_STRTAB], tab[elf.DT_SYMTAB], tab[elf.DT_VERSYM], tab[elf.DT_VERDEF]
	cstr := func(off uint64) string {
		s := img[strs+off:]
		return string(s[:bytes.IndexByte(s, 0)])
	}
	u32 := func(off uint64) uint32 { return le.Uint32(img[off:]) }
	match := func(idx uint32) bool {
		s := img[symtab+uint64(idx)*24:]
		if cstr(uint64(le.Uint32(s))) != name || le.Uint16(s[6:]) == 0 || elf.ST_TYPE(s[4]) != elf.STT_FUNC {
			return false
		}
		value = loadOff + le.Uint64(s[8:])
		ndx := le.Uint16(img[versym+2*uint64(idx):]) & 0x7fff
		for d := verdef; ; {
			if le.Uint16(img[d+4:]) == ndx && le.Uint16(img[d+2:])&1 == 0 {
				version = cstr(uint64(u32(d + uint64(u32(d+12)))))
			}
			if u32(d+16) == 0 {
				break
			}
			d += uint64(u32(d + 16))
		}
		return true
	}
	if !gnu {
		h := tab[elf.DT_HASH]
		nbucket := u32(h)
		for i := u32(h + 8 + 4*uint64(ElfHash(name)%nbucket)); i != 0; i = u32(h + 8 + 4*uint64(nbucket) + 4*uint64(i)) {
			if match(i) {
				return value, version, true
			}
		}
		return 0, "", false
	}
	h := tab[elf.DT_GNU_HASH]
	nbucket, symOff, bloomSize := u32(h), u32(h+4), u32(h+8)
	buckets := h + 16 + 8*uint64(bloomSize)
	chains := buckets + 4*uint64(nbucket)
	hash := GnuHash(name)
	i := u32(buckets + 4*uint64(hash%nbucket))
	if i < symOff {
		return 0, "", false
	}
	for ; ; i++ {
		ch := u32(chains + 4*uint64(i-symOff))
		if ch|1 == hash|1 && match(i) {
			return value, version, true
		}
		if ch&1 != 0 {
			return 0, "", false
		}
	}
}

// TestDisassembly decodes every instruction of the image through
// package decode and compares it with what the generator meant to emit;
// together the instructions must cover .text but for alignment padding.
func TestDisassembly(t *testing.T) {
	const base = 0x10000 // a load address, so that targets print positive
	for _, c := range machines {
		im, _ := Build(c.m)
		next := im.TextStart
		for _, in := range im.Listing {
			if gap := im.Bytes[next:in.Offset]; len(bytes.Trim(gap, "\x00")) != 0 {
				t.Errorf("%v: non-zero bytes % x before %#x", c.m, gap, in.Offset)
			}
			next = in.Offset + uint64(len(in.Bytes))
			pc := base + in.Offset
			want := in.Asm
			var got string
			if c.m == elf.EM_X86_64 {
				d, err := decode.DecodeX86(im.Bytes[in.Offset:], pc)
				if err != nil || int(d.Len) != len(in.Bytes) {
					t.Errorf("%v %#x: % x decodes to %d bytes (%v), emitted %d", c.m, in.Offset, in.Bytes, d.Len, err, len(in.Bytes))
				}
				got = decode.DisasmX86(im.Bytes[in.Offset:next], pc)
				if strings.Contains(want, "[rip{}]") {
					disp := in.Target - int64(next)
					want = strings.Replace(want, "{}", fmt.Sprintf("%+#x", disp), 1)
				} else {
					want = strings.Replace(want, "{}", fmt.Sprintf("%#x", base+in.Target), 1)
				}
			} else {
				got = strings.TrimSpace(decode.DisasmA64(binary.LittleEndian.Uint32(in.Bytes), pc))
				// arm64asm names CNTVCT_EL0 by its encoding (op0 3, op1 3,
				// CRn 14, CRm 0, op2 2).
				got = strings.Replace(got, "s3_3_c14_c0_2", "cntvct_el0", 1)
				want = strings.Replace(want, "{}", fmt.Sprintf("%#x", base+in.Target), 1)
			}
			if got != want {
				t.Errorf("%v %#x: % x disassembles as %q, meant %q", c.m, in.Offset, in.Bytes, got, want)
			}
		}
		if next != im.TextEnd {
			t.Errorf("%v: listing ends at %#x, .text at %#x", c.m, next, im.TextEnd)
		}
		if len(im.CounterReads) == 0 {
			t.Errorf("%v: no counter reads recorded", c.m)
		}
	}
}

// TestObjdump has binutils read the image: its dynamic symbols with their
// versions, and a disassembly without undecodable words.
func TestObjdump(t *testing.T) {
	for _, c := range machines {
		tool, err := exec.LookPath(c.objdump)
		if err != nil {
			t.Logf("skip %v: %s not installed", c.m, c.objdump)
			continue
		}
		im, _ := Build(c.m)
		path := filepath.Join(t.TempDir(), "vdso.so")
		if err := os.WriteFile(path, im.Bytes, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool, "-T", path).CombinedOutput()
		if err != nil {
			t.Fatalf("%s -T: %v\n%s", tool, err, out)
		}
		for _, name := range c.names {
			if !regexp.MustCompile(`(?m)DF \.text\s+\S+\s+` + regexp.QuoteMeta(c.version) + `\s+` + regexp.QuoteMeta(name) + `$`).Match(out) {
				t.Errorf("%v: objdump -T has no %s@%s:\n%s", c.m, name, c.version, out)
			}
		}
		out, err = exec.Command(tool, "-d", "-j", ".text", path).CombinedOutput()
		if err != nil {
			t.Fatalf("%s -d: %v\n%s", tool, err, out)
		}
		if strings.Contains(string(out), "(bad)") || strings.Contains(string(out), ".inst") || strings.Contains(string(out), "undefined") {
			t.Errorf("%v: objdump finds undecodable code:\n%s", c.m, out)
		}
	}
}

func TestDataModel(t *testing.T) {
	d := Data{Mult: 3, Shift: 1, CycleLast: 100, MonoBase: 5000}
	if got := d.Nanoseconds(d.MonoBase, 110); got != 5015 {
		t.Errorf("Nanoseconds = %d, want 5015", got)
	}
	b := d.Encode()
	if binary.LittleEndian.Uint64(b[VvarCycleLast:]) != 100 || binary.LittleEndian.Uint32(b[VvarShift:]) != 1 {
		t.Errorf("Encode: % x", b)
	}
}
