package icache

import "github.com/uvm-emu/uvm/internal/vm"

// Forget drops the decoded record of the instruction at pc (in this
// page), so that its next execution decodes it afresh from memory: the
// x86 interpreter's differential "re-decode every instruction" mode.
func (p *X86Page) Forget(pc uint64) {
	p.index[pc&vm.PageMask].Store(nil)
}
