package guestprof

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"sort"
)

// dwarfInfo is what guestprof uses from an image's DWARF: the line table,
// the inlined calls inside each function, and where functions are
// declared.
type dwarfInfo struct {
	lines []lineRow
	// inl are the outermost inlined calls (direct children of concrete
	// functions), one entry per address range, sorted by lo; ranges of
	// different entries do not overlap.
	inl  []inlRange
	decl map[string]srcPos
}

// lineRow is one row of the line table: the code from addr up to the
// next row's address comes from file:line (line 0: no information).
type lineRow struct {
	addr uint64
	file string
	line int32
}

type inlRange struct {
	lo, hi uint64
	node   *inlNode
}

// inlNode is one inlined call (DW_TAG_inlined_subroutine): the callee's
// name, where it was called from, and the calls inlined into it.
type inlNode struct {
	name     string
	ranges   [][2]uint64
	callFile string
	callLine int
	children []*inlNode
}

type srcPos struct {
	file string
	line int
}

// inlCall is one level of inlining at an address.
type inlCall struct {
	fn   string
	file string
	line int
}

// debugInfo reads the image's DWARF on first use (nil without DWARF).
func (img *image) debugInfo() *dwarfInfo {
	img.dwarfOnce.Do(func() { img.dwarf = readDWARF(img.data) })
	return img.dwarf
}

// hasDWARF reports whether the image has line information.
func (img *image) hasDWARF() bool { return img.debugInfo() != nil }

// readDWARF reads the debug information of an ELF file. Malformed or
// absent DWARF gives nil (or whatever was read before the damage).
func readDWARF(data []byte) (info *dwarfInfo) {
	defer func() {
		if r := recover(); r != nil {
			info = nil
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	info = &dwarfInfo{decl: map[string]srcPos{}}
	names := map[dwarf.Offset]string{}
	origin := func(e *dwarf.Entry) string {
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			n, _ := e.Val(dwarf.AttrName).(string)
			return n
		}
		if n, ok := names[off]; ok {
			return n
		}
		or := d.Reader()
		or.Seek(off)
		oe, err := or.Next()
		n := ""
		if err == nil && oe != nil {
			n, _ = oe.Val(dwarf.AttrName).(string)
		}
		names[off] = n
		return n
	}
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		var files []*dwarf.LineFile
		if lr, err := d.LineReader(cu); err == nil && lr != nil {
			info.lines = readLineProgram(lr, info.lines)
			files = lr.Files()
		}
		file := func(e *dwarf.Entry, a dwarf.Attr) string {
			i, ok := e.Val(a).(int64)
			if !ok || i < 0 || i >= int64(len(files)) || files[i] == nil {
				return ""
			}
			return files[i].Name
		}
		if !cu.Children {
			continue
		}
		// walk reads the children of the entry just read, attaching
		// inlined calls to parent (nil: outermost, into info.inl).
		var walk func(parent *inlNode)
		walk = func(parent *inlNode) {
			for {
				e, err := r.Next()
				if err != nil || e == nil || e.Tag == 0 {
					return
				}
				switch e.Tag {
				case dwarf.TagSubprogram:
					if n, ok := e.Val(dwarf.AttrName).(string); ok {
						if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok {
							if _, dup := info.decl[n]; !dup {
								info.decl[n] = srcPos{file(e, dwarf.AttrDeclFile), int(l)}
							}
						}
					}
					if e.Children {
						walk(nil)
					}
				case dwarf.TagInlinedSubroutine:
					n := &inlNode{name: origin(e), callFile: file(e, dwarf.AttrCallFile)}
					if l, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
						n.callLine = int(l)
					}
					n.ranges, _ = d.Ranges(e)
					if parent == nil {
						for _, rg := range n.ranges {
							if rg[0] < rg[1] {
								info.inl = append(info.inl, inlRange{rg[0], rg[1], n})
							}
						}
					} else {
						parent.children = append(parent.children, n)
					}
					if e.Children {
						walk(n)
					}
				case dwarf.TagLexDwarfBlock:
					if e.Children {
						walk(parent)
					}
				default:
					if e.Children {
						r.SkipChildren()
					}
				}
			}
		}
		walk(nil)
	}
	// At one address, end-of-sequence rows sort first so that the next
	// sequence's rows win; otherwise the program's order is kept (of rows
	// at equal addresses the last one describes the code that follows).
	sort.SliceStable(info.lines, func(i, j int) bool {
		a, b := info.lines[i], info.lines[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		return a.line == 0 && b.line != 0
	})
	sort.SliceStable(info.inl, func(i, j int) bool { return info.inl[i].lo < info.inl[j].lo })
	if len(info.lines) == 0 {
		return nil
	}
	return info
}

// readLineProgram appends a compilation unit's line rows. A sequence's
// end row has line 0.
func readLineProgram(lr *dwarf.LineReader, rows []lineRow) []lineRow {
	var le dwarf.LineEntry
	for lr.Next(&le) == nil { // io.EOF, or damage: keep what was read
		row := lineRow{addr: le.Address}
		if !le.EndSequence && le.File != nil {
			row.file, row.line = le.File.Name, int32(le.Line)
		}
		rows = append(rows, row)
	}
	return rows
}

// source returns the source position of vaddr in the function that
// physically contains it (for code inlined there: the position of the
// outermost inlined call) and the inlined calls at vaddr, innermost
// first.
func (img *image) source(vaddr uint64) (file string, line int, inlined []inlCall) {
	info := img.debugInfo()
	if info == nil {
		return "", 0, nil
	}
	rows := info.lines
	if i := sort.Search(len(rows), func(i int) bool { return rows[i].addr > vaddr }) - 1; i >= 0 && rows[i].line != 0 {
		file, line = rows[i].file, int(rows[i].line)
	}
	i := sort.Search(len(info.inl), func(i int) bool { return info.inl[i].lo > vaddr }) - 1
	if i < 0 || vaddr >= info.inl[i].hi {
		return file, line, nil
	}
	// The chain of inlined calls around vaddr, outermost first.
	var chain []*inlNode
	for n := info.inl[i].node; n != nil; {
		chain = append(chain, n)
		var next *inlNode
		for _, c := range n.children {
			for _, rg := range c.ranges {
				if vaddr >= rg[0] && vaddr < rg[1] {
					next = c
				}
			}
		}
		n = next
	}
	// Innermost: the line table's position; each outer level is where
	// the level inside it was called.
	inlined = make([]inlCall, len(chain))
	for k := len(chain) - 1; k >= 0; k-- {
		inlined[len(chain)-1-k] = inlCall{fn: chain[k].name, file: file, line: line}
		file, line = chain[k].callFile, chain[k].callLine
	}
	return file, line, inlined
}

// declared returns where function name is declared, falling back to the
// position of its first instruction.
func (img *image) declared(name string, entry uint64) srcPos {
	if info := img.debugInfo(); info != nil {
		if p, ok := info.decl[name]; ok && p.file != "" {
			return p
		}
	}
	f, l, _ := img.source(entry)
	return srcPos{f, l}
}
