package gdbstub

import (
	"fmt"
	"strings"
)

// Reg is one register of a target description.
type Reg struct {
	Name  string
	Bits  int
	Type  string // gdb type name (int64, code_ptr, vec128 …)
	Group string // optional register group
}

// Feature is one <feature> of a target description: its registers and
// the XML of the types they use.
type Feature struct {
	Name  string
	Types string // <vector>/<union>/<flags> elements, verbatim
	Regs  []Reg
}

// Arch is a target description: what gdb's qXfer:features:read gets and
// the layout of the g packet (the registers in order, each Bits/8 bytes,
// little-endian). Register numbers in p/P packets are indexes into Regs().
type Arch struct {
	// Name is the BFD architecture (<architecture>).
	Name     string
	Features []Feature
	// PC is the register number of the program counter.
	PC int

	regs    []Reg
	offsets []int
	size    int
	xml     string
}

func (a *Arch) init() *Arch {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n<target version=\"1.0\">\n")
	fmt.Fprintf(&b, "<architecture>%s</architecture>\n<osabi>GNU/Linux</osabi>\n", a.Name)
	for _, f := range a.Features {
		fmt.Fprintf(&b, "<feature name=%q>\n%s", f.Name, f.Types)
		for _, r := range f.Regs {
			fmt.Fprintf(&b, "<reg name=%q bitsize=\"%d\" type=%q regnum=\"%d\"", r.Name, r.Bits, r.Type, len(a.regs))
			if r.Group != "" {
				fmt.Fprintf(&b, " group=%q", r.Group)
			}
			b.WriteString("/>\n")
			a.regs = append(a.regs, r)
			a.offsets = append(a.offsets, a.size)
			a.size += r.Bits / 8
		}
		b.WriteString("</feature>\n")
	}
	b.WriteString("</target>\n")
	a.xml = b.String()
	return a
}

// Regs is the registers in g-packet order.
func (a *Arch) Regs() []Reg { return a.regs }

// Size is the length of the g packet's data in bytes.
func (a *Arch) Size() int { return a.size }

// Offset is the byte offset of register n in the g packet's data.
func (a *Arch) Offset(n int) int { return a.offsets[n] }

// XML is the target description (the annex "target.xml").
func (a *Arch) XML() string { return a.xml }

// RegNum returns the number of the register called name, or -1.
func (a *Arch) RegNum(name string) int {
	for i, r := range a.regs {
		if r.Name == name {
			return i
		}
	}
	return -1
}

func regs(prefix string, n, bits int, typ string) []Reg {
	out := make([]Reg, n)
	for i := range out {
		out[i] = Reg{Name: fmt.Sprintf("%s%d", prefix, i), Bits: bits, Type: typ}
	}
	return out
}

func cat(rs ...[]Reg) []Reg {
	var out []Reg
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

// AArch64 is gdb's aarch64 Linux description without SVE: the features
// org.gnu.gdb.aarch64.core (x0..x30, sp, pc, cpsr: regnums 0..33),
// org.gnu.gdb.aarch64.fpu (v0..v31, fpsr, fpcr: 34..67) and
// org.gnu.gdb.aarch64.tls (tpidr: 68), in the order of gdb's
// features/aarch64-*.xml.
var AArch64 = (&Arch{
	Name: "aarch64",
	PC:   32,
	Features: []Feature{
		{Name: "org.gnu.gdb.aarch64.core",
			Types: `<flags id="cpsr_flags" size="4">
<field name="SP" start="0" end="0"/><field name="EL" start="2" end="3"/><field name="nRW" start="4" end="4"/>
<field name="F" start="6" end="6"/><field name="I" start="7" end="7"/><field name="A" start="8" end="8"/>
<field name="D" start="9" end="9"/><field name="IL" start="20" end="20"/><field name="SS" start="21" end="21"/>
<field name="V" start="28" end="28"/><field name="C" start="29" end="29"/><field name="Z" start="30" end="30"/>
<field name="N" start="31" end="31"/>
</flags>
`,
			Regs: cat(regs("x", 31, 64, "int"), []Reg{
				{Name: "sp", Bits: 64, Type: "data_ptr"},
				{Name: "pc", Bits: 64, Type: "code_ptr"},
				{Name: "cpsr", Bits: 32, Type: "cpsr_flags"},
			})},
		{Name: "org.gnu.gdb.aarch64.fpu",
			Types: `<vector id="v2d" type="ieee_double" count="2"/><vector id="v2u" type="uint64" count="2"/>
<vector id="v2i" type="int64" count="2"/><vector id="v4f" type="ieee_single" count="4"/>
<vector id="v4u" type="uint32" count="4"/><vector id="v4i" type="int32" count="4"/>
<vector id="v8f" type="ieee_half" count="8"/><vector id="v8u" type="uint16" count="8"/>
<vector id="v8i" type="int16" count="8"/><vector id="v16u" type="uint8" count="16"/>
<vector id="v16i" type="int8" count="16"/><vector id="v1u" type="uint128" count="1"/>
<vector id="v1i" type="int128" count="1"/>
<union id="vnd"><field name="f" type="v2d"/><field name="u" type="v2u"/><field name="s" type="v2i"/></union>
<union id="vns"><field name="f" type="v4f"/><field name="u" type="v4u"/><field name="s" type="v4i"/></union>
<union id="vnh"><field name="f" type="v8f"/><field name="u" type="v8u"/><field name="s" type="v8i"/></union>
<union id="vnb"><field name="u" type="v16u"/><field name="s" type="v16i"/></union>
<union id="vnq"><field name="u" type="v1u"/><field name="s" type="v1i"/></union>
<union id="aarch64v"><field name="d" type="vnd"/><field name="s" type="vns"/><field name="h" type="vnh"/>
<field name="b" type="vnb"/><field name="q" type="vnq"/></union>
`,
			Regs: cat(regs("v", 32, 128, "aarch64v"), []Reg{
				{Name: "fpsr", Bits: 32, Type: "int"},
				{Name: "fpcr", Bits: 32, Type: "int"},
			})},
		{Name: "org.gnu.gdb.aarch64.tls",
			Regs: []Reg{{Name: "tpidr", Bits: 64, Type: "data_ptr"}}},
	},
}).init()

// AMD64 is gdb's amd64 Linux description: org.gnu.gdb.i386.core (rax …
// r15, rip, eflags, the segment selectors, st0..st7 and the x87 control
// registers: regnums 0..39), org.gnu.gdb.i386.sse (xmm0..xmm15, mxcsr:
// 40..56), org.gnu.gdb.i386.linux (orig_rax: 57) and
// org.gnu.gdb.i386.segments (fs_base, gs_base: 58, 59), in the order of
// gdb's features/i386/64bit-*.xml.
var AMD64 = (&Arch{
	Name: "i386:x86-64",
	PC:   16,
	Features: []Feature{
		{Name: "org.gnu.gdb.i386.core",
			Types: `<flags id="i386_eflags" size="4">
<field name="CF" start="0" end="0"/><field name="" start="1" end="1"/><field name="PF" start="2" end="2"/>
<field name="AF" start="4" end="4"/><field name="ZF" start="6" end="6"/><field name="SF" start="7" end="7"/>
<field name="TF" start="8" end="8"/><field name="IF" start="9" end="9"/><field name="DF" start="10" end="10"/>
<field name="OF" start="11" end="11"/><field name="NT" start="14" end="14"/><field name="RF" start="16" end="16"/>
<field name="VM" start="17" end="17"/><field name="AC" start="18" end="18"/><field name="VIF" start="19" end="19"/>
<field name="VIP" start="20" end="20"/><field name="ID" start="21" end="21"/>
</flags>
`,
			Regs: cat([]Reg{
				{Name: "rax", Bits: 64, Type: "int64"}, {Name: "rbx", Bits: 64, Type: "int64"},
				{Name: "rcx", Bits: 64, Type: "int64"}, {Name: "rdx", Bits: 64, Type: "int64"},
				{Name: "rsi", Bits: 64, Type: "int64"}, {Name: "rdi", Bits: 64, Type: "int64"},
				{Name: "rbp", Bits: 64, Type: "data_ptr"}, {Name: "rsp", Bits: 64, Type: "data_ptr"},
			}, regs("r", 16, 64, "int64")[8:], []Reg{
				{Name: "rip", Bits: 64, Type: "code_ptr"},
				{Name: "eflags", Bits: 32, Type: "i386_eflags"},
				{Name: "cs", Bits: 32, Type: "int32"}, {Name: "ss", Bits: 32, Type: "int32"},
				{Name: "ds", Bits: 32, Type: "int32"}, {Name: "es", Bits: 32, Type: "int32"},
				{Name: "fs", Bits: 32, Type: "int32"}, {Name: "gs", Bits: 32, Type: "int32"},
			}, regs("st", 8, 80, "i387_ext"), []Reg{
				{Name: "fctrl", Bits: 32, Type: "int", Group: "float"},
				{Name: "fstat", Bits: 32, Type: "int", Group: "float"},
				{Name: "ftag", Bits: 32, Type: "int", Group: "float"},
				{Name: "fiseg", Bits: 32, Type: "int", Group: "float"},
				{Name: "fioff", Bits: 32, Type: "int", Group: "float"},
				{Name: "foseg", Bits: 32, Type: "int", Group: "float"},
				{Name: "fooff", Bits: 32, Type: "int", Group: "float"},
				{Name: "fop", Bits: 32, Type: "int", Group: "float"},
			})},
		{Name: "org.gnu.gdb.i386.sse",
			Types: `<vector id="v4f" type="ieee_single" count="4"/><vector id="v2d" type="ieee_double" count="2"/>
<vector id="v16i8" type="int8" count="16"/><vector id="v8i16" type="int16" count="8"/>
<vector id="v4i32" type="int32" count="4"/><vector id="v2i64" type="int64" count="2"/>
<union id="vec128"><field name="v4_float" type="v4f"/><field name="v2_double" type="v2d"/>
<field name="v16_int8" type="v16i8"/><field name="v8_int16" type="v8i16"/>
<field name="v4_int32" type="v4i32"/><field name="v2_int64" type="v2i64"/>
<field name="uint128" type="uint128"/></union>
<flags id="i386_mxcsr" size="4">
<field name="IE" start="0" end="0"/><field name="DE" start="1" end="1"/><field name="ZE" start="2" end="2"/>
<field name="OE" start="3" end="3"/><field name="UE" start="4" end="4"/><field name="PE" start="5" end="5"/>
<field name="DAZ" start="6" end="6"/><field name="IM" start="7" end="7"/><field name="DM" start="8" end="8"/>
<field name="ZM" start="9" end="9"/><field name="OM" start="10" end="10"/><field name="UM" start="11" end="11"/>
<field name="PM" start="12" end="12"/><field name="FZ" start="15" end="15"/>
</flags>
`,
			Regs: cat(regs("xmm", 16, 128, "vec128"), []Reg{
				{Name: "mxcsr", Bits: 32, Type: "i386_mxcsr", Group: "vector"},
			})},
		{Name: "org.gnu.gdb.i386.linux",
			Regs: []Reg{{Name: "orig_rax", Bits: 64, Type: "int"}}},
		{Name: "org.gnu.gdb.i386.segments",
			Regs: []Reg{{Name: "fs_base", Bits: 64, Type: "int"}, {Name: "gs_base", Bits: 64, Type: "int"}}},
	},
}).init()
