package guestprof

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"sort"
	"sync"
)

// dwarfInfo is what guestprof uses from an image's DWARF: line tables,
// the inlined calls inside functions, and where functions are declared.
// Compilation units are read on first use: a profile touches a few of
// them, and a Go binary has dozens (its runtime alone is large).
type dwarfInfo struct {
	d *dwarf.Data

	mu     sync.Mutex
	ranges []cuRange // address ranges of the units, sorted by lo
	units  []*cuInfo
	// origin caches the names and declaration lines of the abstract
	// functions inlined calls refer to.
	origin map[dwarf.Offset]srcPos
	// decl maps a function name to its declaration (units read so far).
	decl map[string]srcPos
}

type cuRange struct {
	lo, hi uint64
	unit   int
}

type cuInfo struct {
	off    dwarf.Offset
	loaded bool
	lines  []lineRow
	// inl are the outermost inlined calls (direct children of concrete
	// functions), one entry per address range, sorted by lo.
	inl []inlRange
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

// inlNode is one inlined call (DW_TAG_inlined_subroutine): the callee,
// where it was called from, and the calls inlined into it.
type inlNode struct {
	name     string
	declLine int
	ranges   [][2]uint64
	callFile string
	callLine int
	children []*inlNode
}

// srcPos is a source position; for a function's declaration also its
// name (origin cache).
type srcPos struct {
	file string
	line int
	name string
}

// inlCall is one level of inlining at an address.
type inlCall struct {
	fn       string
	file     string
	line     int
	declLine int
}

// debugInfo opens the image's DWARF on first use (nil without DWARF).
func (img *image) debugInfo() *dwarfInfo {
	img.dwarfOnce.Do(func() { img.dwarf = openDWARF(img.data) })
	return img.dwarf
}

// hasDWARF reports whether the image has debug information.
func (img *image) hasDWARF() bool { return img.debugInfo() != nil }

// openDWARF opens the debug information of an ELF file and indexes its
// compilation units by address. Absent or malformed DWARF gives nil.
func openDWARF(data []byte) (info *dwarfInfo) {
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
	info = &dwarfInfo{d: d, origin: map[dwarf.Offset]srcPos{}, decl: map[string]srcPos{}}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit {
			rs, _ := d.Ranges(e)
			for _, rg := range rs {
				if rg[0] < rg[1] {
					info.ranges = append(info.ranges, cuRange{rg[0], rg[1], len(info.units)})
				}
			}
			info.units = append(info.units, &cuInfo{off: e.Offset})
		}
		r.SkipChildren()
	}
	if len(info.ranges) == 0 {
		return nil
	}
	sort.SliceStable(info.ranges, func(i, j int) bool { return info.ranges[i].lo < info.ranges[j].lo })
	return info
}

// unitLocked returns the compilation unit covering vaddr, read.
func (info *dwarfInfo) unitLocked(vaddr uint64) *cuInfo {
	i := sort.Search(len(info.ranges), func(i int) bool { return info.ranges[i].lo > vaddr }) - 1
	if i < 0 || vaddr >= info.ranges[i].hi {
		return nil
	}
	u := info.units[info.ranges[i].unit]
	if !u.loaded {
		u.loaded = true
		info.readUnit(u)
	}
	return u
}

// readUnit reads a unit's line program and its functions' inlined calls
// and declarations. Damage ends the reading, keeping what was read.
func (info *dwarfInfo) readUnit(u *cuInfo) {
	defer func() {
		if r := recover(); r != nil {
			u.lines, u.inl = nil, nil
		}
	}()
	d := info.d
	r := d.Reader()
	r.Seek(u.off)
	cu, err := r.Next()
	if err != nil || cu == nil || cu.Tag != dwarf.TagCompileUnit {
		return
	}
	var files []*dwarf.LineFile
	if lr, err := d.LineReader(cu); err == nil && lr != nil {
		var le dwarf.LineEntry
		for lr.Next(&le) == nil { // until io.EOF or damage
			row := lineRow{addr: le.Address}
			if !le.EndSequence && le.File != nil {
				row.file, row.line = le.File.Name, int32(le.Line)
			}
			u.lines = append(u.lines, row)
		}
		files = lr.Files()
	}
	// At one address, end-of-sequence rows sort first so that the next
	// sequence's rows win; otherwise the program's order is kept (of rows
	// at equal addresses the last one describes the code that follows).
	sort.SliceStable(u.lines, func(i, j int) bool {
		a, b := u.lines[i], u.lines[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		return a.line == 0 && b.line != 0
	})
	file := func(e *dwarf.Entry, a dwarf.Attr) string {
		i, ok := e.Val(a).(int64)
		if !ok || i < 0 || i >= int64(len(files)) || files[i] == nil {
			return ""
		}
		return files[i].Name
	}
	if !cu.Children {
		return
	}
	// walk reads the children of the entry just read, attaching inlined
	// calls to parent (nil: outermost, into u.inl).
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
							info.decl[n] = srcPos{file: file(e, dwarf.AttrDeclFile), line: int(l)}
						}
					}
				}
				if e.Children {
					walk(nil)
				}
			case dwarf.TagInlinedSubroutine:
				o := info.originOf(e)
				n := &inlNode{name: o.name, declLine: o.line, callFile: file(e, dwarf.AttrCallFile)}
				if l, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
					n.callLine = int(l)
				}
				n.ranges, _ = d.Ranges(e)
				if parent == nil {
					for _, rg := range n.ranges {
						if rg[0] < rg[1] {
							u.inl = append(u.inl, inlRange{rg[0], rg[1], n})
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
	sort.SliceStable(u.inl, func(i, j int) bool { return u.inl[i].lo < u.inl[j].lo })
}

// originOf returns the name and declaration line of the function an
// inlined call refers to (DW_AT_abstract_origin).
func (info *dwarfInfo) originOf(e *dwarf.Entry) srcPos {
	off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	if !ok {
		n, _ := e.Val(dwarf.AttrName).(string)
		return srcPos{name: n}
	}
	if p, ok := info.origin[off]; ok {
		return p
	}
	var p srcPos
	r := info.d.Reader()
	r.Seek(off)
	if oe, err := r.Next(); err == nil && oe != nil {
		p.name, _ = oe.Val(dwarf.AttrName).(string)
		if l, ok := oe.Val(dwarf.AttrDeclLine).(int64); ok {
			p.line = int(l)
		}
	}
	info.origin[off] = p
	return p
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
	info.mu.Lock()
	defer info.mu.Unlock()
	u := info.unitLocked(vaddr)
	if u == nil {
		return "", 0, nil
	}
	rows := u.lines
	if i := sort.Search(len(rows), func(i int) bool { return rows[i].addr > vaddr }) - 1; i >= 0 && rows[i].line != 0 {
		file, line = rows[i].file, int(rows[i].line)
	}
	i := sort.Search(len(u.inl), func(i int) bool { return u.inl[i].lo > vaddr }) - 1
	if i < 0 || vaddr >= u.inl[i].hi {
		return file, line, nil
	}
	// The chain of inlined calls around vaddr, outermost first.
	var chain []*inlNode
	for n := u.inl[i].node; n != nil && len(chain) < MaxDepth; {
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
		inlined[len(chain)-1-k] = inlCall{fn: chain[k].name, file: file, line: line, declLine: chain[k].declLine}
		file, line = chain[k].callFile, chain[k].callLine
	}
	return file, line, inlined
}

// declared returns where the function name starting at entry is
// declared, falling back to the position of its first instruction.
func (img *image) declared(name string, entry uint64) srcPos {
	f, l, _ := img.source(entry) // reads the function's unit
	if info := img.debugInfo(); info != nil {
		info.mu.Lock()
		p, ok := info.decl[name]
		info.mu.Unlock()
		if ok && p.file != "" {
			return p
		}
	}
	return srcPos{file: f, line: l}
}
