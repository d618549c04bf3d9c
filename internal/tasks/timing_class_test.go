package tasks

import (
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/timing"
)

// TestCheckMachineCPI: every built-in machine passes; a cpi entry that
// names no instruction class is refused; classes without an entry cost
// insn.cycles.
func TestCheckMachineCPI(t *testing.T) {
	for _, name := range timing.Builtin() {
		m, err := timing.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckMachine(m); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	m, _ := timing.Lookup("kunpeng916")
	m.CPI["branchy"] = 10
	if err := CheckMachine(m); err == nil || !strings.Contains(err.Error(), "cpi.branchy") {
		t.Errorf("unknown class: %v", err)
	}
	delete(m.CPI, "branchy")
	delete(m.CPI, "fpdiv")
	m.InsnCycles = 3
	c := newInsnCosts(m)
	if c.cpi[decode.ClassFPDiv] != 300 || c.cpi[decode.ClassALU] != m.CPI["alu"] {
		t.Errorf("costs %v", c.cpi)
	}
}
