// Package hookgen generates vm/arm64/exec_hooked.go from exec.go: runCM
// is a copy of run with the cache model's hooks inserted, so that run
// itself stays free of them (the model-off speed is unchanged). After
// editing run, regenerate with
//
//	go generate ./internal/vm/arm64
//
// Every rule below must apply exactly as often as stated; a rule that no
// longer matches fails the generation, so a change to run that the hooks
// would miss cannot go unnoticed (TestHookedLoopUpToDate checks the
// committed file).
package hookgen

import (
	"fmt"
	"go/format"
	"strings"
)

type hookRule struct {
	old, new string
	count    int
}

// Indentation inside the instruction switch.
const t5 = "\t\t\t\t"

func loadRule(fn string, size int, count int) hookRule {
	old := t5 + "v, ok := c.tlb." + fn + "(addr)\n" + t5 + "if !ok {\n" + t5 + "\tgoto fault\n" + t5 + "}\n"
	return hookRule{old, old + fmt.Sprintf(t5+"c.cmData(addr, %d, false)\n", size), count}
}

func storeRule(fn, arg string, size int) hookRule {
	old := t5 + "if !c.tlb." + fn + "(addr, " + arg + ") {\n" + t5 + "\tgoto fault\n" + t5 + "}\n"
	return hookRule{old, old + fmt.Sprintf(t5+"c.cmData(addr, %d, true)\n", size), 1}
}

// afterCall inserts hook after the failure check of the call line.
func afterCall(call, label, hook string) hookRule {
	old := t5 + call + " {\n" + t5 + "\tgoto " + label + "\n" + t5 + "}\n"
	return hookRule{old, old + t5 + hook + "\n", 1}
}

func times(r hookRule, n int) hookRule { r.count = n; return r }

var hookRules = []hookRule{
	{"func (c *CPU) run(limit uint64, step bool) (exit vm.Exit) {",
		"func (c *CPU) runCM(limit uint64, step bool) (exit vm.Exit) {", 1},
	{"\tc.limit, c.step, c.n = limit, step, 0\n", "\tc.limit, c.step, c.n = limit, step, 0\n\tc.cmEnter()\n", 1},
	{"block:\n\tfor {\n", "block:\n\tfor {\n\t\tc.cmFetchAt(pc)\n", 1},
	{"\t\tc.blockStart = pc\n", "\t\tc.blockStart = pc\n\t\tc.cm.pg = pg\n", 1},
	{"done:\n", "done:\n\tc.cmFetch()\n", 1},
	{"c.page(pc)", "c.cmPage(pc)", 1},
	loadRule("Load8", 1, 2),
	loadRule("Load16", 2, 2),
	loadRule("Load32", 4, 2),
	loadRule("Load64", 8, 2), // LDRX, LDPSW
	storeRule("Store8", "uint8(r[in.Rd])", 1),
	storeRule("Store16", "uint16(r[in.Rd])", 2),
	storeRule("Store32", "uint32(r[in.Rd])", 4),
	storeRule("Store64", "r[in.Rd]", 8),
	afterCall("lo, hi, ok := c.loadV(addr, in.Size)\n"+t5+"if !ok", "fault", "c.cmData(addr, 1<<in.Size, false)"),
	afterCall("if !c.storeV(addr, c.regs.V[in.Rd][0], c.regs.V[in.Rd][1], in.Size)", "fault", "c.cmData(addr, 1<<in.Size, true)"),
	{t5 + "\ta, b = v&0xffffffff, v>>32\n" + t5 + "}\n",
		t5 + "\ta, b = v&0xffffffff, v>>32\n" + t5 + "}\n" + t5 + "c.cmData(addr, 2<<in.Size, false)\n", 1}, // LDP
	afterCall("if !c.stp(addr, r[in.Rd], r[in.Ra], in.Size)", "fault", "c.cmData(addr, 2<<in.Size, true)"),
	afterCall("if !c.ldpV(in, addr)", "fault", "c.cmData(addr, 2<<in.Size, false)"),
	afterCall("if !c.stpV(in, addr)", "fault", "c.cmData(addr, 2<<in.Size, true)"),
	afterCall("if v, res = c.ldxr(r[in.Rn], in.Size); res != memOK", "memExit", "c.cmData(r[in.Rn], 1<<in.Size, false)"),
	afterCall("if st, res = c.stxr(r[in.Rn], r[in.Rd], in.Size); res != memOK", "memExit", "c.cmData(r[in.Rn], 1<<in.Size, true)"),
	afterCall("if a, b, res = c.ldxp(r[in.Rn], in.Size); res != memOK", "memExit", "c.cmData(r[in.Rn], 2<<in.Size, false)"),
	afterCall("if st, res = c.stxp(r[in.Rn], r[in.Rd], r[in.Ra], in.Size); res != memOK", "memExit", "c.cmData(r[in.Rn], 2<<in.Size, true)"),
	afterCall("if v, res = c.ldar(r[in.Rn], in.Size); res != memOK", "memExit", "c.cmData(r[in.Rn], 1<<in.Size, false)"),
	afterCall("if res = c.stlr(r[in.Rn], r[in.Rd], in.Size); res != memOK", "memExit", "c.cmData(r[in.Rn], 1<<in.Size, true)"),
	{"\t\t\tcase decode.A64ISB:\n", "\t\t\tcase decode.A64ISB:\n" + t5 + "c.cmISB()\n" + t5 + "pg = nil\n", 1},
	{t5 + "addr = r[in.Rd] &^ (DCZVASize - 1)\n" + t5 + "if !c.tlb.StoreBytes(addr, zeroBlock[:]) {\n",
		t5 + "if !c.cmZVA(r[in.Rd]) {\n", 1},
	// DC CVA* and IC IVAU check the address the same way; the next
	// rule turns IC IVAU's hook into cmIC.
	times(afterCall("if _, ok := c.tlb.Load8(addr); !ok", "fault", "c.cmDC(addr)"), 2),
	{t5 + "c.cmDC(addr)\n" + t5 + "c.cache.Invalidate(addr)\n" + t5 + "c.l0[addr>>vm.PageShift&(l0Size-1)] = nil\n" + t5 + "pg = nil\n",
		t5 + "if c.cmIC(addr) {\n" + t5 + "\tpg = nil\n" + t5 + "}\n", 1},
}

// Generate returns the contents of exec_hooked.go for exec.go's source.
func Generate(src string) ([]byte, error) {
	start := strings.Index(src, "func (c *CPU) run(")
	if start < 0 {
		return nil, fmt.Errorf("exec.go: func run not found")
	}
	end := strings.Index(src[start:], "\n}\n")
	if end < 0 {
		return nil, fmt.Errorf("exec.go: end of run not found")
	}
	body := src[start : start+end+3]
	for _, r := range hookRules {
		if n := strings.Count(body, r.old); n != r.count {
			return nil, fmt.Errorf("hook rule matches %d times, want %d:\n%s", n, r.count, r.old)
		}
		body = strings.ReplaceAll(body, r.old, r.new)
	}
	out := "// Code generated by gen_hooked.go from exec.go; DO NOT EDIT.\n\n" +
		"package arm64\n\nimport (\n\t\"math/bits\"\n\n\t\"github.com/uvm-emu/uvm/internal/decode\"\n\t\"github.com/uvm-emu/uvm/internal/icache\"\n\t\"github.com/uvm-emu/uvm/internal/vm\"\n)\n\n" +
		"// runCM is run with the hooks of the cache model and the re-decode\n" +
		"// mode (cachemodel.go).\n" + body
	return format.Source([]byte(out))
}
