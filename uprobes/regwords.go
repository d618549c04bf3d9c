package uprobes

// A thread's registers as the words that hold them (BindRegWords): the
// hit paths read and write the PC, SP and a few general registers many
// times per hit, and a Regs method call each, through an adapter, costs
// more than the access.

// RegWords is a thread's register file as the words that hold it,
// aliasing the thread's state: a read or write through them is the
// corresponding Regs method's. GPR holds the registers of Reg numbers 0
// to len(GPR)-1 (x86-64: rax..r15, rsp at 4; arm64: x0..x30); SP and PC
// point at the stack pointer (on x86-64 &GPR[4]) and the program counter;
// Flags, when not nil, at the flags register as Flags and SetFlags see
// it (arm64's PSTATE word; nil on x86-64, whose RFLAGS is computed).
// The zero RegWords binds nothing.
type RegWords struct {
	GPR    []uint64
	SP, PC *uint64
	Flags  *uint64
	// Words, when not nil, is the thread's own user memory through its
	// current CPU (the CPU's vm.TLB): it replaces the Thread's optional
	// word accessors while bound, one call level fewer per access.
	Words UserWords
}

// UserWords is the thread's user memory as whole little-endian words,
// through the translation cache of the CPU it runs on (vm.TLB has these
// methods). Each reports false, changing nothing, where it cannot
// answer (a miss, a page boundary, a page it must not cache), and the
// model takes its slow path, which decides faults.
type UserWords interface {
	userWordAccessor
	userWordSwapper
}

// BindRegWords tells t where its thread's registers are, until the next
// call: every Regs passed to t's methods from then on must be that
// thread's registers (the same state, seen through methods). Call it
// whenever the thread's register file moves (a new CPU: thread creation,
// execve); the zero RegWords unbinds (the Regs methods are used).
func (t *Task) BindRegWords(w RegWords) {
	if w.SP == nil || w.PC == nil {
		w = RegWords{}
	}
	t.rw = w
	if w.Words != nil {
		t.uw, t.sw = w.Words, w.Words
	} else {
		t.uw, _ = t.th.(userWordAccessor)
		t.sw, _ = t.th.(userWordSwapper)
	}
}

// pc is r.PC(), through the bound words when there are some.
func (t *Task) pc(r Regs) uint64 {
	if p := t.rw.PC; p != nil {
		return *p
	}
	return r.PC()
}

// setPC is r.SetPC(v) (see pc).
func (t *Task) setPC(r Regs, v uint64) {
	if p := t.rw.PC; p != nil {
		*p = v
	} else {
		r.SetPC(v)
	}
}

// sp is r.SP() (see pc).
func (t *Task) sp(r Regs) uint64 {
	if p := t.rw.SP; p != nil {
		return *p
	}
	return r.SP()
}

// setSP is r.SetSP(v) (see pc).
func (t *Task) setSP(r Regs, v uint64) {
	if p := t.rw.SP; p != nil {
		*p = v
	} else {
		r.SetSP(v)
	}
}

// pflags is r.Flags() (see pc).
func (t *Task) pflags(r Regs) uint64 {
	if p := t.rw.Flags; p != nil {
		return *p
	}
	return r.Flags()
}

// setPflags is r.SetFlags(v) (see pc).
func (t *Task) setPflags(r Regs, v uint64) {
	if p := t.rw.Flags; p != nil {
		*p = v
	} else {
		r.SetFlags(v)
	}
}

// reg is r.Reg(i) (see pc); numbers outside the bound words go to r.
func (t *Task) reg(r Regs, i int) uint64 {
	if g := t.rw.GPR; uint(i) < uint(len(g)) {
		return g[i]
	}
	return r.Reg(i)
}

// setReg is r.SetReg(i, v) (see reg).
func (t *Task) setReg(r Regs, i int, v uint64) {
	if uint(i) < uint(len(t.rw.GPR)) {
		t.rw.GPR[i] = v
		return
	}
	r.SetReg(i, v)
}
