package uprobes

import (
	"fmt"
	"strconv"
	"strings"
)

// Spec is a parsed probe location of the command line (--uprobe SPEC,
// --uretprobe SPEC):
//
//	sym          a function of the main executable
//	sym+off      an instruction inside it (off decimal or 0x hex)
//	0xADDR       a virtual address of the main executable (as linked)
//	PATH:sym     a function of another file (also PATH:sym+off)
//	PATH:0xOFF   a file offset in another file (as the kernel uses them)
type Spec struct {
	Text   string // the original text
	Path   string // "" for the main executable
	Symbol string // "" when an address/offset is given
	Offset uint64 // added to Symbol
	// VAddr is set (HasVAddr) for 0xADDR on the main executable.
	VAddr    uint64
	HasVAddr bool
	// FileOffset is set (HasFileOffset) for PATH:0xOFF.
	FileOffset    uint64
	HasFileOffset bool
}

func (s Spec) String() string { return s.Text }

// ParseSpec parses a probe SPEC.
func ParseSpec(text string) (Spec, error) {
	sp := Spec{Text: text}
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("probe spec %q: %s: %w", text, why, ErrInvalid)
	}
	rest := text
	if i := strings.LastIndexByte(text, ':'); i >= 0 {
		sp.Path, rest = text[:i], text[i+1:]
		if sp.Path == "" {
			return bad("empty path")
		}
	}
	if rest == "" {
		return bad("empty location")
	}
	if isHexNumber(rest) {
		v, err := strconv.ParseUint(rest[2:], 16, 64)
		if err != nil {
			return bad("bad address")
		}
		if sp.Path == "" {
			sp.VAddr, sp.HasVAddr = v, true
		} else {
			sp.FileOffset, sp.HasFileOffset = v, true
		}
		return sp, nil
	}
	sym := rest
	if i := strings.LastIndexByte(rest, '+'); i >= 0 {
		sym = rest[:i]
		off, err := strconv.ParseUint(rest[i+1:], 0, 64)
		if err != nil {
			return bad("bad offset " + strconv.Quote(rest[i+1:]))
		}
		sp.Offset = off
	}
	if sym == "" {
		return bad("empty symbol")
	}
	if c := sym[0]; c >= '0' && c <= '9' {
		return bad("a symbol cannot start with a digit (addresses are written 0x…)")
	}
	sp.Symbol = sym
	return sp, nil
}

func isHexNumber(s string) bool {
	if len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return false
	}
	for _, c := range s[2:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// AttachSpec attaches a consumer at a parsed Spec: to mainExe unless the
// spec names a path (a host path: translate guest paths first). ret
// selects Uretprobe. opts may be nil; Address and Offset in it are
// replaced by the spec's.
func (s *System) AttachSpec(sp Spec, mainExe string, ret bool, c Consumer, opts *UprobeOptions) (Probe, error) {
	path := mainExe
	if sp.Path != "" {
		path = sp.Path
	}
	ex, err := s.OpenExecutable(path)
	if err != nil {
		return nil, err
	}
	o := opts.get()
	o.Address, o.Offset = 0, sp.Offset
	switch {
	case sp.HasVAddr:
		off, err := ex.FileOffset(sp.VAddr)
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", sp.Text, err)
		}
		o.Address, o.Offset = off, 0
	case sp.HasFileOffset:
		o.Address, o.Offset = sp.FileOffset, 0
		if o.Address == 0 {
			return nil, fmt.Errorf("probe %s: file offset 0 is the ELF header: %w", sp.Text, ErrInvalid)
		}
	}
	if c.Name == "" {
		c.Name = sp.Text
	}
	if ret {
		return ex.Uretprobe(sp.Symbol, c, &o)
	}
	return ex.Uprobe(sp.Symbol, c, &o)
}
