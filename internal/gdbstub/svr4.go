package gdbstub

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// qXfer:libraries-svr4:read — the dynamic linker's list of loaded objects
// as gdbserver reports it (linux-low.cc, linux_process_target::
// qxfer_libraries_svr4): found through the program's own memory, the way
// a debugger finds it without the stub. AT_PHDR locates the program
// headers, PT_PHDR gives the load bias, PT_DYNAMIC's DT_DEBUG points at
// the loader's struct r_debug, and r_map starts the chain of struct
// link_map. Everything read is the guest's and untrusted: reads are
// bounded, the chain is cut at maxLinkMaps entries and at a loop.

const (
	atPHDR     = 3
	atPHENT    = 4
	atPHNUM    = 5
	ptDYNAMIC  = 2
	ptPHDR     = 6
	dtNULL     = 0
	dtDEBUG    = 21
	maxPhnum   = 256
	maxDynamic = 4096
	// maxLinkMaps bounds the libraries listed (a corrupt or hostile
	// chain must not loop the stub).
	maxLinkMaps = 4096
	maxLibName  = 4096
)

var errNoLinkMap = errors.New("no dynamic linker state")

// svr4Libraries builds the library-list-svr4 document of t. A static
// program, or one whose loader has not run yet, has an empty list.
func svr4Libraries(t Target) ([]byte, error) {
	auxv, err := t.Auxv()
	if err != nil {
		return nil, err
	}
	var phdr, phent, phnum uint64
	for i := 0; i+16 <= len(auxv); i += 16 {
		k, v := binary.LittleEndian.Uint64(auxv[i:]), binary.LittleEndian.Uint64(auxv[i+8:])
		switch k {
		case atPHDR:
			phdr = v
		case atPHENT:
			phent = v
		case atPHNUM:
			phnum = v
		}
	}
	empty := []byte(`<library-list-svr4 version="1.0"/>`)
	if phdr == 0 || phent != 56 || phnum == 0 || phnum > maxPhnum {
		return empty, nil
	}
	ph := make([]byte, phent*phnum)
	if _, err := t.ReadMemory(phdr, ph); err != nil {
		return empty, nil
	}
	var bias, dyn uint64
	haveDyn := false
	for i := uint64(0); i < phnum; i++ {
		e := ph[i*phent:]
		typ, vaddr := binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint64(e[16:])
		switch typ {
		case ptPHDR:
			bias = phdr - vaddr
		case ptDYNAMIC:
			dyn, haveDyn = vaddr, true
		}
	}
	if !haveDyn {
		return empty, nil
	}
	rdebug, err := dtDebug(t, dyn+bias)
	if err != nil || rdebug == 0 {
		return empty, nil
	}
	var b bytes.Buffer
	lm, err := readPtr(t, rdebug+8) // r_debug.r_map
	if err != nil || lm == 0 {
		return empty, nil
	}
	fmt.Fprintf(&b, "<library-list-svr4 version=\"1.0\" main-lm=\"0x%x\">", lm)
	seen := map[uint64]bool{}
	for n := 0; lm != 0 && n < maxLinkMaps && !seen[lm]; n++ {
		seen[lm] = true
		var m [40]byte // l_addr, l_name, l_ld, l_next, l_prev
		if _, err := t.ReadMemory(lm, m[:]); err != nil {
			break
		}
		addr, nameAt, ld, next := binary.LittleEndian.Uint64(m[0:]), binary.LittleEndian.Uint64(m[8:]),
			binary.LittleEndian.Uint64(m[16:]), binary.LittleEndian.Uint64(m[24:])
		name := readCString(t, nameAt)
		// The first entry is the program itself, and the vDSO has no
		// file name: gdb knows both already (as gdbserver, skip them).
		if n > 0 && name != "" {
			fmt.Fprintf(&b, "<library name=\"%s\" lm=\"0x%x\" l_addr=\"0x%x\" l_ld=\"0x%x\" lmid=\"0x0\"/>",
				xmlEscape(name), lm, addr, ld)
		}
		lm = next
	}
	b.WriteString("</library-list-svr4>")
	return b.Bytes(), nil
}

// dtDebug is the DT_DEBUG value of the dynamic section at addr.
func dtDebug(t Target, addr uint64) (uint64, error) {
	var e [16]byte
	for i := uint64(0); i < maxDynamic; i++ {
		if _, err := t.ReadMemory(addr+16*i, e[:]); err != nil {
			return 0, err
		}
		switch binary.LittleEndian.Uint64(e[:]) {
		case dtNULL:
			return 0, errNoLinkMap
		case dtDEBUG:
			return binary.LittleEndian.Uint64(e[8:]), nil
		}
	}
	return 0, errNoLinkMap
}

func readPtr(t Target, addr uint64) (uint64, error) {
	var b [8]byte
	if _, err := t.ReadMemory(addr, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// readCString reads a NUL-terminated string of at most maxLibName bytes
// ("" when unreadable).
func readCString(t Target, addr uint64) string {
	if addr == 0 {
		return ""
	}
	var out []byte
	var chunk [256]byte
	for len(out) < maxLibName {
		n, _ := t.ReadMemory(addr+uint64(len(out)), chunk[:])
		if n == 0 {
			return ""
		}
		if i := bytes.IndexByte(chunk[:n], 0); i >= 0 {
			return string(append(out, chunk[:i]...))
		}
		out = append(out, chunk[:n]...)
	}
	return ""
}
