package main

import (
	"strings"

	"github.com/uvm-emu/uvm/uprobes"
)

// switchAliases maps the command line's short switch names (the bench's
// flags) to uprobes.Options field names; the long names work too.
var switchAliases = map[string]string{
	"treelock":              "TreeLock",
	"siglock":               "SingleStepSiglock",
	"flush-elision":         "XOLFlushElision",
	"arm64-sim-nop":         "ARM64SimulateNOP",
	"ri-pool":               "ReturnInstancePool",
	"x86-uretprobe-syscall": "X86UretprobeSyscall",
	"x86-nop-forms":         "X86NopForms",
	"xol-mremap-denied":     "XOLMremapDenied",
}

// setUprobeOption sets one switch by its short or long name.
func setUprobeOption(o *uprobes.Options, name, value string) error {
	if long, ok := switchAliases[strings.ToLower(name)]; ok {
		name = long
	}
	return o.Set(name, value)
}
